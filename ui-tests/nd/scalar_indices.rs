fn main() {
    let op = stridex::gather_nd! { rules: openvino, data: f32[3, 3], indices: i32[] };
    let _ = op.run(&[0.0; 9], &[0; 1]);
}
