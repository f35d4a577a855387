fn main() {
    let _ = stridex::chain! { data: f32[_, 4], gather { indices: i64[2] } };
}
