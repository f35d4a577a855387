//! `describe()`: the text is exact for a seed example, and its grid, read back and evaluated
//! on each seed's inputs, gives the seed's printed output (no device needed).

use stridex::core::{describe, seeds, DType, TensorLayout};

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
fn a_slice_is_described_exactly() {
    let seed = seeds::slice_seed("slice1_2_negative_stride");
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
                    let clamp = plan.out_of_range == stridex::OutOfRange::Clamp;
                    data_coords(e, seed.indices, &plan.indices, plan.axis_size, clamp)
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

#[test]
fn ops_describe_themselves() {
    let op =
        stridex::gather! { rules: openvino, data: f32[2, 3, 2], indices: i32[2, 2], axis: 1, batch_dims: 1 };
    let text = op.describe();
    assert!(text.starts_with("gather: OpenVINO Gather-8 (rules: openvino)\n"), "{text}");
    assert!(text.contains("axis 1 (size 3), batch_dims 1"), "{text}");
    assert!(text.contains("out_of_range: zero (the rule set's default)"), "{text}");
    assert!(text.contains("[[[data[0, i[0, 0], 0], data[0, i[0, 0], 1]],"), "{text}");
    let big = stridex::gather! { data: f32[1000, 64], indices: i64[8] };
    assert!(big.describe().contains("(512 output elements: the grid is shown up to 64)"));
    let chain = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[8, 12] },
        slice { rules: onnx, starts: [-1], ends: [12], axes: [1] },
    };
    let text = chain.describe();
    assert!(
        text.contains(
            "stage 2: slice (window offsets [0, 11, 0], sizes [8, 1, 16], strides [1, 1, 1]) -> [8, 1, 16]"
        ),
        "{text}"
    );
    assert!(text.contains("runs as one kernel"), "{text}");
}

/// A chain's grid walks each output element back through every stage: a slice's offsets and
/// signed strides, each gather's read (`iK[..]`: stage K's indices), to the data.
#[test]
fn a_chain_grid_follows_every_stage_to_the_data() {
    let op = stridex::chain! {
        data: f32[5, 4],
        slice { s[1..4, ..;-1] },
        gather { indices: i32[2], axis: 1 },
        gather { indices: i32[2, 2], axis: 0 },
    };
    let text = op.describe();
    let grid = text.split_once("stage K's indices[..]):\n").expect("a grid").1;
    assert_eq!(
        grid,
        "  [[[data[1+i3[0, 0], 3-i2[0]], data[1+i3[0, 0], 3-i2[1]]],\n    \
         [data[1+i3[0, 1], 3-i2[0]], data[1+i3[0, 1], 3-i2[1]]]],\n   \
         [[data[1+i3[1, 0], 3-i2[0]], data[1+i3[1, 0], 3-i2[1]]],\n    \
         [data[1+i3[1, 1], 3-i2[0]], data[1+i3[1, 1], 3-i2[1]]]]]\n"
    );
    // A slice of a gather's output: plain coordinates once past the read.
    let op =
        stridex::chain! { data: f32[4, 5], gather { indices: i64[3], axis: 0 }, slice { s[.., 1..4;2] } };
    assert!(op.describe().ends_with(
        "  [[data[i1[0], 1], data[i1[0], 3]],\n   [data[i1[1], 1], data[i1[1], 3]],\n   [data[i1[2], 1], data[i1[2], 3]]]\n"
    ));
}
