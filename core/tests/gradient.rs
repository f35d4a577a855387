//! Backward passes as plans (`stridex_core::gradient`): a slice's per-dimension gathers,
//! applied on the host, send every output element's gradient to the input element it was
//! copied from and leave the rest zero, for windows of every stride sign; a gather's data
//! gradient is a scatter-add of the same map where a scatter takes that map, and an error
//! naming the rule where none does.

use stridex_core::gradient::{
    batched_gather_gradient, batched_tuples, gather_data_gradient, slice_input_gradient, AxisInverse,
    SliceGradient,
};
use stridex_core::{
    DType, Dims, GatherDesc, GatherForm, GatherRules, OutOfRange, Reduction, RuleError, SignedDims,
    SliceDesc, SliceWindow, TensorDecl,
};

fn decl(dtype: DType, sizes: &[usize]) -> TensorDecl {
    TensorDecl::packed(dtype, Dims::new(sizes).unwrap())
}

/// Row-major strides of `sizes`.
fn strides(sizes: &[usize]) -> Vec<usize> {
    let mut s = vec![1; sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * sizes[d + 1];
    }
    s
}

fn coords(mut i: usize, sizes: &[usize]) -> Vec<usize> {
    let mut c = vec![0; sizes.len()];
    for d in (0..sizes.len()).rev() {
        c[d] = i % sizes[d];
        i /= sizes[d];
    }
    c
}

/// One step on the host: a gather along `g.axis` of `x` (of `sizes`), an index past the end
/// reading zero.
fn host_gather(g: &AxisInverse, x: &[f64], sizes: &mut [usize]) -> Vec<f64> {
    let mut out_sizes = sizes.to_vec();
    out_sizes[g.axis] = g.input_size;
    let (xs, n) = (strides(sizes), out_sizes.iter().product());
    let indices: Vec<usize> = g.indices().collect();
    let out = (0..n)
        .map(|o| {
            let mut c = coords(o, &out_sizes);
            let i = indices[c[g.axis]];
            if i >= sizes[g.axis] {
                return 0.0;
            }
            c[g.axis] = i;
            x[c.iter().zip(&xs).map(|(c, s)| c * s).sum::<usize>()]
        })
        .collect();
    sizes.copy_from_slice(&out_sizes);
    out
}

/// The SLICE1 window's gradient by its definition: output element `o` at coordinates `k`
/// was copied from input coordinates `start + k * stride`.
fn reference(input: &[usize], output: &[usize], offsets: &[usize], sizes: &[usize], st: &[i64]) -> Vec<f64> {
    let mut grad = vec![0.0; input.iter().product()];
    let xs = strides(input);
    for o in 0..output.iter().product() {
        let k = coords(o, output);
        let at: usize = (0..input.len())
            .map(|d| {
                let start = offsets[d] as i64 + if st[d] < 0 { sizes[d] as i64 - 1 } else { 0 };
                (start + k[d] as i64 * st[d]) as usize * xs[d]
            })
            .sum();
        grad[at] += 1.0 + o as f64;
    }
    grad
}

/// A small deterministic generator (xorshift), so the cases are the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn slice_gradients_send_each_element_back_where_it_came_from() {
    let mut rng = Rng(0x5eed);
    for _ in 0..500 {
        let rank = 1 + rng.below(4);
        let input: Vec<usize> = (0..rank).map(|_| 1 + rng.below(6)).collect();
        let offsets: Vec<usize> = input.iter().map(|&n| rng.below(n)).collect();
        let sizes: Vec<usize> = input.iter().zip(&offsets).map(|(&n, &o)| 1 + rng.below(n - o)).collect();
        let st: Vec<i64> = (0..rank).map(|_| [1, 1, 2, 3, -1, -2][rng.below(6)]).collect();
        let window = SliceWindow::DirectMl {
            offsets: Dims::new(&offsets).unwrap(),
            sizes: Dims::new(&sizes).unwrap(),
            strides: SignedDims::new(&st).unwrap(),
        };
        let plan = SliceDesc::new(decl(DType::F32, &input), window).plan().unwrap();
        let output = plan.output.sizes.to_vec();
        let SliceGradient::Gathers(gathers) = slice_input_gradient(&plan) else { panic!("a window selects") };
        let mut shape = output.clone();
        let mut grad: Vec<f64> = (0..output.iter().product()).map(|o| 1.0 + o as f64).collect();
        for g in &gathers {
            grad = host_gather(g, &grad, &mut shape);
        }
        assert_eq!(shape, input);
        assert_eq!(
            grad,
            reference(&input, &output, &offsets, &sizes, &st),
            "{input:?} {offsets:?} {sizes:?} {st:?}"
        );
        // Dimensions the window leaves whole and in order take no gather.
        let moved: Vec<usize> = gathers.iter().map(|g| g.axis).collect();
        for d in 0..rank {
            let whole = offsets[d] == 0 && sizes[d] == input[d] && st[d] == 1;
            assert_eq!(moved.contains(&d), !whole);
        }
    }
}

/// A window on a long dimension plans its gradient at once: its gathers' indices are
/// computed when a backward pass writes them out, not held per input position (the fuzz found
/// 2^31 - 1 positions asking for 32 GiB).
#[test]
fn a_long_dimensions_gradient_holds_nothing_per_position() {
    let long = i32::MAX as usize;
    let window = SliceWindow::DirectMl {
        offsets: Dims::new(&[long - 7]).unwrap(),
        sizes: Dims::new(&[5]).unwrap(),
        strides: SignedDims::new(&[-2]).unwrap(),
    };
    let plan = SliceDesc::new(decl(DType::U8, &[long]), window).plan().unwrap();
    let SliceGradient::Gathers(gathers) = slice_input_gradient(&plan) else { panic!("a window selects") };
    let [g] = gathers.as_slice() else { panic!("one dimension moves: {gathers:?}") };
    assert_eq!((g.input_size, g.output_size), (long, 3));
    // Output positions 0, 1, 2 came from input positions long - 3, long - 5, long - 7.
    let sources: Vec<Option<usize>> = (long - 9..long).map(|j| g.source(j)).collect();
    // Input position long - 9 lies where a fourth output position would: the window holds 3.
    assert_eq!(sources, [None, None, Some(2), None, Some(1), None, Some(0), None, None]);
    assert_eq!(g.indices().take(2).collect::<Vec<_>>(), [3, 3]);
    // The step as a gather: OpenVINO along the axis, one index per input position, an index
    // past the output (a skipped position) reading zero.
    let desc = g.gather(DType::U8, DType::I64, &[3]).unwrap();
    assert_eq!(
        (desc.rules, desc.axis, desc.out_of_range),
        (GatherRules::OpenVino, 0, Some(OutOfRange::Zero))
    );
    assert_eq!(
        (desc.data.sizes.as_slice(), desc.indices.sizes.as_slice()),
        ([3].as_slice(), [long].as_slice())
    );
    assert_eq!(desc.indices.dtype, DType::I64);
    assert!(g.gather(DType::U8, DType::I64, &[1; 9]).is_none(), "past the rank limit");
}

#[test]
fn an_empty_onnx_slice_has_a_zero_gradient() {
    let window = SliceWindow::Onnx {
        starts: SignedDims::new(&[2]).unwrap(),
        ends: SignedDims::new(&[2]).unwrap(),
        axes: Some(SignedDims::new(&[1]).unwrap()),
        steps: None,
    };
    let plan = SliceDesc::new(decl(DType::F32, &[2, 3]), window).plan().unwrap();
    assert_eq!(slice_input_gradient(&plan), SliceGradient::Zeros);
}

fn gather(form: GatherForm, rules: GatherRules, data: &[usize], indices: &[usize], axis: i64) -> GatherDesc {
    let mut desc = GatherDesc::new(rules, decl(DType::F32, data), decl(DType::I64, indices), axis);
    desc.form = form;
    desc
}

#[test]
fn a_gathers_data_gradient_is_the_scatter_add_of_its_map() {
    for (desc, op) in [
        (gather(GatherForm::Axis, GatherRules::Onnx, &[40, 16], &[3, 5], 0), "OpenVINO ScatterUpdate-3"),
        (
            gather(GatherForm::Elements, GatherRules::OpenVino, &[3, 4], &[3, 2], 1),
            "OpenVINO ScatterElementsUpdate-12",
        ),
        // Smaller than the data off the axis: ONNX's GatherElements; OpenVINO's
        // ScatterElementsUpdate-12 takes such indices too.
        (
            gather(GatherForm::Elements, GatherRules::Onnx, &[3, 4], &[2, 2], 1),
            "OpenVINO ScatterElementsUpdate-12",
        ),
        (gather(GatherForm::Nd, GatherRules::Onnx, &[4, 2, 3], &[3, 2], 0), "OpenVINO ScatterNDUpdate-15"),
    ] {
        let plan = desc.plan().unwrap();
        let (scatter, scatter_plan) = gather_data_gradient(&plan, DType::I64).unwrap();
        assert_eq!(scatter_plan.op, op);
        assert_eq!(scatter.reduction, Some(Reduction::Add));
        assert_eq!(scatter_plan.map.data.sizes, plan.data.sizes);
        assert_eq!(scatter_plan.updates.sizes, plan.output.sizes);
        assert_eq!(scatter_plan.out_of_range, plan.out_of_range);
    }
    // The policy carries over: `zero` drops a gradient, `clamp` sends it to the clamped row.
    let mut desc = gather(GatherForm::Axis, GatherRules::OpenVino, &[4, 2], &[3], 0);
    desc.out_of_range = Some(OutOfRange::Clamp);
    let (_, p) = gather_data_gradient(&desc.plan().unwrap(), DType::I64).unwrap();
    assert_eq!(p.out_of_range, OutOfRange::Clamp);
}

#[test]
fn a_gather_no_scatter_takes_names_the_rule() {
    let mut batched = gather(GatherForm::Axis, GatherRules::OpenVino, &[2, 3, 4], &[2, 3], 1);
    batched.batch_dims = Some(1);
    let e = gather_data_gradient(&batched.plan().unwrap(), DType::I64).unwrap_err();
    assert!(matches!(e, RuleError::ScatterKey { key: "batch_dims", .. }), "{e}");

    // DirectML's leading index dimensions are padding, absent from its output: the scatter of
    // the same indices would take updates of another shape.
    let mut padded = gather(GatherForm::Axis, GatherRules::DirectMl, &[4, 6], &[1, 3], 1);
    padded.index_dims = Some(1);
    let plan = padded.plan().unwrap();
    assert_eq!(plan.output.sizes.as_slice(), [4, 3]);
    let e = gather_data_gradient(&plan, DType::I64).unwrap_err();
    assert!(matches!(e, RuleError::UpdatesShape { .. }), "{e}");

    let mut wide = gather(GatherForm::Axis, GatherRules::Onnx, &[4, 2], &[3], 0);
    wide.data = decl(DType::F64, &[4, 2]);
    let e = gather_data_gradient(&wide.plan().unwrap(), DType::I64).unwrap_err();
    assert!(matches!(e, RuleError::ReductionType { .. }), "{e}");
}

/// A batched gather's gradient is a ScatterND-add whose tuples spell out the batch and the
/// dimensions before the axis: `out[b, x, i, r]` read `data[b, x, idx[b, i], r]`.
#[test]
fn a_batched_gathers_gradient_scatters_tuples_of_its_positions() {
    let mut desc = gather(GatherForm::Axis, GatherRules::OpenVino, &[2, 3, 5, 2], &[2, 4], 2);
    desc.batch_dims = Some(1);
    let plan = desc.plan().unwrap();
    let (scatter, p) = batched_gather_gradient(&plan).unwrap().unwrap();
    assert_eq!(scatter.map.form, GatherForm::Nd);
    assert_eq!(scatter.reduction, Some(Reduction::Add));
    assert_eq!(p.map.indices.sizes.as_slice(), [2, 3, 4, 3]);
    assert_eq!(p.updates.sizes, plan.output.sizes);
    let ids: Vec<i128> = vec![4, 0, -1, 9, 2, 2, 3, 1];
    let tuples = batched_tuples(&plan, &ids);
    assert_eq!(tuples.len(), 2 * 3 * 4 * 3);
    for (n, t) in tuples.chunks(3).enumerate() {
        let (b, x, i) = (n / 12, n / 4 % 3, n % 4);
        assert_eq!(t, [b as i64, x as i64, ids[b * 4 + i] as i64], "tuple {n}");
    }
    // Indices of rank 2 along axis 1: a prefix of 1 + 2 - 1 dimensions, tuples of 2.
    let mut desc = gather(GatherForm::Axis, GatherRules::OpenVino, &[2, 5, 3], &[2, 3], 1);
    desc.batch_dims = Some(1);
    let plan = desc.plan().unwrap();
    let (_, p) = batched_gather_gradient(&plan).unwrap().unwrap();
    assert_eq!(p.map.indices.sizes.as_slice(), [2, 3, 2]);
    let ids: Vec<i128> = vec![4, 0, 2, 1, 3, 3];
    assert_eq!(batched_tuples(&plan, &ids), [0, 4, 0, 0, 0, 2, 1, 1, 1, 3, 1, 3]);
    // A GatherND's batch dimensions are its own (no scatter of tuples here).
    let mut nd = gather(GatherForm::Nd, GatherRules::OpenVino, &[2, 3, 4], &[2, 1], 0);
    nd.batch_dims = Some(1);
    assert!(batched_gather_gradient(&nd.plan().unwrap()).is_none());
    // Gathers without batch dimensions take `gather_data_gradient`.
    let plain = gather(GatherForm::Axis, GatherRules::OpenVino, &[4, 2], &[3], 0).plan().unwrap();
    assert!(batched_gather_gradient(&plain).is_none());
    // An empty output whose other sizes multiply past `usize`: no tuple, no overflow.
    let big = 1usize << 33;
    let mut empty = gather(GatherForm::Axis, GatherRules::OpenVino, &[big, big, 4, 0], &[big, 0], 2);
    empty.batch_dims = Some(1);
    let plan = empty.plan().unwrap();
    assert_eq!(plan.output.sizes.as_slice(), [big, big, 0, 0]);
    assert!(batched_tuples(&plan, &[]).is_empty());
    let _ = batched_gather_gradient(&plan);
}
