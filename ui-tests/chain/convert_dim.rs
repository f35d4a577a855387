// `dim` names a dimension of the shape the convert stage receives (rank 3 here).
fn main() {
    let _ = stridex::chain! {
        data: u8[4, 3, 8],
        convert { to: f32, dim: 3, scale: [1.0, 2.0, 3.0] },
    };
}
