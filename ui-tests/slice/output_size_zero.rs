fn main() {
    let op = stridex::slice! { input: f32[4, 4], offsets: [0, 0], sizes: [4, 4], strides: [1, 2], output: [0, 2] };
    let _ = op.run(&[0.0; 16]);
}
