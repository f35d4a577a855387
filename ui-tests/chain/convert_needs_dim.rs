// Values per channel need the channel dimension named.
fn main() {
    let _ = stridex::chain! {
        data: u8[4, 3],
        convert { to: f32, scale: [1.0, 2.0, 3.0], offset: [0.0] },
    };
}
