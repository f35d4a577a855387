//! The integration tests, as one binary: each file of this folder is a module (`seeds`,
//! `random`, ...), so `cargo test --test suite -- seeds::` runs one of them. One binary links
//! wgpu, CubeCL (and, with `cpu` or `cuda`, LLVM) once instead of once per file, and compiles
//! the shared `common` module once. The map of what each checks is `tests/README.md`.

#[macro_use]
mod common;

mod accepted;
#[cfg(feature = "burn")]
mod burn;
mod chains;
mod conformance;
mod convert;
mod cpu_runtime;
mod describe;
mod dtypes;
mod dynamic;
mod elements;
mod explain;
mod nd;
mod random;
mod runtime;
mod scatter;
mod seeds;
#[cfg(feature = "burn")]
mod training;
mod walks;
