//! The table, the JSON lines and RESULTS.md.

use crate::concurrency::Concurrency;
use crate::measure::Settings;

/// What a case must reach: stridex's bandwidth over the copy's and over Burn's.
#[derive(Clone, Copy)]
pub struct Targets {
    pub copy: f64,
    pub burn: f64,
}

/// One case's medians, in seconds, each moving `bytes` (read + written).
pub struct Outcome {
    pub case: &'static str,
    pub bytes: usize,
    pub stridex: f64,
    pub copy: f64,
    /// Burn's op on the fastest of the run's Burn devices (`burn_peer`), if any could run it.
    pub burn: Option<f64>,
    pub burn_peer: &'static str,
    /// Every Burn device that ran the op, fastest first.
    pub burn_peers: Vec<(&'static str, f64)>,
    pub burn_op: &'static str,
    /// Plain Rust on the host computing the same output (row copies where rows are contiguous,
    /// the straightforward loop otherwise).
    pub rust: f64,
    /// One host `copy_from_slice` of the same bytes (half read, half written), one thread.
    pub memcpy: f64,
    /// Burn's NdArray backend on the host, where measured.
    pub ndarray: Option<f64>,
    /// The training step's parts, timed apart in its run.
    pub step_parts: Option<StepParts>,
    pub targets: Targets,
}

/// What any embedding training step spends on a device, timed apart in the step's run
/// (seconds): the floor under the step's time that no backward kernel can lower.
#[derive(Clone, Copy, Debug)]
pub struct StepParts {
    /// Burn's ones of the rows' shape: the seed its `backward` starts from.
    pub seed: f64,
    /// stridex's forward alone.
    pub forward: f64,
    /// The forward's bytes at the copy kernel's rate.
    pub forward_at_copy: f64,
    /// The dense gradient table written once: Burn's zeros of its shape.
    pub table_written: f64,
    /// stridex's forward on tracked tensors: the lookup, with its ids made ready for the
    /// backward pass (read back and grouped where the device does not group them).
    pub tracked_forward: f64,
}

impl StepParts {
    /// The seed, the faster forward and the table's write.
    pub fn floor(&self) -> f64 {
        self.seed + self.forward.min(self.forward_at_copy) + self.table_written
    }

    /// What the step spent past its tracked forward and the seed (of `step` seconds): the
    /// backward kernels and their launches.
    pub fn backward(&self, step: f64) -> f64 {
        step - self.tracked_forward - self.seed
    }
}

impl Outcome {
    pub fn gbps(&self, secs: f64) -> f64 {
        self.bytes as f64 / secs / 1e9
    }

    pub fn vs_copy(&self) -> f64 {
        self.copy / self.stridex
    }

    pub fn vs_burn(&self) -> Option<f64> {
        self.burn.map(|b| b / self.stridex)
    }

    pub fn vs_rust(&self) -> f64 {
        self.rust / self.stridex
    }

    pub fn vs_memcpy(&self) -> f64 {
        self.memcpy / self.stridex
    }

    /// Whether the case met its targets on `backend`. On wgpu and CUDA: over the device's copy
    /// and over Burn. On CubeCL's CPU runtime, where the copy kernel is no bound (one vector per
    /// invocation), over plain Rust on the host: the headline cases (those held to 0.9x the
    /// copy) >= 0.9x Rust and >= 0.5x one host memcpy of the same bytes, every other >= 1.0x
    /// Rust and >= 3x Burn's best CPU backend.
    pub fn meets_targets(&self, backend: &str) -> bool {
        if backend == "cpu" {
            let headline = self.targets.copy >= 0.9;
            return if headline {
                self.vs_rust() >= 0.9 && self.vs_memcpy() >= 0.5
            } else {
                self.vs_rust() >= 1.0 && self.vs_burn().is_none_or(|r| r >= 3.0)
            };
        }
        self.vs_copy() >= self.targets.copy && self.vs_burn().is_none_or(|r| r >= self.targets.burn)
    }

    /// The targets of [`Outcome::meets_targets`], as text.
    pub fn targets_text(&self, backend: &str) -> String {
        if backend == "cpu" {
            return if self.targets.copy >= 0.9 {
                ">= 0.9x Rust, >= 0.5x memcpy".into()
            } else {
                ">= 1.0x Rust, >= 3x Burn".into()
            };
        }
        // A target of 0 is no target (the training step is held to Burn only).
        let mut parts = Vec::new();
        if self.targets.copy > 0.0 {
            parts.push(format!(">= {:.1}x copy", self.targets.copy));
        }
        if self.targets.burn > 0.0 {
            parts.push(format!(">= {:.0}x Burn", self.targets.burn));
        }
        parts.join(", ")
    }
}

#[derive(Default)]
pub struct Results {
    /// `--backend` of the run: `wgpu`, `cpu` or `cuda`.
    pub backend: &'static str,
    pub cases: Vec<Outcome>,
    pub chains: Vec<crate::chains::ChainOutcome>,
    pub dynamic: Vec<crate::dynamic::DynamicOutcome>,
    pub first_use: Vec<crate::first_use::FirstUse>,
    pub interop: Vec<crate::interop::InteropOutcome>,
    pub concurrency: Option<Concurrency>,
    pub probes: Option<crate::measure::Probes>,
    pub backward_parts: Option<crate::backward_parts::BackwardParts>,
}

fn opt(v: Option<f64>) -> String {
    v.map_or("null".into(), |x| format!("{x:.3}"))
}

pub fn json_line(o: &Outcome, backend: &str) -> String {
    let peers: Vec<String> =
        o.burn_peers.iter().map(|&(name, t)| format!("\"{name}\": {:.3}", o.gbps(t))).collect();
    format!(
        "{{\"case\": \"{}\", \"backend\": \"{backend}\", \"bytes\": {}, \"stridex_gbps\": {:.3}, \"copy_gbps\": {:.3}, \
         \"burn_gbps\": {}, \"burn_peer\": \"{}\", \"burn_peers_gbps\": {{{}}}, \"rust_gbps\": {:.3}, \
         \"memcpy_gbps\": {:.3}, \"burn_ndarray_gbps\": {}, \"burn_op\": \"{}\", \"stridex_vs_copy\": {:.3}, \
         \"stridex_vs_burn\": {}, \"meets_targets\": {}}}",
        o.case,
        o.bytes,
        o.gbps(o.stridex),
        o.gbps(o.copy),
        opt(o.burn.map(|t| o.gbps(t))),
        o.burn_peer,
        peers.join(", "),
        o.gbps(o.rust),
        o.gbps(o.memcpy),
        opt(o.ndarray.map(|t| o.gbps(t))),
        o.burn_op,
        o.vs_copy(),
        opt(o.vs_burn()),
        o.meets_targets(backend)
    )
}

pub fn concurrency_json(c: &Concurrency, backend: &str) -> String {
    let runs: Vec<String> = c
        .runs
        .iter()
        .map(|r| {
            format!(
                "{{\"threads\": {}, \"ops_per_s\": {:.0}, \"errors_checked\": {}}}",
                r.threads, r.ops_per_s, r.errors
            )
        })
        .collect();
    format!(
        "{{\"case\": \"concurrency: {}\", \"backend\": \"{backend}\", \"runs\": [{}], \"ratio_16_vs_1\": {:.3}, \"meets_targets\": {}}}",
        c.op,
        runs.join(", "),
        c.ratio(),
        c.ratio() >= 0.8
    )
}

pub fn print_row(o: &Outcome, first: bool, backend: &str) {
    if first {
        println!(
            "{:<50} {:>7} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7}  Burn op",
            "case (GB/s)", "MB", "stridex", "copy", "Burn", "Rust", "x copy", "x Burn"
        );
    }
    println!(
        "{:<50} {:>7.1} {:>8.2} {:>8.2} {:>8} {:>8.2} {:>7.2} {:>7}  {}{}{}",
        o.case,
        o.bytes as f64 / 1e6,
        o.gbps(o.stridex),
        o.gbps(o.copy),
        o.burn.map_or("-".into(), |t| format!("{:.2}", o.gbps(t))),
        o.gbps(o.rust),
        o.vs_copy(),
        o.vs_burn().map_or("-".into(), |r| format!("{r:.1}")),
        o.burn_op,
        peer_note(o),
        if o.meets_targets(backend) { "" } else { "  (below target)" }
    );
}

/// Which Burn device the Burn figure is from, where the run tried more than one.
fn peer_note(o: &Outcome) -> String {
    if o.burn_peers.len() < 2 {
        return String::new();
    }
    let all: Vec<String> = o.burn_peers.iter().map(|&(n, t)| format!("{n} {:.2}", o.gbps(t))).collect();
    format!(" [best of Burn {}]", all.join(", "))
}

fn probe_gbps(p: &crate::measure::Probes) -> [(&'static str, f64); 3] {
    let g = |t: f64| p.bytes as f64 / t / 1e9;
    [
        ("one 16-byte vector per invocation (the copy column)", g(p.vectors)),
        ("four consecutive vectors per invocation", g(p.vector_tiles)),
        ("one 32-bit word per invocation", g(p.words)),
    ]
}

fn gbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

pub fn chain_json(c: &crate::chains::ChainOutcome, backend: &str) -> String {
    format!(
        "{{\"chain\": \"{}\", \"backend\": \"{backend}\", \"fused_bytes\": {}, \"staged_bytes\": {}, \"fused_ms\": {:.3}, \"staged_ms\": {:.3}, \
         \"burn_ms\": {:.3}, \"fused_gbps\": {:.3}, \"staged_gbps\": {:.3}, \"speedup\": {:.2}, \"byte_ratio\": {:.2}}}",
        c.case,
        c.fused_bytes,
        c.staged_bytes,
        c.fused * 1e3,
        c.staged * 1e3,
        c.burn * 1e3,
        gbps(c.fused_bytes, c.fused),
        gbps(c.staged_bytes, c.staged),
        c.speedup(),
        c.byte_ratio()
    )
}

pub fn print_chain(c: &crate::chains::ChainOutcome, first: bool) {
    if first {
        println!(
            "\n{:<62} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
            "chain", "fused MB", "staged MB", "fused ms", "staged ms", "Burn ms", "speedup", "bytes x"
        );
    }
    println!(
        "{:<62} {:>9.1} {:>9.1} {:>9.3} {:>9.3} {:>9.3} {:>8.1} {:>8.1}",
        c.case,
        c.fused_bytes as f64 / 1e6,
        c.staged_bytes as f64 / 1e6,
        c.fused * 1e3,
        c.staged * 1e3,
        c.burn * 1e3,
        c.speedup(),
        c.byte_ratio()
    );
}

pub fn probes_json(p: &crate::measure::Probes, backend: &str) -> String {
    let [(_, v), (_, t), (_, w)] = probe_gbps(p);
    format!(
        "{{\"case\": \"device copies\", \"backend\": \"{backend}\", \"bytes\": {}, \"vector_gbps\": {v:.3}, \"vector_tiles_gbps\": {t:.3}, \"word_gbps\": {w:.3}}}",
        p.bytes
    )
}

pub fn print_probes(p: &crate::measure::Probes) {
    println!("\ndevice copies of 64 MiB:");
    for (name, g) in probe_gbps(p) {
        println!("  {name:<52} {g:>6.2} GB/s");
    }
}

pub fn print_concurrency(c: &Concurrency) {
    println!("\nconcurrency: {} (each call uploads, launches and reads back)", c.op);
    for r in &c.runs {
        println!("  {:>2} threads: {:>7.0} ops/s", r.threads, r.ops_per_s);
    }
    println!("  16 threads / 1 thread: {:.2}", c.ratio());
}

/// Why the cases below their targets are there, from this run's own probes.
fn why_missed(r: &Results) -> String {
    let below = |scatter: bool| -> Vec<&str> {
        let cases = r.cases.iter().filter(|o| !o.meets_targets(r.backend));
        cases.map(|o| o.case).filter(|c| crate::scatters::ALL.contains(c) == scatter).collect()
    };
    let Some(p) = &r.probes else { return String::new() };
    let (missed, scatters) = (below(false), below(true));
    let scatter_note = if scatters.is_empty() {
        String::new()
    } else {
        // At the copy kernel's rate, how many times Burn's a case would be: where that is
        // below its Burn target, no kernel of these bytes reaches the target on this device.
        let ceilings: Vec<String> = r
            .cases
            .iter()
            .filter(|o| scatters.contains(&o.case))
            .filter_map(|o| o.burn.map(|b| format!("{} {:.1}x", o.case, b / o.copy)))
            .collect();
        format!(
            "\n**Scatters below target in this run:** {}.\n\n\
             How each runs: the grouped kernel (`backends/src/kernels/scatter.rs`, an embedding's \
             backward pass) applies each row's list of updates in order, one invocation per tile of \
             up to four 16-byte vectors (on GPUs one vector, its members' updates loaded eight at a \
             time). {} A ScatterElements of many lines (`kernels/scatter_lines.rs`) and whole rows \
             under `none` (`kernels/scatter_rows.rs`, the KV cache) read their indices on the \
             device and need no round trip. A ScatterElements line is walked by one invocation \
             (on GPUs by 32, each applying the updates that land in its own part of the line), \
             update after update (a read, a read-modify-write of a scattered word){} The copy \
             kernel's rate over Burn's, the most a kernel moving these bytes at the copy's speed \
             could reach: {}.\n",
            scatters.join(", "),
            "On GPUs (CUDA, HIP, wgpu on a GPU) its lists are made on the device from the ids \
             (`kernels/scatter_grouping.rs`: counts, a scan and a stable radix sort by \
             destination), with no round trip; on lavapipe and the CPU runtime on the host: the \
             indices are read back (a round trip) and grouped by destination \
             (`ScatterPlan::group`, a radix sort: about 0.6 ms for 16384 ids on a 2-core host, \
             timed 2026-11-25). The GPU kernels cost more where an invocation is a CPU thread's \
             SIMD lane: on lavapipe (`STRIDEX_TILE=spread`, 2026-11-28, two runs alternating \
             with its own) they ran the embedding backward at 0.09x the copy (0.55x as lavapipe \
             runs it), ScatterElements at 0.02x (0.14x) and the training step at 0.26x \
             (0.70x).",
            if r.backend == "wgpu" {
                ": on lavapipe a 32-bit load costs about what a 16-byte one does, which bounds it. \
                 Each update is four scattered 32-bit accesses (its index, its value, the \
                 destination word read and written) and, under `error`, a fifth in the index \
                 check that runs first, for 16 bytes credited: at the word copy's rate (probes \
                 below) that is about 0.4x the vector copy before any cache miss. The misses are \
                 the rest: the same kernel on the same bytes, with indices that climb along each \
                 line (every 8th element) instead of random ones, took 6.9-7.3 ms against \
                 22.7-23.4 ms (`clamp`, 2026-11-28): a SIMD batch's eight lanes each walk their \
                 own 16 KiB row, 128 KiB in all, past a core's L1, and a random read-modify-write \
                 there waits on the next level. The KV-cache \
                 write's two kernels, timed apart on this machine (2026-11-27): the claim kernel \
                 alone at 4.0-4.3x the copy's rate over the case's bytes, the write kernel alone \
                 at 0.82-0.85x; the write's rows land at random slots of a 64 MiB cache, the \
                 copy's in a compact 4 MiB buffer that stays in the host's cache. Where they land \
                 decides it: the same launch with the slots in order (rows 0 to 2047 of the \
                 cache) ran at 0.84-0.92x a copy of the rows (a `slice!`) timed round by round \
                 beside it, with the case's random slots 0.62-0.78x (2026-11-28, a probe of \
                 `launch`, four runs); \
                 an invocation writing 4 or 16 vectors instead of 8 (0.60-0.75x), its vectors \
                 spread over the row (0.59-0.65x), or the claims read without atomics \
                 (0.67-0.70x) measured no better. Leaving the claim kernel out (wrong under \
                 duplicates) gave 0.74-0.79x with random slots and 0.96-0.98x in order: the \
                 rows' places cost more than the claims. The embedding backward's parts, \
                 timed apart (2026-11-28, a probe of `launch` on the same buffers): reading the \
                 ids back, grouping them on the host and uploading the lists take about 0.5 ms of \
                 17-19 ms, the grouped kernel the rest. lavapipe hands each of its threads one \
                 contiguous block of a dispatch's workgroups (Mesa's `lp_cs_tpool`: \
                 `iter_per_thread = num_iters / num_threads`), so there the kernel deals its runs \
                 over the dispatch (`ScatterKernelDesc::dealt`): in key order the block with the \
                 frequent ids, the longest lists, kept one thread busy after the other had \
                 finished (21.6-28.1 ms before the deal, 16.8-19.4 ms after). Over the same bytes, \
                 lists of about three random members at ids spread evenly took 14.6-16.4 ms, and \
                 lists of three consecutive members 14.3 ms; Zipf's lists keep an imbalance (the \
                 most frequent id alone is 9% of the updates): one thread ran them in 32.5 ms, \
                 two in 18.4 ms. Per member of its run's list an invocation loads the member (a \
                 32-bit load) and four 16-byte vectors, five loads for 64 bytes read, where the \
                 copy makes four loads and four stores for 64 bytes each way. Variants of the \
                 kernel that ran slower there: before the deal, eight vectors per invocation \
                 (23.6-25.6 ms) and members' loads issued two at a time, as GPUs take them \
                 (23.2-23.7 ms), against 21.9-22.8 ms; after it, tiles of 8, 16 or 32 vectors, \
                 consecutive or spread (18.2-34.2 ms, against 17.5-19.4 ms)."
            } else if r.backend == "cpu" {
                ". On the CPU runtime Burn's ScatterElements kernel (burn-cubecl 0.22.1, \
                 `kernel/index/scatter.rs`) walks each line serially as this one does and reads \
                 its index with no range test at all (one out of range writes outside the \
                 tensor). A line of 4096 f32 stays in a core's cache, so the loop's arithmetic is \
                 the cost: with the range test per update this kernel ran at 0.7-0.8x Burn's; under \
                 `error`, whose check before it found every index in range, it now only bounds the \
                 index by the axis (`scatter_index_of`, `kernels/index.rs`), at 0.9-1.1x (four \
                 runs each, 2026-11-28). Both walks are then at the device copy's rate or above \
                 it."
            } else {
                "."
            },
            ceilings.join("; ")
        )
    };
    let scatter_note = scatter_note + &step_floor(r);
    if missed.is_empty() {
        return scatter_note + "\nEvery other case met its targets in this run.\n";
    }
    if r.backend == "cpu" {
        return format!(
            "\n**Below target in this run:** {} (targets in the table's last column).\n{}{scatter_note}",
            missed.join(", "),
            why_missed_on_cpu(r)
        );
    }
    if r.backend != "wgpu" {
        // The explanation below is lavapipe's.
        return format!(
            "\n**Below target in this run:** {} (targets in the table's last column).\n{scatter_note}",
            missed.join(", ")
        );
    }
    let [(_, vectors), (_, tiles), (_, words)] = probe_gbps(p);
    // Cases that move whole 16-byte vectors (an embedding's rows, a transpose's 4x4 blocks)
    // against those that read scattered words.
    let scattered = |c: &str| ["columns", "step", "GatherElements"].iter().any(|p| c.starts_with(p));
    let whole: Vec<String> = r
        .cases
        .iter()
        .filter(|o| missed.contains(&o.case) && !scattered(o.case))
        .map(|o| {
            format!(
                "{} at {:.2}x the copy, whose own rate is {}",
                o.case,
                o.vs_copy(),
                o.burn.map_or("-".into(), |b| format!("{:.1}x Burn's", b / o.copy))
            )
        })
        .collect();
    let whole_note = if whole.is_empty() {
        String::new()
    } else {
        format!(
            "\n{}: each moves whole 16-byte vectors (rows, or 4x4 blocks transposed in registers), \
             four per invocation: a copy with one index read (or none) per row. Each one's figure over the \
             copy moves with this machine's noise (the embeddings' between 0.75x and 1.08x in the \
             runs of 2026-11-28), and its Burn target is bounded by the copy's rate over Burn's: \
             where that is below the target, no kernel moving these bytes at the copy's speed \
             reaches it on this device.\n",
            whole.join("; ")
        )
    };
    let all = missed.join(", ");
    let missed: Vec<&str> = missed.into_iter().filter(|c| scattered(c)).collect();
    if missed.is_empty() {
        return format!("\n**Below target in this run:** {all}.\n{whole_note}{scatter_note}");
    }
    format!(
        "\n**Below target in this run:** {all}.\n{whole_note}\n\
         {}: these read scattered source words, or keep part of each vector they load. A gather \
         along the row reads one 32-bit word per \
         output element (one byte per element for `u8`): its consecutive output elements come from \
         scattered words, so no source vector can be loaded whole. A step of 2 loads two whole \
         source vectors per output vector and keeps half their words (`RowAccess::SteppedLines`), \
         which on lavapipe measured the same as loading its words one by one (2026-11-28, two runs \
         each: 0.47-0.49x the copy one by one, 0.46-0.48x by vectors). On lavapipe a storage-buffer load \
         is a scalar loop over the SIMD lanes with one iteration per 32-bit component (Mesa 22.3 \
         llvmpipe, `emit_load_mem`), so a word costs about what a 16-byte vector costs: the device's \
         own word-at-a-time copy above reaches {:.2}x its vector copy, and 1-byte elements a quarter \
         of that again. stridex already stores whole vector lines, reads each index once for up to \
         eight rows that share it, and moves four lines per invocation (the vector-tile copy reaches \
         {:.2}x the plain copy); what is left is that bound. On a GPU the scattered reads of a warp \
         fall in the same cache lines and coalesce, so the bound is lavapipe's, not the kernels': the \
         CUDA figures are what would show it, on a machine with a GPU \
         (`cargo run --release -p stridex-bench --features cuda`).\n{scatter_note}",
        missed.join(", "),
        words / vectors,
        tiles / vectors
    )
}

/// Where the training step misses its Burn target: its parts timed apart, against a step at the
/// target.
fn step_floor(r: &Results) -> String {
    let step = r.cases.iter().find(|o| {
        o.case == crate::scatters::TRAINING_STEP && o.vs_burn().is_some_and(|b| b < o.targets.burn)
    });
    let Some((o, p, burn)) = step.and_then(|o| Some((o, o.step_parts?, o.burn?))) else {
        return String::new();
    };
    let ms = |t: f64| format!("{:.1} ms", t * 1e3);
    let target = burn / o.targets.burn;
    format!(
        "\nThe training step's parts, timed apart in this run: Burn's ones seed of the rows' gradient \
         (its `backward` starts from it) {}, stridex's forward alone {} ({} at the copy kernel's \
         rate; on tracked tensors, its ids made ready for the backward, {}), the {} MB gradient \
         table written once (Burn's own zeros) {}. The seed, the faster forward and the table's \
         write come to {}, against {} for a step at {:.0}x Burn's ({}); stridex's step took {}, \
         of which its backward pass (the step less the tracked forward and the seed) {}{}.\n",
        ms(p.seed),
        ms(p.forward),
        ms(p.forward_at_copy),
        ms(p.tracked_forward),
        crate::scatters::TRAINING_TABLE_BYTES / 1_000_000,
        ms(p.table_written),
        ms(p.floor()),
        ms(target),
        o.targets.burn,
        ms(burn),
        ms(o.stridex),
        ms(p.backward(o.stridex)),
        if p.floor() > target {
            ": those parts alone exceed the target's time, whatever the backward kernel does"
        } else {
            ""
        }
    )
}

/// Why the gathers below target on CubeCL's CPU runtime are there, from this run's figures.
fn why_missed_on_cpu(r: &Results) -> String {
    let missed =
        r.cases.iter().filter(|o| !o.meets_targets("cpu") && !crate::scatters::ALL.contains(&o.case));
    let fastest = r.cases.iter().map(|o| o.gbps(o.stridex)).fold(0.0, f64::max);
    let (mut bound, mut elements) = (Vec::new(), Vec::new());
    for o in missed {
        let goal = o.burn.map(|b| 3.0 * o.gbps(b));
        match goal.filter(|&g| g > o.gbps(o.memcpy) && g > fastest) {
            Some(g) => bound.push(format!(
                "{}: 3x Burn is {g:.1} GB/s, above one host memcpy of the same bytes ({:.1} GB/s) and above \
                 the fastest case of this run ({fastest:.1} GB/s, row copies on every core)",
                o.case,
                o.gbps(o.memcpy)
            )),
            None => elements.push((o.case, goal.map_or(0.0, |g| g / o.gbps(o.memcpy)))),
        }
    }
    let mut s = String::new();
    if !bound.is_empty() {
        s += &format!("\nOut of reach for any kernel that writes the result: {}.\n", bound.join("; "));
    }
    for (case, goal_per_memcpy) in elements {
        s += &format!("\n{case}: {}\n", why_elements_missed(case, goal_per_memcpy));
    }
    s
}

/// Why a case below target on the CPU runtime, not bound by memcpy, is there; `goal_per_memcpy`
/// is 3x Burn over one host memcpy of the same bytes.
fn why_elements_missed(case: &str, goal_per_memcpy: f64) -> String {
    if case.starts_with("flip") {
        format!(
            "3x Burn is {goal_per_memcpy:.2}x one host memcpy of the same bytes. The flip moves whole \
             16-byte vectors (their lanes reversed in registers), several 512-element rows per \
             invocation (`cpu_row_block` in `backends/src/kernels/rows.rs`), as the crop moves its \
             rows, and reached 37-41 GB/s in the runs of 2026-11-26; Burn's flip on Flex is a host \
             loop that itself runs at 9-23 GB/s between runs on this host, so 3x of it is met only \
             in its slow runs"
        )
    } else if case.starts_with("step") {
        format!(
            "3x Burn is {goal_per_memcpy:.2}x one host memcpy of the same bytes. Each output line is \
             picked from two whole source lines (`RowAccess::SteppedLines`), every other row skipped, \
             several rows per invocation: 11.6-11.8 GB/s in the runs of 2026-11-28 on this host, \
             against 4.9-5.3 GB/s element by element and 8.0-8.6 GB/s for plain Rust's loop; Burn's \
             best CPU figure (Flex) moved between 4.5 and 5.8 GB/s in those runs"
        )
    } else if case.contains("u8") {
        "its bytes are loaded and stored one by one, four rows sharing each index \
         (`RowWalk::narrow_units` and `regroup`); measured on this 2-core host (2026-11-26, seven \
         runs): 2.1-5.2 GB/s against 1.1 GB/s as lanes of 32-bit words, 1.6-3.6x plain Rust and \
         2.5-5.9x Burn, whose best CPU figure (Flex) moved between 0.6 and 1.0 GB/s from run to \
         run: the 3x-Burn target is met or missed by that noise"
            .into()
    } else if case.starts_with("columns") {
        "a gather along the row: each index is read and checked once for eight rows that share it \
         (`RowWalk` groups, long tiles of the rows per invocation), then each element is one scattered 32-bit \
         load. The same kernel measured 3.1x and 2.9x Burn (Flex, the faster of Burn's two CPU \
         backends here) in two runs of 2026-11-28 on this host: the target is met or missed by \
         that noise"
            .into()
    } else {
        "every output element reads its own index (no two rows share it), checks it and loads one \
         scattered 32-bit word: the work per element of Burn's CubeCL CPU kernel for the same op, \
         which this run measured beside it. A 3x margin would need fewer than one index read, one \
         check and one scattered load per element, which GatherElements does not allow"
            .into()
    }
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

pub fn markdown(device: &str, settings: &Settings, r: &Results) -> String {
    let mut s = String::new();
    s.push_str("# Benchmark results\n\n");
    s.push_str(&format!(
        "{} on `{}`, one process, `cargo run --release -p stridex-bench{} -- --backend {} --write bench` \
         (median of {} synced launches per figure, after warm-up; in the first table each \
         case's columns are timed round by round, one call of each per round in a shuffled \
         order, so that the machine's drift during a case slows them alike and their ratios \
         hold).\n\n",
        today(),
        device,
        match r.backend {
            "cpu" => " --features cpu",
            "cuda" => " --features cuda",
            _ => "",
        },
        r.backend,
        settings.reps
    ));
    s.push_str(&format!("Backend: `{}` (stridex, the copy kernel and Burn all on it).", r.backend));
    // Each backend's run writes its own file; wgpu's (lavapipe in CI) and the CPU runtime's
    // are both kept in the repository, so each names the other.
    let others: Vec<&str> = ["wgpu", "cpu"]
        .into_iter()
        .filter(|&b| b != r.backend)
        .map(|b| {
            if b == "wgpu" {
                "[RESULTS.md](RESULTS.md) (wgpu)"
            } else {
                "[RESULTS-cpu.md](RESULTS-cpu.md) (CubeCL's CPU runtime)"
            }
        })
        .collect();
    s.push_str(&format!(" The same cases on other runtimes: {}.\n\n", others.join(", ")));
    s.push_str(
        "GB/s = (bytes read + bytes written) / time, the same bytes credited to every column of a \
         row. *copy* is a plain 128-bit-vector copy kernel moving those bytes on the same device; \
         *Burn* is Burn 0.22.1's `Tensor` ops on the same CubeCL runtime (its default `Cube` \
         backend, ops in Burn's fusion stream), the device synced after every op",
    );
    if r.backend == "cpu" {
        s.push_str(
            "; on the CPU backend each op ran on Burn's CubeCL CPU backend and on Flex (Burn's \
             pure-Rust CPU backend), and the faster is reported (which one in the *Burn op* column)",
        );
    }
    s.push_str(
        "; where Burn returns a view (`permute`, a slice) its figure includes materializing it \
         (a flatten, which runs Burn's copy kernel), so both sides write the result. *Rust* is \
         plain Rust on the host computing the same output (one `copy_from_slice` per row where \
         rows are contiguous, the straightforward loop otherwise), one thread; *memcpy* is one host \
         `copy_from_slice` of the same bytes, one thread. Every output, \
         stridex's, Burn's and Rust's, was checked against a host computation in this run.\n\n",
    );
    let chart =
        if r.backend == "wgpu" { "results.svg".to_string() } else { format!("results-{}.svg", r.backend) };
    s.push_str(&format!("![GB/s per case]({chart})\n\n"));
    s.push_str("| case | MB moved | stridex GB/s | copy GB/s | Burn GB/s | Rust GB/s | memcpy GB/s | stridex / copy | stridex / Burn | Burn op | targets |\n");
    s.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
    for o in &r.cases {
        s.push_str(&format!(
            "| {} | {:.1} | {:.2} | {:.2} | {} | {:.2} | {:.2} | {:.2} | {} | {}{} | {} ({}) |\n",
            o.case,
            o.bytes as f64 / 1e6,
            o.gbps(o.stridex),
            o.gbps(o.copy),
            o.burn.map_or("-".into(), |t| format!("{:.2}", o.gbps(t))),
            o.gbps(o.rust),
            o.gbps(o.memcpy),
            o.vs_copy(),
            o.vs_burn().map_or("-".into(), |x| format!("{x:.1}")),
            o.burn_op,
            peer_note(o),
            if o.meets_targets(r.backend) { "met" } else { "**missed**" },
            o.targets_text(r.backend)
        ));
    }
    let host: Vec<String> = r
        .cases
        .iter()
        .filter_map(|o| {
            let nd = o.ndarray?;
            Some(format!(
                "- {}: Burn NdArray `select(0)` {:.2} GB/s, plain Rust row copies {:.2} GB/s\n",
                o.case,
                o.gbps(nd),
                o.gbps(o.rust)
            ))
        })
        .collect();
    if !host.is_empty() {
        s.push_str("\nBurn on the host CPU, for scale (no device involved):\n\n");
        s.extend(host);
    }
    if !r.chains.is_empty() {
        s.push_str(
            "\n## Chains: fused vs stage by stage\n\nOne `chain!` kernel against the same stages run \
             one by one (each stage's own op launched on device buffers; intermediates stay on the \
             device; one sync at the end) and against Burn 0.22.1's `Tensor` ops (fusion stream) \
             running the same pipeline. Bytes are each implementation's own: a stage reads and \
             writes each of its output elements once (plus its indices); the fused kernel reads \
             the elements the result needs and writes the result. GB/s is over those bytes; \
             *speedup* is staged time / fused time, beside the ratio of bytes moved. For the chain \
             that ends in `convert`, *staged* is stridex's two kernels: the u8 chain, then a \
             `convert`-only chain over its output. Outputs of all three checked against the host.\n\n| chain | stages | MB fused | MB staged | fused ms | fused GB/s | staged ms | staged GB/s | Burn ms | speedup | bytes staged / fused |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
        );
        for c in &r.chains {
            s.push_str(&format!(
                "| {} | {} | {:.2} | {:.1} | {:.3} | {:.2} | {:.3} | {:.2} | {:.3} | {:.1}x | {:.1} |\n",
                c.case,
                c.stages,
                c.fused_bytes as f64 / 1e6,
                c.staged_bytes as f64 / 1e6,
                c.fused * 1e3,
                gbps(c.fused_bytes, c.fused),
                c.staged * 1e3,
                gbps(c.staged_bytes, c.staged),
                c.burn * 1e3,
                c.speedup(),
                c.byte_ratio()
            ));
        }
        s.push('\n');
        for c in &r.chains {
            s.push_str(&format!("- {}: Burn ran {}.\n", c.case, c.burn_ops));
        }
    }
    if !r.dynamic.is_empty() {
        s.push_str(&crate::dynamic::markdown(&r.dynamic));
    }
    s.push_str(&crate::first_use::markdown(&r.first_use));
    if !r.interop.is_empty() {
        s.push_str(&crate::interop::markdown(&r.interop));
    }
    if let Some(p) = &r.probes {
        s.push_str("\nThe device's own copies of 64 MiB, for reading the ratios:\n\n| copy kernel | GB/s |\n| --- | ---: |\n");
        for (name, g) in probe_gbps(p) {
            s.push_str(&format!("| {name} | {g:.2} |\n"));
        }
    }
    s.push_str(&why_missed(r));
    if let Some(p) = &r.backward_parts {
        s.push_str(&crate::backward_parts::markdown(p));
    }
    if let Some(c) = &r.concurrency {
        s.push_str(&format!(
            "\nConcurrency: one shared `static` op ({}) called from N threads on the `{}` device, \
             each call `run_on` (upload, launch, read back), every value checked and every {}th \
             call an out-of-range index that must come back as `Err`:\n\n| threads | ops/s |\n| ---: | ---: |\n",
            c.op,
            r.backend,
            crate::concurrency::BAD_EVERY
        ));
        for run in &c.runs {
            s.push_str(&format!("| {} | {:.0} |\n", run.threads, run.ops_per_s));
        }
        s.push_str(&format!("\n16 threads / 1 thread: {:.2} (target >= 0.8).\n", c.ratio()));
    }
    s
}
