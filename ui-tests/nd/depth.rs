fn main() {
    let op = stridex::gather_nd! { data: f32[3, 3], indices: i64[2, 3] };
    let _ = op.run(&[0.0; 9], &[0; 6]);
}
