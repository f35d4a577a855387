//! The generated source of a kernel, without a device: the definition is built the way the
//! `#[cube(launch_unchecked)]` launcher builds it, then compiled by the compiler a runtime would
//! use (with the options that runtime sets), so a user can see exactly what their macro emits.
//!
//! Why by hand: CubeCL 0.10.0 generates a kernel struct per `#[cube]` fn (`RowsKernel` etc.)
//! whose `define()` gives the definition, but its constructor takes a `ComputeClient` (and
//! `define` reads the device's properties), so it needs a device. The steps below mirror that
//! `define()` (cubecl-macros 0.10.0, `generate/kernel.rs`): runtime properties, one
//! `register_size` per `Size` generic, the address type, each argument expanded in order
//! (`expand` for inputs, `expand_output` for `&mut` ones), then the kernel's `expand`; and its
//! kernel name (the fn name, then `_{generic}_{value}` per `Size` generic). `tests/explain.rs`
//! checks on a device that both compile to the same WGSL, so a CubeCL upgrade that changes the
//! launcher fails there.

use crate::error::Error;
use crate::kernels::{gather_kernel, rows_kernel, slice_kernel};
use cubecl::prelude::*;
use cubecl::Compiler;
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

fn settings(name: &str, line: usize) -> KernelSettings {
    KernelSettings::default()
        .cube_dim(CubeDim::new_1d(CUBE_DIM))
        .address_type(AddressType::U32)
        .kernel_name(format!("{name}_n_{line}"))
}

fn gather_definition<R: Runtime>(k: &GatherKernelDesc) -> KernelDefinition {
    let m = match &k.walk {
        Walk::Rows(w) => return rows_definition::<R>(w),
        Walk::Slots(m) => m,
    };
    let line = m.line as usize;
    let mut builder = KernelBuilder::default();
    builder.runtime_properties(R::target_properties());
    builder.scope.register_size::<gather_kernel::N>(line);
    let settings = settings("gather_kernel", line);
    settings.address_type.register(&mut builder.scope);
    let arg = ArrayCompilationArg { inplace: None };
    let data = <Array<Vector<u32, gather_kernel::N>> as LaunchArg>::expand(&arg, &mut builder);
    let indices = <Array<u32> as LaunchArg>::expand(&arg, &mut builder);
    let output = <Array<Vector<u32, gather_kernel::N>> as LaunchArg>::expand_output(&arg, &mut builder);
    let status = <Array<u32> as LaunchArg>::expand_output(&arg, &mut builder);
    let limit = <u32 as LaunchArg>::expand(&(), &mut builder);
    let slots = <u32 as LaunchArg>::expand(&(), &mut builder);
    gather_kernel::expand::<gather_kernel::N>(
        &mut builder.scope,
        line,
        data,
        indices,
        output,
        status,
        limit,
        slots,
        m.count_free(),
        k.index,
    );
    builder.build(settings)
}

fn slice_definition<R: Runtime>(k: &SliceKernelDesc) -> KernelDefinition {
    let m = match &k.walk {
        Walk::Rows(w) => return rows_definition::<R>(w),
        Walk::Slots(m) => m,
    };
    let line = m.line as usize;
    let mut builder = KernelBuilder::default();
    builder.runtime_properties(R::target_properties());
    builder.scope.register_size::<slice_kernel::N>(line);
    let settings = settings("slice_kernel", line);
    settings.address_type.register(&mut builder.scope);
    let arg = ArrayCompilationArg { inplace: None };
    let input = <Array<Vector<u32, slice_kernel::N>> as LaunchArg>::expand(&arg, &mut builder);
    let output = <Array<Vector<u32, slice_kernel::N>> as LaunchArg>::expand_output(&arg, &mut builder);
    let status = <Array<u32> as LaunchArg>::expand_output(&arg, &mut builder);
    let limit = <u32 as LaunchArg>::expand(&(), &mut builder);
    let slots = <u32 as LaunchArg>::expand(&(), &mut builder);
    slice_kernel::expand::<slice_kernel::N>(
        &mut builder.scope,
        line,
        input,
        output,
        status,
        limit,
        slots,
        m.count_free(),
    );
    builder.build(settings)
}

fn rows_definition<R: Runtime>(w: &RowWalk) -> KernelDefinition {
    let (ni, no) = (w.src_line() as usize, w.line as usize);
    let mut builder = KernelBuilder::default();
    builder.runtime_properties(R::target_properties());
    builder.scope.register_size::<rows_kernel::NI>(ni);
    builder.scope.register_size::<rows_kernel::NO>(no);
    let settings = KernelSettings::default()
        .cube_dim(CubeDim::new_1d(CUBE_DIM))
        .address_type(AddressType::U32)
        .kernel_name(format!("rows_kernel_ni_{ni}_no_{no}"));
    settings.address_type.register(&mut builder.scope);
    let arg = ArrayCompilationArg { inplace: None };
    let data = <Array<Vector<u32, rows_kernel::NI>> as LaunchArg>::expand(&arg, &mut builder);
    let index0 = <Array<u32> as LaunchArg>::expand(&arg, &mut builder);
    let index1 = <Array<u32> as LaunchArg>::expand(&arg, &mut builder);
    let index2 = <Array<u32> as LaunchArg>::expand(&arg, &mut builder);
    let index3 = <Array<u32> as LaunchArg>::expand(&arg, &mut builder);
    let output = <Array<Vector<u32, rows_kernel::NO>> as LaunchArg>::expand_output(&arg, &mut builder);
    let status = <Array<u32> as LaunchArg>::expand_output(&arg, &mut builder);
    let limit = <u32 as LaunchArg>::expand(&(), &mut builder);
    rows_kernel::expand::<rows_kernel::NI, rows_kernel::NO>(
        &mut builder.scope,
        ni,
        no,
        data,
        index0,
        index1,
        index2,
        index3,
        output,
        status,
        limit,
        w.count_free(),
    );
    builder.build(settings)
}

/// Which kernel to explain.
pub(crate) enum Kernel<'a> {
    Gather(&'a GatherKernelDesc),
    Slice(&'a SliceKernelDesc),
    /// A fused chain's row walk.
    Rows(&'a RowWalk),
}

impl Kernel<'_> {
    fn definition<R: Runtime>(&self) -> KernelDefinition {
        match self {
            Kernel::Gather(k) => gather_definition::<R>(k),
            Kernel::Slice(k) => slice_definition::<R>(k),
            Kernel::Rows(w) => rows_definition::<R>(w),
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
    let addr = AddressType::U32.unsigned_type();
    match dialect {
        #[cfg(feature = "wgpu")]
        Dialect::Wgsl => {
            let def = kernel.definition::<cubecl::wgpu::WgpuRuntime>();
            let options = cubecl::WgpuCompilationOptions::default();
            let out = cubecl::wgpu::WgslCompiler::default()
                .compile(def, &options, ExecutionMode::Unchecked, addr)
                .map_err(compiled)?;
            Ok(out.to_string())
        }
        #[cfg(feature = "vulkan")]
        Dialect::SpirV => {
            let def = kernel.definition::<cubecl::wgpu::WgpuRuntime>();
            let mut options = cubecl::WgpuCompilationOptions { supports_vulkan: true, ..Default::default() };
            options.vulkan.max_spirv_version = (1, 3);
            let out = cubecl::wgpu::vulkan::VkSpirvCompiler::default()
                .compile(def, &options, ExecutionMode::Unchecked, addr)
                .map_err(compiled)?;
            Ok(out.to_string())
        }
        #[cfg(feature = "cuda")]
        Dialect::Cuda { arch } => {
            let def = kernel.definition::<cubecl::cuda::CudaRuntime>();
            let out = cubecl::cuda::CudaCompiler::default()
                .compile(def, &cuda_options(arch), ExecutionMode::Unchecked, addr)
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
/// `arch` (cubecl-cuda 0.10.0, `runtime.rs`: fast math always; grid constants from 7.0; fast
/// tanh from 7.5 with CUDA >= 12.8; clusters and elect.sync from 9.0; warp size 32).
#[cfg(feature = "cuda")]
pub fn cuda_options(arch: u32) -> <cubecl::cuda::CudaCompiler as cubecl::Compiler>::CompilationOptions {
    type Options = <cubecl::cuda::CudaCompiler as cubecl::Compiler>::CompilationOptions;
    let mut o = Options { warp_size: 32, ..Default::default() };
    o.supports_features.fast_math = true;
    o.supports_features.grid_constants = arch >= 70;
    o.supports_features.fast_tanh = arch >= 75 && cudarc::driver::sys::CUDA_VERSION >= 12080;
    o.supports_features.clusters = arch >= 90;
    o.supports_features.elect_sync = arch >= 90;
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
