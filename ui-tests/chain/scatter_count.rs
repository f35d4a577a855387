// A chain that scatters has fixed sizes: the scatter runs after the stages before it, and a
// `_` chain runs as one kernel.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 8],
        scatter { into: f32[16, 8], indices: i32[6], axis: 0 },
    };
}
