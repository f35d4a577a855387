fn main() {
    let _ = stridex::chain! {
        data: f32[20, 10],
        slice { rules: onnx, s[.., 1..] },
    };
}
