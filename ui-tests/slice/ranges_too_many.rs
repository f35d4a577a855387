fn main() {
    let _ = stridex::slice!(input: f32[20, 10], s[.., .., ..]);
}
