fn main() {
    let op = stridex::gather! { rules: directml, data: bool[4], indices: u32[5], index_dims: 1 };
    let _ = op.run(&[0.0; 6], &[0; 4]);
}
