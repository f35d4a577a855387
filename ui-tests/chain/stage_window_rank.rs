// A SLICE1 window needs one entry per dimension of the shape the stage receives ([8, 12, 16]).
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[8, 12] },
        slice { offsets: [0, 0], sizes: [8, 1], strides: [1, 1] },
    };
}
