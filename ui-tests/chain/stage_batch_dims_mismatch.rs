// OpenVINO batch dims must match: stage 3 receives [8, 1, 16], and its indices start with 4.
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[8, 12] },
        slice { rules: onnx, starts: [-1], ends: [12], axes: [1] },
        gather { rules: openvino, indices: i32[4, 2], axis: 2, batch_dims: 1 },
    };
}
