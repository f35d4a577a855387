fn main() {
    let _ = stridex::slice! { input: f32[_, 8], offsets: [0, 0], sizes: [_, 4], strides: [-1, 1] };
}
