fn main() {
    let op = stridex::gather_nd! { rules: directml, data: f32[3, 4], indices: i64[2, 1], batch_dims: 1 };
    let _ = op.run(&[0.0; 12], &[0; 2]);
}
