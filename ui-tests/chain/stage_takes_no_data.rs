// A stage's input is the previous stage's output: `data` and `input` belong to the chain, and
// `output` follows the last stage.
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        gather { data: f32[100, 16], indices: i64[8] },
        slice { input: f32[8, 16], starts: [0], ends: [4], rules: onnx },
        slice { rules: onnx, starts: [0], ends: [2], output: [2, 16] },
    };
}
