// scatter-in-place: two data coordinates share an element.
fn main() {
    let _op = stridex::scatter! { data: f32[4, 2] strides [1, 1], indices: i64[3], updates: f32[3, 2], axis: 0 };
}
