//! A `_` leading size against fixed-shape ops: the same gather (an embedding lookup), the same
//! slice (a batch crop), the same image chain (from NCHW, and from NHWC images viewed as NCHW
//! through strides) and the same KV write from a QKV projection (a chain that ends in a
//! scatter), at several counts, each count once with an op written for that
//! count and once with the one `_` op, on device buffers, beside the copy of the same bytes and
//! Burn's op. And what a count never seen before costs: a fixed op must be built and its kernel
//! compiled; the `_` op launches the kernel it already has.

use crate::measure::{read, sync, upload, Env};
use burn::tensor::{s, IndexingUpdateOp, Int, Tensor, TensorData};
use std::time::Instant;
use stridex::cubecl::client::Client;
use stridex::{GatherOp, Operand, SliceOp, SliceRange};

/// One count: seconds per launch of the fixed op, the `_` op, the copy and Burn.
pub struct CountRow {
    pub count: usize,
    pub bytes: usize,
    pub fixed: f64,
    pub dynamic: f64,
    pub copy: f64,
    pub burn: f64,
}

pub struct DynamicOutcome {
    pub case: &'static str,
    pub rows: Vec<CountRow>,
    /// Median seconds from a count never seen to its result: building a fixed op for it and
    /// its first launch (kernel compile included), against the `_` op's launch at that count.
    pub new_count_fixed: f64,
    pub new_count_dynamic: f64,
}

impl CountRow {
    /// A count's row from its fixed, `_` and Burn seconds, with the copy of half its `bytes`
    /// (the bytes read, or written) timed beside them.
    fn beside_copy(env: &Env, count: usize, bytes: usize, [fixed, dynamic, burn]: [f64; 3]) -> CountRow {
        CountRow { count, bytes, fixed, dynamic, copy: env.copy(bytes / 2), burn }
    }

    pub fn gbps(&self, secs: f64) -> f64 {
        self.bytes as f64 / secs / 1e9
    }
}

pub fn all(env: &Env) -> Vec<DynamicOutcome> {
    vec![embedding(env), batch_crop(env), batch_chain(env), batch_nhwc(env), kv_from_qkv(env)]
}

/// The median seconds of `f` at each of `counts`, synced: from a count to its result.
fn first_use(client: &Client, counts: &[usize], mut f: impl FnMut(usize)) -> f64 {
    let mut t: Vec<f64> = counts
        .iter()
        .map(|&n| {
            let start = Instant::now();
            f(n);
            sync(client);
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn check(what: &str, case: &str, count: usize, got: &[f32], expected: &[f32]) {
    crate::measure::check(what, &format!("{case} at count {count}"), got, expected);
}

const ROWS: usize = 16384;
const DIM: usize = 1024;
/// Five counts for the first-use timing, drawn per run, so no in-process kernel cache holds
/// their fixed kernels (main.rs turns Mesa's on-disk shader cache off).
fn new_counts(lo: usize, span: usize) -> [usize; 5] {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let base = lo + (nanos as usize ^ std::process::id() as usize) % span;
    [base, base + 1, base + 2, base + 3, base + 4]
}

fn embedding(env: &Env) -> DynamicOutcome {
    let case = "embedding f32[16384,1024] <- i32[_] vs i32[count]";
    let c = env.client;
    let table: Vec<f32> = (0..ROWS * DIM).map(|i| i as f32).collect();
    stridex::gather! { static ANY; data: f32[16384, 1024], indices: i32[_] }
    let fixed: [(usize, GatherOp<f32, i32>); 3] = [
        (256, stridex::gather! { data: f32[16384, 1024], indices: i32[256] }),
        (2048, stridex::gather! { data: f32[16384, 1024], indices: i32[2048] }),
        (16384, stridex::gather! { data: f32[16384, 1024], indices: i32[16384] }),
    ];
    let data = upload(c, &table, ANY.buffer_bytes_at(1, Operand::Data).unwrap());
    let bt = Tensor::<2>::from_data(TensorData::new(table.clone(), [ROWS, DIM]), &env.device);
    let mut rows = Vec::new();
    for (count, op) in &fixed {
        let count = *count;
        let ids: Vec<i32> = (0..count).map(|i| ((i * 7919 + 13) % ROWS) as i32).collect();
        let expected: Vec<f32> =
            ids.iter().flat_map(|&i| table[i as usize * DIM..][..DIM].to_vec()).collect();
        let idx = upload(c, &ids, ANY.buffer_bytes_at(count, Operand::Indices).unwrap());
        let out_f = c.empty(op.buffer_bytes(Operand::Output).unwrap());
        let out_d = c.empty(ANY.buffer_bytes_at(count, Operand::Output).unwrap());
        let t_fixed = env.synced_median(|| {
            op.launch(c, &data, &idx, &out_f).expect("fixed launch");
        });
        let t_dyn = env.synced_median(|| {
            ANY.launch_at(c, count, &data, &idx, &out_d).expect("dynamic launch");
        });
        check("fixed", case, count, &read(c, &out_f, count * DIM), &expected);
        check("`_`", case, count, &read(c, &out_d, count * DIM), &expected);
        let bi = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [count]), &env.device);
        let (t_burn, bo) = env.burn(&env.device, || bt.clone().select(0, bi.clone()));
        check("Burn", case, count, &bo.into_data().try_to_vec::<f32>().unwrap(), &expected);
        let bytes = 2 * count * DIM * 4 + count * 4;
        rows.push(CountRow::beside_copy(env, count, bytes, [t_fixed, t_dyn, t_burn]));
    }

    // A count never seen: the fixed op is built (as a run-time builder, the macro's equivalent)
    // and its kernel compiled on first launch; the `_` op launches its one kernel.
    let new = new_counts(300, 600);
    let max = new[4];
    let ids: Vec<i32> = (0..max).map(|i| (i % ROWS) as i32).collect();
    let idx = upload(c, &ids, ANY.buffer_bytes_at(max, Operand::Indices).unwrap());
    let out = c.empty(ANY.buffer_bytes_at(max, Operand::Output).unwrap());
    let new_count_fixed = first_use(c, &new, |n| {
        let op = stridex::Gather::onnx().data::<f32>(&[ROWS, DIM]).indices::<i32>(&[n]).build().unwrap();
        op.launch(c, &data, &idx, &out).expect("fixed first launch");
    });
    let new_count_dynamic =
        first_use(c, &new, |n| ANY.launch_at(c, n, &data, &idx, &out).expect("dynamic launch"));
    DynamicOutcome { case, rows, new_count_fixed, new_count_dynamic }
}

fn batch_crop(env: &Env) -> DynamicOutcome {
    let case = "crop f32[_,3,256,256] -> [_,3,224,224] vs [count,3,..]";
    let c = env.client;
    let (h, w, k, off) = (256usize, 256usize, 224usize, 16usize);
    stridex::slice! { static ANY; input: f32[_, 3, 256, 256], s[.., .., 16..240, 16..240] }
    let fixed: [(usize, SliceOp<f32>); 3] = [
        (1, stridex::slice! { input: f32[1, 3, 256, 256], s[.., .., 16..240, 16..240] }),
        (8, stridex::slice! { input: f32[8, 3, 256, 256], s[.., .., 16..240, 16..240] }),
        (32, stridex::slice! { input: f32[32, 3, 256, 256], s[.., .., 16..240, 16..240] }),
    ];
    let mut rows = Vec::new();
    for (count, op) in &fixed {
        let count = *count;
        let x: Vec<f32> = (0..count * 3 * h * w).map(|i| i as f32).collect();
        let expected: Vec<f32> = (0..count * 3)
            .flat_map(|p| {
                let x = &x;
                (off..off + k).flat_map(move |r| x[(p * h + r) * w + off..][..k].to_vec())
            })
            .collect();
        let input = upload(c, &x, ANY.buffer_bytes_at(count, Operand::Input).unwrap());
        let out_f = c.empty(op.buffer_bytes(Operand::Output).unwrap());
        let out_d = c.empty(ANY.buffer_bytes_at(count, Operand::Output).unwrap());
        let t_fixed = env.synced_median(|| {
            op.launch(c, &input, &out_f).expect("fixed launch");
        });
        let t_dyn = env.synced_median(|| {
            ANY.launch_at(c, count, &input, &out_d).expect("dynamic launch");
        });
        let n = count * 3 * k * k;
        check("fixed", case, count, &read(c, &out_f, n), &expected);
        check("`_`", case, count, &read(c, &out_d, n), &expected);
        let bx = Tensor::<4>::from_data(TensorData::new(x.clone(), [count, 3, h, w]), &env.device);
        // Burn's slice is a view; flattening materializes it, as stridex writes its result.
        let (t_burn, bo) = env.burn(&env.device, || {
            bx.clone().slice(s![.., .., off..off + k, off..off + k]).flatten::<1>(0, 3)
        });
        check("Burn", case, count, &bo.into_data().try_to_vec::<f32>().unwrap(), &expected);
        let bytes = 2 * n * 4;
        rows.push(CountRow::beside_copy(env, count, bytes, [t_fixed, t_dyn, t_burn]));
    }
    let new_counts = new_counts(2, 40);
    let max = new_counts[4];
    let x = vec![0f32; max * 3 * h * w];
    let input = upload(c, &x, ANY.buffer_bytes_at(max, Operand::Input).unwrap());
    let out = c.empty(ANY.buffer_bytes_at(max, Operand::Output).unwrap());
    let new_count_fixed = first_use(c, &new_counts, |n| {
        let op = stridex::Slice::directml()
            .input::<f32>(&[n, 3, h, w])
            .window(&[0, 0, off, off], &[n, 3, k, k], &[1, 1, 1, 1])
            .build()
            .unwrap();
        op.launch(c, &input, &out).expect("fixed first launch");
    });
    let new_count_dynamic =
        first_use(c, &new_counts, |n| ANY.launch_at(c, n, &input, &out).expect("dynamic launch"));
    DynamicOutcome { case, rows, new_count_fixed, new_count_dynamic }
}

/// A chain with a `_` batch: crop + flip, BGR->RGB, 2x down of an NCHW batch, one kernel.
fn batch_chain(env: &Env) -> DynamicOutcome {
    stridex::chain! {
        static ANY;
        data: f32[_, 3, 256, 256],
        slice { s[.., .., 16..240, 16..240;-1] },
        gather { indices: i32[3], axis: 1, out_of_range: clamp },
        slice { s[.., .., ..;2, ..;2] },
    }
    let fixed: [(usize, ImageChain); 3] = [
        (
            1,
            stridex::chain! {
                data: f32[1, 3, 256, 256],
                slice { s[.., .., 16..240, 16..240;-1] },
                gather { indices: i32[3], axis: 1, out_of_range: clamp },
                slice { s[.., .., ..;2, ..;2] },
            },
        ),
        (
            8,
            stridex::chain! {
                data: f32[8, 3, 256, 256],
                slice { s[.., .., 16..240, 16..240;-1] },
                gather { indices: i32[3], axis: 1, out_of_range: clamp },
                slice { s[.., .., ..;2, ..;2] },
            },
        ),
        (
            32,
            stridex::chain! {
                data: f32[32, 3, 256, 256],
                slice { s[.., .., 16..240, 16..240;-1] },
                gather { indices: i32[3], axis: 1, out_of_range: clamp },
                slice { s[.., .., ..;2, ..;2] },
            },
        ),
    ];
    image_chain(env, "chain f32[_,3,256,256]: crop 224 + flip, BGR->RGB, 2x down", &ANY, &fixed, None)
}

/// The same chain from NHWC images (`[b, 256, 256, 3]` in memory) viewed as NCHW through
/// strides, NCHW out: a model server's preprocessing with a batch that changes per request.
fn batch_nhwc(env: &Env) -> DynamicOutcome {
    stridex::chain! {
        static ANY;
        data: f32[_, 3, 256, 256] strides [196608, 1, 768, 3],
        slice { s[.., .., 16..240, 16..240;-1] },
        gather { indices: i32[3], axis: 1, out_of_range: clamp },
        slice { s[.., .., ..;2, ..;2] },
    }
    let fixed: [(usize, ImageChain); 3] = [
        (
            1,
            stridex::chain! {
                data: f32[1, 3, 256, 256] strides [196608, 1, 768, 3],
                slice { s[.., .., 16..240, 16..240;-1] },
                gather { indices: i32[3], axis: 1, out_of_range: clamp },
                slice { s[.., .., ..;2, ..;2] },
            },
        ),
        (
            8,
            stridex::chain! {
                data: f32[8, 3, 256, 256] strides [196608, 1, 768, 3],
                slice { s[.., .., 16..240, 16..240;-1] },
                gather { indices: i32[3], axis: 1, out_of_range: clamp },
                slice { s[.., .., ..;2, ..;2] },
            },
        ),
        (
            32,
            stridex::chain! {
                data: f32[32, 3, 256, 256] strides [196608, 1, 768, 3],
                slice { s[.., .., 16..240, 16..240;-1] },
                gather { indices: i32[3], axis: 1, out_of_range: clamp },
                slice { s[.., .., ..;2, ..;2] },
            },
        ),
    ];
    let case = "NHWC f32[_,256,256,3] -> NCHW: crop 224 + flip, BGR->RGB, 2x down";
    image_chain(env, case, &ANY, &fixed, Some([196608, 1, 768, 3]))
}

/// A KV write from the QKV projection: the K third of each new token's rows `[_, 3, 8, 128]`
/// written at its slot of a cache of 4096 slots, in place, by one chain (a slice, then a
/// scatter that reads each K row where it lies: no intermediate). Counts of a decode step, a
/// short prefill and a long one; Burn slices the QKV and `select_assign`s the cache, held
/// uniquely between calls so that it writes in place too.
fn kv_from_qkv(env: &Env) -> DynamicOutcome {
    const SLOTS: usize = 4096;
    const ROW: usize = 8 * 128;
    let case = "KV write from QKV f32[_,3,8,128], K -> cache [4096,1,8,128] at slots";
    stridex::chain! {
        static ANY;
        data: f32[_, 3, 8, 128],
        slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
        scatter { into: f32[4096, 1, 8, 128], indices: i32[_], axis: 0, out_of_range: skip },
    }
    let fixed: [(usize, KvWrite); 3] = [
        (
            1,
            stridex::chain! {
                data: f32[1, 3, 8, 128],
                slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
                scatter { into: f32[4096, 1, 8, 128], indices: i32[1], axis: 0, out_of_range: skip },
            },
        ),
        (
            64,
            stridex::chain! {
                data: f32[64, 3, 8, 128],
                slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
                scatter { into: f32[4096, 1, 8, 128], indices: i32[64], axis: 0, out_of_range: skip },
            },
        ),
        (
            1024,
            stridex::chain! {
                data: f32[1024, 3, 8, 128],
                slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
                scatter { into: f32[4096, 1, 8, 128], indices: i32[1024], axis: 0, out_of_range: skip },
            },
        ),
    ];
    let c = env.client;
    let dev = &env.device;
    let cache: Vec<f32> = (0..SLOTS * ROW).map(|i| -(i as f32)).collect();
    // 2654435761 is odd, so `t * 2654435761 mod 4096` never repeats for t < 4096.
    let slots_of = |n: usize| (0..n).map(|t| (t * 2654435761 % SLOTS) as i32).collect::<Vec<i32>>();
    let qkv_of = |n: usize| (0..n * 3 * ROW).map(|i| (i % 65536) as f32 * 0.5).collect::<Vec<f32>>();
    let mut rows = Vec::new();
    for (count, op) in &fixed {
        let count = *count;
        let (qkv, slots) = (qkv_of(count), slots_of(count));
        let mut expected = cache.clone();
        for (t, &slot) in slots.iter().enumerate() {
            expected[slot as usize * ROW..][..ROW].copy_from_slice(&qkv[(3 * t + 1) * ROW..][..ROW]);
        }
        let data = upload(c, &qkv, ANY.buffer_bytes_at(count, Operand::Data).unwrap());
        let idx = upload(c, &slots, ANY.index_buffer_bytes_at(count, 0).unwrap());
        let out_f = upload(c, &cache, op.buffer_bytes(Operand::Output).unwrap());
        let out_d = upload(c, &cache, ANY.buffer_bytes(Operand::Output).unwrap());
        let t_fixed = env.synced_median(|| {
            op.launch(c, &data, &[&idx], &out_f).expect("fixed launch");
        });
        let t_dyn = env.synced_median(|| {
            ANY.launch_at(c, count, &data, &[&idx], &out_d).expect("dynamic launch");
        });
        check("fixed", case, count, &read(c, &out_f, SLOTS * ROW), &expected);
        check("`_`", case, count, &read(c, &out_d, SLOTS * ROW), &expected);
        let bq = Tensor::<4>::from_data(TensorData::new(qkv, [count, 3, 8, 128]), dev);
        let bs = Tensor::<1, Int>::from_data(TensorData::new(slots, [count]), dev);
        let fresh = Tensor::<4>::from_data(TensorData::new(cache.clone(), [SLOTS, 1, 8, 128]), dev);
        let (t_burn, written) = env.burn_in_place(dev, fresh, |t| {
            t.select_assign(0, bs.clone(), bq.clone().slice(s![.., 1..2, .., ..]), IndexingUpdateOp::Assign)
        });
        check("Burn", case, count, &written.into_data().try_to_vec::<f32>().unwrap(), &expected);
        // The K rows read and written, and the slots.
        let bytes = 2 * count * ROW * 4 + count * 4;
        rows.push(CountRow::beside_copy(env, count, bytes, [t_fixed, t_dyn, t_burn]));
    }

    // A count never seen: the fixed chain is built and its kernels compiled on first launch;
    // the `_` chain launches the pair it has.
    let new = new_counts(100, 800);
    let max = new[4];
    let (qkv, slots) = (qkv_of(max), slots_of(max));
    let data = upload(c, &qkv, ANY.buffer_bytes_at(max, Operand::Data).unwrap());
    let idx = upload(c, &slots, ANY.index_buffer_bytes_at(max, 0).unwrap());
    let out = upload(c, &cache, ANY.buffer_bytes_at(max, Operand::Output).unwrap());
    let new_count_fixed = first_use(c, &new, |n| {
        let op = stridex::Chain::data::<f32>(&[n, 3, 8, 128])
            .slice(stridex::Slice::onnx().starts_ends(&[1], &[2]).axes(&[1]))
            .scatter(
                stridex::Scatter::openvino()
                    .data::<f32>(&[SLOTS, 1, 8, 128])
                    .indices::<i32>(&[n])
                    .out_of_range(stridex::OutOfRange::Skip),
            )
            .build()
            .unwrap();
        op.launch(c, &data, &[&idx], &out).expect("fixed first launch");
    });
    let new_count_dynamic =
        first_use(c, &new, |n| ANY.launch_at(c, n, &data, &[&idx], &out).expect("dynamic launch"));
    DynamicOutcome { case, rows, new_count_fixed, new_count_dynamic }
}

type KvWrite = stridex::ChainOp<f32, (i32,)>;

type ImageChain = stridex::ChainOp<f32, (i32,)>;

/// Measures an image chain (`any` with a `_` batch, `fixed` for three batch sizes) on images
/// laid out NCHW, or with `strides` (the NCHW view of NHWC memory).
fn image_chain(
    env: &Env,
    case: &'static str,
    any: &ImageChain,
    fixed: &[(usize, ImageChain)],
    strides: Option<[usize; 4]>,
) -> DynamicOutcome {
    let c = env.client;
    let (h, w, k, off, half) = (256usize, 256usize, 224usize, 16usize, 112usize);
    // Where element (b, ch, y, x) of the NCHW view lies in memory.
    let at = |b: usize, ch: usize, y: usize, x: usize| match strides {
        Some(s) => b * s[0] + ch * s[1] + y * s[2] + x * s[3],
        None => ((b * 3 + ch) * h + y) * w + x,
    };
    let bgr = upload(c, &[2i32, 1, 0], 16);
    let bi = Tensor::<1, Int>::from_data(TensorData::new(vec![2i32, 1, 0], [3]), &env.device);
    let mut rows = Vec::new();
    for (count, op) in fixed {
        let count = *count;
        let x: Vec<f32> = (0..count * 3 * h * w).map(|i| i as f32).collect();
        let n = count * 3 * half * half;
        let expected: Vec<f32> = (0..n)
            .map(|o| {
                let (b, ch, y, x_) =
                    (o / (3 * half * half), o / (half * half) % 3, o / half % half, o % half);
                x[at(b, 2 - ch, off + 2 * y, off + k - 1 - 2 * x_)]
            })
            .collect();
        let input = upload(c, &x, any.buffer_bytes_at(count, Operand::Data).unwrap());
        let out_f = c.empty(op.buffer_bytes(Operand::Output).unwrap());
        let out_d = c.empty(any.buffer_bytes_at(count, Operand::Output).unwrap());
        let t_fixed = env.synced_median(|| {
            op.launch(c, &input, &[&bgr], &out_f).expect("fixed launch");
        });
        let t_dyn = env.synced_median(|| {
            any.launch_at(c, count, &input, &[&bgr], &out_d).expect("dynamic launch");
        });
        check("fixed", case, count, &read(c, &out_f, n), &expected);
        check("`_`", case, count, &read(c, &out_d, n), &expected);
        let bx = match strides {
            Some(_) => Tensor::<4>::from_data(TensorData::new(x.clone(), [count, h, w, 3]), &env.device)
                .permute([0, 3, 1, 2]),
            None => Tensor::<4>::from_data(TensorData::new(x.clone(), [count, 3, h, w]), &env.device),
        };
        let (t_burn, bo) = env.burn(&env.device, || {
            bx.clone()
                .slice(s![.., .., off..off + k, off..off + k])
                .flip([3])
                .select(1, bi.clone())
                .slice(s![.., .., 0..k;2, 0..k;2])
                .flatten::<1>(0, 3)
        });
        check("Burn", case, count, &bo.into_data().try_to_vec::<f32>().unwrap(), &expected);
        // The fused kernel reads the elements the result needs and writes the result.
        let bytes = 2 * n * 4 + 12;
        rows.push(CountRow::beside_copy(env, count, bytes, [t_fixed, t_dyn, t_burn]));
    }
    let new_counts = new_counts(2, 40);
    let max = new_counts[4];
    let x = vec![0f32; max * 3 * h * w];
    let input = upload(c, &x, any.buffer_bytes_at(max, Operand::Data).unwrap());
    let out = c.empty(any.buffer_bytes_at(max, Operand::Output).unwrap());
    let ranges =
        |first: SliceRange| [SliceRange::FULL, SliceRange::FULL, first, SliceRange::new(16, 240).step(-1)];
    let new_count_fixed = first_use(c, &new_counts, |n| {
        let op = stridex::Chain::data_strided::<f32>(&[n, 3, h, w], strides.as_ref().map(|s| &s[..]))
            .slice(stridex::Slice::directml().ranges(&ranges(SliceRange::new(16, 240))))
            .gather(
                stridex::Gather::onnx().indices::<i32>(&[3]).axis(1).out_of_range(stridex::OutOfRange::Clamp),
            )
            .slice(stridex::Slice::directml().ranges(&[
                SliceRange::FULL,
                SliceRange::FULL,
                SliceRange::FULL.step(2),
                SliceRange::FULL.step(2),
            ]))
            .build()
            .unwrap();
        op.launch(c, &input, &[&bgr], &out).expect("fixed first launch");
    });
    let new_count_dynamic =
        first_use(c, &new_counts, |n| any.launch_at(c, n, &input, &[&bgr], &out).expect("dynamic launch"));
    DynamicOutcome { case, rows, new_count_fixed, new_count_dynamic }
}

pub fn print(d: &DynamicOutcome, first: bool) {
    if first {
        println!(
            "\n{:<58} {:>6} {:>8} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9}",
            "`_` leading size vs fixed shape",
            "count",
            "MB",
            "fixed GB/s",
            "`_` GB/s",
            "`_`/fixed",
            "`_`/copy",
            "`_`/Burn",
            "copy GB/s"
        );
    }
    for r in &d.rows {
        println!(
            "{:<58} {:>6} {:>8.1} {:>9.2} {:>9.2} {:>8.2} {:>8.2} {:>8.2} {:>9.2}",
            d.case,
            r.count,
            r.bytes as f64 / 1e6,
            r.gbps(r.fixed),
            r.gbps(r.dynamic),
            r.fixed / r.dynamic,
            r.copy / r.dynamic,
            r.burn / r.dynamic,
            r.gbps(r.copy)
        );
    }
    println!(
        "{:<58} a new count: fixed op built + compiled + run {:.1} ms, `_` op run {:.2} ms",
        d.case,
        d.new_count_fixed * 1e3,
        d.new_count_dynamic * 1e3
    );
}

pub fn json(d: &DynamicOutcome, backend: &str) -> String {
    let rows: Vec<String> = d
        .rows
        .iter()
        .map(|r| {
            format!(
                "{{\"count\": {}, \"bytes\": {}, \"fixed_gbps\": {:.3}, \"dynamic_gbps\": {:.3}, \"copy_gbps\": {:.3}, \"burn_gbps\": {:.3}}}",
                r.count,
                r.bytes,
                r.gbps(r.fixed),
                r.gbps(r.dynamic),
                r.gbps(r.copy),
                r.gbps(r.burn)
            )
        })
        .collect();
    format!(
        "{{\"dynamic\": \"{}\", \"backend\": \"{backend}\", \"rows\": [{}], \"new_count_fixed_ms\": {:.3}, \"new_count_dynamic_ms\": {:.3}}}",
        d.case,
        rows.join(", "),
        d.new_count_fixed * 1e3,
        d.new_count_dynamic * 1e3
    )
}

pub fn markdown(ds: &[DynamicOutcome]) -> String {
    let mut s = String::from(
        "\n## A `_` leading size against fixed shapes\n\nThe same op at several counts, once as an op \
         written for that count (its own kernel) and once as the one op whose leading size is `_` \
         (one kernel for every count, the count a launch argument), on device buffers, beside the \
         copy of the same bytes and Burn 0.22.1's `Tensor` op (fusion stream, synced). Outputs of all three checked against \
         the host. *A new count* is the time from a count never seen to its result: a fixed op \
         must be built and its kernel compiled; the `_` op launches the kernel it has (median of \
         five counts drawn per run, with Mesa's on-disk shader cache off). Rows under a few MB are \
         mostly launch overhead, and lavapipe's noise there is larger than any difference.\n\n| case | count | MB moved | fixed GB/s | `_` GB/s | `_` / fixed | `_` / copy | `_` / Burn |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for d in ds {
        for r in &d.rows {
            s.push_str(&format!(
                "| {} | {} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
                d.case,
                r.count,
                r.bytes as f64 / 1e6,
                r.gbps(r.fixed),
                r.gbps(r.dynamic),
                r.fixed / r.dynamic,
                r.copy / r.dynamic,
                r.burn / r.dynamic
            ));
        }
    }
    s.push('\n');
    for d in ds {
        s.push_str(&format!(
            "- {}: a new count took {:.1} ms with a fixed op (built, compiled, run), {:.2} ms with the `_` op.\n",
            d.case,
            d.new_count_fixed * 1e3,
            d.new_count_dynamic * 1e3
        ));
    }
    s.push_str(
        "\nThe KV write's kernels (a claim of each slot, then the write reading each K row in place) \
         take the count of positions as a launch argument in either form, so a chain written for \
         a new count compiles nothing new either: its first use is building the op.\n",
    );
    s
}
