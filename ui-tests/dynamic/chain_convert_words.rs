// A `_` chain writes each count's elements in whole words: 3 f16 per count are 6 bytes.
fn main() {
    let _ = stridex::chain! {
        data: u8[_, 8],
        slice { s[.., 0..3] },
        convert { to: f16 },
    };
}
