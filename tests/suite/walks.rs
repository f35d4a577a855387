//! The walks' host models (`core/tests/common/host_model.rs`, checked against the naive
//! reference by core's own tests) and the kernels they model, on the same random descriptors and
//! inputs: the output words and the out-of-range flag must be the same.

use crate::common::generate::{self, Rng};
use crate::common::host_model::{bytes, check_gather, check_slice};
use std::collections::BTreeSet;
use stridex::cubecl::client::Client;
use stridex::{DType, Error, GatherDesc, IndexType};

/// Runs `launch` on device copies of `inputs` and a zeroed output of `out_words` words: the
/// output's words, and whether the launch reported an index out of range.
fn on_device(
    client: &Client,
    out_words: usize,
    inputs: &[&[u32]],
    launch: impl FnOnce(
        &[&stridex::cubecl::server::Handle],
        &stridex::cubecl::server::Handle,
    ) -> Result<(), Error>,
) -> Result<(Vec<u32>, bool), String> {
    let handles: Vec<_> = inputs.iter().map(|w| client.create_from_slice(&bytes(w))).collect();
    let out = client.create_from_slice(&vec![0u8; out_words * 4]);
    let raised = match launch(&handles.iter().collect::<Vec<_>>(), &out) {
        Ok(()) => false,
        Err(Error::IndexOutOfRange { .. }) => true,
        Err(e) => return Err(format!("launch: {e}")),
    };
    let read = client.read_one(out).map_err(|e| format!("read back: {e:?}"))?;
    Ok((read.chunks(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect(), raised))
}

/// A gather's kernel on the device (its element type plays no part in the kernel: `u8` here).
fn on_device_gather(
    client: &Client,
    desc: GatherDesc,
    index: IndexType,
    data: &[u32],
    indices: &[u32],
    out_words: usize,
) -> Result<(Vec<u32>, bool), String> {
    macro_rules! run {
        ($i:ty) => {{
            let op = stridex::GatherOp::<u8, $i>::__from_checked(desc);
            on_device(client, out_words, &[data, indices], |h, out| op.launch(client, h[0], h[1], out))
        }};
    }
    match index {
        IndexType::I32 => run!(i32),
        IndexType::I64 => run!(i64),
        IndexType::U32 => run!(u32),
        IndexType::U64 => run!(u64),
    }
}

fn same(kernel: &[u32], raised: bool, model: &[u32], flagged: bool) -> Result<(), String> {
    if kernel == model && raised == flagged {
        return Ok(());
    }
    Err(format!("kernel {kernel:?} (flag {raised})\nhost model {model:?} (flag {flagged})"))
}

/// The host models of both walks and the kernels they model, on the same random descriptors and
/// inputs: the output words and the out-of-range flag must be the same (so neither can drift
/// while the other still agrees with the reference).
#[test]
fn the_host_model_is_the_kernel() {
    let client = stridex::Device::default_device().expect("a device").client();
    let (mut gathers, mut slices) = (0, 0);
    let seeds = crate::common::props::cases(400);
    for seed in 0..u64::from(seeds) {
        let mut seen = BTreeSet::new();
        let mut rng = Rng::new(seed);
        let case = generate::gather_case(&mut rng, &DType::ALL);
        let index_type = case.desc.indices.dtype.as_index().expect("an index type");
        let mut device = |inputs: &[&[u32]], model: &[u32], flagged: bool| {
            let (kernel, raised) =
                on_device_gather(client, case.desc, index_type, inputs[0], inputs[1], model.len())?;
            same(&kernel, raised, model, flagged)
        };
        let ran = by_size!(
            case.desc.data.dtype.size(),
            check_gather(&case, &mut rng, &mut seen, Some(&mut device))
        );
        gathers += usize::from(ran.unwrap());
        let mut rng = Rng::new(seed ^ 0x5eed);
        let case = generate::slice_case(&mut rng, &DType::ALL);
        let op = stridex::SliceOp::<u8>::__from_checked(case.desc);
        let mut device = |inputs: &[&[u32]], model: &[u32], flagged: bool| {
            let (kernel, raised) =
                on_device(client, model.len(), inputs, |h, out| op.launch(client, h[0], out))?;
            same(&kernel, raised, model, flagged)
        };
        let ran = by_size!(
            case.desc.input.dtype.size(),
            check_slice(&case, &mut rng, &mut seen, Some(&mut device))
        );
        slices += usize::from(ran.unwrap());
    }
    eprintln!("host model against the kernel: {gathers} gathers, {slices} slices");
    // Some drawn descriptors have no kernel (an empty output); most do.
    let enough = seeds as usize * 3 / 8;
    assert!(gathers >= enough && slices >= enough, "{gathers} gathers, {slices} slices had a kernel");
}

/// The row access of an op's fused kernel.
fn access_of(walk: &stridex::core::kernel::Walk) -> stridex::core::kernel::RowAccess {
    match walk {
        stridex::core::kernel::Walk::Rows(w) => w.access,
        other => panic!("not a row walk: {other:?}"),
    }
}

/// Slices stepping 2 or 3 elements along the row, forwards and backwards, with 1-, 2-, 4- and
/// 8-byte elements, and a chain ending in one (the bench's image pipeline): their lines are picked
/// from whole source lines (`RowAccess::SteppedLines`), value for value what the step means.
#[test]
fn stepped_rows_read_whole_lines() {
    use stridex::core::kernel::RowAccess;
    let f32_data = |n: usize| (0..n).map(|i| i as f32).collect::<Vec<f32>>();
    // (op, its input's sizes, expected source element of each output element, row-major).
    macro_rules! check {
        ($op:expr, $data:expr, $expected:expr) => {{
            let op = $op;
            let k = op.kernel().unwrap().unwrap();
            assert_eq!(access_of(&k.walk), RowAccess::SteppedLines, "{:?}", k.walk);
            let data = $data;
            let got = op.run(&data).unwrap();
            let want: Vec<_> = $expected.into_iter().map(|i: usize| data[i]).collect();
            assert_eq!(got.data(), want.as_slice());
        }};
    }
    // [3, 4, 16] -> [3, 2, 8]: every other row and element.
    check!(
        stridex::slice! { input: f32[3, 4, 16], s[.., ..;2, ..;2] },
        f32_data(3 * 4 * 16),
        (0..3).flat_map(|a| (0..2).flat_map(move |b| (0..8).map(move |c| a * 64 + b * 32 + c * 2)))
    );
    check!(
        stridex::slice! { input: f32[2, 3, 24], s[.., .., ..;3] },
        f32_data(2 * 3 * 24),
        (0..6).flat_map(|r| (0..8).map(move |c| r * 24 + c * 3))
    );
    check!(
        stridex::slice! { input: f32[2, 3, 16], s[.., .., ..;-2] },
        f32_data(2 * 3 * 16),
        (0..6).flat_map(|r| (0..8).map(move |c| r * 16 + 15 - c * 2))
    );
    check!(
        stridex::slice! { input: f32[2, 2, 24], s[.., .., ..;-3] },
        f32_data(2 * 2 * 24),
        (0..4).flat_map(|r| (0..8).map(move |c| r * 24 + 23 - c * 3))
    );
    let f64_data = (0..2 * 3 * 8).map(|i| i as f64 * 1.5).collect::<Vec<f64>>();
    check!(
        stridex::slice! { input: f64[2, 3, 8], s[.., .., ..;2] },
        f64_data.clone(),
        (0..6).flat_map(|r| (0..4).map(move |c| r * 8 + c * 2))
    );
    let i64_data = (0..2 * 3 * 8).map(|i| i as i64 * -7).collect::<Vec<i64>>();
    check!(
        stridex::slice! { input: i64[2, 3, 8], s[.., .., ..;-2] },
        i64_data,
        (0..6).flat_map(|r| (0..4).map(move |c| r * 8 + 7 - c * 2))
    );
    // Narrow elements: lanes of the window's words.
    let bytes = (0..2 * 3 * 48).map(|i| (i * 7 % 251) as u8).collect::<Vec<u8>>();
    check!(
        stridex::slice! { input: u8[2, 3, 32], s[.., .., ..;2] },
        bytes[..2 * 3 * 32].to_vec(),
        (0..6).flat_map(|r| (0..16).map(move |c| r * 32 + c * 2))
    );
    check!(
        stridex::slice! { input: u8[2, 3, 48], s[.., .., ..;-3] },
        bytes.clone(),
        (0..6).flat_map(|r| (0..16).map(move |c| r * 48 + 47 - c * 3))
    );
    check!(
        stridex::slice! { input: u8[3, 8], s[.., ..;2] },
        bytes[..24].to_vec(),
        (0..3).flat_map(|r| (0..4).map(move |c| r * 8 + c * 2))
    );
    let halves = (0..2 * 3 * 24).map(|i| stridex::half::f16::from_f32(i as f32 - 20.0)).collect::<Vec<_>>();
    check!(
        stridex::slice! { input: f16[2, 3, 16], s[.., .., ..;-2] },
        halves[..2 * 3 * 16].to_vec(),
        (0..6).flat_map(|r| (0..8).map(move |c| r * 16 + 15 - c * 2))
    );
    check!(
        stridex::slice! { input: f16[2, 3, 24], s[.., .., ..;3] },
        halves.clone(),
        (0..6).flat_map(|r| (0..8).map(move |c| r * 24 + c * 3))
    );

    // Crop, flip, BGR -> RGB, every other row and column: one kernel, stepping backwards.
    let chain = stridex::chain! {
        data: f32[2, 3, 16, 96],
        slice { offsets: [0, 0, 4, 16], sizes: [2, 3, 8, 64], strides: [1, 1, 1, 1] },
        slice { rules: onnx, starts: [-1], ends: [-65], axes: [3], steps: [-1] },
        gather { indices: i32[3], axis: 1 },
        slice { offsets: [0, 0, 0, 0], sizes: [2, 3, 8, 64], strides: [1, 1, 2, 2] },
    };
    let Some(stridex::ChainKernel::Fused(k)) = chain.kernel().unwrap() else { panic!("not fused") };
    assert_eq!(access_of(&k.walk), RowAccess::SteppedLines, "{:?}", k.walk);
    let data = f32_data(2 * 3 * 16 * 96);
    let got = chain.run(&data, (&[2i32, 1, 0],)).unwrap();
    let mut want = Vec::new();
    for n in 0..2 {
        for c in 0..3 {
            for y in 0..4 {
                for x in 0..32 {
                    want.push(data[((n * 3 + 2 - c) * 16 + 4 + 2 * y) * 96 + 16 + 63 - 2 * x]);
                }
            }
        }
    }
    assert_eq!(got.data(), want.as_slice());
}
