//! The `_` count's rules (docs/rules.md, `dynamic-*`) on the plans core makes, no device:
//! counts read from buffer lengths; random gathers, slices and chains given a `_` leading size
//! are refused with the fault a reference predicate (written from the rules, not from
//! `dynamic.rs`) names, or planned so that every count gives the plan of the sizes written out
//! and one kernel. The kernels themselves run on every count in `tests/suite/dynamic.rs`.

mod common;

use common::{chains, d, generate, generate::Rng};
use std::borrow::Cow;
use stridex_core::dynamic::{
    self, counted_at, received_shape, slice_stage_shape, StageWindowKeys, PLACEHOLDER,
};
use stridex_core::kernel::{GatherKernelDesc, SliceKernelDesc, Walk, WalkChoice};
use stridex_core::{
    ChainCount, ChainDesc, ChainKernelDesc, DType, DynamicFault, GatherDesc, GatherRules, GatherStage,
    Location, OpDesc, Operand, OutputDecl, RuleError, SignedDims, SliceDesc, SliceForm, SliceRange,
    SliceWindow, StageDesc, TensorDecl, TensorLayout, Window,
};

fn fault_of(e: &RuleError) -> Option<DynamicFault> {
    match e {
        RuleError::Dynamic { fault, .. } => Some(*fault),
        RuleError::Stage { error, .. } => fault_of(error),
        _ => None,
    }
}

/// The walk with its count taken out, and the base a row or convert kernel takes at launch
/// (`with_count` keeps the placeholder's): what must be the same for every count.
fn specialized(walk: Option<Walk>) -> Option<String> {
    walk.map(|w| match w {
        Walk::Rows(r) => format!("{:?} at {}", r.specialized(), r.base),
        Walk::Slots(s) => format!("{:?}", s.specialized()),
        Walk::Convert(c) => format!("{:?} at {}", c.specialized(), c.base),
    })
}

/// The walks a `_` op is checked through: the one it launches, and the slot walk.
const CHOICES: [WalkChoice; 2] = [WalkChoice::Best, WalkChoice::Slots];

/// What `run` launches for a `_` op at `count`: the placeholder plan's walk given the count
/// (`sizes`: the source and output layouts at that count, and the element's bytes) must be
/// the count's own walk, and both be specialized as one kernel.
fn check_given(
    placeholder: &Option<Walk>,
    walk: Option<Walk>,
    count: usize,
    sizes: (&TensorLayout, &TensorLayout, usize),
    desc: &dyn std::fmt::Debug,
) {
    assert!(placeholder.as_ref().is_none_or(|w| w.is_dynamic()), "{desc:?}");
    assert_eq!(specialized(walk.clone()), specialized(placeholder.clone()), "{desc:?} at {count}");
    let given = placeholder.as_ref().map(|w| w.with_count(count, sizes.0, sizes.1, sizes.2));
    assert_eq!(given, walk.map(Some), "{desc:?} at {count}");
}

#[test]
fn counts_come_from_the_buffer_length() {
    let packed = TensorDecl::packed(DType::F32, d(&[PLACEHOLDER, 3, 4]));
    assert_eq!(dynamic::row_elements(&[7, 3, 4]), 12);
    assert_eq!(dynamic::row_elements(&[7]), 1);
    assert_eq!(dynamic::row_step(&packed), 12);
    assert_eq!(dynamic::count_in(&packed, 0), Some(0));
    assert_eq!(dynamic::count_in(&packed, 24), Some(2));
    assert_eq!(dynamic::count_in(&packed, 25), None, "a packed buffer ends on a row");
    assert_eq!(dynamic::count_in(&packed, 23), None);
    // NHWC viewed as NCHW, and a padded pitch: the count is the strides the length reaches into.
    let nhwc =
        TensorDecl { strides: Some(d(&[48, 1, 12, 3])), ..TensorDecl::packed(DType::U8, d(&[9, 3, 4, 4])) };
    assert_eq!(dynamic::row_step(&nhwc), 48);
    assert_eq!(dynamic::count_in(&nhwc, 96), Some(2));
    assert_eq!(dynamic::count_in(&nhwc, 97), Some(3));
    assert_eq!(dynamic::count_in(&nhwc, 95), Some(2));
    let empty_rows = TensorDecl::packed(DType::F32, d(&[PLACEHOLDER, 0]));
    assert_eq!(dynamic::count_in(&empty_rows, 0), None);
}

/// The `_` rule a declared output breaks: a leading stride below the span of the other
/// dimensions (its leading size is the count, whatever is written).
fn output_fault(output: &Option<OutputDecl>) -> Option<DynamicFault> {
    let o = output.as_ref()?;
    let st = o.strides.filter(|st| st.len() == o.sizes.len() && !st.is_empty())?;
    if o.sizes[1..].contains(&0) {
        return None; // empty at every count
    }
    let span =
        o.sizes.iter().zip(st.iter()).skip(1).map(|(&n, &s)| n.saturating_sub(1) * s).sum::<usize>() + 1;
    (st[0] < span).then_some(DynamicFault::LeadingStride { tensor: Operand::Output, stride: st[0], span })
}

/// Which `_` rule a gather with `_` indices breaks, first to last as docs/rules.md lists them
/// (`None`: none; the rule sets' own rules and the one-kernel rule then decide).
fn gather_fault(desc: &GatherDesc) -> Option<DynamicFault> {
    let rank = desc.indices.sizes.len() as i64;
    let batch = desc.batch_dims.unwrap_or(0);
    let batch = if batch < 0 { batch + rank } else { batch };
    let batch_in_range = desc.batch_dims.is_some_and(|b| b.abs() <= rank.min(desc.data.sizes.len() as i64));
    let axis = if desc.axis < 0 { desc.axis + desc.data.sizes.len() as i64 } else { desc.axis };
    if rank == 0 {
        Some(DynamicFault::Scalar { tensor: Operand::Indices })
    } else if desc.rules == GatherRules::DirectMl {
        Some(DynamicFault::DirectMl)
    } else if desc.indices.strides.is_some() {
        Some(DynamicFault::Strides { tensor: Operand::Indices })
    } else if let Some(f) = output_fault(&desc.output) {
        Some(f)
    } else if batch_in_range && batch != 0 {
        Some(DynamicFault::BatchDims { batch_dims: batch as usize })
    } else if desc.indices.sizes[1..].contains(&0) {
        Some(DynamicFault::EmptyRows { tensor: Operand::Indices })
    } else {
        // The rule sets' own rules at the placeholder count come first, then the axis.
        let mut sized = *desc;
        sized.dynamic_leading = false;
        sized.indices.sizes = with_leading(&desc.indices.sizes, PLACEHOLDER);
        output_with_leading(&mut sized.output, PLACEHOLDER);
        match sized.plan() {
            Ok(_) if axis != 0 => Some(DynamicFault::Axis { axis: axis as usize }),
            _ => None,
        }
    }
}

/// A declared output as a count plans it: the count leads.
fn output_with_leading(output: &mut Option<OutputDecl>, n: usize) {
    if let Some(o) = output.as_mut() {
        o.sizes = with_leading(&o.sizes, n);
    }
}

fn with_leading(sizes: &[usize], n: usize) -> stridex_core::Dims {
    match sizes.split_first() {
        Some((_, rest)) => d(&[&[n], rest].concat()),
        None => d(sizes),
    }
}

#[test]
fn random_gathers_take_a_count_or_name_the_rule() {
    let (mut planned, mut refused) = (0, 0);
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed);
        let mut desc = generate::gather_case(&mut rng, &DType::ALL).desc;
        // Half keep what the generator gave (strides, an output, DirectML), half are cleared of it.
        if rng.chance(50) {
            (desc.indices.strides, desc.output) = (None, None);
            if desc.rules == GatherRules::DirectMl {
                desc.rules = GatherRules::Onnx;
                (desc.index_dims, desc.feature_level) = (None, None);
            }
        }
        let written = desc;
        desc.dynamic_leading = true;
        let expected = gather_fault(&desc);
        match desc.plan() {
            Ok(p) => {
                assert_eq!(expected, None, "{desc:?}");
                assert!(p.dynamic_leading && p.output.sizes[0] == PLACEHOLDER && p.axis == 0, "{p:?}");
                common::check_follows_count(&desc, |p, t| match t {
                    Operand::Data => Some(p.data.sizes.to_vec()),
                    Operand::Indices => Some(p.indices.sizes.to_vec()),
                    Operand::Output => Some(p.output.sizes.to_vec()),
                    _ => None,
                });
                common::check_follows_count(&written, |_, _| None);
                let placeholders = CHOICES.map(|c| GatherKernelDesc::with(&p, c).map(|k| k.walk));
                for count in [3, 4, 7] {
                    let at = dynamic::gather_at(&desc, count).unwrap();
                    let mut sized = written;
                    sized.indices.sizes = with_leading(&written.indices.sizes, count);
                    output_with_leading(&mut sized.output, count);
                    let mut plan = sized.plan().unwrap();
                    plan.dynamic_leading = true;
                    assert_eq!(at, plan, "{desc:?} at {count}");
                    assert_eq!(at.output.sizes[0], count);
                    for (choice, placeholder) in CHOICES.iter().zip(&placeholders) {
                        let walk = GatherKernelDesc::with(&at, *choice).map(|k| k.walk);
                        let sizes = (&at.data, &at.output, at.data_type.size());
                        check_given(placeholder, walk, count, sizes, &desc);
                    }
                }
                planned += 1;
            }
            Err(e) => {
                let mut sized = written;
                sized.indices.sizes = with_leading(&written.indices.sizes, PLACEHOLDER);
                output_with_leading(&mut sized.output, PLACEHOLDER);
                match (expected, fault_of(&e)) {
                    (Some(x), Some(f)) => assert_eq!(x, f, "{desc:?}: {e}"),
                    // A rule of the rule set, at the placeholder count.
                    (None, None) => assert_eq!(sized.plan().err(), Some(e), "{desc:?}"),
                    (x, f) => panic!("{desc:?}: expected {x:?}, got {f:?}: {e}"),
                }
                refused += 1;
            }
        }
    }
    assert!(planned >= 300 && refused >= 300, "{planned} planned, {refused} refused");
}

/// Which `_` rule a slice with a `_` input breaks (`None`: none).
fn slice_fault(desc: &SliceDesc) -> Option<DynamicFault> {
    let sizes = &desc.input.sizes;
    let whole = match desc.window {
        SliceWindow::DirectMl { offsets, strides, .. } => {
            offsets.first().is_none_or(|&o| o == 0) && strides.first().is_none_or(|&s| s == 1)
        }
        SliceWindow::Onnx { starts, ends, axes, steps } => (0..starts.len()).all(|k| {
            let axis = axes.map_or(Some(k as i64), |a| a.get(k).copied());
            let first = axis == Some(0) || axis == Some(-(sizes.len() as i64));
            !first
                || (starts[k] == 0
                    && ends.get(k).is_some_and(|&e| e >= u32::MAX as i64)
                    && steps.and_then(|s| s.get(k).copied()).is_none_or(|s| s == 1))
        }),
    };
    let span: Option<usize> = desc.input.strides.map(|st| {
        sizes.iter().zip(st.iter()).skip(1).map(|(&n, &s)| n.saturating_sub(1) * s).sum::<usize>() + 1
    });
    if sizes.is_empty() {
        Some(DynamicFault::Scalar { tensor: Operand::Input })
    } else if let Some(f) = output_fault(&desc.output) {
        Some(f)
    } else if !whole {
        Some(DynamicFault::Window)
    } else if sizes[1..].contains(&0) {
        Some(DynamicFault::EmptyRows { tensor: Operand::Input })
    } else if let (Some(span), Some(st)) = (span, desc.input.strides) {
        (st[0] < span).then_some(DynamicFault::LeadingStride { tensor: Operand::Input, stride: st[0], span })
    } else {
        None
    }
}

#[test]
fn random_slices_take_a_count_or_name_the_rule() {
    let (mut planned, mut refused) = (0, 0);
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed);
        let case = generate::slice_case(&mut rng, &DType::ALL);
        let mut desc = case.desc;
        if rng.chance(60) {
            desc.output = None;
        }
        if let (true, SliceWindow::DirectMl { offsets, sizes, strides }) = (rng.chance(60), &mut desc.window)
        {
            let whole = |v: &[usize], first| d(&[&[first], &v[1..]].concat());
            (*offsets, *sizes) = (whole(offsets, 0), whole(sizes, desc.input.sizes[0]));
            *strides = SignedDims::of(&[&[1], &strides[1..]].concat());
        }
        let written = desc;
        desc.dynamic_leading = true;
        let expected = slice_fault(&desc);
        match desc.plan() {
            Ok(p) => {
                assert_eq!(expected, None, "{desc:?}");
                assert!(p.dynamic_leading && p.output.sizes[0] == PLACEHOLDER, "{p:?}");
                common::check_follows_count(&desc, |p, t| match t {
                    Operand::Data | Operand::Input => Some(p.input.sizes.to_vec()),
                    Operand::Output => Some(p.output.sizes.to_vec()),
                    _ => None,
                });
                common::check_follows_count(&written, |_, _| None);
                // A slice has no indices or updates for a count to size.
                assert!(!desc.follows_count(Operand::Indices) && !desc.follows_count(Operand::Updates));
                let placeholders = CHOICES.map(|c| SliceKernelDesc::with(&p, c).map(|k| k.walk));
                for count in [3, 4, 7] {
                    let at = dynamic::slice_at(&desc, count).unwrap();
                    assert_eq!((at.input.sizes[0], at.output.sizes[0]), (count, count), "{desc:?}");
                    for (choice, placeholder) in CHOICES.iter().zip(&placeholders) {
                        let walk = SliceKernelDesc::with(&at, *choice).map(|k| k.walk);
                        let sizes = (&at.input, &at.output, at.data_type.size());
                        check_given(placeholder, walk, count, sizes, &desc);
                    }
                }
                let empty = dynamic::slice_at(&desc, 0).unwrap();
                assert!(empty.output.sizes[0] == 0 && empty.input.sizes[0] == 0 && empty.dims.is_empty());
                planned += 1;
            }
            Err(e) => {
                match (expected, fault_of(&e)) {
                    (Some(x), Some(f)) => assert_eq!(x, f, "{desc:?}: {e}"),
                    (None, None) => {
                        let mut sized = written;
                        sized.input.sizes = with_leading(&written.input.sizes, PLACEHOLDER);
                        output_with_leading(&mut sized.output, PLACEHOLDER);
                        if let SliceWindow::DirectMl { sizes, .. } = &mut sized.window {
                            *sizes = with_leading(sizes, PLACEHOLDER);
                        }
                        assert_eq!(sized.plan().err(), Some(e), "{desc:?}");
                    }
                    (x, f) => panic!("{desc:?}: expected {x:?}, got {f:?}: {e}"),
                }
                refused += 1;
            }
        }
    }
    assert!(planned >= 300 && refused >= 300, "{planned} planned, {refused} refused");
}

#[test]
fn random_chains_take_a_count_where_every_stage_keeps_it() {
    let (mut planned, mut refused) = (0, 0);
    for seed in 0..1500u64 {
        let case = chains::chain_case(&mut Rng::new(seed), &DType::ALL);
        let gathers: Vec<usize> = (1..=case.desc.stages.len())
            .filter(|&s| matches!(case.desc.stages[s - 1], StageDesc::Gather(_)))
            .collect();
        let carriers = std::iter::once(ChainCount::Data)
            .chain(gathers.iter().map(|&stage| ChainCount::Indices { stage }));
        for carrier in carriers {
            let mut desc = case.desc.clone();
            (desc.dynamic_leading, desc.output) = (Some(carrier), None);
            let first = match carrier {
                ChainCount::Data => 1,
                ChainCount::Indices { stage } => stage + 1,
            };
            for stage in 1..=desc.stages.len() {
                assert_eq!(counted_at(&desc, stage), stage >= first, "{carrier:?} at {stage}");
            }
            match desc.plan() {
                Ok(p) => {
                    assert!(p.dynamic_leading && p.output.sizes[0] == PLACEHOLDER, "{desc:?}");
                    common::check_follows_count(&desc, |p, t| match t {
                        Operand::Data | Operand::Input => Some(p.data.sizes.to_vec()),
                        Operand::Output => Some(p.output.sizes.to_vec()),
                        _ => None,
                    });
                    let one = specialized(ChainKernelDesc::new(&p).unwrap().map(|k| k.walk));
                    for count in [3, 4, 7] {
                        let at = dynamic::chain_at(&desc, count).unwrap();
                        assert_eq!(at.output.sizes[0], count, "{desc:?}");
                        let kernel = ChainKernelDesc::new(&at).unwrap().map(|k| k.walk);
                        assert_eq!(specialized(kernel), one, "{desc:?} at {count}");
                    }
                    // Each stage after the count's receives it as its leading size.
                    for stage in first..=desc.stages.len() {
                        assert_eq!(received_shape(&desc, stage).unwrap()[0], PLACEHOLDER);
                    }
                    let empty = dynamic::chain_at(&desc, 0).unwrap();
                    assert_eq!(empty.output.sizes[0], 0);
                    assert!(empty.stages[first - 1..].iter().all(|s| s.output().sizes[0] == 0));
                    planned += 1;
                }
                Err(e) => {
                    // A refusal names a `_` rule, or a stage's own rule (the count lowered into
                    // a stage that cannot take it); never a panic.
                    assert!(!e.to_string().is_empty());
                    refused += 1;
                }
            }
        }
    }
    // Most random chains gather across the count or end in rows of no whole word.
    assert!(planned >= 40 && refused >= 1000, "{planned} planned, {refused} refused");
}

/// Each chain rule of the count, on the smallest chain that breaks it.
#[test]
fn chain_rules_of_the_count() {
    let gather = |indices: &[usize], axis, rules| {
        StageDesc::Gather(common::gather_stage(rules, DType::I64, indices, axis))
    };
    let slice = common::window_stage;
    let chain = |data: TensorDecl, stages: Vec<StageDesc>, count| ChainDesc {
        data,
        stages: Cow::Owned(stages),
        output: None,
        dynamic_leading: Some(count),
    };
    let data = TensorDecl::packed(DType::F32, d(&[PLACEHOLDER, 4, 6]));
    let fault = |c: ChainDesc| c.plan().err().and_then(|e| fault_of(&e));
    let onnx = GatherRules::Onnx;
    // A gather across the count, a DirectML gather after it, a window that does not keep it.
    assert_eq!(
        fault(chain(data, vec![gather(&[2], 0, onnx)], ChainCount::Data)),
        Some(DynamicFault::GatherAcrossCount)
    );
    // A GatherND or GatherElements after the count: their outputs lead with their indices'.
    let mut nd = common::gather_stage(onnx, DType::I64, &[3, 1], 0);
    nd.form = stridex_core::GatherForm::Nd;
    assert_eq!(
        fault(chain(data, vec![StageDesc::Gather(nd)], ChainCount::Data)),
        Some(DynamicFault::NdAfterCount)
    );
    // What the front ends ask of a gather stage's indices: `_` carries the count before it;
    // after it, a gather_elements' indices must lead with `_`, and no other gather's may.
    let asked = |form, counted, underscore| {
        dynamic::stage_indices_fault(form, counted, underscore).and_then(|e| fault_of(&e))
    };
    use stridex_core::GatherForm::{Axis, Elements, Nd};
    for form in [Axis, Elements, Nd] {
        assert_eq!(asked(form, false, true), None);
        assert_eq!(asked(form, false, false), None);
    }
    assert_eq!(asked(Elements, true, true), None);
    assert_eq!(asked(Elements, true, false), Some(DynamicFault::ElementsStageCount));
    assert_eq!(asked(Axis, true, true), Some(DynamicFault::SecondCount));
    assert_eq!(asked(Nd, true, true), Some(DynamicFault::NdAfterCount));
    assert_eq!((asked(Axis, true, false), asked(Nd, true, false)), (None, None));
    // A GatherElements after the count takes it as its indices' leading size (whatever is
    // written there; the macro and builder ask for `_`), along any axis but the count's.
    let elements = |axis| {
        let mut g = common::gather_stage(onnx, DType::I64, &[PLACEHOLDER, 4, 3], axis);
        g.form = stridex_core::GatherForm::Elements;
        StageDesc::Gather(g)
    };
    assert_eq!(
        fault(chain(data, vec![elements(0)], ChainCount::Data)),
        Some(DynamicFault::ElementsAcrossCount)
    );
    let picks = chain(data, vec![elements(2)], ChainCount::Data);
    let p = picks.plan().unwrap();
    let one = specialized(ChainKernelDesc::new(&p).unwrap().map(|k| k.walk));
    for count in [1, 3, 7, 300] {
        let at = dynamic::chain_at(&picks, count).unwrap();
        let mut written = picks.clone();
        written.dynamic_leading = None;
        written.data.sizes = with_leading(&data.sizes, count);
        if let StageDesc::Gather(g) = &mut written.stages.to_mut()[0] {
            g.indices.sizes = with_leading(&g.indices.sizes, count);
        }
        let mut fixed = written.plan().unwrap();
        fixed.dynamic_leading = true;
        assert_eq!(at, fixed, "count {count}");
        assert_eq!(at.output.sizes.to_vec(), vec![count, 4, 3]);
        // A count of 1 drops the dimension from a walk made for it; `run` moves the
        // placeholder's walk to the count instead.
        if count > 1 {
            let kernel = ChainKernelDesc::new(&at).unwrap().map(|k| k.walk);
            assert_eq!(specialized(kernel), one, "count {count}");
        }
    }
    // Strided, such indices could not give the count's rows by their length.
    let mut strided = common::gather_stage(onnx, DType::I64, &[PLACEHOLDER, 4, 3], 2);
    strided.form = stridex_core::GatherForm::Elements;
    strided.indices.strides = Some(d(&[12, 3, 1]));
    assert_eq!(
        fault(chain(data, vec![StageDesc::Gather(strided)], ChainCount::Data)),
        Some(DynamicFault::Strides { tensor: Operand::Indices })
    );
    // Counted by a gather_elements' own indices (along axis 0 of a fixed table), then picked
    // from by another: both lead with the count, and at 0 both are empty.
    let table = TensorDecl::packed(DType::F32, d(&[5, 4, 6]));
    let mut rows = common::gather_stage(onnx, DType::I64, &[PLACEHOLDER, 4, 6], 0);
    rows.form = stridex_core::GatherForm::Elements;
    let carried = chain(table, vec![StageDesc::Gather(rows), elements(2)], ChainCount::Indices { stage: 1 });
    for count in [0, 1, 9] {
        let at = dynamic::chain_at(&carried, count).unwrap();
        assert_eq!(at.output.sizes.to_vec(), vec![count, 4, 3]);
        for s in &at.stages[..] {
            match s {
                stridex_core::StagePlan::Gather(g) => assert_eq!(g.indices.sizes[0], count),
                s => panic!("{s:?}"),
            }
        }
    }
    let empty = dynamic::chain_at(&picks, 0).unwrap();
    assert_eq!(empty.output.sizes[0], 0);
    match &empty.stages[0] {
        stridex_core::StagePlan::Gather(g) => assert_eq!(g.indices.sizes[0], 0),
        s => panic!("{s:?}"),
    }
    let directml = gather(&[2], 1, GatherRules::DirectMl);
    assert_eq!(fault(chain(data, vec![directml], ChainCount::Data)), Some(DynamicFault::DirectMl));
    let offset = slice(&[1, 0, 0], &[PLACEHOLDER, 4, 6], &[1, 1, 1]);
    assert_eq!(fault(chain(data, vec![offset], ChainCount::Data)), Some(DynamicFault::StageWindow));
    let step = slice(&[0, 0, 0], &[PLACEHOLDER, 4, 6], &[2, 1, 1]);
    assert_eq!(fault(chain(data, vec![step], ChainCount::Data)), Some(DynamicFault::StageWindow));
    // The count on a stage that is no gather.
    let keep = slice(&[0, 0, 0], &[PLACEHOLDER, 4, 6], &[1, 1, 1]);
    let no_gather = chain(data, vec![keep], ChainCount::Indices { stage: 1 });
    assert_eq!(fault(no_gather.clone()), Some(DynamicFault::NoGatherAt { stage: 1 }));
    assert!(dynamic::chain_at(&no_gather, 3).is_err());
    let past_end = chain(data, vec![gather(&[2], 1, onnx)], ChainCount::Indices { stage: 2 });
    assert_eq!(fault(past_end), Some(DynamicFault::NoGatherAt { stage: 2 }));
    // Strided data: the count's stride must cover the rest.
    let strided = |lead| TensorDecl { strides: Some(d(&[lead, 1, 4])), ..data };
    let crop = slice(&[0, 1, 2], &[PLACEHOLDER, 2, 3], &[1, 1, 1]);
    assert!(chain(strided(24), vec![crop], ChainCount::Data).plan().is_ok());
    assert_eq!(
        fault(chain(strided(23), vec![crop], ChainCount::Data)),
        Some(DynamicFault::LeadingStride { tensor: Operand::Data, stride: 23, span: 24 })
    );
    // Rows of no element, a scalar, an output declared.
    let empty = TensorDecl::packed(DType::F32, d(&[PLACEHOLDER, 0, 6]));
    let whole = slice(&[0, 0, 0], &[PLACEHOLDER, 0, 6], &[1, 1, 1]);
    assert_eq!(
        fault(chain(empty, vec![whole], ChainCount::Data)),
        Some(DynamicFault::EmptyRows { tensor: Operand::Data })
    );
    let scalar = TensorDecl::packed(DType::F32, d(&[]));
    let keys = StageDesc::Slice(SliceWindow::Onnx {
        starts: SignedDims::of(&[]),
        ends: SignedDims::of(&[]),
        axes: None,
        steps: None,
    });
    assert_eq!(
        fault(chain(scalar, vec![keys], ChainCount::Data)),
        Some(DynamicFault::Scalar { tensor: Operand::Data })
    );
    // A declared output leads with the count; strided, it keeps that dimension outermost.
    let mut declared = chain(data, vec![crop], ChainCount::Data);
    let output = |strides: Option<&[usize]>| {
        Some(OutputDecl { dtype: None, sizes: d(&[PLACEHOLDER, 2, 3]), strides: strides.map(d) })
    };
    declared.output = output(None);
    assert_eq!(fault(declared.clone()), None);
    declared.output = output(Some(&[8, 4, 1]));
    let at = dynamic::chain_at(&declared, 5).unwrap();
    assert_eq!((at.output.sizes.to_vec(), at.output.strides.to_vec()), (vec![5, 2, 3], vec![8, 4, 1]));
    declared.output = output(Some(&[1, 12, 2]));
    assert_eq!(
        fault(declared),
        Some(DynamicFault::LeadingStride { tensor: Operand::Output, stride: 1, span: 17 })
    );
    // A later gather's indices carry the count: the stages before it keep their sizes.
    let fixed = TensorDecl::packed(DType::F32, d(&[10, 4, 6]));
    let crop = slice(&[0, 1, 2], &[10, 2, 3], &[1, 1, 1]);
    let later = chain(fixed, vec![crop, gather(&[5], 0, onnx)], ChainCount::Indices { stage: 2 });
    let p = later.plan().unwrap();
    assert_eq!(p.output.sizes.to_vec(), vec![PLACEHOLDER, 2, 3]);
    assert_eq!(received_shape(&later, 2).unwrap(), vec![10, 2, 3]);
    // Stages count from 1 up to the one after the chain's last: others are an `Err`.
    assert_eq!(received_shape(&later, 3).unwrap(), vec![PLACEHOLDER, 2, 3]);
    for stage in [0, 4, usize::MAX] {
        let e = received_shape(&later, stage).unwrap_err();
        assert_eq!(fault_of(&e), Some(DynamicFault::NoStage { stage, last: 3 }), "{e}");
        assert!(slice_stage_shape(&later, stage, StageWindowKeys::Ranges { first: None }).is_err());
    }
    assert_eq!(dynamic::chain_at(&later, 7).unwrap().output.sizes.to_vec(), vec![7, 2, 3]);
    let empty = dynamic::chain_at(&later, 0).unwrap();
    assert_eq!(empty.output.sizes[0], 0);
    assert_eq!(empty.data.sizes[0], 10, "the data keeps its size when the indices carry the count");
}

/// The edges of the `_` rules: where a comparison or a normalization could be off by one and
/// the random cases would rarely notice (found by `scripts/mutants.sh rest`).
#[test]
fn edges_of_the_count_rules() {
    // A scalar's step is one element, strided or not.
    let scalar = TensorDecl { strides: Some(d(&[])), ..TensorDecl::packed(DType::F32, d(&[])) };
    assert_eq!(dynamic::row_step(&scalar), 1);
    // A `_` dimension's range: whole, from 0, forwards.
    for (range, ok) in [
        (SliceRange::FULL, true),
        (SliceRange::from(0), true),
        (SliceRange::from(1), false),
        (SliceRange::to(3), false),
        (SliceRange::FULL.step(2), false),
        (SliceRange::FULL.step(-1), false),
    ] {
        assert_eq!(dynamic::check_leading_range(&range).is_ok(), ok, "{range:?}");
    }
    // GatherElements named from the back: axis -1 of rank 2 is axis 1, whose count is tied to
    // the data's; -2 is axis 0.
    for (axis, fault) in [(-1, Some(DynamicFault::ElementsAxis { axis: 1 })), (-2, None)] {
        let mut g = GatherDesc::new(
            GatherRules::Onnx,
            TensorDecl::packed(DType::F32, d(&[4, 3])),
            TensorDecl::packed(DType::I64, d(&[PLACEHOLDER, 3])),
            axis,
        );
        g.form = stridex_core::GatherForm::Elements;
        g.dynamic_leading = true;
        let got = g.plan().map(|_| ()).map_err(|e| fault_of(&e));
        assert_eq!(got, fault.map_or(Ok(()), |f| Err(Some(f))), "axis {axis}");
    }
    // A stride list of the wrong length is the layout rules' to report, not the count's.
    let wrong = TensorDecl { strides: Some(d(&[1, 12])), ..TensorDecl::packed(DType::F32, d(&[2, 3, 4])) };
    let window = SliceWindow::Onnx {
        starts: SignedDims::of(&[0]),
        ends: SignedDims::of(&[2]),
        axes: Some(SignedDims::of(&[1])),
        steps: None,
    };
    let e = SliceDesc { dynamic_leading: true, ..SliceDesc::new(wrong, window) }.plan().unwrap_err();
    assert_eq!(fault_of(&e), None, "{e}");
    // ONNX windows on the `_` axis, named by 0 or by -rank: start 0, end at or past 2^32 - 1, step 1.
    let onnx = |start: i64, end: i64, axis: i64, step: i64| {
        let window = SliceWindow::Onnx {
            starts: SignedDims::of(&[start]),
            ends: SignedDims::of(&[end]),
            axes: Some(SignedDims::of(&[axis])),
            steps: Some(SignedDims::of(&[step])),
        };
        let input = TensorDecl::packed(DType::F32, d(&[PLACEHOLDER, 3]));
        SliceDesc { dynamic_leading: true, ..SliceDesc::new(input, window) }
            .plan()
            .err()
            .and_then(|e| fault_of(&e))
    };
    let max = u32::MAX as i64;
    assert_eq!(onnx(0, max, 0, 1), None);
    assert_eq!(onnx(0, i64::MAX, -2, 1), None);
    assert_eq!(onnx(1, max, -2, 1), Some(DynamicFault::Window));
    assert_eq!(onnx(0, max - 1, 0, 1), Some(DynamicFault::Window));
    assert_eq!(onnx(0, max, 0, 2), Some(DynamicFault::Window));
    assert_eq!(onnx(1, 3, 1, 1), None, "another axis is the window's own");
    // A single gather's `batch_dims`: in range and not 0 is the count's rule; out of range,
    // the rule set's own.
    let openvino = |batch_dims: i64| {
        let indices = TensorDecl::packed(DType::I64, d(&[PLACEHOLDER, 3]));
        let data = TensorDecl::packed(DType::F32, d(&[PLACEHOLDER, 5]));
        let desc = GatherDesc {
            batch_dims: Some(batch_dims),
            dynamic_leading: true,
            ..GatherDesc::new(GatherRules::OpenVino, data, indices, 1)
        };
        desc.plan().err().map(|e| fault_of(&e))
    };
    assert_eq!(openvino(1), Some(Some(DynamicFault::BatchDims { batch_dims: 1 })));
    assert_eq!(openvino(-1), Some(Some(DynamicFault::BatchDims { batch_dims: 1 })));
    assert_eq!(openvino(3), Some(None), "out of range: OpenVINO's rule");
    assert_eq!(openvino(-3), Some(None));
}

#[test]
fn chain_stages_after_the_count() {
    let data = TensorDecl::packed(DType::F32, d(&[PLACEHOLDER, 4, 6]));
    let gather = |rules, indices: &[usize], axis, batch_dims| {
        StageDesc::Gather(GatherStage {
            batch_dims,
            ..common::gather_stage(rules, DType::I64, indices, axis)
        })
    };
    let chain = |stages: Vec<StageDesc>, count| ChainDesc {
        data,
        stages: Cow::Owned(stages),
        output: None,
        dynamic_leading: Some(count),
    };
    let fault = |c: ChainDesc| c.plan().err().map(|e| fault_of(&e));
    let vino = GatherRules::OpenVino;
    // OpenVINO batch dimensions after the count, by either sign; out of range, OpenVINO's rule.
    let after = DynamicFault::BatchDimsAfterCount { batch_dims: 1 };
    assert_eq!(fault(chain(vec![gather(vino, &[2, 3], 2, Some(1))], ChainCount::Data)), Some(Some(after)));
    assert_eq!(fault(chain(vec![gather(vino, &[2, 3], 2, Some(-1))], ChainCount::Data)), Some(Some(after)));
    assert_eq!(fault(chain(vec![gather(vino, &[2, 3], 2, Some(4))], ChainCount::Data)), Some(None));
    assert_eq!(fault(chain(vec![gather(vino, &[2, 3], 2, Some(-4))], ChainCount::Data)), Some(None));
    assert_eq!(fault(chain(vec![gather(vino, &[2, 3], 2, Some(0))], ChainCount::Data)), None);
    // ONNX takes no `batch_dims`: its own rule, not the count's.
    assert_eq!(fault(chain(vec![gather(GatherRules::Onnx, &[2], 2, Some(1))], ChainCount::Data)), Some(None));
    // The gather carrying the count obeys a single `_` gather's rules: along axis 0.
    let across =
        chain(vec![gather(GatherRules::Onnx, &[PLACEHOLDER], 1, None)], ChainCount::Indices { stage: 1 });
    assert_eq!(fault(across), Some(Some(DynamicFault::Axis { axis: 1 })));
    // A stage's own fault shows the count as `_` from the count's stage on, and only there.
    let out_of_range = gather(GatherRules::Onnx, &[2], 5, None);
    let e = chain(vec![out_of_range], ChainCount::Data).plan().unwrap_err().to_string();
    assert!(e.starts_with("stage 1 (gather), on its input of shape [_, 4, 6]: "), "{e}");
    let carrier = gather(GatherRules::Onnx, &[PLACEHOLDER], 0, None);
    let e =
        chain(vec![out_of_range, carrier], ChainCount::Indices { stage: 2 }).plan().unwrap_err().to_string();
    assert!(e.starts_with("stage 1 (gather), on its input of shape [2, 4, 6]: "), "{e}");
    // A count of 0 empties the carrier's indices and every output from there on.
    let keep = gather(GatherRules::Onnx, &[3], 1, None);
    let later = chain(vec![keep, carrier], ChainCount::Indices { stage: 2 });
    let empty = dynamic::chain_at(&later, 0).unwrap();
    let stridex_core::StagePlan::Gather(g) = &empty.stages[1] else { panic!("a gather") };
    assert_eq!(g.indices.sizes[0], 0);
    assert_eq!(empty.stages[0].output().sizes.to_vec(), [PLACEHOLDER, 3, 6], "before the count: as written");
}

#[test]
fn a_slice_stage_after_the_count_takes_it_whole() {
    let data = TensorDecl::packed(DType::F32, d(&[PLACEHOLDER, 4, 6]));
    let prefix = |count| ChainDesc { data, stages: Cow::Owned(vec![]), output: None, dynamic_leading: count };
    let counted = prefix(Some(ChainCount::Data));
    let ranges = |first| StageWindowKeys::Ranges { first };
    assert_eq!(
        slice_stage_shape(&counted, 1, ranges(Some(SliceRange::FULL))).unwrap(),
        Some(vec![PLACEHOLDER, 4, 6])
    );
    assert_eq!(slice_stage_shape(&counted, 1, ranges(None)).unwrap(), Some(vec![PLACEHOLDER, 4, 6]));
    assert_eq!(slice_stage_shape(&counted, 1, StageWindowKeys::Keys(SliceForm::Onnx)).unwrap(), None);
    let refused = |window| match slice_stage_shape(&counted, 1, window).unwrap_err() {
        RuleError::Stage { stage, kind, input, error } => {
            assert_eq!((stage, kind, input), (1, "slice", vec![dynamic::COUNT_SHOWN, 4, 6]));
            assert_eq!(fault_of(&error), Some(DynamicFault::StageWindow));
            error.location()
        }
        e => panic!("{e}"),
    };
    assert_eq!(refused(StageWindowKeys::Keys(SliceForm::DirectMl)), Location::WindowAt(Window::Sizes, 0));
    assert_eq!(refused(ranges(Some(SliceRange::from(1)))), Location::RangeAt(0));
    // Without a count every form is the stage's own.
    let fixed = prefix(None);
    assert_eq!(slice_stage_shape(&fixed, 1, StageWindowKeys::Keys(SliceForm::DirectMl)).unwrap(), None);
    assert_eq!(
        slice_stage_shape(&fixed, 1, ranges(Some(SliceRange::from(1)))).unwrap(),
        Some(vec![PLACEHOLDER, 4, 6])
    );
}
