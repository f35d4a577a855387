// The destination holds the chain's element type: the updates are f32, `into` is f16.
fn main() {
    let _ = stridex::chain! {
        data: f32[6, 8],
        scatter { into: f16[16, 8], indices: i32[6], axis: 0 },
    };
}
