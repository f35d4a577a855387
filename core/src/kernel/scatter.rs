//! The scatter kernel's constants: the free dimensions of a destination run (sizes, and the
//! strides of the updates and of the destination written), in kernel units, the element's
//! arithmetic and the reduction.

use crate::dtype::DType;
use crate::layout::TensorLayout;
use crate::rules::Reduction;
use crate::scatter::ScatterPlan;

/// One free dimension of a run, in kernel units (vectors of [`ScatterKernelDesc::vector`]
/// 32-bit words).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScatterDim {
    /// Units of the run after this dimension: the divisor of an invocation's place in its run.
    pub step: u32,
    pub updates_stride: u32,
    pub dest_stride: u32,
}

/// A scatter kernel, specialized on a plan and the layout it writes. With `S = run / tile /
/// span`, invocation `p` takes tiles `(p % S) * span ..` (`span` of them) of run `p / S`
/// ([`Self::dealt`]: of the run slot `p / S` is dealt); the run's list of updates is
/// a launch argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScatterKernelDesc {
    pub dims: Vec<ScatterDim>,
    /// Units per run.
    pub run: u32,
    /// 32-bit words per unit: 4 (128 bits) where every run is whole, aligned 16-byte blocks in
    /// the updates and the destination, else 2 (8-byte blocks, or one 64-bit element), else 1.
    pub vector: u32,
    /// Units one invocation applies its run's list to (4, 2 or 1; a divisor of `inner`):
    /// where the innermost free dimension is packed in both buffers and whole tiles long, each
    /// member's offset is read once per tile, not once per unit.
    pub tile: u32,
    /// Units of the innermost free dimension, the one a tile lies in (`run` where there is one
    /// free dimension).
    pub inner: u32,
    /// Whether a tile's units are spread through the innermost dimension (`inner / tile`
    /// apart, so that neighbouring invocations take neighbouring units: what a GPU coalesces)
    /// rather than consecutive (what a CPU thread's SIMD lanes take best). The backend sets it
    /// per runtime, as for the row kernels' tiles.
    pub spread: bool,
    /// Consecutive tiles of one run an invocation applies, one after another (a divisor of
    /// `run / tile`): 1, but on CubeCL's CPU runtime, where an invocation costs far more than
    /// on a GPU or lavapipe. The backend sets it per runtime.
    pub span: u32,
    /// Members whose updates an invocation loads before it combines them, still one after
    /// another in the list's order (the same bits): 1, but on GPUs, where a long list (an
    /// embedding's frequent id) otherwise waits on one load per member. The backend sets it
    /// per runtime.
    pub batch: u32,
    /// Runs are dealt over the dispatch rather than laid in its order: over a power of two of
    /// slots, slot `q` takes the run whose bits are `q`'s reversed. A runtime that hands each
    /// thread one contiguous block of the dispatch (lavapipe) then gives every thread every
    /// T-th run of the key order, where in key order one thread would take an embedding's
    /// frequent ids, the longest lists, alone. The backend sets it per runtime.
    pub dealt: bool,
    /// Elements per word: 4 (8-bit), 2 (16-bit) or 1.
    pub lanes: u32,
    /// 32-bit words per offset of the runs' lists (`ScatterGroups`): 2 for 64-bit elements,
    /// else 1.
    pub words: u32,
    /// 8- and 16-bit elements written one by one ([`ScatterPlan::lane_words`]): a "run" is a
    /// destination word, and each member names an updates element and its lane in the word.
    pub lane_words: bool,
    pub dtype: DType,
    /// What the kernel computes: bool's `add` and `mul` are `max` and `min` of 0 and 1 (NumPy's
    /// `or` and `and`, which ONNX's reference uses); `mean` adds (then [`Self::mean`] divides).
    pub reduction: Reduction,
    /// The sum is divided by how many values it holds: the updates, and the data's element
    /// where [`Self::use_init_val`].
    pub mean: bool,
    /// A reduction starts from the destination's element; else from the run's first update.
    pub use_init_val: bool,
    /// A member may be [`ZERO_MEMBER`]: an update of zeros that no buffer holds (a folded
    /// gather's index out of range under `zero`, `GatheredRows`). Off for every op's own
    /// lists.
    pub zero_members: bool,
    /// The kernel sums into zeros: it writes every run of a fresh destination, run `g` at
    /// unit `g * run` (the runs lie back to back: `ScatterPlan::back_to_back_runs`), each the
    /// sum of its list starting from zero (a run with an empty list becomes zeros), and never
    /// reads the destination. Its lists are `ScatterGroups::every_run`'s starts (`keys` go
    /// unread). Only for a reduction `add` with `use_init_val`: a gather's gradient, which then
    /// needs no zero fill. Off for every op's own lists.
    pub into_zeros: bool,
    /// The lists are every run's ([`ScatterGroups::every_run`]'s, or the device grouping's,
    /// [`super::ScatterGroupingDesc`]): run `g` is at unit `g * run` (the runs lie back to back)
    /// and `keys` go unread. A run whose list is empty is left as it is (`into_zeros`: written
    /// as zeros). Set with `into_zeros`, and for a grouping on the device.
    ///
    /// [`ScatterGroups::every_run`]: crate::ScatterGroups::every_run
    pub every_run: bool,
}

/// The member that stands for an update of zeros where [`ScatterKernelDesc::zero_members`]:
/// never an offset, since a run starts below the last element (the plan keeps every tensor's
/// elements below 2^32).
pub const ZERO_MEMBER: u32 = u32::MAX;

impl ScatterKernelDesc {
    /// The kernel that sums `plan`'s updates into zeros of `dest` ([`Self::into_zeros`]), with
    /// the number of runs it writes, where `plan` is a sum that starts from the data's element
    /// (a gather's gradient) and its runs lie back to back in `dest`
    /// ([`ScatterPlan::back_to_back_runs`]), covering its words exactly: else `None`, and the
    /// sum needs a zero fill first, since the kernel would leave some of a fresh buffer
    /// unwritten.
    pub fn summing_into_zeros(plan: &ScatterPlan, dest: &TensorLayout) -> Option<(ScatterKernelDesc, usize)> {
        if plan.reduction != Reduction::Add || !plan.use_init_val {
            return None;
        }
        let runs = plan.back_to_back_runs(dest)?;
        let k = ScatterKernelDesc::of(plan, dest)?;
        let words = (dest.min_buffer_len()? * plan.data_type().size()).div_ceil(4);
        let covered = runs.checked_mul(k.run as usize * k.vector as usize) == Some(words);
        covered.then_some((ScatterKernelDesc { into_zeros: true, every_run: true, ..k }, runs))
    }

    /// The kernel of `plan` writing `dest` (the packed output, or the data in place); `None`
    /// when a run is empty (nothing is written) or, in an empty tensor, longer than a 32-bit
    /// count (its sizes multiply past that).
    pub fn of(plan: &ScatterPlan, dest: &TensorLayout) -> Option<ScatterKernelDesc> {
        let run = plan.run_len();
        if run == 0 || u32::try_from(run).is_err() {
            return None;
        }
        let dtype = plan.data_type();
        let reduction = match (dtype, plan.reduction) {
            (DType::Bool, Reduction::Add) => Reduction::Max,
            (DType::Bool, Reduction::Mul) => Reduction::Min,
            (_, Reduction::Mean) => Reduction::Add,
            (_, r) => r,
        };
        let (mean, use_init_val) = (plan.reduction == Reduction::Mean, plan.use_init_val);
        let elem = dtype.size();
        let words = elem.div_ceil(4);
        let lanes = plan.lanes() as u32;
        if plan.lane_words() {
            // One destination word per invocation; the members say which element.
            let (dims, run, vector, words, lane_words) = (Vec::new(), 1, 1, 1, true);
            return Some(ScatterKernelDesc {
                dims,
                run,
                vector,
                tile: 1,
                inner: 1,
                spread: false,
                span: 1,
                batch: 1,
                dealt: false,
                lanes,
                words,
                lane_words,
                dtype,
                reduction,
                mean,
                use_init_val,
                zero_members: false,
                into_zeros: false,
                every_run: false,
            });
        }
        // The widest vector whose blocks every run is made of: one invocation moves 16 bytes
        // where it can (a device moves words fastest that way), never less than an element.
        let vector = [4, 2, 1]
            .into_iter()
            .filter(|&v| v >= words)
            .find(|&v| plan.runs_in_blocks(dest, v * 4 / elem).is_ok())
            .unwrap_or(words);
        // Elements per unit; `run` is a multiple of it (the innermost free size is, or it is 1).
        let block = (vector * 4 / elem).max(1);
        let mut step = run / block;
        // Every step divides the run (below 2^32, above); a stride is below the elements of
        // its tensor's buffer, which the plan keeps below 2^32 where the tensor holds any.
        let word = |n: usize| u32::try_from(n).ok();
        let dims = plan
            .free_strides(dest)
            .map(|(size, updates, dest)| {
                // Blocks of more than one element: every stride is whole blocks but the
                // innermost, packed one (whose size is whole blocks).
                step = if dest == 1 && updates == 1 { step / (size / block).max(1) } else { step / size };
                let unit = |s: usize| if s == 1 { Some(1) } else { word(s / block) };
                Some(ScatterDim {
                    step: word(step)?,
                    updates_stride: unit(updates)?,
                    dest_stride: unit(dest)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let run = word(run / block)?;
        let (tile, inner) = tile_of(&dims, run);
        Some(ScatterKernelDesc {
            tile,
            inner,
            spread: false,
            span: 1,
            batch: 1,
            dealt: false,
            dims,
            run,
            vector: vector as u32,
            lanes,
            words: words as u32,
            lane_words: false,
            dtype,
            reduction,
            mean,
            use_init_val,
            zero_members: false,
            into_zeros: false,
            every_run: false,
        })
    }
}

/// The widest tile (4 or 2 units, else 1) that lies in the innermost free dimension of a run
/// when it is packed in the updates and the destination, and that dimension's units: a tile's
/// units are at consecutive addresses in both, or equally spaced, and never cross into the
/// next row of that dimension.
fn tile_of(dims: &[ScatterDim], run: u32) -> (u32, u32) {
    let Some((last, outer)) = dims.split_last() else { return (1, run) };
    // Units of the innermost dimension: the step of the one outside it (the run's, if none).
    let inner = outer.last().map_or(run, |d| d.step);
    if (last.step, last.updates_stride, last.dest_stride) != (1, 1, 1) {
        return (1, inner);
    }
    ([4, 2].into_iter().find(|t| inner % t == 0).unwrap_or(1), inner)
}
