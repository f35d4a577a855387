// Independent mistakes are all reported in one build: an unknown element type, a misspelt key,
// a repeated key and a malformed list.

fn main() {
    let _ = stridex::gather! {
        rules: onnx,
        data: f33[3, 2],
        indices: i64[2],
        axiss: 0,
        rules: openvino,
        output: [2 2],
    };
}
