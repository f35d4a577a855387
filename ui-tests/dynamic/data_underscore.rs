fn main() {
    let _ = stridex::gather! { data: f32[_, 3], indices: i64[2] };
}
