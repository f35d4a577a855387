//! Kernels against the naive reference on random descriptors: every rule set, dtype, index
//! type, layout (broadcast, padded, permuted) and out-of-range policy, with hostile indices
//! (out of range both ways, beyond 32 bits). Every buffer sits between guard regions that must
//! come back untouched. `PROPTEST_CASES` overrides the case counts (2000 gathers, 500 SLICE1
//! slices, 300 ONNX slices). A failure shrinks to the smallest descriptor that still fails.

use crate::common::generate::{self, Rng};
use crate::common::props::{cases, choices, device, FromI128};
use crate::common::reference::{self as r, Outcome};
use proptest::prelude::*;
use stridex::{DType, Element, Error, GatherOp, SliceOp};

fn check_gather_case(choices: Vec<u64>, seed: u64) -> Result<(), String> {
    let mut rng = Rng::from_choices(choices, seed);
    let case = generate::gather_case(&mut rng, &DType::ALL);
    with_types!(case.desc.data.dtype, case.desc.indices.dtype, check_gather(&case, &mut rng))
}

fn check_gather<T: Element, I: FromI128>(case: &generate::GatherCase, rng: &mut Rng) -> Result<(), String> {
    let re = &case.reference;
    let operands = GatherOperands {
        data: (&re.data_sizes, &re.data_strides),
        indices: (&re.index_sizes, &re.index_strides),
        axis_size: re.data_sizes[re.axis()],
        signed: re.signed_indices,
    };
    check_gather_op::<T, I>(case.desc, &operands, |data, values| re.run(data, values), rng)
}

/// What a gather of either form reads: the data's and the indices' sizes and strides, and the
/// gathered axis' extent and whether indices may be negative.
pub(crate) struct GatherOperands<'a> {
    pub data: (&'a [usize], &'a [usize]),
    pub indices: (&'a [usize], &'a [usize]),
    pub axis_size: usize,
    pub signed: bool,
}

/// Runs `desc` on random data and indices (hostile ones sometimes), every buffer between guard
/// regions, and compares its result or its error with `reference`'s.
pub(crate) fn check_gather_op<T: Element, I: FromI128>(
    desc: stridex::GatherDesc,
    operands: &GatherOperands,
    reference: impl Fn(&[T], &[i128]) -> Outcome<T>,
    rng: &mut Rng,
) -> Result<(), String> {
    let data_len = r::min_len(operands.data.0, operands.data.1);
    let data = T::from_bytes(&rng.bytes(data_len * T::DTYPE.size()));
    let index_len = r::min_len(operands.indices.0, operands.indices.1);
    let wide = I::INDEX.words() == 2;
    let hostile = rng.chance(40);
    let values = generate::index_values(rng, index_len, operands.axis_size, operands.signed, wide, hostile);
    let indices: Vec<I> = values.iter().map(|&v| I::from_i128(v)).collect();

    let op = GatherOp::<T, I>::new(desc).map_err(|e| format!("valid descriptor refused: {e}\n{desc:?}"))?;
    // Every buffer sits between guard regions that must stay untouched.
    let got = op.__run_guarded(device(), &data, &indices);
    let context = || format!("{desc:?}\nkernel: {:?}\nindices: {values:?}", op.kernel());
    match (reference(&data, &values), got) {
        (Outcome::Ok { shape, buffer }, Ok(y)) => {
            if y.shape() != shape.as_slice() {
                return Err(format!("shape {:?} != reference {shape:?}\n{}", y.shape(), context()));
            }
            if T::bytes(y.data()) != T::bytes(&buffer) {
                return Err(format!(
                    "values\n  got       {:?}\n  reference {buffer:?}\n{}",
                    y.data(),
                    context()
                ));
            }
            Ok(())
        }
        (Outcome::Err { position, value }, Err(Error::IndexOutOfRange { position: p, value: v, .. })) => {
            if (p.clone(), v) != (position.clone(), value) {
                return Err(format!("error at {p:?} = {v}, reference {position:?} = {value}\n{}", context()));
            }
            Ok(())
        }
        (_, Err(e)) => Err(format!("unexpected error {e}\n{}", context())),
        (Outcome::Err { position, value }, Ok(_)) => {
            Err(format!("expected an error at {position:?} = {value}\n{}", context()))
        }
    }
}

fn check_slice_case(choices: Vec<u64>, seed: u64) -> Result<(), String> {
    let mut rng = Rng::from_choices(choices, seed);
    let case = generate::slice_case(&mut rng, &DType::ALL);
    with_data_type!(case.desc.input.dtype, check_slice(&case, &mut rng))
}

fn check_slice<T: Element>(case: &generate::SliceCase, rng: &mut Rng) -> Result<(), String> {
    let re = &case.reference;
    let len = r::min_len(&re.sizes, &re.strides);
    let input = T::from_bytes(&rng.bytes(len * T::DTYPE.size()));
    let op = SliceOp::<T>::new(case.desc)
        .map_err(|e| format!("valid descriptor refused: {e}\n{:?}", case.desc))?;
    let y = op.__run_guarded(device(), &input).map_err(|e| format!("{e}\n{:?}", case.desc))?;
    let (shape, buffer) = re.run(&input);
    if y.shape() != shape.as_slice() || T::bytes(y.data()) != T::bytes(&buffer) {
        return Err(format!(
            "got {:?} {:?}\nreference {shape:?} {buffer:?}\n{:?}\nkernel: {:?}",
            y.shape(),
            y.data(),
            case.desc,
            op.kernel()
        ));
    }
    Ok(())
}

fn check_onnx_slice_case(choices: Vec<u64>, seed: u64) -> Result<(), String> {
    let mut rng = Rng::from_choices(choices, seed);
    let case = generate::onnx_slice_case(&mut rng, &DType::ALL);
    with_data_type!(case.desc.input.dtype, check_onnx_slice(&case, &mut rng))
}

fn check_onnx_slice<T: Element>(case: &generate::OnnxSliceCase, rng: &mut Rng) -> Result<(), String> {
    let len: usize = case.shape.iter().product();
    let input = T::from_bytes(&rng.bytes(len * T::DTYPE.size()));
    let op = SliceOp::<T>::new(case.desc)
        .map_err(|e| format!("valid descriptor refused: {e}\n{:?}", case.desc))?;
    let y = op.__run_guarded(device(), &input).map_err(|e| format!("{e}\n{:?}", case.desc))?;
    let (shape, buffer) = r::onnx_slice(
        &input,
        &case.shape,
        &case.starts,
        &case.ends,
        case.axes.as_deref(),
        case.steps.as_deref(),
    );
    if y.shape() != shape.as_slice() || T::bytes(y.data()) != T::bytes(&buffer) {
        return Err(format!(
            "got {:?} {:?}\nreference {shape:?} {buffer:?}\n{:?}\nkernel: {:?}",
            y.shape(),
            y.data(),
            case.desc,
            op.kernel()
        ));
    }
    Ok(())
}

/// Channels-last inputs read as channels-first: the row kernel's transposed blocks, which the
/// random slices rarely produce.
#[test]
fn channels_last_slices_match_reference() {
    let mut rng = Rng::new(11);
    for case in generate::channels_last_slices() {
        check_slice::<f32>(&case, &mut rng).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2000), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn gather_matches_reference((choices, seed) in choices()) {
        check_gather_case(choices, seed).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(500), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn slice_matches_reference((choices, seed) in choices()) {
        check_slice_case(choices, seed).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn onnx_slice_matches_reference((choices, seed) in choices()) {
        check_onnx_slice_case(choices, seed).map_err(TestCaseError::fail)?;
    }
}
