// scatter-lanes: f16 rows of 3 elements are not whole 32-bit words.
fn main() {
    let _op = stridex::scatter! { data: f16[4, 3], indices: i64[2], updates: f16[2, 3] };
}
