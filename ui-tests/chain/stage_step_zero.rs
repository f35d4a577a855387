fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[8] },
        slice { rules: onnx, starts: [0], ends: [8], steps: [0] },
    };
}
