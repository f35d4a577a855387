//! The row walk's descriptors, run on the host: a model of `rows_kernel` executes each
//! descriptor word by word and must agree with the naive reference on random gathers and slices,
//! with tiles taken consecutively and spread. No device is needed, so the trickiest pure logic
//! (merging dimensions, line widths, alignment, tiles, groups, transposed blocks) is checked
//! everywhere, and every kind of row access must appear in the corpus. One test
//! (`the_host_model_is_the_kernel`) also runs the kernel on the device with the same inputs and
//! asserts the same words, so the model cannot drift from what it models.

use crate::common::chains::{self, Staged};
use crate::common::generate::{self, Rng};
use crate::common::reference::{self as r, Outcome};
use std::collections::BTreeSet;
use stridex::core::kernel::{GatherKernelDesc, IndexRead, RowAccess, RowWalk, SliceKernelDesc, Walk};
use stridex::core::{ChainKernelDesc, ChainPlan};
use stridex::cubecl::client::Client;
use stridex::{DType, Error, GatherDesc, IndexType, OutOfRange};

/// The value of an index, as the rule sets read it (two words for 64-bit types).
fn index_value(indices: &[u32], at: usize, r: &IndexRead) -> i128 {
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
fn index_of(indices: &[u32], at: usize, r: &IndexRead) -> (bool, usize) {
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
fn times(x: usize, c: i64) -> u32 {
    (x as u32).wrapping_mul(c as u32)
}

/// Runs `w` as `rows_kernel` does, word by word, with index buffers `indices` (by buffer
/// number); returns whether the error flag was raised.
fn run_rows(w: &RowWalk, data: &[u32], indices: &[&[u32]], out: &mut [u32]) -> bool {
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
        flagged |= w.reads.len() == 1 && w.reads[0].index.policy == OutOfRange::Error && !all_ok;
    }
    flagged
}

fn words(bytes: &[u8], n: usize) -> Vec<u32> {
    let mut b = bytes.to_vec();
    b.resize((n * 4).max(b.len().div_ceil(4) * 4), 0);
    b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// An element as its bytes: the reference runs on these, so one model serves every dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Elem<const N: usize>([u8; N]);

impl<const N: usize> Default for Elem<N> {
    fn default() -> Self {
        Elem([0; N])
    }
}

fn elements<const N: usize>(buffer: &[u8]) -> Vec<Elem<N>> {
    buffer.chunks_exact(N).map(|c| Elem(c.try_into().unwrap())).collect()
}

fn concat<const N: usize>(buffer: &[Elem<N>]) -> Vec<u8> {
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
fn kind(w: &RowWalk) -> String {
    let group = match (w.access, w.group) {
        (RowAccess::Elements, Some(_)) => " grouped",
        _ => "",
    };
    format!("{:?}{group} ({} lanes, {} words)", w.access, w.lanes, w.elem_words)
}

fn check_gather<const N: usize>(
    case: &generate::GatherCase,
    rng: &mut Rng,
    seen: &mut BTreeSet<String>,
    device: Option<&Client>,
) -> Result<bool, String> {
    let re = &case.reference;
    let plan = case.desc.plan().map_err(|e| format!("{e}"))?;
    let Some(k) = GatherKernelDesc::new(&plan) else { return Ok(false) };
    let Walk::Rows(w) = &k.walk else { return Ok(false) };
    seen.insert(kind(w));
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
    let data = words(&data_bytes, w.src_words as usize);
    let indices = words(&index_bytes, 1);
    if let Some(client) = device {
        let mut model = vec![0u32; w.out_words as usize];
        let flagged = run_rows(w, &data, &[&indices], &mut model);
        let (kernel, raised) =
            on_device_gather(client, case.desc, plan.index_type, &data, &indices, model.len())?;
        if kernel != model || raised != flagged {
            return Err(format!(
                "{:?}\n{w:?}\nkernel {kernel:?} (flag {raised})\nhost model {model:?} (flag {flagged})",
                case.desc
            ));
        }
    }
    for spread in [false, true] {
        let walk = RowWalk { spread, ..w.clone() };
        let mut out = vec![0u32; w.out_words as usize];
        let flagged = run_rows(&walk, &data, &[&indices], &mut out);
        match re.run(&elements::<N>(&data_bytes), &values) {
            Outcome::Ok { buffer, .. } => {
                let got = &bytes(&out)[..buffer.len() * N];
                if flagged || got != concat(&buffer) {
                    return Err(format!(
                        "{:?}\n{walk:?}\ngot {got:?}\nreference {:?}",
                        case.desc,
                        concat(&buffer)
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

fn check_slice<const N: usize>(
    case: &generate::SliceCase,
    rng: &mut Rng,
    seen: &mut BTreeSet<String>,
    device: Option<&Client>,
) -> Result<bool, String> {
    let re = &case.reference;
    let plan = case.desc.plan().map_err(|e| format!("{e}"))?;
    let Some(k) = SliceKernelDesc::new(&plan) else { return Ok(false) };
    let Walk::Rows(w) = &k.walk else { return Ok(false) };
    seen.insert(kind(w));
    let input_bytes = rng.bytes(r::min_len(&re.sizes, &re.strides) * N);
    let data = words(&input_bytes, w.src_words as usize);
    if let Some(client) = device {
        let mut model = vec![0u32; w.out_words as usize];
        run_rows(w, &data, &[], &mut model);
        let op = stridex::SliceOp::<u8>::__from_checked(case.desc);
        let kernel =
            on_device(client, model.len(), &[&data], |inputs, out| op.launch(client, inputs[0], out))?.0;
        if kernel != model {
            return Err(format!("{:?}\n{w:?}\nkernel {kernel:?}\nhost model {model:?}", case.desc));
        }
    }
    let (_, buffer) = re.run(&elements::<N>(&input_bytes));
    for spread in [false, true] {
        let walk = RowWalk { spread, ..w.clone() };
        let mut out = vec![0u32; w.out_words as usize];
        run_rows(&walk, &data, &[], &mut out);
        let got = &bytes(&out)[..buffer.len() * N];
        if got != concat(&buffer) {
            return Err(format!("{:?}\n{walk:?}\ngot {got:?}\nreference {:?}", case.desc, concat(&buffer)));
        }
    }
    Ok(true)
}

/// The fewest random gathers (and slices) of 6000 that must take the row walk, so that the host
/// model is exercised (measured: 3722 gathers and 4020 slices).
const ROWS_CHECKED: usize = 3000;

#[test]
fn row_walks_match_the_reference() {
    let mut seen = BTreeSet::new();
    // Cases that took the row walk, so the host model ran: gathers, slices.
    let mut rows = (0, 0);
    for seed in 0..6000u64 {
        let mut rng = Rng::new(seed);
        let case = generate::gather_case(&mut rng, &DType::ALL);
        rows.0 += usize::from(
            by_size!(case.desc.data.dtype.size(), check_gather(&case, &mut rng, &mut seen, None)).unwrap(),
        );
        let mut rng = Rng::new(seed ^ 0x5eed);
        let case = generate::slice_case(&mut rng, &DType::ALL);
        rows.1 += usize::from(
            by_size!(case.desc.input.dtype.size(), check_slice(&case, &mut rng, &mut seen, None)).unwrap(),
        );
    }
    eprintln!("row walks checked: {} gathers, {} slices of 6000 each", rows.0, rows.1);
    assert!(rows.0 >= ROWS_CHECKED && rows.1 >= ROWS_CHECKED, "too few row walks checked: {rows:?}");
    let mut rng = Rng::new(7);
    for case in generate::channels_last_slices() {
        by_size!(case.desc.input.dtype.size(), check_slice(&case, &mut rng, &mut seen, None)).unwrap();
    }
    for must in [
        "Lines (1 lanes, 1 words)",
        "Lines (1 lanes, 2 words)",
        "Lines (2 lanes, 1 words)",
        "Lines (4 lanes, 1 words)",
        "ReversedLines (1 lanes, 1 words)",
        "ReversedLines (1 lanes, 2 words)",
        "ReversedLines (2 lanes, 1 words)",
        "ReversedLines (4 lanes, 1 words)",
        "Elements (1 lanes, 1 words)",
        "Elements (1 lanes, 2 words)",
        "Elements (2 lanes, 1 words)",
        "Elements (4 lanes, 1 words)",
        "Elements grouped (1 lanes, 1 words)",
        "Transposed (1 lanes, 1 words)",
    ] {
        assert!(seen.contains(must), "no random descriptor took the row walk as {must}; seen: {seen:?}");
    }
}

fn check_chain<const N: usize>(case: &chains::ChainCase, plan: &ChainPlan, rng: &mut Rng, fused: &mut usize) {
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

/// Random chains of 2 to 4 stages, fused into one row walk and run on the host as the kernel
/// runs it, against the stages run one by one through the reference.
#[test]
fn fused_chains_match_the_stages_run_one_by_one() {
    let mut fused = 0;
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed);
        let case = chains::chain_case(&mut rng, &DType::ALL);
        let plan = case.desc.plan().unwrap_or_else(|e| panic!("{e}\n{:?}", case.desc));
        by_size!(case.dtype.size(), check_chain(&case, &plan, &mut rng, &mut fused));
    }
    // The others: an empty output (no kernel), an `error`-policy index out of range (the host
    // refuses the chain), or rows that are not whole 32-bit words (1- and 2-byte elements in
    // odd shapes; those chains run stage by stage).
    assert!(fused >= 1200, "only {fused} of 3000 chains fused");
}

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

/// The row walk's host model and the kernel it models, on the same random descriptors and
/// inputs: the output words and the out-of-range flag must be the same (so neither can drift
/// while the other still agrees with the reference).
#[test]
fn the_host_model_is_the_kernel() {
    let client = stridex::Device::default_device().expect("a device").client();
    let (mut gathers, mut slices) = (0, 0);
    for seed in 0..400u64 {
        let mut seen = BTreeSet::new();
        let mut rng = Rng::new(seed);
        let case = generate::gather_case(&mut rng, &DType::ALL);
        let ran =
            by_size!(case.desc.data.dtype.size(), check_gather(&case, &mut rng, &mut seen, Some(client)));
        gathers += usize::from(ran.unwrap());
        let mut rng = Rng::new(seed ^ 0x5eed);
        let case = generate::slice_case(&mut rng, &DType::ALL);
        let ran =
            by_size!(case.desc.input.dtype.size(), check_slice(&case, &mut rng, &mut seen, Some(client)));
        slices += usize::from(ran.unwrap());
    }
    eprintln!("host model against the kernel: {gathers} gathers, {slices} slices");
    assert!(gathers >= 150 && slices >= 150, "{gathers} gathers, {slices} slices took the row walk");
}
