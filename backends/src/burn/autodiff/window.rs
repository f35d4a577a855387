//! A slice's backward pass, and the steps of a backward pass as they are collected: a slice's
//! gradient is one zero-filling gather per dimension its window changes, and consecutive such
//! gathers (one slice's several dimensions, or a chain's crop, flip and stride) run as one
//! chain kernel where they lower to one, as the forward chain does. A gather reading zero past
//! the end composes: the fused kernel zeroes an element when any of its reads was past the end,
//! which is where one of the gathers run in turn would have read a zero.

use super::{fusion, CubeDevice, Fused, GatherStep, Step, Zeros};
use crate::element::Element;
use crate::error::Error;
use crate::ops::{ChainOp, GatherOp, IndexTypes};
use burn_backend::ops::IntTensorOps;
use burn_backend::TensorData;
use burn_cubecl::Cube;
use std::borrow::Cow;
use std::sync::Arc;
use stridex_core::gradient::{self, SliceGradient};
use stridex_core::limits::MAX_GATHERS;
use stridex_core::{ChainDesc, DType, GatherStage, SlicePlan, StageDesc};

/// One gather of a slice's gradient, its index tensor made when it was planned.
struct WindowGather<T: 'static> {
    gather: Arc<GatherOp<T, i32>>,
    indices: Fused,
    /// The sizes after it.
    sizes: Vec<usize>,
}

/// A backward pass's steps in the order they run; a slice's gathers wait until a step of
/// another kind (or the end) comes, to be fused with the gathers after them.
pub(super) struct Steps<T: 'static> {
    done: Vec<Box<dyn Step>>,
    window: Vec<WindowGather<T>>,
}

impl<T: Element> Steps<T> {
    pub(super) fn new() -> Self {
        Steps { done: Vec::new(), window: Vec::new() }
    }

    pub(super) fn push(&mut self, step: Box<dyn Step>) {
        self.flush();
        self.done.push(step);
    }

    /// The steps of a slice planned as `plan`.
    pub(super) fn slice(&mut self, plan: &SlicePlan, device: &CubeDevice) -> Result<(), Error> {
        let gathers = match gradient::slice_input_gradient(plan) {
            SliceGradient::Zeros => {
                let shape = burn_backend::Shape::from(plan.input.sizes.to_vec());
                self.push(Box::new(Zeros { shape, device: device.clone() }));
                return Ok(());
            }
            SliceGradient::Gathers(gathers) => gathers,
        };
        let mut sizes = plan.output.sizes.to_vec();
        for g in &gathers {
            let too_long = || Error::NoGradient {
                op: "slice".into(),
                why: format!(
                    "dimension {} has {} elements, more than i32 indices reach",
                    g.axis, g.input_size
                ),
            };
            // Every index is at most the output's size, which is at most the input's.
            if i32::try_from(g.input_size).is_err() {
                return Err(too_long());
            }
            let desc = g.gather(T::DTYPE, DType::I32, &sizes).ok_or_else(too_long)?;
            let op = GatherOp::<T, i32>::new(desc)?;
            let values = g
                .indices()
                .map(|i| i32::try_from(i).map_err(|_| too_long()))
                .collect::<Result<Vec<_>, _>>()?;
            let indices = Cube::int_from_data(TensorData::new(values, [g.input_size]), device);
            if indices.dtype != burn_backend::DType::I32 {
                return Err(Error::NoGradient {
                    op: "slice".into(),
                    why: format!("the device stores i32 indices as {:?}", indices.dtype),
                });
            }
            sizes[g.axis] = g.input_size;
            let desc = *op.desc();
            let gather = fusion::shared(&desc, || op);
            self.window.push(WindowGather { gather, indices, sizes: sizes.clone() });
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> Vec<Box<dyn Step>> {
        self.flush();
        self.done
    }

    /// The waiting gathers as steps: runs of up to [`MAX_GATHERS`] as one chain kernel where it
    /// fuses, else one by one.
    fn flush(&mut self) {
        let mut window = std::mem::take(&mut self.window);
        while !window.is_empty() {
            let run: Vec<WindowGather<T>> = window.drain(..window.len().min(MAX_GATHERS)).collect();
            let fused = match run.len() {
                2 => chained::<T, (i32, i32)>(&run),
                3 => chained::<T, (i32, i32, i32)>(&run),
                4 => chained::<T, (i32, i32, i32, i32)>(&run),
                _ => None,
            };
            match fused {
                Some(step) => self.done.push(step),
                None => self.done.extend(run.into_iter().map(|w| {
                    Box::new(GatherStep { gather: w.gather, indices: w.indices, sizes: w.sizes })
                        as Box<dyn Step>
                })),
            }
        }
    }
}

/// The chain of `run`'s gathers, when it is one kernel. Its stages are gathers that already
/// passed their rules on the sizes they meet, so the chain's rules hold too; a chain that
/// would not fuse (or, defensively, one refused) leaves the gathers to run one by one.
fn chained<T: Element, J: IndexTypes>(run: &[WindowGather<T>]) -> Option<Box<dyn Step>> {
    let stages: Vec<StageDesc> =
        run.iter().map(|w| StageDesc::Gather(GatherStage::of(w.gather.desc()))).collect();
    let desc = ChainDesc {
        data: run[0].gather.desc().data,
        stages: Cow::Owned(stages),
        output: None,
        dynamic_leading: None,
    };
    // Kept for reuse (bounded: `ops::shared`), as the forward ops are: planned once per window,
    // not per step.
    let chain: Arc<Option<Arc<ChainOp<T, J>>>> = fusion::shared(&desc, || {
        ChainOp::<T, J>::new(desc.clone()).ok().filter(|op| op.is_fused().unwrap_or(false)).map(Arc::new)
    });
    let chain = Option::clone(&chain)?;
    let indices = run.iter().map(|w| w.indices.clone()).collect();
    let sizes = run.last()?.sizes.clone();
    Some(Box::new(ChainStep { chain, indices, sizes }))
}

/// Gathers of a slice's (or consecutive slices') gradient as one chain kernel.
struct ChainStep<T: 'static, J: 'static> {
    chain: Arc<ChainOp<T, J>>,
    indices: Vec<Fused>,
    /// The sizes after the chain.
    sizes: Vec<usize>,
}

// By hand: a derive would ask the index-type tuple `J` for `Debug`.
impl<T, J> std::fmt::Debug for ChainStep<T, J> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainStep").field("chain", self.chain.desc()).field("sizes", &self.sizes).finish()
    }
}

impl<T: Element, J: IndexTypes> Step for ChainStep<T, J> {
    fn apply(&self, grad: Fused) -> Fused {
        let mut inputs = vec![grad];
        inputs.extend(self.indices.iter().cloned());
        fusion::register(self.chain.clone(), true, inputs, &self.sizes)
    }
}
