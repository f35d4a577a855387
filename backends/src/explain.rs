//! The generated source of a kernel, without a device: the kernel struct that
//! `#[cube(launch_unchecked)]` generates (`RowsKernel` etc.) is built with the settings its
//! launcher uses and offline device properties, its `define()` gives the definition, and the
//! compiler a runtime would use (with the options that runtime sets) turns it into source, so a
//! user can see exactly what their macro emits. `tests/explain.rs` checks on a device that the
//! kernel launched and the kernel explained compile to the same WGSL.

// A build with no runtime that has a source dialect (`cpu` alone) answers every dialect with an
// `Err`, and leaves the definition builders unused.
#![cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(dead_code, unused_imports, unused_variables))]

use crate::error::Error;
use crate::kernels::{gather_kernel, rows_kernel, slice_kernel};
use cubecl::ir::{
    DeviceIdentity, DeviceProperties, HardwareProperties, MemoryDeviceProperties, TargetProperties,
};
use cubecl::prelude::*;
use cubecl::Compiler;
use std::sync::Arc;
use stridex_core::kernel::{GatherKernelDesc, RowWalk, SliceKernelDesc, Walk};

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

/// Invocations per cube, as `launch` uses them.
const CUBE_DIM: u32 = 256;

/// What the launcher of a `launch_unchecked` kernel sets.
fn settings() -> KernelSettings {
    KernelSettings::new(CubeDim::new_1d(CUBE_DIM).into(), ExecutionMode::Unchecked, AddressType::U32)
}

/// Device properties for a definition made without a device. The kernels read none of them
/// (they query no plane size, shared memory or feature); `define` only carries them.
fn offline_device() -> Arc<DeviceProperties> {
    let hardware = HardwareProperties {
        load_width: 128,
        vector_register_count: None,
        plane_size_min: 32,
        plane_size_max: 32,
        max_bindings: 16,
        max_shared_memory_size: 0,
        max_cube_count: (65535, 65535, 65535),
        max_units_per_cube: 1024,
        max_cube_dim: (1024, 1024, 64),
        num_streaming_multiprocessors: None,
        num_cpu_cores: None,
        last_level_cache_size: None,
        num_tensor_cores: None,
        min_tensor_cores_dim: None,
        max_vector_size: 4,
        cube_mma_reserved_shared_memory: 0,
    };
    Arc::new(DeviceProperties::new(
        Default::default(),
        MemoryDeviceProperties::new(u64::MAX, 32),
        hardware,
        cubecl::profile::TimingMethod::System,
        DeviceIdentity::default(),
    ))
}

const BUFFER: BufferCompilationArg = BufferCompilationArg { inplace: None };

fn gather_definition(k: &GatherKernelDesc) -> KernelDefinition {
    match &k.walk {
        Walk::Rows(w) => rows_definition(w),
        Walk::Slots(m) => gather_kernel::GatherKernel::new(
            settings(),
            offline_device(),
            Arc::new(TargetProperties::default()),
            BUFFER,
            BUFFER,
            BUFFER,
            BUFFER,
            (),
            (),
            m.line as usize,
            m.count_free(),
            k.index,
        )
        .define(),
    }
}

fn slice_definition(k: &SliceKernelDesc) -> KernelDefinition {
    match &k.walk {
        Walk::Rows(w) => rows_definition(w),
        Walk::Slots(m) => slice_kernel::SliceKernel::new(
            settings(),
            offline_device(),
            Arc::new(TargetProperties::default()),
            BUFFER,
            BUFFER,
            BUFFER,
            (),
            (),
            m.line as usize,
            m.count_free(),
        )
        .define(),
    }
}

fn rows_definition(w: &RowWalk) -> KernelDefinition {
    rows_kernel::RowsKernel::new(
        settings(),
        offline_device(),
        Arc::new(TargetProperties::default()),
        BUFFER,
        BUFFER,
        BUFFER,
        BUFFER,
        BUFFER,
        BUFFER,
        BUFFER,
        (),
        w.src_line() as usize,
        w.line as usize,
        w.count_free(),
    )
    .define()
}

/// Which kernel to explain.
pub(crate) enum Kernel<'a> {
    Gather(&'a GatherKernelDesc),
    Slice(&'a SliceKernelDesc),
    /// A fused chain's row walk.
    Rows(&'a RowWalk),
}

impl Kernel<'_> {
    fn definition(&self) -> KernelDefinition {
        match self {
            Kernel::Gather(k) => gather_definition(k),
            Kernel::Slice(k) => slice_definition(k),
            Kernel::Rows(w) => rows_definition(w),
        }
    }
}

fn unavailable(dialect: Dialect, feature: &str) -> Error {
    Error::NoDevice(format!("{dialect:?} source needs stridex built with the `{feature}` feature"))
}

fn compiled(e: impl std::fmt::Debug) -> Error {
    Error::Device(format!("kernel compilation failed: {e:?}"))
}

pub(crate) fn source(kernel: Kernel<'_>, dialect: Dialect) -> Result<String, Error> {
    // Expansion panics on a kernel it cannot express; report that as an error.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compile(&kernel, dialect)))
        .unwrap_or_else(|_| Err(Error::Device("the kernel failed to expand".into())))
}

fn compile(kernel: &Kernel<'_>, dialect: Dialect) -> Result<String, Error> {
    match dialect {
        #[cfg(feature = "wgpu")]
        Dialect::Wgsl => {
            let options = cubecl::WgpuCompilationOptions::default();
            let out = cubecl::wgpu::WgslCompiler.compile(kernel.definition(), &options).map_err(compiled)?;
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
                .compile(kernel.definition(), &options)
                .map_err(compiled)?;
            Ok(out.to_string())
        }
        #[cfg(feature = "cuda")]
        Dialect::Cuda { arch } => {
            use cubecl::cuda::compiler::CudaBackend;
            let out = cubecl::cuda::CudaCompiler::new(CudaBackend::Cpp)
                .compile(kernel.definition(), &cuda_options(arch))
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
    let plan = desc.plan()?;
    GatherKernelDesc::new(&plan).map(|k| source(Kernel::Gather(&k), dialect)).transpose()
}

/// The kernel source of a slice descriptor (`None` for an empty output: no kernel).
pub fn slice_source(desc: &stridex_core::SliceDesc, dialect: Dialect) -> Result<Option<String>, Error> {
    let plan = desc.plan()?;
    SliceKernelDesc::new(&plan).map(|k| source(Kernel::Slice(&k), dialect)).transpose()
}

/// The kernel source of a chain descriptor: one kernel where the chain fuses, else each
/// stage's (`None` for an empty output: no kernel).
pub fn chain_source(desc: &stridex_core::ChainDesc, dialect: Dialect) -> Result<Option<String>, Error> {
    let plan = desc.plan()?;
    crate::ops::chain::chain_kernel(&plan).map(|k| crate::ops::chain::kernel_source(&k, dialect)).transpose()
}
