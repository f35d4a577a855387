// scatter-indices: the indices follow the gather rules (ScatterND-18 takes int64).
fn main() {
    let _op = stridex::scatter_nd! { data: f32[4, 2], indices: i32[3, 1], updates: f32[3, 2] };
}
