// scatter-keys: batch_dims is the gathers'.
fn main() {
    let _op = stridex::scatter_nd! { data: f32[4, 2], indices: i64[3, 1], updates: f32[3, 2], batch_dims: 1 };
}
