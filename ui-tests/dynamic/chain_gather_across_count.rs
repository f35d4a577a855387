// After a `_` count, a gather along axis 0 would replace it.
fn main() {
    let _ = stridex::chain! { data: f32[_, 4], gather { indices: i64[2], axis: 0 } };
}
