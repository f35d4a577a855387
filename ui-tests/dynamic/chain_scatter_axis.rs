// A `_` chain's final scatter goes along axis 0: its updates lead with the count.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 8],
        scatter { into: f32[16, 8], indices: i32[_], axis: 1 },
    };
}
