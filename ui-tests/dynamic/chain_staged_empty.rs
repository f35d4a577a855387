// An intermediate with no element makes a chain run stage by stage; a `_` chain runs as one
// kernel, and the error points at the stage whose output is empty.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 4],
        slice { rules: onnx, starts: [2], ends: [2], axes: [1] },
        gather { rules: openvino, indices: i64[3], axis: 1 },
    };
}
