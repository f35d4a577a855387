fn main() {
    let op = stridex::slice! { input: f32[1, 1, 1, 1, 1, 1, 1, 1, 2], offsets: [0, 0, 0, 0, 0, 0, 0, 0, 0], sizes: [1, 1, 1, 1, 1, 1, 1, 1, 2], strides: [1, 1, 1, 1, 1, 1, 1, 1, 1] };
    let _ = op.run(&[0.0; 16]);
}
