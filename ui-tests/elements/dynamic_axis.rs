fn main() {
    let op = stridex::gather_elements! { data: f32[4, 3], indices: i64[_, 3], axis: 1 };
    let _ = op.run(&[0.0; 12], &[0; 6]);
}
