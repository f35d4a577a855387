//! Backward passes on Burn's autodiff (feature `burn`), on the device stridex runs on: the
//! gradients of gathers (`gather!`, `gather_elements!`, `gather_nd!`) and slices equal Burn's
//! own autodiff of `select`, `gather`, `slice` and `flip` on the same graph, or a host
//! scatter-add where Burn has no such op; a chain's are its stages' in reverse; they are the
//! same bits from run to run; what has no backward pass is an `Err` in the forward call, never
//! a panic.

use stridex::burn::burn_tensor::{Device, Int, Tensor, TensorData};
use stridex::Error;

/// Burn's autodiff device over the one stridex runs on.
fn device() -> Device {
    stridex::Device::default_device().expect("a device").burn_device().autodiff()
}

fn floats<const D: usize>(values: Vec<f32>, shape: [usize; D]) -> Tensor<D> {
    Tensor::<D>::from_data(TensorData::new(values, shape), &device())
}

fn ints<const D: usize>(values: &[i32], shape: [usize; D]) -> Tensor<D, Int> {
    Tensor::<D, Int>::from_data(TensorData::new(values.to_vec(), shape), &device())
}

/// `values` as an i64 `Int` tensor.
fn wide_ints<const D: usize>(values: &[i32], shape: [usize; D]) -> Tensor<D, Int> {
    let wide: Vec<i64> = values.iter().map(|&v| v.into()).collect();
    Tensor::<D, Int>::from_data(
        TensorData::new(wide, shape),
        (&device(), stridex::burn::burn_tensor::DType::I64),
    )
}

fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_to_vec::<f32>().unwrap()
}

/// Weights that make each output element's gradient distinct (and not exact in binary, so a
/// sum's order shows in its bits).
fn weights(n: usize) -> Vec<f32> {
    (0..n).map(|i| 0.1 + (i as f32 * 0.37).sin()).collect()
}

/// The gradient of `sum(f(x) * w)` for `x` of `shape` (values `0.5 * i`), through `f`.
fn gradient<const D: usize, const DO: usize>(
    shape: [usize; D],
    f: impl Fn(Tensor<D>) -> Tensor<DO>,
) -> Vec<f32> {
    let n = shape.iter().product::<usize>();
    let x = floats((0..n).map(|v| v as f32 * 0.5).collect(), shape).require_grad();
    let y = f(x.clone());
    let w = floats(weights(y.shape().num_elements()), y.dims());
    let grads = (y * w).sum().backward();
    values(x.grad(&grads).expect("x requires gradients"))
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn an_embedding_gradient_equals_burns_select_and_repeats_bit_for_bit() {
    let op = stridex::gather! { data: f32[40, 16], indices: i32[24] };
    // Many repeats: each repeated row's gradient is a sum in the ids' order.
    let ids: Vec<i32> = (0..24).map(|i| [3, 17, 3, 39, 0, 3][i % 6]).collect();
    let ours = || gradient([40, 16], |t| op.apply::<_, 2, 1, 2>(t, ints(&ids, [24])).unwrap());
    let first = ours();
    let burn = gradient([40, 16], |t| t.select(0, ints(&ids, [24])));
    assert_eq!(first, burn);
    for _ in 0..5 {
        assert_eq!(bits(&ours()), bits(&first));
    }
    // Rows no id names get zero.
    assert!(first[16..32].iter().all(|&g| g == 0.0));
}

#[test]
fn gather_elements_and_gather_nd_gradients_are_their_scatter_adds() {
    let op = stridex::gather_elements! { data: f32[3, 4], indices: i32[3, 2], axis: 1 };
    let idx = [0, 3, 1, 1, 2, 0];
    let ours = gradient([3, 4], |t| op.apply::<_, 2, 2, 2>(t, ints(&idx, [3, 2])).unwrap());
    let burn = gradient([3, 4], |t| t.gather(1, ints(&idx, [3, 2])));
    assert_eq!(ours, burn);

    // GatherND: rows of a [4, 3] table named by (row) tuples, one of them twice.
    let nd = stridex::gather_nd! { rules: openvino, data: f32[4, 2, 3], indices: i32[3, 2] };
    let tuples = [1, 0, 3, 1, 1, 0];
    let ours = gradient([4, 2, 3], |t| nd.apply::<_, 3, 2, 2>(t, ints(&tuples, [3, 2])).unwrap());
    let w = weights(9);
    let mut want = vec![0.0f32; 24];
    for (k, pair) in tuples.chunks(2).enumerate() {
        let base = (pair[0] * 2 + pair[1]) as usize * 3;
        for c in 0..3 {
            want[base + c] += w[k * 3 + c];
        }
    }
    assert_eq!(ours, want);
}

/// A `_` gather_elements along axis 0 (300 columns, rows of indices counted at run time): its
/// gradient at each count is the ScatterElements add of that count (its line kernel takes the
/// lines' length at launch), the serial sum bit for bit, and Burn's `gather` gradient.
#[test]
fn a_counted_gather_elements_gradient_is_its_scatter_add_at_each_count() {
    let op = stridex::gather_elements! { data: f32[6, 300], indices: i32[_, 300], axis: 0 };
    for n in [1usize, 4, 9] {
        let idx: Vec<i32> = (0..n * 300).map(|p| ((p * 7 + p / 300) % 6) as i32).collect();
        let ours = || gradient([6, 300], |t| op.apply::<_, 2, 2, 2>(t, ints(&idx, [n, 300])).unwrap());
        let first = ours();
        let w = weights(n * 300);
        let mut serial = vec![0.0f32; 6 * 300];
        for (p, &i) in idx.iter().enumerate() {
            serial[i as usize * 300 + p % 300] += w[p];
        }
        assert_eq!(bits(&first), bits(&serial), "count {n}");
        assert_eq!(bits(&ours()), bits(&first), "count {n}, again");
        let burn = gradient([6, 300], |t| t.gather(0, ints(&idx, [n, 300])));
        assert!(first.iter().zip(&burn).all(|(a, b)| (a - b).abs() <= 1e-5), "count {n}: Burn's");
    }
}

/// A `_` chain whose gather_elements after the count takes it on its indices: the gradient of
/// each count's picks equals Burn's `gather` gradient.
#[test]
fn a_counted_chains_picks_have_burns_gradient() {
    let picks = stridex::chain! { data: f32[_, 8], gather_elements { indices: i32[_, 3], axis: 1 } };
    for n in [1usize, 6] {
        let cols: Vec<i32> = (0..n * 3).map(|p| ((p * 3 + p / 3) % 8) as i32).collect();
        let ours = gradient([n, 8], |t| picks.apply::<_, 2, 2>(t, (ints(&cols, [n, 3]),)).unwrap());
        let burn = gradient([n, 8], |t| t.gather(1, ints(&cols, [n, 3])));
        assert_eq!(ours, burn, "count {n}");
    }
}

#[test]
fn out_of_range_policies_carry_into_the_gradient() {
    // `zero`: an index past the end read zero, so its gradient goes nowhere; `clamp`: it read
    // the last row, which gets it.
    let ids = [1, 9, -1];
    let zero = stridex::gather! { data: f32[4, 2], indices: i32[3], out_of_range: zero };
    let clamp = stridex::gather! { data: f32[4, 2], indices: i32[3], out_of_range: clamp };
    let w = weights(6);
    let g = gradient([4, 2], |t| zero.apply::<_, 2, 1, 2>(t, ints(&ids, [3])).unwrap());
    assert_eq!(g, vec![0.0, 0.0, w[0], w[1], 0.0, 0.0, w[4], w[5]]);
    let g = gradient([4, 2], |t| clamp.apply::<_, 2, 1, 2>(t, ints(&ids, [3])).unwrap());
    assert_eq!(g, vec![0.0, 0.0, w[0], w[1], 0.0, 0.0, w[2] + w[4], w[3] + w[5]]);
}

/// A gather along axis 0 (an embedding's) has its gradient written whole by one kernel, with no
/// zero fill first: the rows no id names are zeros, f16 rows and ids of two dimensions as
/// Burn's `select` gives them, nothing but zeros where every id is past the end under `zero`,
/// and a lone `-0.0` arrives as Burn's zeros plus gradient make it, `+0.0`.
#[test]
fn an_embedding_gradient_is_written_whole_with_no_zero_fill() {
    use stridex::burn::burn_tensor::DType;
    let op = stridex::gather! { data: f16[10, 8], indices: i32[2, 3] };
    let ids = [7, 2, 7, 0, 9, 7];
    let w = floats(weights(48), [2, 3, 8]);
    let f16_gradient = |f: &dyn Fn(Tensor<2>) -> Tensor<3>| {
        let x = floats((0..80).map(|v| v as f32 * 0.5).collect(), [10, 8]).cast(DType::F16).require_grad();
        let grads = (f(x.clone()).cast(DType::F32) * w.clone()).sum().backward();
        values(x.grad(&grads).unwrap().cast(DType::F32))
    };
    let ours = f16_gradient(&|t| op.apply::<_, 2, 2, 3>(t, ints(&ids, [2, 3])).unwrap());
    let burn = f16_gradient(&|t| t.select(0, ints(&ids, [6])).reshape([2, 3, 8]));
    assert_eq!(bits(&ours), bits(&burn));
    assert!(ours[8..16].iter().chain(&ours[24..56]).all(|&g| g.to_bits() == 0));

    // Rows of 256 (on the CPU runtime, each written whole by one invocation).
    let wide = stridex::gather! { data: f32[300, 256], indices: i32[200] };
    let ids: Vec<i32> = (0..200).map(|i| (i * i * 7 + 3) % 300).collect();
    let ours = gradient([300, 256], |t| wide.apply::<_, 2, 1, 2>(t, ints(&ids, [200])).unwrap());
    let burn = gradient([300, 256], |t| t.select(0, ints(&ids, [200])));
    assert_eq!(bits(&ours), bits(&burn));

    // f16 rows of 3 and no id at all: zeros, every halfword (zero filled: the runs are not
    // whole words).
    let empty = stridex::gather! { data: f16[10, 3], indices: i32[0] };
    let x = floats(vec![1.5; 30], [10, 3]).cast(DType::F16).require_grad();
    let y = empty.apply::<_, 2, 1, 2>(x.clone(), ints(&[], [0])).unwrap();
    let grads = (y.cast(DType::F32).sum() + x.clone().cast(DType::F32).sum()).backward();
    let g = values(x.grad(&grads).unwrap().cast(DType::F32));
    assert_eq!(bits(&g), bits(&[1.0; 30]));

    let dropped = stridex::gather! { data: f32[4, 2], indices: i32[2], out_of_range: zero };
    let g = gradient([4, 2], |t| dropped.apply::<_, 2, 1, 2>(t, ints(&[4, 100], [2])).unwrap());
    assert_eq!(bits(&g), [0; 8]);

    let single = stridex::gather! { data: f32[3, 4], indices: i32[1] };
    let x = floats(vec![1.0; 12], [3, 4]).require_grad();
    let y = single.apply::<_, 2, 1, 2>(x.clone(), ints(&[1], [1])).unwrap();
    let grads = (y * floats(vec![-0.0, 1.0, -0.0, 2.0], [1, 4])).sum().backward();
    let g = values(x.grad(&grads).unwrap());
    assert_eq!(bits(&g[4..8]), bits(&[0.0, 1.0, 0.0, 2.0]));
}

#[test]
fn slice_gradients_equal_burns_slice_and_flip() {
    let crop = stridex::slice!(input: f32[3, 5, 4], s[1.., 1..4, ..]);
    let ours = gradient([3, 5, 4], |t| crop.apply(t).unwrap());
    assert_eq!(ours, gradient([3, 5, 4], |t| t.slice([1..3, 1..4, 0..4])));

    let flip = stridex::slice! { rules: onnx, input: f32[3, 5, 4], starts: [-1], ends: [-6], axes: [1], steps: [-1] };
    assert_eq!(gradient([3, 5, 4], |t| flip.apply(t).unwrap()), gradient([3, 5, 4], |t| t.flip([1])));

    // A whole window: the gradient passes through.
    let whole = stridex::slice!(input: f32[2, 3], s[.., ..]);
    assert_eq!(gradient([2, 3], |t| whole.apply(t).unwrap()), weights(6));
}

#[test]
fn strided_and_reversed_windows_send_each_gradient_back_to_its_element() {
    // The README's SLICE1 window: rows 3 and 1 (stride -2), columns 1 and 3.
    let s = stridex::slice! {
        input: f32[1, 1, 4, 4],
        offsets: [0, 0, 0, 1],
        sizes: [1, 1, 4, 3],
        strides: [1, 1, -2, 2],
    };
    let g = gradient([1, 1, 4, 4], |t| s.apply(t).unwrap());
    let w = weights(4);
    let mut want = vec![0.0f32; 16];
    for (k, (row, col)) in [(3, 1), (3, 3), (1, 1), (1, 3)].into_iter().enumerate() {
        want[row * 4 + col] = w[k];
    }
    assert_eq!(g, want);

    // An empty ONNX window: every gradient is zero.
    let empty = stridex::slice! { rules: onnx, input: f32[2, 3], starts: [2], ends: [2], axes: [1] };
    assert_eq!(gradient([2, 3], |t| empty.apply(t).unwrap()), vec![0.0; 6]);
}

#[test]
fn a_chain_of_gather_and_slice_backpropagates_through_both() {
    // Burn's graph holds the two stridex ops as two nodes: gather rows, then crop columns.
    let rows = stridex::gather! { data: f32[6, 5], indices: i32[4] };
    let crop = stridex::slice!(input: f32[4, 5], s[.., 1..;2]);
    let ids = [5, 0, 5, 2];
    let ours =
        gradient([6, 5], |t| crop.apply(rows.apply::<_, 2, 1, 2>(t, ints(&ids, [4])).unwrap()).unwrap());
    let burn = gradient([6, 5], |t| t.select(0, ints(&ids, [4])).slice([0..4, 1..5]).slice_step());
    assert_eq!(ours, burn);
}

trait SliceStep {
    fn slice_step(self) -> Self;
}

impl SliceStep for Tensor<2> {
    /// Every other column (Burn's `select` with the column ids, whose gradient Burn computes).
    fn slice_step(self) -> Self {
        let cols = self.dims()[1];
        let keep: Vec<i32> = (0..cols as i32).step_by(2).collect();
        let n = keep.len();
        self.select(1, ints(&keep, [n]))
    }
}

#[test]
fn what_has_no_backward_pass_is_an_err_in_the_forward_call() {
    let x = floats(vec![1.0; 24], [2, 3, 4]).require_grad();
    let pairs = ints(&[1, 0, 2, 1], [2, 1, 2]);
    let batched =
        stridex::gather_nd! { rules: openvino, data: f32[2, 3, 4], indices: i32[2, 1, 2], batch_dims: 1 };
    let e = batched.apply::<_, 3, 3, 2>(x.clone(), pairs.clone()).unwrap_err();
    assert!(matches!(e, Error::NoGradient { .. }), "{e}");
    assert!(e.to_string().contains("batch_dims"), "{e}");
    // Without gradients required it runs (Burn's autodiff device, an untracked tensor).
    let y = batched.apply::<_, 3, 3, 2>(x.clone().set_require_grad(false), pairs).unwrap();
    assert_eq!(y.dims(), [2, 1]);

    // An index out of range under `error` is reported before anything is recorded.
    let op = stridex::gather! { data: f32[2, 3, 4], indices: i32[2] };
    let e = op.apply::<_, 3, 1, 3>(x.clone(), ints(&[0, 2], [2])).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { value: 2, .. }), "{e}");

    // A chain whose stage has no backward pass names the stage.
    let batched_stage = stridex::chain! {
        data: f32[2, 3, 4],
        slice { s[.., .., 1..] },
        gather_nd { rules: openvino, indices: i32[2, 1, 2], batch_dims: 1 },
    };
    let e = batched_stage.apply::<_, 3, 2>(x.clone(), (ints(&[1, 0, 2, 1], [2, 1, 2]),)).unwrap_err();
    assert!(
        matches!(&e, Error::InStage { stage: 2, error } if matches!(**error, Error::NoGradient { .. })),
        "{e}"
    );
}

/// Tensors that do not match the descriptor are an `Err` naming the tensor under autodiff too,
/// as without it: the backward pass is planned only after the forward call's checks (it reads
/// as many index values as the plan says, which a shorter or narrower tensor does not hold).
#[test]
fn mismatched_tensors_are_errs_before_a_backward_pass_is_planned() {
    let x = || floats(vec![1.0; 24], [6, 4]).require_grad();
    let burn_tensor = |e: &Error, tensor| matches!(e, Error::BurnTensor { tensor: t, .. } if *t == tensor);
    let indices = stridex::Operand::Indices;
    // Declared i64, given Burn's default `Int` (i32): half the bytes the plan reads.
    let wide = stridex::gather! { data: f32[6, 4], indices: i64[4], axis: 1 };
    let e = wide.apply::<_, 2, 1, 2>(x(), ints(&[0, 1, 2, 3], [4])).unwrap_err();
    assert!(burn_tensor(&e, indices), "{e}");
    // Declared four indices, given three.
    let rows = stridex::gather! { data: f32[6, 4], indices: i32[4] };
    let e = rows.apply::<_, 2, 1, 2>(x(), ints(&[0, 1, 2], [3])).unwrap_err();
    assert!(burn_tensor(&e, indices), "{e}");
    let e = stridex::gather_elements! { data: f32[6, 4], indices: i32[6, 2], axis: 1 }
        .apply::<_, 2, 2, 2>(x(), ints(&[0; 6], [6, 1]))
        .unwrap_err();
    assert!(burn_tensor(&e, indices), "{e}");
    // A slice declared on another input shape.
    let e = stridex::slice! { input: f32[6, 5], s[1.., ..;-1] }.apply::<_, 2>(x()).unwrap_err();
    assert!(burn_tensor(&e, stridex::Operand::Input), "{e}");
    // A chain's gather stage given i32 for i64, and too few.
    let chain =
        stridex::chain! { data: f32[6, 4], slice { s[..;-1, ..] }, gather { indices: i64[4], axis: 0 } };
    let e = chain.apply::<_, 2, 2>(x(), (ints(&[0, 1, 2, 3], [4]),)).unwrap_err();
    assert!(matches!(&e, Error::InStage { stage: 2, error } if burn_tensor(error, indices)), "{e}");
    let e = chain.apply::<_, 2, 2>(x(), (wide_ints(&[0, 1], [2]),)).unwrap_err();
    assert!(matches!(&e, Error::InStage { stage: 2, error } if burn_tensor(error, indices)), "{e}");
}

/// The gradients of `sum(f(data, updates) * w)` for `data` of `data_shape` (values `0.5 * i`)
/// and `updates` of `updates_shape` (values `-0.25 * i`).
fn gradients<const D: usize, const DU: usize>(
    data_shape: [usize; D],
    updates_shape: [usize; DU],
    f: impl Fn(Tensor<D>, Tensor<DU>) -> Tensor<D>,
) -> (Vec<f32>, Vec<f32>) {
    let n = data_shape.iter().product::<usize>();
    let m = updates_shape.iter().product::<usize>();
    let data = floats((0..n).map(|v| v as f32 * 0.5).collect(), data_shape).require_grad();
    let updates = floats((0..m).map(|v| v as f32 * -0.25).collect(), updates_shape).require_grad();
    let y = f(data.clone(), updates.clone());
    let grads = (y * floats(weights(n), data_shape)).sum().backward();
    (values(data.grad(&grads).unwrap()), values(updates.grad(&grads).unwrap()))
}

#[test]
fn a_scatter_add_sends_its_gradient_to_the_data_and_gathers_it_to_the_updates() {
    use stridex::burn::burn_tensor::IndexingUpdateOp;
    let add =
        stridex::scatter! { data: f32[5, 3], indices: i32[4], updates: f32[4, 3], axis: 0, reduction: add };
    let ids = [4, 1, 4, 0];
    let ours = gradients([5, 3], [4, 3], |d, u| add.apply(d, ints(&ids, [4]), u).unwrap());
    let burn =
        gradients([5, 3], [4, 3], |d, u| d.select_assign(0, ints(&ids, [4]), u, IndexingUpdateOp::Add));
    assert_eq!(ours, burn);
    assert_eq!(ours.0, weights(15));

    // `none`: the written rows' old values are gone, so their gradient is zero; each update
    // gets its row's.
    let none =
        stridex::scatter_elements! { data: f32[2, 4], indices: i32[2, 2], updates: f32[2, 2], axis: 1 };
    let (data, updates) =
        gradients([2, 4], [2, 2], |d, u| none.apply(d, ints(&[3, 0, 1, 2], [2, 2]), u).unwrap());
    let w = weights(8);
    assert_eq!(data, vec![0.0, w[1], w[2], 0.0, w[4], 0.0, 0.0, w[7]]);
    assert_eq!(updates, vec![w[3], w[0], w[5], w[6]]);

    // Repeated destinations under `none`: the last write alone reached the result, so it alone
    // gets a gradient; the replaced update's is zero.
    let (data, updates) =
        gradients([2, 4], [2, 2], |d, u| none.apply(d, ints(&[3, 3, 1, 2], [2, 2]), u).unwrap());
    assert_eq!(data, vec![w[0], w[1], w[2], 0.0, w[4], 0.0, 0.0, w[7]]);
    assert_eq!(updates, vec![0.0, w[3], w[5], w[6]]);
}

/// Rows written twice under `none` along an axis (a negative id naming the same row as a
/// positive one, i32 and i64 ids): the later write's update gets the row's gradient, the
/// earlier one's zero, and the written rows' data none; under `clamp` that is an `Err`.
#[test]
fn replaced_updates_get_no_gradient() {
    let w = weights(15);
    let row = |r: usize| w[r * 3..r * 3 + 3].to_vec();
    let want_data: Vec<f32> = (0..15).map(|i| if matches!(i / 3, 0 | 2) { 0.0 } else { w[i] }).collect();
    let want_updates: Vec<f32> = [vec![0.0; 3], vec![0.0; 3], row(2), row(0)].concat();
    let ids = [2, 0, 2, -5];

    let narrow = stridex::scatter! { data: f32[5, 3], indices: i32[4], updates: f32[4, 3], axis: 0 };
    let (data, updates) = gradients([5, 3], [4, 3], |d, u| narrow.apply(d, ints(&ids, [4]), u).unwrap());
    assert_eq!(data, want_data);
    assert_eq!(updates, want_updates);

    let wide = stridex::scatter! { data: f32[5, 3], indices: i64[4], updates: f32[4, 3], axis: 0 };
    let ids64 = wide_ints(&ids, [4]);
    let (data, updates) = gradients([5, 3], [4, 3], |d, u| wide.apply(d, ids64.clone(), u).unwrap());
    assert_eq!(data, want_data);
    assert_eq!(updates, want_updates);

    let clamp = stridex::scatter! {
        rules: openvino, data: f32[5, 3], indices: i32[4], updates: f32[4, 3], axis: 0, out_of_range: clamp
    };
    let e = clamp
        .apply(floats(vec![0.0; 15], [5, 3]).require_grad(), ints(&ids, [4]), floats(vec![0.0; 12], [4, 3]))
        .unwrap_err();
    assert!(matches!(e, Error::NoGradient { .. }) && e.to_string().contains("clamp"), "{e}");
}

#[test]
fn a_fused_chain_backpropagates_its_stages_in_reverse() {
    // Embedding rows, then the last position: one fused kernel forwards, a gather and a
    // scatter-add backwards.
    let last = stridex::chain! {
        data: f32[50, 8],
        gather { indices: i32[2, 5], axis: 0 },
        slice { rules: onnx, starts: [-1], ends: [5], axes: [1] },
    };
    assert!(last.is_fused().unwrap());
    let ids = [3, 9, 0, 49, 7, 11, 3, 3, 30, 7];
    let ours = gradient([50, 8], |t| last.apply::<_, 2, 3>(t, (ints(&ids, [2, 5]),)).unwrap());
    let burn =
        gradient([50, 8], |t| t.select(0, ints(&ids, [10])).reshape([2, 5, 8]).slice([0..2, 4..5, 0..8]));
    assert_eq!(ours, burn);

    // An image chain: crop -> flip -> channel gather -> 2x down, against Burn's ops.
    let image = stridex::chain! {
        data: f32[2, 3, 8, 8],
        slice { s[.., .., 1..7, 1..7] },
        slice { s[.., .., .., ..;-1] },
        gather { indices: i32[3], axis: 1 },
        slice { s[.., .., ..;2, ..;2] },
    };
    let bgr = [2, 0, 0];
    let ours = gradient([2, 3, 8, 8], |t| image.apply::<_, 4, 4>(t, (ints(&bgr, [3]),)).unwrap());
    let burn = gradient([2, 3, 8, 8], |t| {
        t.slice([0..2, 0..3, 1..7, 1..7])
            .flip([3])
            .select(1, ints(&bgr, [3]))
            .slice([0..2, 0..3, 0..6, 0..6])
            .step2()
    });
    assert_eq!(ours, burn);
}

trait Step2 {
    fn step2(self) -> Self;
}

impl Step2 for Tensor<4> {
    /// Every other row and column (Burn's `select`, whose gradient Burn computes).
    fn step2(self) -> Self {
        let even = |n: usize| {
            let keep: Vec<i32> = (0..n as i32).step_by(2).collect();
            let len = keep.len();
            ints(&keep, [len])
        };
        let [_, _, h, w] = self.dims();
        self.select(2, even(h)).select(3, even(w))
    }
}

#[test]
fn integer_data_and_untracked_floats_run_under_autodiff() {
    let op = stridex::gather! { data: i32[4, 2], indices: i32[2] };
    let data = ints(&[0, 1, 2, 3, 4, 5, 6, 7], [4, 2]);
    let y: Tensor<2, Int> = op.apply(data, ints(&[3, 1], [2])).unwrap();
    assert_eq!(y.into_data().try_to_vec::<i32>().unwrap(), vec![6, 7, 2, 3]);
    let f = stridex::gather! { data: f32[4, 2], indices: i32[2] };
    let x = floats((0..8).map(|v| v as f32).collect(), [4, 2]);
    let y: Tensor<2> = f.apply(x, ints(&[3, 1], [2])).unwrap();
    assert_eq!(values(y), vec![6.0, 7.0, 2.0, 3.0]);
}

#[test]
fn a_window_changing_five_dimensions_fuses_its_gathers_in_runs_and_stays_exact() {
    // Five changed dimensions: one chain kernel of four gathers, then a single gather.
    let s = stridex::slice!(input: f32[3, 4, 5, 6, 7], s[1.., ..;-1, 1..4, ..;2, 2..;-2]);
    let sizes = [3usize, 4, 5, 6, 7];
    let n: usize = sizes.iter().product();
    let input = floats(weights(n), sizes).require_grad();
    let out: Tensor<5> = s.apply(input.clone()).unwrap();
    let m = out.shape().num_elements();
    let seed = floats(weights(m + 1)[1..].to_vec(), out.dims());
    let grads = (out * seed.clone()).sum().backward();
    let ours = values(input.grad(&grads).unwrap());

    // Host reference: the forward slice of each element's own position (exact in f32) says
    // where each output element came from; its gradient lands there.
    let positions = s.run(&(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap().to_row_major();
    let mut want = vec![0f32; n];
    for (&p, w) in positions.iter().zip(values(seed)) {
        want[p as usize] += w;
    }
    assert_eq!(bits(&ours), bits(&want));
}

/// `skip` drops an update whose index is negative or past the end: its gradient is zero (a
/// signed gather would read `-1` as the last row), the data keeps its gradient there, and the
/// rows written under `none` lose theirs; i32 and i64 ids, along an axis and element-wise.
#[test]
fn skipped_updates_get_no_gradient() {
    let w = weights(15);
    let ids = [3, -1, 7, 0];
    let row = |r: usize| w[r * 3..r * 3 + 3].to_vec();
    let want_updates: Vec<f32> = [row(3), vec![0.0; 3], vec![0.0; 3], row(0)].concat();

    let none = stridex::scatter! {
        data: f32[5, 3], indices: i32[4], updates: f32[4, 3], axis: 0, out_of_range: skip
    };
    let (data, updates) = gradients([5, 3], [4, 3], |d, u| none.apply(d, ints(&ids, [4]), u).unwrap());
    let want_data: Vec<f32> = (0..15).map(|i| if matches!(i / 3, 0 | 3) { 0.0 } else { w[i] }).collect();
    assert_eq!(data, want_data);
    assert_eq!(updates, want_updates);

    let add = stridex::scatter! {
        data: f32[5, 3], indices: i64[4], updates: f32[4, 3], axis: 0, reduction: add, out_of_range: skip
    };
    let wide = wide_ints(&ids, [4]);
    let (data, updates) = gradients([5, 3], [4, 3], |d, u| add.apply(d, wide.clone(), u).unwrap());
    assert_eq!(data, w);
    assert_eq!(updates, want_updates);

    let elements = stridex::scatter_elements! {
        data: f32[2, 4], indices: i32[2, 2], updates: f32[2, 2], axis: 1, out_of_range: skip
    };
    let (data, updates) =
        gradients([2, 4], [2, 2], |d, u| elements.apply(d, ints(&[3, -1, 9, 2], [2, 2]), u).unwrap());
    let w = weights(8);
    assert_eq!(data, vec![w[0], w[1], w[2], 0.0, w[4], w[5], 0.0, w[7]]);
    assert_eq!(updates, vec![w[3], 0.0, 0.0, w[6]]);
}

/// A gather with batch dimensions sends its gradient back as Burn's `gather` on ids expanded
/// over the other dimensions does (beam reordering, and an axis after a batched one), with
/// negative ids and an id past the end under `zero`, bit for bit from run to run.
#[test]
fn batched_gathers_scatter_their_gradient_within_each_batch() {
    let beams: [i32; 6] = [2, 2, 0, 1, -3, 1];
    let reorder =
        stridex::gather! { rules: openvino, data: f32[2, 3, 4], indices: i32[2, 3], axis: 1, batch_dims: 1 };
    let expanded: Vec<i32> = beams.iter().map(|&b| b.rem_euclid(3)).flat_map(|b| [b; 4]).collect();
    let ours = gradient([2, 3, 4], |x| reorder.apply::<_, 3, 2, 3>(x, ints(&beams, [2, 3])).unwrap());
    let burn = gradient([2, 3, 4], |x| x.gather(1, ints(&expanded, [2, 3, 4])));
    assert_eq!(ours, burn);
    let again = gradient([2, 3, 4], |x| reorder.apply::<_, 3, 2, 3>(x, ints(&beams, [2, 3])).unwrap());
    assert_eq!(bits(&ours), bits(&again));
    // The same gather as a chain's stage, before a slice.
    let chained = stridex::chain! {
        data: f32[2, 3, 4],
        gather { rules: openvino, indices: i32[2, 3], axis: 1, batch_dims: 1 },
        slice { s[.., .., 1..] },
    };
    let ours = gradient([2, 3, 4], |x| chained.apply::<_, 3, 3>(x, (ints(&beams, [2, 3]),)).unwrap());
    let burn = gradient([2, 3, 4], |x| x.gather(1, ints(&expanded, [2, 3, 4])).slice([0..2, 0..3, 1..4]));
    assert_eq!(ours, burn);

    // Axis 2 after one batch dimension, with a dimension between them; id 9 reads zero.
    let ids = [4, 0, -1, 9, 2, 2, 3, 1];
    let op = stridex::gather! {
        rules: openvino, data: f32[2, 3, 5, 2], indices: i32[2, 4], axis: 2, batch_dims: 1, out_of_range: zero
    };
    let ours = gradient([2, 3, 5, 2], |x| op.apply::<_, 4, 2, 4>(x, ints(&ids, [2, 4])).unwrap());
    // The host's: out[b, x, i, r] read data[b, x, ids[b, i], r], so its weight lands there.
    let w = weights(2 * 3 * 4 * 2);
    let mut want = vec![0.0f32; 2 * 3 * 5 * 2];
    for (o, &wo) in w.iter().enumerate() {
        let (b, x, i, r) = (o / 24, o / 8 % 3, o / 2 % 4, o % 2);
        let id = ids[b * 4 + i];
        let id = if id < 0 { id + 5 } else { id };
        if (0..5).contains(&id) {
            want[((b * 3 + x) * 5 + id as usize) * 2 + r] += wo;
        }
    }
    assert_eq!(ours, want);
}

/// `sub` takes each update away from the data: the data's gradient passes through and each
/// update's is the negated gradient of the element it went to (rows written twice included).
#[test]
fn a_sub_scatter_negates_its_updates_gradient() {
    let sub = stridex::scatter_nd! {
        rules: openvino, data: f32[3, 2], indices: i32[3, 1], updates: f32[3, 2], reduction: sub,
    };
    let (data, updates) =
        gradients([3, 2], [3, 2], |d, u| sub.apply(d, ints(&[2, 0, 2], [3, 1]), u).unwrap());
    let w = weights(6);
    assert_eq!(data, w);
    assert_eq!(updates, vec![-w[4], -w[5], -w[0], -w[1], -w[4], -w[5]]);
}

/// A chain's `convert` stage computed `x * scale[c] + offset[c]`: its gradient is the
/// output's times `scale[c]`, a convert of the gradient itself. Against Burn's autodiff of the
/// same slice, product and sum.
#[test]
fn a_convert_stage_scales_the_gradient_per_channel() {
    let normalize = stridex::chain! {
        data: f32[2, 3, 4, 4],
        slice { s[.., .., 1..3, ..;-1] },
        convert { to: f32, dim: 1, scale: [2.0, 0.5, -1.0], offset: [1.0, 2.0, 3.0] },
    };
    let ours = gradient([2, 3, 4, 4], |x| normalize.apply::<_, 4, 4>(x, ()).unwrap());
    let scale = floats(vec![2.0, 0.5, -1.0], [1, 3, 1, 1]);
    let offset = floats(vec![1.0, 2.0, 3.0], [1, 3, 1, 1]);
    let burn = gradient([2, 3, 4, 4], |x| {
        x.slice([0..2, 0..3, 1..3, 0..4]).flip([3]) * scale.clone() + offset.clone()
    });
    assert_eq!(ours, burn);
}

/// The gradients of `sum(scatter(data, updates) * w)` from the scatter's definition, element by
/// element (kept apart from the backward pass's tensor formulas): `dest[k]` is the data element
/// updates element `k` went to (`None`: dropped). A reached element is the reduction of its
/// inputs, the data's element first where `use_init_val`.
fn reduced_reference(
    reduction: stridex::Reduction,
    use_init_val: bool,
    data: &[f32],
    dest: &[Option<usize>],
    updates: &[f32],
    w: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    use stridex::Reduction::{Add, Max, Mean, Min, Mul};
    let (mut to_data, mut to_updates) = (w.to_vec(), vec![0.0; updates.len()]);
    for (d, &wd) in w.iter().enumerate() {
        let ks: Vec<usize> = (0..updates.len()).filter(|&k| dest[k] == Some(d)).collect();
        if ks.is_empty() {
            continue;
        }
        // The inputs: `None` for the data's element, `Some(k)` for update k.
        let mut inputs: Vec<(Option<usize>, f32)> = ks.iter().map(|&k| (Some(k), updates[k])).collect();
        if use_init_val {
            inputs.insert(0, (None, data[d]));
        }
        let n = inputs.len() as f32;
        let result = match reduction {
            Max => inputs.iter().map(|i| i.1).fold(f32::NEG_INFINITY, f32::max),
            Min => inputs.iter().map(|i| i.1).fold(f32::INFINITY, f32::min),
            _ => 0.0,
        };
        let ties = inputs.iter().filter(|i| i.1 == result).count() as f32;
        let mut grads = inputs.iter().enumerate().map(|(j, &(_, v))| match reduction {
            Add => wd,
            Mean => wd / n,
            Max | Min => {
                if v == result {
                    wd / ties
                } else {
                    0.0
                }
            }
            // The product of the other inputs.
            Mul => wd * inputs.iter().enumerate().filter(|&(i, _)| i != j).map(|(_, x)| x.1).product::<f32>(),
            _ => unreachable!("no such reduction here"),
        });
        to_data[d] = if use_init_val { grads.next().unwrap() } else { 0.0 };
        for (&k, g) in ks.iter().zip(grads) {
            to_updates[k] = g;
        }
    }
    (to_data, to_updates)
}

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= 1e-6 * b.abs().max(1.0),
            "{what}: element {i} is {a}, not {b}\n{got:?}\n{want:?}"
        );
    }
}

/// `mean`, `max`, `min`, `mul` and `add`, with and without the data's element (OpenVINO
/// ScatterElementsUpdate-12), against their definitions: ties share a max's or a min's gradient
/// evenly, a product's gradient survives zero updates, a slot of `-1` under `skip` gets none,
/// and two runs give the same bits.
#[test]
fn every_reduction_backpropagates_its_definition() {
    use stridex::{OutOfRange, Reduction, Scatter, ScatterOp};
    let data = [1.0, 5.0, -2.0, 0.0, 3.0, 7.0];
    // Element 1 takes 5, 2, 5 (ties with its 5 under max); 3 takes 0 and 4 (a zero in a
    // product, a tie with the data's 0 under min); 5 takes its own 7; 2 and 4 none.
    let ids = [1, 1, 3, 0, 1, 3, 5, -1];
    let updates = [5.0, 2.0, 0.0, -1.0, 5.0, 4.0, 7.0, 9.0];
    let dest: Vec<Option<usize>> = ids.iter().map(|&i| usize::try_from(i).ok()).collect();
    let w = weights(6);
    for reduction in [Reduction::Mean, Reduction::Max, Reduction::Min, Reduction::Mul, Reduction::Add] {
        for use_init_val in [true, false] {
            let desc = Scatter::openvino()
                .elements()
                .data::<f32>(&[6])
                .indices::<i32>(&[8])
                .updates(&[8])
                .axis(0)
                .out_of_range(OutOfRange::Skip)
                .reduction(reduction)
                .use_init_val(use_init_val)
                .desc()
                .unwrap();
            let op = ScatterOp::<f32, i32>::new(desc).unwrap();
            let run = || {
                let d = floats(data.to_vec(), [6]).require_grad();
                let u = floats(updates.to_vec(), [8]).require_grad();
                let y = op.apply(d.clone(), ints(&ids, [8]), u.clone()).unwrap();
                let grads = (y * floats(w.clone(), [6])).sum().backward();
                (values(d.grad(&grads).unwrap()), values(u.grad(&grads).unwrap()))
            };
            let (to_data, to_updates) = run();
            let what = format!("{} with use_init_val {use_init_val}", reduction.name());
            let (want_data, want_updates) =
                reduced_reference(reduction, use_init_val, &data, &dest, &updates, &w);
            assert_close(&to_data, &want_data, &format!("{what}: the data's gradient"));
            assert_close(&to_updates, &want_updates, &format!("{what}: the updates' gradient"));
            let again = run();
            assert_eq!((bits(&again.0), bits(&again.1)), (bits(&to_data), bits(&to_updates)), "{what}");
        }
    }
}

/// The reductions' backward passes on whole rows (`scatter!` along an axis, `max` and `mul`,
/// ONNX ScatterND `min`), against the definition applied column by column.
#[test]
fn reductions_backpropagate_through_rows() {
    use stridex::Reduction;
    let data: Vec<f32> = vec![1.0, -3.0, 2.0, 0.0, 4.0, 4.0, -1.0, 2.0, 6.0, 0.5, 0.0, -2.0];
    let ids = [2, 0, 2, 3];
    let updates: Vec<f32> = vec![2.0, -3.0, 1.0, 0.0, 4.0, 7.0, 2.0, 0.0, 6.0, 0.5, 0.0, -2.0];
    let dest: Vec<Option<usize>> = (0..12).map(|e| Some(ids[e / 3] as usize * 3 + e % 3)).collect();
    let w = weights(12);
    let check = |reduction: Reduction, got: (Vec<f32>, Vec<f32>)| {
        let want = reduced_reference(reduction, true, &data, &dest, &updates, &w);
        assert_close(&got.0, &want.0, &format!("{}: the data's gradient", reduction.name()));
        assert_close(&got.1, &want.1, &format!("{}: the updates' gradient", reduction.name()));
    };
    let run = |f: &dyn Fn(Tensor<2>, Tensor<2>) -> Tensor<2>| {
        let d = floats(data.clone(), [4, 3]).require_grad();
        let u = floats(updates.clone(), [4, 3]).require_grad();
        let grads = (f(d.clone(), u.clone()) * floats(w.clone(), [4, 3])).sum().backward();
        (values(d.grad(&grads).unwrap()), values(u.grad(&grads).unwrap()))
    };
    let max = stridex::scatter! {
        rules: openvino, data: f32[4, 3], indices: i32[4], updates: f32[4, 3], axis: 0, reduction: max
    };
    check(Reduction::Max, run(&|d, u| max.apply(d, ints(&ids, [4]), u).unwrap()));
    let mul = stridex::scatter! {
        rules: openvino, data: f32[4, 3], indices: i32[4], updates: f32[4, 3], axis: 0, reduction: mul
    };
    check(Reduction::Mul, run(&|d, u| mul.apply(d, ints(&ids, [4]), u).unwrap()));
    let min = stridex::scatter_nd! {
        rules: onnx, data: f32[4, 3], indices: i64[4, 1], updates: f32[4, 3], reduction: min
    };
    check(Reduction::Min, run(&|d, u| min.apply(d, wide_ints(&ids, [4, 1]), u).unwrap()));
}

/// A mean's counts are exact past f16's 2048: each of 3000 updates to one element gets
/// `g / 3001` (the data's value counts too), the data the same, the other elements `g`.
#[test]
fn a_half_precision_mean_counts_thousands_exactly() {
    use stridex::burn::burn_tensor::DType;
    let op = stridex::scatter_elements! {
        rules: openvino, data: f16[4], indices: i32[3000], updates: f16[3000], axis: 0, reduction: mean
    };
    let d = floats(vec![1.0; 4], [4]).cast(DType::F16).require_grad();
    let u = floats(vec![0.5; 3000], [3000]).cast(DType::F16).require_grad();
    let y = op.apply(d.clone(), ints(&[2; 3000], [3000]), u.clone()).unwrap();
    let grads = y.sum().backward();
    let share = stridex::half::f16::from_f32(1.0 / 3001.0).to_f32();
    let to_data = values(d.grad(&grads).unwrap().cast(DType::F32));
    assert_eq!(to_data, [1.0, 1.0, share, 1.0]);
    let to_updates = values(u.grad(&grads).unwrap().cast(DType::F32));
    assert!(to_updates.iter().all(|&g| g == share), "{:?}", &to_updates[..4]);
}
