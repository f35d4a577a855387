//! The scatter cases: an embedding's backward pass (a scatter-add of gradient rows by
//! Zipf-distributed ids), a KV-cache write (rows to slots, in place) and ScatterElements add
//! with random duplicates. Each times stridex's in-place `launch`, the device copy of the bytes
//! the scatter must move, Burn's in-place op on the same device and a serial loop on the host,
//! and checks stridex's and Burn's results once against that loop.
//!
//! Bytes moved: the updates and the indices read once, every destination element touched read
//! and written once (a destination written many times is still credited once: the bytes any
//! implementation must move).

use crate::cases::outcome;
use crate::measure::{burn_timer, Env, Timer};
use crate::report::{Outcome, StepParts, Targets};
use burn::tensor::{DType, Device, IndexingUpdateOp, Int, Tensor, TensorData};
use half::f16;
use stridex::Element;

pub const EMBEDDING_BACKWARD: &str = "embedding backward f32[32000,1024] += [16384,1024] by Zipf ids";
pub const KV_CACHE_WRITE: &str = "KV-cache write f16[32768,8,128] <- [2048,8,128] at slots";
pub const ELEMENTS_ADD: &str = "ScatterElements add f32[4096,4096] axis 1 <- [4096,512]";
/// Bytes of the training step's gradient table, f32[32000, 1024].
pub const TRAINING_TABLE_BYTES: usize = 32000 * 1024 * 4;

pub const TRAINING_STEP: &str = "training step: lookup f32[32000,1024] <- 16384 Zipf ids, fwd + bwd";
pub const ALL: [&str; 4] = [EMBEDDING_BACKWARD, KV_CACHE_WRITE, ELEMENTS_ADD, TRAINING_STEP];

/// A small deterministic generator (xorshift64*), so every run scatters the same ids.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` ids in `0..vocab` drawn from Zipf(1), as token ids in text are: a few repeat very often.
pub(crate) fn zipf_ids(n: usize, vocab: usize, rng: &mut Rng) -> Vec<i32> {
    let mut cdf = Vec::with_capacity(vocab);
    let mut acc = 0.0;
    for k in 1..=vocab {
        acc += 1.0 / k as f64;
        cdf.push(acc);
    }
    (0..n)
        .map(|_| {
            let u = rng.unit() * acc;
            cdf.partition_point(|&c| c < u).min(vocab - 1) as i32
        })
        .collect()
}

/// Multiples of 1/64 below 1 in size: sums of a few thousand are exact in f32, so every order
/// of adding them (Burn's atomics too) gives the serial loop's bits.
pub(crate) fn exact_values(n: usize, rng: &mut Rng) -> Vec<f32> {
    (0..n).map(|_| (rng.next() % 101) as f32 / 64.0 - 0.78125).collect()
}

pub(crate) fn assert_bits<T: Element>(what: &str, case: &str, got: &[T], expected: &[T]) {
    assert_eq!(got.len(), expected.len(), "{case}: {what} length");
    if let Some(i) = (0..got.len()).find(|&i| T::bytes(&got[i..i + 1]) != T::bytes(&expected[i..i + 1])) {
        panic!("{case}: {what} element {i} = {:?}, expected {:?}", got[i], expected[i]);
    }
}

/// The bytes a scatter moves: updates and ids read, touched destination elements read and
/// written.
fn scatter_bytes(updates: usize, ids: usize, touched: usize, elem: usize) -> usize {
    updates * elem + ids + 2 * touched * elem
}

/// A timer of Burn's in-place `op` on `device`: each call updates the tensor the last left,
/// held uniquely between calls so that Burn writes it in place.
fn in_place<'a, const D: usize>(
    device: &Device,
    tensor: Tensor<D>,
    op: impl Fn(Tensor<D>) -> Tensor<D> + 'a,
) -> Timer<'a> {
    let mut acc = Some(tensor);
    burn_timer(device, move || acc = acc.take().map(&op))
}

/// The serial scatter-add: each row of `rows` (rows of `dim`) added into `table`'s row `ids[i]`,
/// in the ids' order.
pub(crate) fn add_rows(table: &mut [f32], ids: &[i32], rows: &[f32], dim: usize) {
    for (row, &id) in rows.chunks_exact(dim).zip(ids) {
        let dest = &mut table[id as usize * dim..][..dim];
        dest.iter_mut().zip(row).for_each(|(d, g)| *d += g);
    }
}

pub(crate) fn distinct(ids: &[i32], size: usize) -> usize {
    let mut seen = vec![false; size];
    ids.iter().filter(|&&i| !std::mem::replace(&mut seen[i as usize], true)).count()
}

/// Gradient rows of a 16384-token batch added into a 32000-row table by id. Burn's
/// `select_assign(0, .., Add)` runs one unit per column, each looping over every id.
pub fn embedding_backward(env: &Env) -> Outcome {
    let name = EMBEDDING_BACKWARD;
    let (vocab, dim, n) = (32000, 1024, 16384);
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let ids = zipf_ids(n, vocab, &mut rng);
    let grads = exact_values(n * dim, &mut rng);
    let table = vec![0.0f32; vocab * dim];
    let serial = |table: &mut [f32]| add_rows(table, &ids, &grads, dim);
    let mut expected = table.clone();
    serial(&mut expected);

    let op = stridex::scatter! {
        data: f32[32000, 1024], indices: i32[16384], updates: f32[16384, 1024], axis: 0, reduction: add,
    };
    let (t, out) = env.scatter(&op, &table, &ids, &grads);
    assert_bits("stridex", name, &out, &expected);

    let peers = env.burn_peers(|dev| {
        let fresh = || Tensor::<2>::from_data(TensorData::new(table.clone(), [vocab, dim]), dev);
        let bi = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [n]), dev);
        let bg = Tensor::<2>::from_data(TensorData::new(grads.clone(), [n, dim]), dev);
        let add = move |t: Tensor<2>| t.select_assign(0, bi.clone(), bg.clone(), IndexingUpdateOp::Add);
        let got = add(fresh()).into_data().try_to_vec::<f32>().unwrap();
        assert_bits("Burn", name, &got, &expected);
        // The table is held uniquely between calls, so Burn writes it in place too.
        Some(in_place(dev, fresh(), add))
    });
    let mut acc = table.clone();
    let rust = Box::new(move || {
        serial(&mut acc);
        std::hint::black_box(&mut acc);
    });
    let bytes = scatter_bytes(n * dim, n * 4, distinct(&ids, vocab) * dim, 4);
    Outcome {
        burn_op: "select_assign(0, Add), in place",
        targets: Targets { copy: 0.4, burn: 5.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

/// A prefill chunk's keys written into a cache of 32768 slots (2048 blocks of 16), at distinct
/// slots in shuffled order: rows of 8 heads x 128 f16.
pub fn kv_cache_write(env: &Env) -> Outcome {
    let name = KV_CACHE_WRITE;
    let (slots, row, n) = (32768, 8 * 128, 2048);
    let mut rng = Rng(0x5eed_0000_cafe_0002);
    let mut order: Vec<i32> = (0..slots as i32).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let ids = order[..n].to_vec();
    let cache: Vec<f16> = (0..slots * row).map(|i| f16::from_bits((i % 30000) as u16)).collect();
    let new: Vec<f16> = (0..n * row).map(|i| f16::from_bits((i % 29989 + 1) as u16)).collect();
    let write = |cache: &mut [f16]| {
        for (r, &slot) in new.chunks_exact(row).zip(&ids) {
            cache[slot as usize * row..][..row].copy_from_slice(r);
        }
    };
    let mut expected = cache.clone();
    write(&mut expected);

    let op = stridex::scatter! {
        data: f16[32768, 8, 128], indices: i32[2048], updates: f16[2048, 8, 128], axis: 0,
        out_of_range: skip,
    };
    let (t, out) = env.scatter(&op, &cache, &ids, &new);
    assert_bits("stridex", name, &out, &expected);

    let peers = env.burn_peers(|dev| {
        if !dev.supports_dtype(DType::F16) {
            return None;
        }
        let fresh =
            || Tensor::<3>::from_data(TensorData::new(cache.clone(), [slots, 8, 128]), (dev, DType::F16));
        let bi = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [n]), dev);
        let bn = Tensor::<3>::from_data(TensorData::new(new.clone(), [n, 8, 128]), (dev, DType::F16));
        let assign = move |t: Tensor<3>| t.select_assign(0, bi.clone(), bn.clone(), IndexingUpdateOp::Assign);
        let got = assign(fresh()).into_data().try_to_vec::<f16>().unwrap();
        assert_bits("Burn", name, &got, &expected);
        Some(in_place(dev, fresh(), assign))
    });
    let mut acc = cache.clone();
    let rust = Box::new(move || {
        write(&mut acc);
        std::hint::black_box(&mut acc);
    });
    // The rows written: read from the updates and written into the cache (none is read back).
    let bytes = 2 * n * row * 2 + n * 4;
    Outcome {
        burn_op: if peers.is_empty() {
            "no f16 on this device"
        } else {
            "select_assign(0, Assign), in place"
        },
        targets: Targets { copy: 0.8, burn: 1.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

/// Every row adds 512 values into its own columns, chosen at random (about 6% of a row's
/// picks repeat a column): PyTorch's `scatter_add_`, ONNX ScatterElements with `add`.
pub fn elements_add(env: &Env) -> Outcome {
    let name = ELEMENTS_ADD;
    let (rows, cols, picks) = (4096, 4096, 512);
    let mut rng = Rng(0x5eed_0e1e_0000_0003);
    let idx: Vec<i32> = (0..rows * picks).map(|_| (rng.next() % cols as u64) as i32).collect();
    let values = exact_values(rows * picks, &mut rng);
    let data = vec![0.0f32; rows * cols];
    let serial = |data: &mut [f32]| {
        for (o, (&i, v)) in idx.iter().zip(&values).enumerate() {
            data[(o / picks) * cols + i as usize] += v;
        }
    };
    let mut expected = data.clone();
    serial(&mut expected);

    let op = stridex::scatter_elements! {
        data: f32[4096, 4096], indices: i32[4096, 512], updates: f32[4096, 512], axis: 1, reduction: add,
    };
    let (t, out) = env.scatter(&op, &data, &idx, &values);
    assert_bits("stridex", name, &out, &expected);

    let peers = env.burn_peers(|dev| {
        let fresh = || Tensor::<2>::from_data(TensorData::new(data.clone(), [rows, cols]), dev);
        let bi = Tensor::<2, Int>::from_data(TensorData::new(idx.clone(), [rows, picks]), dev);
        let bv = Tensor::<2>::from_data(TensorData::new(values.clone(), [rows, picks]), dev);
        let add = move |t: Tensor<2>| t.scatter(1, bi.clone(), bv.clone(), IndexingUpdateOp::Add);
        let got = add(fresh()).into_data().try_to_vec::<f32>().unwrap();
        assert_bits("Burn", name, &got, &expected);
        Some(in_place(dev, fresh(), add))
    });
    let mut acc = data.clone();
    let rust = Box::new(move || {
        serial(&mut acc);
        std::hint::black_box(&mut acc);
    });
    let touched: usize = idx.chunks_exact(picks).map(|r| distinct(r, cols)).sum();
    let bytes = scatter_bytes(rows * picks, rows * picks * 4, touched, 4);
    Outcome {
        burn_op: "scatter(1, Add), in place",
        targets: Targets { copy: 0.4, burn: 1.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

/// One training step of an embedding's lookup on Burn's autodiff: the rows of 16384 Zipf ids
/// and the backward pass from them (Burn seeds the rows' gradient with ones) to the table's
/// gradient. stridex's `gather!` (whose backward pass is its deterministic scatter-add) against
/// Burn's `select` (whose backward pass is `select_assign`), each timed from the table to its
/// gradient on the device; the gradient (each row's id count) is checked bit for bit, and
/// stridex's is the same bits over 10 steps. Bytes: the lookup's rows read and written and its
/// ids, the zeroed gradient table written, the scatter-add's bytes.
pub fn training_step(env: &Env) -> Outcome {
    let name = TRAINING_STEP;
    let (vocab, dim, n) = (32000, 1024, 16384);
    let mut rng = Rng(0x5eed_7a1e_0000_0004);
    let ids = zipf_ids(n, vocab, &mut rng);
    let table: Vec<f32> = (0..vocab * dim).map(|i| (i % 251) as f32 / 8.0).collect();
    let mut expected = vec![0.0f32; vocab * dim];
    for &id in &ids {
        expected[id as usize * dim..][..dim].iter_mut().for_each(|d| *d += 1.0);
    }

    let lookup = stridex::gather! { data: f32[32000, 1024], indices: i32[16384] };
    // A step's tensors on `dev`, and one step: the table's gradient through `forward`.
    type Inputs = (Tensor<2>, Tensor<1, Int>);
    let inputs = |dev: &Device| -> Inputs {
        let t = Tensor::<2>::from_data(TensorData::new(table.clone(), [vocab, dim]), dev).require_grad();
        (t, Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [n]), dev))
    };
    let step = |(t, i): &Inputs, forward: &dyn Fn(Tensor<2>, Tensor<1, Int>) -> Tensor<2>| {
        let grads = forward(t.clone(), i.clone()).backward();
        t.grad(&grads).expect("the table requires its gradient")
    };
    let ours = |t: Tensor<2>, i: Tensor<1, Int>| lookup.apply(t, i).expect("lookup");
    let dev = env.device.clone().autodiff();
    let x = inputs(&dev);
    let first = step(&x, &ours).into_data().try_to_vec::<f32>().unwrap();
    assert_bits("stridex", name, &first, &expected);
    for _ in 0..9 {
        let again = step(&x, &ours).into_data().try_to_vec::<f32>().unwrap();
        assert_bits("stridex (repeated)", name, &again, &first);
    }
    let t = burn_timer(&dev, || step(&x, &ours));

    let peers = env.burn_peers(|dev| {
        let dev = dev.clone().autodiff();
        let theirs = |t: Tensor<2>, i: Tensor<1, Int>| t.select(0, i);
        let x = inputs(&dev);
        assert_bits("Burn", name, &step(&x, &theirs).into_data().try_to_vec::<f32>().unwrap(), &expected);
        Some(burn_timer(&dev, move || step(&x, &theirs)))
    });
    let (mut rows, ones) = (vec![0.0f32; n * dim], vec![1.0f32; n * dim]);
    let mut grad = vec![0.0f32; vocab * dim];
    let (table, ids_read) = (&table, &ids);
    let rust = Box::new(move || {
        for (row, &id) in rows.chunks_exact_mut(dim).zip(ids_read) {
            row.copy_from_slice(&table[id as usize * dim..][..dim]);
        }
        grad.fill(0.0);
        for (row, &id) in ones.chunks_exact(dim).zip(ids_read) {
            let dest = &mut grad[id as usize * dim..][..dim];
            dest.iter_mut().zip(row).for_each(|(d, g)| *d += g);
        }
        std::hint::black_box((&mut rows, &mut grad));
    });
    // What any step on this device spends, timed apart: Burn's seed of the rows' gradient (its
    // `backward` fills ones of the rows' shape), stridex's forward alone, and the dense gradient
    // table written once (Burn's own zeros of its shape).
    let plain = &env.device;
    let (seed, _) = env.burn(plain, || Tensor::<2>::ones([n, dim], plain));
    let t0 = Tensor::<2>::from_data(TensorData::new(table.clone(), [vocab, dim]), plain);
    let i0 = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [n]), plain);
    let (forward, _) =
        env.burn(plain, || -> Tensor<2> { lookup.apply(t0.clone(), i0.clone()).expect("lookup") });
    let (table_written, _) = env.burn(plain, || Tensor::<2>::zeros([vocab, dim], plain));
    let (tracked_forward, _) = env.burn(&dev, || -> Tensor<2> { ours(x.0.clone(), x.1.clone()) });
    let forward_bytes = 2 * n * dim * 4 + n * 4;
    let bytes =
        forward_bytes + TRAINING_TABLE_BYTES + scatter_bytes(n * dim, n * 4, distinct(&ids, vocab) * dim, 4);
    let o = outcome(env, name, bytes, t, rust, peers);
    let forward_at_copy = o.copy * forward_bytes as f64 / bytes as f64;
    Outcome {
        step_parts: Some(StepParts { seed, forward, forward_at_copy, table_written, tracked_forward }),
        burn_op: "select, its autodiff backward",
        targets: Targets { copy: 0.0, burn: 3.0 },
        ..o
    }
}
