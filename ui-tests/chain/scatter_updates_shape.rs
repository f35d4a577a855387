// The scatter's updates are what the stage before it makes ([6, 4] here), and the indices
// with the `into` rows call for [6, 8]: the error is the scatter's, on the stage.
fn main() {
    let _ = stridex::chain! {
        data: f32[6, 8],
        slice { s[.., 0..4] },
        scatter { into: f32[16, 8], indices: i32[6], axis: 0 },
    };
}
