// DirectML GATHER takes no bool data: stage 2's input is the chain's bool data, passed on by
// stage 1, so the error points at stage 2's keyword.
fn main() {
    let _ = stridex::chain! {
        data: bool[4, 4],
        slice { rules: onnx, starts: [0], ends: [2] },
        gather { rules: directml, indices: u32[1, 2], axis: 1 },
    };
}
