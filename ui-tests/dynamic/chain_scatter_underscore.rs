// `_` in a scatter stage's indices is the chain's count, and this chain has fixed sizes.
fn main() {
    let _ = stridex::chain! {
        data: f32[6, 3, 8],
        slice { s[.., 1..2, ..] },
        scatter { into: f32[16, 1, 8], indices: i32[_], axis: 0 },
    };
}
