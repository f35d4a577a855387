//! What every op's descriptor and plan answer, whatever the op: the generic op of the backends
//! (and any tool over descriptors) asks these, so a new op kind brings its rules and its plan,
//! and one `op!` line here, not another copy of the questions.

use crate::{describe, dynamic, ChainDesc, ChainPlan, DType, GatherDesc, GatherPlan, RuleError, SliceDesc};
use crate::{Operand, ScatterDesc, ScatterPlan, SlicePlan, TensorLayout};

/// A descriptor as written (by a macro, a builder or a tool), before its rules ran.
pub trait OpDesc: Clone + std::fmt::Debug + Send + Sync + 'static {
    type Plan: OpPlan;
    /// The op's name in `Debug` output ("GatherOp").
    const NAME: &'static str;

    /// Every rule of the descriptor (at the placeholder count, for a `_` descriptor).
    fn plan(&self) -> Result<Self::Plan, RuleError>;
    /// The plan of a `_` descriptor for `count` leading steps.
    fn plan_at(&self, count: usize) -> Result<Self::Plan, RuleError>;
    /// A text a person reads (see [`crate::describe`]).
    fn describe(&self, plan: &Self::Plan) -> String;
    /// Whether a leading size is `_`, known at run time.
    fn is_dynamic(&self) -> bool;
    /// Whether `tensor`'s size follows the `_` count (never, for fixed sizes): a `_` gather's
    /// data, or a `_` scatter's destination, is the same at every count. By default, every
    /// tensor of a `_` descriptor does.
    fn follows_count(&self, _tensor: Operand) -> bool {
        self.is_dynamic()
    }
}

/// A descriptor that passed its rules: what a kernel reads elements from and writes them to.
pub trait OpPlan: Clone + Send + Sync + 'static {
    /// The layout elements are read from (a gather's or chain's data, a slice's input).
    fn source(&self) -> &TensorLayout;
    fn output(&self) -> &TensorLayout;
    fn data_type(&self) -> DType;
    /// The output's element type: the data's, or a chain's `convert` stage's.
    fn output_type(&self) -> DType;
}

/// One op kind's answers: its descriptor and plan types, its name, the plan's source field,
/// how its output type reads, where its `_` plan, its description and which tensors its count
/// sizes are written, and how its `_` flag reads.
macro_rules! op {
    ($desc:ty => $plan:ty, $name:literal, $source:ident, |$p:ident| $output_type:expr, $at:path, $describe:path, $follows:path, |$d:ident| $dynamic:expr) => {
        impl OpDesc for $desc {
            type Plan = $plan;
            const NAME: &'static str = $name;

            fn plan(&self) -> Result<$plan, RuleError> {
                <$desc>::plan(self)
            }

            fn plan_at(&self, count: usize) -> Result<$plan, RuleError> {
                $at(self, count)
            }

            fn describe(&self, plan: &$plan) -> String {
                $describe(self, plan)
            }

            fn is_dynamic(&self) -> bool {
                let $d = self;
                $dynamic
            }

            fn follows_count(&self, tensor: Operand) -> bool {
                $follows(self, tensor)
            }
        }

        impl OpPlan for $plan {
            fn source(&self) -> &TensorLayout {
                &self.$source
            }

            fn output(&self) -> &TensorLayout {
                &self.output
            }

            fn data_type(&self) -> DType {
                self.data_type
            }

            fn output_type(&self) -> DType {
                let $p = self;
                $output_type
            }
        }
    };
}

op!(GatherDesc => GatherPlan, "GatherOp", data, |p| p.data_type, dynamic::gather_at, describe::gather, dynamic::gather_follows_count, |d| d.dynamic_leading);
op!(SliceDesc => SlicePlan, "SliceOp", input, |p| p.data_type, dynamic::slice_at, describe::slice, dynamic::slice_follows_count, |d| d.dynamic_leading);
op!(ChainDesc => ChainPlan, "ChainOp", data, |p| p.output_type(), dynamic::chain_at, describe::chain, dynamic::chain_follows_count, |d| d.dynamic_leading.is_some());

// A scatter reads its data through the gather that maps it, whose indices carry its `_`.
impl OpDesc for ScatterDesc {
    type Plan = ScatterPlan;
    const NAME: &'static str = "ScatterOp";

    fn plan(&self) -> Result<ScatterPlan, RuleError> {
        ScatterDesc::plan(self)
    }

    fn plan_at(&self, count: usize) -> Result<ScatterPlan, RuleError> {
        dynamic::scatter_at(self, count)
    }

    fn describe(&self, plan: &ScatterPlan) -> String {
        describe::scatter(self, plan)
    }

    fn is_dynamic(&self) -> bool {
        self.map.dynamic_leading
    }

    fn follows_count(&self, tensor: Operand) -> bool {
        dynamic::scatter_follows_count(self, tensor)
    }
}

impl OpPlan for ScatterPlan {
    fn source(&self) -> &TensorLayout {
        &self.map.data
    }

    fn output(&self) -> &TensorLayout {
        &self.output
    }

    fn data_type(&self) -> DType {
        self.map.data_type
    }

    fn output_type(&self) -> DType {
        self.map.data_type
    }
}
