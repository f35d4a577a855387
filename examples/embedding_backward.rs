//! An embedding's backward pass: the gradient of `table.select(0, ids)` for the table is the
//! output gradient's rows added into a zero table by id, repeated ids accumulating. stridex does
//! it with `scatter!` and `reduction: add`, applying each row's updates in id order (no atomics:
//! the same bits every run), and this example checks it against Burn's own autodiff gradient:
//! `cargo run --features burn --example embedding_backward`.

use stridex::burn::burn_tensor::{Device, Int, Tensor, TensorData};

const VOCAB: usize = 512;
const DIM: usize = 64;
const BATCH: usize = 4;
const SEQ: usize = 32;
const N: usize = BATCH * SEQ;

stridex::scatter! {
    static BACKWARD;
    data: f32[512, 64],
    indices: i32[128],
    updates: f32[128, 64],
    axis: 0,
    reduction: add,
}

fn main() -> Result<(), stridex::Error> {
    let device = Device::default();
    // Zipf-like ids: a few tokens repeat many times, as in text.
    let ids: Vec<i32> = (0..N).map(|i| (i * 2654435761usize % 1000) as f64 / 1000.0).map(zipf).collect();
    // Gradients that are multiples of 1/64: every sum is exact, so any order gives the same value.
    let grad: Vec<f32> = (0..N * DIM).map(|i| ((i * 37) % 101) as f32 / 64.0 - 0.75).collect();

    let zeros = vec![0.0f32; VOCAB * DIM];
    let ours = BACKWARD.run(&zeros, &ids, &grad)?;
    println!("device: {}", stridex::Device::default_device()?.description());

    // Burn: the gradient of sum(select(table, ids) * grad) for the table is the same scatter-add.
    let table_values: Vec<f32> = (0..VOCAB * DIM).map(|i| (i % 13) as f32).collect();
    let table = Tensor::<2>::from_data(TensorData::new(table_values, [VOCAB, DIM]), &device)
        .autodiff()
        .require_grad();
    let id_tensor = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [N]), &device);
    let upstream = Tensor::<2>::from_data(TensorData::new(grad.clone(), [N, DIM]), &device);
    let loss = (table.clone().select(0, id_tensor) * upstream).sum();
    let grads = loss.backward();
    let theirs = table.grad(&grads).expect("the table requires its gradient");
    let theirs = theirs.into_data().try_to_vec::<f32>().expect("an f32 gradient");
    assert_eq!(ours.data(), &theirs[..], "stridex's scatter-add equals Burn's gradient");

    let mut counts = vec![0usize; VOCAB];
    ids.iter().for_each(|&i| counts[i as usize] += 1);
    let top = (0..VOCAB).max_by_key(|&i| counts[i]).unwrap_or(0);
    let again = BACKWARD.run(&zeros, &ids, &grad)?;
    assert_eq!(again.data(), ours.data(), "a second run gives the same bits");
    println!(
        "{N} ids, {} distinct; id {top} appears {} times",
        counts.iter().filter(|&&c| c > 0).count(),
        counts[top]
    );
    println!("row {top} of the gradient: {:?}", &ours.data()[top * DIM..][..4]);
    println!("the scatter-add equals Burn's autodiff gradient of select, and repeats bit for bit");
    Ok(())
}

/// An id drawn from a Zipf(1) distribution over the vocabulary by inverting its CDF at `u`.
fn zipf(u: f64) -> i32 {
    let h = |n: usize| (1..=n).map(|k| 1.0 / k as f64).sum::<f64>();
    let total = h(VOCAB);
    let (mut acc, mut k) = (0.0, 0);
    while k < VOCAB - 1 && acc + 1.0 / (k + 1) as f64 <= u * total {
        acc += 1.0 / (k + 1) as f64;
        k += 1;
    }
    k as i32
}
