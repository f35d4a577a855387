// The item form names the op's type at module level; every key at once compiles.

stridex::gather! {
    pub static EMBED;
    rules: openvino,
    data: f32[2, 5] strides [5, 1],
    indices: i64[2, 3],
    axis: -1,
    batch_dims: 1,
    out_of_range: clamp,
    output: f32[2, 3] strides [3, 1],
}

stridex::slice! {
    static FLIP;
    rules: directml,
    input: u8[4, 4],
    offsets: [0, 1],
    sizes: [4, 3],
    strides: [-1, 2],
    output: [4, 2],
}

static ONNX_SLICE: stridex::SliceOp<i64> = stridex::slice! {
    rules: onnx,
    input: i64[2, 4],
    starts: [1, 0],
    ends: [2, 3],
    axes: [0, 1],
    steps: [1, 2],
};

fn main() {
    let _: &stridex::GatherOp<f32, i64> = &EMBED;
    let _: &stridex::SliceOp<u8> = &FLIP;
    let _ = &ONNX_SLICE;
    let dml = stridex::gather! {
        rules: directml,
        data: f16[1, 3, 3],
        indices: u64[1, 1, 2],
        axis: 2,
        index_dims: 2,
        output: [3, 1, 2],
    };
    let _: stridex::GatherOp<stridex::half::f16, u64> = dml;
}
