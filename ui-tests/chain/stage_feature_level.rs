// A fused chain is one stridex kernel, not a DirectML operator.
fn main() {
    let _ = stridex::chain! {
        data: f32[1, 1, 4, 4],
        gather { rules: directml, feature_level: 2_1, indices: u32[1, 1, 1, 2], axis: 2, index_dims: 1 },
    };
}
