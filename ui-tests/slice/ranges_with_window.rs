fn main() {
    let _ = stridex::slice!(input: f32[20, 10], offsets: [0, 0], s[.., 1..]);
}
