//! The row walk's host model: `rows_kernel` executed word by word on the host, for any
//! descriptor, and the checks that run it against the naive reference on random gathers, slices
//! and fused chains. Core's own tests run it (`core/tests/walks.rs`); the integration suite also
//! runs the kernel itself on the same inputs (`tests/suite/walks.rs`), so the model cannot drift
//! from what it models.

use super::chains::{self, Staged};
use super::generate::{self, Rng};
use super::reference::{self as r, Outcome};
use std::collections::BTreeSet;
use stridex_core::kernel::{
    GatherKernelDesc, IndexRead, MoveDesc, RowAccess, RowWalk, SliceKernelDesc, Walk, WalkChoice,
};
use stridex_core::{ChainKernelDesc, ChainPlan, IndexType, OutOfRange};

/// The device side of a check, where there is one: given the inputs' words, the host model's
/// output words and whether it flagged an index out of range, it runs the kernel on the same
/// inputs and says how they differ.
pub type OnDevice<'a> = &'a mut dyn FnMut(&[&[u32]], &[u32], bool) -> Result<(), String>;

/// The value of an index, as the rule sets read it (two words for 64-bit types).
pub fn index_value(indices: &[u32], at: usize, r: &IndexRead) -> i128 {
    let lo = indices[at];
    match r.index_type {
        IndexType::I32 => lo as i32 as i128,
        IndexType::U32 => lo as i128,
        IndexType::I64 => (((indices[at + 1] as u64) << 32) | lo as u64) as i64 as i128,
        IndexType::U64 => (((indices[at + 1] as u64) << 32) | lo as u64) as i128,
    }
}

/// The out-of-range policies (docs/rules.md, `policy-range` and after): whether the index at `at` is in range (always, under `clamp`) and
/// its value normalized into the axis (0 when out of range: an in-bounds read).
pub fn index_of(indices: &[u32], at: usize, r: &IndexRead) -> (bool, usize) {
    let s = r.axis_size as i128;
    let v = index_value(indices, at, r);
    let ok = -s <= v && v < s;
    let normalized = if v < 0 { v + s } else { v };
    match (ok, r.policy) {
        (true, _) => (true, normalized as usize),
        // An empty axis has nothing to clamp to: the element is zero.
        (false, OutOfRange::Clamp) if s > 0 => (true, normalized.clamp(0, s - 1) as usize),
        (false, _) => (false, 0),
    }
}

/// `x * c` in wrapping 32-bit arithmetic (a negative coefficient is its two's complement).
pub fn times(x: usize, c: i64) -> u32 {
    (x as u32).wrapping_mul(c as u32)
}

/// Runs `w` as `rows_kernel` does, word by word, with index buffers `indices` (by buffer
/// number); returns whether the error flag was raised.
pub fn run_rows(w: &RowWalk, data: &[u32], indices: &[&[u32]], out: &mut [u32]) -> bool {
    // The kernel's comptime switches: the source bound as vectors of whole lines for line
    // access and of single words for element access, and the per-element read loop only
    // where a read is per element.
    assert_eq!(w.src_line(), if w.access == RowAccess::Elements { 1 } else { w.line }, "{w:?}");
    assert_eq!(w.reads_per_element(), w.reads.iter().any(|r| r.per_element), "{w:?}");
    let line = w.line as usize;
    let ni = w.src_line() as usize;
    let tiles = (w.row_lines / w.tile) as usize;
    let lanes = w.lanes as usize;
    let per_line = w.line_elems() as usize;
    let read_elem = |at: usize| -> (u32, u32) {
        assert!(
            (at * w.elem_words as usize + w.elem_words as usize - 1) / lanes < data.len(),
            "element {at} past the source's {} words: {w:?}",
            data.len()
        );
        match (w.elem_words, lanes) {
            (2, _) => (data[2 * at], data[2 * at + 1]),
            (_, 1) => (data[at], 0),
            _ => {
                let bits = 32 / lanes;
                ((data[at / lanes] >> ((at % lanes) * bits)) & ((1u64 << bits) - 1) as u32, 0)
            }
        }
    };
    let read =
        |j: usize, at: u32| index_of(indices[w.reads[j].buffer as usize], at as usize, &w.reads[j].index);
    let mut flagged = false;
    for pos in 0..w.invocations as usize {
        // Row coordinates, innermost first; offsets in wrapping 32-bit arithmetic.
        let (mut rem, mut out_row) = (pos / tiles, 0usize);
        let mut src = w.base as u32;
        let mut ats: Vec<u32> = w.reads.iter().map(|r| r.base as u32).collect();
        for (i, d) in w.outer.iter().enumerate().rev() {
            let c = if i == 0 { rem } else { rem % d.size as usize };
            rem /= d.size as usize;
            out_row += c * d.out_stride as usize;
            src = src.wrapping_add(times(c, d.src));
            for (j, at) in ats.iter_mut().enumerate() {
                *at = at.wrapping_add(times(c, d.reads[j]));
            }
        }
        let mut first = pos % tiles;
        if !w.spread {
            first *= w.tile as usize;
        }
        // The row's reads, in order: `vals` holds their values.
        let mut ok = true;
        let mut vals = vec![0u32; w.reads.len()];
        for (j, r) in w.reads.iter().enumerate() {
            if r.per_element {
                continue;
            }
            let mut at = ats[j];
            for (i, &v) in vals.iter().enumerate().take(j) {
                at = at.wrapping_add(times(v as usize, r.deps[i]));
            }
            let (in_range, v) = read(j, at);
            vals[j] = v as u32;
            ok &= in_range;
            src = src.wrapping_add(times(v, r.data));
        }
        let mut all_ok = ok;
        for j in 0..w.tile as usize {
            let u = first + if w.spread { j * tiles } else { j };
            match w.access {
                RowAccess::Lines | RowAccess::ReversedLines => {
                    let at = if w.access == RowAccess::Lines {
                        src.wrapping_add(u as u32)
                    } else {
                        src.wrapping_sub(u as u32)
                    };
                    let at = at as usize;
                    let x = &data[at * ni..at * ni + line];
                    for c in 0..line {
                        let word = match (w.access, w.elem_words, lanes) {
                            (RowAccess::Lines, _, _) => x[c],
                            (_, 2, _) => x[(line / 2 - 1 - c / 2) * 2 + c % 2],
                            (_, _, 1) => x[line - 1 - c],
                            (_, _, 2) => x[line - 1 - c].rotate_left(16),
                            _ => x[line - 1 - c].swap_bytes(),
                        };
                        out[(out_row + u) * line + c] = if ok { word } else { 0 };
                    }
                }
                RowAccess::SteppedLines => {
                    // The window of `step` lines, forwards from line `src + u * step` or
                    // backwards down from line `src - u * step`.
                    let step = w.elem_stride.unsigned_abs() as usize;
                    let (e, ew) = (per_line, w.elem_words as usize);
                    let window = (u * step) as u32;
                    let mut v = vec![0u32; line];
                    for k in 0..e {
                        // Element `k`'s line in the window (counted away from its first) and its
                        // element within that line.
                        let (back, elem) = if w.elem_stride > 0 {
                            ((k * step) / e, (k * step) % e)
                        } else {
                            let r = e as i64 - 1 - (k * step) as i64;
                            let back = if r >= 0 { 0 } else { (-r + e as i64 - 1) / e as i64 };
                            (back as usize, (r + back * e as i64) as usize)
                        };
                        let at = if w.elem_stride > 0 {
                            src.wrapping_add(window).wrapping_add(back as u32)
                        } else {
                            src.wrapping_sub(window).wrapping_sub(back as u32)
                        } as usize;
                        assert!(at * ni + line <= w.src_words as usize, "line {at} past the source: {w:?}");
                        let x = &data[at * ni..at * ni + line];
                        if lanes == 1 {
                            v[k * ew..k * ew + ew].copy_from_slice(&x[elem * ew..elem * ew + ew]);
                        } else {
                            let bits = 32 / lanes;
                            let lane =
                                (x[elem / lanes] >> ((elem % lanes) * bits)) & ((1u64 << bits) - 1) as u32;
                            v[k / lanes] |= lane << ((k % lanes) * bits);
                        }
                    }
                    for (c, word) in v.into_iter().enumerate() {
                        out[(out_row + u) * line + c] = if ok { word } else { 0 };
                    }
                }
                RowAccess::Transposed => {
                    let g = w.group.expect("transposed blocks have a group");
                    for row in 0..g.rows as usize {
                        for e in 0..4 {
                            let at = src.wrapping_add(times(4 * u + e, w.elem_stride)) as usize + row / 4;
                            out[(out_row + u + row * g.out_stride as usize) * 4 + e] = data[at * 4 + row % 4];
                        }
                    }
                }
                RowAccess::Elements => {
                    let group = w.group.map_or(1, |g| g.rows as usize);
                    for row in 0..group {
                        let (mut row_src, mut o) = (src, out_row + u);
                        if let Some(g) = w.group {
                            row_src = row_src.wrapping_add(times(row, g.src));
                            o += row * g.out_stride as usize;
                        }
                        let mut v = vec![0u32; line];
                        for k in 0..per_line {
                            let e = u * per_line + k;
                            let mut at_elem = row_src.wrapping_add(times(e, w.elem_stride));
                            let mut elem_ok = ok;
                            let mut elem_vals = vals.clone();
                            for (j, r) in w.reads.iter().enumerate() {
                                if !r.per_element {
                                    continue;
                                }
                                let mut at = ats[j].wrapping_add(times(e, r.elem));
                                for (i, &v) in elem_vals.iter().enumerate().take(j) {
                                    at = at.wrapping_add(times(v as usize, r.deps[i]));
                                }
                                let (in_range, value) = read(j, at);
                                elem_vals[j] = value as u32;
                                elem_ok &= in_range;
                                at_elem = at_elem.wrapping_add(times(value, r.data));
                            }
                            all_ok &= elem_ok;
                            let (x, y) = if elem_ok { read_elem(at_elem as usize) } else { (0, 0) };
                            if w.elem_words == 2 {
                                (v[2 * k], v[2 * k + 1]) = (x, y);
                            } else {
                                v[k / lanes] |= x << ((k % lanes) * (32 / lanes));
                            }
                        }
                        out[o * line..o * line + line].copy_from_slice(&v);
                    }
                }
            }
        }
        // A single gather's reads are all of one stage (one, or a GatherND tuple's).
        let single = !w.reads.is_empty() && w.reads.iter().all(|r| r.stage == w.reads[0].stage);
        flagged |= single && w.reads[0].index.policy == OutOfRange::Error && !all_ok;
    }
    flagged
}

/// Runs `m` as `gather_kernel` (with `reads`: one, or a GatherND tuple's) or `slice_kernel`
/// (none) do, invocation by
/// invocation: specialized on `m.specialized()` and launched with `m.invocations` and
/// `m.out_slots` as the `limit` and `slots` arguments; returns whether the error flag was
/// raised. Every word it reads or writes is checked against the lengths the launch gives the
/// kernel (`src_words`, `out_words`, the indices' length), as the kernel runs unchecked.
pub fn run_slots(m: &MoveDesc, reads: &[IndexRead], data: &[u32], indices: &[u32], out: &mut [u32]) -> bool {
    let k = m.specialized();
    let (limit, slots) = (m.invocations as usize, m.out_slots as usize);
    let (line, lanes) = (k.line as usize, k.lanes as usize);
    assert!(lanes == 1 || line == 1, "{m:?}");
    assert!(data.len() >= m.src_words as usize && out.len() >= m.out_words as usize, "{m:?}");
    // The kernel's `locate`: whether the slot is an element, its forward source sum and the
    // second sum (backward source steps of a slice, the index word of a gather).
    let locate = |slot: usize| -> (bool, usize, usize) {
        let mut valid = !k.check_total || slot < if k.dynamic { slots } else { k.out_slots as usize };
        let (mut rem, mut forward, mut second) = (slot, k.base as usize, 0usize);
        for d in &k.dims {
            if d.check || d.src_stride != 0 || d.index_stride != 0 {
                let c = if d.out_stride == 1 { rem } else { rem / d.out_stride as usize };
                valid &= !d.check || c < d.size as usize;
                if d.src_backwards {
                    second += c * d.src_stride as usize;
                } else {
                    forward += c * d.src_stride as usize;
                }
                second += c * d.index_stride as usize;
            }
            if d.out_stride != 1 {
                rem %= d.out_stride as usize;
            }
        }
        (valid && (!k.check_rem || rem == 0), forward, second)
    };
    let mut flagged = false;
    // The source unit a valid slot reads, or `None` for an index out of range (a zero).
    let mut source = |forward: usize, second: usize| -> Option<usize> {
        if reads.is_empty() {
            return Some(forward - second);
        }
        let mut all_ok = true;
        let mut unit = forward;
        for r in reads {
            let at = second + r.offset as usize;
            assert!(at + r.index_words as usize <= indices.len(), "index word {at} past the indices: {m:?}");
            let (ok, v) = index_of(indices, at, r);
            flagged |= !ok && r.policy == OutOfRange::Error;
            all_ok &= ok;
            unit += v * r.axis_stride as usize;
        }
        all_ok.then_some(unit)
    };
    // The grid covers whole cubes: invocations past the work do nothing.
    let started = |pos: usize| pos < if k.dynamic { limit } else { k.invocations as usize };
    for pos in (0..limit + 64).filter(|&p| started(p)) {
        assert!((pos + 1) * line <= m.out_words as usize, "output word {pos} past the output: {m:?}");
        if lanes == 1 {
            let (valid, forward, second) = locate(pos);
            if !valid {
                continue;
            }
            let mut v = vec![0u32; line];
            if let Some(unit) = source(forward, second) {
                assert!(
                    (unit + 1) * line <= m.src_words as usize,
                    "source unit {unit} past the source: {m:?}"
                );
                v.copy_from_slice(&data[unit * line..unit * line + line]);
            }
            out[pos * line..pos * line + line].copy_from_slice(&v);
        } else {
            let bits = 32 / lanes;
            let mut word = 0u32;
            for lane in 0..lanes {
                let (valid, forward, second) = locate(pos * lanes + lane);
                if let Some(elem) = valid.then(|| source(forward, second)).flatten() {
                    assert!(
                        elem / lanes < m.src_words as usize,
                        "source element {elem} past the source: {m:?}"
                    );
                    let v = (data[elem / lanes] >> ((elem % lanes) * bits)) & ((1u64 << bits) - 1) as u32;
                    word |= v << (lane * bits);
                }
            }
            out[pos] = word;
        }
    }
    flagged
}

/// Runs either walk on the host: `reads` are the slot walk's (a row walk carries its own).
pub fn run_walk(walk: &Walk, reads: &[IndexRead], data: &[u32], indices: &[&[u32]], out: &mut [u32]) -> bool {
    match walk {
        Walk::Rows(w) => run_rows(w, data, indices, out),
        Walk::Slots(m) => run_slots(m, reads, data, indices.first().copied().unwrap_or(&[]), out),
        // Only a chain that ends in `convert` takes it; the suite runs it on the device.
        Walk::Convert(_) => unreachable!("single ops take the row or slot walk"),
    }
}

pub fn words(bytes: &[u8], n: usize) -> Vec<u32> {
    let mut b = bytes.to_vec();
    b.resize((n * 4).max(b.len().div_ceil(4) * 4), 0);
    b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

pub fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// An element as its bytes: the reference runs on these, so one model serves every dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elem<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for Elem<N> {
    fn default() -> Self {
        Elem([0; N])
    }
}

pub fn elements<const N: usize>(buffer: &[u8]) -> Vec<Elem<N>> {
    buffer.chunks_exact(N).map(|c| Elem(c.try_into().unwrap())).collect()
}

pub fn concat<const N: usize>(buffer: &[Elem<N>]) -> Vec<u8> {
    buffer.iter().flat_map(|e| e.0).collect()
}

macro_rules! by_size {
    ($size:expr, $f:ident ( $($arg:expr),* )) => {
        match $size {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            4 => $f::<4>($($arg),*),
            _ => $f::<8>($($arg),*),
        }
    };
}

/// What a walk was, for the coverage check.
pub fn kind(walk: &Walk) -> String {
    match walk {
        Walk::Rows(w) => {
            let group = match (w.access, w.group) {
                (RowAccess::Elements, Some(_)) => " grouped",
                _ => "",
            };
            format!("{:?}{group} ({} lanes, {} words)", w.access, w.lanes, w.elem_words)
        }
        Walk::Slots(m) => {
            let padded = if m.check_rem { ", padded" } else { "" };
            format!("Slots ({} lanes, {} words{padded})", m.lanes, m.line)
        }
        Walk::Convert(c) => format!("Convert ({} -> {}, {} inner dims)", c.from, c.to, c.inner.len()),
    }
}

/// The walks the host runs for an op: the one it launches (a row walk with its tiles taken
/// consecutively and spread, and regrouped where it can be), and the slot walk, which takes any
/// layout.
fn walks_of(best: &Walk, slots: &Walk) -> Vec<Walk> {
    match best {
        Walk::Rows(w) => {
            let mut walks: Vec<Walk> =
                [false, true].map(|spread| Walk::Rows(RowWalk { spread, ..w.clone() })).into();
            // Larger groups, as the CPU runtime launches narrow walks with.
            walks.extend([4, 8].into_iter().filter_map(|rows| w.regroup(rows)).map(Walk::Rows));
            walks.push(slots.clone());
            walks
        }
        Walk::Slots(_) | Walk::Convert(_) => vec![best.clone()],
    }
}

/// Checks a random gather's walks on the host against the reference (and, given `device`, the
/// walk it launches against the kernel); `false` when its output is empty (no kernel).
pub fn check_gather<const N: usize>(
    case: &generate::GatherCase,
    rng: &mut Rng,
    seen: &mut BTreeSet<String>,
    device: Option<OnDevice>,
) -> Result<bool, String> {
    let re = &case.reference;
    let plan = case.desc.plan().map_err(|e| format!("{e}"))?;
    let Some(k) = GatherKernelDesc::new(&plan) else { return Ok(false) };
    let slots = GatherKernelDesc::with(&plan, WalkChoice::Slots).expect("a kernel for a non-empty output");
    let walks = walks_of(&k.walk, &slots.walk);
    seen.extend(walks.iter().map(kind));
    let data_bytes = rng.bytes(r::min_len(&re.data_sizes, &re.data_strides) * N);
    let index_len = r::min_len(&re.index_sizes, &re.index_strides);
    let wide = plan.index_type.words() == 2;
    let hostile = rng.chance(40);
    let values =
        generate::index_values(rng, index_len, re.data_sizes[re.axis()], re.signed_indices, wide, hostile);
    let index_bytes: Vec<u8> = values
        .iter()
        .flat_map(
            |&v| if wide { (v as i64).to_le_bytes().to_vec() } else { (v as i32).to_le_bytes().to_vec() },
        )
        .collect();
    let src_words = walks.iter().map(Walk::src_words).max().unwrap_or(0);
    let data = words(&data_bytes, src_words as usize);
    let indices = words(&index_bytes, 1);
    // The slot walk's index read is the op's; a row walk carries its own.
    let reads_of_walk = |walk: &Walk| if matches!(walk, Walk::Slots(_)) { &slots.reads } else { &k.reads };
    if let Some(device) = device {
        let mut model = vec![0u32; k.walk.out_words() as usize];
        let flagged = run_walk(&k.walk, &k.reads, &data, &[&indices], &mut model);
        device(&[&data, &indices], &model, flagged)
            .map_err(|e| format!("{:?}\n{:?}\n{e}", case.desc, k.walk))?;
    }
    let expected = re.run(&elements::<N>(&data_bytes), &values);
    for walk in &walks {
        let mut out = vec![0u32; walk.out_words() as usize];
        let flagged = run_walk(walk, reads_of_walk(walk), &data, &[&indices], &mut out);
        match &expected {
            Outcome::Ok { buffer, .. } => {
                let got = &bytes(&out)[..buffer.len() * N];
                if flagged || got != concat(buffer) {
                    return Err(format!(
                        "{:?}\n{walk:?}\ngot {got:?}\nreference {:?}",
                        case.desc,
                        concat(buffer)
                    ));
                }
            }
            Outcome::Err { .. } if !flagged => {
                return Err(format!("{:?}\n{walk:?}\nno error flagged", case.desc))
            }
            Outcome::Err { .. } => {}
        }
    }
    Ok(true)
}

/// [`check_gather`] for a random slice.
pub fn check_slice<const N: usize>(
    case: &generate::SliceCase,
    rng: &mut Rng,
    seen: &mut BTreeSet<String>,
    device: Option<OnDevice>,
) -> Result<bool, String> {
    let re = &case.reference;
    let plan = case.desc.plan().map_err(|e| format!("{e}"))?;
    let Some(k) = SliceKernelDesc::new(&plan) else { return Ok(false) };
    let slots = SliceKernelDesc::with(&plan, WalkChoice::Slots).expect("a kernel for a non-empty output");
    let walks = walks_of(&k.walk, &slots.walk);
    seen.extend(walks.iter().map(kind));
    let input_bytes = rng.bytes(r::min_len(&re.sizes, &re.strides) * N);
    let src_words = walks.iter().map(Walk::src_words).max().unwrap_or(0);
    let data = words(&input_bytes, src_words as usize);
    if let Some(device) = device {
        let mut model = vec![0u32; k.walk.out_words() as usize];
        let flagged = run_walk(&k.walk, &[], &data, &[], &mut model);
        device(&[&data], &model, flagged).map_err(|e| format!("{:?}\n{:?}\n{e}", case.desc, k.walk))?;
    }
    let (_, buffer) = re.run(&elements::<N>(&input_bytes));
    for walk in &walks {
        let mut out = vec![0u32; walk.out_words() as usize];
        run_walk(walk, &[], &data, &[], &mut out);
        let got = &bytes(&out)[..buffer.len() * N];
        if got != concat(&buffer) {
            return Err(format!("{:?}\n{walk:?}\ngot {got:?}\nreference {:?}", case.desc, concat(&buffer)));
        }
    }
    Ok(true)
}

pub fn check_chain<const N: usize>(
    case: &chains::ChainCase,
    plan: &ChainPlan,
    rng: &mut Rng,
    fused: &mut usize,
) {
    let Ok(Some(k)) = ChainKernelDesc::new(plan) else { return };
    let Walk::Rows(w) = &k.walk else { panic!("a fused chain takes the row walk") };
    let data_bytes = rng.bytes(r::min_len(&case.data_sizes, &case.data_strides) * N);
    // An `error`-policy index out of range fails the chain on the host (tests/suite/chains.rs).
    let Staged::Ok { shape, buffer } = case.staged(&elements::<N>(&data_bytes)) else { return };
    assert_eq!(plan.output.sizes.as_slice(), shape.as_slice(), "{:?}", case.desc);
    let buffers: Vec<Vec<u32>> = case.index_bytes().iter().map(|b| words(b, 1)).collect();
    let refs: Vec<&[u32]> = buffers.iter().map(Vec::as_slice).collect();
    let data = words(&data_bytes, w.src_words as usize);
    for spread in [false, true] {
        let walk = RowWalk { spread, ..w.clone() };
        let mut out = vec![0u32; w.out_words as usize];
        run_rows(&walk, &data, &refs, &mut out);
        let got = &bytes(&out)[..buffer.len() * N];
        assert_eq!(got, concat(&buffer).as_slice(), "{:?}\n{walk:?}", case.desc);
    }
    *fused += 1;
}
