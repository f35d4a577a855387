//! Training with stridex in the model: an embedding table and a projection, trained with Burn's
//! Adam to map each token to its target vector. stridex's `gather!` does the lookup on Burn's
//! autodiff tensors, and its backward pass (the deterministic scatter-add of the rows'
//! gradients) gives the table's gradient. The example checks that the loss falls, that the
//! first step's table gradient equals Burn's own for `select`, and that two runs from the same
//! start give bit-identical weights.
//!
//! `cargo run -p stridex-bench --example train_embedding [-- --steps N]` (300 steps by default;
//! `STRIDEX_BACKEND=cpu` with `--features cpu` for CubeCL's CPU runtime).

use burn::module::{Module, Param};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};

const VOCAB: usize = 64;
const DIM: usize = 16;
const OUT: usize = 8;
const BATCH: usize = 48;

stridex::gather! {
    static LOOKUP;
    data: f32[64, 16],
    indices: i32[48],
}

#[derive(Module, Debug)]
struct Model {
    table: Param<Tensor<2>>,
    proj: Param<Tensor<2>>,
}

impl Model {
    /// The same start every run: weights from a formula, not a random generator.
    fn new(device: &Device) -> Model {
        let init =
            |n: usize, salt: f32| (0..n).map(|i| (i as f32 * 0.618 + salt).sin() * 0.3).collect::<Vec<_>>();
        let table = Tensor::<2>::from_data(TensorData::new(init(VOCAB * DIM, 0.5), [VOCAB, DIM]), device);
        let proj = Tensor::<2>::from_data(TensorData::new(init(DIM * OUT, 1.5), [DIM, OUT]), device);
        Model { table: Param::from_tensor(table), proj: Param::from_tensor(proj) }
    }

    fn forward(&self, ids: Tensor<1, Int>) -> Tensor<2> {
        let rows: Tensor<2> = LOOKUP.apply(self.table.val(), ids).expect("the lookup's checks pass");
        rows.matmul(self.proj.val())
    }
}

/// Step `step`'s ids: Zipf-like, so a few tokens repeat within a batch and their gradients add.
fn ids(step: usize) -> Vec<i32> {
    let mut s = (step as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..BATCH)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            ((VOCAB as f64).powf(u) - 1.0) as i32
        })
        .collect()
}

/// Trains `steps` steps; returns the losses and the weights' bits.
fn train(device: &Device, steps: usize) -> (Vec<f32>, Vec<u32>) {
    let targets: Vec<f32> = (0..VOCAB * OUT).map(|i| ((i * 7 % 11) as f32 - 5.0) / 5.0).collect();
    let targets = Tensor::<2>::from_data(TensorData::new(targets, [VOCAB, OUT]), device);
    let mut model = Model::new(device);
    let mut optim = AdamConfig::new().init();
    let mut losses = Vec::with_capacity(steps);
    for step in 0..steps {
        let ids = Tensor::<1, Int>::from_data(TensorData::new(ids(step), [BATCH]), device);
        let want = targets.clone().select(0, ids.clone());
        let loss = (model.forward(ids) - want).powf_scalar(2.0).mean();
        losses.push(loss.clone().into_scalar());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(0.05, model, grads);
    }
    let bits = [model.table.val(), model.proj.val()]
        .into_iter()
        .flat_map(|t| t.into_data().try_to_vec::<f32>().expect("f32 weights"))
        .map(f32::to_bits)
        .collect();
    (losses, bits)
}

/// The first step's table gradient through stridex's lookup and through Burn's `select`.
fn first_gradients(device: &Device) -> (Vec<f32>, Vec<f32>) {
    let model = Model::new(device);
    let ids = Tensor::<1, Int>::from_data(TensorData::new(ids(0), [BATCH]), device);
    let upstream: Vec<f32> = (0..BATCH * DIM).map(|i| ((i * 13 % 17) as f32 - 8.0) / 7.0).collect();
    let upstream = Tensor::<2>::from_data(TensorData::new(upstream, [BATCH, DIM]), device);
    let grad = |rows: Tensor<2>| {
        let grads = (rows * upstream.clone()).sum().backward();
        model.table.val().grad(&grads).expect("the table's gradient").into_data().try_to_vec::<f32>().unwrap()
    };
    let ours = grad(LOOKUP.apply(model.table.val(), ids.clone()).expect("the lookup's checks pass"));
    (ours, grad(model.table.val().select(0, ids)))
}

fn main() -> Result<(), stridex::Error> {
    let steps = std::env::args()
        .skip_while(|a| a != "--steps")
        .nth(1)
        .map(|n| n.parse().expect("--steps takes a number"))
        .unwrap_or(300);
    let stridex_device = stridex::Device::default_device()?;
    println!("device: {}", stridex_device.description());
    let device = stridex_device.burn_device().autodiff();

    let (ours, burns) = first_gradients(&device);
    let worst = ours.iter().zip(&burns).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst <= 1e-5, "the lookup's gradient differs from Burn's select by {worst}");
    println!("first step: the table's gradient equals Burn's select gradient (largest difference {worst:e})");

    let (losses, weights) = train(&device, steps);
    let (first, last) = (losses[0], losses[losses.len() - 1]);
    println!("{steps} steps of Adam: loss {first:.4} -> {last:.4}");
    assert!(last < first * 0.5, "the loss falls: {first} -> {last}");
    let (again, weights_again) = train(&device, steps);
    assert_eq!(weights, weights_again, "a second run gives the same weights, bit for bit");
    assert_eq!(
        losses.iter().map(|l| l.to_bits()).collect::<Vec<_>>(),
        again.iter().map(|l| l.to_bits()).collect::<Vec<_>>()
    );
    println!("a second run gives bit-identical losses and weights ({} weights)", weights.len());
    Ok(())
}
