// A `_` chain may end in `scatter` or `scatter_nd`, not in `scatter_elements`: its kernel
// walks each line of the count's positions in one invocation.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 8],
        scatter_elements { into: f32[16, 8], indices: i32[_, 8], axis: 0, reduction: add },
    };
}
