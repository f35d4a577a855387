fn main() {
    let op = stridex::gather_elements! { data: f32[3, 3], indices: u32[3, 2], axis: 1 };
    let _ = op.run(&[0.0; 9], &[0; 6]);
}
