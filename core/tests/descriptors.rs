//! Snapshots of the kernel descriptors (`GatherKernelDesc`, `SliceKernelDesc`,
//! `ChainKernelDesc`) of the seeds, of edge layouts (padded, broadcast and permuted tensors,
//! negative strides, 1-, 2- and 8-byte elements) and of random gathers, slices and chains, with
//! the walks the CPU runtime derives from a row walk (narrow units, larger groups). A
//! change to the walk a descriptor takes, its line widths, tiles, groups or strides shows up here
//! as a diff to review (the host model in `walks.rs` checks only that the values stay right);
//! `STRIDEX_BLESS=1 cargo test -p stridex-core --test descriptors` rewrites
//! `snapshots/kernel_descriptors.txt` after such a review.

mod common;

use common::{chains, d, generate, generate::Rng};
use std::borrow::Cow;
use stridex_core::kernel::{GatherKernelDesc, SliceKernelDesc, Walk, WalkChoice};
use stridex_core::limits::PLACEHOLDER;
use stridex_core::seeds::{GATHERS, SLICES};
use stridex_core::{
    ChainCount, ChainDesc, ChainKernelDesc, DType, GatherDesc, GatherRules, OutOfRange, OutputDecl,
    SignedDims, SliceDesc, SliceWindow, StageDesc, TensorDecl,
};

enum Case {
    Gather(GatherDesc),
    Slice(SliceDesc),
    Chain(ChainDesc),
}

fn tensor(dtype: DType, sizes: &[usize], strides: Option<&[usize]>) -> TensorDecl {
    TensorDecl { dtype, sizes: d(sizes), strides: strides.map(d) }
}

fn onnx(data: TensorDecl, index: DType, indices: &[usize], axis: i64) -> GatherDesc {
    GatherDesc::new(GatherRules::Onnx, data, TensorDecl::packed(index, d(indices)), axis)
}

fn output(sizes: &[usize], strides: &[usize]) -> Option<OutputDecl> {
    Some(OutputDecl { dtype: None, sizes: d(sizes), strides: Some(d(strides)) })
}

fn window(input: TensorDecl, offsets: &[usize], sizes: &[usize], strides: &[i64]) -> SliceDesc {
    SliceDesc::new(
        input,
        SliceWindow::DirectMl { offsets: d(offsets), sizes: d(sizes), strides: SignedDims::of(strides) },
    )
}

/// A chain of one gather along the last axis of `data` (`[_, rows, n]`: its count is the
/// data's), taking `indices` of it.
fn counted_gather_along_rows(dtype: DType, rows: usize, n: usize, indices: usize) -> ChainDesc {
    ChainDesc {
        data: TensorDecl::packed(dtype, d(&[PLACEHOLDER, rows, n])),
        stages: Cow::Owned(vec![StageDesc::Gather(common::gather_stage(
            GatherRules::Onnx,
            DType::I32,
            &[indices],
            2,
        ))]),
        output: None,
        dynamic_leading: Some(ChainCount::Data),
    }
}

fn cases() -> Vec<(String, Case)> {
    use DType::*;
    let mut all: Vec<(String, Case)> = vec![];
    for s in GATHERS {
        let index = if s.rules == GatherRules::Onnx { I64 } else { I32 };
        all.push((format!("seed {}", s.name), Case::Gather(s.desc(F32, index))));
    }
    for s in SLICES {
        all.push((format!("seed {}", s.name), Case::Slice(s.desc(F32))));
    }
    let g = |name: &str, d: GatherDesc| (name.to_string(), Case::Gather(d));
    let s = |name: &str, d: SliceDesc| (name.to_string(), Case::Slice(d));
    let packed = |t, sizes: &[usize]| tensor(t, sizes, None);
    let vino = |data, indices: &[usize]| {
        GatherDesc::new(GatherRules::OpenVino, data, TensorDecl::packed(I32, d(indices)), 0)
    };
    all.extend([
        g("embedding f32 rows", onnx(packed(F32, &[100, 64]), I32, &[8], 0)),
        g("embedding f16 rows, i64 ids", onnx(packed(F16, &[100, 64]), I64, &[8], 0)),
        g("columns f32 (grouped rows)", onnx(packed(F32, &[16, 64]), I32, &[8], 1)),
        g("columns u8 (lanes)", onnx(packed(U8, &[16, 64]), I32, &[8], 1)),
        g("columns bf16, odd count (slots)", onnx(packed(BF16, &[4, 9]), I32, &[3], 1)),
        g("rows f64", onnx(packed(F64, &[32, 6]), I64, &[4], 0)),
        g("permuted data", onnx(tensor(F32, &[8, 16, 4], Some(&[4, 32, 1])), I64, &[5], 1)),
        g("broadcast data", vino(tensor(F32, &[6, 8], Some(&[0, 1])), &[3])),
        g(
            "padded output",
            GatherDesc { output: output(&[4, 6], &[8, 1]), ..onnx(packed(F32, &[10, 6]), I32, &[4], 0) },
        ),
        g(
            "column-major output",
            GatherDesc { output: output(&[4, 6], &[1, 4]), ..onnx(packed(F32, &[10, 6]), I32, &[4], 0) },
        ),
        g(
            "batch_dims 1, clamp",
            GatherDesc {
                axis: 1,
                batch_dims: Some(1),
                out_of_range: Some(OutOfRange::Clamp),
                ..vino(packed(F32, &[4, 8, 32]), &[4, 2])
            },
        ),
        g("scalar index", onnx(packed(U16, &[5, 8]), I64, &[], 0)),
        s("reverse rows f32", window(packed(F32, &[8, 16]), &[0, 0], &[8, 16], &[1, -1])),
        s("reverse rows u8", window(packed(U8, &[8, 16]), &[0, 0], &[8, 16], &[1, -1])),
        s("step 2 f32", window(packed(F32, &[8, 16]), &[0, 0], &[8, 16], &[2, 2])),
        // Rows of 6 f32 from rows of 14: 8-byte lines, which hold no more elements than the
        // step, so it reads elements one by one.
        s("step 2 f32 on 8-byte lines (elements)", window(packed(F32, &[4, 14]), &[0, 0], &[4, 12], &[1, 2])),
        // Groups of two rows that do not regroup by 4 (six rows) nor by 8.
        g("u8 along 6 rows of 64", onnx(packed(U8, &[6, 64]), I32, &[64], 1)),
        // Groups of two rows along the outer of two row dimensions, which regroup by 4 there
        // (the inner one's size does not divide, and its source step is the group's times 2).
        g(
            "u8 along rows, grouped outside another row dimension",
            onnx(tensor(U8, &[4, 3, 64], Some(&[256, 512, 1])), I32, &[64], 2),
        ),
        s("crop, unaligned rows", window(packed(F32, &[8, 16]), &[1, 1], &[6, 6], &[1, 1])),
        s(
            "NHWC read NCHW (transposed blocks)",
            window(tensor(F32, &[2, 16, 4, 8], Some(&[512, 1, 128, 16])), &[0; 4], &[2, 16, 4, 8], &[1; 4]),
        ),
        s("negative strides u16", window(packed(U16, &[16, 32]), &[2, 1], &[12, 30], &[-3, -2])),
        s(
            "onnx negative steps",
            SliceDesc::new(
                packed(F32, &[20, 10, 5]),
                SliceWindow::Onnx {
                    starts: SignedDims::of(&[20, 10, 4]),
                    ends: SignedDims::of(&[0, 0, 1]),
                    axes: None,
                    steps: Some(SignedDims::of(&[-1, -3, -2])),
                },
            ),
        ),
        s(
            "column-major input (transposed blocks, the outermost dimension)",
            window(tensor(F32, &[4, 8], Some(&[1, 4])), &[0, 0], &[4, 8], &[1, 1]),
        ),
        s(
            "broadcast columns (a zero source stride along the row)",
            window(tensor(F32, &[4, 16], Some(&[1, 0])), &[0, 0], &[4, 16], &[1, 1]),
        ),
        g(
            "u8 rows of 5 (elements, read once per row)",
            onnx(tensor(U8, &[8, 5, 4], Some(&[25, 5, 1])), I32, &[2], 1),
        ),
        g("u8 along 3 rows of 64 (elements, tiles of 2 lines)", onnx(packed(U8, &[3, 64]), I32, &[64], 1)),
        s(
            "`_` rows reversed",
            SliceDesc {
                dynamic_leading: true,
                ..window(packed(F32, &[PLACEHOLDER, 16]), &[0, 0], &[PLACEHOLDER, 16], &[1, -1])
            },
        ),
        s(
            "`_` NHWC read NCHW (transposed blocks)",
            SliceDesc {
                dynamic_leading: true,
                ..window(
                    tensor(F32, &[PLACEHOLDER, 16, 4, 8], Some(&[512, 1, 128, 16])),
                    &[0; 4],
                    &[PLACEHOLDER, 16, 4, 8],
                    &[1; 4],
                )
            },
        ),
        (
            "`_` u8 along rows, groups of 2 rows".to_string(),
            Case::Chain(counted_gather_along_rows(U8, 4, 64, 64)),
        ),
        (
            "`_` u8 along rows, 3 rows: no group across the count".to_string(),
            Case::Chain(counted_gather_along_rows(U8, 3, 64, 64)),
        ),
        (
            "`_` f32 along rows, groups of 8 rows".to_string(),
            Case::Chain(counted_gather_along_rows(F32, 8, 16, 4)),
        ),
        s("u8 [4]: one word", window(packed(U8, &[4]), &[0], &[4], &[1])),
        s("f64 [8]: a copy of 16 words", window(packed(F64, &[8]), &[0], &[8], &[1])),
        s(
            "`_` u16 rows of 2: one word",
            SliceDesc {
                dynamic_leading: true,
                ..window(packed(U16, &[PLACEHOLDER, 2]), &[0, 0], &[PLACEHOLDER, 2], &[1, 1])
            },
        ),
        s(
            "padded output u8",
            SliceDesc {
                output: output(&[5, 3], &[4, 1]),
                ..window(packed(U8, &[5, 5]), &[0, 0], &[5, 5], &[1, 2])
            },
        ),
    ]);
    all
}

/// What the CPU runtime launches a row walk as (`backends/src/kernels/rows.rs`): its narrow
/// elements as their own units (`narrow_units`), then in groups of 4 rows where that regroups;
/// and the other regroupings the host model runs (`walks.rs`), each `None` where it does not
/// apply. The walks' values are checked by the host model; these lines pin where each applies.
fn cpu_walks(walk: &Walk) -> String {
    let Walk::Rows(w) = walk else { return String::new() };
    let launched = w.cpu_narrow();
    format!(
        "\nnarrow units, as the CPU runtime launches them: {launched:?}\nregrouped by 4: {:?}\nregrouped by 8: {:?}",
        w.regroup(4),
        w.regroup(8)
    )
}

fn snapshot() -> String {
    let mut out = String::new();
    for (name, case) in cases() {
        let desc = match case {
            // The walk launched, and the slot walk where that is the row walk (it takes every
            // layout, and `WalkChoice::Slots` tests one against the other).
            Case::Gather(d) => {
                let p = d.plan().unwrap();
                let slots = GatherKernelDesc::with(&p, WalkChoice::Slots).unwrap();
                let k = GatherKernelDesc::new(&p);
                let cpu = k.as_ref().map(|k| cpu_walks(&k.walk)).unwrap_or_default();
                format!("{k:#?}\nslot walk: {:?}{cpu}", slots.walk)
            }
            Case::Slice(d) => {
                let p = d.plan().unwrap();
                let slots = SliceKernelDesc::with(&p, WalkChoice::Slots).unwrap();
                let k = SliceKernelDesc::new(&p);
                let cpu = k.as_ref().map(|k| cpu_walks(&k.walk)).unwrap_or_default();
                format!("{k:#?}\nslot walk: {:?}{cpu}", slots.walk)
            }
            Case::Chain(d) => {
                let k = d.plan().map(|p| ChainKernelDesc::new(&p));
                let cpu = match &k {
                    Ok(Ok(Some(k))) => cpu_walks(&k.walk),
                    _ => String::new(),
                };
                format!("{k:#?}{cpu}")
            }
        };
        out.push_str(&format!("== {name}\n{desc}\n"));
    }
    // Random descriptors, one line each: every walk choice the generators reach.
    for seed in 0..60u64 {
        let g = generate::gather_case(&mut Rng::new(seed), &DType::ALL).desc;
        out.push_str(&format!("== random gather {seed}\n{:?}\n", GatherKernelDesc::new(&g.plan().unwrap())));
        let s = generate::slice_case(&mut Rng::new(seed), &DType::ALL).desc;
        out.push_str(&format!("== random slice {seed}\n{:?}\n", SliceKernelDesc::new(&s.plan().unwrap())));
        let c = chains::chain_case(&mut Rng::new(seed), &DType::ALL).desc;
        out.push_str(&format!("== random chain {seed}\n{:?}\n", ChainKernelDesc::new(&c.plan().unwrap())));
    }
    out
}

#[test]
fn kernel_descriptors_match_their_snapshot() {
    common::check_recorded("kernel_descriptors.txt", "a kernel descriptor", &snapshot());
}
