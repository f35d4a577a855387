// One value per channel, or one for all: the crop left 3 channels, and `offset` gives 4.
fn main() {
    let _ = stridex::chain! {
        data: u8[2, 4, 8, 8],
        slice { s[.., 1.., .., ..] },
        convert { to: f16, dim: 1, scale: [1.0], offset: [0.5, 0.5, 0.5, 0.5] },
    };
}
