//! The three gather rule sets and the out-of-range policies they default to.

use crate::dtype::{DType, IndexType};
use std::fmt;

/// Which standard's validation a gather follows (docs/rules.md, the three "Gather" sections).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GatherRules {
    /// ONNX Gather (opset 1, 11, 13).
    Onnx,
    /// OpenVINO Gather-8, with `batch_dims`.
    OpenVino,
    /// DirectML `DML_GATHER_OPERATOR_DESC`, with `IndexDimensions`.
    DirectMl,
}

/// Which gather of the family a descriptor is (docs/rules.md, "Gather" and "GatherElements").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GatherForm {
    /// Gather: whole slices of the data along the axis, one per index (`gather!`).
    #[default]
    Axis,
    /// GatherElements: one element per index, the indices shaped as the output and naming the
    /// coordinate along the axis; every other coordinate is the output's (`gather_elements!`).
    Elements,
    /// GatherND: the indices' last dimension holds a tuple of coordinates into the data's
    /// leading dimensions (after `batch_dims`); each tuple picks an element or a slice
    /// (`gather_nd!`).
    Nd,
}

impl GatherForm {
    /// The scatter macro of this form.
    pub const fn scatter_macro_name(self) -> &'static str {
        match self {
            GatherForm::Axis => "scatter!",
            GatherForm::Elements => "scatter_elements!",
            GatherForm::Nd => "scatter_nd!",
        }
    }

    /// The macro that writes this form.
    pub const fn macro_name(self) -> &'static str {
        match self {
            GatherForm::Axis => "gather!",
            GatherForm::Elements => "gather_elements!",
            GatherForm::Nd => "gather_nd!",
        }
    }
}

/// What an index outside `[-s, s-1]` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutOfRange {
    /// ONNX: the launch reports `Err` with the first bad index; nothing outside the input is read.
    Error,
    /// OpenVINO: the output element (the whole gathered slice) is zero.
    Zero,
    /// DirectML: the normalized index is clamped into `[0, s-1]` and that element is read.
    Clamp,
    /// Scatters only (a KV cache's padding slots): a negative index or one past the axis drops
    /// its update. Unlike every other policy, `-1` is not the last element.
    Skip,
}

impl OutOfRange {
    pub const fn name(self) -> &'static str {
        match self {
            OutOfRange::Error => "error",
            OutOfRange::Zero => "zero",
            OutOfRange::Clamp => "clamp",
            OutOfRange::Skip => "skip",
        }
    }

    pub fn from_name(s: &str) -> Option<OutOfRange> {
        [OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp, OutOfRange::Skip]
            .into_iter()
            .find(|p| p.name() == s)
    }
}

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a scatter combines an update with what its destination holds (ONNX ScatterElements-18
/// and ScatterND-18 `reduction`; OpenVINO's `sum` and `prod` are `add` and `mul`; `sub` is
/// OpenVINO ScatterNDUpdate-15's alone, `mean` ScatterElementsUpdate-12's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// The update replaces the element; of several updates to one element, the last in the
    /// indices' row-major order wins.
    #[default]
    None,
    Add,
    Mul,
    Max,
    Min,
    /// The element minus the update (OpenVINO ScatterNDUpdate-15's `sub`), in order.
    Sub,
    /// The mean of the element and its updates (OpenVINO ScatterElementsUpdate-12's `mean`):
    /// their sum, added in order as `add` does, divided once by how many values it holds;
    /// integers round down (toward negative infinity), floats as their type's division.
    Mean,
}

impl Reduction {
    pub const ALL: [Reduction; 7] = [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
        Reduction::Sub,
        Reduction::Mean,
    ];
    pub const NAMES: [&'static str; 7] = ["none", "add", "mul", "max", "min", "sub", "mean"];

    pub const fn name(self) -> &'static str {
        Reduction::NAMES[self as usize]
    }

    pub fn from_name(s: &str) -> Option<Reduction> {
        Reduction::ALL.into_iter().find(|r| r.name() == s)
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a scatter without a reduction does when two updates name one element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Duplicates {
    /// The last update in the indices' row-major order wins (the serial reference's result).
    #[default]
    Last,
    /// The run is an `Err` naming both index positions (ONNX calls such indices undefined
    /// behaviour, DirectML invalid).
    Error,
}

impl Duplicates {
    pub const NAMES: [&'static str; 2] = ["last", "error"];

    pub const fn name(self) -> &'static str {
        Duplicates::NAMES[self as usize]
    }

    pub fn from_name(s: &str) -> Option<Duplicates> {
        [Duplicates::Last, Duplicates::Error].into_iter().find(|d| d.name() == s)
    }
}

impl GatherRules {
    pub const ALL: [GatherRules; 3] = [GatherRules::Onnx, GatherRules::OpenVino, GatherRules::DirectMl];

    /// The keyword in descriptors (`rules: onnx`).
    pub const fn name(self) -> &'static str {
        match self {
            GatherRules::Onnx => "onnx",
            GatherRules::OpenVino => "openvino",
            GatherRules::DirectMl => "directml",
        }
    }

    pub fn from_name(s: &str) -> Option<GatherRules> {
        GatherRules::ALL.into_iter().find(|r| r.name() == s)
    }

    /// The operator's name in messages.
    pub const fn op_name(self) -> &'static str {
        match self {
            GatherRules::Onnx => "ONNX Gather",
            GatherRules::OpenVino => "OpenVINO Gather-8",
            GatherRules::DirectMl => "DirectML GATHER",
        }
    }

    /// The standard's GatherElements operator.
    pub const fn elements_op_name(self) -> &'static str {
        match self {
            GatherRules::Onnx => "ONNX GatherElements-13",
            GatherRules::OpenVino => "OpenVINO GatherElements-6",
            GatherRules::DirectMl => "DirectML GATHER_ELEMENTS",
        }
    }

    /// The standard's GatherND operator.
    pub const fn nd_op_name(self) -> &'static str {
        match self {
            GatherRules::Onnx => "ONNX GatherND-13",
            GatherRules::OpenVino => "OpenVINO GatherND-8",
            GatherRules::DirectMl => "DirectML GATHER_ND1",
        }
    }

    /// The standard's scatter of `form`: the inverse of its gather of that form (`None`: the
    /// standard has none).
    pub const fn scatter_op_name(self, form: GatherForm) -> Option<&'static str> {
        match (self, form) {
            (GatherRules::OpenVino, GatherForm::Axis) => Some("OpenVINO ScatterUpdate-3"),
            (_, GatherForm::Axis) => None,
            (GatherRules::Onnx, GatherForm::Elements) => Some("ONNX ScatterElements-18"),
            (GatherRules::OpenVino, GatherForm::Elements) => Some("OpenVINO ScatterElementsUpdate-12"),
            (GatherRules::DirectMl, GatherForm::Elements) => Some("DirectML SCATTER"),
            (GatherRules::Onnx, GatherForm::Nd) => Some("ONNX ScatterND-18"),
            (GatherRules::OpenVino, GatherForm::Nd) => Some("OpenVINO ScatterNDUpdate-15"),
            (GatherRules::DirectMl, GatherForm::Nd) => Some("DirectML SCATTER_ND"),
        }
    }

    /// Whether the standard's scatter of `form` takes `reduction`. `scatter!` follows
    /// ScatterUpdate-3's shapes, which has no reduction; stridex adds PyTorch's `index_add_`
    /// and `index_reduce_` reductions there. DirectML's scatters take none; `sub` is OpenVINO
    /// ScatterNDUpdate-15's alone, `mean` ScatterElementsUpdate-12's.
    pub const fn allows_reduction(self, form: GatherForm, reduction: Reduction) -> bool {
        match reduction {
            Reduction::None => true,
            Reduction::Sub => matches!((self, form), (GatherRules::OpenVino, GatherForm::Nd)),
            Reduction::Mean => self.has_init_choice(form),
            _ => !matches!(self, GatherRules::DirectMl),
        }
    }

    /// Whether the standard's scatter of `form` lets the data stay out of its reductions
    /// (OpenVINO ScatterElementsUpdate-12's `use_init_val`).
    pub const fn has_init_choice(self, form: GatherForm) -> bool {
        matches!((self, form), (GatherRules::OpenVino, GatherForm::Elements))
    }

    /// The standard's operator of `form`.
    pub const fn form_op_name(self, form: GatherForm) -> &'static str {
        match form {
            GatherForm::Axis => self.op_name(),
            GatherForm::Elements => self.elements_op_name(),
            GatherForm::Nd => self.nd_op_name(),
        }
    }

    pub const fn default_out_of_range(self) -> OutOfRange {
        match self {
            GatherRules::Onnx => OutOfRange::Error,
            GatherRules::OpenVino => OutOfRange::Zero,
            GatherRules::DirectMl => OutOfRange::Clamp,
        }
    }

    pub fn allows_index_type(self, t: IndexType) -> bool {
        match self {
            GatherRules::Onnx => t.is_signed(),
            GatherRules::OpenVino | GatherRules::DirectMl => true,
        }
    }

    pub(crate) const fn index_types_text(self) -> &'static str {
        match self {
            GatherRules::Onnx => "int32 and int64",
            GatherRules::OpenVino => "integer types; stridex reads i32, i64, u32 and u64",
            GatherRules::DirectMl => "i64, i32, u64 and u32",
        }
    }

    /// DirectML's feature-level 4.1 list has no bool and no bf16; the others take every type.
    pub fn allows_data_type(self, t: DType) -> bool {
        match self {
            GatherRules::DirectMl => directml_allows(t),
            _ => true,
        }
    }

    /// Inclusive range of `axis` for data of `rank`.
    pub fn axis_range(self, rank: usize) -> (i64, i64) {
        let r = rank as i64;
        match self {
            GatherRules::DirectMl => (0, r - 1),
            _ => (-r, r - 1),
        }
    }
}

/// DirectML feature level 4.1 data types (gather and slice).
pub fn directml_allows(t: DType) -> bool {
    !matches!(t, DType::Bool | DType::BF16)
}

/// The two forms of a slice: a DirectML SLICE1 window (offsets, sizes, signed strides) or ONNX
/// Slice-13 (starts, ends, axes, steps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SliceForm {
    DirectMl,
    Onnx,
}

impl SliceForm {
    pub const ALL: [SliceForm; 2] = [SliceForm::DirectMl, SliceForm::Onnx];
    /// The keywords in descriptors (`rules: onnx`).
    pub const NAMES: [&'static str; 2] = ["directml", "onnx"];

    pub const fn name(self) -> &'static str {
        match self {
            SliceForm::DirectMl => "directml",
            SliceForm::Onnx => "onnx",
        }
    }

    pub fn from_name(s: &str) -> Option<SliceForm> {
        SliceForm::ALL.into_iter().find(|f| f.name() == s)
    }

    /// DirectML's type list has no bool or bf16; ONNX Slice takes every type.
    pub fn allows_data_type(self, t: DType) -> bool {
        match self {
            SliceForm::DirectMl => directml_allows(t),
            SliceForm::Onnx => true,
        }
    }
}

/// The standard a rule comes from, as messages name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleSet {
    /// What every stridex tensor obeys (docs/rules.md, "Tensors in memory").
    Layout,
    Gather(GatherRules),
    Slice(SliceForm),
}

impl RuleSet {
    pub const fn op_name(self) -> &'static str {
        match self {
            RuleSet::Layout => "tensor layout",
            RuleSet::Gather(r) => r.op_name(),
            RuleSet::Slice(SliceForm::DirectMl) => "DirectML SLICE1",
            RuleSet::Slice(SliceForm::Onnx) => "ONNX Slice",
        }
    }

    /// Whether the rule set's operator takes data of type `t`: the predicate behind both the
    /// rule and the list of types its message prints.
    pub fn allows_data_type(self, t: DType) -> bool {
        match self {
            RuleSet::Layout => true,
            RuleSet::Gather(r) => r.allows_data_type(t),
            RuleSet::Slice(f) => f.allows_data_type(t),
        }
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.op_name())
    }
}

impl fmt::Display for GatherRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
