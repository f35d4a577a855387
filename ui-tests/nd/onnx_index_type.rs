fn main() {
    let op = stridex::gather_nd! { data: f32[3, 3], indices: i32[2, 2] };
    let _ = op.run(&[0.0; 9], &[0; 4]);
}
