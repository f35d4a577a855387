// The chain's output must be the shape the last stage gives ([8, 1, 16]).
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[8, 12] },
        slice { rules: onnx, starts: [-1], ends: [12], axes: [1] },
        output: [8, 16],
    };
}
