//! Which keys a descriptor takes, and which belong to which form: shared by the macros'
//! parser and the runtime builders, so both accept and refuse the same things.

use crate::error::{RuleError, Window};
use crate::rules::{GatherRules, SliceForm};

pub const GATHER_KEYS: &[&str] = &[
    "rules",
    "data",
    "indices",
    "axis",
    "batch_dims",
    "index_dims",
    "out_of_range",
    "output",
    "feature_level",
];
/// `gather_elements!`'s keys: the gather's but those of its axis form alone.
pub const GATHER_ELEMENTS_KEYS: &[&str] = &["rules", "data", "indices", "axis", "out_of_range", "output"];
/// `gather_nd!`'s keys: no axis (the indices' tuples name the axes), `batch_dims` in every rule
/// set.
pub const GATHER_ND_KEYS: &[&str] = &["rules", "data", "indices", "batch_dims", "out_of_range", "output"];
/// `scatter!`'s and `scatter_elements!`'s keys: the gather's tensors and axis, the updates,
/// and the scatter's own policies (no batch or index dimensions, no output: the result has
/// the data's shape).
/// `use_init_val` is OpenVINO ScatterElementsUpdate-12's; the rules refuse it elsewhere with a
/// message that says so.
pub const SCATTER_KEYS: &[&str] = &[
    "rules",
    "data",
    "indices",
    "updates",
    "axis",
    "reduction",
    "duplicates",
    "use_init_val",
    "out_of_range",
];
/// `scatter_nd!`'s keys: no axis (the indices' tuples name the axes).
pub const SCATTER_ND_KEYS: &[&str] =
    &["rules", "data", "indices", "updates", "reduction", "duplicates", "use_init_val", "out_of_range"];
/// A chain's scatter stage: `scatter!`'s keys, but its updates are what the stage receives and
/// its destination, `scatter!`'s `data`, is `into`.
pub const SCATTER_STAGE_KEYS: &[&str] =
    &["rules", "into", "indices", "axis", "reduction", "duplicates", "use_init_val", "out_of_range"];
/// A chain's `scatter_nd` stage: no axis.
pub const SCATTER_ND_STAGE_KEYS: &[&str] =
    &["rules", "into", "indices", "reduction", "duplicates", "use_init_val", "out_of_range"];
pub const SLICE_KEYS: &[&str] = &[
    "rules",
    "input",
    "offsets",
    "sizes",
    "strides",
    "starts",
    "ends",
    "axes",
    "steps",
    "output",
    "feature_level",
];

/// A chain's `convert` stage: the result's element type, the channel dimension, and per
/// channel (or one for all) a scale and an offset.
pub const CONVERT_KEYS: &[&str] = &["to", "dim", "scale", "offset"];

/// A chain's own keys: the data before its first stage, the output after its last.
pub const CHAIN_KEYS: &[&str] = &["data", "output"];

/// A key of `gather!` or `slice!` that a chain stage does not take: its input is the previous
/// stage's output, and the result's layout is the chain's.
pub fn check_stage_key(key: &str) -> Result<(), RuleError> {
    match key {
        "data" => Err(RuleError::StageKey { key: "data" }),
        "input" => Err(RuleError::StageKey { key: "input" }),
        "output" => Err(RuleError::StageKey { key: "output" }),
        "feature_level" => Err(RuleError::StageKey { key: "feature_level" }),
        _ => Ok(()),
    }
}

/// The gather rule sets' keywords, in the order messages list them.
pub fn gather_rule_names() -> [&'static str; 3] {
    GatherRules::ALL.map(GatherRules::name)
}

impl SliceForm {
    /// The window keys of this form.
    pub const fn window_keys(self) -> &'static [Window] {
        match self {
            SliceForm::DirectMl => &[Window::Offsets, Window::Sizes, Window::Strides],
            SliceForm::Onnx => &[Window::Starts, Window::Ends, Window::Axes, Window::Steps],
        }
    }

    /// The window keys this form cannot do without.
    pub const fn required(self) -> &'static [&'static str] {
        match self {
            SliceForm::DirectMl => &["offsets", "sizes", "strides"],
            SliceForm::Onnx => &["starts", "ends"],
        }
    }

    /// A complete window of this form, for messages.
    pub const fn example(self) -> &'static str {
        match self {
            SliceForm::DirectMl => "offsets: [0, 1], sizes: [2, 3], strides: [1, 2]",
            SliceForm::Onnx => "starts: [0], ends: [2]",
        }
    }

    /// A key of the other form's window is an error (it would be ignored).
    pub fn check_key(self, key: &str) -> Result<(), RuleError> {
        let other = match self {
            SliceForm::DirectMl => SliceForm::Onnx,
            SliceForm::Onnx => SliceForm::DirectMl,
        };
        match other.window_keys().iter().find(|w| w.key() == key) {
            Some(&window) => Err(RuleError::KeyOfOtherForm { window, form: self }),
            None => Ok(()),
        }
    }
}

/// `s[..]` ranges stand for a SLICE1 window: they go with neither ONNX's form nor the window
/// keys (`given` are the keys given beside them).
pub fn check_ranges(form: SliceForm, given: &[&str]) -> Result<(), RuleError> {
    if form == SliceForm::Onnx {
        return Err(RuleError::RangesWith { other: "rules: onnx" });
    }
    for w in SliceForm::DirectMl.window_keys() {
        if given.contains(&w.key()) {
            return Err(RuleError::RangesWith { other: w.key() });
        }
    }
    Ok(())
}
