// scatter-reduction: DirectML's scatters take no reduction.
fn main() {
    let _op = stridex::scatter_elements! { rules: directml, data: f32[4, 2], indices: i32[3, 2], updates: f32[3, 2], reduction: add };
}
