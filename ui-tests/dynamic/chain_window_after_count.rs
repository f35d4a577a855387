// After a `_` count, an explicit SLICE1 window cannot take it whole: ranges or ONNX keys can.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 8],
        slice { offsets: [0, 2], sizes: [4, 4], strides: [1, 1] },
    };
}
