//! Snapshots of the kernel descriptors (`GatherKernelDesc`, `SliceKernelDesc`) of the seeds and
//! of edge layouts: padded, broadcast and permuted tensors, negative strides, 1-, 2- and 8-byte
//! elements. No device is needed. A change to the walk a descriptor takes, its line widths,
//! tiles or strides shows up here as a diff to review; `STRIDEX_BLESS=1 cargo test --test
//! descriptors` rewrites `tests/snapshots/kernel_descriptors.txt` after such a review.

use stridex::core::kernel::{GatherKernelDesc, SliceKernelDesc};
use stridex::core::seeds::{GATHERS, SLICES};
use stridex::core::{GatherDesc, SliceDesc};
use stridex::half::{bf16, f16};
use stridex::{DType, Gather, GatherRules, OutOfRange, Slice};

enum Case {
    Gather(GatherDesc),
    Slice(SliceDesc),
}

fn cases() -> Vec<(String, Case)> {
    let mut all: Vec<(String, Case)> = vec![];
    for s in GATHERS {
        let index = if s.rules == GatherRules::Onnx { DType::I64 } else { DType::I32 };
        all.push((format!("seed {}", s.name), Case::Gather(s.desc(DType::F32, index))));
    }
    for s in SLICES {
        all.push((format!("seed {}", s.name), Case::Slice(s.desc(DType::F32))));
    }
    let g = |name: &str, d: Result<GatherDesc, stridex::Error>| (name.to_string(), Case::Gather(d.unwrap()));
    let s = |name: &str, d: Result<SliceDesc, stridex::Error>| (name.to_string(), Case::Slice(d.unwrap()));
    let onnx = Gather::onnx;
    all.extend([
        g("embedding f32 rows", onnx().data::<f32>(&[100, 64]).indices::<i32>(&[8]).desc()),
        g("embedding f16 rows, i64 ids", onnx().data::<f16>(&[100, 64]).indices::<i64>(&[8]).desc()),
        g("columns f32 (grouped rows)", onnx().data::<f32>(&[16, 64]).indices::<i32>(&[8]).axis(1).desc()),
        g("columns u8 (lanes)", onnx().data::<u8>(&[16, 64]).indices::<i32>(&[8]).axis(1).desc()),
        g(
            "columns bf16, odd count (slots)",
            onnx().data::<bf16>(&[4, 9]).indices::<i32>(&[3]).axis(1).desc(),
        ),
        g("rows f64", onnx().data::<f64>(&[32, 6]).indices::<i64>(&[4]).desc()),
        g(
            "permuted data",
            onnx().data_strided::<f32>(&[8, 16, 4], Some(&[4, 32, 1])).indices::<i64>(&[5]).axis(1).desc(),
        ),
        g(
            "broadcast data",
            Gather::openvino().data_strided::<f32>(&[6, 8], Some(&[0, 1])).indices::<i32>(&[3]).desc(),
        ),
        g(
            "padded output",
            onnx().data::<f32>(&[10, 6]).indices::<i32>(&[4]).output(&[4, 6], Some(&[8, 1])).desc(),
        ),
        g(
            "column-major output",
            onnx().data::<f32>(&[10, 6]).indices::<i32>(&[4]).output(&[4, 6], Some(&[1, 4])).desc(),
        ),
        g(
            "batch_dims 1, clamp",
            Gather::openvino()
                .data::<f32>(&[4, 8, 32])
                .indices::<i32>(&[4, 2])
                .axis(1)
                .batch_dims(1)
                .out_of_range(OutOfRange::Clamp)
                .desc(),
        ),
        g("scalar index", onnx().data::<u16>(&[5, 8]).indices::<i64>(&[]).desc()),
        s(
            "reverse rows f32",
            Slice::directml().input::<f32>(&[8, 16]).window(&[0, 0], &[8, 16], &[1, -1]).desc(),
        ),
        s(
            "reverse rows u8",
            Slice::directml().input::<u8>(&[8, 16]).window(&[0, 0], &[8, 16], &[1, -1]).desc(),
        ),
        s("step 2 f32", Slice::directml().input::<f32>(&[8, 16]).window(&[0, 0], &[8, 16], &[2, 2]).desc()),
        s(
            "crop, unaligned rows",
            Slice::directml().input::<f32>(&[8, 16]).window(&[1, 1], &[6, 6], &[1, 1]).desc(),
        ),
        s(
            "NHWC read NCHW (transposed blocks)",
            Slice::directml()
                .input_strided::<f32>(&[2, 16, 4, 8], Some(&[512, 1, 128, 16]))
                .window(&[0; 4], &[2, 16, 4, 8], &[1; 4])
                .desc(),
        ),
        s(
            "negative strides u16",
            Slice::directml().input::<u16>(&[16, 32]).window(&[2, 1], &[12, 30], &[-3, -2]).desc(),
        ),
        s(
            "onnx negative steps",
            Slice::onnx()
                .input::<f32>(&[20, 10, 5])
                .starts_ends(&[20, 10, 4], &[0, 0, 1])
                .steps(&[-1, -3, -2])
                .desc(),
        ),
        s(
            "padded output u8",
            Slice::directml()
                .input::<u8>(&[5, 5])
                .window(&[0, 0], &[5, 5], &[1, 2])
                .output(&[5, 3], Some(&[4, 1]))
                .desc(),
        ),
    ]);
    all
}

fn snapshot() -> String {
    let mut out = String::new();
    for (name, case) in cases() {
        let desc = match case {
            Case::Gather(d) => format!("{:#?}", GatherKernelDesc::new(&d.plan().unwrap())),
            Case::Slice(d) => format!("{:#?}", SliceKernelDesc::new(&d.plan().unwrap())),
        };
        out.push_str(&format!("== {name}\n{desc}\n"));
    }
    out
}

#[test]
fn kernel_descriptors_match_their_snapshot() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots/kernel_descriptors.txt");
    let now = snapshot();
    if std::env::var_os("STRIDEX_BLESS").is_some() {
        std::fs::write(path, &now).unwrap();
        return;
    }
    let then = std::fs::read_to_string(path).expect("a snapshot (STRIDEX_BLESS=1 writes it)");
    if now != then {
        let first = now.lines().zip(then.lines()).position(|(a, b)| a != b).unwrap_or(0);
        let context: Vec<&str> = now.lines().skip(first.saturating_sub(12)).take(24).collect();
        panic!(
            "kernel descriptors changed from the snapshot at line {}; review, then STRIDEX_BLESS=1 to accept:\n{}",
            first + 1,
            context.join("\n")
        );
    }
}
