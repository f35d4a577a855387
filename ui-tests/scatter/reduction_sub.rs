// scatter-reductions: `sub` is OpenVINO ScatterNDUpdate-15's alone, not ONNX ScatterND-18's.
fn main() {
    let _op = stridex::scatter_nd! {
        data: f32[4, 2], indices: i64[3, 1], updates: f32[3, 2], reduction: sub,
    };
}
