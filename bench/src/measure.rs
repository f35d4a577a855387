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

/// One implementation's timed call of a case (it ends with a sync where it runs on a device),
/// owning or borrowing what it needs until the case times them all with [`medians`].
pub type Timer<'a> = Box<dyn FnMut() + 'a>;

/// Median seconds per call of each of `timers`, called round by round (each once a round, in
/// an order shuffled per round) after two warm-up rounds: a machine whose speed drifts during
/// a case (lavapipe's copy ranges over 2x within one run) slows every implementation alike, so
/// their ratios hold where separately timed blocks would not; and no column always follows the
/// same other one (whose cache state it would inherit).
pub fn medians(reps: usize, timers: &mut [Timer]) -> Vec<f64> {
    let n = timers.len();
    let mut times = vec![Vec::with_capacity(reps); n];
    let mut order: Vec<usize> = (0..n).collect();
    // xorshift64: the same rounds every run.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..reps + 2 {
        for i in (1..n).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        for &j in &order {
            let start = Instant::now();
            (timers[j])();
            if round >= 2 {
                times[j].push(start.elapsed().as_secs_f64());
            }
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[reps / 2]
        })
        .collect()
}

/// [`medians`] of two ways to compute one result.
pub fn medians_interleaved(reps: usize, a: impl FnMut(), b: impl FnMut()) -> (f64, f64) {
    let t = medians(reps, &mut [Box::new(a), Box::new(b)]);
    (t[0], t[1])
}

/// A timer of Burn's `f` on `device`, which it syncs after each call (draining Burn's fusion
/// stream). The result lives until the sync (and the next call): a tensor dropped before it
/// lets the fusion stream skip the op that makes it.
pub fn burn_timer<'a, O: 'a>(device: &Device, mut f: impl FnMut() -> O + 'a) -> Timer<'a> {
    let device = device.clone();
    let mut last = None;
    Box::new(move || {
        let out = f();
        device.sync().expect("burn sync");
        last.replace(out);
    })
}

pub fn sync(client: &Client) {
    cubecl::future::block_on(client.sync()).expect("device sync");
}

/// `data` in a new device buffer of at least `bytes`.
pub fn upload<T: Element>(client: &Client, data: &[T], bytes: usize) -> Handle {
    stridex::buffers::upload(client, data, bytes).expect("the bench's buffers are sized by its ops")
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
    /// The median time of `f` (a launch on stridex's client), the device synced after each call.
    pub fn synced_median(&self, mut f: impl FnMut()) -> f64 {
        median(self.settings.reps, || {
            f();
            sync(self.client);
        })
    }

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

    /// A timer of one host `copy_from_slice` of `bytes` (as [`Env::copy_timer`], half the bytes
    /// the rate credits), one thread.
    pub fn memcpy_timer(&self, bytes: usize) -> Timer<'static> {
        let input = vec![1u8; bytes];
        let mut output = vec![0u8; bytes];
        Box::new(move || {
            output.copy_from_slice(std::hint::black_box(&input));
            std::hint::black_box(&mut output);
        })
    }

    /// A plain copy of `bytes` bytes (rounded up to 16) in 128-bit vectors, one per invocation:
    /// what the device does with no layout logic at all. Seconds per call.
    pub fn copy(&self, bytes: usize) -> f64 {
        let (timer, scale) = self.copy_timer(bytes);
        median(self.settings.reps, timer) * scale
    }

    /// A timer of [`Env::copy`], and what its time is multiplied by: a buffer above 128 MiB is
    /// more than wgpu binds, so the copy of more bytes is timed on 64 MiB and scaled (a copy
    /// this large runs at the device's bandwidth either way).
    pub fn copy_timer(&self, bytes: usize) -> (Timer<'_>, f64) {
        const CHUNK: usize = 64 << 20;
        if bytes > CHUNK {
            return (self.copy_timer(CHUNK).0, bytes as f64 / CHUNK as f64);
        }
        let vectors = bytes.div_ceil(16);
        let input = self.client.create_from_slice(&vec![1u8; vectors * 16]);
        let output = self.client.empty(vectors * 16);
        let cube = CubeDim::new_1d(CUBE_DIM);
        let timer = Box::new(move || {
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
        });
        (timer, 1.0)
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

    /// A timer of `op.launch` on device buffers, and the output of one launch, read back.
    pub fn gather<'a, T: Element, I: IndexElement>(
        &'a self,
        op: &'a GatherOp<T, I>,
        data: &[T],
        ids: &[I],
    ) -> (Timer<'a>, Vec<T>) {
        let d = self.upload(&T::bytes(data), op.buffer_bytes(Operand::Data).unwrap());
        let i = self.upload(&I::bytes(ids), op.buffer_bytes(Operand::Indices).unwrap());
        let o = self.client.empty(op.buffer_bytes(Operand::Output).unwrap());
        op.launch(self.client, &d, &i, &o).expect("gather launch");
        let n = op.plan().unwrap().output.num_elements();
        let out = self.read(o.clone(), n);
        let timer = Box::new(move || {
            op.launch(self.client, &d, &i, &o).expect("gather launch");
            sync(self.client);
        });
        (timer, out)
    }

    /// A timer of `op.launch` in place on device buffers (each launch scatters into what the
    /// last left, as a training step's gradient buffer or a KV cache does), and the data after
    /// one launch on a fresh copy, read back.
    pub fn scatter<'a, T: Element, I: IndexElement>(
        &'a self,
        op: &'a ScatterOp<T, I>,
        data: &[T],
        ids: &[I],
        updates: &[T],
    ) -> (Timer<'a>, Vec<T>) {
        let fresh = || self.upload(&T::bytes(data), op.buffer_bytes(Operand::Data).unwrap());
        let i = self.upload(&I::bytes(ids), op.buffer_bytes(Operand::Indices).unwrap());
        let u = self.upload(&T::bytes(updates), op.buffer_bytes(Operand::Updates).unwrap());
        let once = fresh();
        op.launch(self.client, &once, &i, &u).expect("scatter launch");
        let out = self.read(once, data.len());
        let d = fresh();
        let timer = Box::new(move || {
            op.launch(self.client, &d, &i, &u).expect("scatter launch");
            sync(self.client);
        });
        (timer, out)
    }

    /// A timer of `op.launch` on device buffers, and the output of one launch, read back.
    pub fn slice<'a, T: Element>(&'a self, op: &'a SliceOp<T>, input: &[T]) -> (Timer<'a>, Vec<T>) {
        let d = self.upload(&T::bytes(input), op.buffer_bytes(Operand::Input).unwrap());
        let o = self.client.empty(op.buffer_bytes(Operand::Output).unwrap());
        op.launch(self.client, &d, &o).expect("slice launch");
        let n = op.plan().unwrap().output.num_elements();
        let out = self.read(o.clone(), n);
        let timer = Box::new(move || {
            op.launch(self.client, &d, &o).expect("slice launch");
            sync(self.client);
        });
        (timer, out)
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

    /// [`Env::burn`] of an op that takes its tensor and returns it updated (Burn's in-place
    /// ops; a KV cache written each call): each call on the last one's result, from `tensor`.
    /// The median time, and the last result (held until each call's sync, so that Burn's
    /// fusion cannot drop the op unrun).
    pub fn burn_in_place<T>(&self, device: &Device, tensor: T, mut op: impl FnMut(T) -> T) -> (f64, T) {
        let mut acc = Some(tensor);
        let (t, ()) = self.burn(device, || acc = acc.take().map(&mut op));
        (t, acc.expect("ran"))
    }

    /// Runs `peer` on each of `self.peers`: it builds its tensors on the device it is given,
    /// checks Burn's output and returns a timer of Burn's op there ([`burn_timer`]). Returns
    /// each peer that could run the op, with its timer.
    pub fn burn_peers<'a>(
        &'a self,
        mut peer: impl FnMut(&'a Device) -> Option<Timer<'a>>,
    ) -> Vec<(&'static str, Timer<'a>)> {
        self.peers.iter().filter_map(|p| peer(&p.device).map(|t| (p.name, t))).collect()
    }
}
