//! Ops on Burn 0.22 tensors (feature `burn`), on the device stridex runs on (lavapipe, or
//! CubeCL's CPU runtime under `STRIDEX_BACKEND=cpu`): values equal Burn's own `select`,
//! `gather`, `slice` and `flip` on the same tensors, in Burn's fusion stream (`Tensor`, what
//! a Burn user holds) and on `CubeBackend` tensors (`apply_cube`); mismatches are `Err`s
//! naming them.

use stridex::burn::burn_cubecl::tensor::CubeTensor;
use stridex::burn::burn_cubecl::{Cube, CubeBackend};
use stridex::burn::burn_tensor::{s, Device, Int, Tensor, TensorData};
use stridex::burn::BurnKind;
use stridex::{Error, Operand};

/// Burn's device for the one stridex runs on: both share one CubeCL client.
fn device() -> Device {
    stridex::Device::default_device().expect("a device").burn_device()
}

fn table(rows: usize, dim: usize) -> (Vec<f32>, Tensor<2>) {
    let values: Vec<f32> = (0..rows * dim).map(|v| v as f32 * 0.5).collect();
    let t = Tensor::<2>::from_data(TensorData::new(values.clone(), [rows, dim]), &device());
    (values, t)
}

fn ids(values: &[i32], shape: [usize; 1]) -> Tensor<1, Int> {
    Tensor::<1, Int>::from_data(TensorData::new(values.to_vec(), shape), &device())
}

fn f32s<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_to_vec::<f32>().unwrap()
}

/// The `CubeBackend` tensor behind a Burn tensor, taken out of the fusion stream.
fn cube<K: BurnKind, const D: usize>(t: Tensor<D, K>) -> CubeTensor {
    let fused = t.try_into_primitive::<Cube>().unwrap();
    let client = fused.client.clone();
    if K::FLOAT {
        client.resolve_tensor_float::<CubeBackend>(fused)
    } else {
        client.resolve_tensor_int::<CubeBackend>(fused)
    }
}

/// A packed f32 `CubeTensor`'s values.
fn cube_f32s(t: &CubeTensor) -> Vec<f32> {
    let n: usize = t.meta.shape().iter().product();
    let bytes = t.client.read_one(t.handle.clone()).unwrap();
    bytes[..4 * n].chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()
}

#[test]
fn embedding_equals_select_in_the_stream_and_on_cube_backend() {
    let op = stridex::gather! { data: f32[50, 8], indices: i32[6] };
    let (_, t) = table(50, 8);
    let i = ids(&[3, 0, 49, 7, 7, -1], [6]);
    let y: Tensor<2> = op.apply(t.clone(), i.clone()).unwrap();
    assert_eq!(y.dims(), [6, 8]);
    // Burn's select takes no negative ids: the peer gets 49 for -1.
    let peer = f32s(t.clone().select(0, ids(&[3, 0, 49, 7, 7, 49], [6])));
    assert_eq!(f32s(y), peer);
    let y = op.apply_cube(cube(t.clone()), cube(i)).unwrap();
    assert_eq!(y.meta.shape().as_slice(), [6, 8]);
    assert_eq!(cube_f32s(&y), peer);

    // In the stream, between Burn's own ops: (t * 2) -> gather -> + 1.
    let i = ids(&[1, 2, 3, 4, 5, 6], [6]);
    let y: Tensor<2> = op.apply(t.clone() * 2.0, i.clone()).unwrap();
    let y = y + 1.0;
    let peer = (t * 2.0).select(0, i) + 1.0;
    assert_eq!(f32s(y), f32s(peer));
}

#[test]
fn batch_gather_and_slices_equal_burn() {
    let device = device();
    let cache: Vec<f32> = (0..2 * 3 * 4).map(|v| v as f32).collect();
    let c = Tensor::<3>::from_data(TensorData::new(cache.clone(), [2, 3, 4]), &device);
    let beams = Tensor::<2, Int>::from_data(TensorData::new(vec![2i32, 2, 0, 1, 0, 1], [2, 3]), &device);
    let op =
        stridex::gather! { rules: openvino, data: f32[2, 3, 4], indices: i32[2, 3], axis: 1, batch_dims: 1 };
    let y: Tensor<3> = op.apply(c.clone(), beams.clone()).unwrap();
    // Burn's gather takes indices of the output's shape.
    let expanded = beams.reshape([2, 3, 1]).repeat_dim(2, 4);
    assert_eq!(f32s(y), f32s(c.clone().gather(1, expanded)));

    let flip = stridex::slice! { rules: onnx, input: f32[2, 3, 4], starts: [-1], ends: [-5], axes: [2], steps: [-1] };
    let y = flip.apply(c.clone()).unwrap();
    assert_eq!(f32s(y), f32s(c.clone().flip([2])));
    let y = flip.apply_cube(cube(c.clone())).unwrap();
    assert_eq!(cube_f32s(&y), f32s(c.clone().flip([2])));
    let crop = stridex::slice!(input: f32[2, 3, 4], s[.., 1.., 1..3]);
    assert_eq!(f32s(crop.apply(c.clone()).unwrap()), f32s(c.slice([0..2, 1..3, 1..3])));
}

#[test]
fn a_strided_view_is_read_where_the_descriptor_declares_it() {
    // A [4, 6] table seen transposed: a [6, 4] view of its buffer with strides [1, 6]. The
    // buffer is a 1-D tensor's: Burn pads a 2-D tensor's rows on CUDA.
    let values: Vec<f32> = (0..24).map(|v| v as f32 * 0.5).collect();
    let flat = cube(Tensor::<1>::from_data(TensorData::new(values.clone(), [24]), &device()));
    let view = view_of(&flat, [6, 4], [1, 6]);
    let strided = stridex::gather! { data: f32[6, 4] strides [1, 6], indices: i32[2], axis: 0 };
    let y = strided.apply_cube(view.clone(), cube(ids(&[5, 0], [2]))).unwrap();
    let values = &values;
    let want: Vec<f32> = [5, 0].iter().flat_map(|&r| (0..4).map(move |c| values[c * 6 + r])).collect();
    assert_eq!(cube_f32s(&y), want);
    // The packed descriptor refuses the view, and says what to do.
    let packed = stridex::gather! { data: f32[6, 4], indices: i32[2], axis: 0 };
    let e = packed.apply_cube(view, cube(ids(&[5, 0], [2]))).unwrap_err();
    assert!(matches!(e, Error::BurnTensor { tensor: Operand::Data, .. }), "{e}");
    assert!(
        e.to_string().contains("strides [1, 6]") && e.to_string().contains("stridex::burn::packed"),
        "{e}"
    );
}

/// A `CubeTensor` of `sizes` and `strides` over `t`'s buffer.
fn view_of<const D: usize>(t: &CubeTensor, sizes: [usize; D], strides: [usize; D]) -> CubeTensor {
    CubeTensor::new(
        t.client.clone(),
        t.handle.clone(),
        stridex::burn::burn_std::Metadata::new(sizes, strides),
        t.device.clone(),
        t.dtype,
    )
}

/// Burn pads each row to an aligned pitch on CUDA (`[n, 3]` f32: strides `[4, 1]`), and its
/// `into_contiguous` keeps the pitch: a packed descriptor takes such a tensor packed first, on
/// `CubeBackend` as in Burn's stream, and `stridex::burn::packed` does it for any layout.
#[test]
fn pitched_rows_are_packed() {
    let values: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let flat = cube(Tensor::<1>::from_data(TensorData::new(values, [12]), &device()));
    let pitched = view_of(&flat, [3, 3], [4, 1]);
    let op = stridex::gather! { data: f32[3, 3], indices: i32[2], axis: 0 };
    let y = op.apply_cube(pitched.clone(), cube(ids(&[2, 0], [2]))).unwrap();
    assert_eq!(cube_f32s(&y), [8.0, 9.0, 10.0, 0.0, 1.0, 2.0]);
    // Columns of the same buffer are a view, not padded rows: declared, or an `Err`.
    let e = op.apply_cube(view_of(&flat, [3, 3], [1, 4]), cube(ids(&[2, 0], [2]))).unwrap_err();
    assert!(e.to_string().contains("stridex::burn::packed"), "{e}");
    let p = stridex::burn::packed(pitched).unwrap();
    assert_eq!(p.meta.strides().to_vec(), [3, 1]);
    assert_eq!(cube_f32s(&p), [0.0, 1.0, 2.0, 4.0, 5.0, 6.0, 8.0, 9.0, 10.0]);
    let y = op.apply_cube(p, cube(ids(&[2, 0], [2]))).unwrap();
    assert_eq!(cube_f32s(&y), [8.0, 9.0, 10.0, 0.0, 1.0, 2.0]);
    // A broadcast (stride 0) and columns read as rows pack too.
    let p = stridex::burn::packed(view_of(&flat, [2, 3], [0, 1])).unwrap();
    assert_eq!(cube_f32s(&p), [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    let p = stridex::burn::packed(view_of(&flat, [3, 2], [1, 4])).unwrap();
    assert_eq!(cube_f32s(&p), [0.0, 4.0, 1.0, 5.0, 2.0, 6.0]);
    // 16-bit elements move as their own units: rows of 3 f16 padded to 4.
    let halves: Vec<f32> = (0..8).map(|v| v as f32).collect();
    let flat_halves = Tensor::<1>::from_data(TensorData::new(halves, [8]), &device())
        .cast(stridex::burn::burn_tensor::DType::F16);
    let p = stridex::burn::packed(view_of(&cube(flat_halves), [2, 3], [4, 1])).unwrap();
    let bytes = p.client.read_one(p.handle.clone()).unwrap();
    let got: Vec<f32> =
        bytes[..12].chunks(2).map(|b| stridex::half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect();
    assert_eq!(got, [0.0, 1.0, 2.0, 4.0, 5.0, 6.0]);
    // A quantized buffer holds blocks beside their scales, not elements: an `Err`, not bits.
    let mut quantized = view_of(&flat, [3, 3], [3, 1]);
    quantized.dtype = stridex::burn::burn_tensor::DType::QFloat(Default::default());
    let e = stridex::burn::packed(quantized).unwrap_err();
    assert!(matches!(e, Error::BurnTensor { tensor: Operand::Input, .. }), "{e}");
    assert!(e.to_string().contains("quantized"), "{e}");
}

#[test]
fn mismatches_are_errors() {
    let op = stridex::gather! { data: f32[50, 8], indices: i32[6] };
    let (_, t) = table(40, 8);
    let e = op.apply::<_, 2, 1, 2>(t, ids(&[0; 6], [6])).unwrap_err();
    assert!(e.to_string().contains("shape [40, 8], but the op's `data` is [50, 8]"), "{e}");
    let (_, t) = table(50, 8);
    let e = op.apply::<_, 2, 1, 3>(t.clone(), ids(&[0; 6], [6])).unwrap_err();
    assert!(e.to_string().contains("`output` has rank 2, but the Burn tensor type has rank 3"), "{e}");
    // ONNX's `error` policy: an id out of range is an Err, in the stream and on CubeBackend.
    let e = op.apply::<_, 2, 1, 2>(t.clone(), ids(&[0, -51, 0, 0, 0, 0], [6])).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { value: -51, .. }), "{e}");
    let e = op.apply_cube(cube(t.clone()), cube(ids(&[0, 0, 50, 0, 0, 0], [6]))).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { value: 50, .. }), "{e}");
    // An i64 descriptor does not take Burn's i32 ids.
    let wide = stridex::gather! { data: f32[50, 8], indices: i64[6] };
    let e = wide.apply::<_, 2, 1, 2>(t, ids(&[0; 6], [6])).unwrap_err();
    assert!(e.to_string().contains("holds I32, but the op's `indices` is i64"), "{e}");
}

/// A `_` op on Burn tensors: the count is the leading size of the tensor that carries it, one
/// op for every count.
#[test]
fn a_dynamic_leading_size_takes_any_count() {
    stridex::gather! { static EMBED; data: f32[50, 8], indices: i32[_] }
    stridex::chain! {
        static LAST;
        data: f32[50, 8],
        gather { indices: i32[_, 4], axis: 0 },
        slice { rules: onnx, starts: [-1], ends: [4], axes: [1] },
    }
    let (_, t) = table(50, 8);
    for n in [1usize, 3, 17] {
        let values: Vec<i32> = (0..n as i32).map(|i| (i * 11) % 50).collect();
        let i = ids(&values, [n]);
        let y: Tensor<2> = EMBED.apply(t.clone(), i.clone()).unwrap();
        assert_eq!(y.dims(), [n, 8]);
        let peer = f32s(t.clone().select(0, i.clone()));
        assert_eq!(f32s(y), peer);
        assert_eq!(cube_f32s(&EMBED.apply_cube(cube(t.clone()), cube(i)).unwrap()), peer);
        // A chain's count: the leading size of the index tensor that carries it.
        let i = Tensor::<2, Int>::from_data(TensorData::new(values.repeat(4), [n, 4]), &device());
        let y: Tensor<3> = LAST.apply(t.clone(), (i.clone(),)).unwrap();
        assert_eq!(y.dims(), [n, 1, 8]);
        let rows = t.clone().select(0, i.reshape([n * 4])).reshape([n, 4, 8]);
        assert_eq!(f32s(y), f32s(rows.slice([0..n, 3..4, 0..8])));
    }
    // Each row's picks after the count: the index tensor leads with it too.
    let picks = stridex::chain! { data: f32[_, 8], gather_elements { indices: i32[_, 3], axis: 1 } };
    for n in [2usize, 5] {
        let (_, x) = table(n, 8);
        let cols: Vec<i32> = (0..n * 3).map(|p| ((p * 5) % 8) as i32).collect();
        let i = Tensor::<2, Int>::from_data(TensorData::new(cols, [n, 3]), &device());
        let y: Tensor<2> = picks.apply(x.clone(), (i.clone(),)).unwrap();
        assert_eq!(y.dims(), [n, 3]);
        assert_eq!(f32s(y), f32s(x.gather(1, i)));
    }
    let crop = stridex::slice! { input: f32[_, 50, 8], s[.., 10..20, ..] };
    for n in [1usize, 4] {
        let values: Vec<f32> = (0..n * 400).map(|v| v as f32).collect();
        let x = Tensor::<3>::from_data(TensorData::new(values, [n, 50, 8]), &device());
        let y: Tensor<3> = crop.apply(x.clone()).unwrap();
        assert_eq!(y.dims(), [n, 10, 8]);
        assert_eq!(f32s(y), f32s(x.slice([0..n, 10..20, 0..8])));
    }
}

/// Chains on Burn tensors: one kernel on Burn's buffers equals Burn's ops run one by one.
#[test]
fn chains_equal_burn() {
    let device = device();
    // Token ids -> embedding rows -> the last position.
    let last = stridex::chain! {
        data: f32[50, 8],
        gather { indices: i32[2, 5], axis: 0 },
        slice { rules: onnx, starts: [-1], ends: [5], axes: [1] },
    };
    assert!(last.is_fused().unwrap());
    let (_, t) = table(50, 8);
    let values = vec![3i32, 9, 0, 49, 7, 11, 2, 2, 30, 1];
    let i = Tensor::<2, Int>::from_data(TensorData::new(values, [2, 5]), &device);
    let y: Tensor<3> = last.apply(t.clone(), (i.clone(),)).unwrap();
    assert_eq!(y.dims(), [2, 1, 8]);
    let peer = f32s(t.clone().select(0, i.clone().reshape([10])).reshape([2, 5, 8]).slice(s![.., 4..5, ..]));
    assert_eq!(f32s(y), peer);
    assert_eq!(cube_f32s(&last.apply_cube(cube(t), vec![cube(i)]).unwrap()), peer);

    // An NCHW batch: crop -> horizontal flip -> BGR<->RGB -> 2x downsample, between Burn ops.
    let image = stridex::chain! {
        data: f32[2, 3, 8, 8],
        slice { s[.., .., 1..7, 1..7] },
        slice { s[.., .., .., ..;-1] },
        gather { indices: i32[3], axis: 1 },
        slice { s[.., .., ..;2, ..;2] },
    };
    let x: Vec<f32> = (0..2 * 3 * 64).map(|v| v as f32).collect();
    let x = Tensor::<4>::from_data(TensorData::new(x, [2, 3, 8, 8]), &device);
    let bgr = ids(&[2, 1, 0], [3]);
    let y: Tensor<4> = image.apply(x.clone() + 1.0, (bgr.clone(),)).unwrap();
    assert_eq!(y.dims(), [2, 3, 3, 3]);
    let peer =
        (x + 1.0).slice(s![.., .., 1..7, 1..7]).flip([3]).select(1, bgr).slice(s![.., .., 0..6;2, 0..6;2]);
    assert_eq!(f32s(y * 2.0), f32s(peer * 2.0));

    // Two gathers whose index tensors differ in rank and type; against the chain's own run.
    let two = stridex::chain! {
        data: f32[50, 8],
        gather { indices: i32[2, 3], axis: 0 },
        gather { rules: openvino, indices: i32[2, 3, 2], axis: 2, batch_dims: 2 },
    };
    let (rows, cols) = (vec![4i32, 0, 49, 17, 17, 2], vec![7i32, 0, 1, 1, 6, 5, 3, 3, 0, 7, -1, 2]);
    let (table_values, t) = table(50, 8);
    let r = Tensor::<2, Int>::from_data(TensorData::new(rows.clone(), [2, 3]), &device);
    let c = Tensor::<3, Int>::from_data(TensorData::new(cols.clone(), [2, 3, 2]), &device);
    let y: Tensor<3> = two.apply(t, (r, c)).unwrap();
    assert_eq!(y.dims(), [2, 3, 2]);
    assert_eq!(f32s(y), two.run(&table_values, (&rows, &cols)).unwrap().into_data());

    // Int data, no gathers: a crop of an i32 tensor.
    let crop = stridex::chain! { data: i32[4, 6], slice { s[1..3, ..] }, slice { s[.., 2..;2] } };
    let v = Tensor::<2, Int>::from_data(TensorData::new((0..24).collect::<Vec<i32>>(), [4, 6]), &device);
    let y: Tensor<2, Int> = crop.apply(v, ()).unwrap();
    assert_eq!(y.into_data().try_to_vec::<i32>().unwrap(), vec![8, 10, 14, 16]);
}

#[test]
fn chain_mismatches_name_their_stage() {
    let op = stridex::chain! {
        data: f32[50, 8],
        slice { s[..40, ..] },
        gather { indices: i32[3], axis: 0 },
    };
    let (_, t) = table(50, 8);
    let e = op.apply::<_, 2, 2>(t.clone(), (ids(&[0; 4], [4]),)).unwrap_err();
    assert!(
        matches!(&e, Error::InStage { stage: 2, error } if matches!(**error, Error::BurnTensor { tensor: Operand::Indices, .. })),
        "{e}"
    );
    assert!(e.to_string().contains("stage 2") && e.to_string().contains("shape [4]"), "{e}");
    // Under `error`, the stage's ids are checked against the shape it receives (40 rows).
    let e = op.apply_cube(cube(t.clone()), vec![cube(ids(&[0, 40, 1], [3]))]).unwrap_err();
    assert!(
        matches!(&e, Error::InStage { stage: 2, error } if matches!(**error, Error::IndexOutOfRange { value: 40, .. })),
        "{e}"
    );
    let e = op.apply::<_, 2, 2>(t, (ids(&[-41, 0, 1], [3]),)).unwrap_err();
    assert!(
        matches!(&e, Error::InStage { stage: 2, error } if matches!(**error, Error::IndexOutOfRange { value: -41, .. })),
        "{e}"
    );
}

/// A scatter-add of gradient rows by id (an embedding's backward) equals Burn's own
/// `select_assign(.., Add)`, in the stream between Burn's ops and on `CubeBackend` tensors,
/// where a buffer Burn holds alone is written in place and a shared one is copied first.
#[test]
fn scatters_equal_select_assign() {
    use stridex::burn::burn_tensor::IndexingUpdateOp;
    let device = device();
    let op = stridex::scatter! { data: f32[10, 8], indices: i32[7], updates: f32[7, 8], reduction: add };
    let rows: Vec<f32> = (0..7 * 8).map(|v| (v as f32).sqrt()).collect();
    let updates = Tensor::<2>::from_data(TensorData::new(rows, [7, 8]), &device);
    let i = ids(&[3, 0, 3, 9, 3, 0, 5], [7]);
    let (_, t) = table(10, 8);
    let peer = f32s(t.clone().select_assign(0, i.clone(), updates.clone(), IndexingUpdateOp::Add));

    let y: Tensor<2> = op.apply(t.clone(), i.clone(), updates.clone()).unwrap();
    assert_eq!(f32s(y), peer);
    // Between Burn's ops: (t * 2) -> scatter -> + 1.
    let y: Tensor<2> = op.apply(t.clone() * 2.0, i.clone(), updates.clone()).unwrap();
    let peer2 = (t.clone() * 2.0).select_assign(0, i.clone(), updates.clone(), IndexingUpdateOp::Add) + 1.0;
    assert_eq!(f32s(y + 1.0), f32s(peer2));

    // On CubeBackend: a shared buffer is copied (the table keeps its values), a lone one is
    // written in place.
    let shared = cube(t.clone());
    let kept = shared.clone();
    let y = op.apply_cube(shared, cube(i.clone()), cube(updates.clone())).unwrap();
    assert_eq!(cube_f32s(&y), peer);
    assert_eq!(cube_f32s(&kept), table(10, 8).0);
    let lone = cube(t.clone() + 0.0);
    assert!(lone.can_mut());
    let y = op.apply_cube(lone, cube(i.clone()), cube(updates.clone())).unwrap();
    assert_eq!(cube_f32s(&y), peer);

    // The host run agrees.
    let (values, _) = table(10, 8);
    let rows: Vec<f32> = (0..7 * 8).map(|v| (v as f32).sqrt()).collect();
    assert_eq!(op.run(&values, &[3, 0, 3, 9, 3, 0, 5], &rows).unwrap().data(), peer.as_slice());
}

/// The scatters whose kernels read the indices on the device (a KV-cache write of whole rows,
/// a ScatterElements of many lines) apply on Burn tensors with no read-back: they run on the
/// index tensor itself, in the stream and on `CubeBackend`, and equal the host run. Under
/// `error`, `apply_cube` checks the indices on the device and an index out of range is an
/// `Err` that leaves the data as it was.
#[test]
fn on_device_scatters_apply_on_the_index_tensor() {
    use stridex::ScatterKernel;
    let device = device();
    let floats = |n: usize, k: f32| -> Vec<f32> { (0..n).map(|v| v as f32 * k).collect() };

    // A KV cache of 16 slots of [4, 8]; 6 new tokens, -1 a padding token's slot.
    let kv = stridex::scatter! {
        data: f32[16, 4, 8], indices: i32[6], updates: f32[6, 4, 8], axis: 0, out_of_range: skip
    };
    assert!(matches!(kv.kernel().unwrap(), Some(ScatterKernel::OnDevice(_))));
    let (cache, rows) = (floats(16 * 32, 0.5), floats(6 * 32, -1.0));
    let slots = [3, -1, 15, 0, 3, 7];
    let expected = kv.run(&cache, &slots, &rows).unwrap().data().to_vec();
    let t = Tensor::<3>::from_data(TensorData::new(cache.clone(), [16, 4, 8]), &device);
    let u = Tensor::<3>::from_data(TensorData::new(rows.clone(), [6, 4, 8]), &device);
    let i = ids(&slots, [6]);
    let y: Tensor<3> = kv.apply(t.clone(), i.clone(), u.clone()).unwrap();
    assert_eq!(f32s(y), expected);
    // Between Burn's ops, the cache then shared: it keeps its values.
    let y: Tensor<3> = kv.apply(t.clone() + 0.0, i.clone(), u.clone()).unwrap();
    assert_eq!(f32s(y + 0.0), expected);
    assert_eq!(f32s(t.clone()), cache);
    let y = kv.apply_cube(cube(t.clone() + 0.0), cube(i.clone()), cube(u.clone())).unwrap();
    assert_eq!(cube_f32s(&y), expected);
    // The same write with the count left to run time: the index tensor's leading size.
    let counted = stridex::scatter! {
        data: f32[16, 4, 8], indices: i32[_], updates: f32[_, 4, 8], axis: 0, out_of_range: skip
    };
    let y: Tensor<3> = counted.apply(t.clone(), i.clone(), u.clone()).unwrap();
    assert_eq!(f32s(y), expected);
    let y = counted.apply_cube(cube(t.clone() + 0.0), cube(i.clone()), cube(u.clone())).unwrap();
    assert_eq!(cube_f32s(&y), expected);
    let two = Tensor::<3>::from_data(TensorData::new(rows[..64].to_vec(), [2, 4, 8]), &device);
    let y: Tensor<3> = counted.apply(t.clone(), ids(&slots[..2], [2]), two).unwrap();
    assert_eq!(f32s(y), kv_first_two(&cache, &rows, &slots));

    // 300 lines of a ScatterElements add along axis 1, with repeats.
    let lines = stridex::scatter_elements! {
        data: f32[300, 8], indices: i32[300, 3], updates: f32[300, 3], axis: 1, reduction: add
    };
    assert!(matches!(lines.kernel().unwrap(), Some(ScatterKernel::OnDevice(_))));
    let (data, updates) = (floats(300 * 8, 0.25), floats(300 * 3, 1.5));
    let cols: Vec<i32> = (0..300 * 3).map(|p| [1, 7, 1, 0, -1][p % 5]).collect();
    let expected = lines.run(&data, &cols, &updates).unwrap().data().to_vec();
    let t = Tensor::<2>::from_data(TensorData::new(data.clone(), [300, 8]), &device);
    let u = Tensor::<2>::from_data(TensorData::new(updates, [300, 3]), &device);
    let i = Tensor::<2, Int>::from_data(TensorData::new(cols.clone(), [300, 3]), &device);
    let y: Tensor<2> = lines.apply(t.clone(), i.clone(), u.clone()).unwrap();
    assert_eq!(f32s(y), expected);
    let y = lines.apply_cube(cube(t.clone() + 0.0), cube(i), cube(u.clone())).unwrap();
    assert_eq!(cube_f32s(&y), expected);
    // A `_` ScatterElements along axis 0: 300 columns, each a line of the index tensor's
    // leading size, at two counts; against Burn's own `scatter(0, .., Add)`.
    let columns = stridex::scatter_elements! {
        data: f32[8, 300], indices: i32[_, 300], updates: f32[_, 300], axis: 0, reduction: add
    };
    for n in [2usize, 5] {
        let (data, updates) = (floats(8 * 300, 0.25), floats(n * 300, 1.5));
        let rows: Vec<i32> = (0..n * 300).map(|p| [1, 7, 1, 0, 4][p % 5]).collect();
        let expected = columns.run(&data, &rows, &updates).unwrap().data().to_vec();
        let t = Tensor::<2>::from_data(TensorData::new(data, [8, 300]), &device);
        let u = Tensor::<2>::from_data(TensorData::new(updates, [n, 300]), &device);
        let i = Tensor::<2, Int>::from_data(TensorData::new(rows, [n, 300]), &device);
        let y: Tensor<2> = columns.apply(t.clone(), i.clone(), u.clone()).unwrap();
        assert_eq!(f32s(y), expected, "count {n}");
        let peer =
            t.clone().scatter(0, i.clone(), u.clone(), stridex::burn::burn_tensor::IndexingUpdateOp::Add);
        assert_eq!(f32s(peer), expected, "Burn at {n}");
        let y = columns.apply_cube(cube(t + 0.0), cube(i), cube(u)).unwrap();
        assert_eq!(cube_f32s(&y), expected, "apply_cube at {n}");
    }

    // Under `error` (ONNX's default), an index past the end: an `Err` (the device check runs
    // before the write; `launch`'s tests show the data in place untouched), and a shared
    // tensor keeps its values.
    let mut bad = cols;
    bad[450] = 8;
    let i = Tensor::<2, Int>::from_data(TensorData::new(bad, [300, 3]), &device);
    let e = lines.apply_cube(cube(t.clone() + 0.0), cube(i.clone()), cube(u.clone())).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { value: 8, .. }), "{e}");
    let shared = cube(t.clone() + 0.0);
    let kept = shared.clone();
    let e = lines.apply_cube(shared, cube(i.clone()), cube(u.clone())).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { value: 8, .. }), "{e}");
    assert_eq!(cube_f32s(&kept), data);
    let e = lines.apply::<_, 2, 2, 2>(t, i, u).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { value: 8, .. }), "{e}");
}

/// The scatter's index errors come before anything joins the stream.
#[test]
fn scatter_index_errors_come_first() {
    let device = device();
    let updates = Tensor::<2>::from_data(TensorData::new(vec![1.0f32; 3 * 8], [3, 8]), &device);
    let (_, t) = table(10, 8);
    let op = stridex::scatter! { data: f32[10, 8], indices: i32[3], updates: f32[3, 8], duplicates: error,
    out_of_range: error };
    let e = op.apply::<_, 2, 1, 2>(t.clone(), ids(&[4, 1, 4], [3]), updates.clone()).unwrap_err();
    assert!(matches!(e, Error::DuplicateIndex { .. }), "{e}");
    let e = op.apply_cube(cube(t.clone()), cube(ids(&[4, 10, 1], [3])), cube(updates.clone())).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { value: 10, .. }), "{e}");
    let e = op.apply::<_, 2, 1, 2>(t, ids(&[0, 1, 2], [3]), updates.clone().slice(s![0..2, ..])).unwrap_err();
    assert!(e.to_string().contains("shape [2, 8], but the op's `updates` is [3, 8]"), "{e}");
}

/// `gather_elements!` equals Burn's `gather` (which is GatherElements), and `gather_nd!`
/// its host run, on Burn tensors.
#[test]
fn gather_elements_and_nd_apply() {
    let device = device();
    let (values, t) = table(4, 6);
    let picks: Vec<i32> = vec![5, 0, 2, 1, 3, 3, 4, 0];
    let i = Tensor::<2, Int>::from_data(TensorData::new(picks.clone(), [4, 2]), &device);
    let op = stridex::gather_elements! { data: f32[4, 6], indices: i32[4, 2], axis: 1 };
    let y: Tensor<2> = op.apply(t.clone(), i.clone()).unwrap();
    assert_eq!(f32s(y), f32s(t.clone().gather(1, i)));

    let nd = stridex::gather_nd! { rules: openvino, data: f32[4, 6], indices: i32[3, 2] };
    let pairs: Vec<i32> = vec![0, 5, 3, 0, 2, 2];
    let i = Tensor::<2, Int>::from_data(TensorData::new(pairs.clone(), [3, 2]), &device);
    let y: Tensor<1> = nd.apply(t, i).unwrap();
    assert_eq!(f32s(y), nd.run(&values, &pairs).unwrap().data());
}

/// A cache with the rows of the first two slots of `slots` written (`-1` skipped).
fn kv_first_two(cache: &[f32], rows: &[f32], slots: &[i32]) -> Vec<f32> {
    let mut out = cache.to_vec();
    for (p, &slot) in slots[..2].iter().enumerate().filter(|(_, &s)| s >= 0) {
        out[slot as usize * 32..][..32].copy_from_slice(&rows[p * 32..][..32]);
    }
    out
}
