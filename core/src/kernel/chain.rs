//! A chain's fused kernel: the chain walked back from its output, each slice composed into a
//! strided view and each gather turned into one index read whose position is affine in the
//! output coordinates and in the values of the reads after it.

use super::{ConvertWalk, Dim, IndexRead, MoveRead, Moves, RowWalk, Walk, MAX_READS};
use crate::chain::{ChainPlan, StagePlan};
use crate::error::Unfused;
use crate::MAX_RANK;

/// `constant + sum(coords[d] * c_d) + sum(values[j] * r_j)`: a position (coordinate or offset)
/// in terms of the final output's coordinates and the reads' values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Affine {
    constant: i64,
    coords: [i64; MAX_RANK],
    reads: [i64; MAX_READS],
}

impl Affine {
    fn constant(c: i64) -> Affine {
        Affine { constant: c, ..Affine::default() }
    }

    fn coord(d: usize) -> Affine {
        let mut a = Affine::default();
        a.coords[d] = 1;
        a
    }

    fn read(j: usize) -> Affine {
        let mut a = Affine::default();
        a.reads[j] = 1;
        a
    }

    /// `self * k`; `None` when a coefficient leaves `i64` (a huge step: no buffer a kernel
    /// addresses holds such offsets, and the chain then runs stage by stage).
    fn scaled(self, k: i64) -> Option<Affine> {
        let mut a = self;
        a.constant = a.constant.checked_mul(k)?;
        for c in a.coords.iter_mut().chain(a.reads.iter_mut()) {
            *c = c.checked_mul(k)?;
        }
        Some(a)
    }

    /// `self + o`; `None` when a coefficient leaves `i64`.
    fn plus(self, o: Affine) -> Option<Affine> {
        let mut a = self;
        a.constant = a.constant.checked_add(o.constant)?;
        for (c, d) in a.coords.iter_mut().zip(o.coords) {
            *c = c.checked_add(d)?;
        }
        for (r, q) in a.reads.iter_mut().zip(o.reads) {
            *r = r.checked_add(q)?;
        }
        Some(a)
    }
}

/// A gather's index read, found walking the chain back from its output.
struct Read {
    index: IndexRead,
    stage: u32,
    buffer: u32,
    /// Index elements into the gather's index layout.
    offset: Affine,
}

/// The chain's kernel descriptor (`None` for an empty output: nothing to launch).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChainKernelDesc {
    pub walk: Walk,
}

impl ChainKernelDesc {
    /// The fused kernel of `plan`: `Ok(None)` for an empty output, `Err` with the reason when
    /// the chain cannot be fused into the row walk (an intermediate tensor is empty, the
    /// output's rows are not whole words, or a step so large that an offset coefficient leaves
    /// `i64`): it then runs stage by stage. A chain that ends in `convert` takes the convert
    /// walk.
    pub fn new(plan: &ChainPlan) -> Result<Option<ChainKernelDesc>, Unfused> {
        if let Some((stage, _)) = plan.scatter() {
            return Err(Unfused::Scatter { stage });
        }
        if plan.output.is_empty() {
            return Ok(None);
        }
        let n = plan.stages.len();
        if let Some(i) = plan.stages[..n - 1].iter().position(|s| s.output().is_empty()) {
            return Err(Unfused::EmptyStage { stage: i + 1 });
        }
        // The last stage's output coordinates are the output's; walk back to the data.
        let out_rank = plan.output.rank();
        let mut y: Vec<Affine> = (0..out_rank).map(Affine::coord).collect();
        let mut reads: Vec<Read> = Vec::new();
        let buffers: Vec<usize> = plan
            .stages
            .iter()
            .scan(0, |g, s| {
                let b = *g;
                *g += usize::from(matches!(s, StagePlan::Gather(_)));
                Some(b)
            })
            .collect();
        for (s, stage) in plan.stages.iter().enumerate().rev() {
            let overflow = Unfused::Overflow { stage: s + 1 };
            y = match stage {
                StagePlan::Slice(p) => {
                    let (offsets, sizes, strides) =
                        p.window.as_ref().ok_or(Unfused::EmptyStage { stage: s + 1 })?;
                    (0..p.input.rank())
                        .map(|i| {
                            let start =
                                offsets[i] as i64 + if strides[i] < 0 { sizes[i] as i64 - 1 } else { 0 };
                            Affine::constant(start).plus(y[i].scaled(strides[i])?)
                        })
                        .collect::<Option<Vec<Affine>>>()
                        .ok_or(overflow)?
                }
                // The same coordinates, another element type: the walk converts as it writes.
                StagePlan::Convert(_) => y,
                StagePlan::Scatter(_) => return Err(Unfused::Scatter { stage: s + 1 }),
                StagePlan::Gather(p) => {
                    if p.index_axes().any(|a| a.size == 0) {
                        return Err(Unfused::EmptyAxis { stage: s + 1 });
                    }
                    if reads.len() + p.components > MAX_READS {
                        return Err(Unfused::Reads { stage: s + 1, max: MAX_READS });
                    }
                    let mut offset = Affine::default();
                    let mut x = vec![Affine::default(); p.data.rank()];
                    for d in &p.dims {
                        offset = offset
                            .plus(y[d.output_dim].scaled(d.index_stride as i64).ok_or(overflow)?)
                            .ok_or(overflow)?;
                        if let Some(i) = d.data_dim {
                            x[i] = y[d.output_dim];
                        }
                    }
                    // One read per axis the indices name (a GatherND tuple's components lie
                    // `component_stride` apart).
                    for a in p.index_axes() {
                        x[a.dim] = Affine::read(reads.len());
                        reads.push(Read {
                            index: IndexRead {
                                index_type: p.index_type,
                                policy: p.out_of_range,
                                axis_size: a.size as u32,
                                axis_stride: 0,
                                index_words: p.index_type.words() as u32,
                                offset: 0,
                            },
                            stage: s as u32 + 1,
                            buffer: buffers[s] as u32,
                            offset: offset.plus(Affine::constant(a.offset as i64)).ok_or(overflow)?,
                        });
                    }
                    x
                }
            };
        }
        // `y` now holds the data's coordinates: its element offset through the data's strides.
        let data_offset = y
            .iter()
            .zip(plan.data.strides.iter())
            .try_fold(Affine::default(), |acc, (c, &s)| acc.plus(c.scaled(s as i64)?))
            .ok_or(Unfused::Overflow { stage: 1 })?;
        let dims_of: Vec<usize> = (0..out_rank).filter(|&d| plan.output.sizes[d] > 1).collect();
        let dims: Vec<Dim> = dims_of
            .iter()
            .map(|&d| {
                let mut r = [0; MAX_READS];
                for (j, read) in reads.iter().enumerate() {
                    r[j] = read.offset.coords[d];
                }
                Dim {
                    size: plan.output.sizes[d],
                    out: plan.output.strides[d],
                    src: data_offset.coords[d],
                    reads: r,
                }
            })
            .collect();
        let moves = Moves {
            dims,
            base: data_offset.constant,
            reads: reads
                .iter()
                .enumerate()
                .map(|(j, r)| MoveRead {
                    index: r.index,
                    buffer: r.buffer,
                    stage: r.stage,
                    base: r.offset.constant,
                    deps: r.offset.reads,
                    data: data_offset.reads[j],
                })
                .collect(),
            elem_bytes: plan.data_type.size(),
            src: &plan.data,
            out: &plan.output,
            dynamic: plan.dynamic_leading,
        };
        let rows = Unfused::Rows {
            stage: n,
            size: plan.output.sizes.last().copied().unwrap_or(1),
            elem_bytes: plan.output_type().size(),
        };
        let walk = match plan.convert() {
            Some(c) => Walk::Convert(Box::new(ConvertWalk::build(&moves, &dims_of, c).ok_or(rows)?)),
            None => Walk::Rows(RowWalk::build(&moves).ok_or(rows)?),
        };
        Ok(Some(ChainKernelDesc { walk }))
    }
}
