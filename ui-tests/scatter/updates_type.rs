// scatter-updates-type: the updates have the data's type.
fn main() {
    let _op = stridex::scatter_nd! { data: f32[4, 2], indices: i64[3, 1], updates: f16[3, 2] };
}
