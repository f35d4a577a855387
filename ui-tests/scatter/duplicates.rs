// scatter-duplicates: duplicates: error takes no reduction.
fn main() {
    let _op = stridex::scatter! { data: f32[4, 2], indices: i64[3], updates: f32[3, 2], axis: 0, reduction: add, duplicates: error };
}
