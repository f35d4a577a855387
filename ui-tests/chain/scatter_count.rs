// In a chain with a `_` count, a final scatter's updates lead with the count, and so do its
// positions: its indices' leading size is `_`, not a number.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 8],
        scatter { into: f32[16, 8], indices: i32[6], axis: 0 },
    };
}
