// After a `_` count, a gather_nd's tuples would index the count's dimension; a
// gather_elements' indices lead with the count (its output is their shape), along an axis other
// than the count's.
fn main() {
    let _ = stridex::chain! { data: f32[_, 8, 2], gather_nd { indices: i64[3, 1] } };
    let _ = stridex::chain! { data: f32[_, 8], gather_elements { indices: i64[2, 3], axis: 1 } };
    let _ = stridex::chain! { data: f32[_, 8], gather_elements { indices: i64[_, 8], axis: 0 } };
    let _ = stridex::chain! { data: f32[_, 8], gather_elements { indices: i64[_, 3] strides [1, 1], axis: 1 } };
    let _ = stridex::chain! { data: f32[_, 8, 2], gather_nd { indices: i64[_, 1] } };
    let _picks = stridex::chain! { data: f32[_, 8], gather_elements { indices: i64[_, 3], axis: 1 } };
}
