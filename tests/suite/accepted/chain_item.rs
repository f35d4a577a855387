// A chain in its item form and as a typed static; every entry at once compiles.

stridex::chain! {
    pub static LAST_TOKEN;
    data: f16[1000, 64] strides [64, 1],
    gather { rules: onnx, indices: i64[4, 16], axis: 0, out_of_range: zero },
    slice { rules: onnx, starts: [-1], ends: [16], axes: [1], steps: [1] },
    slice { offsets: [0, 0, 0], sizes: [4, 1, 64], strides: [1, 1, -2] },
    gather { rules: openvino, indices: u32[4, 8], axis: 2, batch_dims: 1 },
    gather { rules: directml, indices: u64[1, 1, 2], axis: 2, index_dims: 1 },
    output: f16[4, 1, 2] strides [2, 2, 1],
}

static FLIP: stridex::ChainOp<u8, ()> = stridex::chain! {
    data: u8[4, 4],
    slice { offsets: [0, 0], sizes: [4, 4], strides: [1, -1] },
};

// Stage ranges, lowered against the shape each stage receives.
static CROP_FLIP: stridex::ChainOp<f32, (i32,)> = stridex::chain! {
    data: f32[8, 3, 64, 64],
    slice { s[.., .., 8..56, 8..56] },
    gather { indices: i32[3], axis: 1 },
    slice { s[.., .., .., ..;-1] },
};

fn main() {
    let _: &stridex::ChainOp<stridex::half::f16, (i64, u32, u64)> = &LAST_TOKEN;
    let _ = FLIP.output_shape();
    let _ = CROP_FLIP.output_shape();
}
