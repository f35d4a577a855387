// A SLICE1 window with ONNX keys: each key of the other form is reported, on the key.

fn main() {
    let _ = stridex::slice! {
        input: f32[4, 4],
        offsets: [0, 0],
        sizes: [4, 4],
        strides: [1, 1],
        starts: [0, 0],
        steps: [1, 1],
    };
}
