//! An embedding lookup inside a Burn program: token ids -> rows of the embedding table (a
//! stridex gather on Burn's own device buffers) -> a mean over each sequence, in Burn:
//! `cargo run --features burn --example burn_embedding`.
//!
//! The device is Burn's default (`Device::default()`: wgpu, on lavapipe where there is no GPU;
//! `BURN_DEVICE=cpu` with features `burn,cpu` picks CubeCL's CPU runtime): the gather joins
//! Burn's fusion stream as a custom operation, between Burn's own ops. A `chain!` (the rows of
//! the last position only, one kernel) joins it the same way.

use stridex::burn::burn_tensor::{Device, Int, Tensor, TensorData};

const VOCAB: usize = 1000;
const DIM: usize = 64;
const BATCH: usize = 4;
const SEQ: usize = 16;

stridex::gather! {
    static EMBED;
    data: f32[1000, 64],
    indices: i32[4, 16],
}

// What a decoder reads at each step: the last position's rows, without gathering the others.
stridex::chain! {
    static LAST_TOKEN;
    data: f32[1000, 64],
    gather { indices: i32[4, 16], axis: 0 },
    slice { rules: onnx, starts: [-1], ends: [16], axes: [1] },
}

fn main() -> Result<(), stridex::Error> {
    let device = Device::default();
    let table_values: Vec<f32> = (0..VOCAB * DIM).map(|i| ((i * 37) % 1009) as f32 / 1009.0).collect();
    let table = Tensor::<2>::from_data(TensorData::new(table_values.clone(), [VOCAB, DIM]), &device);
    // Burn set its device up (its first tensor); stridex launches on Burn's client.
    println!("device: {}", stridex::Device::default_device()?.description());
    let ids: Vec<i32> = (0..BATCH * SEQ).map(|i| ((i * 7919 + 3) % VOCAB) as i32).collect();
    let ids = Tensor::<2, Int>::from_data(TensorData::new(ids, [BATCH, SEQ]), &device);

    // Burn scales the table, stridex gathers the rows, Burn pools them: one stream.
    let rows: Tensor<3> = EMBED.apply(table.clone() * 2.0, ids.clone())?;
    let pooled = rows.clone().mean_dim(1); // [4, 1, 64]
    println!("rows {:?} -> pooled {:?}", rows.dims(), pooled.dims());

    // The same with Burn alone, for comparison.
    let last: Tensor<3> = LAST_TOKEN.apply(table.clone() * 2.0, (ids.clone(),))?;
    println!("last position, one fused kernel: {:?}", last.dims());
    let peer = (table * 2.0).select(0, ids.reshape([BATCH * SEQ])).reshape([BATCH, SEQ, DIM]);
    let peer_last = peer.clone().slice([0..BATCH, SEQ - 1..SEQ, 0..DIM]);
    assert_eq!(
        last.into_data().try_to_vec::<f32>().unwrap(),
        peer_last.into_data().try_to_vec::<f32>().unwrap(),
        "the chain's rows equal Burn's select, then slice"
    );
    let (ours, theirs) =
        (rows.into_data().try_to_vec::<f32>().unwrap(), peer.into_data().try_to_vec::<f32>().unwrap());
    assert_eq!(ours, theirs, "stridex's rows equal Burn's select");
    let pooled = pooled.into_data().try_to_vec::<f32>().unwrap();
    println!("sequence 0, first 4 features of the mean: {:?}", &pooled[..4]);
    println!("every gathered row equals Burn's select of the same ids, and the chain's its last position");
    Ok(())
}
