// scatter-keys: a scatter's sizes are fixed; a `_` count is refused on the indices (where the
// count lives) or, with fixed indices, on the updates.
fn main() {
    let _kv = stridex::scatter! { rules: openvino, data: f16[64, 8, 128], indices: i32[_], updates: f16[_, 8, 128], out_of_range: skip };
    let _rows = stridex::scatter! { data: f32[100, 16], indices: i32[8], updates: f32[_, 16], axis: 0 };
}
