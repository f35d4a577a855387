// Batch dimensions after a `_` count would tie the indices to it.
fn main() {
    let _ = stridex::chain! {
        data: f32[_, 4, 8],
        gather { rules: openvino, indices: i32[4, 2], axis: 2, batch_dims: 1 },
    };
}
