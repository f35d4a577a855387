fn main() {
    let _ = stridex::gather! { rules: openvino, data: f32[2, 4, 3], indices: i32[_, 2], axis: 1, batch_dims: 1 };
}
