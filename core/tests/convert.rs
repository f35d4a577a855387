//! The `convert` stage's rules (docs/rules.md, `convert-*`) and the walk it lowers to, on plain
//! data: no device.

mod common;

use common::{d, window_stage};
use stridex_core::convert::word_rows;
use stridex_core::kernel::Walk;
use stridex_core::*;

fn convert(to: DType, dim: i64, scale: &[f32], offset: &[f32]) -> StageDesc {
    StageDesc::Convert(ConvertStage { to, dim, scale: Channels::of(scale), offset: Channels::of(offset) })
}

fn chain(data: TensorDecl, stages: Vec<StageDesc>, output: Option<OutputDecl>) -> ChainDesc {
    ChainDesc { data, stages: stages.into(), output, dynamic_leading: None }
}

fn stage_error(desc: &ChainDesc) -> RuleError {
    match desc.plan().unwrap_err() {
        RuleError::Stage { error, .. } => *error,
        e => e,
    }
}

#[test]
fn convert_is_the_last_stage() {
    let data = TensorDecl::packed(DType::U8, d(&[4, 3]));
    let early = chain(
        data,
        vec![convert(DType::F32, 1, &[1.0], &[0.0]), window_stage(&[0, 0], &[2, 3], &[1, 1])],
        None,
    );
    assert_eq!(early.plan().unwrap_err(), RuleError::ConvertNotLast { stage: 1, stages: 2 });
    // Alone, it is a chain: the plan's result type is the stage's.
    let alone = chain(data, vec![convert(DType::BF16, -1, &[1.0, 2.0, 3.0], &[0.0])], None).plan().unwrap();
    assert_eq!((alone.data_type, alone.output_type()), (DType::U8, DType::BF16));
    assert_eq!(alone.convert().map(|c| (c.dim, c.channels)), Some((1, 3)));
}

#[test]
fn convert_types() {
    let of = |from: DType, to: DType| {
        chain(TensorDecl::packed(from, d(&[4])), vec![convert(to, 0, &[1.0], &[0.0])], None).plan().map(drop)
    };
    for from in DType::ALL {
        for to in DType::ALL {
            let r = of(from, to);
            let reads = !matches!(from, DType::Bool | DType::F64 | DType::I64 | DType::U64);
            let writes = matches!(to, DType::F32 | DType::F16 | DType::BF16);
            match r {
                Ok(()) => assert!(reads && writes, "{from} -> {to}"),
                Err(RuleError::Stage { error, .. }) => match *error {
                    RuleError::ConvertTo { to: t } => assert!(!writes && t == to),
                    RuleError::ConvertFrom { from: f } => assert!(writes && !reads && f == from),
                    e => panic!("{from} -> {to}: {e}"),
                },
                Err(e) => panic!("{from} -> {to}: {e}"),
            }
        }
    }
    // A declared output has the result's type.
    let data = TensorDecl::packed(DType::U8, d(&[2, 2]));
    let output = OutputDecl { dtype: Some(DType::F32), sizes: d(&[2, 2]), strides: None };
    let desc = chain(data, vec![convert(DType::F16, 0, &[1.0], &[0.0])], Some(output));
    assert_eq!(stage_error(&desc), RuleError::ConvertOutput { to: DType::F16, output: DType::F32 });
}

#[test]
fn convert_channels_and_values() {
    let data = TensorDecl::packed(DType::U8, d(&[2, 3, 4]));
    let at = |dim: i64, scale: &[f32], offset: &[f32]| {
        chain(data, vec![convert(DType::F32, dim, scale, offset)], None)
    };
    assert_eq!(stage_error(&at(3, &[1.0], &[0.0])), RuleError::ConvertDim { dim: 3, rank: 3 });
    assert_eq!(stage_error(&at(-4, &[1.0], &[0.0])), RuleError::ConvertDim { dim: -4, rank: 3 });
    assert_eq!(at(-2, &[1.0, 2.0, 3.0], &[0.5]).plan().unwrap().convert().unwrap().dim, 1);
    assert_eq!(
        stage_error(&at(1, &[1.0, 2.0], &[0.0])),
        RuleError::ConvertChannels { key: ConvertKey::Scale, given: 2, dim: 1, size: 3 }
    );
    // Messages name the list by its key.
    assert!(stage_error(&at(1, &[1.0, 2.0], &[0.0]))
        .to_string()
        .starts_with("convert: `scale` has 2 values"));
    assert!(stage_error(&at(1, &[1.0], &[0.0, 1.0]))
        .to_string()
        .starts_with("convert: `offset` has 2 values"));
    assert_eq!(
        stage_error(&at(2, &[1.0], &[0.0; 3])),
        RuleError::ConvertChannels { key: ConvertKey::Offset, given: 3, dim: 2, size: 4 }
    );
    let wide = chain(
        TensorDecl::packed(DType::U8, d(&[17])),
        vec![convert(DType::F32, 0, &[1.0; 17], &[0.0])],
        None,
    );
    assert_eq!(
        stage_error(&wide),
        RuleError::ConvertManyChannels { key: ConvertKey::Scale, given: 17, max: 16 }
    );
    let nan = at(0, &[1.0, f32::NAN], &[0.0]);
    assert_eq!(
        stage_error(&nan),
        RuleError::ConvertValue { key: ConvertKey::Scale, index: 1, bits: f32::NAN.to_bits() }
    );
    // A scalar takes one value each, whatever `dim` says.
    let scalar =
        chain(TensorDecl::packed(DType::I8, d(&[])), vec![convert(DType::F32, 5, &[2.0], &[1.0])], None);
    assert_eq!(scalar.plan().unwrap().convert().unwrap().channels, 1);
}

/// Each channel's scale and offset as the kernel takes them: a list of one value serves every
/// channel, a list of one per channel gives each its own; the lists print as their values, with
/// the count given past the sixteen kept.
#[test]
fn channel_values_reach_the_plan() {
    let data = TensorDecl::packed(DType::U8, d(&[2, 3, 4]));
    let plan = chain(data, vec![convert(DType::F32, 1, &[0.5, 0.25, -2.0], &[1.5])], None).plan().unwrap();
    let c = plan.convert().unwrap();
    let got: Vec<(f32, f32)> = (0..3).map(|ch| c.channel(ch)).collect();
    assert_eq!(got, [(0.5, 1.5), (0.25, 1.5), (-2.0, 1.5)]);
    let both =
        chain(data, vec![convert(DType::F16, -1, &[3.0], &[-1.0, 0.0, 2.0, 4.5])], None).plan().unwrap();
    let c = both.convert().unwrap();
    let got: Vec<(f32, f32)> = (0..4).map(|ch| c.channel(ch)).collect();
    assert_eq!(got, [(3.0, -1.0), (3.0, 0.0), (3.0, 2.0), (3.0, 4.5)]);
    assert!(Channels::of(&[]).is_empty() && !Channels::of(&[0.0]).is_empty());
    assert_eq!(format!("{:?}", Channels::of(&[0.5, -2.0])), "[0.5, -2.0]");
    let many: Vec<f32> = (0..17).map(|v| v as f32).collect();
    assert!(format!("{:?}", Channels::of(&many)).ends_with("15.0] (of 17)"));
    assert!(!format!("{:?}", Channels::of(&many[..16])).contains("(of"));
}

/// The plan's own checks at their edges: sixteen values per list are kept (seventeen are
/// refused above); a scalar given a list names no channel dimension; a 16-bit result whose rows
/// split words is refused, and the same layout is fine for f32 and for an empty result.
#[test]
fn convert_plans_at_their_edges() {
    let sixteen: Vec<f32> = (0..16).map(|v| v as f32).collect();
    let wide =
        chain(TensorDecl::packed(DType::U8, d(&[16])), vec![convert(DType::F32, 0, &sixteen, &[0.0])], None);
    assert_eq!(wide.plan().unwrap().convert().unwrap().channels, 16);
    let scalar =
        chain(TensorDecl::packed(DType::U8, d(&[])), vec![convert(DType::F32, 0, &[1.0, 2.0], &[0.0])], None);
    assert_eq!(stage_error(&scalar), RuleError::ConvertDim { dim: 0, rank: 0 });
    // Rows of 5 elements 7 apart: no row pairs into whole 32-bit words.
    let split = |to: DType, sizes: &[usize]| {
        let output = OutputDecl { dtype: None, sizes: d(sizes), strides: Some(d(&[7, 1])) };
        chain(TensorDecl::packed(DType::U8, d(sizes)), vec![convert(to, 1, &[1.0], &[0.0])], Some(output))
    };
    for to in [DType::F16, DType::BF16] {
        assert_eq!(stage_error(&split(to, &[3, 5])), RuleError::ConvertWords { to, strides: vec![7, 1] });
        assert!(split(to, &[0, 5]).plan().is_ok());
    }
    assert!(split(DType::F32, &[3, 5]).plan().is_ok());
}

#[test]
fn sixteen_bit_rows_are_whole_words() {
    let rows = |sizes: &[usize], strides: &[usize], lead: bool| {
        word_rows(&TensorLayout { sizes: d(sizes), strides: d(strides) }, lead)
    };
    assert_eq!(rows(&[3, 224, 224], &[50176, 224, 1], false), Some(1));
    // Channels last: rows of W * C, even.
    assert_eq!(rows(&[224, 224, 3], &[672, 3, 1], false), Some(2));
    // Odd and packed: the whole output is one row.
    assert_eq!(rows(&[3, 5], &[5, 1], false), Some(2));
    assert_eq!(rows(&[3, 5], &[7, 1], false), None);
    assert_eq!(rows(&[4, 5], &[1, 4], false), Some(1));
    assert_eq!(rows(&[5, 4], &[2, 10], false), None);
    // A count's dimension never joins a row: 15 elements per count cannot be whole words.
    assert_eq!(rows(&[2, 3, 5], &[15, 5, 1], true), None);
    assert_eq!(rows(&[2, 3, 4], &[12, 4, 1], true), Some(1));
    assert_eq!(rows(&[1, 1], &[1, 1], false), Some(0));
    // An innermost stride past 1, even with even rows: elements between them are not its own.
    assert_eq!(rows(&[4], &[2], false), None);
    // Odd rows whose outer strides are even still split words; three packed dimensions join.
    assert_eq!(rows(&[3, 5], &[6, 1], false), None);
    assert_eq!(rows(&[2, 3, 5], &[15, 5, 1], false), Some(3));
    // A count's dimension stays apart even where its stride would join the row.
    assert_eq!(rows(&[2, 5], &[5, 1], true), None);
}

/// The walk: channels picked per row or per element, tiles dividing rows, 16-bit tiles of whole
/// words, and reads per row or per element.
#[test]
fn the_convert_walk() {
    let walk = |desc: &ChainDesc| match ChainKernelDesc::new(&desc.plan().unwrap()).unwrap().unwrap().walk {
        Walk::Convert(w) => w,
        w => panic!("{w:?}"),
    };
    let nchw = chain(
        TensorDecl::packed(DType::U8, d(&[2, 3, 8, 6])),
        vec![convert(DType::F32, 1, &[1.0; 3], &[0.0])],
        None,
    );
    let w = walk(&nchw);
    assert_eq!((w.row_len, w.tile, w.channels, w.channel_in_row()), (6, 2, 3, false));
    assert_eq!(w.invocations, 2 * 3 * 8 * 3);
    let nhwc = chain(
        TensorDecl::packed(DType::U8, d(&[8, 6, 3])),
        vec![convert(DType::F16, -1, &[1.0; 3], &[0.0])],
        None,
    );
    let w = walk(&nhwc);
    assert_eq!((w.inner.len(), w.row_len, w.tile, w.channel_in_row()), (2, 18, 2, true));
    assert_eq!((w.src_words, w.out_words), (36, 72));
    // One channel: no channel dimension at all.
    let one = chain(
        TensorDecl::packed(DType::F32, d(&[4, 3])),
        vec![convert(DType::BF16, 1, &[2.0], &[1.0])],
        None,
    );
    assert!(walk(&one).outer.iter().chain(&walk(&one).inner).all(|d| !d.channel));
    // A gather along the rows reads per element; one along the outer dimension per row.
    let gather = |axis: i64| {
        chain(
            TensorDecl::packed(DType::U8, d(&[4, 8])),
            vec![
                StageDesc::Gather(common::gather_stage(GatherRules::Onnx, DType::I32, &[3], axis)),
                convert(DType::F32, 0, &[1.0], &[0.0]),
            ],
            None,
        )
    };
    assert!(walk(&gather(1)).reads[0].per_element);
    assert!(!walk(&gather(0)).reads[0].per_element);
}

/// The convert walk's stores and units: vectors of 4 or 2 words where every tile starts on one
/// and rows are packed in the output, single words otherwise; i64 index reads step two words.
#[test]
fn the_convert_walk_stores_whole_vectors_where_tiles_allow() {
    let walk = |desc: &ChainDesc| match ChainKernelDesc::new(&desc.plan().unwrap()).unwrap().unwrap().walk {
        Walk::Convert(w) => w,
        w => panic!("{w:?}"),
    };
    let summary = |desc: &ChainDesc| {
        let w = walk(desc);
        (w.row_len, w.tile, w.line, w.out_lanes(), w.line_elems(), w.invocations)
    };
    let to = |from: DType, sizes: &[usize], to: DType, output: Option<OutputDecl>| {
        chain(TensorDecl::packed(from, d(sizes)), vec![convert(to, 0, &[1.0], &[0.0])], output)
    };
    for (desc, expected) in [
        (to(DType::U8, &[4, 32], DType::F32, None), (32, 16, 4, 1, 4, 8)),
        (to(DType::U8, &[4, 8], DType::F16, None), (8, 8, 4, 2, 8, 4)),
        (to(DType::U8, &[2, 3, 8, 6], DType::F32, None), (6, 2, 2, 1, 2, 144)),
        (to(DType::U8, &[4, 6], DType::BF16, None), (6, 2, 1, 2, 2, 12)),
        (to(DType::U8, &[5, 3], DType::F32, None), (3, 1, 1, 1, 1, 15)),
        (to(DType::F32, &[], DType::F32, None), (1, 1, 1, 1, 1, 1)),
        // Rows two elements apart in the output: one word a store.
        (
            to(
                DType::U8,
                &[4, 8],
                DType::F32,
                Some(OutputDecl { dtype: None, sizes: d(&[4, 8]), strides: Some(d(&[16, 2])) }),
            ),
            (8, 8, 1, 1, 1, 4),
        ),
    ] {
        assert_eq!(summary(&desc), expected, "{desc:?}");
    }
    // An i64 index is two words: a gather along the rows steps its reads by two a position.
    let gather = |index: DType| {
        chain(
            TensorDecl::packed(DType::U8, d(&[4, 8])),
            vec![
                StageDesc::Gather(common::gather_stage(GatherRules::Onnx, index, &[3], 1)),
                convert(DType::F32, 0, &[1.0], &[0.0]),
            ],
            None,
        )
    };
    let reads = |index| walk(&gather(index)).inner.iter().map(|d| d.reads[0]).collect::<Vec<_>>();
    assert_eq!((reads(DType::I32), reads(DType::I64)), (vec![1], vec![2]));
}

/// A `_` chain's convert walk moved to a count is the walk planned at that count: its leading
/// size, invocations and buffer lengths.
#[test]
fn a_counted_convert_walk_moves_to_each_count() {
    let walk = |p: &ChainPlan| match ChainKernelDesc::new(p).unwrap().unwrap().walk {
        Walk::Convert(w) => w,
        w => panic!("{w:?}"),
    };
    let counted = ChainDesc {
        dynamic_leading: Some(ChainCount::Data),
        ..chain(
            TensorDecl::packed(DType::U8, d(&[dynamic::PLACEHOLDER, 4, 8])),
            vec![convert(DType::F16, 1, &[1.0, 2.0, 3.0, 4.0], &[0.0])],
            None,
        )
    };
    let placeholder = walk(&counted.plan().unwrap());
    for count in [1, 3, 1000] {
        let p = dynamic::chain_at(&counted, count).unwrap();
        let moved = placeholder.with_count(count, &p.data, &p.output).unwrap();
        let at = walk(&p);
        assert_eq!(
            (moved.outer[0].size, moved.invocations, moved.src_words, moved.out_words),
            (count as u32, at.invocations, at.src_words, at.out_words),
            "count {count}"
        );
        assert_eq!(moved.invocations, count as u32 * 4 * 8 / moved.tile);
        assert_eq!(moved.specialized(), placeholder.specialized());
    }
}

/// A gather whose index position comes from a later gather's value reads per element where that
/// value does, and its index offsets (the dependency, a slice's start) count i64's two words.
#[test]
fn dependent_reads_follow_the_read_they_depend_on() {
    let walk = |desc: &ChainDesc| match ChainKernelDesc::new(&desc.plan().unwrap()).unwrap().unwrap().walk {
        Walk::Convert(w) => w,
        w => panic!("{w:?}"),
    };
    // Stage 1 gathers along axis 1 with indices [5, 2]; stage 2 picks along the indices' second
    // dimension: stage 1's index position is stage 2's value.
    let twice = |index: DType, data: &[usize], tail: Vec<StageDesc>| {
        let mut stages = vec![
            StageDesc::Gather(common::gather_stage(GatherRules::Onnx, index, &[5, 2], 1)),
            StageDesc::Gather(common::gather_stage(GatherRules::Onnx, index, &[3], 2)),
        ];
        stages.extend(tail);
        stages.push(convert(DType::F32, 0, &[1.0], &[0.0]));
        chain(TensorDecl::packed(DType::U8, d(data)), stages, None)
    };
    // The picked dimension is the row's: both reads per element.
    let w = walk(&twice(DType::I64, &[4, 8], vec![]));
    assert_eq!(w.reads.iter().map(|r| r.per_element).collect::<Vec<_>>(), [true, true]);
    // Rows of 16 after it: neither is.
    let w = walk(&twice(DType::I64, &[4, 8, 16], vec![]));
    assert_eq!(w.reads.iter().map(|r| r.per_element).collect::<Vec<_>>(), [false, false]);
    // The dependency, and a slice's start in the indices, in index words.
    let deps = |index| walk(&twice(index, &[4, 8, 16], vec![])).reads[1].deps[0];
    assert_eq!(deps(DType::I64), 2 * deps(DType::I32));
    assert_ne!(deps(DType::I32), 0);
    let sliced = |index| {
        let slice = window_stage(&[0, 1, 0, 0], &[4, 4, 3, 16], &[1, 1, 1, 1]);
        walk(&twice(index, &[4, 8, 16], vec![slice])).reads.iter().map(|r| r.base).collect::<Vec<_>>()
    };
    let (narrow, wide) = (sliced(DType::I32), sliced(DType::I64));
    assert!(narrow.iter().any(|&b| b != 0), "{narrow:?}");
    assert_eq!(wide, narrow.iter().map(|b| 2 * b).collect::<Vec<_>>());
}

/// A `_` chain's convert names channels off the count's dimension (0, or `-rank`), unless its
/// scale and offset hold one value each: one per channel would be one per count.
#[test]
fn a_counted_convert_takes_no_channels_along_the_count() {
    let counted = |dim: i64, scale: &[f32], offset: &[f32]| ChainDesc {
        dynamic_leading: Some(ChainCount::Data),
        ..chain(
            TensorDecl::packed(DType::F32, d(&[dynamic::PLACEHOLDER, 4])),
            vec![convert(DType::F16, dim, scale, offset)],
            None,
        )
    };
    let fault = |desc: ChainDesc| match desc.plan() {
        Ok(_) => None,
        Err(RuleError::Stage { error, .. }) => match *error {
            RuleError::Dynamic { fault, .. } => Some(fault),
            e => panic!("{e:?}"),
        },
        Err(e) => panic!("{e:?}"),
    };
    let along = Some(DynamicFault::ConvertCount);
    assert_eq!(fault(counted(0, &[1.0, 2.0], &[0.0])), along);
    assert_eq!(fault(counted(-2, &[1.0, 2.0], &[0.0])), along);
    assert_eq!(fault(counted(0, &[1.0], &[0.5, 0.25])), along);
    assert_eq!(fault(counted(0, &[2.0], &[0.5])), None);
    assert_eq!(fault(counted(1, &[1.0, 2.0, 3.0, 4.0], &[0.0])), None);
    assert_eq!(fault(counted(-1, &[1.0, 2.0, 3.0, 4.0], &[0.5])), None);
}
