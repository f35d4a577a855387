// A convert stage writes f32, f16 or bf16.
fn main() {
    let _ = stridex::chain! {
        data: u8[4, 3],
        convert { to: i32, dim: 1, scale: [1.0, 2.0, 3.0] },
    };
}
