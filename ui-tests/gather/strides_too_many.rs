fn main() {
    let op = stridex::gather! { data: f32[3, 2] strides [1, 1, 1, 1, 1, 1, 1, 1, 1], indices: i64[2] };
    let _ = op.run(&[0.0; 6], &[0; 4]);
}
