// scatter-lanes: an f16 ScatterElements writes single elements, not whole words.
fn main() {
    let _op = stridex::scatter_elements! { data: f16[4, 2], indices: i64[3, 2], updates: f16[3, 2] };
}
