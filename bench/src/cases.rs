//! The benchmark cases: each times stridex, the device copy of the same bytes and Burn's
//! matching op, and checks both results once against the host.
//!
//! Bytes moved: a gather reads each output element once plus its indices and writes each output
//! element once; a slice reads and writes each output element once. Every implementation of a
//! case is credited with the same bytes, so the GB/s columns compare times.

use crate::measure::{host, Env};
use crate::report::{Outcome, Targets};
use burn::backend::ndarray::NdArray;
use burn::backend::wgpu::CubeBackend;
use burn::tensor::backend::{Backend, DeviceOps};
use burn::tensor::{s, DType, Int, Tensor, TensorData};
use half::f16;
use stridex::cubecl::Runtime;
use stridex::Element;

type Burn<R> = CubeBackend<R, f32, i32, u32>;
type Burn16<R> = CubeBackend<R, f16, i32, u32>;

pub type Case<R> = (&'static str, fn(&Env<R>) -> Outcome);

pub fn all<R: Runtime>() -> Vec<Case<R>>
where
    R::Device: DeviceOps,
{
    vec![
        ("embedding f32[16384,1024] <- i32[16384]", embedding_f32::<R>),
        ("embedding f16[16384,1024] <- i64[16384]", embedding_f16::<R>),
        ("columns f32[4096,4096] axis 1 <- i32[1024]", columns_f32::<R>),
        ("columns u8[8192,8192] axis 1 <- i32[2048]", columns_u8::<R>),
        ("beam reorder f32[16,8,512,128] <- i32[16,8], b=1", beam_reorder::<R>),
        ("flip last axis f32[8,3,512,512]", flip::<R>),
        ("step 2 on H,W f32[32,3,512,512]", step2::<R>),
        ("NHWC -> NCHW f32[16,64,128,128]", nhwc_to_nchw::<R>),
        ("crop f32[8,3,512,512] -> [8,3,448,448]", crop::<R>),
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
fn check<T: Element>(what: &str, case: &str, got: &[T], src: &[T], map: impl Fn(usize) -> usize) {
    assert_eq!(got.len(), got.len());
    if let Some(o) = (0..got.len()).find(|&o| T::bytes(&got[o..o + 1]) != T::bytes(&src[map(o)..map(o) + 1]))
    {
        panic!("{case}: {what} output[{o}] = {:?}, expected {:?}", got[o], src[map(o)]);
    }
}

fn gbytes_gather(out_elems: usize, elem: usize, index_bytes: usize) -> usize {
    2 * out_elems * elem + index_bytes
}

fn embedding_f32<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
    let name = all::<R>()[0].0;
    let (rows, dim, n) = (16384, 1024, 16384);
    let table = values_f32(rows * dim);
    let ids64 = ids(n, rows);
    let ids32: Vec<i32> = ids64.iter().map(|&i| i as i32).collect();
    let map = |o: usize| ids64[o / dim] as usize * dim + o % dim;
    let op = stridex::gather! { data: f32[16384, 1024], indices: i32[16384] };
    let (t, out) = env.gather(&op, &table, &ids32);
    check("stridex", name, &out, &table, map);

    let bt = Tensor::<Burn<R>, 2>::from_data(TensorData::new(table.clone(), [rows, dim]), env.device);
    let bi = Tensor::<Burn<R>, 1, Int>::from_data(TensorData::new(ids32.clone(), [n]), env.device);
    let (tb, bo) = env.burn::<Burn<R>, _>(env.device, || bt.clone().select(0, bi.clone()));
    check("Burn", name, &bo.into_data().to_vec::<f32>().unwrap(), &table, map);

    let mut rows_out = vec![0f32; n * dim];
    let cpu = host(env.settings.reps, || {
        for (row, &id) in rows_out.chunks_exact_mut(dim).zip(&ids32) {
            row.copy_from_slice(&table[id as usize * dim..][..dim]);
        }
        std::hint::black_box(&rows_out);
    });
    check("host rows", name, &rows_out, &table, map);

    let nd = Default::default();
    let nt = Tensor::<NdArray, 2>::from_data(TensorData::new(table.clone(), [rows, dim]), &nd);
    let ni = Tensor::<NdArray, 1, Int>::from_data(TensorData::new(ids64.clone(), [n]), &nd);
    let tn = host(env.settings.reps, || {
        std::hint::black_box(nt.clone().select(0, ni.clone()));
    });
    let bytes = gbytes_gather(n * dim, 4, n * 4);
    Outcome {
        case: name,
        bytes,
        stridex: t,
        copy: env.copy(bytes / 2),
        burn: Some(tb),
        burn_op: "select(0)",
        cpu_rows: Some(cpu),
        ndarray: Some(tn),
        targets: Targets { copy: 0.9, burn: 6.0 },
    }
}

fn embedding_f16<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
    let name = all::<R>()[1].0;
    let (rows, dim, n) = (16384, 1024, 16384);
    let table: Vec<f16> = (0..rows * dim).map(|i| f16::from_bits((i % 65521) as u16)).collect();
    let ids64 = ids(n, rows);
    let map = |o: usize| ids64[o / dim] as usize * dim + o % dim;
    let op = stridex::gather! { data: f16[16384, 1024], indices: i64[16384] };
    let (t, out) = env.gather(&op, &table, &ids64);
    check("stridex", name, &out, &table, map);

    let (burn, burn_op) = if Burn16::<R>::supports_dtype(env.device, DType::F16) {
        // Values go up as f32 and come back bit-exact only when they are finite; compare the
        // bits Burn returns with the bits of the f16 table it was given.
        let bt = Tensor::<Burn16<R>, 2>::from_data(
            TensorData::new(table.clone(), [rows, dim]),
            (env.device, DType::F16),
        );
        let ids32: Vec<i32> = ids64.iter().map(|&i| i as i32).collect();
        let bi = Tensor::<Burn16<R>, 1, Int>::from_data(TensorData::new(ids32, [n]), env.device);
        let (tb, bo) = env.burn::<Burn16<R>, _>(env.device, || bt.clone().select(0, bi.clone()));
        check("Burn", name, &bo.into_data().to_vec::<f16>().unwrap(), &table, map);
        (Some(tb), "select(0), i32 ids")
    } else {
        (None, "no f16 on this device")
    };
    let mut rows_out = vec![f16::ZERO; n * dim];
    let cpu = host(env.settings.reps, || {
        for (row, &id) in rows_out.chunks_exact_mut(dim).zip(&ids64) {
            row.copy_from_slice(&table[id as usize * dim..][..dim]);
        }
        std::hint::black_box(&rows_out);
    });
    let bytes = gbytes_gather(n * dim, 2, n * 8);
    Outcome {
        case: name,
        bytes,
        stridex: t,
        copy: env.copy(bytes / 2),
        burn,
        burn_op,
        cpu_rows: Some(cpu),
        ndarray: None,
        targets: Targets { copy: 0.9, burn: 6.0 },
    }
}

fn columns_f32<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
    let name = all::<R>()[2].0;
    let (rows, cols, n) = (4096, 4096, 1024);
    let data = values_f32(rows * cols);
    let ids32: Vec<i32> = ids(n, cols).iter().map(|&i| i as i32).collect();
    let map = |o: usize| (o / n) * cols + ids32[o % n] as usize;
    let op = stridex::gather! { data: f32[4096, 4096], indices: i32[1024], axis: 1 };
    let (t, out) = env.gather(&op, &data, &ids32);
    check("stridex", name, &out, &data, map);

    let bt = Tensor::<Burn<R>, 2>::from_data(TensorData::new(data.clone(), [rows, cols]), env.device);
    let bi = Tensor::<Burn<R>, 1, Int>::from_data(TensorData::new(ids32.clone(), [n]), env.device);
    let (tb, bo) = env.burn::<Burn<R>, _>(env.device, || bt.clone().select(1, bi.clone()));
    check("Burn", name, &bo.into_data().to_vec::<f32>().unwrap(), &data, map);
    let bytes = gbytes_gather(rows * n, 4, n * 4);
    Outcome {
        case: name,
        bytes,
        stridex: t,
        copy: env.copy(bytes / 2),
        burn: Some(tb),
        burn_op: "select(1)",
        cpu_rows: None,
        ndarray: None,
        targets: Targets { copy: 0.6, burn: 3.0 },
    }
}

fn columns_u8<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
    let name = all::<R>()[3].0;
    let (rows, cols, n) = (8192, 8192, 2048);
    let data: Vec<u8> = (0..rows * cols).map(|i| (i * 31 + i / 8191) as u8).collect();
    let ids32: Vec<i32> = ids(n, cols).iter().map(|&i| i as i32).collect();
    let map = |o: usize| (o / n) * cols + ids32[o % n] as usize;
    let op = stridex::gather! { data: u8[8192, 8192], indices: i32[2048], axis: 1 };
    let (t, out) = env.gather(&op, &data, &ids32);
    check("stridex", name, &out, &data, map);

    let (burn, burn_op) = if Burn::<R>::supports_dtype(env.device, DType::U8) {
        let bt = Tensor::<Burn<R>, 2, Int>::from_data(
            TensorData::new(data.clone(), [rows, cols]),
            (env.device, DType::U8),
        );
        let bi = Tensor::<Burn<R>, 1, Int>::from_data(TensorData::new(ids32.clone(), [n]), env.device);
        let (tb, bo) = env.burn::<Burn<R>, _>(env.device, || bt.clone().select(1, bi.clone()));
        check("Burn", name, &bo.into_data().to_vec::<u8>().unwrap(), &data, map);
        (Some(tb), "select(1) on a u8 Int tensor")
    } else {
        (None, "no u8 tensors on this device")
    };
    let bytes = gbytes_gather(rows * n, 1, n * 4);
    Outcome {
        case: name,
        bytes,
        stridex: t,
        copy: env.copy(bytes / 2),
        burn,
        burn_op,
        cpu_rows: None,
        ndarray: None,
        targets: Targets { copy: 0.6, burn: 3.0 },
    }
}

fn beam_reorder<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
    let name = all::<R>()[4].0;
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
    check("stridex", name, &out, &cache, map);

    let bt = Tensor::<Burn<R>, 4>::from_data(TensorData::new(cache.clone(), [b, k, s, d]), env.device);
    // Burn's gather takes indices of the output's shape: the beam ids expanded (made once, untimed).
    let expanded: Vec<i32> = (0..b * k * inner).map(|o| beams[o / inner]).collect();
    let bi = Tensor::<Burn<R>, 4, Int>::from_data(TensorData::new(expanded, [b, k, s, d]), env.device);
    let (tb, bo) = env.burn::<Burn<R>, _>(env.device, || bt.clone().gather(1, bi.clone()));
    check("Burn", name, &bo.into_data().to_vec::<f32>().unwrap(), &cache, map);
    let bytes = gbytes_gather(b * k * inner, 4, b * k * 4);
    Outcome {
        case: name,
        bytes,
        stridex: t,
        copy: env.copy(bytes / 2),
        burn: Some(tb),
        burn_op: "gather(1) on expanded ids",
        cpu_rows: None,
        ndarray: None,
        targets: Targets { copy: 0.6, burn: 3.0 },
    }
}

/// Burn's op for a slice case: its name and the op, which returns the result flattened (a view
/// is materialized by flattening it).
struct Peer<R: Runtime, const D: usize>
where
    R::Device: DeviceOps,
{
    name: &'static str,
    op: fn(Tensor<Burn<R>, D>) -> Tensor<Burn<R>, 1>,
}

/// A slice case: stridex's op against `map` (output position -> input position), and Burn's
/// peer on the same input as a tensor of `shape`.
struct SliceCase<'a, R: Runtime, const D: usize, M: Fn(usize) -> usize>
where
    R::Device: DeviceOps,
{
    name: &'static str,
    op: &'a stridex::SliceOp<f32>,
    input: &'a [f32],
    shape: [usize; D],
    peer: Peer<R, D>,
    map: M,
    targets: Targets,
}

fn slice_case<R: Runtime, const D: usize, M: Fn(usize) -> usize>(
    env: &Env<R>,
    c: SliceCase<R, D, M>,
) -> Outcome
where
    R::Device: DeviceOps,
{
    let (t, out) = env.slice(c.op, c.input);
    check("stridex", c.name, &out, c.input, &c.map);
    let bt = Tensor::<Burn<R>, D>::from_data(TensorData::new(c.input.to_vec(), c.shape), env.device);
    let (tb, bo) = env.burn::<Burn<R>, _>(env.device, || (c.peer.op)(bt.clone()));
    check("Burn", c.name, &bo.into_data().to_vec::<f32>().unwrap(), c.input, &c.map);
    let bytes = 2 * out.len() * 4;
    Outcome {
        case: c.name,
        bytes,
        stridex: t,
        copy: env.copy(bytes / 2),
        burn: Some(tb),
        burn_op: c.peer.name,
        cpu_rows: None,
        ndarray: None,
        targets: c.targets,
    }
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

fn flip<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
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
            name: all::<R>()[5].0,
            op: &op,
            input: &input,
            shape,
            peer: Peer { name: "flip([3])", op: |t| t.flip([3]).reshape([-1]) },
            map,
            targets: Targets { copy: 0.6, burn: 3.0 },
        },
    )
}

fn step2<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
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
            name: all::<R>()[6].0,
            op: &op,
            input: &input,
            shape,
            peer: Peer {
                name: "slice with steps",
                op: |t| t.slice(s![.., .., 0..512;2, 0..512;2]).reshape([-1]),
            },
            map,
            targets: Targets { copy: 0.6, burn: 3.0 },
        },
    )
}

fn nhwc_to_nchw<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
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
            name: all::<R>()[7].0,
            op: &op,
            input: &input,
            shape: nhwc,
            // `permute` is a view in Burn; flattening it runs Burn's copy kernel.
            peer: Peer { name: "permute, then materialized", op: |t| t.permute([0, 3, 1, 2]).reshape([-1]) },
            map,
            targets: Targets { copy: 0.6, burn: 3.0 },
        },
    )
}

fn crop<R: Runtime>(env: &Env<R>) -> Outcome
where
    R::Device: DeviceOps,
{
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
            name: all::<R>()[8].0,
            op: &op,
            input: &input,
            shape,
            peer: Peer {
                name: "slice, materialized",
                op: |t| t.slice([0..8, 0..3, 32..480, 32..480]).reshape([-1]),
            },
            map,
            // The crop's target is the copy alone: Burn's slice is a copy kernel too.
            targets: Targets { copy: 0.9, burn: 0.0 },
        },
    )
}
