// A scatter stage writes into its `into` tensor, which no stage reads: it is the chain's last.
fn main() {
    let _ = stridex::chain! {
        data: f32[6, 8],
        scatter { into: f32[16, 8], indices: i32[6], axis: 0 },
        slice { s[0..4, ..] },
    };
}
