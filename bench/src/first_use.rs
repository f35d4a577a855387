//! The first use of a descriptor never seen (built at run time, its kernel compiled, its first
//! result read back) on every runtime this binary has, in one table: what a user waits for the
//! first time a shape appears. Small tensors, so the time is the build and the compile.

use crate::measure::{backend_name, read, upload};
use std::time::Instant;
use stridex::{Backend, Operand, SliceRange};

/// One descriptor kind: median milliseconds to a first result on each runtime that opened.
pub struct FirstUse {
    pub case: &'static str,
    /// (runtime, ms), in [`RUNTIMES`] order.
    pub ms: Vec<(&'static str, f64)>,
}

const RUNTIMES: [Backend; 3] = [Backend::Wgpu, Backend::Cpu, Backend::Cuda];

/// Three shapes per kind, fresh per run (so no in-process cache holds their kernels).
fn fresh(lo: usize, span: usize) -> [usize; 3] {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let base = lo + (nanos as usize ^ std::process::id() as usize) % span;
    [base, base + 1, base + 2]
}

fn median_ms(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2] * 1e3
}

/// Milliseconds from a new shape to its first result, for `first` (built, launched, read back,
/// checked) at each of three fresh sizes.
fn time(sizes: [usize; 3], mut first: impl FnMut(usize)) -> f64 {
    median_ms(
        sizes
            .iter()
            .map(|&n| {
                let start = Instant::now();
                first(n);
                start.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn gather(device: &stridex::Device) -> f64 {
    let c = device.client();
    let (rows, dim) = (4096usize, 256usize);
    let table: Vec<f32> = (0..rows * dim).map(|i| i as f32).collect();
    let data = upload(c, &table, rows * dim * 4);
    time(fresh(100, 800), |n| {
        let op = stridex::Gather::onnx().data::<f32>(&[rows, dim]).indices::<i32>(&[n]).build().unwrap();
        let ids: Vec<i32> = (0..n).map(|i| ((i * 7919 + 13) % rows) as i32).collect();
        let idx = upload(c, &ids, op.buffer_bytes(Operand::Indices).unwrap());
        let out = c.empty(op.buffer_bytes(Operand::Output).unwrap());
        op.launch(c, &data, &idx, &out).expect("first launch");
        let got = read::<f32>(c, &out, n * dim);
        assert_eq!(got[(n - 1) * dim], table[ids[n - 1] as usize * dim], "first-use gather");
    })
}

fn crop(device: &stridex::Device) -> f64 {
    let c = device.client();
    time(fresh(2, 60), |n| {
        let op = stridex::Slice::directml()
            .input::<f32>(&[n, 3, 64, 64])
            .window(&[0, 0, 4, 4], &[n, 3, 56, 56], &[1, 1, 1, 1])
            .build()
            .unwrap();
        let x: Vec<f32> = (0..n * 3 * 64 * 64).map(|i| i as f32).collect();
        let input = upload(c, &x, op.buffer_bytes(Operand::Input).unwrap());
        let out = c.empty(op.buffer_bytes(Operand::Output).unwrap());
        op.launch(c, &input, &out).expect("first launch");
        let got = read::<f32>(c, &out, n * 3 * 56 * 56);
        assert_eq!(got[0], (4 * 64 + 4) as f32, "first-use crop");
    })
}

fn chain(device: &stridex::Device) -> f64 {
    let c = device.client();
    let bgr = upload(c, &[2i32, 1, 0], 12);
    time(fresh(2, 60), |n| {
        let op = stridex::Chain::data::<f32>(&[n, 3, 64, 64])
            .slice(stridex::Slice::directml().ranges(&[
                SliceRange::FULL,
                SliceRange::FULL,
                SliceRange::new(4, 60),
                SliceRange::new(4, 60).step(-1),
            ]))
            .gather(stridex::Gather::onnx().indices::<i32>(&[3]).axis(1))
            .slice(stridex::Slice::directml().ranges(&[
                SliceRange::FULL,
                SliceRange::FULL,
                SliceRange::FULL.step(2),
                SliceRange::FULL.step(2),
            ]))
            .build()
            .unwrap();
        let x: Vec<f32> = (0..n * 3 * 64 * 64).map(|i| i as f32).collect();
        let input = upload(c, &x, op.buffer_bytes(Operand::Data).unwrap());
        let out = c.empty(op.buffer_bytes(Operand::Output).unwrap());
        op.launch(c, &input, &[&bgr], &out).expect("first launch");
        // Output (0, 0, 0, 0): channel 2, row 4, column 59 (the flip's first).
        let got = read::<f32>(c, &out, 1);
        assert_eq!(got[0], (2 * 64 * 64 + 4 * 64 + 59) as f32, "first-use chain");
    })
}

/// Times one descriptor kind's first use on a device.
type Kind = fn(&stridex::Device) -> f64;

/// Every kind on every runtime that opens.
pub fn run() -> Vec<FirstUse> {
    let devices: Vec<_> = RUNTIMES.iter().filter_map(|&b| stridex::Device::open(b).ok()).collect();
    let kinds: [(&'static str, Kind); 3] = [
        ("gather f32[4096,256] <- i32[n]", gather),
        ("slice f32[n,3,64,64] -> [n,3,56,56]", crop),
        ("chain f32[n,3,64,64]: crop 56 + flip, BGR->RGB, 2x down", chain),
    ];
    kinds
        .iter()
        .map(|&(case, f)| FirstUse {
            case,
            ms: devices.iter().map(|d| (backend_name(d.backend()), f(d))).collect(),
        })
        .collect()
}

pub fn json(f: &FirstUse) -> String {
    let ms: Vec<String> = f.ms.iter().map(|(b, ms)| format!("\"{b}\": {ms:.2}")).collect();
    format!("{{\"case\": \"first use: {}\", \"ms\": {{{}}}}}", f.case, ms.join(", "))
}

pub fn print(all: &[FirstUse]) {
    println!("\nfirst use of a new shape (build, compile, first result), ms");
    for f in all {
        let ms: Vec<String> = f.ms.iter().map(|(b, ms)| format!("{b} {ms:.1}")).collect();
        println!("{:<58} {}", f.case, ms.join("  "));
    }
}

pub fn markdown(all: &[FirstUse]) -> String {
    let Some(first) = all.first() else { return String::new() };
    let names: Vec<&str> = first.ms.iter().map(|(b, _)| *b).collect();
    let mut s = String::from(
        "\n## First use of a new shape\n\nFrom a shape never seen to its first result: the op built \
         at run time (a builder, the macro's equivalent), its kernel compiled by the runtime's JIT \
         on first launch, the result read back and checked. Small tensors, so the figure is the \
         build and the compile; median of three fresh shapes per kind, on every runtime this \
         binary was built with, in one process.\n\n| descriptor |",
    );
    for n in &names {
        s.push_str(&format!(" {n} ms |"));
    }
    s.push_str("\n| --- |");
    s.push_str(&" ---: |".repeat(names.len()));
    s.push('\n');
    for f in all {
        s.push_str(&format!("| {} |", f.case));
        for (_, ms) in &f.ms {
            s.push_str(&format!(" {ms:.1} |"));
        }
        s.push('\n');
    }
    s
}
