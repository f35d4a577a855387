//! The runtime front door and bad runtime input: every mistake is an `Err` that names what is
//! wrong, never a panic, a hang or an access outside a buffer.

use stridex::core::Window;
use stridex::{Device, Error, Gather, GatherRules, Operand, OutOfRange, RuleError, Slice, SliceForm};

#[test]
fn builder_matches_the_macro() {
    let built = Gather::onnx().data::<f32>(&[3, 2]).indices::<i64>(&[2, 2]).axis(0).build().unwrap();
    let macro_op = stridex::gather! { rules: onnx, data: f32[3, 2], indices: i64[2, 2], axis: 0 };
    assert_eq!(built.desc(), macro_op.desc());
    let data = [1.0, 1.2, 2.3, 3.4, 4.5, 5.7];
    assert_eq!(built.run(&data, &[0, 1, 1, 2]).unwrap(), macro_op.run(&data, &[0, 1, 1, 2]).unwrap());
}

#[test]
fn builder_rule_errors_are_values() {
    let e = Gather::onnx().data::<f32>(&[3, 2]).indices::<i64>(&[2]).axis(2).build().err().unwrap();
    assert_eq!(e, Error::Rule(RuleError::AxisOutOfRange { rules: GatherRules::Onnx, axis: 2, rank: 2 }));
    let e = Gather::onnx().data::<f32>(&[1; 9]).indices::<i64>(&[2]).build().err().unwrap();
    assert!(matches!(e, Error::Rule(RuleError::Rank { rank: 9, .. })), "{e}");
    let e = Gather::onnx().data::<f32>(&[3, 2]).indices::<u32>(&[2]).build().err().unwrap();
    assert!(matches!(e, Error::Rule(RuleError::IndexTypeNotAllowed { .. })), "{e}");
    let e = Slice::directml().input::<f32>(&[4, 4]).window(&[0, 2], &[4, 3], &[1, 1]).build().err().unwrap();
    assert!(e.to_string().contains("offset 2 + size 3 = 5 > input size 4"), "{e}");
    let e = Slice::directml()
        .input::<f32>(&[4])
        .window(&[usize::MAX], &[usize::MAX], &[i64::MIN])
        .build()
        .err()
        .unwrap();
    assert!(matches!(e, Error::Rule(RuleError::WindowPastInput { .. })), "{e}");
}

#[test]
fn builders_refuse_the_other_slice_forms_keys() {
    let e = Slice::directml()
        .input::<f32>(&[4])
        .window(&[0], &[4], &[1])
        .starts_ends(&[0], &[2])
        .build()
        .err()
        .unwrap();
    assert_eq!(
        e,
        Error::Rule(RuleError::KeyOfOtherForm { window: Window::Starts, form: SliceForm::DirectMl })
    );
    assert!(e.to_string().contains("`starts` belongs to ONNX Slice"), "{e}");
    let e = Slice::onnx()
        .input::<f32>(&[4])
        .starts_ends(&[0], &[2])
        .window(&[0], &[4], &[1])
        .build()
        .err()
        .unwrap();
    assert_eq!(e, Error::Rule(RuleError::KeyOfOtherForm { window: Window::Offsets, form: SliceForm::Onnx }));
    let e = Slice::onnx().input::<f32>(&[4]).starts_ends(&[0], &[2]).axes(&[0]).steps(&[1]).build();
    assert!(e.is_ok());
}

#[test]
fn op_types_must_match_the_descriptor() {
    let desc = Gather::onnx().data::<f32>(&[3]).indices::<i32>(&[2]).desc().unwrap();
    let e = stridex::GatherOp::<f32, i64>::new(desc).err().unwrap();
    assert!(matches!(e, Error::TypeMismatch { tensor: Operand::Indices, .. }), "{e}");
}

#[test]
fn short_buffers_name_the_tensor_and_the_lengths() {
    let op = stridex::gather! { data: f32[3, 2] strides [4, 1], indices: i64[2, 2] };
    // 1 + 2 * 4 + 1 * 1 = 10 elements.
    let e = op.run(&[0.0; 9], &[0; 4]).unwrap_err();
    assert_eq!(e, Error::BufferTooShort { tensor: Operand::Data, needed: 10, given: 9 });
    assert_eq!(
        e.to_string(),
        "buffer too short: `data` needs at least 10 elements for its layout, but 9 were given"
    );
    let e = op.run(&[0.0; 10], &[0; 3]).unwrap_err();
    assert_eq!(e, Error::BufferTooShort { tensor: Operand::Indices, needed: 4, given: 3 });
    let s = stridex::slice! { input: u8[4, 4], offsets: [0, 0], sizes: [4, 4], strides: [1, 1] };
    assert_eq!(
        s.run(&[0; 15]).unwrap_err(),
        Error::BufferTooShort { tensor: Operand::Input, needed: 16, given: 15 }
    );
}

#[test]
fn packed_buffers_must_match_exactly() {
    // 33 ids for an i64[32] op: an embedding lookup's batch-size bug, not silently dropped.
    let op = stridex::gather! { data: f32[8, 4], indices: i64[32] };
    let e = op.run(&[0.0; 32], &[0; 33]).unwrap_err();
    assert_eq!(e, Error::BufferTooLong { tensor: Operand::Indices, expected: 32, given: 33 });
    assert!(e.to_string().contains("pass exactly 32"), "{e}");
    // A strided layout may take a longer buffer: its span is what it needs.
    let strided = stridex::gather! { data: f32[2, 2] strides [4, 1], indices: i64[1] };
    assert_eq!(strided.run(&[1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0], &[1]).unwrap().data(), &[3.0, 4.0]);
}

#[test]
fn get_checks_rank_and_bounds() {
    let op = stridex::gather! { data: f32[3, 2], indices: i64[2] };
    let y = op.run(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 0]).unwrap();
    assert_eq!(op.output_shape().unwrap(), &[2, 2]);
    assert_eq!(y.get(&[1, 1]), Some(2.0));
    assert_eq!(y.get(&[0, 2]), None, "past a dimension");
    assert_eq!(y.get(&[2, 0]), None, "past the first dimension");
    assert_eq!(y.get(&[1]), None, "wrong rank");
}

#[test]
fn ops_are_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<stridex::GatherOp<f32, i64>>();
    shared::<stridex::SliceOp<u8>>();
}

#[test]
fn error_policy_names_the_first_bad_index_row_major() {
    let op = stridex::gather! { data: f32[5], indices: i64[2, 3] };
    let e = op.run(&[1.0; 5], &[0, 4, -5, 3, 5, -6]).unwrap_err();
    assert_eq!(e, Error::IndexOutOfRange { position: vec![1, 1], value: 5, axis_size: 5 });
    assert_eq!(
        e.to_string(),
        "index out of range: indices[1, 1] = 5 is outside [-5, 4] (out_of_range: error)"
    );
    // 64-bit values are checked in full: 2^32 + 1 is not 1.
    let e = op.run(&[1.0; 5], &[0, 1, (1 << 32) + 1, 0, 0, 0]).unwrap_err();
    assert_eq!(e, Error::IndexOutOfRange { position: vec![0, 2], value: (1 << 32) + 1, axis_size: 5 });
    let e = op.run(&[1.0; 5], &[0, 1, 2, -(1 << 32) - 1, 0, 0]).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { value: -4294967297, .. }), "{e}");
}

#[test]
fn wide_indices_are_never_truncated() {
    let data = [10, 11, 12, 13, 14];
    let zero = stridex::gather! { rules: openvino, data: i32[5], indices: i64[4] };
    let y = zero.run(&data, &[(1 << 32) + 1, -(1 << 32) + 1, -1, i64::MIN]).unwrap();
    assert_eq!(y.data(), &[0, 0, 14, 0]);
    let clamp = stridex::gather! { rules: directml, data: i32[5], indices: u64[4], index_dims: 1 };
    let y = clamp.run(&data, &[(1 << 32) + 1, u64::MAX, 2, 5]).unwrap();
    assert_eq!(y.data(), &[14, 14, 12, 14]);
    let clamp_signed = stridex::gather! { rules: directml, data: i32[5], indices: i64[4], index_dims: 1 };
    let y = clamp_signed.run(&data, &[-6, -(1 << 40), 1 << 40, -5]).unwrap();
    assert_eq!(y.data(), &[10, 10, 14, 10]);
    let u32_clamp = stridex::gather! { rules: directml, data: i32[5], indices: u32[3], index_dims: 1 };
    assert_eq!(u32_clamp.run(&data, &[u32::MAX, 0x8000_0000, 4]).unwrap().data(), &[14, 14, 14]);
}

#[test]
fn empty_tensors_give_empty_results_without_a_launch() {
    let op = stridex::gather! { data: f32[0, 3], indices: i64[2], axis: 1 };
    let y = op.run(&[], &[0, 1]).unwrap();
    assert_eq!((y.shape(), y.data()), (&[0, 2][..], &[][..]));
    assert!(op.kernel().unwrap().is_none());
    let op = stridex::gather! { data: f32[4, 3], indices: i64[0] };
    assert_eq!(op.run(&[0.0; 12], &[]).unwrap().shape(), &[0, 3]);
    let s = stridex::slice! { rules: onnx, input: f32[20, 10, 5], starts: [1000], ends: [1000], axes: [1] };
    assert_eq!(s.run(&[0.0; 1000]).unwrap().shape(), &[20, 0, 5]);
}

#[test]
fn an_empty_axis_has_nothing_to_read() {
    // data [0] with 3 indices: every index is out of range; the output is not empty.
    let err = stridex::gather! { data: f32[0], indices: i64[3] };
    assert_eq!(
        err.run(&[], &[0, 1, 2]).unwrap_err(),
        Error::IndexOutOfRange { position: vec![0], value: 0, axis_size: 0 }
    );
    let zero = stridex::gather! { rules: openvino, data: f32[0], indices: i64[3] };
    assert_eq!(zero.run(&[], &[0, 1, 2]).unwrap().data(), &[0.0; 3]);
    let clamp = stridex::gather! { rules: openvino, data: f32[0], indices: i64[3], out_of_range: clamp };
    assert_eq!(clamp.run(&[], &[0, -1, 7]).unwrap().data(), &[0.0; 3]);
}

#[test]
fn padded_and_permuted_outputs() {
    let op = stridex::gather! { data: u8[3, 2], indices: i64[2], output: [2, 2] strides [3, 1] };
    let y = op.run(&[1, 2, 3, 4, 5, 6], &[2, 0]).unwrap();
    // Row 0 at offsets 0..2, row 1 at 3..5; the gap reads zero.
    assert_eq!(y.data(), &[5, 6, 0, 1, 2]);
    assert_eq!(y.to_row_major(), vec![5, 6, 1, 2]);
    let op = stridex::gather! { data: f64[3, 2], indices: i64[2], output: [2, 2] strides [1, 2] };
    let y = op.run(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 0]).unwrap();
    assert_eq!(y.data(), &[5.0, 1.0, 6.0, 2.0]);
    assert_eq!(y.get(&[0, 1]), Some(6.0));
}

#[test]
fn guard_regions_stay_untouched() {
    let device = Device::default_device().unwrap();
    let op = stridex::gather! { data: u16[4, 3], indices: i32[5], output: [5, 3] strides [4, 1] };
    let data: Vec<u16> = (0..12).collect();
    let y = op.__run_guarded(device, &data, &[3, 0, -1, 2, 1]).unwrap();
    assert_eq!(y.to_row_major(), vec![9, 10, 11, 0, 1, 2, 9, 10, 11, 6, 7, 8, 3, 4, 5]);
    let s = stridex::slice! { input: i8[1, 1, 4, 4], offsets: [0, 0, 0, 1], sizes: [1, 1, 4, 3], strides: [1, 1, -2, 2] };
    let input: Vec<i8> = (1..=16).collect();
    assert_eq!(s.__run_guarded(device, &input).unwrap().data(), &[14, 16, 6, 8]);
}

#[test]
fn policy_override() {
    let op = stridex::gather! { rules: onnx, data: i32[3], indices: i64[2], out_of_range: zero };
    assert_eq!(op.plan().unwrap().out_of_range, OutOfRange::Zero);
    assert_eq!(op.run(&[7, 8, 9], &[5, -1]).unwrap().data(), &[0, 9]);
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// An edge-case-heavy integer.
    fn int(&mut self) -> i64 {
        const INTERESTING: [i64; 13] =
            [0, 1, 2, 3, -1, -2, 7, 9, i64::MAX, i64::MIN, 1 << 32, -(1 << 33), 1 << 20];
        INTERESTING[(self.next() % 13) as usize]
    }

    fn list(&mut self, n: usize) -> Vec<i64> {
        (0..n).map(|_| self.int()).collect()
    }

    fn sizes(&mut self) -> Vec<usize> {
        let n = (self.next() % 10) as usize;
        self.list(n).iter().map(|v| v.unsigned_abs() as usize).collect()
    }
}

/// Random, mostly invalid, runtime descriptors: building returns `Ok` or `Err`, never panics.
/// An op that builds describes itself and sizes its buffers; a refusal names its rule. Both
/// outcomes must occur for each builder, or the generator explores nothing.
#[test]
fn hostile_runtime_descriptors_never_panic() {
    let mut r = XorShift(0x2545_F491_4F6C_DD1D);
    // (built, refused) per builder: gather, DirectML slice, ONNX slice.
    let mut outcomes = [(0, 0); 3];
    fn tally<K: stridex::OpKind, T, I>(
        outcome: &mut (usize, usize),
        built: Result<stridex::Op<K, T, I>, Error>,
        output: Operand,
    ) {
        match built {
            Ok(op) => {
                outcome.0 += 1;
                assert!(!op.describe().is_empty());
                match op.buffer_bytes(output) {
                    Ok(_) | Err(Error::CountNeeded { .. }) => {}
                    Err(e) => panic!("{op:?} built, but cannot size its output: {e}"),
                }
            }
            Err(e) => {
                outcome.1 += 1;
                assert!(matches!(e, Error::Rule(_)), "a refusal is a rule's: {e}");
                assert!(!e.to_string().is_empty());
            }
        }
    }
    for _ in 0..3000 {
        let (d, i, o) = (r.sizes(), r.sizes(), r.sizes());
        let strides: Vec<usize> = r.list(d.len()).iter().map(|v| v.unsigned_abs() as usize).collect();
        let rules =
            [GatherRules::Onnx, GatherRules::OpenVino, GatherRules::DirectMl][(r.next() % 3) as usize];
        let mut g =
            Gather::new(rules).data_strided::<f32>(&d, Some(&strides)).indices::<i64>(&i).axis(r.int());
        if r.next() % 2 == 0 {
            g = g.batch_dims(r.int());
        }
        if r.next() % 2 == 0 {
            g = g.index_dims(r.int().unsigned_abs() as usize);
        }
        if r.next() % 2 == 0 {
            g = g.output(&o, None);
        }
        tally(&mut outcomes[0], std::hint::black_box(g.build()), Operand::Output);
        let offsets: Vec<usize> = r.list(d.len()).iter().map(|v| v.unsigned_abs() as usize).collect();
        let steps = r.list(d.len());
        tally(
            &mut outcomes[1],
            Slice::directml().input::<u8>(&d).window(&offsets, &o, &steps).build(),
            Operand::Output,
        );
        let (starts, ends, axes, steps) =
            (r.list(i.len()), r.list(i.len()), r.list(i.len()), r.list(i.len()));
        let onnx =
            Slice::onnx().input::<u8>(&d).starts_ends(&starts, &ends).axes(&axes).steps(&steps).build();
        tally(&mut outcomes[2], onnx, Operand::Output);
    }
    for (builder, (built, refused)) in ["gather", "DirectML slice", "ONNX slice"].iter().zip(outcomes) {
        assert!(built > 0 && refused > 0, "{builder}: {built} built, {refused} refused");
    }
}

impl XorShift {
    /// A size that is mostly small, so that random shapes often agree, and sometimes past
    /// every limit.
    fn small(&mut self) -> usize {
        const SIZES: [usize; 16] = [0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 1, 2, 3, 5, 1 << 40];
        SIZES[(self.next() % 16) as usize]
    }

    fn small_sizes(&mut self) -> Vec<usize> {
        let rank = (self.next() % 4) as usize;
        (0..rank).map(|_| self.small()).collect()
    }

    fn small_int(&mut self) -> i64 {
        match self.next() % 8 {
            0 => self.int(),
            _ => (self.next() % 5) as i64 - 2,
        }
    }
}

/// The index family's builders (`Gather::elements`, `Gather::nd`, `Scatter` in its three
/// forms) on random small and hostile shapes: building returns `Ok` or a rule's `Err`, never
/// panics; a scatter's updates are most often the matching gather's output, so that some build.
/// Small ops that build then run on the device with hostile index values (negative, past the
/// end, repeated): a result or an error that names the index, never a panic.
#[test]
fn hostile_index_family_descriptors_never_panic() {
    use stridex::{Duplicates, Reduction, Scatter};
    let mut r = XorShift(0x9E37_79B9_7F4A_7C15);
    // (built, refused) per builder: GatherElements, GatherND, scatter, ScatterElements, ScatterND.
    let mut outcomes = [(0usize, 0usize); 5];
    let mut ran = [0usize; 5];
    let mut tally = |k: usize, built: Result<(), Error>| match built {
        Ok(()) => outcomes[k].0 += 1,
        Err(e) => {
            assert!(matches!(e, Error::Rule(_)), "a refusal is a rule's: {e}");
            assert!(!e.to_string().is_empty());
            outcomes[k].1 += 1;
        }
    };
    let run_error = |e: Error| {
        assert!(
            matches!(e, Error::IndexOutOfRange { .. } | Error::DuplicateIndex { .. }),
            "a run of a built op fails only on its indices: {e}"
        );
    };
    // A built op's shapes are packed and within its limits: their products hold.
    let elements = |sizes: &[usize]| sizes.iter().product::<usize>();
    let policies = [OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp, OutOfRange::Skip];
    let reductions = [Reduction::None, Reduction::Add, Reduction::Mul, Reduction::Max, Reduction::Min];
    for _ in 0..4000 {
        let (d, i) = (r.small_sizes(), r.small_sizes());
        let rules =
            [GatherRules::Onnx, GatherRules::OpenVino, GatherRules::DirectMl][(r.next() % 3) as usize];
        let (axis, batch_dims) = (r.small_int(), r.small_int());
        let policy = policies[(r.next() % 4) as usize];
        let values: Vec<i32> =
            (0..64).map(|_| [0, 1, 2, -1, -3, 5, i32::MAX, i32::MIN][(r.next() % 8) as usize]).collect();
        for (k, nd) in [(0, false), (1, true)] {
            let mut g = Gather::new(rules).data::<f32>(&d).indices::<i32>(&i).out_of_range(policy);
            g = if nd { g.nd().batch_dims(batch_dims) } else { g.elements().axis(axis) };
            let op = g.build();
            tally(k, op.as_ref().map(drop).map_err(Clone::clone));
            if let Ok(op) = op {
                assert!(!op.describe().is_empty());
                let (n, len) = (elements(&i), elements(&d));
                if n <= values.len() && len <= 64 && ran[k] < 60 {
                    ran[k] += 1;
                    let data: Vec<f32> = (0..len).map(|v| v as f32).collect();
                    op.run(&data, &values[..n]).map(drop).unwrap_or_else(run_error);
                }
            }
        }
        for (k, form) in [(2, 0), (3, 1), (4, 2)] {
            // The updates: the matching gather's output, or (one time in four) random sizes.
            let mut map = Gather::new(rules).data::<f32>(&d).indices::<i32>(&i);
            map = match form {
                0 => map.axis(axis),
                1 => map.elements().axis(axis),
                _ => map.nd(),
            };
            let u = match (r.next() % 4, map.build()) {
                (0, _) | (_, Err(_)) => r.small_sizes(),
                (_, Ok(op)) => op.output_shape().unwrap().to_vec(),
            };
            let mut s = Scatter::new(rules).data::<f32>(&d).indices::<i32>(&i).updates(&u);
            s = match form {
                0 => s.axis(axis),
                1 => s.elements().axis(axis),
                _ => s.nd(),
            };
            s = s.out_of_range(policy).reduction(reductions[(r.next() % 5) as usize]);
            if r.next() % 4 == 0 {
                s = s.duplicates(Duplicates::Error);
            }
            if r.next() % 8 == 0 {
                s = s.use_init_val(false);
            }
            let op = s.build();
            tally(k, op.as_ref().map(drop).map_err(Clone::clone));
            if let Ok(op) = op {
                assert!(!op.describe().is_empty());
                let (n, len, updates) = (elements(&i), elements(&d), elements(&u));
                if n <= values.len() && len <= 64 && updates <= 64 && ran[k] < 60 {
                    ran[k] += 1;
                    let data: Vec<f32> = (0..len).map(|v| v as f32).collect();
                    let rows: Vec<f32> = (0..updates).map(|v| 100.0 + v as f32).collect();
                    op.run(&data, &values[..n], &rows).map(drop).unwrap_or_else(run_error);
                }
            }
        }
    }
    let names = ["GatherElements", "GatherND", "scatter", "ScatterElements", "ScatterND"];
    for ((builder, (built, refused)), ran) in names.iter().zip(outcomes).zip(ran) {
        assert!(
            built > 0 && refused > 0 && ran > 0,
            "{builder}: {built} built, {refused} refused, {ran} ran"
        );
    }
}

/// Edge arguments of the run-time helpers (found by a review of what user numbers reach):
/// each is an `Err` naming the mistake, where each once panicked or aborted.
#[test]
fn edge_arguments_of_the_helpers_are_errs() {
    use stridex::{buffers, Chain, SliceRange};
    let client = Device::default_device().unwrap().client();
    // An upload larger than any op's buffer: refused, not allocated.
    let e = buffers::upload(client, &[1u8, 2, 3], usize::MAX).unwrap_err();
    assert!(matches!(e, Error::UploadTooLarge { bytes: usize::MAX, .. }), "{e}");
    let e = buffers::upload(client, &[0f32; 4], 1 << 40).unwrap_err();
    assert!(e.to_string().contains("buffer_bytes"), "{e}");
    let h = buffers::upload(client, &[7u16, 8, 9], 0).unwrap();
    assert_eq!(buffers::read::<u16>(client, &h, 3).unwrap(), [7, 8, 9]);
    // More elements than any buffer holds: their bytes overflow no count.
    let e = buffers::read::<f64>(client, &h, usize::MAX).unwrap_err();
    assert!(matches!(e, Error::HandleTooSmall { needed: usize::MAX, given: 8, .. }), "{e}");
    // A handle that starts off the device's alignment (CubeCL's wgpu device panicked on it).
    let op = stridex::gather! { rules: openvino, data: f32[4, 8], indices: i32[3] };
    let alignment = client.properties().memory.alignment;
    let table = buffers::upload(client, &[0.5f32; 32], 128 + alignment as usize).unwrap();
    let ids = buffers::upload(client, &[2i32, 1, 0], 12).unwrap();
    let out = client.empty(op.buffer_bytes(Operand::Output).unwrap());
    if alignment > 4 {
        let e = op.launch(client, &table.clone().offset_start(4), &ids, &out).unwrap_err();
        assert!(matches!(e, Error::HandleMisaligned { tensor: Operand::Data, offset: 4, .. }), "{e}");
    }
    // At the alignment, a view is fine (its rows past the table's 32 values are zeros).
    op.launch(client, &table.offset_start(alignment), &ids, &out).unwrap();
    let rows = buffers::read::<f32>(client, &out, 24).unwrap();
    let row =
        |r: usize| (0..8).map(move |c| if (r * 8 + c) * 4 + (alignment as usize) < 128 { 0.5 } else { 0.0 });
    assert_eq!(rows, [2, 1, 0].into_iter().flat_map(row).collect::<Vec<f32>>());
    // A chain's index buffer past its last gather.
    let op = stridex::chain! { data: f32[4, 3], gather { indices: i32[2] }, slice { s[.., 1..] } };
    let e = op.index_buffer_bytes(usize::MAX).unwrap_err();
    assert!(matches!(e, Error::IndexBufferCount { expected: 1, given: usize::MAX }), "{e}");
    // `_` on a scalar, with a slice stage lowered against it: a rule's `Err` at `build`.
    for slice in [
        Slice::directml().ranges(&[SliceRange::FULL]),
        Slice::onnx().ranges(&[]),
        Slice::directml().window(&[0], &[1], &[1]),
    ] {
        let e = Chain::data::<f32>(&[]).dynamic_leading().slice(slice).build().unwrap_err();
        assert!(matches!(&e, Error::Rule(_) | Error::InStage { .. }), "{e:?}");
    }
}

/// `launch` on handles made with the same CubeCL client: sizes are checked, a repeated launch
/// returns without waiting, and the error policy still names the bad index.
#[test]
fn launch_on_your_own_buffers() {
    launch_on(Device::default_device().unwrap().client());
}

fn launch_on(client: &stridex::cubecl::client::Client) {
    let op = stridex::gather! { rules: openvino, data: f32[4, 8], indices: i32[3] };
    let data: Vec<f32> = (0..32).map(|v| v as f32).collect();
    let data_h = client.create_from_slice(&data.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
    let idx_h = client.create_from_slice(&[2i32, -1, 9].map(i32::to_le_bytes).concat());
    let out_bytes = op.buffer_bytes(Operand::Output).unwrap();
    assert_eq!(out_bytes, 3 * 8 * 4);
    let small = client.empty(out_bytes - 4);
    assert_eq!(
        op.launch(client, &data_h, &idx_h, &small).unwrap_err(),
        Error::HandleTooSmall { tensor: Operand::Output, needed: out_bytes, given: out_bytes - 4 }
    );
    let out = client.empty(out_bytes);
    op.launch(client, &data_h, &idx_h, &out).unwrap();
    op.launch(client, &data_h, &idx_h, &out).unwrap();
    let got: Vec<f32> =
        client.read_one(out).unwrap().chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    let mut expected: Vec<f32> = (16..24).chain(24..32).map(|v| v as f32).collect();
    expected.extend([0.0; 8]);
    assert_eq!(got, expected);

    let strict = stridex::gather! { rules: onnx, data: f32[4, 8], indices: i32[3] };
    let out = client.empty(out_bytes);
    assert_eq!(
        strict.launch(client, &data_h, &idx_h, &out).unwrap_err(),
        Error::IndexOutOfRange { position: vec![2], value: 9, axis_size: 4 }
    );
}

/// Vectorized kernels (4 words per invocation) with padded outputs: the padding is skipped, the
/// rows land at their strides.
#[test]
fn vectorized_rows_into_a_padded_output() {
    let op = stridex::gather! { data: f32[4, 8], indices: i64[2], output: [2, 8] strides [12, 1] };
    assert!(
        matches!(&op.kernel().unwrap().unwrap().walk, stridex::core::kernel::Walk::Rows(w) if w.line == 4)
    );
    let data: Vec<f32> = (0..32).map(|v| v as f32).collect();
    let y = op.run(&data, &[3, 1]).unwrap();
    let mut expected: Vec<f32> = (24..32).map(|v| v as f32).collect();
    expected.extend([0.0; 4]);
    expected.extend((8..16).map(|v| v as f32));
    assert_eq!(y.data(), expected.as_slice());

    let s = stridex::slice! { input: u16[4, 16], offsets: [0, 0], sizes: [4, 16], strides: [-1, 1], output: [4, 16] strides [24, 1] };
    assert!(
        matches!(&s.kernel().unwrap().unwrap().walk, stridex::core::kernel::Walk::Rows(w) if w.line == 4)
    );
    let input: Vec<u16> = (0..64).collect();
    let y = s.run(&input).unwrap();
    assert_eq!(y.get(&[0, 3]), Some(51));
    assert_eq!(y.get(&[3, 15]), Some(15));
    assert_eq!(&y.data()[16..24], &[0; 8]);
    assert_eq!(y.to_row_major(), (0..4).rev().flat_map(|r| (r * 16)..(r * 16 + 16)).collect::<Vec<u16>>());
}

#[test]
fn too_many_strides_is_a_strides_error() {
    let e = Gather::onnx()
        .data_strided::<f32>(&[3, 2], Some(&[1; 9]))
        .indices::<i64>(&[2])
        .build()
        .err()
        .unwrap();
    assert_eq!(e, Error::Rule(RuleError::StridesLen { tensor: Operand::Data, sizes: 2, strides: 9 }));
}

#[test]
fn builders_take_a_directml_feature_level() {
    use stridex::{FeatureLevel, Gather, Slice};
    let old = Gather::directml()
        .data::<i32>(&[1, 1, 4, 4])
        .indices::<u32>(&[1, 1, 1, 2])
        .axis(2)
        .index_dims(1)
        .feature_level(FeatureLevel::L1_0);
    match old.build() {
        Err(Error::Rule(stridex::RuleError::FeatureLevel { lowest, .. })) => {
            assert_eq!(lowest, Some(FeatureLevel::L2_1))
        }
        other => panic!("{other:?}"),
    }
    let ok = old.feature_level(FeatureLevel::L2_1).build().unwrap();
    let y = ok.run(&(0..16).collect::<Vec<i32>>(), &[3, 0]).unwrap();
    assert_eq!(y.data(), [12, 13, 14, 15, 0, 1, 2, 3]); // rows 3 and 0
    let slice = Slice::directml()
        .input::<f32>(&[4, 4])
        .window(&[0, 0], &[2, 2], &[1, 1])
        .feature_level(FeatureLevel::L2_1)
        .build();
    assert!(matches!(slice, Err(Error::Rule(stridex::RuleError::FeatureLevel { .. }))));
}

#[test]
fn the_slice_builder_takes_ranges() {
    use stridex::{Slice, SliceRange};
    let op = Slice::directml()
        .input::<f32>(&[20, 10, 5])
        .ranges(&[SliceRange::FULL, SliceRange::new(1, 9).step(2), SliceRange::FULL.step(-1)])
        .build()
        .unwrap();
    let same = stridex::slice!(input: f32[20, 10, 5], s[.., 1..9;2, ..;-1]);
    assert_eq!(op.plan().unwrap(), same.plan().unwrap());
    let e = Slice::onnx().input::<f32>(&[4]).ranges(&[SliceRange::FULL]).build().unwrap_err();
    assert!(matches!(e, Error::Rule(stridex::RuleError::RangesWith { other: "rules: onnx" })), "{e}");
}

/// `run_into` writes what `run` returns into the caller's buffer, reused across calls and
/// counts; a buffer of the wrong length is an `Err` before anything runs.
#[test]
fn run_into_fills_the_callers_buffer() {
    let table: Vec<f32> = (0..40).map(|v| v as f32).collect();
    let gather = stridex::gather! { data: f32[10, 4], indices: i64[_, 2] };
    let mut out = vec![0.0f32; 3 * 2 * 4];
    for ids in [[1i64, 2, 3, 4, 5, 6], [9, 0, 8, 1, 7, 2]] {
        gather.run_into(&table, &ids, &mut out).unwrap();
        assert_eq!(out, gather.run(&table, &ids).unwrap().data());
    }
    let mut short = vec![0.0f32; 8];
    assert_eq!(
        gather.run_into(&table, &[1, 2, 3, 4, 5, 6], &mut short).unwrap_err(),
        Error::BufferTooShort { tensor: Operand::Output, needed: 24, given: 8 }
    );
    // A padded output: the buffer spans its strides, as `run`'s tensor does.
    let slice = stridex::slice! { input: u8[4, 6], s[1..3, ..], output: [2, 6] strides [8, 1] };
    let input: Vec<u8> = (0..24).collect();
    let mut out = vec![7u8; 14];
    slice.run_into(&input, &mut out).unwrap();
    assert_eq!(out, slice.run(&input).unwrap().data());
    assert_eq!(
        slice.run_into(&input, &mut [0u8; 16]).unwrap_err(),
        Error::BufferTooLong { tensor: Operand::Output, expected: 14, given: 16 }
    );
    let chain =
        stridex::chain! { data: f32[10, 4], gather { indices: i32[3], axis: 0 }, slice { s[.., ..;-1] } };
    let mut out = vec![0.0f32; 12];
    chain.run_into(&table, (&[3, 1, 4],), &mut out).unwrap();
    assert_eq!(out, chain.run(&table, (&[3, 1, 4],)).unwrap().data());
}

/// A buffer of another device given to `launch` (wgpu's to the CPU runtime's client) is an
/// `Err` naming the buffer; CubeCL panicked on it.
#[cfg(feature = "cpu")]
#[test]
fn another_devices_buffer_is_an_err() {
    let (Ok(wgpu), Ok(cpu)) = (Device::open(stridex::Backend::Wgpu), Device::open(stridex::Backend::Cpu))
    else {
        return;
    };
    let (wgpu, cpu) = (wgpu.client(), cpu.client());
    let op = stridex::gather! { rules: openvino, data: f32[4, 8], indices: i32[3] };
    let table = stridex::buffers::upload(wgpu, &[0.5f32; 32], 128).unwrap();
    let ids = stridex::buffers::upload(cpu, &[2i32, 1, 0], 12).unwrap();
    let out = cpu.empty(op.buffer_bytes(Operand::Output).unwrap());
    let e = op.launch(cpu, &table, &ids, &out).unwrap_err();
    assert_eq!(e, Error::ForeignHandle { tensor: Operand::Data });
    assert!(e.to_string().contains("another client"), "{e}");
    let e = stridex::buffers::read::<f32>(wgpu, &out, 24).unwrap_err();
    assert!(matches!(e, Error::ForeignHandle { .. }), "{e}");
    let table = stridex::buffers::upload(cpu, &[0.5f32; 32], 128).unwrap();
    op.launch(cpu, &table, &ids, &out).unwrap();
    assert_eq!(stridex::buffers::read::<f32>(cpu, &out, 24).unwrap(), [0.5; 24]);
}
