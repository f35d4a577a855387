// A scatter stage takes its updates from the stage before it and names its destination
// `into`: `updates` is no key of it, and `into` is required.
fn main() {
    let _ = stridex::chain! {
        data: f32[6, 8],
        scatter { updates: f32[6, 8], indices: i32[6], axis: 0 },
    };
}
