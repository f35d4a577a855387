//! Effective bandwidth of stridex's kernels beside a plain copy of the same bytes, on the
//! default device, in one run: `cargo run --release --example bench`.
//!
//! Effective bandwidth = (bytes read + bytes written) / time. A gather reads each gathered
//! element once plus its indices and writes each output element once; the copy moves the same
//! number of output bytes with 128-bit loads and stores (no index arithmetic at all), so the
//! ratio shows what the layout logic costs. Every launch, stridex's and the copy's, is followed
//! by a sync, so both pay the same per-launch cost (an ONNX gather's `launch` also reads its
//! status word back: the `error` policy must report bad indices).
//! On lavapipe these are CPU numbers: compare ratios, not absolutes, with a GPU.

use std::time::{Duration, Instant};
use stridex::cubecl;
use stridex::cubecl::prelude::*;
use stridex::cubecl::wgpu::{WgpuDevice, WgpuRuntime};
use stridex::half::f16;
use stridex::{Device, Element, Gather, IndexElement, Operand, Slice};

#[cube(launch_unchecked)]
fn copy_words(input: &Array<Vector<u32, Const<4>>>, output: &mut Array<Vector<u32, Const<4>>>) {
    if ABSOLUTE_POS < output.len() {
        output[ABSOLUTE_POS] = input[ABSOLUTE_POS];
    }
}

const ITERATIONS: u32 = 20;

fn time(mut f: impl FnMut()) -> Duration {
    f(); // warm: compile the kernel, fault in the buffers
    let start = Instant::now();
    for _ in 0..ITERATIONS {
        f();
    }
    start.elapsed() / ITERATIONS
}

fn bytes<T: Element>(n: usize) -> Vec<u8> {
    let v: Vec<u8> = (0..n * T::DTYPE.size()).map(|i| (i * 7 + 3) as u8).collect();
    T::bytes(&T::from_bytes(&v)).into_owned()
}

/// A plain copy of `n` bytes (rounded to 16), launched and synced like `launch`.
fn copy(client: &ComputeClient<WgpuRuntime>, n: usize) -> Duration {
    let vectors = n.div_ceil(16);
    let input = client.create_from_slice(&vec![1u8; vectors * 16]);
    let output = client.empty(vectors * 16);
    time(|| {
        // SAFETY: both buffers hold `vectors` 16-byte vectors and the kernel checks the index.
        unsafe {
            copy_words::launch_unchecked::<WgpuRuntime>(
                client,
                cubecl::calculate_cube_count_elemwise(client, vectors, CubeDim::new_1d(256)),
                CubeDim::new_1d(256),
                ArrayArg::from_raw_parts(input.clone(), vectors),
                ArrayArg::from_raw_parts(output.clone(), vectors),
            )
        };
        cubecl::future::block_on(client.sync()).expect("copy ran");
    })
}

struct Row {
    name: &'static str,
    moved: usize,
    op: Duration,
    copy: Duration,
}

fn gbps(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

fn gather<T: Element, I: IndexElement>(
    client: &ComputeClient<WgpuRuntime>,
    name: &'static str,
    g: Gather<T, I>,
    indices: &[I],
) -> Row {
    let op = g.build().expect("bench descriptor");
    let plan = op.plan().unwrap();
    let out_elems = plan.output.num_elements();
    let data =
        client.create_from_slice(&bytes::<T>(op.buffer_bytes(Operand::Data).unwrap() / T::DTYPE.size()));
    let mut ib = I::bytes(indices).into_owned();
    ib.resize(op.buffer_bytes(Operand::Indices).unwrap(), 0);
    let idx = client.create_from_slice(&ib);
    let out = client.empty(op.buffer_bytes(Operand::Output).unwrap());
    let t = time(|| {
        op.launch(client, &data, &idx, &out).expect("gather ran");
        cubecl::future::block_on(client.sync()).expect("gather ran");
    });
    let out_bytes = out_elems * T::DTYPE.size();
    let moved = 2 * out_bytes + plan.indices.num_elements() * I::INDEX.words() * 4;
    Row { name, moved, op: t, copy: copy(client, moved / 2) }
}

fn slice<T: Element>(client: &ComputeClient<WgpuRuntime>, name: &'static str, s: Slice<T>) -> Row {
    let op = s.build().expect("bench descriptor");
    let out_bytes = op.plan().unwrap().output.num_elements() * T::DTYPE.size();
    let input =
        client.create_from_slice(&bytes::<T>(op.buffer_bytes(Operand::Input).unwrap() / T::DTYPE.size()));
    let out = client.empty(op.buffer_bytes(Operand::Output).unwrap());
    let t = time(|| {
        op.launch(client, &input, &out).expect("slice ran");
        cubecl::future::block_on(client.sync()).expect("slice ran");
    });
    Row { name, moved: 2 * out_bytes, op: t, copy: copy(client, out_bytes) }
}

fn main() {
    let device = Device::default_device().expect("a device (scripts/install-vulkan.sh installs lavapipe)");
    if device.backend() != stridex::Backend::Wgpu {
        eprintln!("bench: runs on wgpu; unset STRIDEX_BACKEND");
        std::process::exit(2);
    }
    println!("device: {}", device.description());
    // The client stridex set up for the default wgpu device.
    let client = WgpuRuntime::client(&WgpuDevice::DefaultDevice);
    let rows_of = |n: usize, m: usize| -> Vec<i32> { (0..n).map(|i| ((i * 7919) % m) as i32).collect() };
    let rows = vec![
        gather(
            &client,
            "embedding f32[32768,256] <- i32[8192]",
            Gather::onnx().data::<f32>(&[32768, 256]).indices::<i32>(&[8192]),
            &rows_of(8192, 32768),
        ),
        gather(
            &client,
            "embedding f16[32768,256] <- i32[8192]",
            Gather::onnx().data::<f16>(&[32768, 256]).indices::<i32>(&[8192]),
            &rows_of(8192, 32768),
        ),
        gather(
            &client,
            "columns f32[4096,1024] <- i32[256], axis 1",
            Gather::onnx().data::<f32>(&[4096, 1024]).indices::<i32>(&[256]).axis(1),
            &rows_of(256, 1024),
        ),
        gather(
            &client,
            "columns u8[4096,1024] <- i32[256], axis 1",
            Gather::onnx().data::<u8>(&[4096, 1024]).indices::<i32>(&[256]).axis(1),
            &rows_of(256, 1024),
        ),
        gather(
            &client,
            "batched f32[64,512,64] <- i32[64,128], b=1",
            Gather::openvino().data::<f32>(&[64, 512, 64]).indices::<i32>(&[64, 128]).axis(1).batch_dims(1),
            &rows_of(64 * 128, 512),
        ),
        slice(
            &client,
            "reverse rows f32[4096,1024]",
            Slice::directml().input::<f32>(&[4096, 1024]).window(&[0, 0], &[4096, 1024], &[-1, 1]),
        ),
        slice(
            &client,
            "every 2nd f32[4096,1024], stride [2,2]",
            Slice::directml().input::<f32>(&[4096, 1024]).window(&[0, 0], &[4096, 1024], &[2, 2]),
        ),
        slice(
            &client,
            "NHWC -> NCHW f32[8,64,64,64]",
            Slice::directml().input_strided::<f32>(&[8, 64, 64, 64], Some(&[262144, 1, 4096, 64])).window(
                &[0; 4],
                &[8, 64, 64, 64],
                &[1; 4],
            ),
        ),
    ];
    println!("{:<46} {:>10} {:>12} {:>12} {:>8}", "kernel", "MB moved", "stridex GB/s", "copy GB/s", "ratio");
    for r in rows {
        let (a, b) = (gbps(r.moved, r.op), gbps(r.moved, r.copy));
        println!(
            "{:<46} {:>10.1} {:>12.2} {:>12.2} {:>7.0}%",
            r.name,
            r.moved as f64 / 1e6,
            a,
            b,
            100.0 * a / b
        );
    }
}
