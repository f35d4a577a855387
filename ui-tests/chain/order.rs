// `data` first, stages, then `output`; anything else is named.
fn main() {
    let _ = stridex::chain! {
        data: f32[10, 10],
        output: [2, 10],
        slice { rules: onnx, starts: [0], ends: [2] },
        reshape { sizes: [20] },
    };
}
