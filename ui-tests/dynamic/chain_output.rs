// The result's leading size is the count: a declared output says `_` there.
fn main() {
    let _ = stridex::chain! { data: f32[_, 8], slice { s[.., 2..] }, output: f32[2, 6] };
}
