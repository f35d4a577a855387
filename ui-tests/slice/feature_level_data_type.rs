// At 3_0, SLICE1 takes no 64-bit data.
fn main() {
    let _ = stridex::slice! {
        feature_level: 3_0, input: i64[4, 4], offsets: [0, 0], sizes: [2, 2], strides: [1, 1],
    };
}
