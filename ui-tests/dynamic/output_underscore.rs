// `_` in an output is the op's count, and this gather has none.
fn main() {
    let _ = stridex::gather! { data: f32[4, 3], indices: i64[2, 2], output: [_, 2, 3] };
}
