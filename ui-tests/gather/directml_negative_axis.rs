fn main() {
    let op = stridex::gather! { rules: directml, data: f32[3, 2], indices: u32[1, 2], axis: -1, index_dims: 1 };
    let _ = op.run(&[0.0; 6], &[0; 4]);
}
