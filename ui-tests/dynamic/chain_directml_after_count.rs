// DirectML's fixed DimensionCount leaves no room for a `_` count.
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 8],
        gather { indices: i64[_] },
        gather { rules: directml, indices: i32[1, 1, 3], axis: 1 },
    };
}
