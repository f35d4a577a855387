// One `_` count per chain.
fn main() {
    let _ = stridex::chain! { data: f32[_, 8], gather { indices: i32[_], axis: 1 } };
}
