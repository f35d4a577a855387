// The window must lie inside the stage's input: rows 0..6 of the 4 ids gathered.
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[4] },
        slice { offsets: [0, 0], sizes: [6, 16], strides: [1, 1] },
    };
}
