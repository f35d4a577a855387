// Before 3_0, every DirectML GATHER tensor has exactly 4 dimensions.
fn main() {
    let _ = stridex::gather! {
        rules: directml, feature_level: 1_0, data: f32[4, 4], indices: u32[1, 2], axis: 0, index_dims: 1,
    };
}
