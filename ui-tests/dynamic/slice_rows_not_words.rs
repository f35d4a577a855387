fn main() {
    let _ = stridex::slice! { input: u8[_, 3, 8, 8], s[.., .., .., 1..4] };
}
