fn main() {
    let _ = stridex::slice!(input: f32[20, 10, 5], s[.., 1..9;0, ..]);
}
