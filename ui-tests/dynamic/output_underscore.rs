fn main() {
    let _ = stridex::gather! { data: f32[4, 3], indices: i64[_, 2], output: [_, 2, 3] };
}
