// A chain stage's SLICE1 window does not write `_`: ranges take the count whole.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 8],
        slice { offsets: [0, 2], sizes: [_, 4], strides: [1, 1] },
    };
}
