// A `_` chain may end in `scatter_elements` along axis 0, where the count is the length of its
// lines; along another axis the indices' leading size is tied to the data's.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 8],
        scatter_elements { into: f32[16, 8], indices: i32[_, 8], axis: 0, reduction: add },
    };
    let _ = stridex::chain! {
        data: f32[_, 8],
        scatter_elements { into: f32[16, 8], indices: i32[_, 8], axis: 1, reduction: add },
    };
}
