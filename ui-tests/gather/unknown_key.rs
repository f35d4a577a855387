fn main() {
    let op = stridex::gather! { data: f32[3, 2], indices: i64[2], axes: 0 };
    let _ = op.run(&[0.0; 6], &[0; 4]);
}
