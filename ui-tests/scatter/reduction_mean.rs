// scatter-reductions: `mean` is OpenVINO ScatterElementsUpdate-12's alone, not ONNX
// ScatterElements-18's; a mean of bools means nothing.
fn main() {
    let _op = stridex::scatter_elements! {
        data: f32[4, 2], indices: i64[3, 2], updates: f32[3, 2], axis: 0, reduction: mean,
    };
    let _op = stridex::scatter_elements! {
        rules: openvino, data: bool[4, 2], indices: i64[3, 2], updates: bool[3, 2], axis: 0,
        reduction: mean,
    };
}
