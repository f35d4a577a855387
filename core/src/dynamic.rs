//! A leading dimension written `_`: a gather's indices `i64[_, 8]` or a slice's input
//! `f32[_, 3, 64, 64]`, whose size (the count) is known only at run time, from the buffer's
//! length. Every other size, stride and divisor stays a constant of the kernel.
//!
//! The rules are checked once with a placeholder count, with the dimension kept whole and
//! leading in the output, so no rule depends on the count; the kernel is built for two counts
//! and must come out the same but for the count (the row walk's outermost coordinate is what is
//! left of an invocation's position after the inner ones are divided out, so the count is never
//! a divisor, and the invocation limit is a launch argument). What only the count decides
//! (32-bit addressing of the buffers it sizes) is checked again at run time, as an `Err`.

use crate::chain::{ChainCount, ChainDesc, ChainPlan, StageDesc, StagePlan};
use crate::dims::Dims;
pub use crate::error::DynamicFault;
use crate::error::{Location, Operand, RuleError, Window};
use crate::gather::{GatherDesc, GatherPlan};
use crate::kernel::ChainKernelDesc;
use crate::kernel::{
    GatherKernelDesc, ScatterKernelDesc, ScatterLinesDesc, ScatterRowsDesc, SliceKernelDesc, Walk,
};
pub use crate::limits::{COUNT_SHOWN, PLACEHOLDER};
use crate::ranges::SliceRange;
use crate::rules::{GatherForm, GatherRules};
use crate::scatter::{ScatterDesc, ScatterPlan};
use crate::slice::{SliceDesc, SlicePlan, SliceWindow};
use crate::tensor::{OutputDecl, TensorDecl};

const SECOND: usize = 3;

impl GatherDesc {
    /// Applies every rule of the chosen rule set; for a `_` leading size, also the rules that
    /// keep it the output's leading size with one kernel for every count (planned at
    /// [`PLACEHOLDER`]; [`gather_at`] plans a count).
    pub fn plan(&self) -> Result<GatherPlan, RuleError> {
        if self.dynamic_leading {
            gather_plan(self)
        } else {
            self.plan_sizes()
        }
    }
}

impl SliceDesc {
    /// Applies every rule of the slice's form; for a `_` leading size, also the rules that keep
    /// it whole and leading (planned at [`PLACEHOLDER`]; [`slice_at`] plans a count).
    pub fn plan(&self) -> Result<SlicePlan, RuleError> {
        if self.dynamic_leading {
            slice_plan(self)
        } else {
            self.plan_sizes()
        }
    }
}

impl ScatterDesc {
    /// Applies every rule: the gather's to the indices, then the scatter's own; for a `_`
    /// leading size of the indices (and the updates), also the rules that keep it the updates'
    /// leading size with one kernel for every count (planned at [`PLACEHOLDER`];
    /// [`scatter_at`] plans a count).
    pub fn plan(&self) -> Result<ScatterPlan, RuleError> {
        if self.map.dynamic_leading {
            scatter_plan(self)
        } else {
            self.plan_sizes()
        }
    }
}

impl ChainDesc {
    /// Checks each stage with its own rule set on the shape it receives (the data for the first,
    /// the previous stage's output, packed, for the others); with a `_` count, also the rules
    /// that keep it the output's leading size, at the placeholder count.
    pub fn plan(&self) -> Result<ChainPlan, RuleError> {
        match self.dynamic_leading {
            Some(_) => chain_plan(self),
            None => self.plan_sizes(),
        }
    }
}

fn fault(fault: DynamicFault, at: Location) -> RuleError {
    RuleError::Dynamic { fault, at }
}

/// Elements per leading step: the product of every size after the first.
pub fn row_elements(sizes: &[usize]) -> usize {
    sizes.iter().skip(1).fold(1usize, |a, &n| a.saturating_mul(n))
}

/// Elements from one step of a `_` dimension to the next: the tensor's leading stride, or the
/// elements of one row when it is packed.
pub fn row_step(decl: &TensorDecl) -> usize {
    match &decl.strides {
        Some(strides) if !strides.is_empty() => strides[0],
        _ => row_elements(&decl.sizes),
    }
}

/// The count of a `_` tensor whose buffer holds `len` elements (`None`: a packed buffer that
/// ends inside a row). A strided buffer's count is the steps its length reaches into: its last
/// row may end where that row's elements end, not a whole stride later (the buffer is then
/// checked against the span at that count).
pub fn count_in(decl: &TensorDecl, len: usize) -> Option<usize> {
    let step = row_step(decl);
    if step == 0 {
        return None;
    }
    match decl.strides {
        Some(_) => Some(len.div_ceil(step)),
        None => (len % step == 0).then_some(len / step),
    }
}

/// A strided `_` tensor keeps its leading dimension outermost: a stride at least the span of
/// the other dimensions (which rows of no element, refused before, never reach here).
fn check_leading_stride(decl: &TensorDecl, tensor: Operand) -> Result<(), RuleError> {
    leading_stride_of(&decl.sizes, decl.strides.as_ref(), tensor)
}

/// A `_` op's declared output: its leading size is the count (the macros take only `_` there;
/// a builder's is not read), and a strided one keeps that dimension outermost, so that every
/// count's result lies in one buffer of whole results (a batch of NHWC images written from
/// NCHW ones, rows with a padded pitch).
fn check_output(output: &Option<OutputDecl>) -> Result<(), RuleError> {
    match output {
        Some(o) => leading_stride_of(&o.sizes, o.strides.as_ref(), Operand::Output),
        None => Ok(()),
    }
}

/// The output at a count: the count as its leading size (a rank the rules refuse is left as
/// written, for them to report).
fn output_at(output: &mut Option<OutputDecl>, count: usize) {
    if let Some(o) = output.as_mut().filter(|o| !o.sizes.is_empty()) {
        o.sizes.set(0, count);
    }
}

fn leading_stride_of(sizes: &Dims, strides: Option<&Dims>, tensor: Operand) -> Result<(), RuleError> {
    let Some(strides) = strides else { return Ok(()) };
    if strides.len() != sizes.len() || strides.is_empty() {
        return Ok(()); // the layout rules report a stride list of the wrong length
    }
    if sizes[1..].contains(&0) {
        // Rows of no element: an input's are refused before; an output's is empty at every
        // count, nothing is written.
        return Ok(());
    }
    let span = sizes
        .iter()
        .zip(strides.iter())
        .skip(1)
        .try_fold(1usize, |span, (&n, &s)| span.checked_add(n.checked_sub(1)?.checked_mul(s)?));
    match span {
        Some(span) if strides[0] >= span => Ok(()),
        span => Err(fault(
            DynamicFault::LeadingStride { tensor, stride: strides[0], span: span.unwrap_or(usize::MAX) },
            Location::Strides(tensor),
        )),
    }
}

/// Whether `range` takes a dimension whole, from 0, forwards (`..`, `0..`): what a `_`
/// dimension's range must be.
pub fn check_leading_range(range: &SliceRange) -> Result<(), RuleError> {
    if matches!(range.start, None | Some(0)) && range.end.is_none() && range.step == 1 {
        Ok(())
    } else {
        Err(fault(DynamicFault::Window, Location::RangeAt(0)))
    }
}

/// The plan of a gather whose indices' leading size is `_`, at the placeholder count.
fn gather_plan(desc: &GatherDesc) -> Result<GatherPlan, RuleError> {
    check_indices_count(desc, &desc.output)?;
    let p = gather_at(desc, PLACEHOLDER)?;
    if p.axis != 0 {
        return Err(fault(DynamicFault::Axis { axis: p.axis }, Location::Axis));
    }
    let second = gather_at(desc, SECOND)?;
    let walks = |p: &GatherPlan| GatherKernelDesc::new(p).map(|k| (k.walk, k.reads));
    check_one_kernel(
        walks(&p),
        walks(&second),
        &p.output,
        p.data_type.size(),
        Location::Size(Operand::Indices, 0),
    )?;
    Ok(p)
}

/// The rules of indices whose leading size is `_` that hold before any plan (a gather's, and
/// the gather that maps a scatter): packed, not DirectML's, no batch dimensions, rows of
/// elements, GatherElements along axis 0, GatherND tuples with a leading dimension; and a
/// gather's declared `output`, checked in between as it always was.
fn check_indices_count(desc: &GatherDesc, output: &Option<OutputDecl>) -> Result<(), RuleError> {
    let t = Operand::Indices;
    if desc.indices.sizes.is_empty() {
        return Err(fault(DynamicFault::Scalar { tensor: t }, Location::Shape(t)));
    }
    if desc.rules == GatherRules::DirectMl {
        return Err(fault(DynamicFault::DirectMl, Location::Size(t, 0)));
    }
    if desc.indices.strides.is_some() {
        return Err(fault(DynamicFault::Strides { tensor: t }, Location::Strides(t)));
    }
    check_output(output)?;
    // Before planning: with the placeholder count, a batch dimension would report a mismatch
    // against a size the user never wrote.
    if let Some(b) = desc.batch_dims.filter(|&b| b != 0) {
        let rank = desc.indices.sizes.len() as i64;
        let normalized = if b < 0 { rank + b } else { b };
        let limit = desc.data.sizes.len().min(desc.indices.sizes.len()) as i64;
        if b >= -limit && b <= limit && normalized != 0 {
            return Err(fault(
                DynamicFault::BatchDims { batch_dims: normalized as usize },
                Location::BatchDims,
            ));
        }
    }
    if row_elements(&desc.indices.sizes) == 0 {
        return Err(fault(DynamicFault::EmptyRows { tensor: t }, Location::Size(t, 0)));
    }
    // Before planning: at the placeholder count, the shape rule would report a size the user
    // never wrote.
    if desc.form == GatherForm::Elements {
        let rank = desc.data.sizes.len() as i64;
        let axis = if desc.axis < 0 { desc.axis + rank } else { desc.axis };
        // An axis out of range is the axis rule's to report.
        if (1..rank).contains(&axis) {
            return Err(fault(DynamicFault::ElementsAxis { axis: axis as usize }, Location::Axis));
        }
    }
    if desc.form == GatherForm::Nd && desc.indices.sizes.len() == 1 {
        return Err(fault(DynamicFault::NdTuple, Location::Size(t, 0)));
    }
    Ok(())
}

/// The plan of a `_` gather for `count` leading steps (what `run` launches with).
pub fn gather_at(desc: &GatherDesc, count: usize) -> Result<GatherPlan, RuleError> {
    let mut d = *desc;
    d.dynamic_leading = false;
    d.indices.sizes.set(0, count);
    output_at(&mut d.output, count);
    let mut p = d.plan_sizes()?;
    p.dynamic_leading = true;
    Ok(p)
}

/// The plan of a scatter whose indices' (and so updates') leading size is `_`, at the
/// placeholder count. Its indices follow the `_` rules of the gather that maps it, and the
/// count must be the updates' leading size (along axis 0; GatherND tuples with a leading
/// dimension). The kernels that read the indices on the device (the owned-row pair) take the
/// count as a launch argument, and the grouped kernel's constants are the runs', which no
/// count changes: both must come out the same at two counts. A ScatterElements goes along
/// axis 0, as its gather does, and its line kernel takes the length of its lines, the count,
/// as a launch argument too.
fn scatter_plan(desc: &ScatterDesc) -> Result<ScatterPlan, RuleError> {
    let op = desc.check_keys()?;
    let in_scatter = |rule| RuleError::InScatter { op, rule: Box::new(rule) };
    let t = Operand::Indices;
    check_indices_count(&desc.map, &None).map_err(in_scatter)?;
    // Before planning: at the placeholder count, the updates' shape rule would report a size
    // the user never wrote (an axis out of range is the axis rule's to report).
    let rank = desc.map.data.sizes.len() as i64;
    let axis = if desc.map.axis < 0 { desc.map.axis + rank } else { desc.map.axis };
    if desc.map.form == GatherForm::Axis && (1..rank).contains(&axis) {
        return Err(in_scatter(fault(DynamicFault::Axis { axis: axis as usize }, Location::Axis)));
    }
    if desc.updates.sizes.is_empty() {
        let u = Operand::Updates;
        return Err(fault(DynamicFault::Scalar { tensor: u }, Location::Shape(u)));
    }
    check_leading_stride(&desc.updates, Operand::Updates)?;
    let p = scatter_at(desc, PLACEHOLDER)?;
    let second = scatter_at(desc, SECOND)?;
    let kernels = |p: &ScatterPlan| {
        [&p.output, &p.map.data].map(|dest| {
            let rows = ScatterRowsDesc::of(p, dest).map(|k| k.specialized());
            let lines = ScatterLinesDesc::of(p, dest).map(|k| k.specialized());
            (rows, lines, ScatterKernelDesc::of(p, dest))
        })
    };
    if kernels(&p) != kernels(&second) {
        return Err(fault(
            DynamicFault::Layout { output: p.updates.sizes, elem_bytes: p.data_type().size() },
            Location::Size(t, 0),
        ));
    }
    Ok(p)
}

/// The plan of a `_` scatter for `count` leading steps of its indices and updates.
pub fn scatter_at(desc: &ScatterDesc, count: usize) -> Result<ScatterPlan, RuleError> {
    let mut p = scatter_written(desc, count).plan_sizes()?;
    p.map.dynamic_leading = true;
    Ok(p)
}

/// A `_` scatter with `count` written as its indices' and updates' leading size: a scatter of
/// fixed sizes, whose kernels are the `_` one's but for their launch arguments (which its
/// `plan` checked). The backends run a `_` scatter as this.
pub fn scatter_written(desc: &ScatterDesc, count: usize) -> ScatterDesc {
    let mut d = *desc;
    d.map.dynamic_leading = false;
    d.map.indices.sizes.set(0, count);
    if !d.updates.sizes.is_empty() {
        d.updates.sizes.set(0, count);
    }
    d
}

/// Whether a `_` gather's `tensor` is sized by the count: its indices and output, not its data.
pub fn gather_follows_count(desc: &GatherDesc, tensor: Operand) -> bool {
    desc.dynamic_leading && matches!(tensor, Operand::Indices | Operand::Output)
}

/// Whether a `_` slice's `tensor` is sized by the count: its input and output.
pub fn slice_follows_count(desc: &SliceDesc, tensor: Operand) -> bool {
    desc.dynamic_leading && matches!(tensor, Operand::Input | Operand::Data | Operand::Output)
}

/// Whether a `_` scatter's `tensor` is sized by the count: its indices and updates, not the
/// data it writes (nor so its output, the data's shape).
pub fn scatter_follows_count(desc: &ScatterDesc, tensor: Operand) -> bool {
    desc.map.dynamic_leading && matches!(tensor, Operand::Indices | Operand::Updates)
}

/// Whether a `_` chain's `tensor` is sized by the count: the data where it carries the count,
/// the output unless the chain ends in a scatter (which writes its fixed destination), and
/// the index buffers (the largest may be the count's).
pub fn chain_follows_count(desc: &ChainDesc, tensor: Operand) -> bool {
    let Some(carrier) = desc.dynamic_leading else { return false };
    match tensor {
        Operand::Data | Operand::Input => carrier == ChainCount::Data,
        Operand::Output => !matches!(desc.stages.last(), Some(StageDesc::Scatter(_))),
        Operand::Indices | Operand::Updates => true,
    }
}

/// The plan of a slice whose input's leading size is `_`, at the placeholder count.
fn slice_plan(desc: &SliceDesc) -> Result<SlicePlan, RuleError> {
    let t = Operand::Input;
    if desc.input.sizes.is_empty() {
        return Err(fault(DynamicFault::Scalar { tensor: t }, Location::Shape(t)));
    }
    check_output(&desc.output)?;
    check_window(&desc.window, desc.input.sizes.len(), None)?;
    if row_elements(&desc.input.sizes) == 0 {
        return Err(fault(DynamicFault::EmptyRows { tensor: t }, Location::Size(t, 0)));
    }
    check_leading_stride(&desc.input, t)?;
    let p = slice_at(desc, PLACEHOLDER)?;
    let second = slice_at(desc, SECOND)?;
    let walks = |p: &SlicePlan| SliceKernelDesc::new(p).map(|k| (k.walk, ()));
    check_one_kernel(walks(&p), walks(&second), &p.output, p.data_type.size(), Location::Size(t, 0))?;
    Ok(p)
}

/// The plan of a `_` slice for `count` leading steps.
pub fn slice_at(desc: &SliceDesc, count: usize) -> Result<SlicePlan, RuleError> {
    if count == 0 {
        // SLICE1 windows are never empty: the plan for one row, emptied.
        let mut p = slice_at(desc, 1)?;
        let mut sizes = p.input.sizes;
        sizes.set(0, 0);
        p.input = crate::TensorLayout::packed(sizes);
        p.output.sizes.set(0, 0); // a declared output keeps its strides
        p.dims.clear();
        return Ok(p);
    }
    let mut d = *desc;
    d.dynamic_leading = false;
    d.input.sizes.set(0, count);
    output_at(&mut d.output, count);
    if let SliceWindow::DirectMl { sizes, .. } = &mut d.window {
        if !sizes.is_empty() {
            sizes.set(0, count);
        }
    }
    let mut p = d.plan_sizes()?;
    p.dynamic_leading = true;
    Ok(p)
}

/// A window must take the `_` dimension whole, from 0, forwards. `size`: what a SLICE1 window's
/// leading size must be (in a chain, the placeholder a first range `..` was lowered against; a
/// single slice's `_` window size is checked where it is written).
fn check_window(window: &SliceWindow, rank: usize, size: Option<usize>) -> Result<(), RuleError> {
    let broken = if size.is_some() { DynamicFault::StageWindow } else { DynamicFault::Window };
    let at = |w: Window, i: usize| fault(broken, Location::WindowAt(w, i));
    match *window {
        SliceWindow::DirectMl { offsets, sizes, strides } => {
            if offsets.first().is_some_and(|&o| o != 0) {
                return Err(at(Window::Offsets, 0));
            }
            if size.is_some_and(|n| sizes.first().is_some_and(|&s| s != n)) {
                return Err(at(Window::Sizes, 0));
            }
            if strides.first().is_some_and(|&s| s != 1) {
                return Err(at(Window::Strides, 0));
            }
        }
        SliceWindow::Onnx { starts, ends, axes, steps } => {
            let rank = rank as i64;
            for k in 0..starts.len() {
                let axis = axes.map_or(Some(k as i64), |a| a.get(k).copied());
                if axis != Some(0) && axis != Some(-rank) {
                    continue;
                }
                if starts[k] != 0 {
                    return Err(at(Window::Starts, k));
                }
                // Any end at or past 2^32 - 1 clamps to the count (buffers are 32-bit addressed).
                if ends.get(k).is_some_and(|&e| e < u32::MAX as i64) {
                    return Err(at(Window::Ends, k));
                }
                if steps.and_then(|s| s.get(k).copied()).is_some_and(|s| s != 1) {
                    return Err(at(Window::Steps, k));
                }
            }
        }
    }
    Ok(())
}

/// The plan of a chain with a `_` count, at the placeholder count: the tensor that carries it
/// obeys the rules of a single op's `_` (packed, rows of elements; a gather along axis 0 with
/// no batch dimensions, not DirectML), every later stage keeps the count as its leading size
/// (slices take that dimension whole, gathers go along another axis with no batch
/// dimensions, a gather_elements' packed indices lead with the count too; no gather_nd), and
/// the chain fuses into one kernel that is the same for every count (or,
/// ending in a scatter, the stages before it do, and the scatter follows a single `_`
/// scatter's rules).
fn chain_plan(desc: &ChainDesc) -> Result<ChainPlan, RuleError> {
    check_chain(desc).map_err(|e| match e {
        // A stage at or after the count received it as its leading size.
        RuleError::Stage { stage, kind, mut input, error } => {
            if counted_at(desc, stage) && !input.is_empty() {
                input[0] = COUNT_SHOWN;
            }
            RuleError::Stage { stage, kind, input, error }
        }
        e => e,
    })
}

/// The rule a chain's gather stage breaks by its indices' leading size as written, for the
/// front ends (the macro, the builder), which know whether it is `_` (`underscore`) and whether
/// an earlier tensor carries the chain's count (`counted`). Before the count a `_` makes the
/// indices its carrier; after it, a gather_elements' indices lead with that same count (`_`
/// required: its output is their shape), a gather_nd takes none, and a gather's `_` would be a
/// second count.
pub fn stage_indices_fault(form: GatherForm, counted: bool, underscore: bool) -> Option<RuleError> {
    let fault = match (counted, form, underscore) {
        (true, GatherForm::Elements, false) => {
            return Some(self::fault(DynamicFault::ElementsStageCount, Location::Size(Operand::Indices, 0)))
        }
        (true, GatherForm::Nd, true) => DynamicFault::NdAfterCount,
        (true, GatherForm::Axis, true) => DynamicFault::SecondCount,
        _ => return None,
    };
    Some(self::fault(fault, Location::Chain))
}

/// The index tensors of a `_` chain, after the one that carries the count, that lead with
/// that same count, each with its stage (1-based): a gather_elements' (its output is its
/// indices' shape) and a final scatter's (its positions are the count's rows, as its updates
/// are). Empty for fixed sizes.
pub fn indices_led_by_count(desc: &ChainDesc) -> Vec<(usize, &TensorDecl)> {
    let first = match desc.dynamic_leading {
        None => return Vec::new(),
        Some(ChainCount::Data) => 0,
        Some(ChainCount::Indices { stage }) => stage,
    };
    let mut led = Vec::new();
    for (i, stage) in desc.stages.iter().enumerate() {
        let indices = match stage {
            StageDesc::Gather(g) if i + 1 > first && g.form == GatherForm::Elements => &g.indices,
            StageDesc::Scatter(s) => &s.indices,
            _ => continue,
        };
        if !indices.sizes.is_empty() {
            led.push((i + 1, indices));
        }
    }
    led
}

/// Whether stage `stage` (1-based) of a chain receives the `_` count as its leading size.
pub fn counted_at(desc: &ChainDesc, stage: usize) -> bool {
    match desc.dynamic_leading {
        Some(ChainCount::Data) => true,
        Some(ChainCount::Indices { stage: s }) => s < stage,
        None => false,
    }
}

/// How a chain's slice stage writes its window, for [`slice_stage_shape`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageWindowKeys {
    /// `s[..]` ranges, with the first one when it is a range (not a single index).
    Ranges { first: Option<SliceRange> },
    /// Window keys of this form (SLICE1's offsets/sizes/strides, ONNX's starts/ends/..).
    Keys(crate::rules::SliceForm),
}

/// The chain-stage rules of a slice stage `stage` (1-based) of `prefix` (the chain before it),
/// shared by both front ends (`chain!` and the `Chain` builder): the shape its `s[..]` ranges
/// are lowered against (`None` for window keys, which need none). After the chain's count the
/// stage takes that dimension whole: SLICE1 keys (which cannot say `_`) are refused, and a first
/// range must be `..`. A fault of the stage itself is a [`RuleError::Stage`] naming the shape it
/// received, its count shown as `_`.
pub fn slice_stage_shape(
    prefix: &ChainDesc,
    stage: usize,
    window: StageWindowKeys,
) -> Result<Option<Vec<usize>>, RuleError> {
    let counted = counted_at(prefix, stage);
    let fault_at = match window {
        _ if !counted => None,
        StageWindowKeys::Keys(form) => {
            (form == crate::rules::SliceForm::DirectMl).then_some(Location::WindowAt(Window::Sizes, 0))
        }
        StageWindowKeys::Ranges { first } => {
            first.filter(|r| check_leading_range(r).is_err()).map(|_| Location::RangeAt(0))
        }
    };
    if fault_at.is_none() && matches!(window, StageWindowKeys::Keys(_)) {
        return Ok(None);
    }
    let received = received_shape(prefix, stage)?;
    let Some(at) = fault_at else { return Ok(Some(received)) };
    let mut shown = received;
    if let Some(first) = shown.first_mut() {
        *first = COUNT_SHOWN;
    }
    Err(RuleError::Stage {
        stage,
        kind: "slice",
        input: shown,
        error: Box::new(fault(DynamicFault::StageWindow, at)),
    })
}

/// The shape stage `stage` (1-based) of `desc` receives: the data, or the output of the stages
/// before it, planned as written with a `_` count at the placeholder (what a stage's `s[..]`
/// ranges are lowered against; `desc` needs only those earlier stages).
pub fn received_shape(desc: &ChainDesc, stage: usize) -> Result<Vec<usize>, RuleError> {
    let before = stage.checked_sub(1).filter(|&k| k <= desc.stages.len()).ok_or_else(|| {
        fault(DynamicFault::NoStage { stage, last: desc.stages.len() + 1 }, Location::Chain)
    })?;
    let prefix = ChainDesc {
        data: desc.data,
        stages: desc.stages[..before].to_vec().into(),
        output: None,
        dynamic_leading: desc.dynamic_leading.filter(|_| counted_at(desc, stage)),
    };
    if stage == 1 {
        let mut sizes = desc.data.sizes.to_vec();
        // A scalar has no leading size: the chain's own check refuses `_` on it (`plan`).
        if let (Some(leading), Some(_)) = (sizes.first_mut(), prefix.dynamic_leading) {
            *leading = PLACEHOLDER;
        }
        return Ok(sizes);
    }
    Ok(chain_at(&prefix, PLACEHOLDER)?.output.sizes.to_vec())
}

fn check_chain(desc: &ChainDesc) -> Result<ChainPlan, RuleError> {
    let Some(carrier) = desc.dynamic_leading else { return desc.plan_sizes() };
    check_output(&desc.output)?;
    // Before the count's rules: a later stage would otherwise be checked against the shape a
    // scatter writes, which does not carry the count.
    let stages = desc.stages.len();
    let before_last = desc.stages.iter().take(stages.saturating_sub(1));
    if let Some(i) = before_last.into_iter().position(|s| matches!(s, StageDesc::Scatter(_))) {
        return Err(RuleError::ScatterNotLast { stage: i + 1, stages });
    }
    let received = |stage: usize| received_shape(desc, stage);
    let in_stage = |stage: usize, error: RuleError| -> RuleError {
        match received(stage) {
            Ok(input) => {
                RuleError::Stage { stage, kind: desc.stages[stage - 1].kind(), input, error: Box::new(error) }
            }
            Err(e) => e,
        }
    };
    // The count's first stage: where its dimension enters (0: the data, before every stage).
    let first = match carrier {
        ChainCount::Data => {
            let t = Operand::Data;
            if desc.data.sizes.is_empty() {
                return Err(fault(DynamicFault::Scalar { tensor: t }, Location::Shape(t)));
            }
            if row_elements(&desc.data.sizes) == 0 {
                return Err(fault(DynamicFault::EmptyRows { tensor: t }, Location::Size(t, 0)));
            }
            check_leading_stride(&desc.data, t)?;
            0
        }
        ChainCount::Indices { stage } => {
            let Some(StageDesc::Gather(g)) = stage.checked_sub(1).and_then(|i| desc.stages.get(i)) else {
                return Err(fault(DynamicFault::NoGatherAt { stage }, Location::Chain));
            };
            // The single gather's `_` rules (`gather_plan`) on the shape this stage receives
            // (packed: the chain's data layout plays no part in them).
            let data = TensorDecl::packed(desc.data.dtype, Dims::of(&received(stage)?));
            gather_plan(&g.desc(data, None)).map_err(|e| in_stage(stage, e))?;
            stage
        }
    };
    // Every later stage keeps the count leading, checked before the chain is planned (a
    // broken one would otherwise report a mismatch against the placeholder).
    for (i, stage) in desc.stages.iter().enumerate().skip(first) {
        let n = i + 1;
        let rank = received(n)?.len();
        let broken = match *stage {
            StageDesc::Slice(window) => check_window(&window, rank, Some(PLACEHOLDER)).err(),
            // The last stage (checked above): a single `_` scatter's rules on the updates it
            // receives, whose leading size is the count (its indices' leading size is the
            // count too).
            StageDesc::Scatter(s) => {
                let updates = match n {
                    1 => desc.data,
                    _ => TensorDecl::packed(desc.data.dtype, Dims::of(&received(n)?)),
                };
                let mut single = s.desc(updates);
                single.map.dynamic_leading = true;
                scatter_plan(&single).err()
            }
            StageDesc::Convert(c) => {
                let on_count = c.dim == 0 || c.dim.checked_add(rank as i64) == Some(0);
                (on_count && (c.scale.len() != 1 || c.offset.len() != 1))
                    .then(|| fault(DynamicFault::ConvertCount, Location::Convert(crate::ConvertKey::Dim)))
            }
            StageDesc::Gather(g) => {
                let normalize = |v: i64, rank: usize| if v < 0 { v + rank as i64 } else { v };
                // As for a single `_` gather: only an OpenVINO `batch_dims` in range is this
                // rule's to report (ONNX refuses the key, and a value out of range is its own
                // rule, reported when the chain is planned).
                let limit = rank.min(g.indices.sizes.len()) as i64;
                let batch_dims = g
                    .batch_dims
                    .filter(|&b| g.rules == GatherRules::OpenVino && b >= -limit && b <= limit)
                    .map_or(0, |b| normalize(b, g.indices.sizes.len()));
                if g.rules == GatherRules::DirectMl {
                    Some(fault(DynamicFault::DirectMl, Location::Chain))
                } else if batch_dims != 0 {
                    let b = batch_dims as usize;
                    Some(fault(DynamicFault::BatchDimsAfterCount { batch_dims: b }, Location::BatchDims))
                } else if g.form == GatherForm::Nd {
                    Some(fault(DynamicFault::NdAfterCount, Location::Shape(Operand::Indices)))
                } else if g.form == GatherForm::Elements && normalize(g.axis, rank) == 0 {
                    Some(fault(DynamicFault::ElementsAcrossCount, Location::Axis))
                } else if g.form == GatherForm::Elements && g.indices.strides.is_some() {
                    // Its indices lead with the count: read packed, as the carrier's are.
                    let t = Operand::Indices;
                    Some(fault(DynamicFault::Strides { tensor: t }, Location::Strides(t)))
                } else if normalize(g.axis, rank) == 0 {
                    Some(fault(DynamicFault::GatherAcrossCount, Location::Axis))
                } else {
                    None
                }
            }
        };
        if let Some(e) = broken {
            return Err(in_stage(n, e));
        }
    }
    let p = chain_at(desc, PLACEHOLDER)?;
    let second = chain_at(desc, SECOND)?;
    if p.scatter().is_some() {
        return check_scattering(desc, p, &second);
    }
    let walks = |p: &ChainPlan| match ChainKernelDesc::new(p) {
        Ok(k) => Ok(k.map(|k| (k.walk, ()))),
        Err(cause) => Err(fault(DynamicFault::Staged { cause }, Location::Chain)),
    };
    check_one_kernel(walks(&p)?, walks(&second)?, &p.output, p.output_type().size(), Location::Chain)?;
    Ok(p)
}

/// A `_` chain that ends in a scatter (whose own `_` rules held) runs one set of kernels for
/// every count: the stages before it as a `_` chain of their own (one fused kernel), and where
/// the scatter reads their rows in place (`ScatterRowsDesc::of_chain`,
/// `GatheredRows::of_chain`), it does so the same way at two counts.
fn check_scattering(desc: &ChainDesc, p: ChainPlan, second: &ChainPlan) -> Result<ChainPlan, RuleError> {
    if let Some(before) = desc.before_scatter() {
        check_chain(&before)?;
    }
    let fused = |p: &ChainPlan| {
        let rows = ScatterRowsDesc::of_chain(p).map(|k| k.specialized());
        (rows, crate::kernel::GatheredRows::of_chain(p).map(|f| f.kernel))
    };
    if fused(&p) != fused(second) {
        // Shown as what carries the count: the scatter's updates.
        let updates = p.scatter().map_or(p.output.sizes, |(_, s)| s.updates.sizes);
        return Err(fault(
            DynamicFault::Layout { output: updates, elem_bytes: p.output_type().size() },
            Location::Chain,
        ));
    }
    Ok(p)
}

/// The plan of a `_` chain for `count` leading steps (what `run` launches with). A count of 0
/// empties the result, the tensor carrying the count, every stage's output from there on and
/// the indices that lead with the count too (a later gather_elements', a final scatter's; the
/// plan is otherwise the plan for a count of 1); nothing is launched.
pub fn chain_at(desc: &ChainDesc, count: usize) -> Result<ChainPlan, RuleError> {
    let Some(carrier) = desc.dynamic_leading else { return desc.plan_sizes() };
    if let ChainCount::Indices { stage } = carrier {
        if !matches!(stage.checked_sub(1).and_then(|i| desc.stages.get(i)), Some(StageDesc::Gather(_))) {
            return Err(fault(DynamicFault::NoGatherAt { stage }, Location::Chain));
        }
    }
    if count == 0 {
        let mut p = chain_at(desc, 1)?;
        let empty = |t: &crate::TensorLayout| {
            let mut sizes = t.sizes;
            sizes.set(0, 0);
            crate::TensorLayout::packed(sizes)
        };
        let first = match carrier {
            ChainCount::Data => {
                p.data = empty(&p.data);
                1
            }
            ChainCount::Indices { stage } => {
                if let Some(StagePlan::Gather(g)) = p.stages.get_mut(stage - 1) {
                    g.indices = empty(&g.indices);
                }
                stage
            }
        };
        // From the count's stage on, every output is empty: those gathers read no index, and
        // the indices that lead with the count (the same list as for a count above 0) are empty.
        let led: Vec<usize> = indices_led_by_count(desc).into_iter().map(|(n, _)| n).collect();
        for (i, stage) in p.stages.iter_mut().enumerate().skip(first - 1) {
            match stage {
                StagePlan::Gather(g) => {
                    if led.contains(&(i + 1)) {
                        g.indices = empty(&g.indices);
                    }
                    g.output = empty(&g.output);
                }
                StagePlan::Slice(s) => s.output = empty(&s.output),
                StagePlan::Convert(c) => {
                    c.input = empty(&c.input);
                    c.output.sizes.set(0, 0);
                }
                // Its positions are the count's: it writes nothing.
                StagePlan::Scatter(s) => {
                    s.map.indices = empty(&s.map.indices);
                    s.map.output = empty(&s.map.output);
                    s.updates = empty(&s.updates);
                }
            }
        }
        if p.scatter().is_none() {
            p.output.sizes.set(0, 0); // a declared output keeps its strides
        }
        return Ok(p);
    }
    let mut d = desc.clone();
    d.dynamic_leading = None;
    let first = match carrier {
        ChainCount::Data => {
            d.data.sizes.set(0, count);
            0
        }
        ChainCount::Indices { stage } => stage,
    };
    output_at(&mut d.output, count);
    let led: Vec<usize> = indices_led_by_count(desc).into_iter().map(|(n, _)| n).collect();
    for (i, stage) in d.stages.to_mut().iter_mut().enumerate() {
        match stage {
            StageDesc::Gather(g) if i + 1 == first || led.contains(&(i + 1)) => g.indices.sizes.set(0, count),
            StageDesc::Scatter(s) if led.contains(&(i + 1)) => s.indices.sizes.set(0, count),
            StageDesc::Slice(SliceWindow::DirectMl { sizes, .. }) if i + 1 > first && !sizes.is_empty() => {
                sizes.set(0, count)
            }
            _ => {}
        }
    }
    let mut p = d.plan_sizes()?;
    p.dynamic_leading = true;
    Ok(p)
}

/// The kernels for two counts must be one row walk that differs only in the count.
fn check_one_kernel<X: PartialEq>(
    a: Option<(Walk, X)>,
    b: Option<(Walk, X)>,
    output: &crate::TensorLayout,
    elem_bytes: usize,
    at: Location,
) -> Result<(), RuleError> {
    let same = match (a, b) {
        // An empty output for every count: nothing is ever launched.
        (None, None) => true,
        (Some((a, x)), Some((b, y))) => x == y && a.counts_apart(&b, PLACEHOLDER, SECOND),
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(fault(DynamicFault::Layout { output: output.sizes, elem_bytes }, at))
    }
}
