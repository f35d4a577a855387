// scatter-updates-shape: the updates have the gather's output sizes.
fn main() {
    let _op = stridex::scatter! { data: f32[4, 2], indices: i64[3], updates: f32[3, 4], axis: 0 };
}
