//! The scatter kernel: with `S = run / tile / span` spans per run, invocation `p` takes tiles
//! `(p % S) * span ..` (`span` of them: 1, but on CubeCL's CPU runtime) of destination run
//! `p / S` (where runs are dealt, as on lavapipe, the run `run_at` deals slot `p / S`), a tile
//! being 1, 2 or 4 consecutive units, each a vector of 4, 2 or 1 32-bit words (16 bytes where
//! every run is whole aligned 16-byte blocks, as an embedding's rows are), and applies that
//! run's list of updates in order: under `none` the last one's bits, else each combined with
//! what the destination holds, starting from it.
//! No two invocations write one word (runs are distinct, and the plan keeps 8- and 16-bit runs
//! in whole words), so the result needs no atomics and is the same every run. A gather's
//! gradient takes the form `into_zeros`: a sum from zero over every run of a fresh buffer, the
//! runs lying back to back, so the gradient needs no zero fill before it.
//!
//! Arithmetic is on 32-bit words: f16 and bf16 are widened to f32 and rounded back after every
//! step (as `half` computes them), integers add, subtract and multiply as wrapping u32 (the
//! same low bits as their own type's wrapping), and max and min compare in the type's own
//! order. A mean is that sum, divided once at the end.

use super::convert::{encode, f16_to_f32};
use super::{offline_definition, read_lane};
use crate::launch::{self, Queued, RAN_MARKER};
use cubecl::prelude::*;
use cubecl::server::Handle;
use stridex_core::kernel::{ScatterKernelDesc, ZERO_MEMBER};
use stridex_core::{DType, Reduction};

/// `updates` and `dest` are arrays of vectors of `k.vector` 32-bit words; `keys`, `starts`
/// and `members` the runs' lists (see `ScatterGroups`), `groups` runs long.
// `#[cube]` has neither slice copies nor iterators: a tile moves unit by unit, and the
// members loop over their index range.
#[allow(clippy::too_many_arguments, clippy::manual_memcpy, clippy::needless_range_loop)]
#[cube(launch_unchecked)]
pub fn scatter_kernel<N: Size>(
    updates: &[Vector<u32, N>],
    keys: &[u32],
    starts: &[u32],
    members: &[u32],
    dest: &mut [Vector<u32, N>],
    status: &mut [u32],
    groups: u32,
    #[comptime] k: ScatterKernelDesc,
) {
    let pos = ABSOLUTE_POS;
    if pos == 0 {
        status[1] = comptime!(RAN_MARKER);
    }
    let slots = dispatch_slots(groups, k.dealt);
    if comptime!(k.lane_words) {
        if pos < slots {
            let g = run_at(pos, groups, k.dealt);
            if g < usize::cast_from(groups) {
                lane_word(updates, keys, starts, members, dest, g, k);
            }
        }
    } else if pos < slots * comptime!((k.run / k.tile / k.span) as usize) {
        let spans = comptime!((k.run / k.tile / k.span) as usize);
        let g = run_at(pos / spans, groups, k.dealt);
        let first = (pos % spans) * comptime!(k.span as usize);
        if g >= usize::cast_from(groups) {
            // A dealt slot past the last run: it holds none.
        } else if comptime!(k.span > 1) {
            // Several tiles of the run, one after another (the CPU runtime's): a loop.
            for i in first..first + comptime!(k.span as usize) {
                run_tile(updates, keys, starts, members, dest, groups, g, i, k.clone());
            }
        } else {
            run_tile(updates, keys, starts, members, dest, groups, g, first, k);
        }
    }
}

/// The fewest slots of a dealt dispatch (`ScatterKernelDesc::dealt`): 2^6.
pub(crate) const DEAL_MIN_SLOTS: u32 = 64;

/// Dispatch slots for `groups` runs: one per run, or dealt, the power of two `2^bits` at or
/// above `groups` (at least [`DEAL_MIN_SLOTS`]; the launcher deals only where it and its
/// invocations fit in `u32`).
#[cube]
fn dispatch_slots(groups: u32, #[comptime] dealt: bool) -> usize {
    let mut slots = usize::cast_from(groups);
    if comptime!(dealt) {
        slots = usize::cast_from(1u32 << deal_bits(groups));
    }
    slots
}

/// The bits of a dealt dispatch's slot: the fewest whose power of two holds `groups` runs,
/// at least 6. Shifts and bit counts only: a GPU divides by a number it does not know in
/// tens of instructions, and the catalogue's CUDA check refuses any such division.
#[cube]
fn deal_bits(groups: u32) -> u32 {
    let mut bits = u32::cast_from(comptime!(DEAL_MIN_SLOTS.trailing_zeros()));
    if groups > comptime!(DEAL_MIN_SLOTS) {
        bits = 32u32 - (groups - 1u32).leading_zeros();
    }
    bits
}

/// The run dispatch slot `q` takes: `q` itself, or dealt (`ScatterKernelDesc::dealt`) the run
/// whose `bits` bits (`deal_bits`) are `q`'s reversed. A runtime that splits the dispatch into
/// T contiguous blocks (T a power of two dividing the workgroups; else nearly so) gives block
/// `t` the runs whose low bits are `t`'s reversed: every T-th run of the key order, so that an
/// embedding's most frequent ids, the first runs, go to different threads, and each thread's
/// runs span the whole key range. A slot whose reversal is `groups` or more takes no run
/// (where there are more than 64 runs, fewer than half the slots).
#[cube]
fn run_at(q: usize, groups: u32, #[comptime] dealt: bool) -> usize {
    let mut g = q;
    if comptime!(dealt) {
        let bits = deal_bits(groups);
        g = usize::cast_from(u32::cast_from(q).reverse_bits() >> (32u32 - bits));
    }
    g
}

/// Tile `i` of run `g`: its list of updates applied in order.
#[allow(clippy::too_many_arguments, clippy::manual_memcpy, clippy::needless_range_loop)]
#[cube]
fn run_tile<N: Size>(
    updates: &[Vector<u32, N>],
    keys: &[u32],
    starts: &[u32],
    members: &[u32],
    dest: &mut [Vector<u32, N>],
    groups: u32,
    g: usize,
    i: usize,
    #[comptime] k: ScatterKernelDesc,
) {
    let tile = comptime!(k.tile as usize);
    // A tile's first unit, and the units between two of its units: the tile lies in the
    // innermost dimension, packed in both buffers (`ScatterKernelDesc::tile`), its units
    // consecutive or spread through it.
    let gap = comptime!(if k.spread { (k.inner / k.tile) as usize } else { 1usize });
    let mut rem = i * tile;
    if comptime!(k.spread) {
        rem = (i / gap) * comptime!(k.inner as usize) + i % gap;
    }
    let mut du = 0usize;
    let mut dd = 0usize;
    #[unroll]
    for i in 0..comptime!(k.dims.len()) {
        let d = comptime!(k.dims[i]);
        let c = rem / comptime!(d.step as usize);
        rem %= comptime!(d.step as usize);
        du += c * comptime!(d.updates_stride as usize);
        dd += c * comptime!(d.dest_stride as usize);
    }
    // The lists count words (64-bit elements: pairs); every run starts on a vector.
    let per = comptime!(k.words as usize);
    let vector = comptime!(k.vector as usize);
    let mut at = dd;
    if comptime!(k.every_run) {
        // Every run, back to back (its list may be empty).
        at += g * comptime!(k.run as usize);
    } else {
        at += usize::cast_from(keys[g]) * per / vector;
    }
    let mut start = usize::cast_from(starts[g]);
    let mut end = usize::cast_from(starts[g + 1]);
    if comptime!(k.every_run) {
        // The lists end at `starts[groups]`, the members kept (at most the members buffer's
        // words): a list clamped to it reads no member past them, even with starts that a
        // dropped kernel of the device's grouping left wrong.
        let kept = usize::cast_from(starts[usize::cast_from(groups)]);
        if end > kept {
            end = kept;
        }
        if start > end {
            start = end;
        }
    }
    // Every run's lists: an empty one leaves its run as it is (into zeros: makes it zeros,
    // below). Else a list is never empty.
    let mut listed = true;
    if comptime!(k.every_run && !k.into_zeros) {
        listed = start < end;
    }
    if !listed {
        // Nothing to apply.
    } else if comptime!(k.reduction == Reduction::None) {
        // The list holds the last update alone.
        let last = members[end - 1];
        let from = usize::cast_from(last) * per / vector + du;
        #[unroll]
        for t in 0..tile {
            dest[at + t * gap] = update_unit(updates, last, from + t * gap, k.zero_members);
        }
    } else {
        let mut acc = Array::<Vector<u32, N>>::new(tile);
        let mut from = start;
        if comptime!(k.into_zeros) {
            // A sum into zeros (`ScatterKernelDesc::into_zeros`): the destination is not read.
            #[unroll]
            for t in 0..tile {
                acc[t] = Vector::new(0u32);
            }
        } else if comptime!(k.use_init_val) {
            #[unroll]
            for t in 0..tile {
                acc[t] = dest[at + t * gap];
            }
        } else {
            // The data's element stays out: the run's first update starts the reduction
            // (a run's list is never empty).
            let member = members[start];
            let first = usize::cast_from(member) * per / vector + du;
            #[unroll]
            for t in 0..tile {
                acc[t] = update_unit(updates, member, first + t * gap, k.zero_members);
            }
            from = start + 1;
        }
        if comptime!(k.batch > 1) {
            // Whole batches first: every load of a batch is issued before the first of its
            // updates is combined, then they are combined in the list's order.
            let batch = comptime!(k.batch as usize);
            let mut loaded = Array::<Vector<u32, N>>::new(comptime!((k.batch * k.tile) as usize));
            while from + batch <= end {
                #[unroll]
                for b in 0..batch {
                    let member = members[from + b];
                    let base = usize::cast_from(member) * per / vector + du;
                    #[unroll]
                    for t in 0..tile {
                        loaded[b * tile + t] = update_unit(updates, member, base + t * gap, k.zero_members);
                    }
                }
                #[unroll]
                for b in 0..batch {
                    #[unroll]
                    for t in 0..tile {
                        acc[t] = combine_unit(acc[t], loaded[b * tile + t], k.clone());
                    }
                }
                from += batch;
            }
        }
        // The rest of the list (all of it, unbatched), one member after another.
        for m in from..end {
            let member = members[m];
            let base = usize::cast_from(member) * per / vector + du;
            #[unroll]
            for t in 0..tile {
                let u = update_unit(updates, member, base + t * gap, k.zero_members);
                acc[t] = combine_unit(acc[t], u, k.clone());
            }
        }
        if comptime!(k.mean) {
            let mut n = u32::cast_from(end - start);
            if comptime!(k.use_init_val) {
                n += 1u32;
            }
            // A mean is ScatterElements' alone, whose runs are single elements: 8- and
            // 16-bit ones take `lane_word`, so every word here is one 32-bit element.
            #[unroll]
            for t in 0..tile {
                let mut a = acc[t];
                #[unroll]
                for w in 0..vector {
                    a.insert(w, mean_of(a.extract(w), n, k.dtype));
                }
                acc[t] = a;
            }
        }
        #[unroll]
        for t in 0..tile {
            dest[at + t * gap] = acc[t];
        }
    }
}

/// The update unit at `at` of `member`'s update; zeros, with no load, for [`ZERO_MEMBER`]
/// where the lists may hold it (`zero_members`, a folded gather's `zero` policy).
#[cube]
fn update_unit<N: Size>(
    updates: &[Vector<u32, N>],
    member: u32,
    at: usize,
    #[comptime] zero_members: bool,
) -> Vector<u32, N> {
    let mut u = Vector::new(0u32);
    if comptime!(zero_members) {
        if member != comptime!(ZERO_MEMBER) {
            u = updates[at];
        }
    } else {
        u = updates[at];
    }
    u
}

/// Destination word `keys[g]` of 8- or 16-bit elements written one by one: each member is
/// `element << 2 | lane`, an updates element and the lane of the word it goes to, applied in
/// the list's order (each element's own updates are in row-major order).
// `#[cube]` loops over index ranges; it has no slice iterators.
#[allow(clippy::needless_range_loop)]
#[cube]
fn lane_word<N: Size>(
    updates: &[Vector<u32, N>],
    keys: &[u32],
    starts: &[u32],
    members: &[u32],
    dest: &mut [Vector<u32, N>],
    g: usize,
    #[comptime] k: ScatterKernelDesc,
) {
    let bits = comptime!(32 / k.lanes);
    let mask = comptime!(((1u64 << (32 / k.lanes)) - 1) as u32);
    let at = usize::cast_from(keys[g]);
    let mut acc = dest[at].extract(0usize);
    // Updates each lane has taken so far (a mean divides by them; without the data's element,
    // a lane's first update starts its reduction).
    let counted = comptime!(k.mean || !k.use_init_val);
    let mut c0 = 0u32;
    let mut c1 = 0u32;
    let mut c2 = 0u32;
    let mut c3 = 0u32;
    for m in usize::cast_from(starts[g])..usize::cast_from(starts[g + 1]) {
        let code = members[m];
        let lane = code & 3u32;
        let shift = lane * bits;
        let u = read_lane(updates, usize::cast_from(code >> 2u32), k.lanes);
        let mut before = 1u32;
        if comptime!(counted) {
            if lane == 0u32 {
                before = c0;
                c0 += 1u32;
            } else if lane == 1u32 {
                before = c1;
                c1 += 1u32;
            } else if lane == 2u32 {
                before = c2;
                c2 += 1u32;
            } else {
                before = c3;
                c3 += 1u32;
            }
        }
        let mut value = u;
        if comptime!(k.reduction != Reduction::None) {
            let mut reduce = true;
            if comptime!(!k.use_init_val) {
                reduce = before > 0u32;
            }
            if reduce {
                value = combine((acc >> shift) & mask, u, k.dtype, k.reduction);
            }
        }
        let cleared = acc ^ (acc & (mask << shift));
        acc = cleared | ((value & mask) << shift);
    }
    if comptime!(k.mean) {
        #[unroll]
        for l in 0..comptime!(k.lanes) {
            let mut taken = c0;
            if comptime!(l == 1) {
                taken = c1;
            } else if comptime!(l == 2) {
                taken = c2;
            } else if comptime!(l == 3) {
                taken = c3;
            }
            if taken > 0u32 {
                let shift = comptime!(l * bits);
                let mut n = taken;
                if comptime!(k.use_init_val) {
                    n += 1u32;
                }
                let value = mean_of((acc >> shift) & mask, n, k.dtype);
                let cleared = acc ^ (acc & (mask << shift));
                acc = cleared | ((value & mask) << shift);
            }
        }
    }
    dest[at] = Vector::new(acc);
}

/// One element's sum (its bits, in the low bits) divided by `n` > 0: floats as f32 division
/// rounded to the type, integers rounded down (toward negative infinity, as OpenVINO
/// ScatterElementsUpdate-12 says).
#[allow(unused_assignments)]
#[cube]
fn mean_of(sum: u32, n: u32, #[comptime] dtype: DType) -> u32 {
    let mut out = sum;
    if comptime!(dtype.is_float()) {
        out = encode(widen(sum, dtype) / f32::cast_from(n), dtype);
    } else if comptime!(matches!(dtype, DType::I8 | DType::I16 | DType::I32)) {
        let x = signed(sum, dtype);
        let mut q = 0i32;
        if n > 0x7FFF_FFFFu32 {
            // |x| < n: the floor is 0 or -1.
            if x < 0i32 {
                q = -1i32;
            }
        } else {
            let d = i32::cast_from(n);
            q = x / d;
            if x < 0i32 && q * d != x {
                q -= 1i32;
            }
        }
        out = u32::reinterpret(q);
    } else {
        out = sum / n;
    }
    out
}

/// `acc` and `u`, units of `k.vector` words, combined word by word.
#[cube]
fn combine_unit<N: Size>(
    acc: Vector<u32, N>,
    u: Vector<u32, N>,
    #[comptime] k: ScatterKernelDesc,
) -> Vector<u32, N> {
    let mut a = acc;
    #[unroll]
    for w in 0..comptime!(k.vector as usize) {
        a.insert(w, combine_word(a.extract(w), u.extract(w), k.clone()));
    }
    a
}

/// `acc` and `u` combined lane by lane.
#[cube]
fn combine_word(acc: u32, u: u32, #[comptime] k: ScatterKernelDesc) -> u32 {
    let mut out = 0u32;
    if comptime!(k.lanes == 1) {
        out = combine(acc, u, k.dtype, k.reduction);
    } else {
        let bits = comptime!(32 / k.lanes);
        let mask = comptime!(((1u64 << (32 / k.lanes)) - 1) as u32);
        #[unroll]
        for l in 0..comptime!(k.lanes) {
            let shift = comptime!(l * bits);
            let r = combine((acc >> shift) & mask, (u >> shift) & mask, k.dtype, k.reduction);
            out |= (r & mask) << shift;
        }
    }
    out
}

/// One element's bits `a` and `b` (in the low bits) combined under `reduction`.
#[allow(unused_assignments)]
#[cube]
pub(super) fn combine(a: u32, b: u32, #[comptime] dtype: DType, #[comptime] reduction: Reduction) -> u32 {
    let mut out = a;
    if comptime!(dtype.is_float()) {
        let x = widen(a, dtype);
        let y = widen(b, dtype);
        if comptime!(reduction == Reduction::Add) {
            out = encode(x + y, dtype);
        } else if comptime!(reduction == Reduction::Mul) {
            out = encode(x * y, dtype);
        } else if comptime!(reduction == Reduction::Sub) {
            out = encode(x - y, dtype);
        } else if comptime!(reduction == Reduction::Max) {
            // A NaN update compares false and leaves the element (as the reference does).
            if y > x {
                out = b;
            }
        } else if y < x {
            out = b;
        }
    } else if comptime!(reduction == Reduction::Add) {
        out = a + b;
    } else if comptime!(reduction == Reduction::Mul) {
        out = a * b;
    } else if comptime!(reduction == Reduction::Sub) {
        out = a - b;
    } else if comptime!(matches!(dtype, DType::I8 | DType::I16 | DType::I32)) {
        let x = signed(a, dtype);
        let y = signed(b, dtype);
        if comptime!(reduction == Reduction::Max) {
            if y > x {
                out = b;
            }
        } else if y < x {
            out = b;
        }
    } else if comptime!(reduction == Reduction::Max) {
        if b > a {
            out = b;
        }
    } else if b < a {
        out = b;
    }
    out
}

/// The f32 value of float bits.
#[allow(unused_assignments)]
#[cube]
fn widen(bits: u32, #[comptime] dtype: DType) -> f32 {
    let mut x = 0.0f32;
    if comptime!(dtype == DType::F32) {
        x = f32::reinterpret(bits);
    } else if comptime!(dtype == DType::BF16) {
        x = f32::reinterpret(bits << 16u32);
    } else {
        x = f16_to_f32(bits);
    }
    x
}

/// The value of signed integer bits, sign-extended (wrapping u32 arithmetic: (b ^ m) - m).
#[allow(unused_assignments)]
#[cube]
fn signed(bits: u32, #[comptime] dtype: DType) -> i32 {
    let mut x = 0i32;
    if comptime!(dtype == DType::I8) {
        x = i32::reinterpret((bits ^ 0x80u32) - 0x80u32);
    } else if comptime!(dtype == DType::I16) {
        x = i32::reinterpret((bits ^ 0x8000u32) - 0x8000u32);
    } else {
        x = i32::reinterpret(bits);
    }
    x
}

/// The buffers of one scatter launch.
pub(crate) struct ScatterBuffers<'a> {
    pub updates: &'a Handle,
    pub keys: &'a Handle,
    pub starts: &'a Handle,
    pub members: &'a Handle,
    pub dest: &'a Handle,
}

/// Which variant of the grouped kernel `k` is (see `ScatterKernel::tag`).
pub(crate) fn tag(k: &ScatterKernelDesc) -> u64 {
    match k {
        // Lists that may hold an update of zeros (a folded gather's) take a variant.
        k if k.zero_members => 3,
        // Every run of a fresh buffer, none of it read (a gradient into zeros).
        k if k.into_zeros => 4,
        // Every run, an empty list's left as it is (lists grouped on the device).
        k if k.every_run => 5,
        _ => 0,
    }
}

/// Queues the scatter kernel over `groups` runs.
///
/// # Safety
/// The kernel reads `starts[..=groups]`, the members those name, the updates words each
/// member's run spans, and writes the destination words of each run: key `keys[g]`'s, or under
/// `k.every_run` (no key read) run `g` of `groups` lying back to back in the destination. The
/// caller built the lists for this kernel's plan and destination layout, and sized every buffer
/// to hold them: with `ScatterPlan::group` (so every key and member is an in-bounds run; a
/// fold's members name runs of its data, or are `ZERO_MEMBER` where `k.zero_members`, which
/// loads nothing; `ScatterGroups::every_run` its every-run starts), or on the device
/// (`scatter_grouping::queue`, whose members are positions' updates or zeros, and whose
/// starts the kernel clamps to `starts[groups]`, at most the members' words).
pub(crate) unsafe fn queue(
    client: &Client,
    k: &ScatterKernelDesc,
    groups: u32,
    b: ScatterBuffers<'_>,
) -> Queued {
    let status = launch::status(client);
    let words = |h: &Handle| h.size_in_used() as usize / 4;
    // Whole vectors only: every run lies in them (the plan's blocks are aligned vectors).
    let vectors = |h: &Handle| h.size_in_used() as usize / (4 * k.vector as usize);
    let k = for_runtime(k, super::tile_spread(client), launch::is_cpu(client));
    let tiles = k.run / k.tile;
    // On the CPU runtime, whole runs of up to 64 KiB per invocation where that leaves the
    // cores enough (as the row kernels' `cpu_retile`).
    let span = match launch::is_cpu(client) && !k.lane_words {
        true => super::cpu_retile(
            tiles,
            1,
            groups.saturating_mul(tiles),
            CPU_SPAN_WORDS / (k.tile * k.vector),
            |_| true,
        )
        .map_or(1, |(span, _)| span),
        false => 1,
    };
    // Dealt, the slots are a power of two at or above the runs (`dispatch_slots`): where they
    // and their invocations fit in `u32`, else the runs go undealt.
    let dealt = groups
        .checked_next_power_of_two()
        .map(|slots| slots.max(DEAL_MIN_SLOTS))
        .and_then(|slots| slots.checked_mul(tiles / span));
    let (k, invocations) = match (k.dealt, dealt) {
        (true, Some(invocations)) if groups > 0 => (k, invocations),
        _ => (ScatterKernelDesc { dealt: false, ..k }, groups.saturating_mul(tiles / span)),
    };
    let k = ScatterKernelDesc { span, ..k };
    unsafe {
        // SAFETY: (of the caller) the lists hold in-bounds runs of buffers this long; dealt,
        // each slot takes a distinct run below `groups` or none (`run_at`), so the kernel
        // reads and writes what it does undealt.
        scatter_kernel::launch_unchecked(
            client,
            launch::cube_count(client, invocations),
            launch::cube_dim(client),
            k.vector as usize,
            BufferArg::from_raw_parts(b.updates.clone(), vectors(b.updates)),
            BufferArg::from_raw_parts(b.keys.clone(), words(b.keys)),
            BufferArg::from_raw_parts(b.starts.clone(), words(b.starts)),
            BufferArg::from_raw_parts(b.members.clone(), words(b.members)),
            BufferArg::from_raw_parts(b.dest.clone(), vectors(b.dest)),
            BufferArg::from_raw_parts(status.clone(), 2),
            groups,
            k.clone(),
        );
    }
    Queued::new(status)
}

/// `k` as a runtime takes it. On GPUs (`gpu`: where tiles spread) a tile's units spread
/// through the run and, where lists are reduced, a tile is one unit and its members' updates
/// are loaded `GPU_BATCH` at a time: an embedding's frequent id has a list of thousands,
/// which the few invocations of its row otherwise walk one load after another (measured on an
/// H200, 2026-11-27: the row's 64 invocations took 0.8 ms). On lavapipe (neither a GPU nor
/// the CPU runtime, `cpu`) runs are dealt over the dispatch: its thread pool hands each
/// thread one contiguous block of workgroups (Mesa's `lp_cs_tpool`: `iter_per_thread =
/// num_iters / num_threads`), so in key order the block with an embedding's frequent ids
/// took most of the work (measured 2026-11-28, 16384 Zipf ids: 21.6-28.1 ms, against
/// 17.4-17.9 ms with the same lists at permuted ids). The CPU runtime gives a cube's units to
/// different threads, which interleaves runs already. Elsewhere `k` as core made it.
fn for_runtime(k: &ScatterKernelDesc, gpu: bool, cpu: bool) -> ScatterKernelDesc {
    let batched = gpu && !k.lane_words && k.reduction != Reduction::None;
    match batched {
        true => ScatterKernelDesc { spread: true, tile: 1, batch: GPU_BATCH, ..k.clone() },
        false => ScatterKernelDesc { spread: gpu, dealt: !gpu && !cpu, ..k.clone() },
    }
}

/// Members whose updates a GPU invocation loads before combining them (`batch`): 8 vectors of
/// 16 bytes in flight, 32 registers.
const GPU_BATCH: u32 = 8;

/// The most 32-bit words one invocation applies its list to on CubeCL's CPU runtime (64 KiB,
/// as the row kernels' tiles there).
const CPU_SPAN_WORDS: u32 = 16384;

/// The scatter kernel's definition for `k`, as its launcher specializes it (for `explain`; tiles
/// as `offline_tile_spread` says).
pub(crate) fn definition(k: &ScatterKernelDesc) -> KernelDefinition {
    let k = &for_runtime(k, super::offline_tile_spread(), false);
    offline_definition!(
        scatter_kernel::ScatterKernel,
        buffers[updates keys starts members dest status],
        (),
        k.vector as usize,
        k.clone(),
    )
}
