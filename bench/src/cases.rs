//! The benchmark cases: each times stridex, the device copy of the same bytes, Burn's matching
//! op and plain Rust on the host computing the same output, and checks every result once
//! against the host.
//!
//! Bytes moved: a gather reads each output element once plus its indices and writes each output
//! element once; a slice reads and writes each output element once. Every implementation of a
//! case is credited with the same bytes, so the GB/s columns compare times.

use crate::measure::{burn_timer, medians, Env, Timer};
use crate::report::{Outcome, Targets};
use crate::scatters;
use burn::tensor::{s, DType, Device, Int, Tensor, TensorData};
use half::f16;
use stridex::Element;

pub type Case = (&'static str, fn(&Env) -> Outcome);

pub fn all() -> Vec<Case> {
    vec![
        ("embedding f32[16384,1024] <- i32[16384]", embedding_f32),
        ("embedding f16[16384,1024] <- i64[16384]", embedding_f16),
        ("columns f32[4096,4096] axis 1 <- i32[1024]", columns_f32),
        ("columns u8[8192,8192] axis 1 <- i32[2048]", columns_u8),
        ("beam reorder f32[16,8,512,128] <- i32[16,8], b=1", beam_reorder),
        ("flip last axis f32[8,3,512,512]", flip),
        ("step 2 on H,W f32[32,3,512,512]", step2),
        ("NHWC -> NCHW f32[16,64,128,128]", nhwc_to_nchw),
        ("crop f32[8,3,512,512] -> [8,3,448,448]", crop),
        ("GatherElements f32[4096,4096] axis 1 <- i32[4096,512]", gather_elements),
        ("GatherND b=1 f32[8,4096,256] <- i32[8,2048,1]", gather_nd),
        (scatters::EMBEDDING_BACKWARD, scatters::embedding_backward),
        (scatters::KV_CACHE_WRITE, scatters::kv_cache_write),
        (scatters::ELEMENTS_ADD, scatters::elements_add),
        (scatters::TRAINING_STEP, scatters::training_step),
    ]
}

/// `n` distinct-looking values whose bit patterns are all different (up to 2^24).
fn values_f32(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

/// Row ids that visit the table out of order: a stride coprime with `rows`.
fn ids(n: usize, rows: usize) -> Vec<i64> {
    (0..n).map(|i| ((i * 7919 + 13) % rows) as i64).collect()
}

/// `expected[o] = src[map(o)]` for every output position `o`, compared bit for bit.
fn check<T: Element>(what: &str, case: &str, got: &[T], src: &[T], len: usize, map: impl Fn(usize) -> usize) {
    assert_eq!(got.len(), len, "{case}: {what} length");
    if let Some(o) = (0..got.len()).find(|&o| T::bytes(&got[o..o + 1]) != T::bytes(&src[map(o)..map(o) + 1]))
    {
        panic!("{case}: {what} output[{o}] = {:?}, expected {:?}", got[o], src[map(o)]);
    }
}

fn gbytes_gather(out_elems: usize, elem: usize, index_bytes: usize) -> usize {
    2 * out_elems * elem + index_bytes
}

/// Plain Rust writing the output of `len` elements from `input` with `f`: checked once against
/// `map`, and returned as a timer.
fn rust_timer<'a, T: Element + Copy + Default>(
    case: &str,
    input: &'a [T],
    len: usize,
    map: impl Fn(usize) -> usize,
    mut f: impl FnMut(&[T], &mut [T]) + 'a,
) -> Timer<'a> {
    let mut out = vec![T::default(); len];
    f(input, &mut out);
    check("Rust", case, &out, input, len, map);
    Box::new(move || {
        f(input, &mut out);
        std::hint::black_box(&mut out);
    })
}

/// A case's outcome: times stridex, the device copy and the host `memcpy` of half `bytes` (as
/// read, then written), plain Rust and every Burn peer round by round ([`medians`]), and
/// reports the fastest peer as Burn's. The caller names Burn's op and the targets
/// (`Outcome { burn_op, targets, ..outcome(..) }`), and NdArray's time where measured.
pub fn outcome<'a>(
    env: &'a Env,
    case: &'static str,
    bytes: usize,
    stridex: Timer<'a>,
    rust: Timer<'a>,
    peers: Vec<(&'static str, Timer<'a>)>,
) -> Outcome {
    let (copy, scale) = env.copy_timer(bytes / 2);
    let mut timers = vec![stridex, copy, env.memcpy_timer(bytes / 2), rust];
    let names: Vec<&'static str> = peers.iter().map(|p| p.0).collect();
    timers.extend(peers.into_iter().map(|p| p.1));
    let times = medians(env.settings.reps, &mut timers);
    let mut peers: Vec<(&'static str, f64)> = names.into_iter().zip(times[4..].iter().copied()).collect();
    peers.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (burn, burn_peer) = peers.first().map_or((None, ""), |&(name, t)| (Some(t), name));
    Outcome {
        case,
        bytes,
        stridex: times[0],
        copy: times[1] * scale,
        memcpy: times[2],
        burn,
        burn_peer,
        burn_peers: peers,
        burn_op: "",
        rust: times[3],
        ndarray: None,
        step_parts: None,
        targets: Targets { copy: 0.0, burn: 0.0 },
    }
}

fn embedding_f32(env: &Env) -> Outcome {
    let name = all()[0].0;
    let (rows, dim, n) = (16384, 1024, 16384);
    let table = values_f32(rows * dim);
    let ids64 = ids(n, rows);
    let ids32: Vec<i32> = ids64.iter().map(|&i| i as i32).collect();
    let map = |o: usize| ids64[o / dim] as usize * dim + o % dim;
    let op = stridex::gather! { data: f32[16384, 1024], indices: i32[16384] };
    let (t, out) = env.gather(&op, &table, &ids32);
    check("stridex", name, &out, &table, n * dim, map);

    let peers = env.burn_peers(|dev| {
        let bt = Tensor::<2>::from_data(TensorData::new(table.clone(), [rows, dim]), dev);
        let bi = Tensor::<1, Int>::from_data(TensorData::new(ids32.clone(), [n]), dev);
        let run = move || bt.clone().select(0, bi.clone());
        check("Burn", name, &run().into_data().try_to_vec::<f32>().unwrap(), &table, n * dim, map);
        Some(burn_timer(dev, run))
    });

    let rust = rust_timer(name, &table, n * dim, map, |table, out| {
        for (row, &id) in out.chunks_exact_mut(dim).zip(&ids32) {
            row.copy_from_slice(&table[id as usize * dim..][..dim]);
        }
    });

    // Burn's deprecated NdArray backend on the host, for scale (its ids stay i64).
    #[allow(deprecated)]
    let nd = Device::ndarray();
    let nt = Tensor::<2>::from_data(TensorData::new(table.clone(), [rows, dim]), &nd);
    let ni = Tensor::<1, Int>::from_data(TensorData::new(ids64.clone(), [n]), &nd);
    let (tn, no) = env.burn(&nd, || nt.clone().select(0, ni.clone()));
    check("Burn NdArray", name, &no.into_data().try_to_vec::<f32>().unwrap(), &table, n * dim, map);
    let bytes = gbytes_gather(n * dim, 4, n * 4);
    Outcome {
        burn_op: "select(0)",
        ndarray: Some(tn),
        targets: Targets { copy: 0.9, burn: 6.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

fn embedding_f16(env: &Env) -> Outcome {
    let name = all()[1].0;
    let (rows, dim, n) = (16384, 1024, 16384);
    let table: Vec<f16> = (0..rows * dim).map(|i| f16::from_bits((i % 65521) as u16)).collect();
    let ids64 = ids(n, rows);
    let map = |o: usize| ids64[o / dim] as usize * dim + o % dim;
    let op = stridex::gather! { data: f16[16384, 1024], indices: i64[16384] };
    let (t, out) = env.gather(&op, &table, &ids64);
    check("stridex", name, &out, &table, n * dim, map);

    let ids32: Vec<i32> = ids64.iter().map(|&i| i as i32).collect();
    let peers = env.burn_peers(|dev| {
        if !dev.supports_dtype(DType::F16) {
            return None;
        }
        // Compare the bits Burn returns with the bits of the f16 table it was given.
        let bt = Tensor::<2>::from_data(TensorData::new(table.clone(), [rows, dim]), (dev, DType::F16));
        let bi = Tensor::<1, Int>::from_data(TensorData::new(ids32.clone(), [n]), dev);
        let run = move || bt.clone().select(0, bi.clone());
        check("Burn", name, &run().into_data().try_to_vec::<f16>().unwrap(), &table, n * dim, map);
        Some(burn_timer(dev, run))
    });
    let rust = rust_timer(name, &table, n * dim, map, |table, out| {
        for (row, &id) in out.chunks_exact_mut(dim).zip(&ids64) {
            row.copy_from_slice(&table[id as usize * dim..][..dim]);
        }
    });
    let bytes = gbytes_gather(n * dim, 2, n * 8);
    Outcome {
        burn_op: if !peers.is_empty() { "select(0), i32 ids" } else { "no f16 on this device" },
        targets: Targets { copy: 0.9, burn: 6.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

fn columns_f32(env: &Env) -> Outcome {
    let name = all()[2].0;
    let (rows, cols, n) = (4096, 4096, 1024);
    let data = values_f32(rows * cols);
    let ids32: Vec<i32> = ids(n, cols).iter().map(|&i| i as i32).collect();
    let map = |o: usize| (o / n) * cols + ids32[o % n] as usize;
    let op = stridex::gather! { data: f32[4096, 4096], indices: i32[1024], axis: 1 };
    let (t, out) = env.gather(&op, &data, &ids32);
    check("stridex", name, &out, &data, rows * n, map);

    let peers = env.burn_peers(|dev| {
        let bt = Tensor::<2>::from_data(TensorData::new(data.clone(), [rows, cols]), dev);
        let bi = Tensor::<1, Int>::from_data(TensorData::new(ids32.clone(), [n]), dev);
        let run = move || bt.clone().select(1, bi.clone());
        check("Burn", name, &run().into_data().try_to_vec::<f32>().unwrap(), &data, rows * n, map);
        Some(burn_timer(dev, run))
    });
    let rust = rust_timer(name, &data, rows * n, map, |data, out| {
        for (o, row) in out.chunks_exact_mut(n).zip(data.chunks_exact(cols)) {
            for (y, &id) in o.iter_mut().zip(&ids32) {
                *y = row[id as usize];
            }
        }
    });
    let bytes = gbytes_gather(rows * n, 4, n * 4);
    Outcome {
        burn_op: "select(1)",
        targets: Targets { copy: 0.6, burn: 3.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

fn columns_u8(env: &Env) -> Outcome {
    let name = all()[3].0;
    let (rows, cols, n) = (8192, 8192, 2048);
    let data: Vec<u8> = (0..rows * cols).map(|i| (i * 31 + i / 8191) as u8).collect();
    let ids32: Vec<i32> = ids(n, cols).iter().map(|&i| i as i32).collect();
    let map = |o: usize| (o / n) * cols + ids32[o % n] as usize;
    let op = stridex::gather! { data: u8[8192, 8192], indices: i32[2048], axis: 1 };
    let (t, out) = env.gather(&op, &data, &ids32);
    check("stridex", name, &out, &data, rows * n, map);

    let peers = env.burn_peers(|dev| {
        if !dev.supports_dtype(DType::U8) {
            return None;
        }
        let bt = Tensor::<2, Int>::from_data(TensorData::new(data.clone(), [rows, cols]), (dev, DType::U8));
        let bi = Tensor::<1, Int>::from_data(TensorData::new(ids32.clone(), [n]), dev);
        let run = move || bt.clone().select(1, bi.clone());
        check("Burn", name, &run().into_data().try_to_vec::<u8>().unwrap(), &data, rows * n, map);
        Some(burn_timer(dev, run))
    });
    let rust = rust_timer(name, &data, rows * n, map, |data, out| {
        for (o, row) in out.chunks_exact_mut(n).zip(data.chunks_exact(cols)) {
            for (y, &id) in o.iter_mut().zip(&ids32) {
                *y = row[id as usize];
            }
        }
    });
    let bytes = gbytes_gather(rows * n, 1, n * 4);
    Outcome {
        burn_op: if !peers.is_empty() {
            "select(1) on a u8 Int tensor"
        } else {
            "no u8 tensors on this device"
        },
        targets: Targets { copy: 0.6, burn: 3.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

fn beam_reorder(env: &Env) -> Outcome {
    let name = all()[4].0;
    let (b, k, s, d) = (16, 8, 512, 128);
    let inner = s * d;
    let cache = values_f32(b * k * inner);
    let beams: Vec<i32> = (0..b * k).map(|i| ((i * 5 + 3) % k) as i32).collect();
    let map = |o: usize| {
        let (bk, rest) = (o / inner, o % inner);
        ((bk / k) * k + beams[bk] as usize) * inner + rest
    };
    let op = stridex::gather! {
        rules: openvino, data: f32[16, 8, 512, 128], indices: i32[16, 8], axis: 1, batch_dims: 1,
    };
    let (t, out) = env.gather(&op, &cache, &beams);
    check("stridex", name, &out, &cache, b * k * inner, map);

    // Burn's gather takes indices of the output's shape: the beam ids expanded (made once, untimed).
    let expanded: Vec<i32> = (0..b * k * inner).map(|o| beams[o / inner]).collect();
    let peers = env.burn_peers(|dev| {
        let bt = Tensor::<4>::from_data(TensorData::new(cache.clone(), [b, k, s, d]), dev);
        let bi = Tensor::<4, Int>::from_data(TensorData::new(expanded.clone(), [b, k, s, d]), dev);
        let run = move || bt.clone().gather(1, bi.clone());
        check("Burn", name, &run().into_data().try_to_vec::<f32>().unwrap(), &cache, b * k * inner, map);
        Some(burn_timer(dev, run))
    });
    // Each (batch, beam) row is contiguous: one copy per row.
    let rust = rust_timer(name, &cache, b * k * inner, map, |cache, out| {
        for (bk, row) in out.chunks_exact_mut(inner).enumerate() {
            let src = (bk / k) * k + beams[bk] as usize;
            row.copy_from_slice(&cache[src * inner..][..inner]);
        }
    });
    let bytes = gbytes_gather(b * k * inner, 4, b * k * 4);
    Outcome {
        burn_op: "gather(1) on expanded ids",
        targets: Targets { copy: 0.6, burn: 3.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

/// Every row picks its own columns: `out[i][j] = data[i][idx[i][j]]` (PyTorch's and Burn's
/// `gather`, ONNX GatherElements).
fn gather_elements(env: &Env) -> Outcome {
    let name = all()[9].0;
    let (rows, cols, picks) = (4096, 4096, 512);
    let data = values_f32(rows * cols);
    let idx: Vec<i32> = (0..rows * picks).map(|o| ((o * 7919 + 13) % cols) as i32).collect();
    let map = |o: usize| (o / picks) * cols + idx[o] as usize;
    let op = stridex::gather_elements! { data: f32[4096, 4096], indices: i32[4096, 512], axis: 1 };
    let (t, out) = env.gather(&op, &data, &idx);
    check("stridex", name, &out, &data, rows * picks, map);

    let peers = env.burn_peers(|dev| {
        let bt = Tensor::<2>::from_data(TensorData::new(data.clone(), [rows, cols]), dev);
        let bi = Tensor::<2, Int>::from_data(TensorData::new(idx.clone(), [rows, picks]), dev);
        let run = move || bt.clone().gather(1, bi.clone());
        check("Burn", name, &run().into_data().try_to_vec::<f32>().unwrap(), &data, rows * picks, map);
        Some(burn_timer(dev, run))
    });
    let rust = rust_timer(name, &data, rows * picks, map, |data, out| {
        for (o, (v, &i)) in out.iter_mut().zip(&idx).enumerate() {
            *v = data[(o / picks) * cols + i as usize];
        }
    });
    let bytes = gbytes_gather(rows * picks, 4, rows * picks * 4);
    Outcome {
        burn_op: "gather(1)",
        targets: Targets { copy: 0.3, burn: 3.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

/// A paged lookup: each batch picks rows of its own table (`batch_dims` 1, tuples of one
/// coordinate, a row of 256 per tuple).
fn gather_nd(env: &Env) -> Outcome {
    let name = all()[10].0;
    let (b, rows, t_n, d) = (8, 4096, 2048, 256);
    let data = values_f32(b * rows * d);
    let idx: Vec<i32> = (0..b * t_n).map(|o| ((o * 7919 + 13) % rows) as i32).collect();
    let map = |o: usize| {
        let (bt, c) = (o / d, o % d);
        ((bt / t_n) * rows + idx[bt] as usize) * d + c
    };
    let op = stridex::gather_nd! {
        rules: openvino, data: f32[8, 4096, 256], indices: i32[8, 2048, 1], batch_dims: 1,
    };
    let (t, out) = env.gather(&op, &data, &idx);
    check("stridex", name, &out, &data, b * t_n * d, map);

    // Burn has no GatherND: its gather takes the row ids expanded to the output's shape (made
    // once, untimed).
    let expanded: Vec<i32> = (0..b * t_n * d).map(|o| idx[o / d]).collect();
    let peers = env.burn_peers(|dev| {
        let bt = Tensor::<3>::from_data(TensorData::new(data.clone(), [b, rows, d]), dev);
        let bi = Tensor::<3, Int>::from_data(TensorData::new(expanded.clone(), [b, t_n, d]), dev);
        let run = move || bt.clone().gather(1, bi.clone());
        check("Burn", name, &run().into_data().try_to_vec::<f32>().unwrap(), &data, b * t_n * d, map);
        Some(burn_timer(dev, run))
    });
    let rust = rust_timer(name, &data, b * t_n * d, map, |data, out| {
        for (bt, row) in out.chunks_exact_mut(d).enumerate() {
            let src = (bt / t_n) * rows + idx[bt] as usize;
            row.copy_from_slice(&data[src * d..][..d]);
        }
    });
    let bytes = gbytes_gather(b * t_n * d, 4, b * t_n * 4);
    Outcome {
        burn_op: "gather(1) on expanded ids",
        targets: Targets { copy: 0.9, burn: 3.0 },
        ..outcome(env, name, bytes, t, rust, peers)
    }
}

/// Burn's op for a slice case: its name and the op, which returns the result flattened (a view
/// is materialized by flattening it).
struct Peer<const D: usize> {
    name: &'static str,
    op: fn(Tensor<D>) -> Tensor<1>,
}

/// A slice case: stridex's op against `map` (output position -> input position), Burn's peer
/// on the same input as a tensor of `shape`, and plain Rust writing the output (`rust`).
struct SliceCase<'a, const D: usize, M: Fn(usize) -> usize> {
    name: &'static str,
    op: &'a stridex::SliceOp<f32>,
    input: &'a [f32],
    shape: [usize; D],
    peer: Peer<D>,
    map: M,
    rust: fn(&[f32], &mut [f32]),
    targets: Targets,
}

fn slice_case<const D: usize, M: Fn(usize) -> usize>(env: &Env, c: SliceCase<D, M>) -> Outcome {
    let (t, out) = env.slice(c.op, c.input);
    let len = c.op.output_shape().unwrap().iter().product();
    check("stridex", c.name, &out, c.input, len, &c.map);
    let peers = env.burn_peers(|dev| {
        let bt = Tensor::<D>::from_data(TensorData::new(c.input.to_vec(), c.shape), dev);
        let run = move || (c.peer.op)(bt.clone());
        check("Burn", c.name, &run().into_data().try_to_vec::<f32>().unwrap(), c.input, len, &c.map);
        Some(burn_timer(dev, run))
    });
    let rust = rust_timer(c.name, c.input, len, &c.map, c.rust);
    let bytes = 2 * out.len() * 4;
    Outcome { burn_op: c.peer.name, targets: c.targets, ..outcome(env, c.name, bytes, t, rust, peers) }
}

/// Row-major coordinates of `o` in `shape`.
fn coords<const D: usize>(mut o: usize, shape: [usize; D]) -> [usize; D] {
    let mut c = [0; D];
    for i in (0..D).rev() {
        c[i] = o % shape[i];
        o /= shape[i];
    }
    c
}

fn offset<const D: usize>(c: [usize; D], shape: [usize; D]) -> usize {
    c.iter().zip(shape).fold(0, |acc, (&ci, s)| acc * s + ci)
}

fn flip(env: &Env) -> Outcome {
    let shape = [8, 3, 512, 512];
    let op = stridex::slice! {
        input: f32[8, 3, 512, 512], offsets: [0, 0, 0, 0], sizes: [8, 3, 512, 512], strides: [1, 1, 1, -1],
    };
    let map = move |o: usize| {
        let mut c = coords(o, shape);
        c[3] = 511 - c[3];
        offset(c, shape)
    };
    let input = values_f32(shape.iter().product());
    slice_case(
        env,
        SliceCase {
            name: all()[5].0,
            op: &op,
            input: &input,
            shape,
            peer: Peer { name: "flip([3])", op: |t| t.flip([3]).reshape([-1]) },
            map,
            rust: |input, out| {
                for (o, row) in out.chunks_exact_mut(512).zip(input.chunks_exact(512)) {
                    for (y, &x) in o.iter_mut().zip(row.iter().rev()) {
                        *y = x;
                    }
                }
            },
            targets: Targets { copy: 0.6, burn: 3.0 },
        },
    )
}

fn step2(env: &Env) -> Outcome {
    let shape = [32, 3, 512, 512];
    let out_shape = [32, 3, 256, 256];
    let op = stridex::slice! {
        input: f32[32, 3, 512, 512], offsets: [0, 0, 0, 0], sizes: [32, 3, 512, 512], strides: [1, 1, 2, 2],
    };
    let map = move |o: usize| {
        let mut c = coords(o, out_shape);
        c[2] *= 2;
        c[3] *= 2;
        offset(c, shape)
    };
    let input = values_f32(shape.iter().product());
    slice_case(
        env,
        SliceCase {
            name: all()[6].0,
            op: &op,
            input: &input,
            shape,
            peer: Peer {
                name: "slice with steps",
                op: |t| t.slice(s![.., .., 0..512;2, 0..512;2]).reshape([-1]),
            },
            map,
            // Every other row of each plane, every other element of those rows.
            rust: |input, out| {
                for (o, rows) in out.chunks_exact_mut(256).zip(input.chunks_exact(2 * 512)) {
                    for (y, &x) in o.iter_mut().zip(rows[..512].iter().step_by(2)) {
                        *y = x;
                    }
                }
            },
            targets: Targets { copy: 0.6, burn: 3.0 },
        },
    )
}

fn nhwc_to_nchw(env: &Env) -> Outcome {
    // Stored NHWC ([16, 128, 128, 64] row-major), described as NCHW with strides.
    let nhwc = [16, 128, 128, 64];
    let nchw = [16, 64, 128, 128];
    let op = stridex::slice! {
        input: f32[16, 64, 128, 128] strides [1048576, 1, 8192, 64],
        offsets: [0, 0, 0, 0], sizes: [16, 64, 128, 128], strides: [1, 1, 1, 1],
    };
    let map = move |o: usize| {
        let [n, c, h, w] = coords(o, nchw);
        offset([n, h, w, c], nhwc)
    };
    let input = values_f32(nhwc.iter().product());
    slice_case(
        env,
        SliceCase {
            name: all()[7].0,
            op: &op,
            input: &input,
            shape: nhwc,
            // `permute` is a view in Burn; flattening it runs Burn's copy kernel.
            peer: Peer { name: "permute, then materialized", op: |t| t.permute([0, 3, 1, 2]).reshape([-1]) },
            map,
            // A transpose of each image's [H*W, C] to [C, H*W], output rows written in order.
            rust: |input, out| {
                let (hw, ch) = (128 * 128, 64);
                for (o, image) in out.chunks_exact_mut(hw * ch).zip(input.chunks_exact(hw * ch)) {
                    for (c, plane) in o.chunks_exact_mut(hw).enumerate() {
                        for (p, y) in plane.iter_mut().enumerate() {
                            *y = image[p * ch + c];
                        }
                    }
                }
            },
            targets: Targets { copy: 0.6, burn: 3.0 },
        },
    )
}

fn crop(env: &Env) -> Outcome {
    let shape = [8, 3, 512, 512];
    let out_shape = [8, 3, 448, 448];
    let op = stridex::slice! {
        input: f32[8, 3, 512, 512], offsets: [0, 0, 32, 32], sizes: [8, 3, 448, 448], strides: [1, 1, 1, 1],
    };
    let map = move |o: usize| {
        let mut c = coords(o, out_shape);
        c[2] += 32;
        c[3] += 32;
        offset(c, shape)
    };
    let input = values_f32(shape.iter().product());
    slice_case(
        env,
        SliceCase {
            name: all()[8].0,
            op: &op,
            input: &input,
            shape,
            peer: Peer {
                name: "slice, materialized",
                op: |t| t.slice([0..8, 0..3, 32..480, 32..480]).reshape([-1]),
            },
            map,
            // Rows are contiguous: one copy per output row.
            rust: |input, out| {
                for (o, plane) in out.chunks_exact_mut(448 * 448).zip(input.chunks_exact(512 * 512)) {
                    for (y, row) in o.chunks_exact_mut(448).enumerate() {
                        row.copy_from_slice(&plane[(32 + y) * 512 + 32..][..448]);
                    }
                }
            },
            // The crop's target is the copy alone: Burn's slice is a copy kernel too.
            targets: Targets { copy: 0.9, burn: 0.0 },
        },
    )
}
