//! Chains that end in `convert`: the result in f32, f16 or bf16, `x * scale[c] + offset[c]`
//! computed in f32, in the kernel that moves the elements. Against plain loops and against the
//! chain without its `convert` (itself checked against the reference in `chains`) converted on
//! the host: every source type to every result type, channels inside and outside the rows,
//! strided and `_` outputs, index reads per row and per element, the staged path, the builder.

use crate::common::chains::{self, Staged};
use crate::common::generate::Rng;
use crate::common::props::{cases, device};
use crate::common::reference as r;
use proptest::prelude::*;
use stridex::core::kernel::Walk;
use stridex::core::{ChainDesc, Channels, ConvertStage, StageDesc};
use stridex::half::{bf16, f16};
use stridex::{Chain, ChainOp, DType, Element, Error, Gather, Operand, Slice, SliceRange};

/// An element as the value the convert stage reads.
trait Value: Element {
    fn value(self) -> f64;
}

macro_rules! value_as {
    ($($t:ty),*) => {$(impl Value for $t { fn value(self) -> f64 { self as f64 } })*};
}
value_as!(u8, i8, u16, i16, u32, i32, f32);

impl Value for f16 {
    fn value(self) -> f64 {
        self.to_f64()
    }
}

impl Value for bf16 {
    fn value(self) -> f64 {
        self.to_f64()
    }
}

/// A result element as f64.
trait Converted: Element {
    /// Relative size of one unit in the last place.
    const EPS: f64;
    /// The smallest positive subnormal.
    const TINY: f64;
    fn as_f64(self) -> f64;
}

impl Converted for f32 {
    const EPS: f64 = f32::EPSILON as f64;
    const TINY: f64 = 1.401298464324817e-45;
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl Converted for f16 {
    const EPS: f64 = 9.765625e-4;
    const TINY: f64 = 5.960464477539063e-8;
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
}

impl Converted for bf16 {
    const EPS: f64 = 7.8125e-3;
    const TINY: f64 = 9.183549615799121e-41;
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
}

/// `x * scale + offset` in f32, as the kernel computes it (the f32 of `x`, then a multiply and
/// an add, each rounded), and the slack its roundings leave: a device compiler may fuse the two
/// into one rounding (CubeCL's CPU runtime does) and may convert integers past 2^24 toward zero,
/// each a unit in the last place of the product or the sum.
fn expected(x: f64, scale: f32, offset: f32) -> (f64, f64) {
    let xf = x as f32;
    let value = (xf * scale + offset) as f64;
    let slack = ((x * scale as f64).abs() + (offset as f64).abs()) * f32::EPSILON as f64;
    (value, slack)
}

/// Whether `got` is the result type's rounding of `want` within one unit in its last place,
/// beyond the slack of the f32 computation.
fn close<O: Converted>(got: O, (want, slack): (f64, f64)) -> bool {
    let g = got.as_f64();
    if want.is_nan() {
        return g.is_nan();
    }
    if g.is_infinite() || want.is_infinite() {
        // Past the type's range a value rounds to infinity; a one-ulp difference may or may not.
        return g.signum() == want.signum() && (g.is_infinite() || g.abs() >= 65504.0 * 0.999);
    }
    (g - want).abs() <= (want.abs() * O::EPS).max(O::TINY) * 1.01 + slack
}

/// The host's convert of a packed `shape` result: channel `c` is the coordinate along `dim`.
fn convert_host<T: Value>(
    values: &[T],
    shape: &[usize],
    dim: usize,
    scale: &Channels,
    offset: &Channels,
) -> Vec<(f64, f64)> {
    let inner: usize = shape[dim + 1..].iter().product();
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let c = (i / inner.max(1)) % shape[dim].max(1);
            expected(v.value(), scale.get(c), offset.get(c))
        })
        .collect()
}

fn assert_close<O: Converted>(got: &[O], want: &[(f64, f64)], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(close(g, w), "{what}: element {i} is {g:?}, expected {} (slack {})", w.0, w.1);
    }
}

/// The image pipeline of the issue: NHWC u8 with a run-time batch, cropped, flipped, BGR to
/// RGB, out as normalized NCHW f32, in one kernel.
#[test]
fn an_nhwc_batch_comes_out_normalized_nchw_in_one_kernel() {
    stridex::chain! {
        static PREPROCESS;
        data: u8[_, 3, 16, 16] strides [768, 1, 48, 3],
        slice { s[.., ..;-1, 2..14, 2..14;-1] },
        convert { to: f32, dim: 1, scale: [0.017124753, 0.017507003, 0.017429194], offset: [-2.117904, -2.0357144, -1.8044444] },
    }
    assert!(PREPROCESS.is_dynamic() && PREPROCESS.is_fused().unwrap());
    assert!(
        matches!(PREPROCESS.kernel().unwrap(), Some(stridex::ChainKernel::Fused(k)) if matches!(k.walk, Walk::Convert(_)))
    );
    let scale = [0.017124753f32, 0.017507003, 0.017429194];
    let offset = [-2.117904f32, -2.0357144, -1.8044444];
    for batch in [1usize, 3, 8] {
        let nhwc: Vec<u8> = (0..batch * 768).map(|v| (v * 7 % 251) as u8).collect();
        let y: stridex::Tensor<f32> = PREPROCESS.run(&nhwc, ()).unwrap();
        assert_eq!(y.shape(), [batch, 3, 12, 12]);
        let mut want = Vec::new();
        for b in 0..batch {
            for c in 0..3 {
                for h in 0..12 {
                    for w in 0..12 {
                        let (row, col, channel) = (2 + h, 2 + (11 - w), 2 - c);
                        let x = nhwc[b * 768 + (row * 16 + col) * 3 + channel];
                        want.push(expected(x as f64, scale[c], offset[c]));
                    }
                }
            }
        }
        assert_close(y.data(), &want, &format!("batch {batch}"));
        // `run_into` writes the caller's f32 buffer.
        let mut out = vec![0f32; batch * 432];
        PREPROCESS.run_into(&nhwc, (), &mut out).unwrap();
        assert_eq!(out, y.data());
    }
    // The builder makes the same op.
    let full = SliceRange::FULL;
    let built = Chain::data_strided::<u8>(&[0, 3, 16, 16], Some(&[768, 1, 48, 3]))
        .dynamic_leading()
        .slice(Slice::directml().ranges(&[
            full,
            full.step(-1),
            SliceRange::new(2, 14),
            SliceRange::new(2, 14).step(-1),
        ]))
        .convert::<f32>(1, &scale, &offset)
        .build()
        .unwrap();
    assert_eq!(built.desc().stages, PREPROCESS.desc().stages);
    let nhwc: Vec<u8> = (0..2 * 768).map(|v| (v * 5 % 253) as u8).collect();
    assert_eq!(built.run(&nhwc, ()).unwrap().data(), PREPROCESS.run(&nhwc, ()).unwrap().data());
    assert!(PREPROCESS.describe().contains("convert (u8 -> f32"), "{}", PREPROCESS.describe());
}

/// Every source type to every result type, with the values at the edges of each (signs,
/// extremes, f16 subnormals, infinities and NaN of the float sources).
#[test]
fn every_type_converts_to_f32_f16_and_bf16() {
    fn check<T: Value>(values: Vec<T>) {
        check_to::<T, f32>(&values);
        check_to::<T, f16>(&values);
        check_to::<T, bf16>(&values);
    }
    fn check_to<T: Value, O: Converted>(values: &[T]) {
        let n = values.len();
        let (scale, offset) = ([0.5f32, -3.0], [1.25f32, 0.0]);
        let op = Chain::data::<T>(&[2, n / 2]).convert::<O>(0, &scale, &offset).build().unwrap();
        let y = op.run(values, ()).unwrap();
        let want = convert_host(values, &[2, n / 2], 0, &Channels::of(&scale), &Channels::of(&offset));
        assert_close(y.data(), &want, &format!("{} -> {}", T::DTYPE, O::DTYPE));
        // One value for every channel: a plain cast.
        let cast = Chain::data::<T>(&[n]).convert::<O>(0, &[1.0], &[0.0]).build().unwrap();
        let want: Vec<_> = values.iter().map(|v| expected(v.value(), 1.0, 0.0)).collect();
        assert_close(cast.run(values, ()).unwrap().data(), &want, &format!("{} as {}", T::DTYPE, O::DTYPE));
    }
    check::<u8>(vec![0, 1, 2, 127, 128, 200, 254, 255]);
    check::<i8>(vec![0, 1, -1, 127, -128, 5, -77, 100]);
    check::<u16>(vec![0, 1, 255, 256, 32767, 32768, 65534, 65535]);
    check::<i16>(vec![0, -1, 1, 32767, -32768, 300, -300, 12345]);
    check::<u32>(vec![0, 1, 16_777_216, 16_777_217, u32::MAX, 1 << 31, 65_536, 7]);
    check::<i32>(vec![0, -1, i32::MAX, i32::MIN, 16_777_217, -16_777_217, 42, -42]);
    check::<f32>(vec![0.0, -0.0, 1.5, -2.75, 1e-40, f32::MAX, f32::INFINITY, f32::NAN]);
    let halves = [0.0f32, -0.0, 1.0, -65504.0, 6.0e-8, -1.2e-5, f32::INFINITY, f32::NAN];
    check::<f16>(halves.iter().map(|&v| f16::from_f32(v)).collect());
    check::<bf16>(halves.iter().map(|&v| bf16::from_f32(v)).collect());
}

/// f32 results round to f16 and bf16 to nearest, ties to even, as `half` does: every result of
/// a range of f32 bit patterns (normals, subnormals, the overflow edge), exactly.
#[test]
fn rounding_to_f16_and_bf16_is_to_nearest_even() {
    let mut bits: Vec<u32> =
        vec![0x3300_0000, 0x3300_0001, 0x3380_0000, 0x387F_E000, 0x387F_F000, 0x477F_EFFF];
    bits.extend([0x477F_F000, 0x477F_F001, 0x7F80_0000, 0x7FC0_0001, 0x3F80_1000, 0x3F80_3000, 0x3F80_8000]);
    bits.extend((0..4000u32).map(|i| i.wrapping_mul(0x9E37_79B9) & 0x7FFF_FFFF | (i & 1) << 31));
    // No NaN (its payload is the device's) and no -0 (`x * 1 + 0` is +0, or -0 where a
    // compiler folds it to `x`).
    bits.retain(|&b| (b & 0x7FFF_FFFF) <= 0x7F80_0000 && b != 0x8000_0000);
    let values: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
    let n = values.len();
    let to_f16 = Chain::data::<f32>(&[n]).convert::<f16>(0, &[1.0], &[0.0]).build().unwrap();
    let got = to_f16.run(&values, ()).unwrap();
    for (i, (&g, &v)) in got.data().iter().zip(&values).enumerate() {
        assert_eq!(g.to_bits(), f16::from_f32(v).to_bits(), "f16 of {v:e} ({:#x}), element {i}", v.to_bits());
    }
    let to_bf16 = Chain::data::<f32>(&[n]).convert::<bf16>(0, &[1.0], &[0.0]).build().unwrap();
    let got = to_bf16.run(&values, ()).unwrap();
    for (&g, &v) in got.data().iter().zip(&values) {
        assert_eq!(g.to_bits(), bf16::from_f32(v).to_bits(), "bf16 of {v:e}");
    }
    // f16 widens exactly: every f16 bit pattern.
    let halves: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let widen = Chain::data::<f16>(&[65536]).convert::<f32>(0, &[1.0], &[0.0]).build().unwrap();
    // (`x * 1 + 0` is +0 for -0 under IEEE rules; lavapipe folds it to `x` and keeps -0.)
    for (&g, &h) in widen.run(&halves, ()).unwrap().data().iter().zip(&halves) {
        assert!(g == h.to_f32() || (g.is_nan() && h.is_nan()), "{h:?} widened to {g}");
    }
}

/// 16-bit results are written a word at a time: channels last (rows of the packed run), odd
/// packed shapes (one row, its last word half full), a `_` count, and a strided layout no
/// rows of whole words fit (refused with the fix).
#[test]
fn sixteen_bit_results_in_any_packed_shape() {
    stridex::chain! {
        static NHWC_F16;
        data: u8[_, 3, 5, 5] strides [75, 1, 15, 3],
        slice { s[.., .., 1..4, 0..4] },
        convert { to: f16, dim: 1, scale: [1.0, 2.0, 4.0], offset: [0.5, 0.25, 0.125] },
        output: [_, 3, 3, 4] strides [36, 1, 12, 3],
    }
    for batch in [1usize, 2, 5] {
        let data: Vec<u8> = (0..batch * 75).map(|v| (v * 13 % 256) as u8).collect();
        let y = NHWC_F16.run(&data, ()).unwrap();
        assert_eq!(y.shape(), [batch, 3, 3, 4]);
        let (scale, offset) = ([1.0f32, 2.0, 4.0], [0.5f32, 0.25, 0.125]);
        let got = y.data();
        for b in 0..batch {
            for c in 0..3 {
                for h in 0..3 {
                    for w in 0..4 {
                        let x = data[b * 75 + c + (1 + h) * 15 + w * 3] as f64;
                        let at = b * 36 + h * 12 + w * 3 + c;
                        assert!(
                            close(got[at], expected(x, scale[c], offset[c])),
                            "batch {batch} [{b},{c},{h},{w}]"
                        );
                    }
                }
            }
        }
    }
    // An odd packed result: one row of 15, its last word half full.
    let odd =
        Chain::data::<i16>(&[3, 5]).convert::<bf16>(-1, &[1.0, 2.0, 3.0, 4.0, 5.0], &[0.0]).build().unwrap();
    let data: Vec<i16> = (0..15).map(|v| v * 100 - 700).collect();
    let want =
        convert_host(&data, &[3, 5], 1, &Channels::of(&[1.0, 2.0, 3.0, 4.0, 5.0]), &Channels::of(&[0.0]));
    assert_close(odd.run(&data, ()).unwrap().data(), &want, "i16 [3, 5] -> bf16");
    // A pitch of 7 f16 elements per row of 5: no row of whole words.
    let e = Chain::data::<u8>(&[3, 5])
        .convert::<f16>(0, &[1.0], &[0.0])
        .output(&[3, 5], Some(&[7, 1]))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("pad the innermost dimension to an even size"), "{e}");
}

/// Index reads: a gather along the rows (per element, BGR to RGB as a gather on the channels
/// when they are innermost) and along the channels, `zero` out-of-range positions converting
/// 0 (so they hold the offset), and an empty axis that makes the chain run stage by stage.
#[test]
fn gathers_then_convert() {
    stridex::chain! {
        static SWAP;
        data: u8[4, 4, 3],
        gather { indices: i32[3], axis: 2, out_of_range: zero },
        convert { to: f32, dim: 2, scale: [2.0, 3.0, 4.0], offset: [10.0, 20.0, 30.0] },
    }
    let data: Vec<u8> = (0..48).map(|v| v as u8).collect();
    let y = SWAP.run(&data, (&[2, 1, 7],)).unwrap();
    let mut want = Vec::new();
    for p in 0..16 {
        for (c, &i) in [2usize, 1, 7].iter().enumerate() {
            let x = if i < 3 { data[p * 3 + i] as f64 } else { 0.0 };
            want.push(expected(x, [2.0, 3.0, 4.0][c], [10.0, 20.0, 30.0][c]));
        }
    }
    assert_close(y.data(), &want, "channels gathered per element");

    stridex::chain! {
        static ROWS;
        data: f16[6, 8],
        gather { indices: i64[2, 2], axis: 0, out_of_range: clamp },
        slice { s[.., .., 1..7;2] },
        convert { to: bf16, dim: 1, scale: [-1.0, 0.5], offset: [0.0, 1.0] },
    }
    let data: Vec<f16> = (0..48).map(|v| f16::from_f32(v as f32 * 0.25 - 3.0)).collect();
    let y = ROWS.run(&data, (&[5, -1, 9, 0],)).unwrap();
    assert_eq!(y.shape(), [2, 2, 3]);
    let mut want = Vec::new();
    for (k, &i) in [5i64, -1, 9, 0].iter().enumerate() {
        let row = if i < 0 { 5 } else { i.min(5) } as usize;
        for j in [1usize, 3, 5] {
            let c = k % 2;
            want.push(expected(data[row * 8 + j].to_f64(), [-1.0, 0.5][c], [0.0, 1.0][c]));
        }
    }
    assert_close(y.data(), &want, "rows gathered per row");

    // A gather along an axis of size 0: every index out of range, the chain staged.
    let empty = Chain::data::<u8>(&[3, 0])
        .gather(Gather::onnx().indices::<i32>(&[2]).axis(1).out_of_range(stridex::OutOfRange::Zero))
        .convert::<f32>(0, &[1.0, 2.0, 3.0], &[7.0, 8.0, 9.0])
        .build()
        .unwrap();
    assert!(!empty.is_fused().unwrap());
    assert_eq!(empty.run(&[], (&[0, 1],)).unwrap().data(), [7.0, 7.0, 8.0, 8.0, 9.0, 9.0]);
}

/// A zero scale still multiplies: an infinite or NaN element converts to NaN (IEEE's `inf * 0`),
/// not to the offset. Vulkan lets a driver assume no infinities or NaNs and fold `x * 0.0` to
/// `0.0` when the scale is a constant in the shader (lavapipe did, through the SPIR-V lane), so
/// the kernel must keep the product for such elements itself. Per channel, the zero scale on
/// one channel only, and from f16 and f32 data (their encodings of infinity differ).
#[test]
fn a_zero_scale_keeps_infinities_and_nans_nan() {
    let specials = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -1.5, 0.0, -0.0, 1.0e30, 3.0];
    let want = |scale: &[f32], offset: &[f32]| -> Vec<(f64, f64)> {
        specials
            .iter()
            .enumerate()
            .map(|(i, &x)| expected(x as f64, scale[i % scale.len()], offset[i % offset.len()]))
            .collect()
    };
    for (scale, offset) in [(vec![0.0f32], vec![-6.25f32]), (vec![2.0, -0.0], vec![1.0, -6.25])] {
        let channels = scale.len();
        let shape = [specials.len() / channels, channels];
        let from_f32 = Chain::data::<f32>(&shape).convert::<f32>(1, &scale, &offset).build().unwrap();
        let y = from_f32.run(&specials, ()).unwrap();
        assert_close(y.data(), &want(&scale, &offset), &format!("f32 data, scale {scale:?}"));
        let halves: Vec<f16> = specials.iter().map(|&x| f16::from_f32(x)).collect();
        let from_f16 = Chain::data::<f16>(&shape).convert::<f16>(1, &scale, &offset).build().unwrap();
        let y = from_f16.run(&halves, ()).unwrap();
        let want16: Vec<(f64, f64)> = halves
            .iter()
            .enumerate()
            .map(|(i, &x)| expected(x.to_f64(), scale[i % channels], offset[i % channels]))
            .collect();
        assert_close(y.data(), &want16, &format!("f16 data, scale {scale:?}"));
    }
}

/// The rules, in the builder as in the macro (the macro's are UI tests): a `convert` before the
/// last stage, a result type that is not a float, bool data, a wrong channel count, a value
/// that is not finite, and a type that does not match the declared one.
#[test]
fn the_builder_checks_the_convert_rules() {
    let err = |r: Result<(), Error>| r.unwrap_err().to_string();
    let not_last = Chain::data::<u8>(&[4, 3])
        .convert::<f32>(1, &[1.0], &[0.0])
        .slice(Slice::onnx().starts_ends(&[1], &[3]))
        .build()
        .map(drop);
    assert!(err(not_last).contains("a convert stage is the chain's last"));
    let to_int = Chain::data::<u8>(&[4, 3]).convert::<i32>(1, &[1.0], &[0.0]).build().map(drop);
    assert!(err(to_int).contains("writes f32, f16 or bf16"));
    let from_bool = Chain::data::<bool>(&[4]).convert::<f32>(0, &[1.0], &[0.0]).build().map(drop);
    assert!(err(from_bool).contains("reads integers and floats of up to 32 bits"));
    let channels = Chain::data::<u8>(&[4, 3]).convert::<f32>(1, &[1.0, 2.0], &[0.0]).build().map(drop);
    assert!(err(channels).contains("`scale` has 2 values, but dimension 1 (the channels) has size 3"));
    let infinite = Chain::data::<u8>(&[4]).convert::<f32>(0, &[1.0], &[f32::INFINITY]).build().map(drop);
    assert!(err(infinite).contains("`offset[0]` is inf"));
    let desc = Chain::data::<u8>(&[4]).convert::<f16>(0, &[1.0], &[0.0]).desc().unwrap();
    assert!(matches!(
        ChainOp::<u8, (), f32>::new(desc),
        Err(Error::TypeMismatch { tensor: Operand::Output, declared: DType::F16, used: DType::F32 })
    ));
}

/// A random chain (gathers and slices of every rule set, policy and index type, on strided
/// data) ending in `convert` to a random result type, with random channel dimension and
/// values: the kernel against the chain's reference converted on the host.
fn check_convert_case(mut rng: Rng) -> Result<(), String> {
    let from = [
        DType::U8,
        DType::I8,
        DType::U16,
        DType::I16,
        DType::U32,
        DType::I32,
        DType::F16,
        DType::BF16,
        DType::F32,
    ];
    let case = chains::chain_case(&mut rng, &from);
    let to = rng.pick(&[DType::F32, DType::F16, DType::BF16]);
    match (case.dtype, to) {
        (DType::U8, t) => check_to::<u8>(&case, t, &mut rng),
        (DType::I8, t) => check_to::<i8>(&case, t, &mut rng),
        (DType::U16, t) => check_to::<u16>(&case, t, &mut rng),
        (DType::I16, t) => check_to::<i16>(&case, t, &mut rng),
        (DType::U32, t) => check_to::<u32>(&case, t, &mut rng),
        (DType::I32, t) => check_to::<i32>(&case, t, &mut rng),
        (DType::F16, t) => check_to::<f16>(&case, t, &mut rng),
        (DType::BF16, t) => check_to::<bf16>(&case, t, &mut rng),
        (_, t) => check_to::<f32>(&case, t, &mut rng),
    }
}

fn check_to<T: Value>(case: &chains::ChainCase, to: DType, rng: &mut Rng) -> Result<(), String> {
    match to {
        DType::F32 => check_case::<T, f32>(case, rng),
        DType::F16 => check_case::<T, f16>(case, rng),
        _ => check_case::<T, bf16>(case, rng),
    }
}

fn check_case<T: Value, O: Converted>(case: &chains::ChainCase, rng: &mut Rng) -> Result<(), String> {
    let data = T::from_bytes(&rng.bytes(r::min_len(&case.data_sizes, &case.data_strides) * T::DTYPE.size()));
    let staged = case.staged(&data);
    let shape = case.desc.plan().map_err(|e| e.to_string())?.output.sizes.to_vec();
    let dim = if shape.is_empty() { 0 } else { rng.below(shape.len()) };
    let channels = shape.get(dim).copied().unwrap_or(1);
    let per_channel = channels <= 16 && rng.chance(70);
    let value = |rng: &mut Rng| (rng.range(-400, 400) as f32) / 64.0;
    let n = if per_channel { channels } else { 1 };
    let scale: Vec<f32> = (0..n).map(|_| value(rng)).collect();
    let offset: Vec<f32> = (0..n).map(|_| value(rng)).collect();
    let (scale, offset) = (Channels::of(&scale), Channels::of(&offset));
    let mut stages = case.desc.stages.to_vec();
    stages.push(StageDesc::Convert(ConvertStage { to: O::DTYPE, dim: dim as i64, scale, offset }));
    let desc = ChainDesc { stages: stages.into(), ..case.desc.clone() };
    let op = ChainOp::<T, (), O>::__from_checked(desc.clone());
    let context = || format!("{desc:?}\nkernel: {:?}", op.kernel());
    let got = op.__run_erased(device(), &data, &case.index_bytes(), rng.chance(50));
    match (got, staged) {
        (Ok(y), Staged::Ok { shape, buffer }) => {
            if y.shape() != shape {
                return Err(format!("shape {:?}, expected {shape:?}\n{}", y.shape(), context()));
            }
            let want = if shape.is_empty() {
                buffer.iter().map(|v| expected(v.value(), scale.get(0), offset.get(0))).collect()
            } else {
                convert_host(&buffer, &shape, dim, &scale, &offset)
            };
            match y.data().iter().zip(&want).position(|(&g, &w)| !close(g, w)) {
                None => Ok(()),
                Some(i) => {
                    Err(format!("element {i}: {:?}, expected {:?}\n{}", y.data()[i], want[i], context()))
                }
            }
        }
        (Err(Error::InStage { stage, .. }), Staged::Err { stage: s, .. }) if stage == s => Ok(()),
        (got, _) => Err(format!("kernel {:?}\n{}", got.map(|y| y.shape().to_vec()), context())),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(200), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_chains_end_in_convert(
        (choices, seed) in (prop::collection::vec(any::<u64>(), 0..256), any::<u64>())
    ) {
        check_convert_case(Rng::from_choices(choices, seed)).map_err(TestCaseError::fail)?;
    }
}
