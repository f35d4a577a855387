// Descriptors inside the tables of the feature level they name.

stridex::gather! {
    static OLDEST;
    rules: directml,
    feature_level: 1_0,
    data: f16[1, 1, 4, 4],
    indices: u32[1, 1, 1, 2],
    axis: 2,
    index_dims: 1,
}

fn main() {
    let _ = &OLDEST;
    let _ = stridex::slice! {
        feature_level: 2_1, input: u8[1, 2, 3, 4, 4], offsets: [0, 0, 0, 0, 0], sizes: [1, 2, 3, 4, 4], strides: [1, 1, 1, 1, -1],
    };
    let _ = stridex::gather! {
        rules: directml, feature_level: 3_0, data: i8[5], indices: i64[2], axis: 0,
    };
}
