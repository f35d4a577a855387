//! Applies the rules of `stridex-core` to a parsed descriptor and turns a broken rule into a
//! `syn::Error` on the token at fault.

use crate::parse::{
    ChainInput, ConvertInput, GatherInput, List, RangeItem, SliceInput, StageInput, TensorArg,
};
use proc_macro2::Span;
use stridex_core::dynamic::StageWindowKeys;
use stridex_core::ranges::RangeFault;
use stridex_core::SliceForm;
use stridex_core::{
    tensor, ChainCount, ChainDesc, Channels, ConvertKey, ConvertStage, Dims, DynamicFault, GatherDesc,
    GatherForm, GatherRules, GatherStage, Location, Operand, OutputDecl, RuleError, ScatterDesc,
    ScatterStage, SignedDims, SliceDesc, SliceWindow, StageDesc, TensorDecl, Window,
};

pub fn gather(input: &GatherInput) -> syn::Result<GatherDesc> {
    let desc = gather_desc(input)?;
    desc.plan().map_err(|e| Spans::Gather(input).error(e))?;
    Ok(desc)
}

/// A scatter's descriptor: its gather (the map), its updates and its policies.
pub fn scatter(input: &GatherInput) -> syn::Result<ScatterDesc> {
    let spans = Spans::Gather(input);
    let err = |e: RuleError| spans.error(e);
    let mut map = gather_desc(input)?;
    if input.rules.is_none() && input.form == GatherForm::Axis {
        // ScatterUpdate-3 is the one scatter along an axis.
        map.rules = GatherRules::OpenVino;
    }
    let updates = input.updates.as_ref().expect("the parser requires `updates`");
    let desc = ScatterDesc {
        map,
        updates: decl(updates, Operand::Updates).map_err(err)?,
        reduction: input.reduction.as_ref().map(|r| r.1),
        duplicates: input.duplicates.as_ref().map(|d| d.1),
        use_init_val: input.use_init_val.as_ref().map(|v| v.value),
    };
    let planned = desc.plan();
    // A rule of the count says more than where the updates write `_` (along axis 1 they would
    // write it second); the shapes' rules, less (they see the placeholder for a `_`).
    match planned {
        Err(e) if count_rule(&e) => Err(err(e)),
        planned => {
            updates_underscores(&updates.sizes, desc.map.dynamic_leading)?;
            planned.map(|_| desc).map_err(err)
        }
    }
}

/// Whether `e` is a rule of a `_` count (of the scatter, or of the gather that maps it).
fn count_rule(e: &RuleError) -> bool {
    match e {
        RuleError::Dynamic { .. } => true,
        RuleError::InScatter { rule, .. } => count_rule(rule),
        _ => false,
    }
}

/// The gather a descriptor states, before its rules run.
fn gather_desc(input: &GatherInput) -> syn::Result<GatherDesc> {
    let spans = Spans::Gather(input);
    let err = |e: RuleError| spans.error(e);
    underscores(&input.data.sizes, false, "gather!'s `data`")?;
    underscores(&input.indices.sizes, true, "")?;
    if let Some(o) = &input.output {
        output_underscores(o, !input.indices.sizes.underscores().is_empty())?;
    }
    let desc = GatherDesc {
        form: input.form,
        rules: input.rules.as_ref().map_or(GatherRules::Onnx, |r| r.1),
        data: decl(&input.data, Operand::Data).map_err(err)?,
        indices: decl(&input.indices, Operand::Indices).map_err(err)?,
        axis: input.axis.as_ref().map_or(0, |a| a.value),
        batch_dims: input.batch_dims.as_ref().map(|b| b.value),
        index_dims: input.index_dims.as_ref().map(|k| k.value),
        out_of_range: input.out_of_range.as_ref().map(|p| p.1),
        output: input.output.as_ref().map(output_decl).transpose().map_err(err)?,
        feature_level: input.feature_level.as_ref().map(|l| l.value),
        dynamic_leading: !input.indices.sizes.underscores().is_empty(),
    };
    Ok(desc)
}

pub fn slice(input: &SliceInput) -> syn::Result<SliceDesc> {
    let spans = Spans::Slice(input);
    let err = |e: RuleError| spans.error(e);
    underscores(&input.input.sizes, true, "")?;
    let dynamic = !input.input.sizes.underscores().is_empty();
    if let Some(o) = &input.output {
        output_underscores(o, dynamic)?;
    }
    if let Some(sizes) = &input.sizes {
        // A SLICE1 window's size of the `_` dimension is that dimension, whole: `_` too.
        underscores(sizes, dynamic, "a window over a fixed size")?;
        if dynamic && !sizes.items.is_empty() && sizes.underscores().first() != Some(&0) {
            return Err(err(RuleError::Dynamic {
                fault: stridex_core::DynamicFault::Window,
                at: Location::WindowAt(Window::Sizes, 0),
            }));
        }
    }
    if let Some(RangeItem::Range(first)) =
        input.ranges.as_ref().filter(|_| dynamic).and_then(|r| r.items.first()).map(|l| l.value)
    {
        stridex_core::dynamic::check_leading_range(&first).map_err(err)?;
    }
    // The input first: a rank over 8 is reported as such, not as a window too long.
    let tensor = decl(&input.input, Operand::Input).map_err(err)?;
    let window =
        slice_window(input, input.input.sizes.items.len(), &input.input.sizes.values()).map_err(err)?;
    let output = input.output.as_ref().map(output_decl).transpose().map_err(err)?;
    let desc = SliceDesc {
        input: tensor,
        window,
        output,
        feature_level: input.feature_level.as_ref().map(|l| l.value),
        dynamic_leading: dynamic,
    };
    desc.plan().map_err(err)?;
    Ok(desc)
}

/// A slice's window; `rank` is its input's (for a list longer than any tensor's rank), and
/// `ranges` are lowered against `sizes` (a stage's: the shape it receives).
fn slice_window(input: &SliceInput, rank: usize, sizes: &[usize]) -> Result<SliceWindow, RuleError> {
    if let Some(r) = &input.ranges {
        let mut ranges = Vec::with_capacity(r.items.len());
        for (dim, item) in r.items.iter().enumerate() {
            match item.value {
                RangeItem::Range(range) => ranges.push(range),
                RangeItem::Index(index) => {
                    return Err(RuleError::Range { dim, fault: RangeFault::SingleIndex { index } })
                }
            }
        }
        let (offsets, sizes, strides) = stridex_core::ranges::window(sizes, &ranges)?;
        return Ok(SliceWindow::DirectMl { offsets, sizes, strides });
    }
    Ok(match input.form() {
        SliceForm::DirectMl => SliceWindow::DirectMl {
            offsets: window_dims(req(&input.offsets), Window::Offsets, rank)?,
            sizes: window_dims(req(&input.sizes), Window::Sizes, rank)?,
            strides: window_signed(req(&input.strides), Window::Strides, rank)?,
        },
        SliceForm::Onnx => {
            let opt = |l: &Option<List<i64>>, w| l.as_ref().map(|l| window_signed(l, w, rank)).transpose();
            SliceWindow::Onnx {
                starts: window_signed(req(&input.starts), Window::Starts, rank)?,
                ends: window_signed(req(&input.ends), Window::Ends, rank)?,
                axes: opt(&input.axes, Window::Axes)?,
                steps: opt(&input.steps, Window::Steps)?,
            }
        }
    })
}

/// A chain: each stage's keys read into a stage descriptor, then every stage checked on the
/// shape it receives. A stage's broken rule points at the stage's token at fault (its keyword
/// where the fault is its input) and names the stage and that shape. Stages depend on each
/// other, so checking stops at the first one that breaks a rule.
pub fn chain(input: &ChainInput) -> syn::Result<ChainDesc> {
    let chain_spans = Spans::Chain(input);
    // One `_` count: the data's leading size, or one gather's indices'.
    underscores(&input.data.sizes, true, "")?;
    let mut count =
        (!input.data.sizes.underscores().is_empty()).then_some((ChainCount::Data, &input.data.sizes));
    for (i, stage) in input.stages.iter().enumerate() {
        match stage {
            StageInput::Gather { input: g, .. } => {
                underscores(&g.indices.sizes, true, "")?;
                // Only the leading size may be `_` (checked above), and indices of rank 0 have
                // no leading size for these rules (their own rule reports them).
                let Some(first) = g.indices.sizes.items.first() else { continue };
                let underscore = !g.indices.sizes.underscores().is_empty();
                let counted = count.is_some();
                if let Some(e) = stridex_core::dynamic::stage_indices_fault(g.form, counted, underscore) {
                    return Err(syn::Error::new_spanned(&first.tokens, e.to_string()));
                }
                if underscore && !counted {
                    count = Some((ChainCount::Indices { stage: i + 1 }, &g.indices.sizes));
                }
            }
            StageInput::Slice { input: s, .. } => {
                // A stage's window never writes `_`: after the count it is taken by ranges.
                if let Some(k) = s.sizes.as_ref().and_then(|z| z.underscores().first().copied()) {
                    let e = RuleError::Dynamic { fault: DynamicFault::StageWindow, at: Location::Chain };
                    let sizes = s.sizes.as_ref().expect("an underscore in the sizes");
                    return Err(syn::Error::new_spanned(&sizes.items[k].tokens, e.to_string()));
                }
            }
            StageInput::Scatter { input: g, .. } => {
                underscores(&g.data.sizes, false, "a scatter stage's `into`")?;
                // Its positions are the updates' leading rows: with the chain's count, `_`.
                let message = |counted| DynamicFault::ScatterStageCount { counted }.to_string();
                led_by_count(&g.indices.sizes, count.is_some(), &message(false), &message(true))?;
            }
            StageInput::Convert { .. } => {}
        }
    }
    if let Some(o) = &input.output {
        output_underscores(o, count.is_some())?;
    }
    let dynamic_leading = count.map(|(c, _)| c);
    let data = decl(&input.data, Operand::Data).map_err(|e| chain_spans.error(e))?;
    let mut stages = Vec::with_capacity(input.stages.len());
    for stage in &input.stages {
        stages.push(match stage {
            StageInput::Gather { input: g, .. } => {
                let err = |e: RuleError| Spans::Gather(g).error(e);
                StageDesc::Gather(GatherStage {
                    form: g.form,
                    rules: g.rules.as_ref().map_or(GatherRules::Onnx, |r| r.1),
                    indices: decl(&g.indices, Operand::Indices).map_err(err)?,
                    axis: g.axis.as_ref().map_or(0, |a| a.value),
                    batch_dims: g.batch_dims.as_ref().map(|b| b.value),
                    index_dims: g.index_dims.as_ref().map(|k| k.value),
                    out_of_range: g.out_of_range.as_ref().map(|p| p.1),
                })
            }
            StageInput::Slice { input: s, .. } => {
                let n = stages.len() + 1;
                let keys = match &s.ranges {
                    Some(r) => StageWindowKeys::Ranges {
                        first: match r.items.first().map(|l| l.value) {
                            Some(RangeItem::Range(first)) => Some(first),
                            _ => None,
                        },
                    },
                    None => StageWindowKeys::Keys(s.form()),
                };
                let so_far = ChainDesc { data, stages: stages.clone().into(), output: None, dynamic_leading };
                let window = match stridex_core::dynamic::slice_stage_shape(&so_far, n, keys) {
                    Err(e) => return Err(chain_error(input, e)),
                    // Window keys: their mistakes are the stage's own, on its keys.
                    Ok(None) => {
                        slice_window(s, stridex_core::MAX_RANK, &[]).map_err(|e| Spans::Slice(s).error(e))?
                    }
                    Ok(Some(received)) => slice_window(s, stridex_core::MAX_RANK, &received)
                        .map_err(|error| chain_error(input, stage_error(input, n, received, error)))?,
                };
                StageDesc::Slice(window)
            }
            StageInput::Convert { input: c, .. } => StageDesc::Convert(convert_stage(c)?),
            StageInput::Scatter { input: g, .. } => {
                let err = |e: RuleError| Spans::Gather(g).error(e);
                StageDesc::Scatter(ScatterStage {
                    form: g.form,
                    // ScatterUpdate-3 is the one scatter along an axis (as `scatter!` reads it).
                    rules: g.rules.as_ref().map_or(
                        if g.form == GatherForm::Axis { GatherRules::OpenVino } else { GatherRules::Onnx },
                        |r| r.1,
                    ),
                    into: decl(&g.data, Operand::Data).map_err(err)?,
                    indices: decl(&g.indices, Operand::Indices).map_err(err)?,
                    axis: g.axis.as_ref().map_or(0, |a| a.value),
                    reduction: g.reduction.as_ref().map(|r| r.1),
                    duplicates: g.duplicates.as_ref().map(|d| d.1),
                    use_init_val: g.use_init_val.as_ref().map(|v| v.value),
                    out_of_range: g.out_of_range.as_ref().map(|p| p.1),
                })
            }
        });
    }
    let output = input.output.as_ref().map(output_decl).transpose().map_err(|e| chain_spans.error(e))?;
    let desc = ChainDesc { data, stages: stages.into(), output, dynamic_leading };
    desc.plan().map_err(|e| match (&e, count) {
        // A chain that would run stage by stage: on the stage that keeps it from fusing.
        (RuleError::Dynamic { fault: DynamicFault::Staged { cause }, .. }, _) => {
            let at = input
                .stages
                .get(cause.stage().wrapping_sub(1))
                .map_or(Span::call_site(), |s| s.keyword().span());
            syn::Error::new(at, e.to_string())
        }
        // What concerns the count as a whole points at its `_`.
        (RuleError::Dynamic { at: Location::Chain, .. }, Some((_, sizes))) => {
            syn::Error::new_spanned(&sizes.items[0].tokens, e.to_string())
        }
        _ => chain_error(input, e),
    })?;
    Ok(desc)
}

/// `error` as broken by stage `stage` (1-based), on the shape it received.
fn stage_error(input: &ChainInput, stage: usize, mut received: Vec<usize>, error: RuleError) -> RuleError {
    let counted = !input.data.sizes.underscores().is_empty()
        || input.stages[..stage - 1].iter().any(|s| match s {
            StageInput::Gather { input: g, .. } => !g.indices.sizes.underscores().is_empty(),
            StageInput::Slice { .. } | StageInput::Convert { .. } | StageInput::Scatter { .. } => false,
        });
    if counted && !received.is_empty() {
        received[0] = stridex_core::dynamic::COUNT_SHOWN;
    }
    let kind = match input.stages[stage - 1] {
        StageInput::Gather { .. } => "gather",
        StageInput::Slice { .. } => "slice",
        StageInput::Convert { .. } => "convert",
        StageInput::Scatter { .. } => "scatter",
    };
    RuleError::Stage { stage, kind, input: received, error: Box::new(error) }
}

/// A chain's broken rule on the token at fault.
fn chain_error(input: &ChainInput, e: RuleError) -> syn::Error {
    let message = e.to_string();
    let at = |tokens: Option<proc_macro2::TokenStream>, fallback: Span| match tokens {
        Some(t) => syn::Error::new_spanned(t, &message),
        None => syn::Error::new(fallback, &message),
    };
    match &e {
        RuleError::Stage { stage, error, .. } => {
            let s = &input.stages[stage - 1];
            let location = error.location();
            // The result's layout is the chain's `output`, not the stage's.
            let spans = if location.operand() == Some(Operand::Output) {
                Spans::Chain(input)
            } else {
                match s {
                    StageInput::Gather { input, .. } | StageInput::Scatter { input, .. } => {
                        Spans::Gather(input)
                    }
                    StageInput::Slice { input, .. } => Spans::Slice(input),
                    StageInput::Convert { input: c, .. } => Spans::Convert(c, input),
                }
            };
            at(spans.tokens(location), s.keyword().span())
        }
        RuleError::ConvertNotLast { stage, .. } | RuleError::ScatterNotLast { stage, .. } => {
            at(None, input.stages[stage - 1].keyword().span())
        }
        RuleError::ChainGathers { max, .. } => {
            let extra = input.stages.iter().filter(|s| matches!(s, StageInput::Gather { .. })).nth(*max);
            at(None, extra.map_or(Span::call_site(), |s| s.keyword().span()))
        }
        RuleError::ChainLength { max, .. } => {
            at(None, input.stages.get(*max).map_or(input.data.key.span(), |s| s.keyword().span()))
        }
        _ => Spans::Chain(input).error(e),
    }
}

/// `_` (a size known at run time) stands only for the leading size of a gather's or scatter's
/// `indices` (a scatter's `updates`), a slice's `input` or a chain's `data` (`leading`: this list may lead with one); `place` names a list where it
/// may not stand at all.
fn underscores(list: &List<usize>, leading: bool, place: &str) -> syn::Result<()> {
    let Some(&i) = list.underscores().iter().find(|&&i| !(leading && i == 0)) else { return Ok(()) };
    let message = if leading {
        format!("only the leading size may be `_` (known at run time); size {i} is one of the kernel's constants: write it")
    } else {
        format!(
            "`_` (a size known at run time) is not taken in {place}: it stands only for the leading size of a gather's or a scatter's `indices` (and then a scatter's `updates`), a slice's `input` or a chain's `data` (and, in `slice!`, that dimension's SLICE1 window size); write the size"
        )
    };
    Err(syn::Error::new_spanned(&list.items[i].tokens, message))
}

/// A scatter's `updates` sizes: with a `_` count on the indices (`dynamic`) they lead with it.
fn updates_underscores(sizes: &List<usize>, dynamic: bool) -> syn::Result<()> {
    led_by_count(
        sizes,
        dynamic,
        "`_` in a scatter's `updates` is its `_` count, the indices' leading size, and these indices have none: write the size, or write `_` as the indices' leading size too (`indices: i32[_, ..]`)",
        "the updates' leading size is the indices' `_` count, known at run time: write `_` there (`updates: f32[_, ..]`)",
    )
}

/// An `output`'s sizes: with a `_` count (`dynamic`) the output leads with it.
fn output_underscores(output: &TensorArg, dynamic: bool) -> syn::Result<()> {
    led_by_count(
        &output.sizes,
        dynamic,
        "`_` in an `output` is the op's `_` count, and this op has none (a leading `_` in a gather's `indices`, a slice's `input` or a chain's `data`): write the size",
        "the output's leading size is the `_` count, known at run time: write `_` there (`output: [_, ..]`), or leave `output` out (the result is then packed, `[count, ..]`)",
    )
}

/// Sizes that lead with the op's `_` count when it has one (`dynamic`): then their leading size
/// is `_` and no other is (`not_first` otherwise); without one, no size is `_` (`no_count`).
fn led_by_count(sizes: &List<usize>, dynamic: bool, no_count: &str, not_first: &str) -> syn::Result<()> {
    if !dynamic {
        return match sizes.underscores().first() {
            Some(&i) => Err(syn::Error::new_spanned(&sizes.items[i].tokens, no_count)),
            None => Ok(()),
        };
    }
    underscores(sizes, true, "")?;
    match sizes.items.first() {
        Some(first) if sizes.underscores().first() != Some(&0) => {
            Err(syn::Error::new_spanned(&first.tokens, not_first))
        }
        _ => Ok(()),
    }
}

/// A `convert` stage's keys as its descriptor: `scale` 1 and `offset` 0 when left out; `dim`
/// is needed when a list gives one value per channel.
fn convert_stage(c: &ConvertInput) -> syn::Result<ConvertStage> {
    let values = |l: &Option<List<f32>>, default: f32| l.as_ref().map_or(vec![default], List::values);
    if c.dim.is_none() {
        let per_channel = [&c.scale, &c.offset].into_iter().flatten().find(|l| l.items.len() > 1);
        if let Some(list) = per_channel {
            return Err(syn::Error::new(
                list.span,
                format!(
                    "convert: {} values are one per channel: name the channel dimension with `dim: ..` (1 for NCHW, -1 for NHWC), or give one value for every channel",
                    list.items.len()
                ),
            ));
        }
    }
    Ok(ConvertStage {
        to: c.to.1,
        dim: c.dim.as_ref().map_or(0, |d| d.value),
        scale: Channels::of(&values(&c.scale, 1.0)),
        offset: Channels::of(&values(&c.offset, 0.0)),
    })
}

fn req<T>(l: &Option<T>) -> &T {
    l.as_ref().expect("parse checked that the window keys are present")
}

fn decl(t: &TensorArg, which: Operand) -> Result<TensorDecl, RuleError> {
    Ok(TensorDecl {
        dtype: t.dtype.as_ref().expect("parse requires an element type on inputs").1,
        sizes: tensor::dims(which, &t.sizes.values())?,
        strides: t
            .strides
            .as_ref()
            .map(|s| tensor::strides(which, t.sizes.items.len(), &s.values()))
            .transpose()?,
    })
}

fn output_decl(t: &TensorArg) -> Result<OutputDecl, RuleError> {
    Ok(OutputDecl {
        dtype: t.dtype.as_ref().map(|d| d.1),
        sizes: tensor::dims(Operand::Output, &t.sizes.values())?,
        strides: t
            .strides
            .as_ref()
            .map(|s| tensor::strides(Operand::Output, t.sizes.items.len(), &s.values()))
            .transpose()?,
    })
}

fn too_long(window: Window, len: usize, rank: usize) -> RuleError {
    RuleError::WindowLen { window, len, expected: rank, against: "the input's rank" }
}

fn window_dims(l: &List<usize>, w: Window, rank: usize) -> Result<Dims, RuleError> {
    Dims::new(&l.values()).ok_or_else(|| too_long(w, l.items.len(), rank))
}

fn window_signed(l: &List<i64>, w: Window, rank: usize) -> Result<SignedDims, RuleError> {
    SignedDims::new(&l.values()).ok_or_else(|| too_long(w, l.items.len(), rank))
}

/// Maps a rule's [`Location`] to the span of the token that breaks it.
enum Spans<'a> {
    Gather(&'a GatherInput),
    Slice(&'a SliceInput),
    /// A chain's own keys: its data and output.
    Chain(&'a ChainInput),
    /// A `convert` stage's keys, in its chain (whose data and output it names too).
    Convert(&'a ConvertInput, &'a ChainInput),
}

impl Spans<'_> {
    fn error(&self, e: RuleError) -> syn::Error {
        let message = e.to_string();
        match self.tokens(e.location()) {
            Some(tokens) => syn::Error::new_spanned(tokens, message),
            None => syn::Error::new(Span::call_site(), message),
        }
    }

    fn tensor(&self, t: Operand) -> Option<&TensorArg> {
        match (self, t) {
            (Spans::Gather(g), Operand::Data) => Some(&g.data),
            (Spans::Gather(g), Operand::Indices) => Some(&g.indices),
            (Spans::Gather(g), Operand::Output) => g.output.as_ref(),
            (Spans::Gather(g), Operand::Updates) => g.updates.as_ref(),
            // A slice's input plays the data's part in the shared rules.
            (Spans::Slice(s), Operand::Input | Operand::Data) => Some(&s.input),
            (Spans::Slice(s), Operand::Output) => s.output.as_ref(),
            (Spans::Chain(c), Operand::Data | Operand::Input) => Some(&c.data),
            (Spans::Chain(c), Operand::Output) => c.output.as_ref(),
            _ => None,
        }
    }

    fn tokens(&self, loc: Location) -> Option<proc_macro2::TokenStream> {
        use quote::ToTokens;
        if let Spans::Convert(c, chain) = self {
            let list = |key: ConvertKey| match key {
                ConvertKey::Scale => c.scale.as_ref(),
                ConvertKey::Offset => c.offset.as_ref(),
                _ => None,
            };
            return match loc {
                Location::Convert(ConvertKey::To) => Some(c.to.0.to_token_stream()),
                Location::Convert(ConvertKey::Dim) => c.dim.as_ref().map(|d| d.tokens.clone()),
                Location::Convert(key) => list(key).map(|l| {
                    let mut ts = proc_macro2::TokenStream::new();
                    ts.extend([proc_macro2::TokenTree::Ident(proc_macro2::Ident::new("x", l.span))]);
                    ts
                }),
                Location::ConvertAt(key, i) => {
                    list(key).and_then(|l| l.items.get(i)).map(|l| l.tokens.clone())
                }
                _ => Spans::Chain(chain).tokens(loc),
            };
        }
        let span_of = |s: Span| {
            let mut ts = proc_macro2::TokenStream::new();
            ts.extend([proc_macro2::TokenTree::Ident(proc_macro2::Ident::new("x", s))]);
            ts
        };
        let shape = |t: Operand| self.tensor(t).map(|a| span_of(a.sizes.span));
        match loc {
            Location::DType(t) => {
                let arg = self.tensor(t)?;
                arg.dtype.as_ref().map(|d| d.0.to_token_stream()).or_else(|| Some(arg.key.to_token_stream()))
            }
            Location::Shape(t) => shape(t),
            Location::Size(t, i) => {
                let arg = self.tensor(t)?;
                arg.sizes.items.get(i).map(|l| l.tokens.clone()).or_else(|| shape(t))
            }
            Location::Strides(t) => {
                let arg = self.tensor(t)?;
                arg.strides.as_ref().map(|s| span_of(s.span)).or_else(|| shape(t))
            }
            Location::Axis => match self {
                Spans::Gather(g) => g.axis.as_ref().map(|a| a.tokens.clone()),
                _ => None,
            },
            Location::BatchDims => match self {
                Spans::Gather(g) => g.batch_dims.as_ref().map(|a| a.tokens.clone()),
                _ => None,
            },
            Location::IndexDims => match self {
                Spans::Gather(g) => {
                    g.index_dims.as_ref().map(|a| a.tokens.clone()).or_else(|| shape(Operand::Indices))
                }
                _ => None,
            },
            Location::Chain => None,
            Location::Ranges => match self {
                Spans::Slice(s) => s.ranges.as_ref().map(|r| {
                    let mut t = r.s.to_token_stream();
                    t.extend(span_of(r.span));
                    t
                }),
                _ => None,
            },
            Location::RangeAt(i) => match self {
                Spans::Slice(s) => s.ranges.as_ref().and_then(|r| r.items.get(i)).map(|l| l.tokens.clone()),
                _ => None,
            },
            Location::FeatureLevel => match self {
                Spans::Gather(g) => g.feature_level.as_ref().map(|l| l.tokens.clone()),
                Spans::Slice(s) => s.feature_level.as_ref().map(|l| l.tokens.clone()),
                Spans::Chain(_) | Spans::Convert(..) => None,
            },
            Location::Convert(_) | Location::ConvertAt(..) => None,
            Location::Rules => match self {
                Spans::Gather(g) => g.rules.as_ref().map(|r| r.0.to_token_stream()),
                Spans::Slice(s) => s.rules.as_ref().map(|r| r.0.to_token_stream()),
                _ => None,
            },
            Location::Reduction => match self {
                Spans::Gather(g) => g.reduction.as_ref().map(|r| r.0.to_token_stream()),
                _ => None,
            },
            Location::UseInitVal => match self {
                Spans::Gather(g) => g.use_init_val.as_ref().map(|v| v.tokens.clone()),
                _ => None,
            },
            Location::Duplicates => match self {
                Spans::Gather(g) => g.duplicates.as_ref().map(|d| d.0.to_token_stream()),
                _ => None,
            },
            Location::OutOfRange => match self {
                Spans::Gather(g) => g.out_of_range.as_ref().map(|p| p.0.to_token_stream()),
                _ => None,
            },
            Location::Window(w) => self.window(w).map(span_of),
            Location::WindowAt(w, i) => self.window_item(w, i).or_else(|| self.window(w).map(span_of)),
        }
    }

    fn window(&self, w: Window) -> Option<Span> {
        let Spans::Slice(s) = self else { return None };
        match w {
            Window::Offsets => s.offsets.as_ref().map(|l| l.span),
            Window::Sizes => s.sizes.as_ref().map(|l| l.span),
            Window::Strides => s.strides.as_ref().map(|l| l.span),
            Window::Starts => s.starts.as_ref().map(|l| l.span),
            Window::Ends => s.ends.as_ref().map(|l| l.span),
            Window::Axes => s.axes.as_ref().map(|l| l.span),
            Window::Steps => s.steps.as_ref().map(|l| l.span),
        }
    }

    fn window_item(&self, w: Window, i: usize) -> Option<proc_macro2::TokenStream> {
        let Spans::Slice(s) = self else { return None };
        match w {
            Window::Offsets => s.offsets.as_ref().and_then(|l| l.items.get(i)).map(|l| l.tokens.clone()),
            Window::Sizes => s.sizes.as_ref().and_then(|l| l.items.get(i)).map(|l| l.tokens.clone()),
            Window::Strides => s.strides.as_ref().and_then(|l| l.items.get(i)).map(|l| l.tokens.clone()),
            Window::Starts => s.starts.as_ref().and_then(|l| l.items.get(i)).map(|l| l.tokens.clone()),
            Window::Ends => s.ends.as_ref().and_then(|l| l.items.get(i)).map(|l| l.tokens.clone()),
            Window::Axes => s.axes.as_ref().and_then(|l| l.items.get(i)).map(|l| l.tokens.clone()),
            Window::Steps => s.steps.as_ref().and_then(|l| l.items.get(i)).map(|l| l.tokens.clone()),
        }
    }
}
