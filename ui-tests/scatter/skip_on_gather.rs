// scatter-policies: skip drops a scatter update; a gather has none.
fn main() {
    let _op = stridex::gather! { data: f32[4, 2], indices: i64[3], axis: 0, out_of_range: skip };
}
