fn main() {
    let _ = stridex::slice! { input: f32[_, 8], offsets: [1, 0], sizes: [_, 4], strides: [1, 1] };
}
