//! Chains on a real device: every chain's result equals its stages run one by one through the
//! single ops (`GatherOp`, `SliceOp`), and the naive reference; the seeds' examples as
//! one-stage chains; the typed front doors (`Chain` builder, index tuples, `launch`) and their
//! errors. `PROPTEST_CASES` overrides the case count (300).

use crate::common::chains::{self, ChainCase, StageRef, Staged};
use crate::common::generate::Rng;
use crate::common::props::{cases, device};
use crate::common::reference as r;
use proptest::prelude::*;
use std::borrow::Cow;
use stridex::core::{seeds, ChainDesc, GatherStage, StageDesc, TensorDecl};
use stridex::{
    Chain, ChainOp, DType, Dialect, Element, Error, Gather, GatherDesc, GatherOp, IndexElement, Operand,
    OutOfRange, Slice, SliceDesc, SliceOp, SliceRange, Tensor,
};

/// What a chain gives: the output, or the stage and index of the first out-of-range index.
#[derive(Debug, PartialEq)]
enum Result_<T> {
    Ok(Vec<usize>, Vec<u8>, std::marker::PhantomData<T>),
    Err(usize, Vec<usize>, i128),
}

fn outcome<T: Element>(
    r: Result<Tensor<T>, Error>,
    context: &dyn Fn() -> String,
) -> Result<Result_<T>, String> {
    match r {
        Ok(y) => Ok(Result_::Ok(y.shape().to_vec(), T::bytes(y.data()).into_owned(), Default::default())),
        Err(Error::InStage { stage, error }) => match *error {
            Error::IndexOutOfRange { position, value, .. } => Ok(Result_::Err(stage, position, value)),
            e => Err(format!("unexpected error in stage {stage}: {e}\n{}", context())),
        },
        Err(e) => Err(format!("unexpected error: {e}\n{}", context())),
    }
}

/// Runs one gather stage through `GatherOp<T, I>`.
fn gather_stage<T: Element, I: IndexElement + TryFrom<i128>>(
    desc: GatherDesc,
    data: &[T],
    values: &[i128],
) -> Result<Tensor<T>, Error> {
    let indices: Vec<I> = values.iter().map(|&v| I::try_from(v).ok().expect("index fits its type")).collect();
    GatherOp::<T, I>::new(desc)?.run_on(device(), data, &indices)
}

/// The chain's stages one by one through the single ops, each on the previous one's output.
fn run_staged<T: Element>(case: &ChainCase, data: &[T]) -> Result<Tensor<T>, Error> {
    let mut input: TensorDecl = case.desc.data;
    let mut values: Vec<T> = data.to_vec();
    let mut result = None;
    for (i, (stage, reference)) in case.desc.stages.iter().zip(&case.stages).enumerate() {
        let y = match (*stage, reference) {
            (StageDesc::Gather(g), StageRef::Gather { indices, .. }) => {
                let desc = g.desc(input, None);
                match g.indices.dtype {
                    DType::I32 => gather_stage::<T, i32>(desc, &values, indices),
                    DType::I64 => gather_stage::<T, i64>(desc, &values, indices),
                    DType::U32 => gather_stage::<T, u32>(desc, &values, indices),
                    _ => gather_stage::<T, u64>(desc, &values, indices),
                }
            }
            (StageDesc::Slice(window), _) => SliceOp::<T>::new(SliceDesc {
                input,
                window,
                output: None,
                feature_level: None,
                dynamic_leading: false,
            })?
            .run_on(device(), &values),
            _ => unreachable!("the case's stages follow its descriptor"),
        }
        .map_err(|e| Error::InStage { stage: i + 1, error: Box::new(e) })?;
        input = TensorDecl::packed(T::DTYPE, stridex::core::Dims::of(y.shape()));
        values = y.data().to_vec();
        result = Some(y);
    }
    Ok(result.expect("a chain has a stage"))
}

/// Checks one random chain; whether it ran fused.
fn check_chain_case(mut rng: Rng) -> Result<bool, String> {
    let case = chains::chain_case(&mut rng, &DType::ALL);
    with_data_type!(case.dtype, check_chain(&case, &mut rng))
}

fn check_chain<T: Element>(case: &ChainCase, rng: &mut Rng) -> Result<bool, String> {
    let data = T::from_bytes(&rng.bytes(r::min_len(&case.data_sizes, &case.data_strides) * T::DTYPE.size()));
    // The index types are drawn at run time, so the op is used through its erased entry (the
    // typed tuples are tested below); `new` would check `()` against the gathers' types.
    let op = ChainOp::<T, ()>::__from_checked(case.desc.clone());
    let context = || format!("{:?}\nkernel: {:?}", case.desc, op.kernel());
    let guarded = rng.chance(50);
    let got = outcome(op.__run_erased(device(), &data, &case.index_bytes(), guarded), &context)?;
    let staged = outcome(run_staged(case, &data), &context)?;
    if got != staged {
        return Err(format!("chain {got:?}\nstages one by one {staged:?}\n{}", context()));
    }
    let reference = match case.staged(&data) {
        Staged::Ok { shape, buffer } => {
            Result_::Ok(shape, T::bytes(&buffer).into_owned(), Default::default())
        }
        Staged::Err { stage, position, value } => Result_::Err(stage, position, value),
    };
    if got != reference {
        return Err(format!("chain {got:?}\nreference {reference:?}\n{}", context()));
    }
    Ok(op.is_fused().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), failure_persistence: None, ..ProptestConfig::default() })]

    /// Random chains of 2 to 4 stages: gathers under every rule set, index type and policy
    /// (hostile indices included), SLICE1 windows and ONNX slices, on strided data of every
    /// dtype; half of them through `launch` on buffers between guard regions.
    #[test]
    fn chains_match_their_stages_run_one_by_one(
        (choices, seed) in (prop::collection::vec(any::<u64>(), 0..256), any::<u64>())
    ) {
        check_chain_case(Rng::from_choices(choices, seed)).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn most_random_chains_fuse() {
    let mut fused = 0;
    for seed in 0..100 {
        fused += usize::from(check_chain_case(Rng::new(seed)).unwrap());
    }
    // The others: 1- and 2-byte elements in rows that are not whole words, an empty
    // intermediate, or an empty output.
    assert!(fused >= 30, "only {fused} of 100 chains fused");
}

// The seeds' examples as one-stage chains, through the typed front door.

#[test]
fn gather_seeds_as_one_stage_chains() {
    for seed in seeds::GATHERS {
        let desc = seed.desc(DType::F32, DType::I64);
        let chain = ChainDesc {
            data: desc.data,
            stages: Cow::Owned(vec![StageDesc::Gather(GatherStage::of(&desc))]),
            output: None,
            dynamic_leading: None,
        };
        let op = ChainOp::<f32, (i64,)>::new(chain).unwrap_or_else(|e| panic!("{}: {e}", seed.name));
        let data: Vec<f32> = seed.data.iter().map(|&v| v as f32).collect();
        let y = op.run(&data, (seed.indices,)).unwrap_or_else(|e| panic!("{}: {e}", seed.name));
        assert_eq!(y.shape(), seed.out_sizes, "{}", seed.name);
        let out: Vec<f32> = seed.out.iter().map(|&v| v as f32).collect();
        assert_eq!(y.data(), out.as_slice(), "{}", seed.name);
        assert!(op.is_fused().unwrap() || out.is_empty(), "{}: f32 rows fuse", seed.name);
    }
}

#[test]
fn slice_seeds_as_one_stage_chains() {
    for seed in seeds::SLICES {
        let desc = seed.desc(DType::F32);
        let chain = ChainDesc {
            data: desc.input,
            stages: Cow::Owned(vec![StageDesc::Slice(desc.window)]),
            output: None,
            dynamic_leading: None,
        };
        let op = ChainOp::<f32, ()>::new(chain).unwrap_or_else(|e| panic!("{}: {e}", seed.name));
        let input: Vec<f32> = seed.input.iter().map(|&v| v as f32).collect();
        let y = op.run(&input, ()).unwrap_or_else(|e| panic!("{}: {e}", seed.name));
        assert_eq!(y.shape(), seed.out_sizes, "{}", seed.name);
        let out: Vec<f32> = seed.out.iter().map(|&v| v as f32).collect();
        assert_eq!(y.data(), out.as_slice(), "{}", seed.name);
    }
}

// The issue's chain, scaled down: token ids -> embedding rows -> the last position -> every
// other column, reversed -> 4 columns per batch row (OpenVINO batch_dims).

fn example() -> Chain<f32, (i64, i32)> {
    Chain::data::<f32>(&[100, 16])
        .gather(Gather::onnx().indices::<i64>(&[8, 12]).axis(0))
        .slice(Slice::onnx().starts_ends(&[-1], &[12]).axes(&[1]))
        .slice(Slice::directml().window(&[0, 0, 0], &[8, 1, 16], &[1, 1, -2]))
        .gather(Gather::openvino().indices::<i32>(&[8, 4]).axis(2).batch_dims(1))
}

fn example_inputs() -> (Vec<f32>, Vec<i64>, Vec<i32>) {
    let table: Vec<f32> = (0..1600).map(|v| v as f32).collect();
    let ids: Vec<i64> = (0..96).map(|i| (i * 37 + 5) % 100).collect();
    let cols: Vec<i32> = (0..32).map(|i| (i * 3) % 8).collect();
    (table, ids, cols)
}

/// The example's result written straight from the stages' definitions.
fn example_expected(table: &[f32], ids: &[i64], cols: &[i32]) -> Vec<f32> {
    let mut out = Vec::new();
    for b in 0..8 {
        let row = ids[b * 12 + 11] as usize; // the last position
        for k in 0..4 {
            let j = cols[b * 4 + k] as usize; // column j of the reversed, every-other view
            out.push(table[row * 16 + 15 - 2 * j]);
        }
    }
    out
}

#[test]
fn the_issue_chain_runs_as_one_kernel() {
    let op = example().build().unwrap();
    assert_eq!(op.output_shape().unwrap(), [8, 1, 4]);
    assert!(op.is_fused().unwrap());
    let (table, ids, cols) = example_inputs();
    let y = op.run(&table, (&ids, &cols)).unwrap();
    assert_eq!(y.shape(), [8, 1, 4]);
    assert_eq!(y.data(), example_expected(&table, &ids, &cols).as_slice());
    // One kernel for the whole chain: one entry point, two index buffers bound.
    let wgsl = op.kernel_source(Dialect::Wgsl).unwrap().unwrap();
    assert_eq!(wgsl.matches("@compute").count(), 1, "{wgsl}");
}

#[test]
fn launch_on_device_buffers() {
    launch_on(device().client());
}

fn launch_on(client: &stridex::cubecl::client::Client) {
    use stridex::buffers;
    let op = example().build().unwrap();
    let (table, mut ids, cols) = example_inputs();
    let data = buffers::upload(client, &table, op.buffer_bytes(Operand::Data).unwrap()).unwrap();
    let i1 = buffers::upload(client, &cols, op.index_buffer_bytes(1).unwrap()).unwrap();
    let out = client.empty(op.buffer_bytes(Operand::Output).unwrap());
    let i0 = buffers::upload(client, &ids, op.index_buffer_bytes(0).unwrap()).unwrap();
    op.launch(client, &data, &[&i0, &i1], &out).unwrap();
    let y: Vec<f32> = buffers::read(client, &out, 32).unwrap();
    assert_eq!(y, example_expected(&table, &ids, &cols));
    assert_eq!(
        op.launch(client, &data, &[&i0], &out).unwrap_err(),
        Error::IndexBufferCount { expected: 2, given: 1 }
    );
    let short = client.empty(op.index_buffer_bytes(1).unwrap() - 4);
    assert!(matches!(op.launch(client, &data, &[&i0, &short], &out), Err(Error::InStage { stage: 4, .. })));
    // Under `error`, the index buffers are read back and checked before any launch.
    ids[95] = -101;
    let bad = buffers::upload(client, &ids, op.index_buffer_bytes(0).unwrap()).unwrap();
    assert_eq!(
        op.launch(client, &data, &[&bad, &i1], &out).unwrap_err(),
        Error::InStage {
            stage: 1,
            error: Box::new(Error::IndexOutOfRange { position: vec![7, 11], value: -101, axis_size: 100 })
        }
    );
}

#[test]
fn errors_name_their_stage() {
    let (table, mut ids, cols) = example_inputs();
    let op = example().build().unwrap();
    // A short index buffer of the second gather (stage 4).
    match op.run(&table, (&ids, &cols[..31])) {
        Err(Error::InStage { stage: 4, error }) => {
            assert!(matches!(
                *error,
                Error::BufferTooShort { tensor: Operand::Indices, needed: 32, given: 31 }
            ))
        }
        other => panic!("{other:?}"),
    }
    // ONNX's default policy is `error`: an id out of range fails stage 1, and names it.
    ids[13] = 100;
    let e = op.run(&table, (&ids, &cols)).unwrap_err();
    assert_eq!(
        e,
        Error::InStage {
            stage: 1,
            error: Box::new(Error::IndexOutOfRange { position: vec![1, 1], value: 100, axis_size: 100 })
        }
    );
    assert_eq!(
        e.to_string(),
        "stage 1: index out of range: indices[1, 1] = 100 is outside [-100, 99] (out_of_range: error)"
    );
    // Under `zero` the same chain runs, and the id's row reads as zeros (it is not the last
    // position here, so the output is unchanged).
    let op = Chain::data::<f32>(&[100, 16])
        .gather(Gather::onnx().indices::<i64>(&[8, 12]).axis(0).out_of_range(OutOfRange::Zero))
        .slice(Slice::onnx().starts_ends(&[-1], &[12]).axes(&[1]))
        .build()
        .unwrap();
    assert_eq!(op.run(&table, (&ids,)).unwrap().shape(), [8, 1, 16]);
    // The op's index types must be the descriptor's.
    let desc = example().desc().unwrap();
    assert!(matches!(ChainOp::<f32, (i64, i64)>::new(desc), Err(Error::IndexTypes { .. })));
    // A stage builder that gives an output is refused, naming the stage.
    let e = Chain::data::<f32>(&[4, 4])
        .slice(Slice::onnx().starts_ends(&[0], &[2]).output(&[2, 4], None))
        .build();
    assert!(matches!(e, Err(Error::InStage { stage: 1, .. })), "{e:?}");
    // A stage that breaks its rules on the shape it receives names the stage and the shape.
    let e = Chain::data::<f32>(&[4, 4])
        .slice(Slice::onnx().starts_ends(&[0], &[2]))
        .gather(Gather::onnx().indices::<i32>(&[3]).axis(2))
        .build()
        .err()
        .unwrap();
    assert!(e.to_string().starts_with("stage 2 (gather), on its input of shape [2, 4]: "), "{e}");
}

/// 1- and 2-byte elements whose rows are not whole 32-bit words run stage by stage; the result
/// is the same.
#[test]
fn unaligned_chains_run_stage_by_stage() {
    let op = Chain::data::<u8>(&[5, 3])
        .gather(Gather::onnx().indices::<i32>(&[2]).axis(0))
        .slice(Slice::onnx().starts_ends(&[-1], &[-4]).axes(&[1]).steps(&[-1]))
        .build()
        .unwrap();
    assert!(!op.is_fused().unwrap());
    let data: Vec<u8> = (0..15).collect();
    let y = op.run(&data, (&[4, 1],)).unwrap();
    assert_eq!(y.shape(), [2, 3]);
    assert_eq!(y.data(), [14, 13, 12, 5, 4, 3]);
    let source = op.kernel_source(Dialect::Wgsl).unwrap().unwrap();
    assert!(source.contains("// stage 1") && source.contains("// stage 2"));
}

// `chain!`: the same chain written as the macro takes it, as an expression and as an item.

stridex::chain! {
    static LAST_TOKEN_COLUMNS;
    data: f32[100, 16],
    gather { indices: i64[8, 12], axis: 0 },
    slice { rules: onnx, starts: [-1], ends: [12], axes: [1] },
    slice { offsets: [0, 0, 0], sizes: [8, 1, 16], strides: [1, 1, -2] },
    gather { rules: openvino, indices: i32[8, 4], axis: 2, batch_dims: 1 },
}

#[test]
fn the_macro_plans_as_the_builder_does() {
    let op = stridex::chain! {
        data: f32[100, 16],
        gather { indices: i64[8, 12], axis: 0 },
        slice { rules: onnx, starts: [-1], ends: [12], axes: [1] },
        slice { offsets: [0, 0, 0], sizes: [8, 1, 16], strides: [1, 1, -2] },
        gather { rules: openvino, indices: i32[8, 4], axis: 2, batch_dims: 1 },
        output: [8, 1, 4],
    };
    let built = example().build().unwrap();
    assert_eq!(op.plan().unwrap(), built.plan().unwrap());
    assert_eq!(LAST_TOKEN_COLUMNS.plan().unwrap(), built.plan().unwrap());
    let (table, ids, cols) = example_inputs();
    let expected = example_expected(&table, &ids, &cols);
    assert_eq!(op.run(&table, (&ids, &cols)).unwrap().data(), expected.as_slice());
    assert_eq!(LAST_TOKEN_COLUMNS.run(&table, (&ids, &cols)).unwrap().data(), expected.as_slice());
    // No gather: `()`; a padded output.
    let flip = stridex::chain! {
        data: u8[2, 3, 4, 4],
        slice { rules: onnx, starts: [-1], ends: [-5], axes: [3], steps: [-1] },
        slice { offsets: [0, 0, 0, 0], sizes: [2, 3, 4, 4], strides: [1, -1, 2, 2] },
        output: [2, 3, 2, 2] strides [16, 4, 2, 1],
    };
    let image: Vec<u8> = (0..96).collect();
    let y = flip.run(&image, ()).unwrap();
    assert_eq!(y.shape(), [2, 3, 2, 2]);
    assert_eq!(y.get(&[0, 0, 0, 0]), Some(image[2 * 16 + 3]));
    assert_eq!(y.get(&[1, 2, 1, 1]), Some(image[48 + 2 * 4 + 1]));
}

/// A stage's `s[..]` ranges are lowered against the shape it receives: the same window as
/// the one written out, in the macro and in the builder.
#[test]
fn stage_ranges_lower_against_the_received_shape() {
    let ranged = stridex::chain! {
        data: f32[20, 10],
        gather { indices: i64[4] },
        slice { s[.., 1..9;2] },
        slice { s[..;-1] },
    };
    let written = stridex::chain! {
        data: f32[20, 10],
        gather { indices: i64[4] },
        slice { offsets: [0, 1], sizes: [4, 8], strides: [1, 2] },
        slice { offsets: [0, 0], sizes: [4, 4], strides: [-1, 1] },
    };
    assert_eq!(ranged.desc(), written.desc());
    let data: Vec<f32> = (0..200).map(|v| v as f32).collect();
    let ids = [3i64, 0, 19, 7];
    let y = ranged.run(&data, (&ids[..],)).unwrap();
    assert_eq!(y.shape(), [4, 4]);
    let expected: Vec<f32> =
        ids.iter().rev().flat_map(|&r| [1, 3, 5, 7].map(|c| (r * 10 + c) as f32)).collect();
    assert_eq!(y.data(), expected);

    let built = Chain::data::<f32>(&[20, 10])
        .gather(Gather::onnx().indices::<i64>(&[4]))
        .slice(Slice::directml().ranges(&[SliceRange::FULL, SliceRange::new(1, 9).step(2)]))
        .slice(Slice::directml().ranges(&[SliceRange::FULL.step(-1)]));
    assert_eq!(&built.desc().unwrap(), ranged.desc());
    // A range outside the received shape names the stage and that shape.
    let err = Chain::data::<f32>(&[20, 10])
        .gather(Gather::onnx().indices::<i64>(&[4]))
        .slice(Slice::directml().ranges(&[SliceRange::FULL, SliceRange::new(1, 12)]))
        .build()
        .unwrap_err();
    assert!(err.to_string().starts_with("stage 2: "), "{err}");
    assert!(err.to_string().contains("bound 12 is outside a dimension of size 10"), "{err}");
}

/// The destination's values after a chain that scatters: `run_into` on a copy, and `launch`
/// in place on device buffers; both must agree.
fn scattered<'a, T: Element, I: stridex::IndexTypes>(
    op: &ChainOp<T, I>,
    data: &[T],
    indices: impl stridex::IndexBuffers<'a, I>,
    raw: &[&[u8]],
    dest: &[T],
) -> Result<Vec<T>, Error> {
    let mut out = dest.to_vec();
    op.run_into(data, indices, &mut out)?;
    let device = device();
    // Between guard regions, which come back untouched, as the data and indices do.
    let bytes: Vec<Vec<u8>> = raw.iter().map(|b| b.to_vec()).collect();
    let guarded = op.__launch_guarded_into(device, data, &bytes, dest)?;
    assert_eq!(T::bytes(&guarded), T::bytes(&out), "a guarded launch and run_into disagree");
    let c = device.client();
    let d = stridex::buffers::upload(c, data, op.buffer_bytes(Operand::Data)?)?;
    let ix: Vec<_> = raw.iter().map(|b| c.create_from_slice(b)).collect();
    let o = stridex::buffers::upload(c, dest, op.buffer_bytes(Operand::Output)?)?;
    op.launch(c, &d, &ix.iter().collect::<Vec<_>>(), &o)?;
    let launched: Vec<T> = stridex::buffers::read(c, &o, dest.len())?;
    assert_eq!(T::bytes(&launched), T::bytes(&out), "launch and run_into disagree");
    Ok(out)
}

/// A chain's scatter into a strided destination (each cache row padded to 8 words) writes the
/// rows where the strides say and leaves the padding as it was, by `run_into`, a guarded launch
/// and `launch`; the scatter op's own copy of the same strided data (packed, as ONNX's output)
/// holds the same rows.
#[test]
fn a_chain_scatters_into_a_strided_destination() {
    let bytes = |v: &[i32]| i32::bytes(v).into_owned();
    let kv = stridex::chain! {
        data: f32[5, 2, 4],
        slice { s[.., 1..2, ..] },
        scatter { into: f32[6, 1, 4] strides [8, 4, 1], indices: i32[5], axis: 0, out_of_range: skip },
    };
    let write = stridex::scatter! {
        data: f32[6, 1, 4] strides [8, 4, 1], indices: i32[5], updates: f32[5, 1, 4], axis: 0, out_of_range: skip
    };
    let rows: Vec<f32> = (0..40).map(|v| v as f32 + 0.5).collect();
    let values: Vec<f32> = (0..5).flat_map(|t| rows[t * 8 + 4..][..4].to_vec()).collect();
    // 5 rows of 8 words and a last of 4: the strided layout's own length.
    let cache: Vec<f32> = (0..44).map(|v| -(v as f32)).collect();
    let slots = [2, -1, 5, 0, 2];
    // The scatter op's copy is packed (ONNX's output); in place, its launch keeps the strides.
    let packed = write.run(&cache, &slots, &values).unwrap().data().to_vec();
    let mut expected = cache.clone();
    for (t, &slot) in slots.iter().enumerate().filter(|(_, &s)| s >= 0) {
        if slots.iter().rposition(|&s| s == slot) == Some(t) {
            expected[slot as usize * 8..][..4].copy_from_slice(&values[t * 4..][..4]);
        }
    }
    let unpadded: Vec<f32> = (0..6).flat_map(|r| expected[r * 8..][..4].to_vec()).collect();
    assert_eq!(packed, unpadded);
    let got = scattered(&kv, &rows, (&slots[..],), &[&bytes(&slots)], &cache).unwrap();
    assert_eq!(got, expected);
}

/// A chain may end in a scatter: the KV-cache write of a sliced projection (the K third of
/// each token's QKV rows at its slot, -1 a padding token), and an MoE-style combine that adds
/// gathered rows back by token. Each equals its stages run one by one (the chain before the
/// scatter, then the scatter op), by `run_into` and by `launch`, in place; `run` has no
/// destination, and an index out of range under `error` names the scatter's stage.
#[test]
fn a_chain_ends_in_a_scatter() {
    let bytes = |v: &[i32]| i32::bytes(v).into_owned();
    // QKV rows [6 tokens, 3, 4 heads, 8] -> K [6, 1, 4, 8] -> cache [16, 1, 4, 8] at slots.
    let kv = stridex::chain! {
        data: f32[6, 3, 4, 8],
        slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
        scatter { into: f32[16, 1, 4, 8], indices: i32[6], axis: 0, out_of_range: skip },
    };
    let k_only =
        stridex::chain! { data: f32[6, 3, 4, 8], slice { rules: onnx, starts: [1], ends: [2], axes: [1] } };
    let write = stridex::scatter! {
        data: f32[16, 1, 4, 8], indices: i32[6], updates: f32[6, 1, 4, 8], axis: 0, out_of_range: skip
    };
    let qkv: Vec<f32> = (0..6 * 3 * 32).map(|v| v as f32 * 0.5).collect();
    let cache: Vec<f32> = (0..16 * 32).map(|v| -(v as f32)).collect();
    let slots = [3, -1, 15, 0, 3, 7];
    let k = k_only.run(&qkv, ()).unwrap();
    let expected = write.run(&cache, &slots, k.data()).unwrap().data().to_vec();
    let got = scattered(&kv, &qkv, (&slots[..],), &[&bytes(&slots)], &cache).unwrap();
    assert_eq!(got, expected);
    assert!(matches!(kv.run(&qkv, (&slots[..],)), Err(Error::DestinationNeeded { call: "run" })));
    // Fused: no slice kernel, the claim and write kernels reading the rows from the QKV.
    let source = kv.kernel_source(Dialect::Wgsl).unwrap().unwrap();
    assert!(source.contains("// kernel 2 of 2"), "{source}");
    assert_eq!(source.matches("@compute").count(), 2, "{source}");
    assert!(kv.is_fused().unwrap());
    // Two slices compose over strided data (16 words of padding after each token): V, fused.
    let padded = stridex::chain! {
        data: f32[6, 3, 4, 8] strides [112, 32, 8, 1],
        slice { s[.., 1..3, .., ..] },
        slice { s[.., 1..2, .., ..] },
        scatter { into: f32[16, 1, 4, 8], indices: i32[6], axis: 0, out_of_range: skip },
    };
    assert!(padded.is_fused().unwrap());
    assert!(padded.describe().contains("reads each row from the data"), "{}", padded.describe());
    let spaced: Vec<f32> = (0..5 * 112 + 96).map(|v| v as f32 + 0.25).collect();
    let mut expected = cache.clone();
    for (t, &slot) in slots.iter().enumerate().filter(|(_, &s)| s >= 0) {
        let last = slots.iter().rposition(|&s| s == slot).unwrap();
        if t == last {
            expected[slot as usize * 32..][..32].copy_from_slice(&spaced[t * 112 + 64..][..32]);
        }
    }
    assert_eq!(scattered(&padded, &spaced, (&slots[..],), &[&bytes(&slots)], &cache).unwrap(), expected);
    // Views that do not fuse (rows not contiguous, rows off whole words, a flip along the
    // tokens) run stage by stage, with the same result.
    let unfused = [
        (
            stridex::chain! {
                data: f32[6, 3, 4, 8],
                slice { s[.., 1..2, .., ..;2] },
                scatter { into: f32[16, 1, 4, 4], indices: i32[6], axis: 0, out_of_range: skip },
            },
            4,
        ),
        (
            stridex::chain! {
                data: f32[6, 3, 4, 8],
                slice { s[..;-1, 2..3, .., ..] },
                scatter { into: f32[16, 1, 4, 8], indices: i32[6], axis: 0, out_of_range: skip },
            },
            8,
        ),
    ];
    for (op, width) in &unfused {
        let sliced = stridex::chain! { data: f32[6, 3, 4, 8], slice { s[.., 1..2, .., ..;2] } };
        let flipped = stridex::chain! { data: f32[6, 3, 4, 8], slice { s[..;-1, 2..3, .., ..] } };
        let pre = if *width == 4 { sliced.run(&qkv, ()) } else { flipped.run(&qkv, ()) }.unwrap();
        let dest: Vec<f32> = (0..16 * 4 * width).map(|v| v as f32).collect();
        let mut expected = dest.clone();
        for (p, &slot) in slots.iter().enumerate() {
            if slot >= 0 {
                let row = 4 * width;
                expected[slot as usize * row..][..row].copy_from_slice(&pre.data()[p * row..][..row]);
            }
        }
        let got = scattered(op, &qkv, (&slots[..],), &[&bytes(&slots)], &dest).unwrap();
        assert_eq!(got, expected);
        assert_eq!(op.kernel_source(Dialect::Wgsl).unwrap().unwrap().matches("@compute").count(), 3);
        assert!(!op.is_fused().unwrap());
    }
    let fused_f16 = stridex::chain! {
        data: f16[6, 3, 4, 8],
        slice { rules: onnx, starts: [2], ends: [3], axes: [1] },
        scatter { into: f16[16, 1, 4, 8], indices: i64[6], axis: 0, out_of_range: skip },
    };
    let halves: Vec<stridex::half::f16> =
        (0..6 * 3 * 32).map(|v| stridex::half::f16::from_f32(v as f32)).collect();
    let slots64: Vec<i64> = slots.iter().map(|&s| i64::from(s)).collect();
    let cache16 = vec![stridex::half::f16::ZERO; 16 * 32];
    let got = scattered(&fused_f16, &halves, (&slots64[..],), &[&i64::bytes(&slots64)], &cache16).unwrap();
    // Each slot holds its last writer's V (index 2 of its QKV): positions 0 and 4 share slot 3.
    for &slot in slots.iter().filter(|&&s| s >= 0) {
        let winner = slots.iter().rposition(|&s| s == slot).unwrap();
        assert_eq!(&got[slot as usize * 32..][..32], &halves[(winner * 3 + 2) * 32..][..32]);
    }
    assert_eq!(fused_f16.kernel_source(Dialect::Wgsl).unwrap().unwrap().matches("@compute").count(), 2);
    assert!(kv.describe().contains("written in place"), "{}", kv.describe());

    // Rows of 10 experts' outputs picked per (token, choice), then added into 5 tokens.
    let combine = stridex::chain! {
        data: f32[10, 8],
        gather { indices: i32[12], axis: 0 },
        scatter { into: f32[5, 8], indices: i32[12], axis: 0, reduction: add, out_of_range: error },
    };
    let pick = stridex::gather! { data: f32[10, 8], indices: i32[12], axis: 0 };
    let add = stridex::scatter! {
        data: f32[5, 8], indices: i32[12], updates: f32[12, 8], axis: 0, reduction: add, out_of_range: error
    };
    let experts: Vec<f32> = (0..80).map(|v| (v as f32).sqrt()).collect();
    let tokens = vec![1.0f32; 40];
    let rows = [9, 0, 3, 3, 7, 1, 2, 8, 5, 5, 4, 6];
    let owners = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 2];
    let picked = pick.run(&experts, &rows).unwrap();
    let expected = add.run(&tokens, &owners, picked.data()).unwrap().data().to_vec();
    let ids = (&rows[..], &owners[..]);
    let got = scattered(&combine, &experts, ids, &[&bytes(&rows), &bytes(&owners)], &tokens).unwrap();
    assert_eq!(got, expected);
    // Token 9 does not exist: the scatter stage's error, nothing written.
    let mut bad = owners;
    bad[5] = 9;
    let mut out = tokens.clone();
    let e = combine.run_into(&experts, (&rows[..], &bad[..]), &mut out).unwrap_err();
    assert!(
        matches!(&e, Error::InStage { stage: 2, error } if matches!(**error, Error::IndexOutOfRange { value: 9, .. })),
        "{e}"
    );
    assert_eq!(out, tokens);
    // The builder's form of the same chain plans as the macro's.
    let built = Chain::data::<f32>(&[10, 8])
        .gather(Gather::onnx().indices::<i32>(&[12]))
        .scatter(
            stridex::Scatter::openvino()
                .data::<f32>(&[5, 8])
                .indices::<i32>(&[12])
                .reduction(stridex::Reduction::Add)
                .out_of_range(OutOfRange::Error),
        )
        .build()
        .unwrap();
    assert_eq!(built.plan().unwrap(), combine.plan().unwrap());
    let mut out = tokens.clone();
    built.run_into(&experts, (&rows[..], &owners[..]), &mut out).unwrap();
    assert_eq!(out, expected);
    // The builder's scatter stage takes no updates: they are what the chain makes.
    let e = Chain::data::<f32>(&[12, 8])
        .scatter(stridex::Scatter::openvino().data::<f32>(&[5, 8]).indices::<i32>(&[12]).updates(&[12, 8]))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("takes no `updates`"), "{e}");
    // A scatter alone: its updates are the data.
    let alone = stridex::chain! {
        data: f32[12, 8],
        scatter { into: f32[5, 8], indices: i32[12], axis: 0, reduction: add },
    };
    let got = scattered(&alone, picked.data(), (&owners[..],), &[&bytes(&owners)], &tokens).unwrap();
    assert_eq!(got, expected);
}

/// A chain with a `_` count may end in a scatter: the KV-cache write of the K third of each
/// new token's QKV rows, for a token count that changes per call, and an MoE-style combine
/// whose count is its gather's. One op and one set of kernels serve every count: `run_into`,
/// a guarded launch and `launch_at` on buffers of a capacity give, at each count, what the
/// host computes from the SPEC (skipped slots, last writer wins; sums in index order), and a
/// count of 0 writes nothing.
#[test]
fn a_counted_chain_ends_in_a_scatter() {
    let kv = stridex::chain! {
        data: f32[_, 3, 4, 8],
        slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
        scatter { into: f32[16, 1, 4, 8], indices: i32[_], axis: 0, out_of_range: skip },
    };
    assert!(kv.is_dynamic() && kv.is_fused().unwrap());
    assert!(kv.describe().contains("stage 2's indices [_]: their leading size is the same count"));
    assert_eq!(kv.kernel_source(Dialect::Wgsl).unwrap().unwrap().matches("@compute").count(), 2);
    let qkv: Vec<f32> = (0..9 * 96).map(|v| v as f32 * 0.25).collect();
    let cache: Vec<f32> = (0..16 * 32).map(|v| -(v as f32)).collect();
    let slots: [i32; 9] = [3, -1, 15, 0, 3, 7, 40, 15, 2];
    let expected = |n: usize| {
        let mut out = cache.clone();
        for (t, &slot) in slots[..n].iter().enumerate().filter(|(_, &s)| (0..16).contains(&s)) {
            out[slot as usize * 32..][..32].copy_from_slice(&qkv[t * 96 + 32..][..32]);
        }
        out
    };
    let device = device();
    let c = device.client();
    // Buffers of a capacity of 9 tokens, written at each count.
    let data = stridex::buffers::upload(c, &qkv, kv.buffer_bytes_at(9, Operand::Data).unwrap()).unwrap();
    let ids = c.create_from_slice(&i32::bytes(&slots));
    for n in [1, 5, 0, 9, 3, 2] {
        let mut out = cache.clone();
        kv.run_into(&qkv[..n * 96], (&slots[..n],), &mut out).unwrap();
        assert_eq!(out, expected(n), "run_into at {n}");
        let raw = [i32::bytes(&slots[..n]).into_owned()];
        let guarded = kv.__launch_guarded_into(device, &qkv[..n * 96], &raw, &cache).unwrap();
        assert_eq!(guarded, expected(n), "guarded launch at {n}");
        let dest =
            stridex::buffers::upload(c, &cache, kv.buffer_bytes_at(1, Operand::Output).unwrap()).unwrap();
        kv.launch_at(c, n, &data, &[&ids], &dest).unwrap();
        assert_eq!(
            stridex::buffers::read::<f32>(c, &dest, cache.len()).unwrap(),
            expected(n),
            "launch_at {n}"
        );
    }
    // Without a count, and with buffers short of the count's: `Err`, nothing written.
    let dest = stridex::buffers::upload(c, &cache, kv.buffer_bytes_at(1, Operand::Output).unwrap()).unwrap();
    assert!(matches!(kv.launch(c, &data, &[&ids], &dest), Err(Error::CountNeeded { .. })));
    assert!(kv.launch_at(c, 10, &data, &[&ids], &dest).is_err());
    let mut out = cache.clone();
    assert!(kv.run_into(&qkv[..4 * 96], (&slots[..3],), &mut out).is_err());
    assert_eq!(out, cache);
    // The builder's form: the scatter's positions take the count with `dynamic_leading` (the
    // sizes given for the count are not read), and only in a chain that has one.
    let write = || {
        stridex::Scatter::openvino()
            .data::<f32>(&[16, 1, 4, 8])
            .indices::<i32>(&[0])
            .out_of_range(OutOfRange::Skip)
    };
    let qkv_rows = || Chain::data::<f32>(&[0, 3, 4, 8]).dynamic_leading();
    let k_third = || Slice::onnx().starts_ends(&[1], &[2]).axes(&[1]);
    let built = qkv_rows().slice(k_third()).scatter(write().dynamic_leading()).build().unwrap();
    assert_eq!(built.plan().unwrap(), kv.plan().unwrap());
    let mut out = cache.clone();
    built.run_into(&qkv[..5 * 96], (&slots[..5],), &mut out).unwrap();
    assert_eq!(out, expected(5));
    let fixed = Chain::data::<f32>(&[6, 3, 4, 8]).slice(k_third());
    for e in [
        qkv_rows().slice(k_third()).scatter(write()).build().unwrap_err(),
        fixed.scatter(write().dynamic_leading()).build().unwrap_err(),
    ] {
        assert!(matches!(&e, Error::InStage { stage: 2, .. }), "{e}");
        assert!(e.to_string().contains("scatter stage"), "{e}");
    }

    // A combine: `_` rows picked from 10 experts' outputs, each added into its token.
    let combine = stridex::chain! {
        data: f32[10, 8],
        gather { indices: i32[_], axis: 0 },
        scatter { into: f32[5, 8], indices: i32[_], axis: 0, reduction: add, out_of_range: error },
    };
    let experts: Vec<f32> = (0..80).map(|v| (v as f32).sqrt()).collect();
    let tokens = vec![1.0f32; 40];
    let rows = [9, 0, 3, 3, 7, 1, 2, 8, 5, 5, 4, 6];
    let owners = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 2];
    for n in [12, 1, 7, 0] {
        let mut want = tokens.clone();
        for (&r, &o) in rows[..n].iter().zip(&owners[..n]) {
            for k in 0..8 {
                want[o as usize * 8 + k] += experts[r as usize * 8 + k];
            }
        }
        let mut out = tokens.clone();
        combine.run_into(&experts, (&rows[..n], &owners[..n]), &mut out).unwrap();
        assert_eq!(out, want, "combine at {n}");
        let raw = [i32::bytes(&rows[..n]).into_owned(), i32::bytes(&owners[..n]).into_owned()];
        assert_eq!(combine.__launch_guarded_into(device, &experts, &raw, &tokens).unwrap(), want);
    }
    // Token 9 does not exist: the scatter stage's error at any count, nothing written.
    let mut bad = owners;
    bad[5] = 9;
    let mut out = tokens.clone();
    let e = combine.run_into(&experts, (&rows[..6], &bad[..6]), &mut out).unwrap_err();
    assert!(matches!(&e, Error::InStage { stage: 2, .. }), "{e}");
    assert_eq!(out, tokens);

    // Staged: a gather along the rows' second axis, then the scatter of its output.
    let staged = stridex::chain! {
        data: f32[_, 6],
        gather { indices: i32[3], axis: 1 },
        scatter { into: f32[4, 3], indices: i32[_], axis: 0, reduction: add },
    };
    assert!(!staged.is_fused().unwrap());
    let values: Vec<f32> = (0..5 * 6).map(|v| v as f32).collect();
    let cols = [5, 0, 2];
    let to = [3, 1, 3, 0, 2];
    for n in [5, 2, 0] {
        let mut want = vec![0.5f32; 12];
        for (t, &o) in to[..n].iter().enumerate() {
            for (k, &col) in cols.iter().enumerate() {
                want[o as usize * 3 + k] += values[t * 6 + col as usize];
            }
        }
        let mut out = vec![0.5f32; 12];
        staged.run_into(&values[..n * 6], (&cols[..], &to[..n]), &mut out).unwrap();
        assert_eq!(out, want, "staged at {n}");
    }
}

/// A gather of rows, then a scatter of those rows along axis 0 (an MoE combine) under a
/// reduction: the host folds the gather into the scatter's lists and the scatter reads the
/// rows from the data itself (`GatheredRows`), one kernel and no intermediate. Drawn at
/// random (padded and packed rows, f32 and f16, i32 and i64 indices, every reduction, the
/// gather's `error`, `clamp` and `zero`, hostile indices, heavy duplication):
/// each equals the gather op then the scatter op, value for value, by `run_into` and
/// `launch`, with the same stage's error where one fails.
/// Drawn `_` chains that end in a scatter (QKV-like rows, padded or packed, a slice along a
/// later axis, a scatter along axis 0 under every reduction and policy): at each of several
/// counts, `run_into` equals the same chain built for that count, value for value, or both
/// refuse it.
#[test]
fn a_counted_chain_that_scatters_runs_as_the_chain_of_its_count() {
    let mut rng = Rng::new(0x5ca7_7e2d);
    let mut compared = 0;
    for _ in 0..24 {
        let (parts, width) = (1 + rng.below(3), 1 + rng.below(3) * 4);
        let span = parts * width;
        let pad = rng.pick(&[0, 0, 4, 3]);
        let strides = [span + pad, width, 1];
        let start = rng.below(parts) as i64;
        let end = start + 1 + rng.below(parts - start as usize) as i64;
        let step = if end - start > 1 && rng.chance(30) { 2 } else { 1 };
        let kept = ((end - start) as usize).div_ceil(step as usize);
        let slots = 1 + rng.below(12);
        let reduction = stridex::Reduction::ALL[rng.below(5)];
        let policy = rng.pick(&[OutOfRange::Error, OutOfRange::Skip, OutOfRange::Zero, OutOfRange::Clamp]);
        let build = |count: Option<usize>| {
            let chain = Chain::data_strided::<f32>(&[count.unwrap_or(0), parts, width], Some(&strides));
            let chain = if count.is_none() { chain.dynamic_leading() } else { chain };
            let write = stridex::Scatter::openvino()
                .data::<f32>(&[slots, kept, width])
                .indices::<i32>(&[count.unwrap_or(0)])
                .reduction(reduction)
                .out_of_range(policy);
            let write = if count.is_none() { write.dynamic_leading() } else { write };
            chain
                .slice(Slice::onnx().starts_ends(&[start], &[end]).axes(&[1]).steps(&[step]))
                .scatter(write)
                .build()
        };
        let counted = build(None).unwrap_or_else(|e| panic!("{e}"));
        let dest: Vec<f32> = (0..slots * kept * width).map(|v| v as f32 - 3.0).collect();
        for n in [1, 4, 0, 7, 2] {
            let data: Vec<f32> = (0..n * (span + pad)).map(|v| (v % 97) as f32 * 0.5 - 20.0).collect();
            let ids: Vec<i32> = (0..n).map(|_| rng.below(slots + 2) as i32 - 1).collect();
            let mut got = dest.clone();
            let r = counted.run_into(&data, (&ids[..],), &mut got);
            let Ok(fixed) = build(Some(n)) else {
                // A count of 0 has no fixed chain (an empty axis): nothing is written.
                assert!(n == 0 && r.is_ok() && got == dest, "count {n}: {r:?}");
                continue;
            };
            let mut want = dest.clone();
            let w = fixed.run_into(&data, (&ids[..],), &mut want);
            assert_eq!(r.is_ok(), w.is_ok(), "count {n}: `_` {r:?}, fixed {w:?}");
            if r.is_err() {
                assert_eq!(got, dest, "count {n}: refused, yet written");
            }
            assert_eq!(f32::bytes(&got), f32::bytes(&want), "count {n} ({reduction:?}, {policy:?})");
            compared += 1;
        }
    }
    assert!(compared >= 80, "{compared} counts compared");
}

#[test]
fn a_gather_folds_into_the_scatter() {
    let mut rng = Rng::new(0x6a7e);
    let (mut fused, mut failed) = (0, [0; 3]);
    for case in 0..48 {
        let f16 = case % 3 == 2;
        let r = if f16 {
            fold_case::<stridex::half::f16, i64>(
                &mut rng,
                |v| stridex::half::f16::from_f32(v as f32 * 0.25),
                |v| v,
            )
        } else if case % 3 == 1 {
            fold_case::<f32, i64>(&mut rng, |v| (v as f32 * 0.37).sin() * 100.0, |v| v)
        } else {
            fold_case::<f32, i32>(&mut rng, |v| (v as f32 * 0.37).sin() * 100.0, |v| v as i32)
        };
        fused += usize::from(r.0);
        failed[r.1] += 1;
    }
    // Most fold; some fail in each stage (a fused one among them, checked in its own order).
    assert!(
        fused >= 16 && failed[1] >= 2 && failed[2] >= 2,
        "{fused} of 48 folded, failures by stage {failed:?}"
    );

    // The combine of `a_chain_ends_in_a_scatter`: one kernel, the grouped scatter's; where
    // tiles spread, what a GPU launches instead: the gather, then the grouping kernels and the
    // grouped one, each headed.
    let combine = stridex::chain! {
        data: f32[10, 8],
        gather { indices: i32[12], axis: 0 },
        scatter { into: f32[5, 8], indices: i32[12], axis: 0, reduction: add, out_of_range: error },
    };
    assert!(combine.is_fused().unwrap());
    let source = combine.kernel_source(Dialect::Wgsl).unwrap().unwrap();
    if std::env::var("STRIDEX_TILE").as_deref() == Ok("spread") {
        let kernels = source.matches("@compute").count();
        let headed = source.matches("// kernel ").count();
        assert!(kernels >= 3 && headed == kernels - 1, "{source}");
    } else {
        assert_eq!(source.matches("@compute").count(), 1, "{source}");
    }
    assert!(combine.describe().contains("folds the gather"), "{}", combine.describe());

    // Under the gather's `zero`, a row out of range is zeros, taken in its place in the list:
    // the max of a token's negative row and a zero row is 0, and -0.0 + 0.0 is 0.0.
    let padded = stridex::chain! {
        data: f32[3, 2],
        gather { indices: i32[5], axis: 0, out_of_range: zero },
        scatter { into: f32[2, 2], indices: i32[5], axis: 0, reduction: max, out_of_range: error },
    };
    assert!(padded.is_fused().unwrap());
    let data = [-1.0f32, -2.0, -3.0, -4.0, -5.0, -6.0];
    let picks = [2i32, 7, 0, -9, 1];
    let tokens = [0i32, 0, 1, 1, 1];
    let raw = [i32::bytes(&picks).into_owned(), i32::bytes(&tokens).into_owned()];
    let dest = [-10.0f32, -20.0, -30.0, -40.0];
    let got = scattered(&padded, &data, (&picks[..], &tokens[..]), &[&raw[0], &raw[1]], &dest).unwrap();
    // Token 0: max(-10, -5, 0) and max(-20, -6, 0); token 1: max(-30, -1, 0, -3) and so on.
    assert_eq!(got, [0.0, 0.0, 0.0, 0.0]);
    let summed = stridex::chain! {
        data: f32[3, 2],
        gather { indices: i32[2], axis: 0, out_of_range: zero },
        scatter { into: f32[2, 2], indices: i32[2], axis: 0, reduction: add, out_of_range: error },
    };
    assert!(summed.is_fused().unwrap());
    let (picks, tokens) = ([5i32, 1], [0i32, 1]);
    let raw = [i32::bytes(&picks).into_owned(), i32::bytes(&tokens).into_owned()];
    let dest = [-0.0f32, 1.0, 2.0, 3.0];
    let got = scattered(&summed, &data, (&picks[..], &tokens[..]), &[&raw[0], &raw[1]], &dest).unwrap();
    // Token 0 adds the zero row: -0.0 + 0.0 is +0.0 (dropping the position would keep -0.0).
    assert_eq!(f32::bytes(&got), f32::bytes(&[0.0f32, 1.0, -1.0, -1.0]));
    assert!(summed.describe().contains("takes it as zeros"), "{}", summed.describe());
    // A product with a zero row: -0.0 * 0.0 is -0.0, 1.0 * 0.0 is 0.0.
    let multiplied = Chain::data::<f32>(&[3, 2])
        .gather(Gather::onnx().indices::<i32>(&[2]).axis(0).out_of_range(OutOfRange::Zero))
        .scatter(
            stridex::Scatter::openvino()
                .data::<f32>(&[2, 2])
                .indices::<i32>(&[2])
                .reduction(stridex::Reduction::Mul),
        )
        .build()
        .unwrap();
    assert!(multiplied.is_fused().unwrap());
    let (picks, tokens) = ([-4i32, 1], [0i32, 1]);
    let raw = [i32::bytes(&picks).into_owned(), i32::bytes(&tokens).into_owned()];
    let got = scattered(&multiplied, &data, (&picks[..], &tokens[..]), &[&raw[0], &raw[1]], &dest).unwrap();
    assert_eq!(f32::bytes(&got), f32::bytes(&[-0.0f32, 0.0, -6.0, -12.0]));
}

/// One drawn gather-then-scatter chain checked against its two ops: whether it folded, and
/// the stage that failed (0: none).
fn fold_case<T: Element, J: IndexElement>(
    rng: &mut Rng,
    value: impl Fn(i64) -> T,
    index: impl Fn(i64) -> J,
) -> (bool, usize) {
    let rows = 1 + rng.below(9);
    let mut inner: Vec<usize> =
        if rng.chance(50) { vec![1 + rng.below(9)] } else { vec![2, 1 + rng.below(4)] };
    // A scatter's runs of 16-bit elements are whole words.
    if T::DTYPE.size() == 2 {
        *inner.last_mut().unwrap() *= 2;
    }
    let span: usize = inner.iter().product();
    // Padded rows now and then, by a whole vector or not.
    let pad = if rng.chance(30) { [4, 8, 1, 3][rng.below(4)] } else { 0 };
    let mut sizes = vec![rows];
    sizes.extend(&inner);
    let mut strides = vec![span + pad];
    let mut s = 1;
    for &n in inner.iter().rev() {
        strides.insert(1, s);
        s *= n;
    }
    let (positions, tokens) = (1 + rng.below(20), 1 + rng.below(6));
    // The gather's indices packed, every other element, or one broadcast to every position.
    let index_stride = [1, 1, 2, 0][rng.below(4)];
    let gather_policy =
        [OutOfRange::Error, OutOfRange::Clamp, OutOfRange::Clamp, OutOfRange::Zero][rng.below(4)];
    let scatter_policy =
        [OutOfRange::Error, OutOfRange::Skip, OutOfRange::Zero, OutOfRange::Clamp][rng.below(4)];
    let reduction = stridex::Reduction::ALL[rng.below(5)];
    let mut dest_sizes = vec![tokens];
    dest_sizes.extend(&inner);
    let mut updates_sizes = vec![positions];
    updates_sizes.extend(&inner);
    let chain = Chain::data_strided::<T>(&sizes, Some(&strides))
        .gather(
            Gather::onnx()
                .indices_strided::<i32>(&[positions], Some(&[index_stride]))
                .axis(0)
                .out_of_range(gather_policy),
        )
        .scatter(
            stridex::Scatter::openvino()
                .data::<T>(&dest_sizes)
                .indices::<J>(&[positions])
                .reduction(reduction)
                .out_of_range(scatter_policy),
        )
        .build()
        .unwrap();
    let pick = Gather::onnx()
        .data_strided::<T>(&sizes, Some(&strides))
        .indices_strided::<i32>(&[positions], Some(&[index_stride]))
        .axis(0)
        .out_of_range(gather_policy)
        .build()
        .unwrap();
    let add = stridex::Scatter::openvino()
        .data::<T>(&dest_sizes)
        .indices::<J>(&[positions])
        .updates(&updates_sizes)
        .reduction(reduction)
        .out_of_range(scatter_policy)
        .build()
        .unwrap();
    let data: Vec<T> = (0..(rows - 1) * (span + pad) + span).map(|v| value(v as i64)).collect();
    let dest: Vec<T> = (0..tokens * span).map(|v| value(-(v as i64) - 7)).collect();
    // Rarely out of range (heavy duplication within range).
    let draw = |rng: &mut Rng, n: usize| {
        let n = n as i64;
        if rng.chance(4) {
            rng.range(-2 * n - 2, 2 * n + 3)
        } else {
            rng.range(-n, n)
        }
    };
    let g: Vec<i32> = (0..(positions - 1) * index_stride + 1).map(|_| draw(rng, rows) as i32).collect();
    let t: Vec<i64> = (0..positions).map(|_| draw(rng, tokens)).collect();
    let tj: Vec<J> = t.iter().map(|&v| index(v)).collect();
    // The stage that fails and its error, as text.
    let expected = pick
        .run(&data, &g)
        .map_err(|e| (1, e.to_string()))
        .and_then(|picked| add.run(&dest, &tj, picked.data()).map_err(|e| (2, e.to_string())));
    let raw = [i32::bytes(&g).into_owned(), J::bytes(&tj).into_owned()];
    let got = scattered(&chain, &data, (&g[..], &tj[..]), &[&raw[0], &raw[1]], &dest);
    let failed = match (expected, got) {
        (Ok(e), Ok(y)) => {
            assert_eq!(T::bytes(&y), T::bytes(e.data()), "{}", chain.describe());
            0
        }
        (Err((stage, e)), Err(Error::InStage { stage: s, error })) => {
            assert_eq!((stage, e), (s, error.to_string()), "{}", chain.describe());
            stage
        }
        (e, y) => panic!("{}\nexpected {e:?}\ngot {y:?}", chain.describe()),
    };
    (chain.is_fused().unwrap(), failed)
}
