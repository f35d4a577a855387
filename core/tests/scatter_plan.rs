//! A scatter's plan on the host: the kernel's unit (16-byte vectors where every run is whole
//! aligned 16-byte blocks, as an embedding's rows and a KV cache's are, narrower where a run or a
//! stride is not) and the grouping of many writes (radix and comparison sorts) against a naive one.

mod common;

use common::generate::{self, Rng};
use common::reference::{self as r, Outcome};
use common::scatter::{decl, index_words, reduce, strided, DRAWN_REDUCTIONS};
use std::collections::BTreeMap;
use stridex_core::kernel::{ScatterKernelDesc, ScatterLinesDesc};
use stridex_core::{
    DType, Dims, GatherDesc, GatherForm, GatherRules, Reduction, ScatterDesc, ScatterFault, ScatterGroups,
    TensorDecl,
};

/// (vector, run, tile) of the kernel writing the packed output of a scatter along axis 0.
fn unit(dtype: DType, data: &[usize], ids: usize) -> (u32, u32, u32) {
    let mut updates = vec![ids];
    updates.extend(&data[1..]);
    let desc = ScatterDesc::new(
        GatherForm::Axis,
        GatherRules::OpenVino,
        decl(dtype, data),
        decl(DType::I32, &[ids]),
        decl(dtype, &updates),
        0,
    );
    let plan = desc.plan().unwrap();
    let k = ScatterKernelDesc::of(&plan, &plan.output).unwrap();
    (k.vector, k.run, k.tile)
}

#[test]
fn whole_aligned_blocks_move_as_vectors() {
    // An embedding's f32 rows of 1024: 256 vectors of 4 words, four per invocation.
    assert_eq!(unit(DType::F32, &[32000, 1024], 16384), (4, 256, 4));
    // f16 rows of 8 x 128: 128 vectors.
    assert_eq!(unit(DType::F16, &[64, 8, 128], 4), (4, 128, 4));
    // Rows of 6 f32: 8-byte blocks are the widest that every row starts on; 3 of them take
    // one invocation each.
    assert_eq!(unit(DType::F32, &[10, 6], 3), (2, 3, 1));
    // Rows of 3 f32 and of 6 f16: single words.
    assert_eq!(unit(DType::F32, &[10, 3], 3), (1, 3, 1));
    assert_eq!(unit(DType::F16, &[10, 6], 3), (1, 3, 1));
    // f64 rows of 3: one element is two words; of 4: two elements per vector, both vectors
    // in one invocation.
    assert_eq!(unit(DType::F64, &[10, 3], 3), (2, 3, 1));
    assert_eq!(unit(DType::F64, &[10, 4], 3), (4, 2, 2));
    // u8 rows of 16: one vector.
    assert_eq!(unit(DType::U8, &[10, 16], 3), (4, 1, 1));
}

/// (vector, run, tile, units of the innermost dimension) of a scatter along axis 1 of f32
/// `[4, 10, inner]`.
fn along_axis_1(inner: usize) -> (u32, u32, u32, u32) {
    let desc = ScatterDesc::new(
        GatherForm::Axis,
        GatherRules::OpenVino,
        decl(DType::F32, &[4, 10, inner]),
        decl(DType::I32, &[3]),
        decl(DType::F32, &[4, 3, inner]),
        1,
    );
    let plan = desc.plan().unwrap();
    let k = ScatterKernelDesc::of(&plan, &plan.output).unwrap();
    (k.vector, k.run, k.tile, k.inner)
}

/// A tile never leaves the innermost dimension: a run of `[4, 10, 8]` along axis 1 is 4 rows
/// of 2 vectors, 20 vectors apart in the output, so a tile is one row's 2; rows of 6 are 3
/// 8-byte units, which no wider tile divides.
#[test]
fn tiles_stay_in_the_packed_innermost_dimension() {
    assert_eq!(along_axis_1(8), (4, 8, 2, 2));
    assert_eq!(along_axis_1(6), (2, 12, 1, 3));
    assert_eq!(along_axis_1(16), (4, 16, 4, 4));
}

/// Ids into rows, each row's list holding its ids' positions in order, by both sorts: radix
/// (300000 ids into 70000 rows and 70000 into 10^6: two passes, keys past 2^16; 300000 into
/// 50 rows: one) and comparison (5000 ids into 70000 rows).
#[test]
fn many_writes_group_in_order() {
    for (rows, n) in [(70_000usize, 300_000usize), (50, 300_000), (1_000_000, 70_000), (70_000, 5_000)] {
        let plan =
            summing(GatherForm::Axis, GatherRules::OpenVino, &[rows, 2], &[n], &[n, 2], 0).plan().unwrap();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let ids: Vec<i128> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % rows as u64) as i128
            })
            .collect();
        let groups = plan.group(&plan.output, |i| ids[i]).unwrap();
        let mut naive: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (p, &id) in ids.iter().enumerate() {
            naive.entry(id as u32 * 2).or_default().push(p as u32 * 2);
        }
        assert_eq!(groups.keys, naive.keys().copied().collect::<Vec<_>>());
        let lists: Vec<Vec<u32>> =
            groups.starts.windows(2).map(|w| groups.members[w[0] as usize..w[1] as usize].to_vec()).collect();
        assert_eq!(lists, naive.into_values().collect::<Vec<_>>());
    }
}

/// f16 ScatterElements: the lists group by destination word, each member the update's element
/// with its lane; each element's own updates stay in order, under `none` its last alone.
#[test]
fn single_narrow_elements_group_by_word() {
    let desc = ScatterDesc::new(
        GatherForm::Elements,
        GatherRules::Onnx,
        decl(DType::F16, &[2, 4]),
        decl(DType::I64, &[2, 3]),
        decl(DType::F16, &[2, 3]),
        1,
    );
    let plan = desc.plan().unwrap();
    assert!(plan.lane_words());
    let ids = [1i128, 0, 1, 3, 3, 2];
    let groups = plan.group(&plan.output, |i| ids[i]).unwrap();
    // Row 0 writes elements 1, 0, 1 (word 0); row 1 writes 7, 7, 6 (word 3); under `none`
    // element 1 keeps position 2 and element 7 position 4.
    assert_eq!(groups.keys, [0, 3]);
    assert_eq!(groups.members, [1 << 2, (2 << 2) | 1, 5 << 2, (4 << 2) | 1]);
    assert_eq!(groups.starts, [0, 2, 4]);
    let k = ScatterKernelDesc::of(&plan, &plan.output).unwrap();
    assert!(k.lane_words && k.run == 1 && k.vector == 1 && k.lanes == 2);
}

/// Under `none`, the positions a later write to the same destination replaces, as offsets
/// of their index elements: along an axis (a negative id naming a row written by a positive
/// one; an id past the end under `zero` writes nothing), and in GatherND tuples (the tuple's
/// first component).
#[test]
fn replaced_writes_are_the_earlier_ones_to_a_destination() {
    let mut desc = ScatterDesc::new(
        GatherForm::Axis,
        GatherRules::OpenVino,
        decl(DType::F32, &[5, 3]),
        decl(DType::I32, &[6]),
        decl(DType::F32, &[6, 3]),
        0,
    );
    desc.map.out_of_range = Some(stridex_core::OutOfRange::Zero);
    let plan = desc.plan().unwrap();
    let ids: [i128; 6] = [2, 0, 2, -5, 9, 9];
    assert_eq!(plan.replaced(&plan.output, |i| ids[i]).unwrap(), vec![0, 1]);

    let nd = ScatterDesc::new(
        GatherForm::Nd,
        GatherRules::OpenVino,
        decl(DType::F32, &[3, 4]),
        decl(DType::I64, &[3, 2]),
        decl(DType::F32, &[3]),
        0,
    );
    let plan = nd.plan().unwrap();
    let tuples: [i128; 6] = [1, 2, 0, 0, 1, 2];
    assert_eq!(plan.replaced(&plan.output, |i| tuples[i]).unwrap(), vec![0]);
}

/// `mean` and `use_init_val` are OpenVINO ScatterElementsUpdate-12's alone (docs/rules.md,
/// `scatter-reduction`, `scatter-use-init-val`); the kernel sums a mean and divides it.
#[test]
fn means_and_the_data_left_out_are_scatter_elements_update_12s() {
    use stridex_core::RuleError;
    let elements = |rules, dtype, reduction, use_init_val| {
        let mut desc = ScatterDesc::new(
            GatherForm::Elements,
            rules,
            decl(dtype, &[4, 2]),
            decl(DType::I64, &[3, 2]),
            decl(dtype, &[3, 2]),
            0,
        );
        desc.reduction = Some(reduction);
        desc.use_init_val = use_init_val;
        desc.plan()
    };
    let plan = elements(GatherRules::OpenVino, DType::I32, Reduction::Mean, Some(false)).unwrap();
    assert!(!plan.use_init_val);
    let k = ScatterKernelDesc::of(&plan, &plan.output).unwrap();
    assert_eq!((k.reduction, k.mean, k.use_init_val), (Reduction::Add, true, false));
    assert!(elements(GatherRules::OpenVino, DType::F32, Reduction::Max, None).unwrap().use_init_val);
    for rules in [GatherRules::Onnx, GatherRules::DirectMl] {
        let err = elements(rules, DType::F32, Reduction::Mean, None).unwrap_err();
        assert!(matches!(err, RuleError::ReductionNotAllowed { reduction: Reduction::Mean, .. }), "{err}");
        let err = elements(rules, DType::F32, Reduction::None, Some(true)).unwrap_err();
        assert!(matches!(err, RuleError::UseInitValNotAllowed { .. }), "{err}");
    }
    let err = elements(GatherRules::OpenVino, DType::Bool, Reduction::Mean, None).unwrap_err();
    assert!(err.to_string().contains("a mean (ScatterElementsUpdate-12)"), "{err}");
    // ScatterNDUpdate-15 has no such attribute.
    let mut nd = ScatterDesc::new(
        GatherForm::Nd,
        GatherRules::OpenVino,
        decl(DType::F32, &[4, 2]),
        decl(DType::I64, &[3, 1]),
        decl(DType::F32, &[3, 2]),
        0,
    );
    nd.use_init_val = Some(false);
    assert!(matches!(nd.plan(), Err(RuleError::UseInitValNotAllowed { op: "OpenVINO ScatterNDUpdate-15" })));
}

/// A gather's gradient along axis 0 (an embedding's) writes runs that lie back to back in the
/// data: one kernel can write each of them, the ones no id names as zeros. Along axis 1, or
/// element by element, they do not.
#[test]
fn embedding_gradients_write_every_run_back_to_back() {
    let axis_0 = |dtype, data: &[usize], ids: &[usize], updates: &[usize]| {
        let mut desc = ScatterDesc::new(
            GatherForm::Axis,
            GatherRules::OpenVino,
            decl(dtype, data),
            decl(DType::I32, ids),
            decl(dtype, updates),
            0,
        );
        desc.reduction = Some(Reduction::Add);
        desc.plan().unwrap()
    };
    // Ids [[3, 0], [3, 5]] into 6 rows of [2, 2]: rows 0, 3 (twice) and 5 written.
    let plan = axis_0(DType::F32, &[6, 2, 2], &[2, 2], &[2, 2, 2, 2]);
    assert_eq!(plan.back_to_back_runs(&plan.output), Some(6));
    let ids = [3i128, 0, 3, 5];
    let groups = plan.group(&plan.output, |i| ids[i]).unwrap();
    let every = groups.every_run(6, plan.run_len() / plan.lanes()).unwrap();
    assert_eq!(every, [0, 1, 1, 1, 3, 3, 4]);
    assert_eq!(groups.members, [4, 0, 8, 12]);
    // Its kernel sums into zeros: 6 runs of one 16-byte vector cover the 24 words.
    let (k, runs) = ScatterKernelDesc::summing_into_zeros(&plan, &plan.output).unwrap();
    assert!(k.into_zeros && k.every_run && runs == 6 && k.run * k.vector == 4, "{k:?}");
    // Rows of 8 f32: two 16-byte vectors each, 4 runs covering the 32 words.
    let rows = axis_0(DType::F32, &[4, 8], &[3], &[3, 8]);
    let (k, runs) = ScatterKernelDesc::summing_into_zeros(&rows, &rows.output).unwrap();
    assert!(runs == 4 && (k.run, k.vector) == (2, 4), "{k:?}");
    // Only a sum that starts from the data's element: not a max, not OpenVINO's sum that
    // leaves the data out (`use_init_val: false`; 1-D ScatterElements, whose runs lie back to
    // back as an embedding's rows do).
    let mut max = summing(GatherForm::Axis, GatherRules::OpenVino, &[6, 4], &[2], &[2, 4], 0);
    max.reduction = Some(Reduction::Max);
    let max = max.plan().unwrap();
    assert_eq!(max.back_to_back_runs(&max.output), Some(6));
    assert_eq!(ScatterKernelDesc::summing_into_zeros(&max, &max.output), None);
    let mut left_out = summing(GatherForm::Elements, GatherRules::OpenVino, &[8], &[8], &[8], 0);
    left_out.use_init_val = Some(true);
    let sum = left_out.plan().unwrap();
    assert!(ScatterKernelDesc::summing_into_zeros(&sum, &sum.output).is_some());
    left_out.use_init_val = Some(false);
    let left_out = left_out.plan().unwrap();
    assert_eq!(ScatterKernelDesc::summing_into_zeros(&left_out, &left_out.output), None);
    // No id at all: every run's list is empty.
    let none = plan
        .group(&plan.output, |_| 0)
        .map(|g| ScatterGroups { keys: vec![], starts: vec![0], ..g })
        .unwrap();
    assert_eq!(none.every_run(6, 4).unwrap(), [0; 7]);
    // Lists that are not whole runs in order are refused.
    assert_eq!(groups.every_run(6, 3), None);
    assert_eq!(groups.every_run(5, 4), None);
    let swapped = ScatterGroups { keys: vec![12, 0, 20], ..groups.clone() };
    assert_eq!(swapped.every_run(6, 4), None);
    let back = ScatterGroups { keys: vec![12, 4, 20], ..groups.clone() };
    assert_eq!(back.every_run(6, 4), None, "run 1 after run 3");
    assert_eq!(groups.every_run(6, 0), None, "runs of no key");
    // f16 rows of 4 are 2 words each.
    let plan = axis_0(DType::F16, &[3, 4], &[2], &[2, 4]);
    assert_eq!(plan.back_to_back_runs(&plan.output), Some(3));
    // f16 rows of 3 are not whole words: with no index at all the plan passes (nothing is
    // written), but its runs are refused (a kernel of word units would miss halfwords).
    let plan = axis_0(DType::F16, &[10, 3], &[0], &[0, 3]);
    assert_eq!(plan.back_to_back_runs(&plan.output), None);
    assert_eq!(ScatterKernelDesc::summing_into_zeros(&plan, &plan.output), None);
    // Along axis 1, and ScatterElements' single elements: runs interleave.
    let plan = summing(GatherForm::Axis, GatherRules::OpenVino, &[2, 6], &[3], &[2, 3], 1).plan().unwrap();
    assert_eq!(plan.back_to_back_runs(&plan.output), None);
    let desc = ScatterDesc::new(
        GatherForm::Elements,
        GatherRules::Onnx,
        decl(DType::F32, &[4, 2]),
        decl(DType::I64, &[4, 2]),
        decl(DType::F32, &[4, 2]),
        0,
    );
    let plan = desc.plan().unwrap();
    assert_eq!(plan.back_to_back_runs(&plan.output), None);
}

/// A sum of f32 updates by i64 indices.
fn summing(
    form: GatherForm,
    rules: GatherRules,
    data: &[usize],
    ids: &[usize],
    updates: &[usize],
    axis: i64,
) -> ScatterDesc {
    let mut desc = ScatterDesc::new(
        form,
        rules,
        decl(DType::F32, data),
        decl(DType::I64, ids),
        decl(DType::F32, updates),
        axis,
    );
    desc.reduction = Some(Reduction::Add);
    desc
}

/// Where the device may group a scatter's lists (`ScatterGroupingDesc`): one index per position
/// naming a run of runs back to back, packed indices and updates, and not `duplicates: error`.
#[test]
fn the_device_groups_runs_that_lie_back_to_back() {
    use stridex_core::kernel::ScatterGroupingDesc;
    use stridex_core::{Duplicates, IndexType, OutOfRange};
    let scatter = summing;
    // An embedding's gradient: 16384 ids into 32000 rows of 1024.
    let desc = scatter(GatherForm::Axis, GatherRules::OpenVino, &[32000, 1024], &[16384], &[16384, 1024], 0);
    let plan = desc.plan().unwrap();
    let d = ScatterGroupingDesc::of(&plan, &plan.output).unwrap();
    assert_eq!((d.positions, d.runs, d.member_step), (16384, 32000, 1024));
    // The runs' scan, in a cube of 256 units, 125 counts each; the sort in 64 blocks of 256
    // positions, two 8-bit digits for keys up to 32000, its histograms of 256 * 64 counts
    // scanned 64 to a unit.
    assert_eq!((d.runs_scan.len, d.runs_scan.stretch(256)), (32000, 125));
    assert_eq!((d.block, d.blocks, d.digits), (256, 64, 2));
    assert_eq!((d.digits_scan.len, d.digits_scan.stretch(256)), (16384, 64));
    assert_eq!((d.index.index_type, d.index.index_words, d.index.axis_size), (IndexType::I64, 2, 32000));
    // OpenVINO's `zero`: the read drops an index out of range; no check first.
    assert_eq!((d.index.policy, d.check), (OutOfRange::Zero, None));
    // ONNX ScatterND of 1-tuples, under `error`: checked on the device first, then read as
    // in range (`error` kept in the read: normalized and bounded, with no range test).
    let desc = scatter(GatherForm::Nd, GatherRules::Onnx, &[40, 8], &[300, 1], &[300, 8], 0);
    let plan = desc.plan().unwrap();
    let d = ScatterGroupingDesc::of(&plan, &plan.output).unwrap();
    assert_eq!(
        (d.positions, d.runs, d.member_step, d.runs_scan.len, d.runs_scan.stretch(256)),
        (300, 40, 8, 40, 1)
    );
    // One digit for keys up to 40, in two blocks.
    assert_eq!((d.blocks, d.digits), (2, 1));
    assert_eq!((d.index.policy, d.check.map(|(_, n)| n)), (OutOfRange::Error, Some(300)));
    // Pairs of ND indices, a ScatterElements, a scatter along axis 1 and `duplicates: error`
    // keep the host's lists.
    let pairs = scatter(GatherForm::Nd, GatherRules::Onnx, &[40, 8, 4], &[30, 2], &[30, 4], 0);
    let elements = scatter(GatherForm::Elements, GatherRules::Onnx, &[40, 8], &[40, 8], &[40, 8], 0);
    let columns = scatter(GatherForm::Axis, GatherRules::OpenVino, &[40, 8], &[3], &[40, 3], 1);
    let mut repeats = scatter(GatherForm::Axis, GatherRules::OpenVino, &[40, 8], &[30], &[30, 8], 0);
    repeats.duplicates = Some(Duplicates::Error);
    repeats.reduction = None;
    for desc in [pairs, elements, columns, repeats] {
        let plan = desc.plan().unwrap();
        assert_eq!(ScatterGroupingDesc::of(&plan, &plan.output), None, "{}", plan.op);
    }
}

/// Under `skip`, a kernel that reads its indices on the device reads 32-bit signed ones as
/// unsigned, so that a negative one is past the end: only true of an axis of at most 2^31
/// rows. A longer one (12 GB of f32 rows here) keeps the host's lists, which drop a negative
/// index by its value; 64-bit indices (at least 2^63 as unsigned) and shorter axes read on
/// the device.
#[test]
fn skip_reads_signed_32_bit_indices_on_the_device_only_where_negatives_are_past_the_end() {
    use stridex_core::kernel::ScatterRowsDesc;
    use stridex_core::OutOfRange;
    let rows = |axis: usize, index_type: DType| {
        let mut desc = ScatterDesc::new(
            GatherForm::Axis,
            GatherRules::OpenVino,
            decl(DType::F32, &[axis, 1]),
            decl(index_type, &[2]),
            decl(DType::F32, &[2, 1]),
            0,
        );
        desc.map.out_of_range = Some(OutOfRange::Skip);
        let plan = desc.plan().unwrap();
        ScatterRowsDesc::of(&plan, &plan.map.data).map(|k| k.index.index_type)
    };
    let (long, longest_signed) = (3_000_000_000, i32::MAX as usize);
    assert_eq!(rows(long, DType::I32), None);
    assert_eq!(rows(longest_signed, DType::I32), Some(stridex_core::IndexType::U32));
    assert_eq!(rows(long, DType::I64), Some(stridex_core::IndexType::U64));
    // The host's lists drop the negative index and keep the one in range.
    let mut desc = ScatterDesc::new(
        GatherForm::Axis,
        GatherRules::OpenVino,
        decl(DType::F32, &[long, 1]),
        decl(DType::I32, &[2]),
        decl(DType::F32, &[2, 1]),
        0,
    );
    desc.map.out_of_range = Some(OutOfRange::Skip);
    let plan = desc.plan().unwrap();
    let values = [-2_000_000_000i128, 7];
    let groups = plan.group(&plan.map.data, |i| values[i]).unwrap();
    assert_eq!((groups.keys, groups.members), (vec![7], vec![1]));
}

/// Empty scatters whose other sizes multiply past `usize`: every size a plan and its kernels
/// take is a product of user numbers, looked at for a zero first, never an overflow (a debug
/// build panics on one).
#[test]
fn empty_scatters_of_huge_sizes_overflow_nothing() {
    use stridex_core::kernel::ScatterGroupingDesc;
    let big = 1usize << 33;
    let max = u32::MAX as usize;
    let scatter = |form, rules, data: &[usize], ids: &[usize], updates: &[usize]| {
        summing(form, rules, data, ids, updates, 0)
    };
    let cases = [
        // No position: indices [2^33, 2^33, 0].
        scatter(GatherForm::Axis, GatherRules::OpenVino, &[4, 8], &[big, big, 0], &[big, big, 0, 8]),
        // No element in the data, whose leading sizes multiply past 2^64.
        scatter(GatherForm::Nd, GatherRules::Onnx, &[max, max, max, 0, 8], &[2, 3], &[2, 0, 8]),
        // Empty runs of huge sizes, and runs of 2^66 elements of an empty axis.
        scatter(GatherForm::Axis, GatherRules::OpenVino, &[4, big, big, 0], &[2], &[2, big, big, 0]),
        scatter(GatherForm::Axis, GatherRules::OpenVino, &[0, big, big], &[0], &[0, big, big]),
    ];
    for desc in cases {
        let plan = desc.plan().unwrap();
        let _ = plan.run_len();
        let _ = plan.back_to_back_runs(&plan.output);
        // No position, or no run: nothing to group on the device.
        assert_eq!(ScatterGroupingDesc::of(&plan, &plan.output), None);
        let k = ScatterKernelDesc::of(&plan, &plan.output);
        if plan.run_len() == 0 || plan.run_len() > u32::MAX as usize {
            assert_eq!(k, None, "no run to write, or one past 32 bits");
        }
        let _ = ScatterKernelDesc::summing_into_zeros(&plan, &plan.output);
        let groups = plan.group(&plan.output, |_| 0).unwrap();
        assert!(groups.members.is_empty());
    }
}

/// A random gather's map as a scatter's (each of the three forms, every rule set, every data
/// type, strided data, indices and updates, hostile index values, every reduction but `mean`), grouped by `group`
/// and applied run by run as a kernel applies the groups, against the scatter written from its
/// definition: the gather's reference run on the data's own element numbers says which element
/// each update position reads, and so writes; updates apply in row-major order (under `none`
/// the last wins). Under `error` both name the same first bad index; under `duplicates: error`
/// the first position that repeats a destination and the one it repeats; `replaced` lists the
/// positions a later one overwrites.
#[test]
fn groups_apply_as_the_defined_scatter() {
    let types = DType::ALL;
    let mut rng = Rng::new(0x5ca7);
    let (mut planned, mut written, mut refused, mut narrow, mut single, mut repeated) = (0, 0, 0, 0, 0, 0);
    for n in 0..6000 {
        let (map, run): (GatherDesc, Reference) = match n % 3 {
            0 => {
                let mut c = generate::gather_case(&mut rng, &types);
                c.reference.out_strides = None;
                (c.desc, Reference::Axis(c.reference))
            }
            1 => {
                let mut c = generate::elements_case(&mut rng, &types);
                c.reference.out_strides = None;
                (c.desc, Reference::Elements(c.reference))
            }
            _ => {
                let mut c = generate::nd_case(&mut rng, &types);
                c.reference.out_strides = None;
                (c.desc, Reference::Nd(c.reference))
            }
        };
        let map = GatherDesc { output: None, ..map };
        let shape = run.output_shape();
        let updates_strides = generate::input_strides(&mut rng, &shape);
        let reduction = rng.pick(&DRAWN_REDUCTIONS);
        let refuse_repeats = reduction == Reduction::None && rng.chance(30);
        let desc = ScatterDesc {
            duplicates: refuse_repeats.then_some(stridex_core::Duplicates::Error),
            map,
            updates: TensorDecl {
                dtype: map.data.dtype,
                sizes: Dims::new(&shape).unwrap(),
                strides: updates_strides.as_deref().map(|s| Dims::new(s).unwrap()),
            },
            reduction: Some(reduction),
            use_init_val: None,
        };
        // Batch dimensions, DirectML's index_dims, overlapping data, reductions a rule set lacks.
        let Ok(plan) = desc.plan() else { continue };
        planned += 1;
        let (data_sizes, data_strides) = run.data();
        let (index_sizes, index_strides) = run.indices();
        let index_len = r::min_len(index_sizes, index_strides);
        let extent = run.extent();
        let wide = plan.map.index_type.words() == 2;
        let signed = plan.map.index_type.is_signed();
        let hostile = rng.chance(40);
        let values = generate::index_values(&mut rng, index_len, extent, signed, wide, hostile);
        // The data's element numbers (packed, from 1; 0 reads as "no element").
        let packed = r::packed(data_sizes);
        let mut numbers = vec![0usize; r::min_len(data_sizes, data_strides)];
        for c in r::coords(data_sizes) {
            numbers[r::offset(&c, data_strides)] = r::offset(&c, &packed) + 1;
        }
        let initial: Vec<i64> = (0..data_sizes.iter().product::<usize>()).map(|_| rng.range(-3, 3)).collect();
        let updates_strides = updates_strides.unwrap_or_else(|| r::packed(&shape));
        let mut updates = vec![0i64; r::min_len(&shape, &updates_strides)];
        for c in r::coords(&shape) {
            updates[r::offset(&c, &updates_strides)] = rng.range(-3, 3);
        }
        let apply = |to: &mut i64, u: i64| reduce(reduction, to, u);
        let grouped = plan.group(&plan.output, |i| values[i]);
        let context = format!("{desc:?}\nindices {values:?}");
        let out_packed = r::packed(&shape);
        let gathered = run.run(&numbers, &values);
        // Each index position (row-major) with the element its run starts at (`None`:
        // dropped): the output position of the position's keyed coordinates, the rest 0.
        let keyed = run.keyed(shape.len());
        let run_len: usize = (0..shape.len()).filter(|d| !keyed.contains(d)).map(|d| shape[d]).product();
        let starts: Vec<(Vec<usize>, Option<usize>)> = match &gathered {
            Outcome::Ok { buffer, .. } if run_len > 0 => r::coords(&shape[keyed.clone()])
                .into_iter()
                .map(|p| {
                    let mut u = vec![0; shape.len()];
                    u[keyed.clone()].copy_from_slice(&p);
                    let element = buffer[r::offset(&u, &out_packed)];
                    (run.index_position(&p), element.checked_sub(1))
                })
                .collect(),
            _ => Vec::new(),
        };
        let repeat = (0..starts.len()).find_map(|j| {
            let i = starts[..j].iter().position(|(_, e)| e.is_some() && *e == starts[j].1)?;
            Some((starts[i].0.clone(), starts[j].0.clone()))
        });
        let replaced: Vec<usize> = (0..starts.len())
            .filter(|&i| starts[i].1.is_some() && starts[i + 1..].iter().any(|(_, e)| *e == starts[i].1))
            .map(|i| r::offset(&starts[i].0, index_strides))
            .collect();
        if reduction == Reduction::None && !matches!(gathered, Outcome::Err { .. }) {
            assert_eq!(plan.replaced(&plan.output, |i| values[i]), Ok(replaced), "{context}");
        }
        match (gathered, grouped) {
            (Outcome::Ok { .. }, Err(ScatterFault::Duplicate { first, second })) => {
                assert!(refuse_repeats, "{context}");
                assert_eq!(Some((first, second)), repeat, "{context}");
                repeated += 1;
            }
            (Outcome::Ok { buffer, .. }, Ok(groups)) => {
                assert!(!refuse_repeats || repeat.is_none(), "{context}\nrepeats {repeat:?}");
                let mut expected = initial.clone();
                for u in r::coords(&shape) {
                    let element = buffer[r::offset(&u, &out_packed)];
                    if element > 0 {
                        apply(&mut expected[element - 1], updates[r::offset(&u, &updates_strides)]);
                    }
                }
                // Keys and members count words of 8- and 16-bit elements (`lanes` to a word);
                // single elements carry their lane in a member's two low bits.
                let lanes = plan.lanes();
                let free: Vec<_> = plan.free_strides(&plan.output).collect();
                let sizes: Vec<usize> = free.iter().map(|f| f.0).collect();
                let mut got = initial;
                for (g, &key) in groups.keys.iter().enumerate() {
                    let members = &groups.members[groups.starts[g] as usize..groups.starts[g + 1] as usize];
                    for &member in members {
                        let (key, member) = if plan.lane_words() {
                            (key as usize * lanes + (member & 3) as usize, member >> 2)
                        } else {
                            (key as usize * lanes, member * lanes as u32)
                        };
                        for c in r::coords(&sizes) {
                            let at = |base: usize, pick: fn(&(usize, usize, usize)) -> usize| {
                                base + c.iter().zip(&free).map(|(c, f)| c * pick(f)).sum::<usize>()
                            };
                            let u = updates[at(member as usize, |f| f.1)];
                            apply(&mut got[at(key, |f| f.2)], u);
                        }
                    }
                }
                assert_eq!(got, expected, "{context}");
                let wrote = !groups.keys.is_empty();
                written += usize::from(wrote);
                narrow += usize::from(wrote && lanes > 1 && !plan.lane_words());
                single += usize::from(wrote && plan.lane_words());
            }
            (
                Outcome::Err { position, value },
                Err(ScatterFault::OutOfRange { position: p, value: v, .. }),
            ) => {
                assert_eq!((p, v), (position, value), "{context}");
                refused += 1;
            }
            (want, got) => {
                panic!("{context}\nreference ok: {}\ngrouped {got:?}", matches!(want, Outcome::Ok { .. }))
            }
        }
    }
    // Planned, with writes, refused under `error`, narrow elements written by whole words and
    // one by one, refused under `duplicates: error`: measured 1608, 1088, 86, 43, 604, 70.
    let counts = [planned, written, refused, narrow, single, repeated];
    assert!(counts.iter().zip([1300, 870, 65, 30, 480, 50]).all(|(n, min)| *n >= min), "{counts:?}");
}

/// The gather reference of a scatter's map.
enum Reference {
    Axis(r::Gather),
    Elements(r::GatherElements),
    Nd(r::GatherNd),
}

impl Reference {
    fn output_shape(&self) -> Vec<usize> {
        match self {
            Reference::Axis(g) => g.output_shape(),
            Reference::Elements(g) => g.index_sizes.clone(),
            Reference::Nd(g) => g.shape(),
        }
    }

    fn data(&self) -> (&[usize], &[usize]) {
        match self {
            Reference::Axis(g) => (&g.data_sizes, &g.data_strides),
            Reference::Elements(g) => (&g.data_sizes, &g.data_strides),
            Reference::Nd(g) => (&g.data_sizes, &g.data_strides),
        }
    }

    fn indices(&self) -> (&[usize], &[usize]) {
        match self {
            Reference::Axis(g) => (&g.index_sizes, &g.index_strides),
            Reference::Elements(g) => (&g.index_sizes, &g.index_strides),
            Reference::Nd(g) => (&g.index_sizes, &g.index_strides),
        }
    }

    /// The output dimensions an index position names (the rest are its run's).
    fn keyed(&self, rank: usize) -> std::ops::Range<usize> {
        match self {
            Reference::Axis(g) => g.axis()..g.axis() + g.index_sizes.len(),
            Reference::Elements(_) => 0..rank,
            Reference::Nd(g) => 0..g.index_sizes.len() - 1,
        }
    }

    /// The indices coordinates of index position `p` (a tuple's first component).
    fn index_position(&self, p: &[usize]) -> Vec<usize> {
        let mut c = p.to_vec();
        if let Reference::Nd(_) = self {
            c.push(0);
        }
        c
    }

    /// The extent index values are drawn for (a tuple's: its smallest dimension's).
    fn extent(&self) -> usize {
        match self {
            Reference::Axis(g) => g.data_sizes[g.axis()],
            Reference::Elements(g) => g.data_sizes[g.axis()],
            Reference::Nd(g) => {
                let k = g.index_sizes[g.index_sizes.len() - 1];
                g.data_sizes[g.batch_dims..g.batch_dims + k].iter().copied().min().unwrap_or(0)
            }
        }
    }

    fn run(&self, data: &[usize], indices: &[i128]) -> Outcome<usize> {
        match self {
            Reference::Axis(g) => g.run(data, indices),
            Reference::Elements(g) => g.run(data, indices),
            Reference::Nd(g) => g.run(data, indices),
        }
    }
}

/// 8-bit elements are written a word at a time: a run must be whole, aligned words in the
/// updates and in the data. Dimensions of size 1 take no step, so their strides never count;
/// every other keyed, free and index-axis stride must be whole words.
#[test]
fn narrow_runs_are_whole_words_where_they_step() {
    let plan = |data: TensorDecl, indices: &[usize], updates: TensorDecl| {
        ScatterDesc::new(GatherForm::Axis, GatherRules::OpenVino, data, decl(DType::I32, indices), updates, 0)
            .plan()
    };
    let lanes = |r: Result<_, _>| matches!(r, Err(stridex_core::RuleError::ScatterLanes { .. }));
    let u8s = |sizes: &[usize]| decl(DType::U8, sizes);
    assert!(plan(u8s(&[4, 8]), &[2], u8s(&[2, 8])).is_ok());
    // Updates: a keyed stride of 9 bytes starts the second run mid-word; of size 1, nothing.
    assert!(lanes(plan(u8s(&[4, 8]), &[2], strided(DType::U8, &[2, 8], &[9, 1]))));
    assert!(plan(u8s(&[4, 8]), &[1], strided(DType::U8, &[1, 8], &[9, 1])).is_ok());
    // The data written in place: its index axis steps 10 bytes; of size 1 it never steps.
    assert!(lanes(plan(strided(DType::U8, &[2, 8], &[10, 1]), &[2], u8s(&[2, 8]))));
    assert!(plan(strided(DType::U8, &[1, 8], &[10, 1]), &[1], u8s(&[1, 8])).is_ok());
    // The innermost run packed in both: not where the updates or the data step 2 bytes.
    assert!(lanes(plan(u8s(&[4, 8]), &[2], strided(DType::U8, &[2, 8], &[16, 2]))));
    assert!(lanes(plan(strided(DType::U8, &[4, 8], &[16, 2]), &[2], u8s(&[2, 8]))));
    // The innermost free dimension that steps must be packed: a trailing one of size 1 is not it.
    let p = plan(u8s(&[4, 8, 1]), &[2], strided(DType::U8, &[2, 8, 1], &[8, 1, 5])).unwrap();
    assert_eq!(p.free_strides(&p.output).collect::<Vec<_>>(), [(8, 1, 1)]);
    // One element per index: members carry their lane in two bits, so updates stop at 2^30.
    let elements = |n: usize| {
        ScatterDesc::new(
            GatherForm::Elements,
            GatherRules::Onnx,
            u8s(&[n]),
            decl(DType::I32, &[n]),
            u8s(&[n]),
            0,
        )
        .plan()
    };
    assert!(elements(1 << 30).is_ok());
    assert!(lanes(elements((1 << 30) + 1)));
}

/// `clamp` on an axis of no element has nothing to clamp to: every update is dropped.
#[test]
fn clamping_into_an_empty_axis_drops_the_update() {
    let mut desc = ScatterDesc::new(
        GatherForm::Axis,
        GatherRules::OpenVino,
        decl(DType::F32, &[3, 0, 4]),
        decl(DType::I32, &[2]),
        decl(DType::F32, &[3, 2, 4]),
        1,
    );
    desc.map.out_of_range = Some(stridex_core::OutOfRange::Clamp);
    let plan = desc.plan().unwrap();
    let groups = plan.group(&plan.output, |_| 0).unwrap();
    assert!(groups.keys.is_empty() && groups.members.is_empty(), "{groups:?}");
}

/// A run of free dimensions in vectors: the packed innermost one steps by whole vectors (8 f32
/// are 2 of 4 words), an outer one by its size; each stride in vector units.
#[test]
fn a_runs_dimensions_step_in_vectors() {
    let desc = ScatterDesc::new(
        GatherForm::Axis,
        GatherRules::OpenVino,
        decl(DType::F32, &[4, 3, 8]),
        decl(DType::I32, &[2]),
        decl(DType::F32, &[2, 3, 8]),
        0,
    );
    let plan = desc.plan().unwrap();
    let k = ScatterKernelDesc::of(&plan, &plan.output).unwrap();
    assert_eq!((k.vector, k.run), (4, 6));
    let dims: Vec<(u32, u32, u32)> =
        k.dims.iter().map(|d| (d.step, d.updates_stride, d.dest_stride)).collect();
    assert_eq!(dims, [(2, 2, 2), (1, 1, 1)]);
}

/// The line kernel (`ScatterLinesDesc`) run on the host as the kernel runs it: one walk per
/// line, its positions along the axis in order, each index read under the kernel's policy.
fn run_lines(k: &ScatterLinesDesc, indices: &[u32], updates: &[i64], dest: &mut [i64]) {
    for line in 0..k.lines as usize {
        let (mut rem, mut at) = (line, (0usize, 0usize, 0usize));
        for d in &k.dims {
            let c = rem / d.step as usize;
            rem %= d.step as usize;
            at.0 += c * d.indices_stride as usize;
            at.1 += c * d.updates_stride as usize;
            at.2 += c * d.dest_stride as usize;
        }
        for j in 0..k.len as usize {
            let (ok, i) = common::host_model::index_of(indices, at.0 + j * k.indices_step as usize, &k.index);
            if ok {
                let u = updates[at.1 + j * k.updates_step as usize];
                reduce(k.reduction, &mut dest[at.2 + i * k.index.axis_stride as usize], u);
            }
        }
    }
}

/// ScatterElements of many lines of few updates takes the line kernel, one invocation per line
/// walking its updates in order: run on the host, it gives what the groups give (checked
/// against the definition above), for random lines along any axis, strided tensors, every
/// policy (`skip` read as unsigned) and reduction it takes; other scatters do not take it.
#[test]
fn the_line_kernel_applies_each_lines_updates_in_order() {
    use stridex_core::OutOfRange;
    let mut rng = Rng::new(0x11e5);
    let mut ran = 0;
    for _ in 0..300 {
        let rank = 2 + rng.below(2);
        let axis = rng.below(rank);
        // At least 256 lines (`MIN_LINES`) off the axis, mostly.
        let mut sizes: Vec<usize> =
            (0..rank).map(|_| if rank == 2 { 240 + rng.below(60) } else { 15 + rng.below(25) }).collect();
        sizes[axis] = 1 + rng.below(5);
        let mut index_sizes = sizes.clone();
        index_sizes[axis] = rng.below(6);
        let rules = rng.pick(&[GatherRules::Onnx, GatherRules::OpenVino]);
        let dtype = rng.pick(&[DType::F32, DType::I32, DType::U32]);
        let index_type = rng.pick(&[DType::I32, DType::I64, DType::U32, DType::U64]);
        let data_strides = generate::input_strides(&mut rng, &sizes);
        let index_strides = generate::input_strides(&mut rng, &index_sizes);
        let updates_strides = generate::input_strides(&mut rng, &index_sizes);
        let decl_of = |dtype, sizes: &[usize], strides: &Option<Vec<usize>>| TensorDecl {
            dtype,
            sizes: Dims::new(sizes).unwrap(),
            strides: strides.as_deref().map(|s| Dims::new(s).unwrap()),
        };
        let mut desc = ScatterDesc::new(
            GatherForm::Elements,
            rules,
            decl_of(dtype, &sizes, &data_strides),
            decl_of(index_type, &index_sizes, &index_strides),
            decl_of(dtype, &index_sizes, &updates_strides),
            axis as i64,
        );
        desc.map.out_of_range =
            Some(rng.pick(&[OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp, OutOfRange::Skip]));
        let reduction = rng.pick(&DRAWN_REDUCTIONS);
        desc.reduction = Some(reduction);
        let Ok(plan) = desc.plan() else { continue };
        let lines: usize = (0..rank).filter(|&d| d != axis).map(|d| index_sizes[d]).product();
        let Some(k) = ScatterLinesDesc::of(&plan, &plan.output) else {
            assert!(lines < 256 || index_sizes[axis] == 0, "{desc:?}");
            continue;
        };
        assert!(lines >= 256, "fewer lines take the grouped kernel");
        // `skip` reads its index as unsigned under `zero`: a negative one is past the end.
        let skip = plan.out_of_range == OutOfRange::Skip;
        assert_eq!(k.index.policy, if skip { OutOfRange::Zero } else { plan.out_of_range });
        assert_eq!(k.index.index_type.is_signed(), plan.map.index_type.is_signed() && !skip);
        assert_eq!((k.lines as usize, k.len as usize), (lines, index_sizes[axis]));
        assert_eq!(k.check.is_some(), plan.out_of_range == OutOfRange::Error && plan.map.indices.is_packed());
        let index_len = r::min_len(&index_sizes, &plan.map.indices.strides);
        let (signed, wide, hostile) =
            (plan.map.index_type.is_signed(), plan.map.index_type.words() == 2, rng.chance(30));
        let values = generate::index_values(&mut rng, index_len, sizes[axis], signed, wide, hostile);
        let words = index_words(&values, plan.map.index_type.words());
        let Ok(groups) = plan.group(&plan.output, |i| values[i]) else { continue };
        let n = r::min_len(&index_sizes, &plan.updates.strides);
        let updates: Vec<i64> = (0..n).map(|_| rng.range(-3, 3)).collect();
        let initial: Vec<i64> = (0..sizes.iter().product()).map(|_| rng.range(-3, 3)).collect();
        let mut expected = initial.clone();
        let free = plan.free_strides(&plan.output).count();
        assert_eq!(free, 0, "ScatterElements writes single elements");
        for (g, &key) in groups.keys.iter().enumerate() {
            for &m in &groups.members[groups.starts[g] as usize..groups.starts[g + 1] as usize] {
                reduce(reduction, &mut expected[key as usize], updates[m as usize]);
            }
        }
        let mut got = initial;
        run_lines(&k, &words, &updates, &mut got);
        assert_eq!(got, expected, "{desc:?}\n{k:?}\nindices {values:?}");
        ran += 1;
    }
    // Measured: 122 of the 300 run (the rest are refused, lack enough lines or fail a check).
    assert!(ran >= 90, "{ran}");
    // Not for narrow elements, a sum that leaves the data out, or `duplicates: error`.
    let wide = |dtype, reduction: Reduction, rules| {
        let mut desc = ScatterDesc::new(
            GatherForm::Elements,
            rules,
            decl(dtype, &[300, 4]),
            decl(DType::I32, &[300, 2]),
            decl(dtype, &[300, 2]),
            1,
        );
        desc.reduction = Some(reduction);
        desc
    };
    let plan = |d: ScatterDesc| d.plan().unwrap();
    let lines_of = |d: ScatterDesc| {
        let p = plan(d);
        ScatterLinesDesc::of(&p, &p.output)
    };
    assert!(lines_of(wide(DType::F32, Reduction::Add, GatherRules::Onnx)).is_some());
    assert!(lines_of(wide(DType::U16, Reduction::Add, GatherRules::Onnx)).is_none());
    assert!(lines_of(wide(DType::F64, Reduction::None, GatherRules::Onnx)).is_none());
    let mut left_out = wide(DType::F32, Reduction::Add, GatherRules::OpenVino);
    left_out.use_init_val = Some(false);
    assert!(lines_of(left_out).is_none());
    let mut mean = wide(DType::F32, Reduction::Mean, GatherRules::OpenVino);
    assert!(lines_of(mean).is_none());
    mean.reduction = None;
    mean.duplicates = Some(stridex_core::Duplicates::Error);
    assert!(lines_of(mean).is_none());
    // A scatter along an axis writes whole runs: the grouped kernel.
    let axis = ScatterDesc::new(
        GatherForm::Axis,
        GatherRules::OpenVino,
        decl(DType::F32, &[300, 4]),
        decl(DType::I32, &[2]),
        decl(DType::F32, &[300, 2]),
        1,
    );
    assert!(lines_of(axis).is_none());
}

/// The device grouping serves an embedding's gradient: runs back to back, packed indices and
/// updates, 32-bit counts. Its member step is a run in words; elsewhere the host groups.
#[test]
fn the_device_groups_packed_rows_of_32_bit_counts() {
    use stridex_core::kernel::ScatterGroupingDesc;
    let rows = |dtype, data: &[usize], ids: usize, updates: TensorDecl| {
        let mut desc = ScatterDesc::new(
            GatherForm::Axis,
            GatherRules::OpenVino,
            decl(dtype, data),
            decl(DType::I32, &[ids]),
            updates,
            0,
        );
        desc.reduction = Some(Reduction::Add);
        let plan = desc.plan().unwrap();
        ScatterGroupingDesc::of(&plan, &plan.output)
    };
    let g = rows(DType::F16, &[64, 4], 600, decl(DType::F16, &[600, 4])).unwrap();
    assert_eq!((g.positions, g.runs, g.member_step, g.block, g.blocks, g.digits), (600, 64, 2, 256, 3, 1));
    // Strided updates: the host groups.
    assert_eq!(rows(DType::F32, &[64, 4], 6, strided(DType::F32, &[6, 4], &[8, 1])), None);
    // 2^31 runs (rows of one f32) pass what the scans count in 32 bits.
    let huge = 1usize << 31;
    assert_eq!(rows(DType::F32, &[huge, 1], 1, decl(DType::F32, &[1, 1])), None);
    assert!(rows(DType::F32, &[huge - 2, 1], 1, decl(DType::F32, &[1, 1])).is_some());
}
