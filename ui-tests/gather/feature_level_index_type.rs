// Before 3_0, DirectML GATHER indices are u32 only.
fn main() {
    let _ = stridex::gather! {
        rules: directml, feature_level: 2_1, data: f32[1, 1, 4, 4], indices: i32[1, 1, 1, 2], axis: 2, index_dims: 1,
    };
}
