//! Timing: the median of synced launches after warm-up, for stridex, the device copy, Burn and
//! plain Rust on the host.

use burn::tensor::Device;
use std::time::Instant;
use stridex::cubecl;
use stridex::cubecl::client::Client;
use stridex::cubecl::prelude::*;
use stridex::cubecl::server::Handle;
use stridex::{Backend, Element, GatherOp, IndexElement, Operand, ScatterOp, SliceOp};

pub struct Settings {
    pub reps: usize,
    pub concurrency_secs: f64,
    pub json: bool,
    pub only: Option<Vec<String>>,
}

/// A Burn device a case's peer op runs on, with its name in the tables.
pub struct Peer {
    pub name: &'static str,
    pub device: Device,
}

/// Everything a case runs on: stridex's device and client, Burn on the same runtime, settings.
pub struct Env<'a> {
    /// The device stridex launches on (chosen by `--backend`, else stridex's default).
    pub stridex: &'static stridex::Device,
    /// Its CubeCL client: every launch, upload and read of the run goes through it.
    pub client: &'a Client,
    /// The CubeCL device of that client, for Burn's `CubeTensor`s (the unfused `CubeBackend`).
    pub cube: cubecl::Device,
    /// Burn's device on the same runtime (and, on wgpu, the same client): `Tensor<D>` ops on it
    /// run in Burn's fusion stream.
    pub device: Device,
    /// The Burn devices each headline case runs its peer op on, best reported: `device`, and on
    /// the CPU backend also Burn's pure-Rust CPU backend (Flex).
    pub peers: Vec<Peer>,
    pub settings: &'a Settings,
}

/// `--backend` as written in the JSON lines and the report.
pub fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Wgpu => "wgpu",
        Backend::Cuda => "cuda",
        Backend::Cpu => "cpu",
    }
}

/// Median seconds of `reps` calls of `f` (each of which must end with a sync), after two warm-up
/// calls (kernel build, first touch of the buffers).
pub fn median(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    f();
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[reps / 2]
}

/// [`median`] of two ways to compute one result, their calls interleaved (`a`, `b`, `a`, ...) so
/// that a machine whose speed drifts during the run slows both alike: what a ratio of the two
/// needs on a noisy machine.
pub fn medians_interleaved(reps: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let (mut ta, mut tb) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for warm in [true, true].into_iter().chain(std::iter::repeat_n(false, reps)) {
        let start = Instant::now();
        a();
        let mid = Instant::now();
        b();
        if !warm {
            ta.push((mid - start).as_secs_f64());
            tb.push(mid.elapsed().as_secs_f64());
        }
    }
    ta.sort_by(f64::total_cmp);
    tb.sort_by(f64::total_cmp);
    (ta[reps / 2], tb[reps / 2])
}

pub fn sync(client: &Client) {
    cubecl::future::block_on(client.sync()).expect("device sync");
}

/// `data` in a new device buffer of at least `bytes`.
pub fn upload<T: Element>(client: &Client, data: &[T], bytes: usize) -> Handle {
    stridex::buffers::upload(client, data, bytes)
}

/// The first `n` elements of a device buffer.
pub fn read<T: Element>(client: &Client, h: &Handle, n: usize) -> Vec<T> {
    stridex::buffers::read(client, h, n).expect("read back")
}

/// Panics naming the first output element that differs, bit for bit, from the host's.
pub fn check(what: &str, case: &str, got: &[f32], expected: &[f32]) {
    assert_eq!(got.len(), expected.len(), "{case}: {what} length");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != expected[i].to_bits()) {
        panic!("{case}: {what} output[{i}] = {}, expected {}", got[i], expected[i]);
    }
}

/// Bytes of `data`, padded with zeros to `len`.
fn padded(bytes: &[u8], len: usize) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.resize(len.max(bytes.len()).max(4), 0);
    v
}

#[cube(launch_unchecked)]
fn copy_vectors(input: &[Vector<u32, Const<4>>], output: &mut [Vector<u32, Const<4>>]) {
    if ABSOLUTE_POS < output.len() {
        output[ABSOLUTE_POS] = input[ABSOLUTE_POS];
    }
}

/// A copy that moves one 32-bit word per invocation: what a kernel pays per element when
/// consecutive output elements come from scattered source words.
#[cube(launch_unchecked)]
fn copy_words(input: &[u32], output: &mut [u32]) {
    if ABSOLUTE_POS < output.len() {
        output[ABSOLUTE_POS] = input[ABSOLUTE_POS];
    }
}

/// A copy that moves four consecutive vectors per invocation, as stridex's row tiles do.
// A kernel has no `copy_from_slice`: the unrolled loop is the four loads and stores.
#[allow(clippy::manual_memcpy)]
#[cube(launch_unchecked)]
fn copy_vector_tiles(input: &[Vector<u32, Const<4>>], output: &mut [Vector<u32, Const<4>>]) {
    let first = ABSOLUTE_POS * 4;
    if first < output.len() {
        #[unroll]
        for j in 0..4usize {
            output[first + j] = input[first + j];
        }
    }
}

/// What the device's copies reach, for reading the cases' ratios.
pub struct Probes {
    pub bytes: usize,
    pub vectors: f64,
    pub words: f64,
    pub vector_tiles: f64,
}

/// Units per cube of the copy kernels: stridex's own (its kernels launch 256-unit cubes on
/// every runtime).
const CUBE_DIM: u32 = 256;

impl Env<'_> {
    /// Three copies of the same 64 MiB: one vector, one word, four vectors per invocation.
    pub fn probes(&self) -> Probes {
        let bytes = 64 << 20;
        let words = bytes / 4;
        let input = self.client.create_from_slice(&vec![1u8; bytes]);
        let output = self.client.empty(bytes);
        let cube = CubeDim::new_1d(CUBE_DIM);
        let time_words = median(self.settings.reps, || {
            // SAFETY: both buffers hold `words` words and the kernel checks the position
            // (a buffer's length in the kernel is its bytes over the element size).
            unsafe {
                copy_words::launch_unchecked(
                    self.client,
                    cubecl::calculate_cube_count_elemwise(self.client, words, cube),
                    cube,
                    BufferArg::from_raw_parts(input.clone(), words),
                    BufferArg::from_raw_parts(output.clone(), words),
                )
            };
            sync(self.client);
        });
        let time_tiles = median(self.settings.reps, || {
            // SAFETY: as above; `bytes` is a multiple of 64, so every tile is whole.
            unsafe {
                copy_vector_tiles::launch_unchecked(
                    self.client,
                    cubecl::calculate_cube_count_elemwise(self.client, words / 16, cube),
                    cube,
                    BufferArg::from_raw_parts(input.clone(), words / 4),
                    BufferArg::from_raw_parts(output.clone(), words / 4),
                )
            };
            sync(self.client);
        });
        Probes { bytes: 2 * bytes, vectors: self.copy(bytes), words: time_words, vector_tiles: time_tiles }
    }

    /// A plain copy of `bytes` bytes (rounded up to 16) in 128-bit vectors, one per invocation:
    /// what the device does with no layout logic at all.
    /// Seconds of one host `copy_from_slice` of `bytes` (as [`Env::copy`], half the bytes the
    /// rate credits), one thread.
    pub fn memcpy(&self, bytes: usize) -> f64 {
        let input = vec![1u8; bytes];
        let mut output = vec![0u8; bytes];
        host(self.settings.reps, || {
            output.copy_from_slice(std::hint::black_box(&input));
            std::hint::black_box(&mut output);
        })
    }

    pub fn copy(&self, bytes: usize) -> f64 {
        // A buffer above 128 MiB is more than wgpu binds: the copy of more bytes is timed on
        // 64 MiB and scaled (a copy this large runs at the device's bandwidth either way).
        const CHUNK: usize = 64 << 20;
        if bytes > CHUNK {
            return self.copy(CHUNK) * bytes as f64 / CHUNK as f64;
        }
        let vectors = bytes.div_ceil(16);
        let input = self.client.create_from_slice(&vec![1u8; vectors * 16]);
        let output = self.client.empty(vectors * 16);
        let cube = CubeDim::new_1d(CUBE_DIM);
        median(self.settings.reps, || {
            // SAFETY: both buffers hold `vectors` vectors and the kernel checks the position
            // against the output's length in vectors (its bytes over 16).
            unsafe {
                copy_vectors::launch_unchecked(
                    self.client,
                    cubecl::calculate_cube_count_elemwise(self.client, vectors, cube),
                    cube,
                    BufferArg::from_raw_parts(input.clone(), vectors),
                    BufferArg::from_raw_parts(output.clone(), vectors),
                )
            };
            sync(self.client);
        })
    }

    /// Copies 64 MiB for about a second, unmeasured.
    pub fn warm_up(&self) {
        let start = Instant::now();
        while start.elapsed().as_secs_f64() < 1.0 {
            self.copy(64 << 20);
        }
    }

    fn upload(&self, bytes: &[u8], len: usize) -> Handle {
        self.client.create_from_slice(&padded(bytes, len))
    }

    fn read<T: Element>(&self, handle: Handle, elems: usize) -> Vec<T> {
        let bytes = self.client.read_one(handle).expect("read back");
        T::from_bytes(&bytes[..elems * T::DTYPE.size()])
    }

    /// Times `op.launch` on device buffers; returns the median and the output read back once.
    pub fn gather<T: Element, I: IndexElement>(
        &self,
        op: &GatherOp<T, I>,
        data: &[T],
        ids: &[I],
    ) -> (f64, Vec<T>) {
        let d = self.upload(&T::bytes(data), op.buffer_bytes(Operand::Data).unwrap());
        let i = self.upload(&I::bytes(ids), op.buffer_bytes(Operand::Indices).unwrap());
        let o = self.client.empty(op.buffer_bytes(Operand::Output).unwrap());
        let t = median(self.settings.reps, || {
            op.launch(self.client, &d, &i, &o).expect("gather launch");
            sync(self.client);
        });
        let n = op.plan().unwrap().output.num_elements();
        (t, self.read(o, n))
    }

    /// Times `op.launch` in place on device buffers (each launch scatters into what the last
    /// left, as a training step's gradient buffer or a KV cache does); returns the median and
    /// the data after one launch on a fresh copy, read back.
    pub fn scatter<T: Element, I: IndexElement>(
        &self,
        op: &ScatterOp<T, I>,
        data: &[T],
        ids: &[I],
        updates: &[T],
    ) -> (f64, Vec<T>) {
        let fresh = || self.upload(&T::bytes(data), op.buffer_bytes(Operand::Data).unwrap());
        let i = self.upload(&I::bytes(ids), op.buffer_bytes(Operand::Indices).unwrap());
        let u = self.upload(&T::bytes(updates), op.buffer_bytes(Operand::Updates).unwrap());
        let once = fresh();
        op.launch(self.client, &once, &i, &u).expect("scatter launch");
        let d = fresh();
        let t = median(self.settings.reps, || {
            op.launch(self.client, &d, &i, &u).expect("scatter launch");
            sync(self.client);
        });
        (t, self.read(once, data.len()))
    }

    pub fn slice<T: Element>(&self, op: &SliceOp<T>, input: &[T]) -> (f64, Vec<T>) {
        let d = self.upload(&T::bytes(input), op.buffer_bytes(Operand::Input).unwrap());
        let o = self.client.empty(op.buffer_bytes(Operand::Output).unwrap());
        let t = median(self.settings.reps, || {
            op.launch(self.client, &d, &o).expect("slice launch");
            sync(self.client);
        });
        let n = op.plan().unwrap().output.num_elements();
        (t, self.read(o, n))
    }

    /// Times a Burn op on `device` (`f` returns its result; the device is synced after each
    /// call, which drains Burn's fusion stream); returns the median and the last result.
    pub fn burn<O>(&self, device: &Device, mut f: impl FnMut() -> O) -> (f64, O) {
        let mut last = None;
        let t = median(self.settings.reps, || {
            let out = f();
            device.sync().expect("burn sync");
            last = Some(out);
        });
        (t, last.expect("ran"))
    }

    /// Runs `peer` (which builds its tensors on the device it is given, times Burn's op there
    /// with [`Env::burn`], checks the output and returns the median) on each of `self.peers`;
    /// returns every peer's time, the fastest first.
    pub fn burn_peers(&self, mut peer: impl FnMut(&Device) -> Option<f64>) -> Vec<(&'static str, f64)> {
        let mut times: Vec<(&'static str, f64)> =
            self.peers.iter().filter_map(|p| peer(&p.device).map(|t| (p.name, t))).collect();
        times.sort_by(|a, b| a.1.total_cmp(&b.1));
        times
    }
}

/// Host time of `f`, median of `reps` after warm-up (plain Rust computing a case's output).
pub fn host(reps: usize, f: impl FnMut()) -> f64 {
    median(reps, f)
}
