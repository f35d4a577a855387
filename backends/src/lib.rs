//! The runtime side of stridex: CubeCL kernels (one gather, one slice), devices, launch and
//! read-back. Features: `wgpu` (default), `vulkan` (wgpu through SPIR-V), `cuda`, `cpu`.

pub mod buffers;
mod builder;
#[cfg(feature = "burn")]
pub mod burn;
mod device;
mod element;
mod error;
pub mod explain;
pub mod kernels;
mod launch;
mod ops;
mod staging;
mod tensor;

pub use builder::{AppendIndex, Chain, Gather, Slice};
/// The CubeCL this crate launches with, for [`GatherOp::launch`] on your own client and buffers.
pub use cubecl;
pub use device::{Backend, Device};
pub use element::{Element, IndexElement};
pub use error::Error;
#[cfg(feature = "cuda")]
pub use explain::cuda_options;
pub use explain::Dialect;
pub use ops::{ChainKernel, ChainOp, GatherOp, IndexBuffer, IndexBuffers, IndexTypes, SliceOp, StageKernel};
pub use stridex_core as core;
pub use tensor::Tensor;
