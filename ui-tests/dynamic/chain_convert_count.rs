// The channels cannot be the `_` dimension: its size is known only at run time, while scale and
// offset hold one constant per channel.
fn main() {
    let _ = stridex::chain! {
        data: u8[_, 8],
        convert { to: f32, dim: 0, scale: [1.0, 2.0] },
    };
}
