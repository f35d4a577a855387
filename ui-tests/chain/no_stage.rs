fn main() {
    let _ = stridex::chain! { data: f32[10, 10] };
}
