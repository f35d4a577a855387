fn main() {
    let op = stridex::gather_elements! { data: f32[3, 3], indices: i64[3], axis: 0 };
    let _ = op.run(&[0.0; 9], &[0; 3]);
}
