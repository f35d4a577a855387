// After a `_` count, the first range takes it whole.
fn main() {
    let _ = stridex::chain! {
        data: f32[10, 8],
        gather { indices: i32[_, 3], axis: 0 },
        slice { s[1.., .., 2..6] },
    };
}
