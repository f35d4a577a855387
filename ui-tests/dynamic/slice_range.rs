fn main() {
    let _ = stridex::slice! { input: f32[_, 8], s[1.., 2..4] };
}
