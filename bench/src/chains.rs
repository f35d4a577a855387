//! Chains fused into one kernel against the same stages run one by one (each stage's own op,
//! launched on device buffers, the intermediates staying on the device) and against Burn's
//! `Tensor` ops doing the same pipeline (in Burn's fusion stream), in one run on one device.
//!
//! Bytes moved are counted per implementation: a stage reads each of its output elements (and
//! its indices) once and writes each once; the fused kernel reads the data elements the output
//! needs and the indices it reads, and writes the output once. So the fused GB/s and the staged
//! GB/s are each over their own bytes, and the speedup is the ratio of times.

use crate::measure::{check, median, medians_interleaved, read, sync, upload, Env};
use burn::tensor::{s, Int, Tensor, TensorData};
use stridex::cubecl::server::Handle;
use stridex::{ChainOp, Element, GatherOp, IndexTypes, Operand, SliceOp};

/// One chain's medians (seconds) and bytes moved.
pub struct ChainOutcome {
    pub case: &'static str,
    pub stages: &'static str,
    pub fused_bytes: usize,
    pub staged_bytes: usize,
    pub fused: f64,
    pub staged: f64,
    /// Burn's `Tensor` ops running the same pipeline, op by op in its fusion stream (credited
    /// the staged bytes).
    pub burn: f64,
    pub burn_ops: &'static str,
}

impl ChainOutcome {
    pub fn speedup(&self) -> f64 {
        self.staged / self.fused
    }

    pub fn byte_ratio(&self) -> f64 {
        self.staged_bytes as f64 / self.fused_bytes as f64
    }
}

pub fn all(env: &Env) -> Vec<ChainOutcome> {
    let mut all = vec![embedding_last_token(env), image_pipeline(env), image_to_model(env)];
    all.extend(kv_write_of_projection(env));
    all.push(moe_combine(env));
    all
}

/// A stage run on its own: its launch on (input, indices) -> output, and the bytes it moves.
enum Stage<'a, T, I> {
    Gather(&'a GatherOp<T, I>),
    Slice(&'a SliceOp<T>),
}

/// Times the fused op on device buffers; returns the median and its output.
fn time_fused<T: Element, I: IndexTypes>(
    env: &Env,
    op: &ChainOp<T, I>,
    data: &[T],
    indices: &[Handle],
) -> (f64, Vec<T>) {
    let c = env.client;
    let d = upload(c, data, op.buffer_bytes(Operand::Data).unwrap());
    let o = c.empty(op.buffer_bytes(Operand::Output).unwrap());
    let refs: Vec<&Handle> = indices.iter().collect();
    let t = env.synced_median(|| {
        op.launch(c, &d, &refs, &o).expect("chain launch");
    });
    (t, read(c, &o, op.plan().unwrap().output.num_elements()))
}

/// Times the stages one by one (one sync at the end), intermediates allocated once.
fn time_staged<T: Element, I: stridex::IndexElement>(
    env: &Env,
    stages: &[Stage<T, I>],
    data: &[T],
    indices: &[Handle],
) -> (f64, Vec<T>) {
    let c = env.client;
    let first = match &stages[0] {
        Stage::Gather(g) => g.buffer_bytes(Operand::Data).unwrap(),
        Stage::Slice(s) => s.buffer_bytes(Operand::Input).unwrap(),
    };
    let mut buffers = vec![upload(c, data, first)];
    let mut out_len = 0;
    for (k, stage) in stages.iter().enumerate() {
        let (written, len) = match stage {
            Stage::Gather(g) => {
                (g.buffer_bytes(Operand::Output).unwrap(), g.output_shape().unwrap().iter().product())
            }
            Stage::Slice(s) => {
                (s.buffer_bytes(Operand::Output).unwrap(), s.output_shape().unwrap().iter().product())
            }
        };
        let read = match stages.get(k + 1) {
            Some(Stage::Gather(g)) => g.buffer_bytes(Operand::Data).unwrap(),
            Some(Stage::Slice(s)) => s.buffer_bytes(Operand::Input).unwrap(),
            None => 0,
        };
        buffers.push(c.empty(written.max(read)));
        out_len = len;
    }
    let t = median(env.settings.reps, || {
        let mut index = indices.iter();
        for (k, stage) in stages.iter().enumerate() {
            match stage {
                Stage::Gather(g) => g
                    .launch(
                        c,
                        &buffers[k],
                        index.next().expect("an index buffer per gather"),
                        &buffers[k + 1],
                    )
                    .expect("stage launch"),
                Stage::Slice(s) => s.launch(c, &buffers[k], &buffers[k + 1]).expect("stage launch"),
            }
        }
        sync(c);
    });
    (t, read(c, &buffers[stages.len()], out_len))
}

/// Token ids -> embedding rows -> the last position: the intermediate is the whole batch's rows,
/// the result one row per sequence.
/// The last-position case: table `f32[vocab, dim]`, ids `i32[batch, seq]`.
pub const LAST_POSITION: (usize, usize, usize, usize) = (32000, 1024, 32, 512);

/// The last-position case's table, ids, and result on the host (each sequence's last row).
pub fn last_position_inputs() -> (Vec<f32>, Vec<i32>, Vec<f32>) {
    let (vocab, dim, batch, seq) = LAST_POSITION;
    let table: Vec<f32> = (0..vocab * dim).map(|i| i as f32).collect();
    let ids: Vec<i32> = (0..batch * seq).map(|i| ((i * 7919 + 13) % vocab) as i32).collect();
    let expected: Vec<f32> = (0..batch)
        .flat_map(|b| {
            let row = ids[b * seq + seq - 1] as usize;
            table[row * dim..(row + 1) * dim].to_vec()
        })
        .collect();
    (table, ids, expected)
}

fn embedding_last_token(env: &Env) -> ChainOutcome {
    let case = "embedding f32[32000,1024] <- i32[32,512], then the last position";
    let (vocab, dim, batch, seq) = LAST_POSITION;
    let (table, ids, expected) = last_position_inputs();
    // `clamp`: the ONNX default `error` would add a host check of every id to each run (the
    // fused op reads the ids back; the staged gather waits for its flag).
    let fused = stridex::chain! {
        data: f32[32000, 1024],
        gather { indices: i32[32, 512], axis: 0, out_of_range: clamp },
        slice { rules: onnx, starts: [-1], ends: [512], axes: [1] },
    };
    let gather = stridex::gather! { data: f32[32000, 1024], indices: i32[32, 512], out_of_range: clamp };
    let last =
        stridex::slice! { rules: onnx, input: f32[32, 512, 1024], starts: [-1], ends: [512], axes: [1] };
    let c = env.client;
    let id_h = upload(c, &ids, fused.index_buffer_bytes(0).unwrap());
    let (tf, out) = time_fused(env, &fused, &table, std::slice::from_ref(&id_h));
    check("fused", case, &out, &expected);
    let (ts, out) = time_staged(env, &[Stage::Gather(&gather), Stage::Slice(&last)], &table, &[id_h]);
    check("staged", case, &out, &expected);

    let dev = &env.device;
    let bt = Tensor::<2>::from_data(TensorData::new(table.clone(), [vocab, dim]), dev);
    let bi = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [batch * seq]), dev);
    let (tb, bo) = env.burn(dev, || {
        bt.clone().select(0, bi.clone()).reshape([batch, seq, dim]).slice(s![.., seq - 1, ..]).reshape([-1])
    });
    check("Burn", case, &bo.into_data().try_to_vec::<f32>().unwrap(), &expected);

    let out_bytes = batch * dim * 4;
    ChainOutcome {
        case,
        stages: "gather (ids) -> ONNX slice of the last position",
        // The output written, the rows it reads, and one id per sequence.
        fused_bytes: 2 * out_bytes + batch * 4,
        // The gather reads and writes every row of the batch and reads every id; the slice
        // reads and writes the last rows.
        staged_bytes: 2 * batch * seq * dim * 4 + batch * seq * 4 + 2 * out_bytes,
        fused: tf,
        staged: ts,
        burn: tb,
        burn_ops: "select(0), reshape, slice, materialized",
    }
}

/// An NCHW batch: crop -> horizontal flip -> BGR<->RGB channel reorder -> 2x downsample.
fn image_pipeline(env: &Env) -> ChainOutcome {
    let case = "image f32[16,3,512,512]: crop 448, flip, BGR->RGB, 2x down";
    let (n, ch, h, w) = (16, 3, 512, 512);
    let (crop, off) = (448, 32);
    let input: Vec<f32> = (0..n * ch * h * w).map(|i| i as f32).collect();
    let half = crop / 2;
    let expected: Vec<f32> = (0..n * ch * half * half)
        .map(|o| {
            let (b, c, y, x) = (o / (ch * half * half), o / (half * half) % ch, o / half % half, o % half);
            let (src_c, src_y, src_x) = (2 - c, off + 2 * y, off + (crop - 1 - 2 * x));
            input[((b * ch + src_c) * h + src_y) * w + src_x]
        })
        .collect();
    let fused = stridex::chain! {
        data: f32[16, 3, 512, 512],
        slice { offsets: [0, 0, 32, 32], sizes: [16, 3, 448, 448], strides: [1, 1, 1, 1] },
        slice { rules: onnx, starts: [-1], ends: [-449], axes: [3], steps: [-1] },
        gather { indices: i32[3], axis: 1, out_of_range: clamp },
        slice { offsets: [0, 0, 0, 0], sizes: [16, 3, 448, 448], strides: [1, 1, 2, 2] },
    };
    let s1 = stridex::slice! {
        input: f32[16, 3, 512, 512], offsets: [0, 0, 32, 32], sizes: [16, 3, 448, 448], strides: [1, 1, 1, 1],
    };
    let s2 = stridex::slice! { rules: onnx, input: f32[16, 3, 448, 448], starts: [-1], ends: [-449], axes: [3], steps: [-1] };
    let s3 = stridex::gather! { data: f32[16, 3, 448, 448], indices: i32[3], axis: 1, out_of_range: clamp };
    let s4 = stridex::slice! {
        input: f32[16, 3, 448, 448], offsets: [0, 0, 0, 0], sizes: [16, 3, 448, 448], strides: [1, 1, 2, 2],
    };
    let c = env.client;
    let bgr = upload(c, &[2i32, 1, 0], fused.index_buffer_bytes(0).unwrap());
    let (tf, out) = time_fused(env, &fused, &input, std::slice::from_ref(&bgr));
    check("fused", case, &out, &expected);
    let stages = [Stage::Slice(&s1), Stage::Slice(&s2), Stage::Gather(&s3), Stage::Slice(&s4)];
    let (ts, out) = time_staged(env, &stages, &input, &[bgr]);
    check("staged", case, &out, &expected);

    let dev = &env.device;
    let bt = Tensor::<4>::from_data(TensorData::new(input.clone(), [n, ch, h, w]), dev);
    let bi = Tensor::<1, Int>::from_data(TensorData::new(vec![2i32, 1, 0], [3]), dev);
    let (tb, bo) = env.burn(dev, || {
        bt.clone()
            .slice(s![.., .., 32..480, 32..480])
            .flip([3])
            .select(1, bi.clone())
            .slice(s![.., .., 0..448;2, 0..448;2])
            .reshape([-1])
    });
    check("Burn", case, &bo.into_data().try_to_vec::<f32>().unwrap(), &expected);

    let cropped = n * ch * crop * crop * 4;
    let out_bytes = n * ch * half * half * 4;
    ChainOutcome {
        case,
        stages: "SLICE1 crop -> ONNX flip -> gather(axis 1) -> SLICE1 step 2",
        fused_bytes: 2 * out_bytes + 12,
        staged_bytes: 3 * 2 * cropped + 12 + 2 * out_bytes,
        fused: tf,
        staged: ts,
        burn: tb,
        burn_ops: "slice, flip, select(1), slice with steps, materialized",
    }
}

/// The step after the crop: an NHWC u8 batch cropped, flipped and turned RGB, out as the
/// model's normalized NCHW f32, by one `chain!` ending in `convert` against stridex's two
/// kernels (the u8 chain, then a `convert`-only chain over its output) and against Burn.
/// The K third of each new token's QKV rows written into a KV cache at its slot, in place each
/// call: the fused chain (the write kernel reads the rows from the QKV), the slice and the
/// scatter launched one after the other, and Burn's `slice` then `select_assign`. `None` where
/// Burn has no f16 tensors.
fn kv_write_of_projection(env: &Env) -> Option<ChainOutcome> {
    use burn::tensor::{DType, IndexingUpdateOp};
    use half::f16;
    let case = "KV cache f16[32768,8,128] <- K of QKV f16[2048,3,8,128] at slots, in place";
    let (slots, n, row) = (32768usize, 2048usize, 8 * 128usize);
    if !env.device.supports_dtype(DType::F16) {
        return None;
    }
    // 7919 is odd: `i * 7919 mod 32768` never repeats for i < 32768.
    let ids: Vec<i32> = (0..n).map(|i| ((i * 7919 + 13) % slots) as i32).collect();
    let qkv: Vec<f16> = (0..n * 3 * row).map(|i| f16::from_bits((i % 29989 + 1) as u16)).collect();
    let cache: Vec<f16> = (0..slots * row).map(|i| f16::from_bits((i % 30000) as u16)).collect();
    let mut expected = cache.clone();
    for (t, &slot) in ids.iter().enumerate() {
        expected[slot as usize * row..][..row].copy_from_slice(&qkv[(t * 3 + 1) * row..][..row]);
    }
    let bits = |v: &[f16]| v.iter().map(|x| f32::from_bits(u32::from(x.to_bits()))).collect::<Vec<f32>>();
    let expected = bits(&expected);
    let fused = stridex::chain! {
        data: f16[2048, 3, 8, 128],
        slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
        scatter { into: f16[32768, 1, 8, 128], indices: i32[2048], axis: 0, out_of_range: skip },
    };
    assert_eq!(
        fused.kernel_source(stridex::Dialect::Wgsl).ok().flatten().map(|s| s.matches("@compute").count()),
        Some(2),
        "{case}: not fused"
    );
    let k = stridex::slice! { rules: onnx, input: f16[2048, 3, 8, 128], starts: [1], ends: [2], axes: [1] };
    let write = stridex::scatter! {
        data: f16[32768, 1, 8, 128], indices: i32[2048], updates: f16[2048, 1, 8, 128], axis: 0,
        out_of_range: skip,
    };
    let c = env.client;
    let d = upload(c, &qkv, fused.buffer_bytes(Operand::Data).unwrap());
    let ix = upload(c, &ids, fused.index_buffer_bytes(0).unwrap());
    let o = upload(c, &cache, fused.buffer_bytes(Operand::Output).unwrap());
    let tf = env.synced_median(|| {
        fused.launch(c, &d, &[&ix], &o).expect("chain launch");
    });
    check("fused", case, &bits(&read::<f16>(c, &o, slots * row)), &expected);
    let o = upload(c, &cache, fused.buffer_bytes(Operand::Output).unwrap());
    let mid = c.empty(k.buffer_bytes(Operand::Output).unwrap());
    let ts = median(env.settings.reps, || {
        k.launch(c, &d, &mid).expect("slice launch");
        write.launch(c, &o, &ix, &mid).expect("scatter launch");
        sync(c);
    });
    check("staged", case, &bits(&read::<f16>(c, &o, slots * row)), &expected);

    let dev = &env.device;
    let bq = Tensor::<4>::from_data(TensorData::new(qkv.clone(), [n, 3, 8, 128]), (dev, DType::F16));
    let bi = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [n]), dev);
    let start = Tensor::<4>::from_data(TensorData::new(cache.clone(), [slots, 1, 8, 128]), (dev, DType::F16));
    let (tb, written) = env.burn_in_place(dev, start, |t| {
        t.select_assign(0, bi.clone(), bq.clone().slice(s![.., 1..2, .., ..]), IndexingUpdateOp::Assign)
    });
    let got = written.into_data().try_to_vec::<f16>().expect("f16 values");
    check("Burn", case, &bits(&got), &expected);
    let rows = n * row * 2;
    Some(ChainOutcome {
        case,
        stages: "ONNX slice of K -> scatter (rows at slots, skip)",
        // The K rows read and written, and the slots.
        fused_bytes: 2 * rows + n * 4,
        // The slice reads and writes them, then the scatter reads and writes them again.
        staged_bytes: 4 * rows + n * 4,
        fused: tf,
        staged: ts,
        burn: tb,
        burn_ops: "slice, select_assign(0, Assign), in place",
    })
}

/// The combine of a mixture-of-experts layer: each (token, choice)'s row of the experts'
/// outputs picked by a gather, then added into its token's row by a scatter, in place each
/// call. The fused chain folds the gather into the scatter's lists (the grouped kernel reads
/// the rows from the experts' outputs); staged, the gather writes the picked rows and the
/// scatter reads them; Burn runs `select` then `select_assign(0, Add)`. Values are small
/// integers, so every order of the sums is exact and each output is checked bit for bit.
fn moe_combine(env: &Env) -> ChainOutcome {
    use burn::tensor::IndexingUpdateOp;
    let case = "MoE combine f32[4096,1024] += rows of f32[8192,1024] picked per (token, choice), top-2";
    let (tokens, picks, row) = (4096usize, 8192usize, 1024usize);
    // Position p is token p / 2's choice p % 2; its output row lies at a scattered place
    // (5039 is odd: `p * 5039 mod 8192` is a permutation).
    let owners: Vec<i32> = (0..picks).map(|p| (p / 2) as i32).collect();
    let rows: Vec<i32> = (0..picks).map(|p| ((p * 5039 + 11) % picks) as i32).collect();
    let experts: Vec<f32> = (0..picks * row).map(|i| (i % 7) as f32 - 3.0).collect();
    let start: Vec<f32> = (0..tokens * row).map(|i| (i % 5) as f32).collect();
    let mut expected = start.clone();
    for p in 0..picks {
        let (to, from) = (owners[p] as usize * row, rows[p] as usize * row);
        for e in 0..row {
            expected[to + e] += experts[from + e];
        }
    }
    let fused = stridex::chain! {
        data: f32[8192, 1024],
        gather { indices: i32[8192], axis: 0 },
        scatter { into: f32[4096, 1024], indices: i32[8192], axis: 0, reduction: add },
    };
    assert!(fused.is_fused().unwrap_or(false), "{case}: not fused");
    let pick = stridex::gather! { data: f32[8192, 1024], indices: i32[8192], axis: 0 };
    let add = stridex::scatter! {
        data: f32[4096, 1024], indices: i32[8192], updates: f32[8192, 1024], axis: 0, reduction: add
    };
    let c = env.client;
    let d = upload(c, &experts, fused.buffer_bytes(Operand::Data).unwrap());
    let ir = upload(c, &rows, fused.index_buffer_bytes(0).unwrap());
    let io = upload(c, &owners, fused.index_buffer_bytes(1).unwrap());
    // One call each on fresh tokens, checked; then timed on tokens that keep accumulating.
    let once = upload(c, &start, fused.buffer_bytes(Operand::Output).unwrap());
    fused.launch(c, &d, &[&ir, &io], &once).expect("chain launch");
    check("fused", case, &read(c, &once, tokens * row), &expected);
    let mid = c.empty(pick.buffer_bytes(Operand::Output).unwrap());
    let once = upload(c, &start, fused.buffer_bytes(Operand::Output).unwrap());
    pick.launch(c, &d, &ir, &mid).expect("gather launch");
    add.launch(c, &once, &io, &mid).expect("scatter launch");
    check("staged", case, &read(c, &once, tokens * row), &expected);
    let (of, os) = (c.empty(tokens * row * 4), c.empty(tokens * row * 4));
    let (tf, ts) = medians_interleaved(
        env.settings.reps,
        || {
            fused.launch(c, &d, &[&ir, &io], &of).expect("chain launch");
            sync(c);
        },
        || {
            pick.launch(c, &d, &ir, &mid).expect("gather launch");
            add.launch(c, &os, &io, &mid).expect("scatter launch");
            sync(c);
        },
    );

    let dev = &env.device;
    let be = Tensor::<2>::from_data(TensorData::new(experts.clone(), [picks, row]), dev);
    let br = Tensor::<1, Int>::from_data(TensorData::new(rows.clone(), [picks]), dev);
    let bo = Tensor::<1, Int>::from_data(TensorData::new(owners.clone(), [picks]), dev);
    let bt = Tensor::<2>::from_data(TensorData::new(start.clone(), [tokens, row]), dev);
    let combine = |t: Tensor<2>| {
        t.select_assign(0, bo.clone(), be.clone().select(0, br.clone()), IndexingUpdateOp::Add)
    };
    check("Burn", case, &combine(bt.clone()).into_data().try_to_vec::<f32>().unwrap(), &expected);
    let (tb, _) = env.burn_in_place(dev, bt, combine);
    let (picked, token_rows) = (picks * row * 4, tokens * row * 4);
    ChainOutcome {
        case,
        stages: "gather (rows per choice) -> scatter (add into tokens, grouped)",
        // The picked rows read, the tokens' rows read and written, both index buffers.
        fused_bytes: picked + 2 * token_rows + picks * 8,
        // The gather reads and writes the picked rows; the scatter reads them again.
        staged_bytes: 3 * picked + 2 * token_rows + picks * 8,
        fused: tf,
        staged: ts,
        burn: tb,
        burn_ops: "select, select_assign(0, Add), in place",
    }
}

fn image_to_model(env: &Env) -> ChainOutcome {
    let case = "NHWC u8[16,256,256,3] -> normalized NCHW f32: crop 224, flip, BGR->RGB";
    let (n, h, w, crop, off) = (16usize, 256usize, 256usize, 224usize, 16usize);
    // Powers of two: `x * scale + offset` is exact in f32 whether or not a device fuses it, so
    // every implementation's output is checked bit for bit.
    let (scale, offset) = ([0.0078125f32, 0.015625, 0.03125], [-1.0f32, -2.0, -0.5]);
    let nhwc: Vec<u8> = (0..n * h * w * 3).map(|i| (i * 7 % 251) as u8).collect();
    let expected: Vec<f32> = (0..n * 3 * crop * crop)
        .map(|o| {
            let (b, c, y, x) = (o / (3 * crop * crop), o / (crop * crop) % 3, o / crop % crop, o % crop);
            let (sy, sx, sc) = (off + y, off + crop - 1 - x, 2 - c);
            nhwc[((b * h + sy) * w + sx) * 3 + sc] as f32 * scale[c] + offset[c]
        })
        .collect();
    let fused = stridex::chain! {
        data: u8[16, 3, 256, 256] strides [196608, 1, 768, 3],
        slice { s[.., ..;-1, 16..240, 16..240;-1] },
        convert { to: f32, dim: 1, scale: [0.0078125, 0.015625, 0.03125], offset: [-1.0, -2.0, -0.5] },
    };
    let crop_u8 = stridex::chain! {
        data: u8[16, 3, 256, 256] strides [196608, 1, 768, 3],
        slice { s[.., ..;-1, 16..240, 16..240;-1] },
    };
    let to_f32 = stridex::chain! {
        data: u8[16, 3, 224, 224],
        convert { to: f32, dim: 1, scale: [0.0078125, 0.015625, 0.03125], offset: [-1.0, -2.0, -0.5] },
    };
    let c = env.client;
    let d = upload(c, &nhwc, fused.buffer_bytes(Operand::Data).unwrap());
    let out = c.empty(fused.buffer_bytes(Operand::Output).unwrap());
    let mid = c.empty(
        crop_u8.buffer_bytes(Operand::Output).unwrap().max(to_f32.buffer_bytes(Operand::Data).unwrap()),
    );
    let out2 = c.empty(to_f32.buffer_bytes(Operand::Output).unwrap());
    // The ratio of the two is this case's target: interleaved, so drift slows both alike.
    let (tf, ts) = medians_interleaved(
        env.settings.reps,
        || {
            fused.launch(c, &d, &[], &out).expect("fused launch");
            sync(c);
        },
        || {
            crop_u8.launch(c, &d, &[], &mid).expect("crop launch");
            to_f32.launch(c, &mid, &[], &out2).expect("convert launch");
            sync(c);
        },
    );
    check("fused", case, &read(c, &out, expected.len()), &expected);
    check("two kernels", case, &read(c, &out2, expected.len()), &expected);

    // Burn has no u8 tensor ops on its CubeCL backends: its input is the same pixels as i32.
    let dev = &env.device;
    let pixels: Vec<i32> = nhwc.iter().map(|&v| v as i32).collect();
    let bt = Tensor::<4, Int>::from_data(TensorData::new(pixels, [n, h, w, 3]), dev);
    let bs = Tensor::<4>::from_data(TensorData::new(scale.to_vec(), [1, 3, 1, 1]), dev);
    let bo = Tensor::<4>::from_data(TensorData::new(offset.to_vec(), [1, 3, 1, 1]), dev);
    let (tb, burn_out) = env.burn(dev, || {
        bt.clone()
            .slice(s![.., off..off + crop, off..off + crop, ..])
            .flip([2, 3])
            .permute([0, 3, 1, 2])
            .float()
            .mul(bs.clone())
            .add(bo.clone())
            .reshape([-1])
    });
    check("Burn", case, &burn_out.into_data().try_to_vec::<f32>().unwrap(), &expected);

    let elems = n * 3 * crop * crop;
    ChainOutcome {
        case,
        stages: "strided NCHW view of NHWC -> flip, BGR->RGB, crop (s[..]) -> convert f32 per channel",
        // The u8 pixels the result needs, read once; the f32 result written once.
        fused_bytes: elems + elems * 4,
        // The u8 chain reads and writes the crop; the convert reads it and writes f32.
        staged_bytes: 2 * elems + elems + elems * 4,
        fused: tf,
        staged: ts,
        burn: tb,
        burn_ops: "on i32 pixels (no u8 tensor ops): slice, flip, permute, float, mul, add, materialized",
    }
}
