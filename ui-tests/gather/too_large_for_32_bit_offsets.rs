fn main() {
    let op = stridex::gather! { data: f32[1048576, 8192], indices: i64[2] };
    let _ = op.run(&[0.0; 6], &[0; 4]);
}
