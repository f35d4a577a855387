// Independent mistakes in different stages are all reported in one build.
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[8], axsi: 0 },
        slice { rules: onnx, starts: [0], ends: [4], offsets: [0, 0] },
        gather { indices: f128[2], out_of_range: wrap },
    };
}
