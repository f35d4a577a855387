fn main() {
    let _ = stridex::gather! {
        rules: directml, feature_level: 2_0, data: f32[4, 4], indices: u32[1, 2], axis: 0, index_dims: 1,
    };
}
