// DirectML GATHER at feature level 3_0 takes no 64-bit data: f64 needs 4_1.
fn main() {
    let _ = stridex::gather! {
        rules: directml, feature_level: 3_0, data: f64[4, 4], indices: u32[1, 2], axis: 0, index_dims: 1,
    };
}
