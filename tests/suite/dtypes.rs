//! The worked examples of the operator pages (`stridex::core::seeds`) re-run for every data type and index type they can
//! be expressed in, through the runtime builder (the same rules and kernels as the macros).

use stridex::core::seeds;
use stridex::half::{bf16, f16};
use stridex::{Element, Gather, GatherOp, GatherRules, IndexElement, Slice};

/// A data type the seeds' values convert into exactly (small integers; floats for ONNX's).
trait SeedValue: Element {
    fn of(v: f64) -> Self;
    const FLOAT: bool;
}

macro_rules! seed_int {
    ($($t:ty),*) => {$(impl SeedValue for $t {
        fn of(v: f64) -> Self { v as $t }
        const FLOAT: bool = false;
    })*};
}
seed_int!(i64, i32, i16, i8, u64, u32, u16, u8);

impl SeedValue for f64 {
    fn of(v: f64) -> Self {
        v
    }
    const FLOAT: bool = true;
}
impl SeedValue for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
    const FLOAT: bool = true;
}
impl SeedValue for f16 {
    fn of(v: f64) -> Self {
        f16::from_f64(v)
    }
    const FLOAT: bool = true;
}
impl SeedValue for bf16 {
    fn of(v: f64) -> Self {
        bf16::from_f64(v)
    }
    const FLOAT: bool = true;
}

trait SeedIndex: IndexElement {
    fn of(v: i64) -> Option<Self>;
}
macro_rules! seed_index {
    ($($t:ty),*) => {$(impl SeedIndex for $t {
        fn of(v: i64) -> Option<Self> { <$t>::try_from(v).ok() }
    })*};
}
seed_index!(i32, i64, u32, u64);

fn vals<T: SeedValue>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::of(x)).collect()
}

fn iota(n: usize) -> Vec<f64> {
    (1..=n).map(|v| v as f64).collect()
}

/// Every gather seed (`stridex::core::seeds`) this data type and index type express: not
/// DirectML's where its type list lacks `T`, not ONNX's unsigned indices, not fractional
/// values in an integer type, not negative indices in an unsigned type.
fn gather_seeds<T: SeedValue, I: SeedIndex>() -> usize {
    let mut ran = 0;
    for seed in seeds::GATHERS {
        let skip = (seed.rules == GatherRules::DirectMl && !stridex::core::rules::directml_allows(T::DTYPE))
            || (seed.rules == GatherRules::Onnx && !I::INDEX.is_signed())
            || (!T::FLOAT && !seed.integral());
        let Some(idx) = seed.indices.iter().map(|&v| I::of(v)).collect::<Option<Vec<I>>>() else { continue };
        if skip {
            continue;
        }
        let what = format!("{} as {}/{}", seed.name, T::DTYPE, I::INDEX);
        let op = GatherOp::<T, I>::new(seed.desc(T::DTYPE, I::INDEX.dtype()))
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let y = op.run(&vals::<T>(seed.data), &idx).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(y.shape(), seed.out_sizes, "{what}");
        assert_eq!(y.data(), vals::<T>(seed.out).as_slice(), "{what}");
        ran += 1;
    }
    ran
}

/// SLICE1's examples; for types outside DirectML's list, as the equivalent ONNX Slice.
fn slice_seeds<T: SeedValue>() {
    let input = vals::<T>(&iota(16));
    let directml = stridex::core::rules::directml_allows(T::DTYPE);
    for (strides, out, starts, ends) in [
        ([1, 1, 2, 2], [2., 4., 10., 12.], [0, 1], [4, 4]),
        ([1, 1, -2, 2], [14., 16., 6., 8.], [3, 1], [-5, 4]),
    ] {
        let op = if directml {
            Slice::directml()
                .input::<T>(&[1, 1, 4, 4])
                .window(&[0, 0, 0, 1], &[1, 1, 4, 3], &strides)
                .build()
                .unwrap()
        } else {
            let steps = [strides[2], strides[3]];
            Slice::onnx()
                .input::<T>(&[1, 1, 4, 4])
                .starts_ends(&starts, &ends)
                .axes(&[2, 3])
                .steps(&steps)
                .build()
                .unwrap()
        };
        let y = op.run(&input).unwrap();
        assert_eq!(y.shape(), &[1, 1, 2, 2]);
        assert_eq!(y.data(), vals::<T>(&out).as_slice(), "{}", T::DTYPE);
    }
}

macro_rules! every_type {
    ($($name:ident: $t:ty => $expected:expr),* $(,)?) => {$(
        #[test]
        fn $name() {
            let ran = gather_seeds::<$t, i32>() + gather_seeds::<$t, i64>() + gather_seeds::<$t, u32>() + gather_seeds::<$t, u64>();
            // The (example, index type) pairs this type expresses: an example whose indices
            // are negative skips the unsigned index types, ONNX's fractional examples run for
            // float types only, and bf16 has no DirectML examples. A change in the count means
            // an example stopped, or started, running.
            assert_eq!(ran, $expected, "gather seed examples run for {}", stringify!($t));
            slice_seeds::<$t>();
        }
    )*};
}

every_type!(
    seeds_f64: f64 => 48, seeds_f32: f32 => 48, seeds_f16: f16 => 48, seeds_bf16: bf16 => 28,
    seeds_i64: i64 => 44, seeds_i32: i32 => 44, seeds_i16: i16 => 44, seeds_i8: i8 => 44,
    seeds_u64: u64 => 44, seeds_u32: u32 => 44, seeds_u16: u16 => 44, seeds_u8: u8 => 44,
);

/// bool holds 0 and 1 only: the seeds' index patterns over a 0/1 table.
#[test]
fn seeds_bool() {
    let op = Gather::openvino()
        .data::<bool>(&[2, 5])
        .indices::<i64>(&[2, 3])
        .axis(1)
        .batch_dims(1)
        .build()
        .unwrap();
    let data = [true, false, true, false, true, false, true, false, true, false];
    let y = op.run(&data, &[0, 0, 4, 4, 0, 0]).unwrap();
    assert_eq!(y.data(), &[true, true, true, false, false, false]);
    let op = Gather::openvino().data::<bool>(&[5]).indices::<i32>(&[3]).build().unwrap();
    assert_eq!(
        op.run(&[false, false, false, true, true], &[3, 10, -20]).unwrap().data(),
        &[true, false, false]
    );
    let s = Slice::onnx()
        .input::<bool>(&[1, 1, 4, 4])
        .starts_ends(&[3, 1], &[-5, 4])
        .axes(&[2, 3])
        .steps(&[-2, 2])
        .build()
        .unwrap();
    let input: Vec<bool> = (1..=16).map(|v| v % 3 == 0).collect();
    // rows 3 and 1, columns 1 and 3: 14, 16, 6, 8.
    assert_eq!(s.run(&input).unwrap().data(), &[false, false, true, false]);
}
