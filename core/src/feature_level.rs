//! DirectML feature levels: what DML_GATHER_OPERATOR_DESC (seed 000) and
//! DML_SLICE1_OPERATOR_DESC (seed 001) support at each level, from the seeds' "Tensor support"
//! tables. A descriptor may name the level of the devices it targets (`feature_level: 2_1`);
//! one outside it is refused with the lowest level that would take it.
//!
//! The tables grow with the level (every later level takes all an earlier one does), so the
//! lowest accepting level is the first in [`FeatureLevel::ALL`] that takes the descriptor.

use crate::dtype::DType;
use crate::rules::RuleSet;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FeatureLevel {
    L1_0,
    L2_1,
    L3_0,
    L4_1,
}

impl FeatureLevel {
    pub const ALL: [FeatureLevel; 4] =
        [FeatureLevel::L1_0, FeatureLevel::L2_1, FeatureLevel::L3_0, FeatureLevel::L4_1];
    /// What a descriptor that names no level is checked against.
    pub const HIGHEST: FeatureLevel = FeatureLevel::L4_1;

    /// As written in descriptors: `1_0`, `2_1`, `3_0`, `4_1` (`DML_FEATURE_LEVEL_2_1`).
    pub const fn name(self) -> &'static str {
        match self {
            FeatureLevel::L1_0 => "1_0",
            FeatureLevel::L2_1 => "2_1",
            FeatureLevel::L3_0 => "3_0",
            FeatureLevel::L4_1 => "4_1",
        }
    }

    pub fn from_name(s: &str) -> Option<FeatureLevel> {
        FeatureLevel::ALL.into_iter().find(|l| l.name() == s)
    }

    pub const NAMES: [&'static str; 4] = ["1_0", "2_1", "3_0", "4_1"];
}

impl fmt::Display for FeatureLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The DirectML operators with feature-level tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DmlOperator {
    Gather,
    Slice1,
}

impl DmlOperator {
    pub const fn rule_set(self) -> RuleSet {
        match self {
            DmlOperator::Gather => RuleSet::Gather(crate::GatherRules::DirectMl),
            DmlOperator::Slice1 => RuleSet::Slice(crate::SliceForm::DirectMl),
        }
    }
}

use DType::*;
const ELEVEN: &[DType] = &[F64, F32, F16, I64, I32, I16, I8, U64, U32, U16, U8];
const EIGHT: &[DType] = &[F32, F16, I32, I16, I8, U32, U16, U8];
const FLOATS: &[DType] = &[F32, F16];
const INDEX_ALL: &[DType] = &[I64, I32, U64, U32];
const INDEX_U32: &[DType] = &[U32];

/// One row group of a "Tensor support" table.
struct Support {
    data: &'static [DType],
    indices: &'static [DType],
    /// Inclusive range of DimensionCount.
    ranks: (usize, usize),
}

/// `None`: the operator does not exist at that level (SLICE1 came with 2_1).
fn support(op: DmlOperator, level: FeatureLevel) -> Option<Support> {
    use FeatureLevel::*;
    Some(match (op, level) {
        (DmlOperator::Gather, L4_1) => Support { data: ELEVEN, indices: INDEX_ALL, ranks: (1, 8) },
        (DmlOperator::Gather, L3_0) => Support { data: EIGHT, indices: INDEX_ALL, ranks: (1, 8) },
        (DmlOperator::Gather, L2_1) => Support { data: EIGHT, indices: INDEX_U32, ranks: (4, 4) },
        (DmlOperator::Gather, L1_0) => Support { data: FLOATS, indices: INDEX_U32, ranks: (4, 4) },
        (DmlOperator::Slice1, L4_1) => Support { data: ELEVEN, indices: &[], ranks: (1, 8) },
        (DmlOperator::Slice1, L3_0) => Support { data: EIGHT, indices: &[], ranks: (1, 8) },
        (DmlOperator::Slice1, L2_1) => Support { data: EIGHT, indices: &[], ranks: (4, 5) },
        (DmlOperator::Slice1, L1_0) => return None,
    })
}

/// What a level lacks for a descriptor, first found in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsupported {
    /// The operator came with a later level.
    Operator,
    DataType(DType),
    IndexType(DType),
    DimensionCount(usize),
}

fn first_unsupported(
    op: DmlOperator,
    level: FeatureLevel,
    data: DType,
    indices: Option<DType>,
    rank: usize,
) -> Option<Unsupported> {
    let Some(s) = support(op, level) else { return Some(Unsupported::Operator) };
    if !s.data.contains(&data) {
        return Some(Unsupported::DataType(data));
    }
    if let Some(t) = indices.filter(|t| !s.indices.contains(t)) {
        return Some(Unsupported::IndexType(t));
    }
    if rank < s.ranks.0 || rank > s.ranks.1 {
        return Some(Unsupported::DimensionCount(rank));
    }
    None
}

/// Why a level refuses a descriptor: what it lacks, and the lowest level that takes it (a
/// [`crate::RuleError::FeatureLevel`] through `?`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub op: DmlOperator,
    pub level: FeatureLevel,
    pub unsupported: Unsupported,
    pub lowest: Option<FeatureLevel>,
}

/// Checks a DirectML descriptor (its data type, index type for a gather, and DimensionCount)
/// against the table of `level`.
pub fn check(
    op: DmlOperator,
    level: FeatureLevel,
    data: DType,
    indices: Option<DType>,
    rank: usize,
) -> Result<(), Refusal> {
    match first_unsupported(op, level, data, indices, rank) {
        None => Ok(()),
        Some(unsupported) => Err(Refusal {
            op,
            level,
            unsupported,
            lowest: FeatureLevel::ALL
                .into_iter()
                .find(|&l| first_unsupported(op, l, data, indices, rank).is_none()),
        }),
    }
}

/// What `level` supports, for messages: `"f32, f16 data; u32 indices; DimensionCount 4"`.
pub(crate) fn describe(op: DmlOperator, level: FeatureLevel) -> String {
    let Some(s) = support(op, level) else {
        return "SLICE1 came with 2_1".into();
    };
    let names = |ts: &[DType]| ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
    let ranks = if s.ranks.0 == s.ranks.1 {
        format!("DimensionCount {}", s.ranks.0)
    } else {
        format!("DimensionCount {} to {}", s.ranks.0, s.ranks.1)
    };
    if s.indices.is_empty() {
        format!("{} data; {ranks}", names(s.data))
    } else {
        format!("{} data; {} indices; {ranks}", names(s.data), names(s.indices))
    }
}
