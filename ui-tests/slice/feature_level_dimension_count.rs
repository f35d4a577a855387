// At 2_1, SLICE1 takes 4 or 5 dimensions.
fn main() {
    let _ = stridex::slice! {
        feature_level: 2_1, input: u8[4, 4], offsets: [0, 0], sizes: [2, 2], strides: [1, 1],
    };
}
