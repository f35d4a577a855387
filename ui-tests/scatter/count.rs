// dynamic-scatter, dynamic-where: a scatter's `_` count is its indices' leading size and its updates'; along
// axis 0 (`scatter!`, `scatter_elements!`) or before GatherND's tuples (`scatter_nd!`).
fn main() {
    let _lines = stridex::scatter_elements! { data: f32[100, 16], indices: i64[_, 16], updates: f32[_, 16], axis: 0 };
    let _across = stridex::scatter_elements! { data: f32[100, 16], indices: i64[_, 16], updates: f32[_, 16], axis: 1 };
    let _fixed = stridex::scatter! { data: f32[100, 16], indices: i32[8], updates: f32[_, 16], axis: 0 };
    let _written = stridex::scatter! { data: f32[100, 16], indices: i32[_], updates: f32[8, 16], axis: 0 };
    let _across = stridex::scatter! { data: f32[16, 100], indices: i32[_], updates: f32[16, _], axis: 1 };
    let _inner = stridex::scatter! { data: f32[100, 16], indices: i32[_], updates: f32[_, _], axis: 0 };
}
