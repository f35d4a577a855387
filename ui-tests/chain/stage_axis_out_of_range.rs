// Stage 2's axis is checked on the shape stage 1 gives ([4, 16]: rank 2), not on the data's.
fn main() {
    let _ = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[4], axis: 0 },
        gather { indices: i64[2], axis: 2 },
    };
}
