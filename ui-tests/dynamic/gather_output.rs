// The output leads with the `_` count: its leading size is `_`, not a number.
fn main() {
    let _ = stridex::gather! { data: f32[4, 3], indices: i64[_, 2], output: [5, 2, 3] };
}
