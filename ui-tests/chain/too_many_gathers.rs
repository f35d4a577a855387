// One fused kernel reads at most 4 index tensors.
fn main() {
    let _ = stridex::chain! {
        data: f32[10, 10],
        gather { indices: i64[10] },
        gather { indices: i64[10] },
        gather { indices: i64[10] },
        gather { indices: i64[10] },
        gather { indices: i64[10] },
    };
}
