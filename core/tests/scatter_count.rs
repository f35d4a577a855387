//! A scatter whose indices (and so updates) lead with `_`: the rules that keep the count the
//! updates' leading size, the plan at a count against the same scatter with the count written,
//! and the kernels' constants, the same at every count.

mod common;

use common::scatter::{decl, strided};
use stridex_core::dynamic::{scatter_at, PLACEHOLDER};
use stridex_core::kernel::{ScatterGroupingDesc, ScatterKernelDesc, ScatterLinesDesc, ScatterRowsDesc};
use stridex_core::{
    DType, DynamicFault, GatherForm, GatherRules, OpDesc, OutOfRange, Reduction, RuleError, ScatterDesc,
    ScatterPlan,
};

/// A scatter of `form` with the indices' and updates' leading sizes `_` (the placeholder, as
/// the macros write it).
fn counted(
    form: GatherForm,
    rules: GatherRules,
    data: &[usize],
    indices: &[usize],
    updates: &[usize],
) -> ScatterDesc {
    let mut desc = ScatterDesc::new(
        form,
        rules,
        decl(DType::F32, data),
        decl(DType::I32, indices),
        decl(DType::F32, updates),
        0,
    );
    desc.map.dynamic_leading = true;
    desc
}

/// A `_` scatter of `[4, 10]` along `axis`, its updates leading with the data's dimension 0.
fn along(axis: i64) -> ScatterDesc {
    let mut desc =
        counted(GatherForm::Axis, GatherRules::OpenVino, &[4, 10], &[PLACEHOLDER], &[4, PLACEHOLDER]);
    desc.map.axis = axis;
    desc
}

/// The same scatter with `count` written in both leading sizes.
fn written(desc: &ScatterDesc, count: usize) -> Result<ScatterPlan, RuleError> {
    let mut fixed = *desc;
    fixed.map.dynamic_leading = false;
    let mut indices = fixed.map.indices.sizes.to_vec();
    let mut updates = fixed.updates.sizes.to_vec();
    indices[0] = count;
    updates[0] = count;
    fixed.map.indices.sizes = stridex_core::Dims::of(&indices);
    fixed.updates.sizes = stridex_core::Dims::of(&updates);
    fixed.plan()
}

fn fault(e: &RuleError) -> Option<DynamicFault> {
    match e {
        RuleError::Dynamic { fault, .. } => Some(*fault),
        RuleError::InScatter { rule, .. } => fault(rule),
        _ => None,
    }
}

/// The sizes of a scatter plan's tensors.
fn scatter_sizes(p: &ScatterPlan, t: stridex_core::Operand) -> Option<Vec<usize>> {
    use stridex_core::Operand;
    Some(match t {
        Operand::Data => p.map.data.sizes.to_vec(),
        Operand::Indices => p.map.indices.sizes.to_vec(),
        Operand::Updates => p.updates.sizes.to_vec(),
        Operand::Output => p.output.sizes.to_vec(),
        Operand::Input => return None,
    })
}

/// A KV cache's write (slots of 8 heads of 128) and an embedding's gradient (rows of 64), and
/// a ScatterND of row tuples: each plans at every count as the scatter with the count written,
/// but for the flag that says the count came at run time.
#[test]
fn a_count_plans_as_the_count_written() {
    let mut kv = counted(
        GatherForm::Axis,
        GatherRules::OpenVino,
        &[64, 8, 128],
        &[PLACEHOLDER],
        &[PLACEHOLDER, 8, 128],
    );
    kv.map.out_of_range = Some(OutOfRange::Skip);
    let mut embedding = counted(
        GatherForm::Axis,
        GatherRules::OpenVino,
        &[1000, 64],
        &[PLACEHOLDER, 3],
        &[PLACEHOLDER, 3, 64],
    );
    embedding.reduction = Some(Reduction::Add);
    let nd = counted(GatherForm::Nd, GatherRules::OpenVino, &[50, 16], &[PLACEHOLDER, 1], &[PLACEHOLDER, 16]);
    for desc in [kv, embedding, nd] {
        assert!(desc.is_dynamic());
        let placeholder = desc.plan().unwrap();
        common::check_follows_count(&desc, scatter_sizes);
        // What a person reads of it says the count is read at run time, as `describe` writes.
        let text = OpDesc::describe(&desc, &placeholder);
        assert_eq!(text, stridex_core::describe::scatter(&desc, &placeholder));
        assert!(text.contains("the leading size `_` is the count"), "{text}");
        // The same scatter with a count written is fixed.
        let mut fixed = desc;
        fixed.map.dynamic_leading = false;
        assert!(!OpDesc::is_dynamic(&fixed));
        assert_eq!(placeholder, scatter_at(&desc, PLACEHOLDER).unwrap());
        for count in [0, 1, 3, 17, 4096] {
            let mut at = desc.plan_at(count).unwrap();
            assert!(at.map.dynamic_leading);
            assert_eq!(at.updates.sizes[0], count);
            assert_eq!(at.map.indices.sizes[0], count);
            at.map.dynamic_leading = false;
            assert_eq!(at, written(&desc, count).unwrap(), "{desc:?} at {count}");
        }
    }
}

/// The kernels a `_` scatter launches are compiled once: the grouped kernel's constants are
/// the runs', and the owned-row pair and the grouping on the device take the count as a launch
/// argument.
#[test]
fn every_count_shares_the_compiled_kernels() {
    let kv = counted(
        GatherForm::Axis,
        GatherRules::OpenVino,
        &[64, 8, 128],
        &[PLACEHOLDER],
        &[PLACEHOLDER, 8, 128],
    );
    let rows = |count| {
        let p = kv.plan_at(count).unwrap();
        ScatterRowsDesc::of(&p, &p.map.data).unwrap()
    };
    let (five, nine) = (rows(5), rows(9));
    assert_eq!((five.positions, nine.positions), (5, 9));
    assert_eq!(five.specialized(), nine.specialized());
    assert_eq!(five.specialized().positions, 0);
    // Under `error` the device check's count is a launch argument too.
    let mut checked = kv;
    checked.map.out_of_range = Some(OutOfRange::Error);
    let check = |count| {
        let p = checked.plan_at(count).unwrap();
        ScatterRowsDesc::of(&p, &p.map.data).unwrap()
    };
    let (four, seven) = (check(4), check(7));
    assert_eq!((four.check.unwrap().1, seven.check.unwrap().1), (4, 7));
    assert_eq!(four.specialized(), seven.specialized());
    assert_eq!(four.specialized().check.map(|(_, count)| count), Some(0));
    let mut sum = kv;
    sum.reduction = Some(Reduction::Add);
    let grouped = |count| {
        let p = sum.plan_at(count).unwrap();
        ScatterKernelDesc::of(&p, &p.output).unwrap()
    };
    assert_eq!(grouped(1), grouped(300));
    // On GPUs its lists are grouped on the device: the positions, their blocks and the
    // histograms' scan are launch arguments; the runs and the sort's digits are constants.
    let mut gradient = sum;
    gradient.map.data.sizes = stridex_core::Dims::of(&[70_000, 8, 128]);
    let grouping = |desc: &ScatterDesc, count| {
        let p = desc.plan_at(count).unwrap();
        ScatterGroupingDesc::of(&p, &p.map.data).unwrap()
    };
    for desc in [sum, gradient] {
        let (one, many) = (grouping(&desc, 1), grouping(&desc, 300));
        assert_eq!((one.positions, one.blocks, many.positions, many.blocks), (1, 1, 300, 2));
        assert_ne!(one.digits_scan, many.digits_scan);
        assert_eq!(one.specialized(), many.specialized());
        let compiled = many.specialized();
        assert_eq!((compiled.positions, compiled.blocks, compiled.digits_scan.len), (0, 0, 0));
        assert_eq!(
            (compiled.runs, compiled.runs_scan, compiled.digits),
            (many.runs, many.runs_scan, many.digits)
        );
    }
    assert_eq!(grouping(&gradient, 5).digits, 3);
    let mut checked = sum;
    checked.map.out_of_range = Some(OutOfRange::Error);
    let (two, eight) = (grouping(&checked, 2), grouping(&checked, 8));
    assert_eq!((two.check.unwrap().1, eight.check.unwrap().1), (2, 8));
    assert_eq!(two.specialized(), eight.specialized());
    assert_eq!(eight.specialized().check.map(|(_, count)| count), Some(0));
}

/// A ScatterElements along axis 0 whose count of rows of positions is `_`: each line (a
/// column of the indices) is the count long. It plans at every count as the count written, and
/// its kernels are compiled once: the line kernel (many lines) takes the line's length and the
/// `error` check's count as launch arguments; the grouped kernel (few lines, f16, a mean)
/// has the runs' constants.
#[test]
fn a_counted_scatter_elements_shares_its_kernels() {
    let lines = |dtype: DType, columns: usize, policy| {
        let mut desc = counted(
            GatherForm::Elements,
            GatherRules::OpenVino,
            &[100, columns],
            &[PLACEHOLDER, columns],
            &[PLACEHOLDER, columns],
        );
        desc.map.data.dtype = dtype;
        desc.updates.dtype = dtype;
        desc.reduction = Some(Reduction::Add);
        desc.map.out_of_range = Some(policy);
        desc
    };
    for policy in [OutOfRange::Error, OutOfRange::Skip, OutOfRange::Clamp] {
        let desc = lines(DType::F32, 512, policy);
        let at = |count| {
            let p = desc.plan_at(count).unwrap();
            let mut fixed = p.clone();
            fixed.map.dynamic_leading = false;
            assert_eq!(fixed, written(&desc, count).unwrap(), "count {count}");
            ScatterLinesDesc::of(&p, &p.map.data).unwrap()
        };
        common::check_follows_count(&desc, scatter_sizes);
        let (five, ninety) = (at(5), at(90));
        assert_eq!((five.len, ninety.len, five.lines), (5, 90, 512));
        assert_eq!(five.specialized(), ninety.specialized());
        assert_eq!(five.specialized().len, 0);
        match policy {
            OutOfRange::Error => {
                assert_eq!((five.check.unwrap().1, ninety.check.unwrap().1), (5 * 512, 90 * 512));
                assert_eq!(ninety.specialized().check.map(|(_, n)| n), Some(0));
            }
            _ => assert_eq!(five.check, None),
        }
        // Counts past the data's axis are positions too (each names an index along it).
        assert_eq!(at(1000).len, 1000);
    }
    // Few lines, or f16 (words shared across lines): the grouped kernel, whose constants are the
    // runs'.
    for desc in [lines(DType::F32, 8, OutOfRange::Error), lines(DType::F16, 512, OutOfRange::Clamp)] {
        let grouped = |count| {
            let p = desc.plan_at(count).unwrap();
            assert!(ScatterLinesDesc::of(&p, &p.map.data).is_none());
            ScatterKernelDesc::of(&p, &p.output).unwrap()
        };
        assert_eq!(grouped(1), grouped(300));
    }
}

/// Where the count cannot be the updates' leading size, or a kernel would be compiled for it,
/// the rule says so.
#[test]
fn the_count_rules_of_a_scatter() {
    let cases: Vec<(ScatterDesc, DynamicFault)> = vec![
        // ScatterElements off axis 0: the indices' leading size is tied to the data's.
        (
            {
                let mut desc = counted(
                    GatherForm::Elements,
                    GatherRules::Onnx,
                    &[8, 4],
                    &[PLACEHOLDER, 4],
                    &[PLACEHOLDER, 4],
                );
                desc.map.axis = 1;
                desc
            },
            DynamicFault::ElementsAxis { axis: 1 },
        ),
        // Along axis 1, the updates lead with the data's dimension 0.
        (along(1), DynamicFault::Axis { axis: 1 }),
        // Named from the back: axis -1 of rank 2 is axis 1.
        (along(-1), DynamicFault::Axis { axis: 1 }),
        // GatherND indices of rank 1 are one tuple.
        (
            counted(GatherForm::Nd, GatherRules::OpenVino, &[50, 16], &[PLACEHOLDER], &[16]),
            DynamicFault::NdTuple,
        ),
        // DirectML pads every tensor to one DimensionCount.
        (
            counted(GatherForm::Nd, GatherRules::DirectMl, &[50, 16], &[PLACEHOLDER, 1], &[PLACEHOLDER, 16]),
            DynamicFault::DirectMl,
        ),
        // The count is read from a packed length.
        (
            ScatterDesc {
                map: stridex_core::GatherDesc {
                    indices: strided(DType::I32, &[PLACEHOLDER, 2], &[4, 1]),
                    ..counted(
                        GatherForm::Axis,
                        GatherRules::OpenVino,
                        &[50, 16],
                        &[PLACEHOLDER, 2],
                        &[PLACEHOLDER, 2, 16],
                    )
                    .map
                },
                ..counted(
                    GatherForm::Axis,
                    GatherRules::OpenVino,
                    &[50, 16],
                    &[PLACEHOLDER, 2],
                    &[PLACEHOLDER, 2, 16],
                )
            },
            DynamicFault::Strides { tensor: stridex_core::Operand::Indices },
        ),
        // Strided updates keep the count outermost.
        (
            ScatterDesc {
                updates: strided(DType::F32, &[PLACEHOLDER, 16], &[8, 1]),
                ..counted(
                    GatherForm::Axis,
                    GatherRules::OpenVino,
                    &[50, 16],
                    &[PLACEHOLDER],
                    &[PLACEHOLDER, 16],
                )
            },
            DynamicFault::LeadingStride { tensor: stridex_core::Operand::Updates, stride: 8, span: 16 },
        ),
    ];
    for (desc, expected) in cases {
        let e = desc.plan().unwrap_err();
        assert_eq!(fault(&e), Some(expected), "{desc:?}: {e}");
    }
    // Axis 0 and -2 (the same on rank 2) take the count.
    for axis in [0, -2] {
        let mut desc =
            counted(GatherForm::Axis, GatherRules::OpenVino, &[4, 10], &[PLACEHOLDER], &[PLACEHOLDER, 10]);
        desc.map.axis = axis;
        assert!(desc.plan().is_ok(), "axis {axis}");
    }
    // The keys no scatter takes are named as such first, not as a rule of the count.
    let mut batched =
        counted(GatherForm::Axis, GatherRules::OpenVino, &[4, 10], &[PLACEHOLDER], &[PLACEHOLDER, 10]);
    batched.map.batch_dims = Some(1);
    assert!(matches!(batched.plan(), Err(RuleError::ScatterKey { key: "batch_dims", .. })));
}

/// A strided updates tensor whose leading stride spans its rows takes a count; its plan at a
/// count keeps the strides.
#[test]
fn strided_updates_take_a_count() {
    let desc = ScatterDesc {
        updates: strided(DType::F32, &[PLACEHOLDER, 16], &[20, 1]),
        ..counted(GatherForm::Axis, GatherRules::OpenVino, &[50, 16], &[PLACEHOLDER], &[PLACEHOLDER, 16])
    };
    let p = desc.plan_at(7).unwrap();
    assert_eq!(p.updates.sizes.as_slice(), &[7, 16]);
    assert_eq!(p.updates.strides.as_slice(), &[20, 1]);
    assert_eq!(p.updates.min_buffer_len(), Some(6 * 20 + 16));
}

/// A chain with a `_` count that ends in a scatter: its final stage's positions are the
/// count's (the indices' leading size, as its updates'), and it plans at every count as the
/// chain with the count written; the stages before it keep the `_` chain's rules.
mod counted_chain {
    use super::common::{self, window_stage};
    use super::*;
    use stridex_core::dynamic::chain_at;
    use stridex_core::kernel::GatheredRows;
    use stridex_core::{
        ChainCount, ChainDesc, ChainPlan, GatherStage, OpDesc, Operand, ScatterStage, StageDesc, StagePlan,
    };

    fn scatter(
        form: GatherForm,
        into: &[usize],
        indices: &[usize],
        reduction: Option<Reduction>,
    ) -> StageDesc {
        StageDesc::Scatter(ScatterStage {
            form,
            rules: if form == GatherForm::Axis { GatherRules::OpenVino } else { GatherRules::Onnx },
            into: decl(DType::F32, into),
            indices: decl(DType::I32, indices),
            axis: 0,
            reduction,
            duplicates: None,
            use_init_val: None,
            out_of_range: Some(OutOfRange::Skip),
        })
    }

    fn chain(data: &[usize], stages: Vec<StageDesc>, count: Option<ChainCount>) -> ChainDesc {
        ChainDesc {
            data: decl(DType::F32, data),
            stages: stages.into(),
            output: None,
            dynamic_leading: count,
        }
    }

    /// A KV write of the K third of each token's QKV rows `[_, 3, 4, 8]` at its slot.
    fn kv(count: usize) -> ChainDesc {
        let tokens = if count == PLACEHOLDER { Some(ChainCount::Data) } else { None };
        chain(
            &[count, 3, 4, 8],
            vec![
                window_stage(&[0, 1, 0, 0], &[count, 1, 4, 8], &[1, 1, 1, 1]),
                scatter(GatherForm::Axis, &[16, 1, 4, 8], &[count], None),
            ],
            tokens,
        )
    }

    fn scattered(p: &ChainPlan) -> &ScatterPlan {
        match p.stages.last() {
            Some(StagePlan::Scatter(s)) => s,
            other => panic!("a scatter stage: {other:?}"),
        }
    }

    #[test]
    fn a_counted_kv_write_plans_as_the_count_written() {
        let desc = kv(PLACEHOLDER);
        let p = desc.plan().unwrap();
        assert!(p.dynamic_leading);
        // The count sizes the data (each token's QKV rows), not the destination.
        let chain_sizes = |p: &ChainPlan, t| match t {
            Operand::Data | Operand::Input => Some(p.data.sizes.to_vec()),
            Operand::Output => Some(p.output.sizes.to_vec()),
            _ => None,
        };
        common::check_follows_count(&desc, chain_sizes);
        assert!(desc.follows_count(Operand::Data) && !desc.follows_count(Operand::Output));
        for count in [1, 5, 300] {
            let at = chain_at(&desc, count).unwrap();
            let mut fixed = kv(count).plan().unwrap();
            fixed.dynamic_leading = true;
            assert_eq!(at, fixed, "count {count}");
            assert_eq!(scattered(&at).map.indices.sizes.to_vec(), vec![count]);
            assert_eq!(scattered(&at).updates.sizes.to_vec(), vec![count, 1, 4, 8]);
            // One fused pair of kernels for every count, one row stride (also at 1 row).
            let rows = ScatterRowsDesc::of_chain(&at).unwrap();
            assert_eq!(rows.specialized(), ScatterRowsDesc::of_chain(&p).unwrap().specialized());
            assert_eq!(rows.updates_row, 3 * 4 * 8 / 4);
        }
        // No position at 0: the destination stays whole, nothing is scattered.
        let empty = chain_at(&desc, 0).unwrap();
        assert_eq!(empty.output.sizes.to_vec(), vec![16, 1, 4, 8]);
        assert_eq!(scattered(&empty).map.indices.num_elements(), 0);
        assert_eq!(scattered(&empty).updates.sizes.to_vec(), vec![0, 1, 4, 8]);
        // The stages before the scatter carry the count; planned, they are the chain's.
        assert_eq!(desc.before_scatter().unwrap().dynamic_leading, Some(ChainCount::Data));
        let before = p.before_scatter().unwrap();
        assert_eq!((before.data, &before.stages[..]), (p.data, &p.stages[..1]));
        assert_eq!(before.output, *p.stages[0].output());
        assert_eq!(before.output.sizes.to_vec(), vec![PLACEHOLDER, 1, 4, 8]);
        assert!(!before.dynamic_leading);
        // A scatter alone has no stages before it; a chain without one, none to end it.
        let alone = chain(&[3, 4, 8], vec![scatter(GatherForm::Axis, &[16, 4, 8], &[3], None)], None);
        assert!(alone.plan().unwrap().before_scatter().is_none() && alone.before_scatter().is_none());
        let sliced = chain(&[3, 4, 8], vec![window_stage(&[0, 0, 0], &[3, 4, 8], &[1, 1, 1])], None);
        assert!(sliced.plan().unwrap().before_scatter().is_none() && sliced.before_scatter().is_none());
        // Three stages: the first two before it.
        let three = chain(
            &[6, 3, 4, 8],
            vec![
                window_stage(&[0, 0, 0, 0], &[6, 2, 4, 8], &[1, 1, 1, 1]),
                window_stage(&[0, 1, 0, 0], &[6, 1, 4, 8], &[1, 1, 1, 1]),
                scatter(GatherForm::Axis, &[16, 1, 4, 8], &[6], None),
            ],
            None,
        );
        let (p3, d3) = (three.plan().unwrap(), three.before_scatter().unwrap());
        assert_eq!(&p3.before_scatter().unwrap().stages[..], &p3.stages[..2]);
        assert_eq!(p3.before_scatter().unwrap().output, *p3.stages[1].output());
        assert_eq!(&d3.stages[..], &three.stages[..2]);
    }

    #[test]
    fn a_gathered_combine_takes_the_count_of_its_gather() {
        // Rows of an expert's output `[64, 16]` picked by `[_]` ids, added back by token.
        let gather = StageDesc::Gather(GatherStage {
            form: GatherForm::Axis,
            rules: GatherRules::Onnx,
            indices: decl(DType::I32, &[PLACEHOLDER]),
            axis: 0,
            batch_dims: None,
            index_dims: None,
            out_of_range: None,
        });
        let combine = scatter(GatherForm::Axis, &[32, 16], &[PLACEHOLDER], Some(Reduction::Add));
        let desc = chain(&[64, 16], vec![gather, combine], Some(ChainCount::Indices { stage: 1 }));
        let p = desc.plan().unwrap();
        // Neither the experts' rows nor the tokens' destination follow the count.
        common::check_follows_count(&desc, |p: &ChainPlan, t| match t {
            Operand::Data | Operand::Input => Some(p.data.sizes.to_vec()),
            Operand::Output => Some(p.output.sizes.to_vec()),
            _ => None,
        });
        assert!(!desc.follows_count(Operand::Data) && !desc.follows_count(Operand::Output));
        let kernel = |p: &ChainPlan| GatheredRows::of_chain(p).map(|f| f.kernel);
        assert!(kernel(&p).is_some());
        for count in [1, 7, 1000] {
            let at = chain_at(&desc, count).unwrap();
            assert_eq!(scattered(&at).map.indices.sizes.to_vec(), vec![count]);
            assert_eq!(kernel(&at), kernel(&p), "count {count}");
        }
    }

    #[test]
    fn the_count_rules_of_a_final_scatter() {
        let fault_of = |desc: &ChainDesc| match desc.plan() {
            Err(RuleError::Stage { stage, error, .. }) => Some((stage, fault(&error))),
            Err(e) => panic!("a stage's fault: {e:?}"),
            Ok(_) => None,
        };
        // ScatterElements along axis 0 takes the count as its lines' length; along axis 1 the
        // indices' leading size is tied to the data's.
        let elements = chain(
            &[PLACEHOLDER, 8],
            vec![scatter(GatherForm::Elements, &[16, 8], &[PLACEHOLDER, 8], None)],
            Some(ChainCount::Data),
        );
        assert_eq!(fault_of(&elements), None);
        let mut across = scatter(GatherForm::Elements, &[16, 8], &[PLACEHOLDER, 8], None);
        if let StageDesc::Scatter(s) = &mut across {
            s.axis = 1;
        }
        let across = chain(&[PLACEHOLDER, 8], vec![across], Some(ChainCount::Data));
        assert_eq!(fault_of(&across), Some((1, Some(DynamicFault::ElementsAxis { axis: 1 }))));
        // Along axis 1 the count would be the updates' second size.
        let mut across = scatter(GatherForm::Axis, &[16, 8], &[PLACEHOLDER], None);
        if let StageDesc::Scatter(s) = &mut across {
            s.axis = 1;
        }
        let across = chain(&[PLACEHOLDER, 8], vec![across], Some(ChainCount::Data));
        assert_eq!(fault_of(&across), Some((1, Some(DynamicFault::Axis { axis: 1 }))));
        // The stages before it keep the `_` chain's rules: a gather across the count.
        let gather = StageDesc::Gather(GatherStage {
            form: GatherForm::Axis,
            rules: GatherRules::Onnx,
            indices: decl(DType::I32, &[2]),
            axis: 0,
            batch_dims: None,
            index_dims: None,
            out_of_range: None,
        });
        let across_count = chain(
            &[PLACEHOLDER, 8],
            vec![gather, scatter(GatherForm::Axis, &[16, 8], &[PLACEHOLDER], None)],
            Some(ChainCount::Data),
        );
        assert_eq!(fault_of(&across_count), Some((1, Some(DynamicFault::GatherAcrossCount))));
        // Not the last stage: the chain's own rule, before the count's rules of a scatter.
        let not_last = chain(
            &[PLACEHOLDER, 8],
            vec![
                scatter(GatherForm::Elements, &[16, 8], &[PLACEHOLDER, 8], None),
                window_stage(&[0, 0], &[PLACEHOLDER, 8], &[1, 1]),
            ],
            Some(ChainCount::Data),
        );
        let e = not_last.plan().unwrap_err();
        assert!(matches!(e, RuleError::ScatterNotLast { stage: 1, stages: 2 }), "{e:?}");
        // The scatter alone on the data, rows of 8: planned.
        let alone = chain(
            &[PLACEHOLDER, 8],
            vec![scatter(GatherForm::Axis, &[16, 8], &[PLACEHOLDER], Some(Reduction::Add))],
            Some(ChainCount::Data),
        );
        assert_eq!(fault_of(&alone), None);
        let at = chain_at(&alone, 9).unwrap();
        assert_eq!(scattered(&at).updates.sizes.to_vec(), vec![9, 8]);
        // `chain_at` gives a count only to indices that lead with a size: a scalar index (which
        // `plan` refuses under a count) stays as written, the plan of the sizes written.
        let scalar = |count, carrier| {
            chain(&[count, 8], vec![scatter(GatherForm::Axis, &[16, 3, 8], &[], None)], carrier)
        };
        let mut written = scalar(3, None).plan().unwrap();
        written.dynamic_leading = true;
        assert_eq!(chain_at(&scalar(PLACEHOLDER, Some(ChainCount::Data)), 3).unwrap(), written);
    }
}
