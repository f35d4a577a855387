// scatter-reduction-type: no 64-bit reductions in 32-bit kernels.
fn main() {
    let _op = stridex::scatter! { data: f64[4, 2], indices: i64[3], updates: f64[3, 2], axis: 0, reduction: max };
}
