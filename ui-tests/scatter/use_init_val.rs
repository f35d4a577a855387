// scatter-use-init-val: OpenVINO ScatterElementsUpdate-12 alone can leave the data out of its
// reductions; the key takes `true` or `false`.
fn main() {
    let _op = stridex::scatter_nd! {
        rules: openvino, data: f32[4, 2], indices: i64[3, 1], updates: f32[3, 2], reduction: add,
        use_init_val: false,
    };
    let _op = stridex::scatter_elements! {
        rules: openvino, data: f32[4, 2], indices: i64[3, 2], updates: f32[3, 2], axis: 0,
        reduction: add, use_init_val: 0,
    };
}
