fn main() {
    let op = stridex::gather_elements! { data: f32[3, 3], indices: i64[2, 4], axis: 0 };
    let _ = op.run(&[0.0; 9], &[0; 8]);
}
