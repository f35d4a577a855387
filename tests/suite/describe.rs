//! `describe()` on the ops the macros make (the texts themselves, and the seeds' grids read
//! back, are checked by core's own tests: `core/tests/describe.rs`).

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
