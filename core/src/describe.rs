//! A text a person reads: the rule set, every tensor's sizes, strides and minimum buffer, the
//! inferred output, the out-of-range policy, and for small outputs a grid of which input
//! element each output element reads (as the DirectML pages print their examples).

use crate::chain::{ChainDesc, ChainPlan, StagePlan};
use crate::dims::list;
use crate::dtype::DType;
use crate::gather::{GatherDesc, GatherPlan};
use crate::kernel::ChainKernelDesc;
use crate::layout::{next_coords, LayoutKind, TensorLayout};
use crate::rules::{GatherForm, OutOfRange, SliceForm};
use crate::scatter::{ScatterDesc, ScatterPlan};
use crate::slice::{SliceDesc, SlicePlan};
use std::fmt::Write;

/// Outputs with at most this many elements get a grid.
pub const GRID_ELEMENTS: usize = 64;

fn tensor(name: &str, dtype: DType, layout: &TensorLayout, note: &str) -> String {
    let elements = layout.min_buffer_len().unwrap_or(0);
    let kind = match layout.kind() {
        LayoutKind::Packed => "packed",
        LayoutKind::Permuted => "permuted",
        LayoutKind::Broadcast => "broadcast",
        LayoutKind::Padded => "padded",
        LayoutKind::Overlapping => "overlapping",
        LayoutKind::Interleaved => "interleaved",
    };
    format!(
        "  {name:<8} {dtype}{}  strides {}  {kind}{note}; a buffer of at least {elements} element(s) ({} bytes)\n",
        list(&layout.sizes),
        list(&layout.strides),
        elements * dtype.size()
    )
}

/// The policy's line; `axis_size` is `None` when indices name axes of different sizes (GatherND).
fn policy(p: OutOfRange, defaulted: bool, axis_size: Option<usize>) -> String {
    let what = match p {
        OutOfRange::Error => "`run` returns Err naming the first such index",
        OutOfRange::Zero => "its output elements read as zero",
        OutOfRange::Clamp => "it is clamped into [0, s-1] and that element is read",
        OutOfRange::Skip => "its update is dropped (a negative index too)",
    };
    let range = match axis_size {
        Some(s) => format!("[-{s}, {}] (s = {s})", s as i64 - 1),
        None => "[-s, s-1] (s: the size of the data axis it names)".into(),
    };
    format!(
        "  out_of_range: {p}{}: an index outside {range}: {what}\n",
        if defaulted { " (the rule set's default)" } else { "" },
    )
}

/// Nested brackets over `shape`, one entry per element, innermost dimension on one line.
fn grid(shape: &[usize], entry: impl Fn(&[usize]) -> String) -> String {
    if shape.contains(&0) {
        return "  (empty: no element is read)\n".into();
    }
    // Saturating: an empty tensor's other sizes are not bounded by the size rules.
    let n = shape.iter().fold(1usize, |a, &d| a.saturating_mul(d));
    if n > GRID_ELEMENTS {
        return format!("  ({n} output elements: the grid is shown up to {GRID_ELEMENTS})\n");
    }
    if shape.is_empty() {
        return format!("  {}\n", entry(&[]));
    }
    let r = shape.len();
    let mut out = String::new();
    let mut c = vec![0; r];
    loop {
        // Open the brackets of every dimension whose coordinate is at its start.
        let opening = (0..r).rev().take_while(|&d| c[d] == 0).count();
        if c[r - 1] == 0 {
            out += "  ";
            out += &" ".repeat(r - opening);
            out += &"[".repeat(opening);
        }
        out += &entry(&c);
        let closing = (0..r).rev().take_while(|&d| c[d] + 1 == shape[d]).count();
        if closing > 0 {
            out += &"]".repeat(closing);
            if closing < r {
                out.push(',');
            }
            out.push('\n');
        } else {
            out += ", ";
        }
        if !next_coords(&mut c, shape) {
            return out;
        }
    }
}

/// The coordinates of `offset` in `layout` (the first, row-major, for a broadcast layout).
fn coords_of(layout: &TensorLayout, offset: usize) -> Vec<usize> {
    let mut c = vec![0; layout.rank()];
    loop {
        if layout.offset(&c) == offset {
            return c;
        }
        if !next_coords(&mut c, &layout.sizes) {
            return vec![];
        }
    }
}

/// A declaration's sizes as its descriptor writes them where the leading one is the `_` count:
/// `[_, 8, 128]`.
fn led_by_count(decl: &crate::TensorDecl) -> String {
    let mut shown: Vec<String> = decl.sizes.iter().map(ToString::to_string).collect();
    if let Some(first) = shown.first_mut() {
        *first = "_".into();
    }
    format!("[{}]", shown.join(", "))
}

/// What a `_` leading size means, before the figures (which are for the placeholder count).
fn dynamic_note(tensor: &str, possessive: &str, decl: &crate::TensorDecl) -> String {
    let step = crate::dynamic::row_step(decl);
    let steps = match decl.strides {
        Some(_) => format!("in steps of its leading stride, {step} element(s)"),
        None => format!("in rows of {step} element(s)"),
    };
    format!(
        "  {tensor} {}: the leading size `_` is the count, read at run time from the {possessive} length {steps}; one kernel serves every count (figures below for a count of {})\n",
        led_by_count(decl),
        crate::dynamic::PLACEHOLDER
    )
}

fn coords_text(c: &[usize]) -> String {
    c.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

pub fn gather(desc: &GatherDesc, p: &GatherPlan) -> String {
    let name = match p.form {
        GatherForm::Axis => "gather",
        GatherForm::Elements => "gather_elements",
        GatherForm::Nd => "gather_nd",
    };
    let mut s = format!("{name}: {} (rules: {})\n", p.rules.form_op_name(p.form), p.rules.name());
    if p.dynamic_leading {
        s += &dynamic_note("indices", "indices'", &desc.indices);
    }
    s += &tensor("data", p.data_type, &p.data, "");
    s += &tensor("indices", p.index_type.dtype(), &p.indices, "");
    let (mut params, sizes) = index_params(p);
    if let Some(b) = desc.batch_dims {
        let _ = write!(params, ", batch_dims {b}");
    }
    if let Some(k) = desc.index_dims {
        let _ = write!(params, ", index_dims {k}");
    }
    if let Some(l) = desc.feature_level {
        let _ = write!(params, ", feature level {l}");
    }
    s += &params;
    s.push('\n');
    let note = if desc.output.is_some() { ", as declared" } else { ", inferred" };
    s += &tensor("output", p.data_type, &p.output, note);
    let one_size = sizes.iter().all(|&n| n == sizes[0]).then_some(sizes[0]);
    s += &policy(p.out_of_range, desc.out_of_range.is_none(), one_size);
    s += "  which data element each output element reads (i[..]: the value of indices[..]):\n";
    s += &grid(&p.output.sizes, |c| {
        let mut data = vec![String::from("0"); p.data.rank()];
        let mut index_offset = 0;
        for d in &p.dims {
            index_offset += c[d.output_dim] * d.index_stride;
            if let Some(i) = d.data_dim {
                data[i] = c[d.output_dim].to_string();
            }
        }
        for a in p.index_axes() {
            data[a.dim] = format!("i[{}]", coords_text(&coords_of(&p.indices, index_offset + a.offset)));
        }
        format!("data[{}]", data.join(", "))
    });
    s
}

/// What the indices name (one data axis, or a GatherND tuple's axes), and those axes' sizes.
fn index_params(p: &GatherPlan) -> (String, Vec<usize>) {
    let sizes: Vec<usize> = p.index_axes().map(|a| a.size).collect();
    let params = match p.form {
        GatherForm::Nd => format!(
            "  tuples of {} coordinate(s) into data axes {}..{} (sizes {})",
            p.components,
            p.axis,
            p.axis + p.components,
            list(&sizes)
        ),
        _ => format!("  axis {} (size {})", p.axis, sizes[0]),
    };
    (params, sizes)
}

pub fn scatter(desc: &ScatterDesc, p: &ScatterPlan) -> String {
    let mut s = format!("{} (rules: {})\n", p.op, p.map.rules.name());
    if desc.map.dynamic_leading {
        s += &dynamic_note("indices", "indices'", &desc.map.indices);
        s += "  updates: their leading size is the same count\n";
    }
    s += &tensor("data", p.data_type(), &p.map.data, "");
    s += &tensor("indices", p.map.index_type.dtype(), &p.map.indices, "");
    s += &tensor("updates", p.data_type(), &p.updates, "");
    s += &index_params(&p.map).0;
    s.push('\n');
    let _ = writeln!(
        s,
        "  reduction {}{}, duplicates {}, out_of_range {}",
        p.reduction,
        if p.use_init_val { "" } else { " of the updates alone (use_init_val false)" },
        p.duplicates.name(),
        p.out_of_range,
    );
    let _ = writeln!(
        s,
        "  each index position writes a run of {} element(s); `run` returns the data's sizes, packed",
        p.run_len()
    );
    s
}

pub fn slice(desc: &SliceDesc, p: &SlicePlan) -> String {
    let form = desc.window.form();
    let mut s = format!(
        "slice: {} (rules: {})\n",
        crate::RuleSet::Slice(form).op_name(),
        match form {
            SliceForm::DirectMl => "directml",
            SliceForm::Onnx => "onnx",
        }
    );
    if p.dynamic_leading {
        s += &dynamic_note("input", "input's", &desc.input);
    }
    s += &tensor("input", p.data_type, &p.input, "");
    if let Some((offsets, sizes, strides)) = &p.window {
        let _ = writeln!(
            s,
            "  window offsets {}, sizes {}, strides {}{}",
            list(offsets),
            list(sizes),
            list(strides),
            if form == SliceForm::Onnx { " (ONNX starts/ends/axes/steps, as a SLICE1 window)" } else { "" }
        );
    }
    if let Some(l) = desc.feature_level {
        let _ = writeln!(s, "  feature level {l}");
    }
    let note = if desc.output.is_some() { ", as declared" } else { ", inferred" };
    s += &tensor("output", p.data_type, &p.output, note);
    s += "  which input element each output element reads:\n";
    match &p.window {
        Some((offsets, sizes, strides)) => {
            s += &grid(&p.output.sizes, |c| {
                let at: Vec<String> = (0..c.len())
                    .map(|i| {
                        let start = offsets[i] as i64 + if strides[i] < 0 { sizes[i] as i64 - 1 } else { 0 };
                        (start + strides[i] * c[i] as i64).to_string()
                    })
                    .collect();
                format!("input[{}]", at.join(", "))
            })
        }
        None => s += "  (empty: no element is read)\n",
    }
    s
}

pub fn chain(desc: &ChainDesc, p: &ChainPlan) -> String {
    let mut s = format!("chain: {} stage(s)\n", p.stages.len());
    match desc.dynamic_leading {
        Some(crate::ChainCount::Data) => s += &dynamic_note("data", "data's", &desc.data),
        Some(crate::ChainCount::Indices { stage }) => {
            if let Some(crate::chain::StageDesc::Gather(g)) = desc.stages.get(stage - 1) {
                s += &dynamic_note(&format!("stage {stage}'s indices"), "indices'", &g.indices);
            }
        }
        None => {}
    }
    for (stage, indices) in crate::dynamic::indices_led_by_count(desc) {
        let _ = writeln!(
            s,
            "  stage {stage}'s indices {}: their leading size is the same count",
            led_by_count(indices)
        );
    }
    s += &tensor("data", p.data_type, &p.data, "");
    for (i, stage) in p.stages.iter().enumerate() {
        let what = match stage {
            StagePlan::Gather(g) => format!(
                "gather ({}, axis {}, indices {}{}, out_of_range {})",
                g.rules.name(),
                g.axis,
                g.index_type.dtype(),
                list(&g.indices.sizes),
                g.out_of_range
            ),
            StagePlan::Slice(sl) => match &sl.window {
                Some((o, z, st)) => {
                    format!("slice (window offsets {}, sizes {}, strides {})", list(o), list(z), list(st))
                }
                None => "slice (empty)".into(),
            },
            StagePlan::Convert(c) => {
                let values = |v: &crate::Channels| {
                    let shown: Vec<String> = (0..v.len()).map(|i| format!("{:?}", v.get(i))).collect();
                    format!("[{}]", shown.join(", "))
                };
                format!(
                    "convert ({} -> {}, x * scale + offset in f32, {}scale {}, offset {})",
                    c.from,
                    c.to,
                    if c.channels > 1 { format!("per channel of dim {}: ", c.dim) } else { String::new() },
                    values(&c.scale),
                    values(&c.offset)
                )
            }
            StagePlan::Scatter(sc) => format!(
                "scatter ({}, into {}{} strides {}, indices {}{}, reduction {}, duplicates {}, out_of_range {}; its updates {})",
                sc.op,
                sc.data_type(),
                list(&sc.map.data.sizes),
                list(&sc.map.data.strides),
                sc.map.index_type.dtype(),
                list(&sc.map.indices.sizes),
                sc.reduction,
                sc.duplicates.name(),
                sc.out_of_range,
                if i == 0 { "are the data" } else { "are the previous stage's output" },
            ),
        };
        let _ = writeln!(s, "  stage {}: {what} -> {}", i + 1, list(&stage.output().sizes));
    }
    let note = if desc.output.is_some() { ", as declared" } else { ", inferred" };
    s += &tensor("output", p.output_type(), &p.output, note);
    match ChainKernelDesc::new(p) {
        _ if crate::kernel::ScatterRowsDesc::of_chain(p).is_some() => {
            s += "  no intermediate is written: the scatter's write reads each row from the data, where the slices put it\n"
        }
        _ if crate::kernel::GatheredRows::of_chain(p).is_some() => {
            s += "  no intermediate is written: the host folds the gather into the scatter's lists, and the scatter reads each gathered row from the data (on GPUs the gather runs first instead, which measured faster there)\n";
            if matches!(p.stages.first(), Some(StagePlan::Gather(g)) if g.out_of_range == OutOfRange::Zero) {
                s += "  a row the gather's `zero` policy makes zeros is read from no buffer: the scatter takes it as zeros\n";
            }
        }
        Ok(Some(_)) => s += "  runs as one kernel: no intermediate is written\n",
        Ok(None) => s += "  the output is empty: nothing runs\n",
        Err(cause) => {
            let _ = writeln!(s, "  runs stage by stage on the device: {cause}");
        }
    }
    if p.scatter().is_some() {
        s += "  the result is the `into` tensor, written in place where the indices say: no grid of reads\n";
        return s;
    }
    s += "  which data element each output element reads (iK[..]: the value of stage K's indices[..]):\n";
    s += &grid(&p.output.sizes, |c| {
        let mut at: Vec<Coord> = c.iter().map(|&v| Coord::At(v as i64)).collect();
        for (k, stage) in p.stages.iter().enumerate().rev() {
            at = match stage {
                StagePlan::Slice(sl) => match &sl.window {
                    Some((offsets, sizes, strides)) => (0..at.len())
                        .map(|i| {
                            let start =
                                offsets[i] as i64 + if strides[i] < 0 { sizes[i] as i64 - 1 } else { 0 };
                            at[i].affine(start, strides[i])
                        })
                        .collect(),
                    None => return "-".into(),
                },
                StagePlan::Convert(_) => at,
                // A chain that scatters has no grid (it returned above).
                StagePlan::Scatter(_) => return "-".into(),
                StagePlan::Gather(g) => {
                    let mut data = vec![Coord::At(0); g.data.rank()];
                    let mut offset = Some(0usize);
                    let mut read = Vec::new();
                    for d in &g.dims {
                        if d.index_stride != 0 {
                            read.push(at[d.output_dim].clone());
                            offset = match &at[d.output_dim] {
                                Coord::At(v) => offset.map(|o| o + *v as usize * d.index_stride),
                                Coord::Read(_) => None,
                            };
                        }
                        if let Some(i) = d.data_dim {
                            data[i] = at[d.output_dim].clone();
                        }
                    }
                    // Where every coordinate is known, the indices' own (a broadcast or
                    // permuted index layout included); else the output's, as read.
                    let position = match offset {
                        Some(o) => coords_text(&coords_of(&g.indices, o)),
                        None => read.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
                    };
                    data[g.axis] = Coord::Read(format!("i{}[{position}]", k + 1));
                    data
                }
            };
        }
        let at: Vec<String> = at.iter().map(ToString::to_string).collect();
        format!("data[{}]", at.join(", "))
    });
    s
}

/// A data coordinate of a chain's output element: a number, or the value an index read gives
/// (with what the later slices did to it).
#[derive(Clone)]
enum Coord {
    At(i64),
    Read(String),
}

impl Coord {
    fn affine(&self, start: i64, stride: i64) -> Coord {
        match self {
            Coord::At(v) => Coord::At(start + stride * v),
            Coord::Read(r) if start == 0 && stride == 1 => Coord::Read(r.clone()),
            Coord::Read(r) if stride == 1 => Coord::Read(format!("{start}+{r}")),
            Coord::Read(r) if stride == -1 => Coord::Read(format!("{start}-{r}")),
            Coord::Read(r) => Coord::Read(format!("{start}{stride:+}*{r}")),
        }
    }
}

impl std::fmt::Display for Coord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coord::At(v) => write!(f, "{v}"),
            Coord::Read(r) => f.write_str(r),
        }
    }
}
