//! `describe()`: the text is exact for a seed example; its grid, read back and evaluated on
//! each seed's inputs, gives the seed's printed output; a chain's grid follows every stage back
//! to the data; and the texts of a corpus of random descriptors (every layout kind, policy,
//! rule set, `_` count and chain form the generators make) are as recorded in
//! `snapshots/describe.txt` (`STRIDEX_BLESS=1` rewrites it: read the diff before committing).

mod common;

use common::{chains, generate, generate::Rng};
use std::borrow::Cow;
use stridex_core::{
    describe, seeds, ChainCount, ChainDesc, DType, Dims, GatherDesc, GatherForm, GatherRules, OutOfRange,
    Reduction, ScatterDesc, SignedDims, SliceWindow, StageDesc, TensorDecl, TensorLayout,
};

/// The grid's entries (`data[i[0, 1], 2]` or `input[3, 1]`) in row-major order.
fn entries(text: &str) -> Vec<String> {
    let grid = text.split_once("reads").expect("a grid").1;
    let grid = grid.split_once('\n').unwrap().1;
    let mut out = Vec::new();
    let mut rest = grid;
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic()) {
        let from = &rest[start..];
        // An entry ends at the bracket that closes its first `[`.
        let mut depth = 0;
        let end = from
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ => return false,
                }
                depth == 0
            })
            .unwrap()
            .0;
        out.push(from[..=end].to_string());
        rest = &from[end + 1..];
    }
    out
}

fn numbers(s: &str) -> Vec<usize> {
    s.split(|c: char| !c.is_ascii_digit()).filter(|t| !t.is_empty()).map(|t| t.parse().unwrap()).collect()
}

/// `data[a, i[b, c], d]` with the index value at `[b, c]` substituted (normalized, and clamped
/// when `clamp`): the data coordinates, or `None` for an index out of range.
fn data_coords(
    entry: &str,
    indices: &[i64],
    index_layout: &TensorLayout,
    axis_size: usize,
    clamp: bool,
) -> Option<Vec<usize>> {
    let inner = &entry[entry.find('[').unwrap() + 1..entry.len() - 1];
    let mut coords = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let part;
        if let Some(r) = rest.strip_prefix("i[") {
            let close = r.find(']').unwrap();
            let at = numbers(&r[..close]);
            let s = axis_size as i64;
            let v = indices[index_layout.offset(&at)];
            let v = if v < 0 { v + s } else { v };
            if !(0..s).contains(&v) && !clamp {
                return None;
            }
            coords.push(v.clamp(0, s - 1) as usize);
            part = &r[close + 1..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            coords.push(rest[..end].trim().parse().unwrap());
            part = &rest[end..];
        }
        rest = part.trim_start_matches([',', ' ']);
    }
    Some(coords)
}

#[test]
fn a_scatter_is_described_exactly() {
    let decl = |dtype, sizes: &[usize]| TensorDecl::packed(dtype, Dims::new(sizes).unwrap());
    // ONNX ScatterElements' second example: [[1, 2, 3, 4, 5]] <- [[1, 3]] along axis 1, added.
    let mut desc = ScatterDesc::new(
        GatherForm::Elements,
        GatherRules::Onnx,
        decl(DType::F32, &[1, 5]),
        decl(DType::I64, &[1, 2]),
        decl(DType::F32, &[1, 2]),
        1,
    );
    desc.reduction = Some(Reduction::Add);
    let text = describe::scatter(&desc, &desc.plan().unwrap());
    assert_eq!(
        text,
        "ONNX ScatterElements-18 (rules: onnx)
  data     f32[1, 5]  strides [5, 1]  packed; a buffer of at least 5 element(s) (20 bytes)
  indices  i64[1, 2]  strides [2, 1]  packed; a buffer of at least 2 element(s) (16 bytes)
  updates  f32[1, 2]  strides [2, 1]  packed; a buffer of at least 2 element(s) (8 bytes)
  axis 1 (size 5)
  reduction add, duplicates last, out_of_range error
  each index position writes a run of 1 element(s); `run` returns the data's sizes, packed
"
    );
}

#[test]
fn a_slice_is_described_exactly() {
    let seed = seeds::slice_seed("slice1_2_negative_stride").unwrap();
    let desc = seed.desc(DType::F32);
    let text = describe::slice(&desc, &desc.plan().unwrap());
    assert_eq!(
        text,
        "slice: DirectML SLICE1 (rules: directml)
  input    f32[1, 1, 4, 4]  strides [16, 16, 4, 1]  packed; a buffer of at least 16 element(s) (64 bytes)
  window offsets [0, 0, 0, 1], sizes [1, 1, 4, 3], strides [1, 1, -2, 2]
  output   f32[1, 1, 2, 2]  strides [4, 4, 2, 1]  packed, inferred; a buffer of at least 4 element(s) (16 bytes)
  which input element each output element reads:
  [[[[input[0, 0, 3, 1], input[0, 0, 3, 3]],
     [input[0, 0, 1, 1], input[0, 0, 1, 3]]]]]
"
    );
}

#[test]
fn every_seed_gather_grid_reads_what_the_seed_prints() {
    for seed in seeds::GATHERS {
        let desc = seed.desc(DType::F32, DType::I64);
        let plan = desc.plan().unwrap();
        let text = describe::gather(&desc, &plan);
        let got: Vec<f64> = if plan.output.num_elements() == 0 {
            vec![]
        } else {
            entries(&text)
                .iter()
                .map(|e| {
                    let clamp = plan.out_of_range == OutOfRange::Clamp;
                    data_coords(e, seed.indices, &plan.indices, plan.index_axes().next().unwrap().size, clamp)
                        .map_or(0.0, |c| seed.data[plan.data.offset(&c)])
                })
                .collect()
        };
        assert_eq!(got, seed.out, "{}:\n{text}", seed.name);
    }
}

#[test]
fn every_seed_slice_grid_reads_what_the_seed_prints() {
    for seed in seeds::SLICES {
        let desc = seed.desc(DType::F32);
        let plan = desc.plan().unwrap();
        let text = describe::slice(&desc, &plan);
        let got: Vec<f64> =
            entries(&text).iter().map(|e| seed.input[plan.input.offset(&numbers(e))]).collect();
        assert_eq!(got, seed.out, "{}:\n{text}", seed.name);
    }
}

/// A chain's grid walks each output element back through every stage: a slice's offsets and
/// signed strides, each gather's read (`iK[..]`: stage K's indices), to the data.
#[test]
fn a_chain_grid_follows_every_stage_to_the_data() {
    let gather = |sizes: &[usize], axis| {
        StageDesc::Gather(common::gather_stage(GatherRules::Onnx, DType::I32, sizes, axis))
    };
    let slice = common::window_stage;
    let text = |data: &[usize], stages: Vec<StageDesc>| {
        let desc = ChainDesc {
            data: TensorDecl::packed(DType::F32, common::d(data)),
            stages: Cow::Owned(stages),
            output: None,
            dynamic_leading: None,
        };
        describe::chain(&desc, &desc.plan().unwrap())
    };
    // s[1..4, ..;-1], then a gather along 1, then one along 0.
    let t = text(&[5, 4], vec![slice(&[1, 0], &[3, 4], &[1, -1]), gather(&[2], 1), gather(&[2, 2], 0)]);
    let grid = t.split_once("stage K's indices[..]):\n").expect("a grid").1;
    assert_eq!(
        grid,
        "  [[[data[1+i3[0, 0], 3-i2[0]], data[1+i3[0, 0], 3-i2[1]]],\n    \
         [data[1+i3[0, 1], 3-i2[0]], data[1+i3[0, 1], 3-i2[1]]]],\n   \
         [[data[1+i3[1, 0], 3-i2[0]], data[1+i3[1, 0], 3-i2[1]]],\n    \
         [data[1+i3[1, 1], 3-i2[0]], data[1+i3[1, 1], 3-i2[1]]]]]\n"
    );
    // A slice of a gather's output: plain coordinates once past the read.
    let t = text(&[4, 5], vec![gather(&[3], 0), slice(&[0, 1], &[3, 3], &[1, 2])]);
    assert!(t.ends_with(
        "  [[data[i1[0], 1], data[i1[0], 3]],\n   [data[i1[1], 1], data[i1[1], 3]],\n   [data[i1[2], 1], data[i1[2], 3]]]\n"
    ));
    // A step other than 1 and -1 on a read, and a start of 0 with step 1 left out.
    let whole = slice(&[0, 0], &[4, 9], &[1, 1]);
    let t = text(&[4, 9], vec![whole, slice(&[0, 1], &[4, 8], &[1, -2]), gather(&[2], 1)]);
    assert!(t.contains("\n  [[data[0, 8-2*i3[0]], data[0, 8-2*i3[1]]],\n   [data[1, "), "{t}");
}

/// Outputs of up to 64 elements get a grid; larger ones say how many elements they have.
#[test]
fn a_grid_is_shown_up_to_64_elements() {
    let text = |n: usize| {
        let desc = GatherDesc::new(
            GatherRules::Onnx,
            TensorDecl::packed(DType::F32, common::d(&[10, 8])),
            TensorDecl::packed(DType::I64, common::d(&[n])),
            0,
        );
        describe::gather(&desc, &desc.plan().unwrap())
    };
    assert!(text(8).ends_with("data[i[7], 6], data[i[7], 7]]]\n"), "{}", text(8));
    assert!(text(9).ends_with("  (72 output elements: the grid is shown up to 64)\n"), "{}", text(9));
}

/// The corpus the recorded texts are of: random gathers, slices and chains (every layout the
/// generators make), and the same with a `_` count where its rules allow one.
fn corpus() -> Vec<(String, String)> {
    let mut texts = Vec::new();
    for seed in 0..24u64 {
        let case = generate::gather_case(&mut Rng::new(seed), &DType::ALL);
        let desc = case.desc;
        texts.push((format!("gather {seed}"), describe::gather(&desc, &desc.plan().unwrap())));
        let mut dynamic = desc;
        (dynamic.dynamic_leading, dynamic.output, dynamic.indices.strides) = (true, None, None);
        if let Ok(p) = dynamic.plan() {
            texts.push((format!("gather {seed} with `_` indices"), describe::gather(&dynamic, &p)));
        }
        let desc = generate::slice_case(&mut Rng::new(seed), &DType::ALL).desc;
        texts.push((format!("slice {seed}"), describe::slice(&desc, &desc.plan().unwrap())));
        let mut dynamic = desc;
        (dynamic.dynamic_leading, dynamic.output) = (true, None);
        if let SliceWindow::DirectMl { offsets, sizes, strides } = &mut dynamic.window {
            // The `_` dimension taken whole.
            let whole = |v: &[usize], first| common::d(&[&[first], &v[1..]].concat());
            (*offsets, *sizes) = (whole(offsets, 0), whole(sizes, desc.input.sizes[0]));
            *strides = SignedDims::of(&[&[1], &strides[1..]].concat());
        }
        if let Ok(p) = dynamic.plan() {
            texts.push((format!("slice {seed} with a `_` input"), describe::slice(&dynamic, &p)));
        }
        let desc = chains::chain_case(&mut Rng::new(seed), &DType::ALL).desc;
        texts.push((format!("chain {seed}"), describe::chain(&desc, &desc.plan().unwrap())));
    }
    // `_` chains are rarer: more seeds, a few of each carrier.
    let (mut data, mut indices) = (0, 0);
    for seed in 0..2000u64 {
        let desc = chains::chain_case(&mut Rng::new(seed), &DType::ALL).desc;
        let mut dynamic = desc.clone();
        (dynamic.dynamic_leading, dynamic.output) = (Some(ChainCount::Data), None);
        if let (Ok(p), true) = (dynamic.plan(), data < 6) {
            data += 1;
            texts.push((format!("chain {seed} with `_` data"), describe::chain(&dynamic, &p)));
        }
        if let Some(stage) = desc.stages.iter().position(|s| matches!(s, StageDesc::Gather(_))) {
            let mut dynamic = desc.clone();
            (dynamic.dynamic_leading, dynamic.output) =
                (Some(ChainCount::Indices { stage: stage + 1 }), None);
            if let (Ok(p), true) = (dynamic.plan(), indices < 6) {
                indices += 1;
                texts.push((format!("chain {seed} with `_` indices"), describe::chain(&dynamic, &p)));
            }
        }
    }
    assert_eq!((data, indices), (6, 6), "too few `_` chains in the corpus");
    texts
}

#[test]
fn describe_texts_are_as_recorded() {
    let texts: String = corpus().iter().map(|(name, text)| format!("== {name}\n{text}")).collect();
    common::check_recorded("describe.txt", "a describe() text", &texts);
}
