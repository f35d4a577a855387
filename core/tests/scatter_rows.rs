//! The scatter kernels that read their indices on the device, and the chains fused into a
//! scatter, on the host: the owned-row kernels (`ScatterRowsDesc`, a KV cache's write) of a
//! scatter alone and of a chain of windows ending in one, and the fold of a gather into the
//! grouped kernel's lists (`GatheredRows`, an MoE combine), each against the scatter as the
//! groups apply it (checked against its definition in `scatter_plan.rs`).

mod common;

use common::generate::{self, Rng};
use common::host_model::words;
use common::reference as r;
use common::scatter::{decl, each_write, index_words, reduce, strided, DRAWN_REDUCTIONS};
use stridex_core::{DType, Dims, GatherForm, GatherRules, Reduction, ScatterDesc, ScatterFault, TensorDecl};

/// The owned-row kernels (`ScatterRowsDesc`) run on the host as the two kernels run them:
/// under `error` the check reads every index first (`false`: one is out of range, nothing is
/// written); every position claims its row with the maximum of its ordinal plus one; then each
/// position whose claim won copies its row, vector by vector, from where its updates lie.
fn run_owned_rows(
    k: &stridex_core::kernel::ScatterRowsDesc,
    indices: &[u32],
    updates: &[u32],
    dest: &mut [u32],
) -> bool {
    use common::host_model::index_of;
    if let Some((read, count)) = &k.check {
        if (0..*count as usize).any(|p| !index_of(indices, p * read.index_words as usize, read).0) {
            return false;
        }
    }
    let row_of = |p: usize| index_of(indices, p * k.index.index_words as usize, &k.index);
    let mut claims = vec![0u32; k.rows as usize];
    for p in 0..k.positions as usize {
        if let (true, row) = row_of(p) {
            claims[row] = claims[row].max(p as u32 + 1);
        }
    }
    let v = k.vector as usize;
    for p in 0..k.positions as usize {
        let (ok, row) = row_of(p);
        if ok && claims[row] == p as u32 + 1 {
            for j in 0..k.run as usize {
                let to = (row * k.dest_row as usize + j) * v;
                let from = (k.updates_base as usize + p * k.updates_row as usize + j) * v;
                dest[to..to + v].copy_from_slice(&updates[from..from + v]);
            }
        }
    }
    true
}

/// A scatter of whole rows along axis 0 under `none` (a KV cache's write) takes the owned-row
/// kernels, which read their indices on the device: run on the host, they leave what the
/// groups leave (each row's last update; checked against the definition above), for every
/// element size, index type and policy, one- and two-dimensional indices with many repeats
/// and hostile values, into the packed output or into data whose rows lie apart.
#[test]
fn the_owned_row_kernels_leave_each_rows_last_update() {
    use stridex_core::kernel::ScatterRowsDesc;
    use stridex_core::OutOfRange;
    let mut rng = Rng::new(0x0e1d);
    let (mut ran, mut refused, mut apart, mut narrow) = (0, 0, 0, 0);
    for _ in 0..6000 {
        let rank = 1 + rng.below(3);
        let mut sizes: Vec<usize> = (0..rank).map(|_| 1 + rng.below(5)).collect();
        sizes[0] = 1 + rng.below(12);
        let dtype = rng.pick(&DType::ALL);
        let elem = dtype.size();
        let span: usize = sizes[1..].iter().product();
        // Rows packed and lying apart by a few elements, or any input layout (most of which
        // the kernels refuse: rows not packed, or broadcast).
        let data_strides = match rng.below(3) {
            0 => generate::input_strides(&mut rng, &sizes),
            _ => {
                let mut s = r::packed(&sizes);
                s[0] = span + rng.pick(&[0, 0, 1, 2, 4, 8]);
                Some(s)
            }
        };
        let index_sizes: Vec<usize> = match rng.below(3) {
            0 => vec![rng.below(4), 1 + rng.below(4)],
            _ => vec![rng.below(20)],
        };
        let mut updates_sizes = index_sizes.clone();
        updates_sizes.extend(&sizes[1..]);
        let index_type = rng.pick(&[DType::I32, DType::I64, DType::U32, DType::U64]);
        let mut desc = ScatterDesc::new(
            GatherForm::Axis,
            rng.pick(&[GatherRules::OpenVino, GatherRules::Onnx, GatherRules::DirectMl]),
            TensorDecl {
                dtype,
                sizes: Dims::new(&sizes).unwrap(),
                strides: data_strides.as_deref().map(|s| Dims::new(s).unwrap()),
            },
            decl(index_type, &index_sizes),
            decl(dtype, &updates_sizes),
            0,
        );
        desc.map.out_of_range =
            Some(rng.pick(&[OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp, OutOfRange::Skip]));
        let Ok(plan) = desc.plan() else { continue };
        let in_place = rng.chance(50);
        let dest = if in_place { plan.map.data } else { plan.output };
        // They take rows packed in the destination, of whole 32-bit words and whole words apart,
        // and at least one index (a launch of nothing would not show that it ran).
        let positions: usize = index_sizes.iter().product();
        let row_bytes = span * elem;
        let dest_row_bytes = if sizes[0] > 1 { dest.strides[0] * elem } else { row_bytes };
        let takes = dest.packed_row_span().is_some()
            && row_bytes % 4 == 0
            && dest_row_bytes % 4 == 0
            && positions > 0;
        let k = ScatterRowsDesc::of(&plan, &dest);
        assert_eq!(k.is_some(), takes, "{desc:?}");
        let Some(k) = k else { continue };
        // The widest vector that a row and the step between rows are whole of.
        let (run_words, dest_words) = (row_bytes / 4, dest_row_bytes / 4);
        let vector = [4, 2, 1].into_iter().find(|v| run_words % v == 0 && dest_words % v == 0).unwrap();
        let in_vectors = |w: usize| (w / vector) as u32;
        assert_eq!(
            (k.vector, k.run, k.dest_row, k.updates_row),
            (vector as u32, in_vectors(run_words), in_vectors(dest_words), in_vectors(run_words)),
            "{desc:?}"
        );
        // The index read names the destination's step along the axis, as every scatter's does.
        assert_eq!(k.index.axis_stride, k.dest_row);
        assert_eq!((k.positions as usize, k.rows as usize), (positions, sizes[0]));
        assert_eq!(k.check.is_some(), plan.out_of_range == OutOfRange::Error);
        assert_eq!(k.updates_base, 0);
        let skip = plan.out_of_range == OutOfRange::Skip;
        assert_eq!(k.index.policy, if skip { OutOfRange::Zero } else { plan.out_of_range });
        let (signed, wide) = (plan.map.index_type.is_signed(), plan.map.index_type.words() == 2);
        let hostile = rng.chance(40);
        let values = generate::index_values(&mut rng, positions, sizes[0], signed, wide, hostile);
        let index_buffer = index_words(&values, plan.map.index_type.words());
        let updates = rng.bytes(positions * span * elem);
        let dest_len = r::min_len(&dest.sizes, &dest.strides) * elem;
        let initial = rng.bytes(dest_len.div_ceil(4) * 4);
        let mut got = words(&initial, 0);
        let wrote = run_owned_rows(&k, &index_buffer, &words(&updates, 0), &mut got);
        let groups = match plan.group(&dest, |i| values[i]) {
            Ok(groups) => groups,
            Err(ScatterFault::OutOfRange { .. }) => {
                assert!(!wrote, "{desc:?}\nindices {values:?}");
                refused += 1;
                continue;
            }
            Err(e) => panic!("{e:?}"),
        };
        assert!(wrote, "{desc:?}\nindices {values:?}");
        // The groups' lists applied in order, element by element (under `none` the last wins).
        let lanes = plan.lanes();
        let mut expected = initial;
        each_write(&plan, &dest, &groups, |j, to, within| {
            let (to, from) = (to * elem, (groups.members[j] as usize * lanes + within) * elem);
            expected[to..to + elem].copy_from_slice(&updates[from..from + elem]);
        });
        assert_eq!(got, words(&expected, 0), "{desc:?}\n{k:?}\nindices {values:?}");
        ran += 1;
        apart += usize::from(k.dest_row > k.run);
        narrow += usize::from(elem < 4);
    }
    // Run, refused under `error`, rows lying apart, elements narrower than a word: measured
    // 855, 72, 173, 164 of the 6,000 (the rest fail a rule or are not whole rows of words).
    let counts = [ran, refused, apart, narrow];
    assert!(counts.iter().zip([700, 50, 130, 120]).all(|(n, min)| *n >= min), "{counts:?}");
    // Not for a reduction, `duplicates: error`, along another axis, strided updates, no index,
    // rows of no element, or single elements and ScatterND's tuples.
    let rows = |f: &dyn Fn(&mut ScatterDesc)| {
        let mut desc = ScatterDesc::new(
            GatherForm::Axis,
            GatherRules::OpenVino,
            decl(DType::F32, &[8, 4]),
            decl(DType::I32, &[3]),
            decl(DType::F32, &[3, 4]),
            0,
        );
        f(&mut desc);
        let plan = desc.plan().unwrap();
        ScatterRowsDesc::of(&plan, &plan.output)
    };
    let k = rows(&|_| {}).unwrap();
    assert_eq!((k.positions, k.rows, k.run, k.dest_row, k.vector, k.updates_row), (3, 8, 1, 1, 4, 1));
    assert_eq!(rows(&|d| d.reduction = Some(Reduction::Add)), None);
    assert_eq!(rows(&|d| d.duplicates = Some(stridex_core::Duplicates::Error)), None);
    assert_eq!(rows(&|d| d.updates = strided(DType::F32, &[3, 4], &[8, 1])), None);
    assert_eq!(rows(&|d| d.map.indices = strided(DType::I32, &[3], &[2])), None);
    assert_eq!(
        rows(&|d| {
            d.map.data = decl(DType::F32, &[4, 8]);
            d.map.indices = decl(DType::I32, &[3]);
            d.updates = decl(DType::F32, &[4, 3]);
            d.map.axis = 1;
        }),
        None
    );
    assert_eq!(
        rows(&|d| {
            d.map.indices = decl(DType::I32, &[0]);
            d.updates = decl(DType::F32, &[0, 4]);
        }),
        None
    );
    assert_eq!(
        rows(&|d| {
            d.map.data = decl(DType::F32, &[8, 0]);
            d.updates = decl(DType::F32, &[3, 0]);
        }),
        None
    );
    let one_by_one = |form, indices: &[usize], updates: &[usize]| {
        let desc = ScatterDesc::new(
            form,
            GatherRules::OpenVino,
            decl(DType::F32, &[8, 4]),
            decl(DType::I32, indices),
            decl(DType::F32, updates),
            0,
        );
        let plan = desc.plan().unwrap();
        ScatterRowsDesc::of(&plan, &plan.output)
    };
    assert_eq!(one_by_one(GatherForm::Elements, &[3, 4], &[3, 4]), None);
    assert_eq!(one_by_one(GatherForm::Nd, &[3, 2], &[3]), None);
    // Large but within 32 bits: 2^20 positions of 256 vectors (2^28 invocations), and one row
    // of 2^30 words (2^28 vectors).
    let large = |data: &[usize], ids: usize| {
        let mut updates = vec![ids];
        updates.extend(&data[1..]);
        let desc = ScatterDesc::new(
            GatherForm::Axis,
            GatherRules::OpenVino,
            decl(DType::F32, data),
            decl(DType::I32, &[ids]),
            decl(DType::F32, &updates),
            0,
        );
        let plan = desc.plan().unwrap();
        ScatterRowsDesc::of(&plan, &plan.output).map(|k| (k.positions, k.run, k.dest_row))
    };
    assert_eq!(large(&[8, 1024], 1 << 20), Some((1 << 20, 256, 256)));
    assert_eq!(large(&[2, 1 << 30], 1), Some((1, 1 << 28, 1 << 28)));
}

/// A chain of SLICE1 windows that ends in a scatter of whole rows (a KV cache's K, sliced from
/// each token's QKV rows) takes the owned-row kernels reading the updates' rows from the
/// chain's data where the windows put them (`ScatterRowsDesc::of_chain`): run on the host
/// against the data itself, they leave what the scatter of the windows' output leaves, for
/// windows of any offset and signed step, one or two of them, every element size and policy.
#[test]
fn a_sliced_scatter_of_rows_reads_them_where_the_windows_put_them() {
    use stridex_core::kernel::ScatterRowsDesc;
    use stridex_core::{ChainDesc, OutOfRange, ScatterStage, StageDesc};
    let mut rng = Rng::new(0x5c0e);
    let (mut fused, mut offset, mut stepped, mut apart, mut unfused, mut two_dims) = (0, 0, 0, 0, 0, 0);
    for _ in 0..4000 {
        let dtype = rng.pick(&DType::ALL);
        let elem = dtype.size();
        let rank = 2 + rng.below(2);
        let data_sizes: Vec<usize> =
            (0..rank).map(|d| if d == 0 { 1 + rng.below(10) } else { 1 + rng.below(8) }).collect();
        // Rows of the data packed, lying apart by a few elements or not.
        let mut data_strides = r::packed(&data_sizes);
        data_strides[0] += rng.pick(&[0, 0, 1, 3]);
        let data_len = r::min_len(&data_sizes, &data_strides);
        // One or two windows, each of its input; the reference runs them on element numbers,
        // so the windows' output says which data element each of its elements is.
        let (mut stages, mut numbers, mut shape) =
            (Vec::new(), (0..data_len).collect::<Vec<usize>>(), data_sizes.clone());
        let mut input_strides = data_strides.clone();
        for _ in 0..1 + rng.below(2) {
            let offsets: Vec<usize> = shape.iter().map(|&n| rng.below(n)).collect();
            let window: Vec<usize> =
                shape.iter().zip(&offsets).map(|(&n, &o)| 1 + rng.below(n - o)).collect();
            let steps: Vec<i64> = (0..rank).map(|_| rng.pick(&[1, 1, 1, 2, -1, -2, 3])).collect();
            let slice = r::Slice1 {
                sizes: shape.clone(),
                strides: input_strides,
                offsets: offsets.clone(),
                window: window.clone(),
                steps: steps.clone(),
                out_sizes: None,
                out_strides: None,
            };
            (shape, numbers) = slice.run(&numbers);
            input_strides = r::packed(&shape);
            stages.push(common::window_stage(&offsets, &window, &steps));
        }
        // Mostly one index per row; sometimes two dimensions of them, which the fusion refuses
        // (its rows would step by the second dimension's).
        let index_dims = if rank == 3 && rng.chance(20) { 2 } else { 1 };
        let positions: usize = shape[..index_dims].iter().product();
        let mut into_sizes = shape[index_dims - 1..].to_vec();
        into_sizes[0] = 1 + rng.below(12);
        let span: usize = shape[index_dims..].iter().product();
        let mut into_strides = r::packed(&into_sizes);
        into_strides[0] = span + rng.pick(&[0, 0, 1, 2, 4]);
        let index_type = rng.pick(&[DType::I32, DType::I64, DType::U32, DType::U64]);
        let out_of_range =
            rng.pick(&[OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp, OutOfRange::Skip]);
        stages.push(StageDesc::Scatter(ScatterStage {
            form: GatherForm::Axis,
            rules: GatherRules::OpenVino,
            into: strided(dtype, &into_sizes, &into_strides),
            indices: decl(index_type, &shape[..index_dims]),
            axis: 0,
            reduction: None,
            duplicates: None,
            use_init_val: None,
            out_of_range: Some(out_of_range),
        }));
        let chain = ChainDesc {
            data: strided(dtype, &data_sizes, &data_strides),
            stages: std::borrow::Cow::Owned(stages),
            output: None,
            dynamic_leading: None,
        };
        let Ok(chain_plan) = chain.plan() else { continue };
        let (_, plan) = chain_plan.scatter().unwrap();
        // Where the fusion applies, read off the windows' output: each row is consecutive data
        // elements, the rows start at `base + p * row_stride` (a stride of no negative
        // elements), and both are whole 32-bit words.
        let row_start = |p: usize| numbers[p * span] as i64;
        let row_stride = if positions > 1 { row_start(1) - row_start(0) } else { 0 };
        let whole_rows = (0..positions).all(|p| {
            (0..span).all(|e| numbers[p * span + e] as i64 == row_start(p) + e as i64)
                && row_start(p) == row_start(0) + p as i64 * row_stride
        });
        let whole_words =
            |elements: i64| (elements * elem as i64 % 4 == 0).then_some(elements * elem as i64 / 4);
        let fusable = index_dims == 1
            && whole_rows
            && row_stride >= 0
            && whole_words(row_start(0)).is_some()
            && whole_words(row_stride).is_some()
            && ScatterRowsDesc::of(plan, &plan.map.data).is_some();
        let Some(k) = ScatterRowsDesc::of_chain(&chain_plan) else {
            assert!(!fusable, "{chain:?}");
            two_dims += usize::from(index_dims == 2);
            // Rows the windows reverse or break apart: the scatter alone would take the kernels.
            unfused += usize::from(ScatterRowsDesc::of(plan, &plan.map.data).is_some());
            continue;
        };
        assert!(fusable, "{chain:?}\n{k:?}");
        // The widest vector that every run, destination row, base and row step is whole of.
        let dest_row = if into_sizes[0] > 1 { into_strides[0] } else { span } as i64;
        let in_words = [span as i64, dest_row, row_start(0), row_stride].map(|n| whole_words(n).unwrap());
        let vector = [4, 2, 1].into_iter().find(|v| in_words.iter().all(|w| w % v == 0)).unwrap();
        let [run, dest_row, base, row] = in_words.map(|w| (w / vector) as u32);
        assert_eq!(
            (k.vector, k.run, k.dest_row, k.updates_base, k.updates_row),
            (vector as u32, run, dest_row, base, row),
            "{chain:?}"
        );
        assert_eq!(k.index.axis_stride, k.dest_row);
        let (signed, wide) = (plan.map.index_type.is_signed(), plan.map.index_type.words() == 2);
        let hostile = rng.chance(40);
        let values = generate::index_values(&mut rng, positions, into_sizes[0], signed, wide, hostile);
        let index_buffer = index_words(&values, plan.map.index_type.words());
        let data = rng.bytes(data_len * elem);
        let dest = &plan.map.data;
        let initial = rng.bytes((r::min_len(&dest.sizes, &dest.strides) * elem).div_ceil(4) * 4);
        let mut got = words(&initial, 0);
        let wrote = run_owned_rows(&k, &index_buffer, &words(&data, 0), &mut got);
        let Ok(groups) = plan.group(dest, |i| values[i]) else {
            assert!(!wrote, "{chain:?}\nindices {values:?}");
            continue;
        };
        assert!(wrote, "{chain:?}\nindices {values:?}");
        // The scatter of the windows' output (packed, as an intermediate would hold it).
        let lanes = plan.lanes();
        let mut expected = initial;
        each_write(plan, dest, &groups, |j, to, within| {
            let (to, from) = (to * elem, numbers[groups.members[j] as usize * lanes + within] * elem);
            expected[to..to + elem].copy_from_slice(&data[from..from + elem]);
        });
        assert_eq!(got, words(&expected, 0), "{chain:?}\n{k:?}\nindices {values:?}");
        fused += 1;
        offset += usize::from(k.updates_base > 0);
        stepped += usize::from(k.updates_row != k.run);
        apart += usize::from(k.dest_row > k.run);
    }
    // Fused (each with its fields checked), rows starting past the data's first word, rows not
    // back to back in the data, rows lying apart in the destination, refused by the fusion
    // only, two dimensions of indices: measured 1345, 1287, 1332, 728, 651, 297 of the 4,000.
    let counts = [fused, offset, stepped, apart, unfused, two_dims];
    assert!(counts.iter().zip([1080, 1030, 1060, 580, 520, 230]).all(|(n, min)| *n >= min), "{counts:?}");
    // A row of 2^30 words (2^28 vectors) is within 32 bits.
    let huge = ChainDesc {
        data: decl(DType::F32, &[1, 1 << 30]),
        stages: std::borrow::Cow::Owned(vec![
            common::window_stage(&[0, 0], &[1, 1 << 30], &[1, 1]),
            StageDesc::Scatter(ScatterStage {
                form: GatherForm::Axis,
                rules: GatherRules::OpenVino,
                into: decl(DType::F32, &[2, 1 << 30]),
                indices: decl(DType::I32, &[1]),
                axis: 0,
                reduction: None,
                duplicates: None,
                use_init_val: None,
                out_of_range: Some(OutOfRange::Clamp),
            }),
        ]),
        output: None,
        dynamic_leading: None,
    };
    let k = ScatterRowsDesc::of_chain(&huge.plan().unwrap()).unwrap();
    assert_eq!((k.run, k.dest_row, k.vector), (1 << 28, 1 << 28, 4));
}

/// A gather of rows then a scatter of them by the grouped kernel (an MoE combine) fuses by
/// moving each list member from the gathered row to the data row it copies
/// (`GatheredRows::fold`; out of range under the gather's `zero`, `ZERO_MEMBER`: a row of
/// zeros). The folded lists applied to the data leave what the scatter of the gather's output
/// leaves: random rows of every element size, gather indices of any stride (a broadcast one
/// too) under `error`, `clamp` and `zero`, every reduction the grouped kernel runs.
#[test]
fn a_gather_folds_into_the_scatters_lists() {
    use stridex_core::kernel::{GatheredRows, ZERO_MEMBER};
    use stridex_core::{ChainDesc, GatherStage, OutOfRange, ScatterStage, StageDesc};
    let mut rng = Rng::new(0xf01d);
    let (mut folded, mut zeros, mut refused, mut strided_ids) = (0, 0, 0, 0);
    for _ in 0..4000 {
        let dtype = rng.pick(&DType::ALL);
        let rank = 1 + rng.below(3);
        let mut data_sizes: Vec<usize> = (0..rank).map(|_| 1 + rng.below(6)).collect();
        data_sizes[0] = if rng.chance(3) { 0 } else { 1 + rng.below(10) };
        let span: usize = data_sizes[1..].iter().product();
        // Rows packed and lying apart by a few elements, or the data column-major (rows not
        // packed, unless they are one element).
        let mut data_strides = r::packed(&data_sizes);
        let pad = rng.pick(&[0, 0, 0, 1, 4]);
        data_strides[0] = span + pad;
        if rng.chance(15) {
            data_strides = (0..rank).map(|d| data_sizes[..d].iter().product::<usize>().max(1)).collect();
        }
        let packed_rows =
            (1..rank).all(|d| data_sizes[d] < 2 || data_strides[d] == data_sizes[d + 1..].iter().product());
        let row_stride = data_strides[0];
        let positions = rng.below(12);
        let index_stride = rng.pick(&[1, 1, 2, 0]);
        let gather_ids = if positions > 1 && index_stride != 1 {
            strided(DType::I32, &[positions], &[index_stride])
        } else {
            decl(DType::I64, &[positions])
        };
        let policy = rng.pick(&[OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Zero, OutOfRange::Skip]);
        let mut into_sizes = data_sizes.clone();
        into_sizes[0] = 1 + rng.below(8);
        let reduction = rng.pick(&DRAWN_REDUCTIONS);
        // Under `none` the owned-row kernels take the scatter, unless repeats are refused: then
        // the grouped kernel does (64-bit elements have no other way there), with distinct ids.
        let refuse_repeats = reduction == Reduction::None && rng.chance(50);
        if refuse_repeats {
            into_sizes[0] = into_sizes[0].max(positions);
        }
        let chain = ChainDesc {
            data: strided(dtype, &data_sizes, &data_strides),
            stages: std::borrow::Cow::Owned(vec![
                StageDesc::Gather(GatherStage {
                    form: GatherForm::Axis,
                    rules: GatherRules::OpenVino,
                    indices: gather_ids,
                    axis: 0,
                    batch_dims: None,
                    index_dims: None,
                    out_of_range: Some(policy),
                }),
                StageDesc::Scatter(ScatterStage {
                    form: GatherForm::Axis,
                    rules: GatherRules::OpenVino,
                    into: decl(dtype, &into_sizes),
                    indices: decl(DType::I32, &[positions]),
                    axis: 0,
                    reduction: Some(reduction),
                    duplicates: refuse_repeats.then_some(stridex_core::Duplicates::Error),
                    use_init_val: None,
                    out_of_range: Some(OutOfRange::Clamp),
                }),
            ]),
            output: None,
            dynamic_leading: None,
        };
        let Ok(chain_plan) = chain.plan() else { continue };
        let Some(fold) = GatheredRows::of_chain(&chain_plan) else {
            // Packed rows of whole words under a policy and a reduction it takes always fold.
            let takes = policy != OutOfRange::Skip && (reduction != Reduction::None || refuse_repeats);
            // (Rows of whole words, back to back or a single one: every row starts a vector.)
            let whole = packed_rows
                && (row_stride == span || data_sizes[0] == 1)
                && data_sizes[0] > 0
                && span * dtype.size() % 4 == 0;
            assert!(!takes || !whole || span == 0 || positions == 0, "{chain:?}");
            continue;
        };
        assert_ne!(policy, OutOfRange::Skip);
        assert!(packed_rows && data_sizes[0] > 0, "{chain:?}");
        // Under `zero` the kernel takes a member past every row as a row of zeros.
        assert_eq!(fold.kernel.zero_members, policy == OutOfRange::Zero);
        assert_eq!(fold.axis_size(), data_sizes[0]);
        let (_, plan) = chain_plan.scatter().unwrap();
        let rows = data_sizes[0] as i128;
        let hostile = rng.chance(40);
        let gather_values = generate::index_values(
            &mut rng,
            positions.max(1) * index_stride.max(1),
            data_sizes[0],
            true,
            true,
            hostile,
        );
        let scatter_values: Vec<i128> = if refuse_repeats {
            // Distinct rows: a shuffle of them, the first `positions` taken.
            let mut rows: Vec<i128> = (0..into_sizes[0] as i128).collect();
            for i in (1..rows.len()).rev() {
                rows.swap(i, rng.below(i + 1));
            }
            rows.truncate(positions);
            rows
        } else {
            generate::index_values(&mut rng, positions, into_sizes[0], true, false, false)
        };
        let data: Vec<i64> = (0..r::min_len(&data_sizes, &data_strides)).map(|_| rng.range(-3, 3)).collect();
        let initial: Vec<i64> = (0..into_sizes.iter().product()).map(|_| rng.range(-3, 3)).collect();
        // The gather's output (packed) as its definition reads it.
        let data_ref = &data;
        let gathered: Option<Vec<i64>> = (0..positions)
            .map(|p| {
                let v = gather_values[p * index_stride];
                let n = if v < 0 { v + rows } else { v };
                let row = match policy {
                    OutOfRange::Clamp => Some(n.clamp(0, rows - 1)),
                    _ if (0..rows).contains(&n) => Some(n),
                    OutOfRange::Zero => None,
                    _ => return None,
                };
                Some((0..span).map(move |e| row.map_or(0, |row| data_ref[row as usize * row_stride + e])))
            })
            .collect::<Option<Vec<_>>>()
            .map(|rows| rows.into_iter().flatten().collect());
        let groups = plan.group(&plan.map.data, |i| scatter_values[i]).unwrap();
        let mut members = groups.members.clone();
        let Some(updates) = gathered else {
            assert!(fold.fold(&mut members, |i| gather_values[i]).is_err(), "{chain:?}");
            refused += 1;
            continue;
        };
        fold.fold(&mut members, |i| gather_values[i]).unwrap();
        // Each moved member starts a row on a whole vector of the kernel.
        let (words, vector) = (fold.kernel.words as usize, fold.kernel.vector as usize);
        assert!(members.iter().all(|&m| m == ZERO_MEMBER || m as usize * words % vector == 0), "{chain:?}");
        let lanes = plan.lanes();
        let (mut expected, mut got) = (initial.clone(), initial);
        each_write(plan, &plan.map.data, &groups, |j, to, within| {
            reduce(reduction, &mut expected[to], updates[groups.members[j] as usize * lanes + within]);
            let u = match members[j] {
                ZERO_MEMBER => 0,
                m => data[m as usize * lanes + within],
            };
            reduce(reduction, &mut got[to], u);
        });
        assert_eq!(got, expected, "{chain:?}\ngather {gather_values:?}\nscatter {scatter_values:?}");
        folded += 1;
        zeros += usize::from(members.contains(&ZERO_MEMBER));
        strided_ids += usize::from(index_stride != 1 && positions > 1);
    }
    // Folded, with a row of zeros, refused under `error`, by strided or broadcast gather
    // indices: measured 708, 35, 38, 308 of the 4,000.
    let counts = [folded, zeros, refused, strided_ids];
    assert!(counts.iter().zip([560, 25, 30, 245]).all(|(n, min)| *n >= min), "{counts:?}");
    // One dimension of gather indices along axis 0 of the data, then a scatter along axis 0
    // by one dimension of indices: anything else is refused, one difference at a time.
    let fold_of = |data: TensorDecl,
                   gather: (GatherForm, i64, &[usize]),
                   scatter: (GatherForm, i64, &[usize], &[usize])| {
        let chain = ChainDesc {
            data,
            stages: std::borrow::Cow::Owned(vec![
                StageDesc::Gather(GatherStage {
                    form: gather.0,
                    rules: GatherRules::OpenVino,
                    indices: decl(DType::I32, gather.2),
                    axis: gather.1,
                    batch_dims: None,
                    index_dims: None,
                    out_of_range: Some(OutOfRange::Clamp),
                }),
                StageDesc::Scatter(ScatterStage {
                    form: scatter.0,
                    rules: GatherRules::OpenVino,
                    into: decl(data.dtype, scatter.3),
                    indices: decl(DType::I32, scatter.2),
                    axis: scatter.1,
                    reduction: Some(Reduction::Add),
                    duplicates: None,
                    use_init_val: None,
                    out_of_range: Some(OutOfRange::Clamp),
                }),
            ]),
            output: None,
            dynamic_leading: None,
        };
        GatheredRows::of_chain(&chain.plan().unwrap())
    };
    let (axis, elements, nd) = (GatherForm::Axis, GatherForm::Elements, GatherForm::Nd);
    assert!(fold_of(decl(DType::F32, &[10, 4]), (axis, 0, &[6]), (axis, 0, &[6], &[5, 4])).is_some());
    // The gather along axis 1, by two dimensions of indices, of elements.
    assert!(fold_of(decl(DType::F32, &[10, 4]), (axis, 1, &[4]), (axis, 0, &[10], &[5, 4])).is_none());
    assert!(fold_of(decl(DType::F32, &[10, 4]), (axis, 0, &[2, 3]), (axis, 0, &[2], &[5, 3, 4])).is_none());
    assert!(fold_of(decl(DType::F32, &[10, 4]), (elements, 0, &[6, 4]), (axis, 0, &[6], &[5, 4])).is_none());
    // Bytes: rows of 8 (two words, so vectors of two) 12 apart start on a whole word but not
    // on a whole vector; 16 apart, they do.
    let bytes = |row| strided(DType::U8, &[3, 8], &[row, 1]);
    assert!(fold_of(bytes(12), (axis, 0, &[2]), (axis, 0, &[2], &[2, 8])).is_none());
    assert!(fold_of(bytes(16), (axis, 0, &[2]), (axis, 0, &[2], &[2, 8])).is_some());
    // The scatter along axis 1, by two dimensions of indices, ScatterND's.
    assert!(fold_of(decl(DType::F32, &[10, 4]), (axis, 0, &[6]), (axis, 1, &[4], &[6, 5])).is_none());
    assert!(fold_of(decl(DType::F32, &[10, 3, 4]), (axis, 0, &[6]), (axis, 0, &[6, 3], &[5, 4])).is_none());
    assert!(fold_of(decl(DType::F32, &[10, 4]), (axis, 0, &[6]), (nd, 0, &[6, 1], &[5, 4])).is_none());
}
