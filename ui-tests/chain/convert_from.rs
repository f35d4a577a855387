// A convert stage reads integers and floats of up to 32 bits: the data's type is at fault.
fn main() {
    let _ = stridex::chain! {
        data: u64[4, 3],
        slice { s[1..3, ..] },
        convert { to: f32, dim: 1, scale: [1.0, 2.0, 3.0] },
    };
}
