fn main() {
    let _ = stridex::gather! { rules: directml, data: f32[4, 3], indices: i32[_, 3] };
}
