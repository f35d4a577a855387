// ONNX Gather takes i32 or i64 indices, in a chain as on its own.
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        slice { rules: onnx, starts: [0], ends: [50] },
        gather { indices: u32[4], axis: 0 },
    };
}
