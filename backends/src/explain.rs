//! The generated source of a kernel, without a device: each kernel's definition
//! ([`crate::kernels`]: the kernel struct `#[cube(launch_unchecked)]` generates, built with the
//! settings its launcher uses and offline device properties) goes through the compiler a runtime
//! would use, with the options that runtime sets, so a user can see exactly what their macro
//! emits. `tests/suite/explain.rs` checks on a device that the
//! kernel launched and the kernel explained compile to the same WGSL.

// A build with no runtime that has a source dialect (`cpu` alone) answers every dialect with an
// `Err`, and leaves the definition builders unused.
#![cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(dead_code, unused_imports, unused_variables))]

use crate::error::Error;
use crate::kernels::{ChainKernel, OpKernel, ScatterKernel};
use cubecl::prelude::*;
use cubecl::Compiler;
use stridex_core::kernel::{GatherKernelDesc, SliceKernelDesc};

/// A language a kernel is compiled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// WGSL, as the wgpu runtime compiles it (feature `wgpu`).
    Wgsl,
    /// SPIR-V (disassembled), as the wgpu runtime compiles it on Vulkan (feature `vulkan`).
    SpirV,
    /// CUDA C++ for compute capability `arch` (80 for sm_80, 90 for sm_90), with the options
    /// CubeCL's CUDA runtime sets for such a device (feature `cuda`).
    Cuda { arch: u32 },
}

impl Dialect {
    pub fn from_name(s: &str) -> Option<Dialect> {
        match s.to_ascii_lowercase().as_str() {
            "wgsl" => Some(Dialect::Wgsl),
            "spirv" | "spir-v" => Some(Dialect::SpirV),
            "cuda" => Some(Dialect::Cuda { arch: 80 }),
            s => s
                .strip_prefix("sm_")
                .or(s.strip_prefix("cuda:"))
                .and_then(|a| a.parse().ok())
                .map(|arch| Dialect::Cuda { arch }),
        }
    }
}

fn unavailable(dialect: Dialect, feature: &str) -> Error {
    Error::NoDevice(format!("{dialect:?} source needs stridex built with the `{feature}` feature"))
}

fn compiled(e: impl std::fmt::Debug) -> Error {
    Error::Device(format!("kernel compilation failed: {e:?}"))
}

/// The source of the kernels `kernel` of `plan` launches, in `dialect`: one kernel, or
/// several, each headed (a chain's stages `// stage k`, an empty one followed by
/// `// (empty output: no kernel)`; a scatter's pair `// kernel k of 2: ..`); on GPUs' tiles
/// (`STRIDEX_TILE=spread`), the kernels a GPU launches ([`OpKernel::offline_definitions`]).
pub(crate) fn source<K: OpKernel>(kernel: &K, plan: &K::Plan, dialect: Dialect) -> Result<String, Error> {
    sources(kernel.offline_definitions(plan), dialect)
}

/// Definitions compiled one after another, each under its heading.
fn sources(
    definitions: Vec<(Option<String>, Option<KernelDefinition>)>,
    dialect: Dialect,
) -> Result<String, Error> {
    let mut all = String::new();
    for (heading, definition) in definitions {
        if let Some(h) = heading {
            all += &format!("// {h}\n");
        }
        match definition {
            // Expansion panics on a kernel it cannot express; report that as an error.
            Some(d) => {
                all += &std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compile(d, dialect)))
                    .unwrap_or_else(|_| Err(Error::Device("the kernel failed to expand".into())))?
            }
            None => all += "// (empty output: no kernel)\n",
        }
    }
    Ok(all)
}

fn compile(definition: KernelDefinition, dialect: Dialect) -> Result<String, Error> {
    match dialect {
        #[cfg(feature = "wgpu")]
        Dialect::Wgsl => {
            let options = cubecl::WgpuCompilationOptions::default();
            let out = cubecl::wgpu::WgslCompiler.compile(definition, &options).map_err(compiled)?;
            Ok(out.to_string())
        }
        #[cfg(feature = "vulkan")]
        Dialect::SpirV => {
            // What the wgpu runtime sets on a Vulkan device (cubecl-wgpu 0.11.3,
            // `backend/vulkan.rs`): SPIR-V 1.3, vectors of up to 4, parameters as push constants.
            let mut options =
                cubecl::WgpuCompilationOptions { supports_vulkan_compiler: true, ..Default::default() };
            options.vulkan.max_spirv_version = (1, 3);
            options.vulkan.max_vector_size = 4;
            options.vulkan.push_constant_size = 128;
            let out = cubecl::wgpu::vulkan::VkSpirvCompiler::default()
                .compile(definition, &options)
                .map_err(compiled)?;
            Ok(out.to_string())
        }
        #[cfg(feature = "cuda")]
        Dialect::Cuda { arch } => {
            use cubecl::cuda::compiler::CudaBackend;
            let out = cubecl::cuda::CudaCompiler::new(CudaBackend::Cpp)
                .compile(definition, &cuda_options(arch))
                .map_err(compiled)?;
            Ok(out.to_string())
        }
        #[allow(unreachable_patterns)]
        Dialect::Wgsl => Err(unavailable(dialect, "wgpu")),
        #[allow(unreachable_patterns)]
        Dialect::SpirV => Err(unavailable(dialect, "vulkan")),
        #[allow(unreachable_patterns)]
        Dialect::Cuda { .. } => Err(unavailable(dialect, "cuda")),
    }
}

/// The C++ compiler options CubeCL's CUDA runtime sets for a device of compute capability
/// `arch` (cubecl-cuda 0.11.3, `runtime.rs`: fast math always; dp4a from 6.1; grid constants
/// from 7.0; fast tanh from 7.5 with CUDA >= 12.8; clusters and elect.sync from 9.0; warp size
/// 32). stridex builds CubeCL's CUDA runtime on its C++ (NVRTC) backend (`cuda-cpp`), so this is
/// the source that runs.
#[cfg(feature = "cuda")]
pub fn cuda_options(arch: u32) -> cubecl::cuda::CudaCompilationOptions {
    let mut o = cubecl::cuda::CudaCompilationOptions::default();
    o.cpp.warp_size = 32;
    let f = &mut o.cpp.supports_features;
    f.fast_math = true;
    f.dp4a = arch >= 61;
    f.grid_constants = arch >= 70;
    f.fast_tanh = arch >= 75 && cudarc::driver::sys::CUDA_VERSION >= 12080;
    f.clusters = arch >= 90;
    f.elect_sync = arch >= 90;
    o
}

/// The kernel source of a gather descriptor (`None` for an empty output: no kernel).
pub fn gather_source(desc: &stridex_core::GatherDesc, dialect: Dialect) -> Result<Option<String>, Error> {
    plan_source::<GatherKernelDesc>(&desc.plan()?, dialect)
}

/// The kernel source of a slice descriptor (`None` for an empty output: no kernel).
pub fn slice_source(desc: &stridex_core::SliceDesc, dialect: Dialect) -> Result<Option<String>, Error> {
    plan_source::<SliceKernelDesc>(&desc.plan()?, dialect)
}

/// The kernel source of a chain descriptor: one kernel where the chain fuses, else each
/// stage's (`None` for an empty output: no kernel).
pub fn chain_source(desc: &stridex_core::ChainDesc, dialect: Dialect) -> Result<Option<String>, Error> {
    plan_source::<ChainKernel>(&desc.plan()?, dialect)
}

/// The kernel source of a scatter descriptor, writing the packed copy `run` returns (`None`:
/// its runs are empty, nothing is written).
pub fn scatter_source(desc: &stridex_core::ScatterDesc, dialect: Dialect) -> Result<Option<String>, Error> {
    plan_source::<ScatterKernel>(&desc.plan()?, dialect)
}

fn plan_source<K: OpKernel>(plan: &K::Plan, dialect: Dialect) -> Result<Option<String>, Error> {
    K::of(plan).map(|k| source(&k, plan, dialect)).transpose()
}
