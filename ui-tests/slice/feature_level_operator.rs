// DML_OPERATOR_SLICE1 came with feature level 2_1.
fn main() {
    let _ = stridex::slice! {
        feature_level: 1_0, input: f32[1, 1, 4, 4], offsets: [0, 0, 0, 0], sizes: [1, 1, 2, 2], strides: [1, 1, 1, 1],
    };
}
