fn main() {
    let op = stridex::slice! { input: bf16[4], offsets: [0], sizes: [4], strides: [1] };
    let _ = op.run(&[0.0; 16]);
}
