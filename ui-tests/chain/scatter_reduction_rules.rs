// The scatter stage's rules are its rule set's: DirectML SCATTER has no reduction.
fn main() {
    let _ = stridex::chain! {
        data: f32[6, 8],
        gather { indices: i32[6], axis: 0 },
        scatter_elements { rules: directml, into: f32[16, 8], indices: i32[6, 8], axis: 0, reduction: add },
    };
}
