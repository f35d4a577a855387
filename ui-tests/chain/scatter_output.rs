// A chain that scatters returns its `into` tensor, in its layout: `output` has no place.
fn main() {
    let _ = stridex::chain! {
        data: f32[6, 8],
        scatter { into: f32[16, 8], indices: i32[6], axis: 0 },
        output: [16, 8],
    };
}
