//! A leading dimension written `_` (`indices: i64[_, 4]`, `input: f32[_, 3, 8, 8]`): one op
//! and one kernel serve every count, read from the buffer's length. Values against the naive
//! reference at many counts (0 and 1 included), on macro, builder and random descriptors; and
//! the run-time errors a count can cause.

use crate::common::generate::{self, Rng};
use crate::common::props::{cases, choices, device, FromI128};
use crate::common::reference::{self as r, Outcome, Rules};
use proptest::prelude::*;
use stridex::core::kernel::Walk;
use stridex::{DType, Element, Error, Gather, GatherOp, Operand, Slice, SliceOp};

stridex::gather! { static EMBED; data: f32[50, 16], indices: i64[_, 4] }

#[test]
fn a_gather_serves_every_count() {
    assert!(EMBED.is_dynamic());
    let table: Vec<f32> = (0..50 * 16).map(|v| v as f32).collect();
    for count in [0usize, 1, 2, 3, 7, 33] {
        let ids: Vec<i64> =
            (0..count * 4).map(|i| ((i * 7 + 3) % 50) as i64 - if i % 5 == 0 { 50 } else { 0 }).collect();
        let y = EMBED.run(&table, &ids).unwrap();
        assert_eq!(y.shape(), [count, 4, 16]);
        assert_eq!(EMBED.output_shape_at(count).unwrap(), [count, 4, 16]);
        let expected: Vec<f32> = ids
            .iter()
            .flat_map(|&i| {
                let row = i.rem_euclid(50) as usize;
                table[row * 16..row * 16 + 16].to_vec()
            })
            .collect();
        assert_eq!(y.data(), expected, "count {count}");
    }
    // One kernel: the walk it is specialized on does not name a count.
    let Some(Walk::Rows(w)) = EMBED.kernel().unwrap().map(|k| &k.walk) else { panic!("a row walk") };
    assert!(w.dynamic);
    assert_eq!(w.specialized().invocations, 0);
}

/// A gather_elements after the chain's `_` count picks from each of the count's rows, so its
/// indices lead with the count too (`indices: i32[_, 3]`): each token's three chosen columns of
/// its logits, and the same after an embedding lookup counted by its ids; one kernel for every
/// count, values against the host at each.
#[test]
fn a_gather_elements_after_the_count_takes_it_on_its_indices() {
    let picks = stridex::chain! {
        data: f32[_, 8],
        gather_elements { indices: i32[_, 3], axis: 1 },
    };
    let looked_up = stridex::chain! {
        data: f32[50, 8],
        gather { indices: i32[_], axis: 0 },
        gather_elements { indices: i32[_, 3], axis: 1 },
    };
    assert!(picks.is_fused().unwrap() && looked_up.is_fused().unwrap());
    // `describe` names each tensor the count sizes: the carrier, then the picks' indices.
    let text = looked_up.describe();
    assert!(text.contains("stage 1's indices [_]: the leading size `_` is the count"), "{text}");
    assert!(text.contains("stage 2's indices [_, 3]: their leading size is the same count"), "{text}");
    let text = picks.describe();
    assert!(text.contains("data [_, 8]: the leading size `_` is the count"), "{text}");
    assert!(text.contains("stage 1's indices [_, 3]: their leading size is the same count"), "{text}");
    let table: Vec<f32> = (0..400).map(|v| v as f32 * 0.5).collect();
    for n in [1usize, 4, 0, 37] {
        let logits = &table[..n * 8];
        let cols: Vec<i32> = (0..n * 3).map(|p| ((p * 5 + p / 3) % 8) as i32).collect();
        let want: Vec<f32> = (0..n * 3).map(|p| logits[p / 3 * 8 + cols[p] as usize]).collect();
        let y = picks.run(logits, (&cols,)).unwrap();
        assert_eq!((y.shape(), y.data()), (&[n, 3][..], &want[..]), "count {n}");
        let ids: Vec<i32> = (0..n as i32).map(|i| (i * 13 + 7) % 50).collect();
        let want: Vec<f32> = (0..n * 3).map(|p| table[ids[p / 3] as usize * 8 + cols[p] as usize]).collect();
        let y = looked_up.run(&table, (&ids, &cols)).unwrap();
        assert_eq!((y.shape(), y.data()), (&[n, 3][..], &want[..]), "looked up, count {n}");
        assert_eq!(picks.output_shape_at(n).unwrap(), [n, 3]);
    }
    // The picks must be the count's rows; one out of range is an `Err` naming it.
    let e = picks.run(&table[..16], (&[0; 9],)).unwrap_err();
    assert!(matches!(e, Error::BufferTooLong { .. } | Error::InStage { .. }), "{e}");
    let e = picks.run(&table[..16], (&[0, 1, 2, 3, 9, 5],)).unwrap_err();
    assert!(e.to_string().contains('9'), "{e}");
    // The builder's form: the stage's indices take the count with `dynamic_leading`.
    let stage = || stridex::Gather::onnx().elements().indices::<i32>(&[0, 3]).axis(1);
    let built =
        stridex::Chain::data::<f32>(&[0, 8]).dynamic_leading().gather(stage().dynamic_leading()).build();
    let y = built.unwrap().run(&table[..16], (&[7, 0, 1, 2, 3, 4],)).unwrap();
    assert_eq!(y.data(), [3.5, 0.0, 0.5, 5.0, 5.5, 6.0]);
    let fixed = stridex::Chain::data::<f32>(&[0, 8]).dynamic_leading().gather(stage()).build();
    let e = fixed.unwrap_err().to_string();
    assert!(e.contains("write `_` there"), "{e}");
    // A gather_nd cannot follow the count: its own rule, not a second count's.
    let nd = stridex::Gather::openvino().nd().indices::<i32>(&[0, 1]).dynamic_leading();
    let e = stridex::Chain::data::<f32>(&[0, 8, 2]).dynamic_leading().gather(nd).build().unwrap_err();
    assert!(e.to_string().contains("gather_nd: after the chain's `_` count"), "{e}");
}

/// What a `_` count leaves alone is answered without one, the same as at every count: a
/// gather's data, a scatter's data and output (and so its shape), the destination of a chain
/// that ends in a scatter, a chain's data where a gather's indices carry the count. What the
/// count sizes is `Err(CountNeeded)`.
#[test]
fn what_a_count_leaves_alone_needs_no_count() {
    let kv = stridex::scatter! {
        data: f32[6, 2, 4], indices: i32[_], updates: f32[_, 2, 4], axis: 0, out_of_range: skip
    };
    let into_cache = stridex::chain! {
        data: f32[_, 3, 4, 8],
        slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
        scatter { into: f32[16, 1, 4, 8], indices: i32[_], axis: 0, out_of_range: skip },
    };
    let counts = [0, 1, 3, 1000];
    let same = |bytes: Result<usize, Error>, at: &dyn Fn(usize) -> Result<usize, Error>| {
        let bytes = bytes.unwrap();
        for n in counts {
            assert_eq!(at(n).unwrap(), bytes, "at {n}");
        }
        bytes
    };
    assert_eq!(same(EMBED.buffer_bytes(Operand::Data), &|n| EMBED.buffer_bytes_at(n, Operand::Data)), 3200);
    assert_eq!(same(kv.buffer_bytes(Operand::Data), &|n| kv.buffer_bytes_at(n, Operand::Data)), 192);
    assert_eq!(same(kv.buffer_bytes(Operand::Output), &|n| kv.buffer_bytes_at(n, Operand::Output)), 192);
    assert_eq!(kv.output_shape().unwrap(), &[6, 2, 4]);
    let bytes =
        same(into_cache.buffer_bytes(Operand::Output), &|n| into_cache.buffer_bytes_at(n, Operand::Output));
    assert_eq!(bytes, 16 * 32 * 4);
    assert_eq!(into_cache.output_shape().unwrap(), &[16, 1, 4, 8]);
    let bytes =
        same(LAST_TOKENS.buffer_bytes(Operand::Data), &|n| LAST_TOKENS.buffer_bytes_at(n, Operand::Data));
    assert_eq!(bytes, 50 * 8 * 4);
    // Counted by a gather's indices and ending in a scatter: the stages before it run as a
    // chain of their own, its kernel made at each count; bytes that fill no whole word.
    let combine = stridex::chain! {
        data: u8[10, 9],
        gather { indices: i32[_], axis: 0 },
        slice { rules: onnx, starts: [1], ends: [9], axes: [1] },
        scatter { into: u8[5, 8], indices: i32[_], axis: 0 },
    };
    assert!(!combine.is_fused().unwrap());
    let bytes = same(combine.buffer_bytes(Operand::Data), &|n| combine.buffer_bytes_at(n, Operand::Data));
    assert!(bytes >= 90 && bytes % 4 == 0, "{bytes}");
    let bytes = same(combine.buffer_bytes(Operand::Output), &|n| combine.buffer_bytes_at(n, Operand::Output));
    assert!(bytes >= 40 && bytes % 4 == 0, "{bytes}");
    assert_eq!(combine.output_shape().unwrap(), &[5, 8]);
    let needed = |call| Error::CountNeeded { call };
    assert_eq!(kv.buffer_bytes(Operand::Indices).unwrap_err(), needed("buffer_bytes"));
    assert_eq!(kv.buffer_bytes(Operand::Updates).unwrap_err(), needed("buffer_bytes"));
    assert_eq!(into_cache.buffer_bytes(Operand::Data).unwrap_err(), needed("buffer_bytes"));
    assert_eq!(LAST_TOKENS.output_shape().unwrap_err(), needed("output_shape"));
}

#[test]
fn counts_come_from_whole_rows() {
    let table = vec![0.0f32; 50 * 16];
    assert_eq!(
        EMBED.run(&table, &[1, 2, 3, 4, 5]).unwrap_err(),
        Error::PartialRow { tensor: Operand::Indices, given: 5, row: 4 }
    );
    assert_eq!(EMBED.output_shape().unwrap_err(), Error::CountNeeded { call: "output_shape" });
    assert_eq!(EMBED.buffer_bytes(Operand::Output).unwrap_err(), Error::CountNeeded { call: "buffer_bytes" });
    assert_eq!(EMBED.buffer_bytes_at(3, Operand::Output).unwrap(), 3 * 4 * 16 * 4);
    assert_eq!(EMBED.buffer_bytes_at(3, Operand::Indices).unwrap(), 3 * 4 * 8);
    // The data's length is still checked against its fixed shape.
    assert!(matches!(EMBED.run(&table[1..], &[0; 4]).unwrap_err(), Error::BufferTooShort { .. }));
    // A count whose buffers 32-bit offsets cannot address is an Err, decided at run time.
    for big in [1usize << 31, 1 << 40] {
        assert!(
            matches!(EMBED.output_shape_at(big), Err(Error::Rule(stridex::RuleError::TooLarge { .. }))),
            "{big}"
        );
        assert!(matches!(EMBED.buffer_bytes_at(big, Operand::Output), Err(Error::Rule(_))), "{big}");
    }
    let message = Error::PartialRow { tensor: Operand::Indices, given: 5, row: 4 }.to_string();
    assert!(message.contains("multiple of 4"), "{message}");
}

#[test]
fn an_index_out_of_range_names_its_row() {
    let op = stridex::gather! { rules: onnx, data: f32[5, 4], indices: i32[_, 2] };
    let err = op.run(&[0.0; 20], &[0, 1, 2, 3, 4, 5]).unwrap_err();
    assert_eq!(err, Error::IndexOutOfRange { position: vec![2, 1], value: 5, axis_size: 5 });
    let clamp = stridex::gather! { rules: onnx, data: f32[5, 4], indices: i32[_, 2], out_of_range: clamp };
    let data: Vec<f32> = (0..20).map(|v| v as f32).collect();
    let y = clamp.run(&data, &[9, -9]).unwrap();
    assert_eq!(y.data(), [16.0, 17.0, 18.0, 19.0, 0.0, 1.0, 2.0, 3.0]);
}

#[test]
fn batch_crops_of_any_count() {
    let op = stridex::slice! {
        input: f32[_, 3, 8, 8], offsets: [0, 0, 2, 1], sizes: [_, 3, 4, 6], strides: [1, 1, 1, 2]
    };
    for count in [1usize, 2, 5] {
        let x: Vec<f32> = (0..count * 3 * 64).map(|v| v as f32).collect();
        let y = op.run(&x).unwrap();
        assert_eq!(y.shape(), [count, 3, 4, 3]);
        let mut expected = vec![];
        for n in 0..count {
            for c in 0..3 {
                for h in 2..6 {
                    for w in [1, 3, 5] {
                        expected.push(x[((n * 3 + c) * 8 + h) * 8 + w]);
                    }
                }
            }
        }
        assert_eq!(y.data(), expected, "count {count}");
    }
    assert_eq!(op.run(&[]).unwrap().shape(), [0, 3, 4, 3]);
}

/// A count with windows read backwards inside it (DirectML's `CopyStart` at each reversed
/// window's end). On CUDA this walk once faulted with an illegal address where the same window
/// at a fixed count ran (bench/RESULTS-cuda.md), so it is a test of its own.
#[test]
fn a_count_reads_windows_backwards() {
    let op = stridex::slice! {
        input: i32[_, 2, 2, 3, 4], offsets: [0, 0, 0, 0, 0], sizes: [_, 2, 2, 1, 2], strides: [1, 1, -1, 2, -3]
    };
    for count in [1usize, 2, 5] {
        let x: Vec<i32> = (0..count as i32 * 48).collect();
        let y = op.run(&x).unwrap();
        assert_eq!(y.shape(), [count, 2, 2, 1, 1]);
        // Dim 2 from its window's end (1, then 0); dim 4's one element at 0 + (2 - 1).
        let expected: Vec<i32> = (0..count as i32)
            .flat_map(|n| (0..2).flat_map(move |a| [1, 0].map(move |b| ((n * 2 + a) * 2 + b) * 12 + 1)))
            .collect();
        assert_eq!(y.data(), expected, "count {count}");
    }
}

#[test]
fn ranges_and_onnx_windows_take_the_count_whole() {
    let flip = stridex::slice! { input: u8[_, 4, 16], s[.., 1..3, ..;-1] };
    let x: Vec<u8> = (0..3 * 64).map(|v| v as u8).collect();
    let y = flip.run(&x).unwrap();
    assert_eq!(y.shape(), [3, 2, 16]);
    let expected: Vec<u8> = (0..3)
        .flat_map(|n| (1..3).flat_map(move |c| (0..16).rev().map(move |w| (n * 64 + c * 16 + w) as u8)))
        .collect();
    assert_eq!(y.data(), expected);

    let onnx = stridex::slice! { rules: onnx, input: f32[_, 10], starts: [2], ends: [8], axes: [1] };
    let x: Vec<f32> = (0..40).map(|v| v as f32).collect();
    let y = onnx.run(&x).unwrap();
    assert_eq!(y.shape(), [4, 6]);
    assert_eq!(y.data(), (0..4).flat_map(|n| (2..8).map(move |w| (n * 10 + w) as f32)).collect::<Vec<_>>());
}

#[test]
fn builders_take_a_dynamic_leading_size() {
    let op =
        Gather::openvino().data::<f32>(&[6, 4]).indices::<i32>(&[0, 2]).dynamic_leading().build().unwrap();
    let data: Vec<f32> = (0..24).map(|v| v as f32).collect();
    let y = op.run(&data, &[5, 0, 1, 2, -1, 9]).unwrap();
    assert_eq!(y.shape(), [3, 2, 4]);
    // OpenVINO: out of range reads zeros.
    let mut expected: Vec<f32> =
        [5, 0, 1, 2, 5].iter().flat_map(|&r| (0..4).map(move |c| (r * 4 + c) as f32)).collect();
    expected.extend([0.0; 4]);
    assert_eq!(y.data(), expected);

    let s = Slice::directml()
        .input::<f32>(&[0, 4])
        .window(&[0, 1], &[0, 2], &[1, 1])
        .dynamic_leading()
        .build()
        .unwrap();
    assert_eq!(s.run(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]).unwrap().data(), [1.0, 2.0, 5.0, 6.0]);
    let err =
        Slice::directml().input::<f32>(&[0, 4]).window(&[1, 0], &[0, 4], &[1, 1]).dynamic_leading().build();
    assert!(matches!(err, Err(Error::Rule(stridex::RuleError::Dynamic { .. }))), "{err:?}");
    // Builders can say `_` of a tensor with no dimension; the macros cannot.
    let scalar =
        Gather::onnx().data::<f32>(&[6, 4]).indices::<i64>(&[]).dynamic_leading().build().unwrap_err();
    assert_eq!(
        scalar,
        Error::Rule(stridex::RuleError::Dynamic {
            fault: stridex::core::DynamicFault::Scalar { tensor: Operand::Indices },
            at: stridex::core::Location::Shape(Operand::Indices),
        })
    );
    assert!(scalar.to_string().contains("no dimension to leave to run time"), "{scalar}");
    // A chain's slice stage has no `_` of its own: its input is the stage before it.
    let chain = stridex::Chain::data::<f32>(&[6, 4])
        .slice(Slice::directml().ranges(&[stridex::SliceRange::FULL]).dynamic_leading())
        .build();
    assert!(chain.unwrap_err().to_string().contains("`_` (run-time) leading size"));
}

#[test]
fn launch_at_on_device_buffers() {
    let client = device().client();
    let data: Vec<f32> = (0..50 * 16).map(|v| v as f32).collect();
    let data_h = client.create_from_slice(bytemuck_f32(&data).as_slice());
    assert_eq!(
        EMBED.launch(client, &data_h, &data_h, &data_h).unwrap_err(),
        Error::CountNeeded { call: "launch" }
    );
    for count in [1usize, 4] {
        let ids: Vec<i64> = (0..count as i64 * 4).map(|i| 49 - i).collect();
        let ids_h = client.create_from_slice(&ids.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        let out = client.empty(EMBED.buffer_bytes_at(count, Operand::Output).unwrap());
        EMBED.launch_at(client, count, &data_h, &ids_h, &out).unwrap();
        let got: Vec<f32> = client
            .read_one(out)
            .unwrap()
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let expected: Vec<f32> = ids.iter().flat_map(|&i| data[i as usize * 16..][..16].to_vec()).collect();
        assert_eq!(got, expected);
        // A buffer sized for fewer rows is refused, not overrun.
        let small = client.empty(EMBED.buffer_bytes_at(count, Operand::Output).unwrap() - 4);
        assert!(matches!(
            EMBED.launch_at(client, count, &data_h, &ids_h, &small).unwrap_err(),
            Error::HandleTooSmall { .. }
        ));
    }
}

fn bytemuck_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A random descriptor refused for the one reason the property tests accept (no walk stays the
/// same for every count), or the failure any other refusal is.
fn refusal(e: Error, desc: &impl std::fmt::Debug) -> Result<Case, String> {
    match e {
        Error::Rule(stridex::RuleError::Dynamic {
            fault: stridex::core::DynamicFault::Layout { .. },
            ..
        }) => Ok(Case::Refused),
        e => Err(format!("refused: {e}\n{desc:?}")),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    Taken,
    NotApplicable,
    Refused,
}

/// A random gather made dynamic: ONNX or OpenVINO, axis 0, no batch dimensions, packed
/// indices, inferred output; then run at a random count against the reference at that count.
/// `Ok(Taken)`, or the case is not one that may take `_`, or (a layout the one-kernel walk does
/// not take) it was refused with that reason, and no other.
fn check_gather_case(choices: Vec<u64>, seed: u64) -> Result<Case, String> {
    let mut rng = Rng::from_choices(choices, seed);
    let mut case = generate::gather_case(&mut rng, &DType::ALL);
    if case.reference.rules == Rules::DirectMl || case.reference.index_sizes.is_empty() {
        return Ok(Case::NotApplicable);
    }
    let re = &mut case.reference;
    re.axis = 0;
    re.batch_dims = 0;
    re.out_strides = None;
    case.desc.axis = 0;
    case.desc.batch_dims = None;
    case.desc.output = None;
    case.desc.indices.strides = None;
    case.desc.dynamic_leading = true;
    if re.index_sizes[1..].contains(&0) {
        return Ok(Case::NotApplicable);
    }
    with_types!(case.desc.data.dtype, case.desc.indices.dtype, check_gather(&case, &mut rng))
}

fn check_gather<T: Element, I: FromI128>(case: &generate::GatherCase, rng: &mut Rng) -> Result<Case, String> {
    let op = match GatherOp::<T, I>::new(case.desc) {
        Ok(op) => op,
        Err(e) => return refusal(e, &case.desc),
    };
    let count = rng.below(6);
    let mut re = case.reference.clone();
    re.index_sizes[0] = count;
    re.index_strides = r::packed(&re.index_sizes);
    let data = T::from_bytes(&rng.bytes(r::min_len(&re.data_sizes, &re.data_strides) * T::DTYPE.size()));
    let n: usize = re.index_sizes.iter().product();
    let axis_size = re.data_sizes[0];
    let hostile = rng.chance(30);
    let values = generate::index_values(rng, n, axis_size, re.signed_indices, I::INDEX.words() == 2, hostile);
    let indices: Vec<I> = values.iter().map(|&v| I::from_i128(v)).collect();
    let got = op.__run_guarded(device(), &data, &indices);
    let context =
        || format!("count {count}\n{:?}\nkernel: {:?}\nindices: {values:?}", case.desc, op.kernel());
    match (re.run(&data, &values), got) {
        (Outcome::Ok { shape, buffer }, Ok(y)) => {
            if y.shape() != shape.as_slice() || T::bytes(y.data()) != T::bytes(&buffer) {
                return Err(format!(
                    "got {:?} {:?}\nreference {shape:?} {buffer:?}\n{}",
                    y.shape(),
                    y.data(),
                    context()
                ));
            }
            Ok(Case::Taken)
        }
        (Outcome::Err { position, value }, Err(Error::IndexOutOfRange { position: p, value: v, .. }))
            if (p.clone(), v) == (position.clone(), value) =>
        {
            Ok(Case::Taken)
        }
        (_, Err(e)) => Err(format!("unexpected error {e}\n{}", context())),
        (Outcome::Err { position, value }, Ok(_)) => {
            Err(format!("expected an error at {position:?} = {value}\n{}", context()))
        }
    }
}

/// A random SLICE1 slice made dynamic: window taking dimension 0 whole and forwards, inferred
/// output; the input packed, or (half the cases) strided as generated with its leading stride
/// moved to the span of the other dimensions or a little beyond; run at a random count.
fn check_slice_case(choices: Vec<u64>, seed: u64) -> Result<Case, String> {
    let mut rng = Rng::from_choices(choices, seed);
    let mut case = generate::slice_case(&mut rng, &DType::ALL);
    let re = &mut case.reference;
    let strided = rng.chance(50);
    if strided {
        let span = 1 + re.sizes.iter().zip(&re.strides).skip(1).map(|(&n, &s)| (n - 1) * s).sum::<usize>();
        re.strides[0] = span + rng.below(3);
    } else {
        re.strides = r::packed(&re.sizes);
    }
    re.offsets[0] = 0;
    re.window[0] = re.sizes[0];
    re.steps[0] = 1;
    re.out_sizes = None;
    re.out_strides = None;
    case.desc.input.strides = strided.then(|| generate::dims(&re.strides));
    case.desc.output = None;
    case.desc.window = stridex::core::SliceWindow::DirectMl {
        offsets: generate::dims(&re.offsets),
        sizes: generate::dims(&re.window),
        strides: stridex::core::SignedDims::of(&re.steps),
    };
    case.desc.dynamic_leading = true;
    with_data_type!(case.desc.input.dtype, check_slice(&case, &mut rng))
}

fn check_slice<T: Element>(case: &generate::SliceCase, rng: &mut Rng) -> Result<Case, String> {
    let op = match SliceOp::<T>::new(case.desc) {
        Ok(op) => op,
        Err(e) => return refusal(e, &case.desc),
    };
    let count = rng.below(6);
    let mut re = case.reference.clone();
    re.sizes[0] = count;
    re.window[0] = count;
    let mut len = r::min_len(&re.sizes, &re.strides);
    if case.desc.input.strides.is_some() {
        // A strided buffer may end with its last row's elements or a whole stride later.
        len = len.max(count * re.strides[0] * usize::from(rng.chance(50)));
    } else {
        re.strides = r::packed(&re.sizes);
    }
    let input = T::from_bytes(&rng.bytes(len * T::DTYPE.size()));
    let y = op.__run_guarded(device(), &input).map_err(|e| format!("{e}\ncount {count}\n{:?}", case.desc))?;
    if count == 0 {
        let mut shape = re
            .window
            .iter()
            .zip(&re.steps)
            .map(|(&n, &s)| 1 + (n.max(1) - 1) / s.unsigned_abs() as usize)
            .collect::<Vec<_>>();
        shape[0] = 0;
        return if y.shape() == shape.as_slice() && y.data().is_empty() {
            Ok(Case::Taken)
        } else {
            Err(format!("count 0 gave {:?}\n{:?}", y.shape(), case.desc))
        };
    }
    let (shape, buffer) = re.run(&input);
    if y.shape() != shape.as_slice() || T::bytes(y.data()) != T::bytes(&buffer) {
        return Err(format!(
            "count {count}: got {:?} {:?}\nreference {shape:?} {buffer:?}\n{:?}\nkernel: {:?}",
            y.shape(),
            y.data(),
            case.desc,
            op.kernel()
        ));
    }
    Ok(Case::Taken)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn dynamic_gathers_match_the_reference((choices, seed) in choices()) {
        check_gather_case(choices, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn dynamic_slices_match_the_reference((choices, seed) in choices()) {
        check_slice_case(choices, seed).map_err(TestCaseError::fail)?;
    }
}

/// Most random cases that may take `_` do (the rest are refused for the one reason the
/// property tests accept: output rows that are not whole 32-bit words), so the property tests
/// do test something.
#[test]
fn most_random_cases_take_a_dynamic_leading_size() {
    let mut counts = [0usize; 3];
    for seed in 0..60u64 {
        let mut rng = Rng::new(seed);
        let choices: Vec<u64> = (0..256).map(|_| rng.next()).collect();
        counts[check_gather_case(choices.clone(), seed).unwrap() as usize] += 1;
        counts[check_slice_case(choices, seed).unwrap() as usize] += 1;
    }
    let [taken, _, refused] = counts;
    assert_eq!(refused, 0, "{taken} random cases took `_`, {refused} were refused");
}

#[test]
fn describe_says_the_count_is_read_at_run_time() {
    let text = EMBED.describe();
    assert!(text.contains("indices [_, 4]: the leading size `_` is the count"), "{text}");
    assert!(text.contains("rows of 4 element(s)"), "{text}");
    let source = EMBED.kernel_source(stridex::Dialect::Wgsl).unwrap().unwrap();
    assert!(!source.is_empty());
}

/// Rows that are not whole 32-bit words (u8 crops of odd widths, a `[count]` of bytes) take the
/// slot walk, which assembles words lane by lane, with the same one-kernel-for-every-count
/// rule.
#[test]
fn sub_word_rows_take_any_count() {
    let crop = stridex::slice! { input: u8[_, 3, 8, 8], s[.., .., .., 1..4] };
    assert!(matches!(crop.kernel().unwrap().map(|k| &k.walk), Some(Walk::Slots(m)) if m.dynamic));
    for count in [1usize, 2, 5] {
        let x: Vec<u8> = (0..count * 192).map(|v| (v * 7) as u8).collect();
        let y = crop.run(&x).unwrap();
        assert_eq!(y.shape(), [count, 3, 8, 3]);
        let expected: Vec<u8> = (0..count * 24).flat_map(|r| x[r * 8 + 1..r * 8 + 4].to_vec()).collect();
        assert_eq!(y.data(), expected, "count {count}");
    }
    let pick = stridex::gather! { data: u8[100], indices: i64[_] };
    let table: Vec<u8> = (0..100).map(|v| v as u8 + 100).collect();
    for n in [1usize, 3, 4, 9] {
        let ids: Vec<i64> = (0..n as i64).map(|i| 99 - 11 * i).collect();
        let y = pick.run(&table, &ids).unwrap();
        assert_eq!(y.data(), ids.iter().map(|&i| table[i as usize]).collect::<Vec<_>>());
    }
}

// Chains with a `_` count: the data's leading size, or one gather's indices'. Every later stage
// keeps it as its leading size, and the chain is one kernel for every count.

stridex::chain! {
    static LAST_TOKENS;
    data: f32[50, 8],
    gather { indices: i32[_, 5], axis: 0 },
    slice { rules: onnx, starts: [-1], ends: [5], axes: [1] },
}

#[test]
fn a_chain_takes_its_count_from_a_gathers_indices() {
    assert!(LAST_TOKENS.is_dynamic() && LAST_TOKENS.is_fused().unwrap());
    let table: Vec<f32> = (0..50 * 8).map(|v| v as f32).collect();
    for count in [0usize, 1, 2, 3, 7, 33] {
        let ids: Vec<i32> = (0..count * 5).map(|i| ((i * 13 + 1) % 50) as i32).collect();
        let y = LAST_TOKENS.run(&table, (&ids,)).unwrap();
        assert_eq!(y.shape(), [count, 1, 8]);
        assert_eq!(LAST_TOKENS.output_shape_at(count).unwrap(), [count, 1, 8]);
        let expected: Vec<f32> = (0..count)
            .flat_map(|b| {
                let row = ids[b * 5 + 4] as usize;
                table[row * 8..row * 8 + 8].to_vec()
            })
            .collect();
        assert_eq!(y.data(), expected, "count {count}");
    }
    let Some(stridex::ChainKernel::Fused(k)) = LAST_TOKENS.kernel().unwrap() else { panic!("fused") };
    let Walk::Rows(w) = &k.walk else { panic!("a row walk") };
    assert!(w.dynamic);
    // Counts come from whole rows of the ids; what needs a count says so.
    assert_eq!(
        LAST_TOKENS.run(&table, (&[1, 2, 3],)).unwrap_err(),
        Error::InStage {
            stage: 1,
            error: Box::new(Error::PartialRow { tensor: Operand::Indices, given: 3, row: 5 })
        }
    );
    assert_eq!(LAST_TOKENS.output_shape().unwrap_err(), Error::CountNeeded { call: "output_shape" });
    assert_eq!(
        LAST_TOKENS.index_buffer_bytes(0).unwrap_err(),
        Error::CountNeeded { call: "index_buffer_bytes" }
    );
    assert_eq!(LAST_TOKENS.index_buffer_bytes_at(3, 0).unwrap(), 3 * 5 * 4);
    assert_eq!(LAST_TOKENS.buffer_bytes_at(3, Operand::Output).unwrap(), 3 * 8 * 4);
    // ONNX's `error` policy still checks every id, at any count.
    let e = LAST_TOKENS.run(&table, (&[0, 0, 0, 0, 0, 1, 2, 50, 3, 4],)).unwrap_err();
    assert!(
        matches!(&e, Error::InStage { stage: 1, error } if matches!(**error, Error::IndexOutOfRange { value: 50, .. })),
        "{e}"
    );
}

/// The preprocessing of a model server: NHWC u8 images with a run-time batch, viewed as NCHW
/// through strides (the `_` dimension stays outermost in memory), come out packed NCHW, center
/// cropped, BGR -> RGB and flipped, in one fused kernel; against a plain loop.
#[test]
fn an_nhwc_batch_comes_out_nchw_in_one_kernel() {
    stridex::chain! {
        static PREPROCESS;
        data: u8[_, 3, 16, 16] strides [768, 1, 48, 3],
        slice { s[.., .., 2..14, 2..14] },
        slice { s[.., ..;-1, .., ..;-1] },
    }
    assert!(PREPROCESS.is_dynamic() && PREPROCESS.is_fused().unwrap());
    for batch in [1usize, 3, 8] {
        let nhwc: Vec<u8> = (0..batch * 768).map(|v| (v * 7 % 251) as u8).collect();
        let y = PREPROCESS.run(&nhwc, ()).unwrap();
        assert_eq!(y.shape(), [batch, 3, 12, 12]);
        let mut expected = Vec::new();
        for b in 0..batch {
            for c in 0..3 {
                for h in 0..12 {
                    for w in 0..12 {
                        let (row, col, channel) = (2 + h, 2 + (11 - w), 2 - c);
                        expected.push(nhwc[b * 768 + (row * 16 + col) * 3 + channel]);
                    }
                }
            }
        }
        assert_eq!(y.data(), expected, "batch {batch}");
    }
    // The builder takes the same strided `_` data and makes the same fused kernel.
    use stridex::{Chain, SliceRange};
    let full = SliceRange::FULL;
    let built = Chain::data_strided::<u8>(&[0, 3, 16, 16], Some(&[768, 1, 48, 3]))
        .dynamic_leading()
        .slice(Slice::directml().ranges(&[full, full, SliceRange::new(2, 14), SliceRange::new(2, 14)]))
        .slice(Slice::directml().ranges(&[full, full.step(-1), full, full.step(-1)]))
        .build()
        .unwrap();
    assert!(built.is_dynamic() && built.is_fused().unwrap());
    let nhwc: Vec<u8> = (0..3 * 768).map(|v| (v * 5 % 253) as u8).collect();
    assert_eq!(built.run(&nhwc, ()).unwrap().data(), PREPROCESS.run(&nhwc, ()).unwrap().data());
    // A strided buffer's count is the strides its length reaches into; its last image must
    // still hold all its elements.
    assert_eq!(PREPROCESS.output_shape_at(2).unwrap(), [2, 3, 12, 12]);
    assert!(matches!(
        PREPROCESS.run(&[0u8; 768 + 700], ()).unwrap_err(),
        Error::BufferTooShort { tensor: Operand::Data, needed: 1536, given: 1468 }
    ));
}

/// The way back, with a run-time batch: results written through a strided `_` output (NCHW
/// crops into an NHWC buffer, rows into a padded pitch), the output's leading size `_` too: a
/// chain fused in one kernel, single ops on the slot walk and the row walk; against plain loops,
/// and the builders' ops against the macros'.
#[test]
fn a_strided_output_takes_a_count() {
    stridex::chain! {
        static TO_NHWC;
        data: f32[_, 3, 16, 16],
        slice { s[.., .., 2..14, 2..14] },
        slice { s[.., ..;-1, .., ..] },
        output: f32[_, 3, 12, 12] strides [432, 1, 36, 3],
    }
    assert!(TO_NHWC.is_dynamic() && TO_NHWC.is_fused().unwrap());
    let to_nhwc_u8 = stridex::slice! {
        input: u8[_, 3, 16, 16],
        s[.., ..;-1, 2..14, 2..14],
        output: u8[_, 3, 12, 12] strides [432, 1, 36, 3],
    };
    let pitched = stridex::gather! { data: f32[10, 6], indices: i32[_], output: [_, 6] strides [8, 1] };
    for batch in [0usize, 1, 2, 5] {
        // NHWC position of element (b, c, h, w) of the result, and its NCHW source.
        let at = |b: usize, c: usize, h: usize, w: usize| {
            (b * 432 + (h * 12 + w) * 3 + c, b * 768 + (2 - c) * 256 + (2 + h) * 16 + 2 + w)
        };
        let nchw: Vec<f32> = (0..batch * 768).map(|v| v as f32).collect();
        let bytes: Vec<u8> = (0..batch * 768).map(|v| (v * 7 % 251) as u8).collect();
        let (mut expected, mut expected_u8) = (vec![0f32; batch * 432], vec![0u8; batch * 432]);
        for b in 0..batch {
            for c in 0..3 {
                for h in 0..12 {
                    for w in 0..12 {
                        let (o, i) = at(b, c, h, w);
                        (expected[o], expected_u8[o]) = (nchw[i], bytes[i]);
                    }
                }
            }
        }
        let y = TO_NHWC.run(&nchw, ()).unwrap();
        assert_eq!((y.shape(), y.strides()), (&[batch, 3, 12, 12][..], &[432, 1, 36, 3][..]));
        assert_eq!(y.data(), expected, "batch {batch}");
        assert_eq!(to_nhwc_u8.run(&bytes).unwrap().data(), expected_u8, "batch {batch}");
        let table: Vec<f32> = (0..60).map(|v| v as f32).collect();
        let ids: Vec<i32> = (0..batch as i32).map(|i| (i * 3) % 10).collect();
        let y = pitched.run(&table, &ids).unwrap();
        assert_eq!((y.shape(), y.strides()), (&[batch, 6][..], &[8, 1][..]));
        // Rows 8 apart, the last without its padding; the padding zero.
        let mut rows = vec![0f32; (batch * 8).saturating_sub(2)];
        for (r, &id) in ids.iter().enumerate() {
            rows[r * 8..r * 8 + 6].copy_from_slice(&table[id as usize * 6..id as usize * 6 + 6]);
        }
        assert_eq!(y.data(), rows, "batch {batch}");
    }
    // A `_` walk checks the output buffer it is given at the count the input gives.
    let mut short = vec![0f32; 2 * 432 - 1];
    assert!(matches!(
        TO_NHWC.run_into(&vec![0f32; 2 * 768], (), &mut short).unwrap_err(),
        Error::BufferTooShort { tensor: Operand::Output, needed: 864, given: 863 }
    ));
    // The builders say the same: the output's leading size is the count (written 0).
    use stridex::{Chain, SliceRange};
    let full = SliceRange::FULL;
    let built = Chain::data::<f32>(&[0, 3, 16, 16])
        .dynamic_leading()
        .slice(Slice::directml().ranges(&[full, full, SliceRange::new(2, 14), SliceRange::new(2, 14)]))
        .slice(Slice::directml().ranges(&[full, full.step(-1), full, full]))
        .output(&[0, 3, 12, 12], Some(&[432, 1, 36, 3]))
        .build()
        .unwrap();
    assert!(built.is_dynamic() && built.is_fused().unwrap());
    let x: Vec<f32> = (0..3 * 768).map(|v| (v % 97) as f32).collect();
    assert_eq!(built.run(&x, ()).unwrap().data(), TO_NHWC.run(&x, ()).unwrap().data());
    let pitched_built = Gather::onnx()
        .data::<f32>(&[10, 6])
        .indices::<i32>(&[0])
        .dynamic_leading()
        .output(&[0, 6], Some(&[8, 1]))
        .build()
        .unwrap();
    let table: Vec<f32> = (0..60).map(|v| v as f32 * 0.5).collect();
    assert_eq!(
        pitched_built.run(&table, &[9, 0, 4]).unwrap().data(),
        pitched.run(&table, &[9, 0, 4]).unwrap().data()
    );
    // Results that would interleave across counts are refused, naming the output.
    let refused = Slice::directml()
        .input::<f32>(&[0, 4, 8])
        .window(&[0, 1, 0], &[0, 2, 8], &[1, 1, 1])
        .dynamic_leading()
        .output(&[0, 2, 8], Some(&[8, 1, 2]))
        .build();
    match refused.unwrap_err() {
        Error::Rule(e) => assert!(
            e.to_string().contains("`output` with a `_` leading dimension must keep it outermost in memory"),
            "{e}"
        ),
        e => panic!("{e}"),
    }
}

/// A single `_` slice of a strided input whose images lie apart (a padded pitch), and the
/// rule that keeps the `_` dimension outermost, in the macro's words at run time.
#[test]
fn a_strided_count_reads_rows_that_lie_apart() {
    let op = stridex::slice! { input: f32[_, 2, 3] strides [8, 3, 1], s[.., .., 1..] };
    for count in [0usize, 1, 4] {
        // Each row of 6 elements is followed by 2 of padding the slice must not read.
        let x: Vec<f32> = (0..count * 8).map(|v| if v % 8 < 6 { v as f32 } else { -1.0 }).collect();
        let y = op.run(&x).unwrap();
        assert_eq!(y.shape(), [count, 2, 2]);
        let expected: Vec<f32> =
            (0..count * 4).map(|o| ((o / 4) * 8 + (o / 2 % 2) * 3 + 1 + o % 2) as f32).collect();
        assert_eq!(y.data(), expected, "count {count}");
    }
    assert!(op.describe().contains("from the input's length in steps of its leading stride, 8 element(s)"));
    // The last row may end where its elements end: 3 rows of 8, the last without its padding.
    assert_eq!(op.run(&[0.0f32; 22]).unwrap().shape(), [3, 2, 2]);
    let refused = Slice::directml()
        .input_strided::<f32>(&[0, 2, 3], Some(&[1, 6, 2]))
        .window(&[0, 0, 0], &[0, 2, 3], &[1, 1, 1])
        .dynamic_leading()
        .build();
    match refused.unwrap_err() {
        Error::Rule(e) => {
            assert!(e.to_string().contains("its leading stride is 1, less than the 11 elements"), "{e}")
        }
        e => panic!("{e}"),
    }
}

#[test]
fn a_chain_takes_its_count_from_the_data() {
    let op = stridex::chain! {
        data: u8[_, 3, 16, 16],
        slice { s[.., .., 4..12, ..;-1] },
        gather { indices: i32[3], axis: 1 },
        slice { s[.., .., ..;2, ..;2] },
    };
    assert!(op.is_dynamic() && op.is_fused().unwrap());
    for count in [0usize, 1, 2, 5] {
        let x: Vec<u8> = (0..count * 3 * 256).map(|v| (v * 7 % 251) as u8).collect();
        let y = op.run(&x, (&[2, 1, 0],)).unwrap();
        assert_eq!(y.shape(), [count, 3, 4, 8]);
        let expected: Vec<u8> = (0..count * 3 * 4 * 8)
            .map(|o| {
                let (b, c, h, w) = (o / 96, o / 32 % 3, o / 8 % 4, o % 8);
                x[((b * 3 + (2 - c)) * 16 + 4 + 2 * h) * 16 + (15 - 2 * w)]
            })
            .collect();
        assert_eq!(y.data(), expected, "count {count}");
    }
    assert_eq!(
        op.run(&[0u8; 700], (&[0, 1, 2],)).unwrap_err(),
        Error::PartialRow { tensor: Operand::Data, given: 700, row: 768 }
    );
}

#[test]
fn a_later_gathers_indices_can_carry_the_count() {
    let op = stridex::chain! {
        data: f32[10, 4],
        slice { s[2..8, ..] },
        gather { indices: i64[_], axis: 0, out_of_range: clamp },
        slice { s[.., 1..3] },
    };
    let data: Vec<f32> = (0..40).map(|v| v as f32).collect();
    for ids in [vec![], vec![0i64], vec![5, -1, 9, 2]] {
        let y = op.run(&data, (&ids,)).unwrap();
        assert_eq!(y.shape(), [ids.len(), 2]);
        let expected: Vec<f32> = ids
            .iter()
            .flat_map(|&i| {
                let row = 2 + i.clamp(-6, 5).rem_euclid(6) as usize;
                vec![data[row * 4 + 1], data[row * 4 + 2]]
            })
            .collect();
        assert_eq!(y.data(), expected, "{ids:?}");
    }
}

#[test]
fn the_chain_builder_takes_the_count_as_the_macro_does() {
    use stridex::{Chain, SliceRange};
    let built = Chain::data::<u8>(&[0, 3, 16, 16])
        .dynamic_leading()
        .slice(Slice::directml().ranges(&[
            SliceRange::FULL,
            SliceRange::FULL,
            SliceRange::new(4, 12),
            SliceRange::FULL.step(-1),
        ]))
        .gather(Gather::onnx().indices::<i32>(&[3]).axis(1))
        .slice(Slice::directml().ranges(&[
            SliceRange::FULL,
            SliceRange::FULL,
            SliceRange::FULL.step(2),
            SliceRange::FULL.step(2),
        ]))
        .build()
        .unwrap();
    let x: Vec<u8> = (0..2 * 768).map(|v| v as u8).collect();
    let macro_op = stridex::chain! {
        data: u8[_, 3, 16, 16],
        slice { s[.., .., 4..12, ..;-1] },
        gather { indices: i32[3], axis: 1 },
        slice { s[.., .., ..;2, ..;2] },
    };
    assert_eq!(built.run(&x, (&[2, 1, 0],)).unwrap().data(), macro_op.run(&x, (&[2, 1, 0],)).unwrap().data());
    let indices = Chain::data::<f32>(&[50, 8])
        .gather(Gather::onnx().indices::<i32>(&[0, 5]).dynamic_leading())
        .slice(Slice::onnx().starts_ends(&[-1], &[5]).axes(&[1]))
        .build()
        .unwrap();
    let table: Vec<f32> = (0..400).map(|v| v as f32).collect();
    let ids: Vec<i32> = (0..15).collect();
    assert_eq!(
        indices.run(&table, (&ids,)).unwrap().data(),
        LAST_TOKENS.run(&table, (&ids,)).unwrap().data()
    );
    // One count per chain; a stage after it takes it whole.
    let two = Chain::data::<f32>(&[0, 8])
        .dynamic_leading()
        .gather(Gather::onnx().indices::<i32>(&[0]).axis(1).dynamic_leading())
        .build()
        .unwrap_err();
    assert!(two.to_string().contains("one `_` count"), "{two}");
    let window = Chain::data::<f32>(&[0, 8])
        .dynamic_leading()
        .slice(Slice::directml().window(&[0, 0], &[0, 4], &[1, 1]))
        .build()
        .unwrap_err();
    assert!(window.to_string().contains("`s[..]` ranges"), "{window}");
    let late = Chain::data::<f32>(&[0, 8])
        .slice(Slice::directml().ranges(&[SliceRange::FULL, SliceRange::new(2, 8)]))
        .dynamic_leading()
        .build()
        .unwrap_err();
    assert!(late.to_string().contains("comes before the chain's stages"), "{late}");
    // A hand-made descriptor that puts the count on no gather is an Err, never a panic.
    let mut desc = LAST_TOKENS.desc().clone();
    for stage in [0, 2, 9] {
        desc.dynamic_leading = Some(stridex::core::ChainCount::Indices { stage });
        let no_gather = stridex::core::RuleError::Dynamic {
            fault: stridex::core::DynamicFault::NoGatherAt { stage },
            at: stridex::core::Location::Chain,
        };
        for count in [0, 3] {
            assert_eq!(stridex::core::dynamic::chain_at(&desc, count).unwrap_err(), no_gather);
        }
        let op = stridex::ChainOp::<f32, (i32,)>::__from_checked(desc.clone());
        assert_eq!(op.run(&[0.0; 400], (&[0; 10],)).unwrap_err(), Error::Rule(no_gather));
    }
    let across =
        Chain::data::<f32>(&[0, 8]).dynamic_leading().gather(Gather::onnx().indices::<i32>(&[2])).build();
    assert!(across.unwrap_err().to_string().contains("would replace the count"));
}

#[test]
fn a_chains_count_on_device_buffers_and_in_describe() {
    let client = stridex::Device::default_device().unwrap().client();
    let table: Vec<f32> = (0..400).map(|v| v as f32).collect();
    let data =
        stridex::buffers::upload(client, &table, LAST_TOKENS.buffer_bytes_at(4, Operand::Data).unwrap())
            .unwrap();
    for count in [4usize, 2] {
        let ids: Vec<i32> = (0..count as i32 * 5).map(|i| 49 - i).collect();
        let ix = stridex::buffers::upload(client, &ids, LAST_TOKENS.index_buffer_bytes_at(count, 0).unwrap())
            .unwrap();
        let out = client.empty(LAST_TOKENS.buffer_bytes_at(count, Operand::Output).unwrap());
        LAST_TOKENS.launch_at(client, count, &data, &[&ix], &out).unwrap();
        let y: Vec<f32> = stridex::buffers::read(client, &out, count * 8).unwrap();
        assert_eq!(y, LAST_TOKENS.run(&table, (&ids,)).unwrap().data(), "count {count}");
    }
    let ix = stridex::buffers::upload(client, &[0i32; 10], 40).unwrap();
    let out = client.empty(64);
    assert_eq!(
        LAST_TOKENS.launch(client, &data, &[&ix], &out).unwrap_err(),
        Error::CountNeeded { call: "launch" }
    );
    // A buffer short for the count is an Err, not a read past its end.
    assert!(matches!(
        LAST_TOKENS.launch_at(client, 3, &data, &[&ix], &out).unwrap_err(),
        Error::InStage { stage: 1, .. }
    ));
    let text = LAST_TOKENS.describe();
    assert!(text.contains("stage 1's indices [_, 5]: the leading size `_` is the count"), "{text}");
}

/// A random chain lifted under a `_` count: each of `count` tensors of the chain's data shape
/// goes through every stage (the data `[_, ..]`; gathers' and ONNX slices' axes one further
/// out; SLICE1 windows taking the count whole). Strided data stays strided, its tensors `pad`
/// elements apart beyond their span. `None` where no stage may keep the count leading (a
/// DirectML gather, batch dimensions).
fn lifted(desc: &stridex::core::ChainDesc, pad: usize) -> Option<stridex::core::ChainDesc> {
    use stridex::core::{ChainCount, Dims, SignedDims, SliceWindow, StageDesc, TensorDecl};
    use stridex::GatherRules;
    let prepend = |first: usize, rest: &[usize]| Dims::of(&[&[first][..], rest].concat());
    let stages = desc
        .stages
        .iter()
        .map(|stage| match *stage {
            StageDesc::Gather(g) => {
                let batch = g.batch_dims.is_some_and(|b| b != 0);
                (g.rules != GatherRules::DirectMl && !batch).then(|| {
                    StageDesc::Gather(stridex::core::GatherStage {
                        axis: if g.axis >= 0 { g.axis + 1 } else { g.axis },
                        ..g
                    })
                })
            }
            StageDesc::Slice(SliceWindow::DirectMl { offsets, sizes, strides }) => {
                Some(StageDesc::Slice(SliceWindow::DirectMl {
                    offsets: prepend(0, offsets.as_slice()),
                    sizes: prepend(stridex::core::dynamic::PLACEHOLDER, sizes.as_slice()),
                    strides: SignedDims::of(&[&[1][..], strides.as_slice()].concat()),
                }))
            }
            StageDesc::Slice(SliceWindow::Onnx { starts, ends, axes, steps }) => {
                let axes: Vec<i64> = match axes {
                    Some(a) => a.as_slice().iter().map(|&a| if a >= 0 { a + 1 } else { a }).collect(),
                    None => (1..=starts.len() as i64).collect(),
                };
                Some(StageDesc::Slice(SliceWindow::Onnx {
                    starts,
                    ends,
                    axes: Some(SignedDims::of(&axes)),
                    steps,
                }))
            }
            StageDesc::Convert(c) => Some(StageDesc::Convert(stridex::core::ConvertStage {
                dim: if c.dim >= 0 { c.dim + 1 } else { c.dim },
                ..c
            })),
            // A count before a scatter is its positions', not a batch of copies: no lift
            // (chains::a_counted_chain_ends_in_a_scatter runs the `_` form).
            StageDesc::Scatter(_) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let sizes = prepend(stridex::core::dynamic::PLACEHOLDER, desc.data.sizes.as_slice());
    let strides = desc.data.strides.map(|s| {
        let span = r::min_len(desc.data.sizes.as_slice(), s.as_slice());
        prepend(span + pad, s.as_slice())
    });
    Some(stridex::core::ChainDesc {
        data: TensorDecl { dtype: desc.data.dtype, sizes, strides },
        stages: stages.into(),
        output: None,
        dynamic_leading: Some(ChainCount::Data),
    })
}

/// One random chain, lifted: `None` when it cannot be, else whether the lift was taken (a
/// chain that fuses as written must be).
fn check_lifted_chain(mut rng: Rng) -> Result<Option<bool>, String> {
    let case = crate::common::chains::chain_case(&mut rng, &DType::ALL);
    let pad = rng.below(3);
    let Some(desc) = lifted(&case.desc, pad) else { return Ok(None) };
    with_data_type!(case.dtype, check_lifted(&case, desc, &mut rng)).map(Some)
}

fn check_lifted<T: Element>(
    case: &crate::common::chains::ChainCase,
    desc: stridex::core::ChainDesc,
    rng: &mut Rng,
) -> Result<bool, String> {
    use crate::common::chains::Staged;
    let fixed = stridex::ChainOp::<T, ()>::__from_checked(case.desc.clone());
    let op = stridex::ChainOp::<T, ()>::__from_checked(desc);
    if let Err(e) = op.plan() {
        if fixed.is_fused().unwrap_or(false) {
            return Err(format!("a chain that fuses as written refused its count: {e}\n{:?}", op.desc()));
        }
        return Ok(false);
    }
    let count = rng.range(0, 4) as usize;
    // Each tensor of the batch: `span` elements (its layout as written), `step` apart.
    let span = match &case.desc.data.strides {
        Some(s) => r::min_len(&case.data_sizes, s.as_slice()),
        None => case.data_sizes.iter().product(),
    };
    let step = op.desc().data.strides.map_or(span, |s| s[0]);
    let mut len = if count == 0 { 0 } else { (count - 1) * step + span };
    if rng.chance(50) {
        len = count * step;
    }
    let data = T::from_bytes(&rng.bytes(len * T::DTYPE.size()));
    let got = op.__run_erased(device(), &data, &case.index_bytes(), rng.chance(50));
    let context = || format!("count {count}\n{:?}\nkernel: {:?}", op.desc(), op.kernel());
    // The chain as written, on each of the `count` tensors.
    let mut shape = vec![count];
    shape.extend(fixed.output_shape().map_err(|e| e.to_string())?);
    let mut buffer = Vec::new();
    for b in 0..count {
        match case.staged(&data[b * step..b * step + span]) {
            Staged::Ok { buffer: v, .. } => buffer.extend(v),
            Staged::Err { stage, position, value } => {
                let e = got
                    .err()
                    .ok_or_else(|| format!("no Err for stage {stage}'s index {value}\n{}", context()))?;
                let want = Error::InStage {
                    stage,
                    error: Box::new(Error::IndexOutOfRange { position, value, axis_size: 0 }),
                };
                return match (&e, &want) {
                    (Error::InStage { stage: s, error: a }, Error::InStage { error: b, .. })
                        if *s == stage
                            && matches!((&**a, &**b), (
                                Error::IndexOutOfRange { position: p, value: v, .. },
                                Error::IndexOutOfRange { position: q, value: w, .. },
                            ) if p == q && v == w) =>
                    {
                        Ok(true)
                    }
                    _ => Err(format!("got {e:?}, want stage {stage}'s index {value}\n{}", context())),
                };
            }
        }
    }
    let y = got.map_err(|e| format!("{e}\n{}", context()))?;
    if y.shape() != shape || T::bytes(y.data()) != T::bytes(&buffer) {
        return Err(format!("got {:?} {:?}\nwant {shape:?} {buffer:?}\n{}", y.shape(), y.data(), context()));
    }
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), failure_persistence: None, ..ProptestConfig::default() })]

    /// Random chains (every dtype, gathers under ONNX and OpenVINO and every policy, SLICE1
    /// windows and ONNX slices) lifted under a `_` count, against the chain as written on each
    /// tensor of the batch; half of them on buffers between guard regions.
    #[test]
    fn lifted_chains_match_the_chain_on_each_tensor(
        (choices, seed) in (prop::collection::vec(any::<u64>(), 0..256), any::<u64>())
    ) {
        check_lifted_chain(Rng::from_choices(choices, seed)).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn most_random_chains_lift() {
    let (mut lifted, mut taken) = (0, 0);
    for seed in 0..200 {
        if let Some(t) = check_lifted_chain(Rng::new(seed)).unwrap() {
            lifted += 1;
            taken += usize::from(t);
        }
    }
    // Not liftable: strided data, DirectML gathers, batch dimensions. Refused: chains that run
    // stage by stage as written too (rows of 1- and 2-byte elements that are not whole words).
    assert!(lifted >= 60 && taken * 2 >= lifted, "{taken} of {lifted} liftable chains of 200 took a count");
}
