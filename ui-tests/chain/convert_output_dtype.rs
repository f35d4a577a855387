// The declared output's type is the one `convert` writes.
fn main() {
    let _ = stridex::chain! {
        data: u8[3, 4],
        convert { to: f16 },
        output: f32[3, 4],
    };
}
