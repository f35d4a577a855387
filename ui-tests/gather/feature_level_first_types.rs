// Feature level 1_0 takes float data only; i32 data came with 2_1.
fn main() {
    let _ = stridex::gather! {
        rules: directml, feature_level: 1_0, data: i32[1, 1, 4, 4], indices: u32[1, 1, 1, 2], axis: 2, index_dims: 1,
    };
}
