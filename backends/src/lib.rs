//! The runtime side of stridex: the CubeCL kernels with their launchers, devices, the ops (one
//! [`Op`] over each op kind), run-time builders and Burn interop. Features: `wgpu` (default),
//! `vulkan` (wgpu through SPIR-V), `cuda`, `cpu`, `burn`.
//!
//! Modules in layers, lowest first (`scripts/check-layers.py` keeps it so): `element`, `error`,
//! `staging`, `tensor`; `launch` (uploads, status words, cube sizes, waiting); `kernels` (each
//! kernel's `#[cube]` code, launcher and definition); `explain` and `device`; `buffers` and
//! `ops`; `builder` and `burn`.

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

pub use builder::{AppendIndex, Chain, Gather, Scatter, Slice};
/// The CubeCL this crate launches with, for [`GatherOp::launch`] on your own client and buffers.
pub use cubecl;
pub use device::{Backend, Device};
pub use element::{Element, IndexElement};
pub use error::Error;
#[cfg(feature = "cuda")]
pub use explain::cuda_options;
pub use explain::Dialect;
pub use kernels::{ChainKernel, OnDevice, ScatterKernel, StageKernel};
pub use ops::{
    ChainKind, ChainOp, GatherKind, GatherOp, IndexBuffer, IndexBuffers, IndexTypes, Op, OpKind, ScatterKind,
    ScatterOp, SliceKind, SliceOp,
};
pub use stridex_core as core;
pub use tensor::Tensor;
