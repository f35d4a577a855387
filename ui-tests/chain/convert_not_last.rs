// A convert stage changes the element type the other stages move: it is the chain's last.
fn main() {
    let _ = stridex::chain! {
        data: u8[4, 3, 8],
        convert { to: f32, dim: 1, scale: [1.0, 2.0, 3.0] },
        slice { s[.., .., 2..6] },
    };
}
