fn main() {
    // A stage's s[..] ranges are lowered against the shape it receives ([4, 10] here).
    let _ = stridex::chain! {
        data: f32[20, 10],
        gather { indices: i64[4] },
        slice { s[.., 1..12] },
    };
}
