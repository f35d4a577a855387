fn main() {
    let op = stridex::gather! { rules: openvino, data: f32[2, 2, 5], indices: i64[2, 2, 3], axis: 1, batch_dims: 2 };
    let _ = op.run(&[0.0; 6], &[0; 4]);
}
