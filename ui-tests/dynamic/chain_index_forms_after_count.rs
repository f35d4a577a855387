// After a `_` count, a gather_nd's tuples would index the count's dimension, and a
// gather_elements' output would lead with its indices' fixed size: both come before the count.
fn main() {
    let _ = stridex::chain! { data: f32[_, 8, 2], gather_nd { indices: i64[3, 1] } };
    let _ = stridex::chain! { data: f32[_, 8], gather_elements { indices: i64[2, 3], axis: 1 } };
}
