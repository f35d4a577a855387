fn main() {
    let op = stridex::gather! { rules: directml, data: f32[2, 3], indices: u32[1, 1] };
    let _ = op.run(&[0.0; 6], &[0; 1]);
}
