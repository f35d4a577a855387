// Every scale and offset is a finite f32: 1e39 is past f32's range.
fn main() {
    let _ = stridex::chain! {
        data: u8[4, 3],
        convert { to: f32, dim: 1, scale: [1.0, 1e39, 3.0] },
    };
}
