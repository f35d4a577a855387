//! Picking a device: `STRIDEX_BACKEND` (wgpu | vulkan | cuda | cpu), else CUDA when it is built
//! in and a driver answers, else wgpu. Picking never panics: CubeCL panics when it creates a
//! client with no driver or adapter, so each backend is probed first.

use crate::error::Error;
use cubecl_environment::stream::StreamId;
use std::sync::OnceLock;

/// A backend stridex can launch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// CubeCL's wgpu runtime: WGSL, or SPIR-V on Vulkan when built with the `vulkan` feature.
    Wgpu,
    /// CubeCL's CUDA runtime (feature `cuda`).
    Cuda,
    /// CubeCL's CPU runtime (feature `cpu`; its build downloads an LLVM bundle).
    Cpu,
}

impl Backend {
    pub fn from_name(s: &str) -> Option<Backend> {
        match s.to_ascii_lowercase().as_str() {
            "wgpu" | "vulkan" | "spirv" | "wgsl" | "gl" | "opengl" => Some(Backend::Wgpu),
            "cuda" => Some(Backend::Cuda),
            "cpu" => Some(Backend::Cpu),
            _ => None,
        }
    }
}

/// A compute client on one device.
pub struct Device {
    pub(crate) client: cubecl::client::Client,
    /// The CubeCL device the client belongs to (what Burn names a device by).
    cubecl: cubecl::Device,
    backend: Backend,
    description: String,
    /// The CubeCL stream every `run` on this device uses, whichever thread calls it. CubeCL
    /// gives each thread its own stream (its own memory pools, command encoder and polling
    /// thread); callers of a shared op would otherwise each grow one.
    stream: StreamId,
}

/// Runs `$body` with `$c` bound to the device's client, holding stridex's device lock and on
/// the device's one stream (see [`Device::exclusive`]).
macro_rules! with_client {
    ($device:expr, $c:ident => $body:expr) => {
        $device.exclusive(|| {
            let $c = &$device.client;
            $body
        })
    };
}
pub(crate) use with_client;

impl Device {
    /// What runs the kernels, e.g. `wgpu/Vulkan: llvmpipe (LLVM 15.0.6, 256 bits) (Cpu), SPIR-V`.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Runs `f` on this device's stream, without the device lock (for a run made of launches
    /// that each take it).
    pub(crate) fn on_stream<T>(&self, f: impl FnOnce() -> T) -> T {
        self.stream.executes(f)
    }

    /// Runs `f` under stridex's device lock, on this device's stream.
    pub(crate) fn exclusive<T>(&self, f: impl FnOnce() -> T) -> T {
        crate::launch::exclusive(|| self.stream.executes(f))
    }

    // Without a runtime feature no device is ever made (`default_device` is an `Err`); the
    // facade builds that way for its compile-fail cases.
    #[cfg_attr(not(any(feature = "wgpu", feature = "cuda", feature = "cpu")), allow(dead_code))]
    fn new(cubecl: cubecl::Device, backend: Backend, description: String) -> Device {
        Device { client: cubecl.client(), cubecl, backend, description, stream: StreamId::current() }
    }

    /// The CubeCL device behind the client (for Burn: `burn::tensor::Device::from(..)` names
    /// the same device, and so shares the client; see also `burn_device` with feature `burn`).
    pub fn cubecl_device(&self) -> &cubecl::Device {
        &self.cubecl
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The CubeCL client stridex launches on, for [`crate::GatherOp::launch`] and friends on
    /// buffers of your own.
    pub fn client(&self) -> &cubecl::client::Client {
        &self.client
    }

    /// The device used by `run`: chosen once per process (see the module docs).
    pub fn default_device() -> Result<&'static Device, Error> {
        static DEFAULT: OnceLock<Result<Backend, Error>> = OnceLock::new();
        let backend = DEFAULT.get_or_init(choose_default).clone()?;
        Device::open(backend)
    }

    /// A device of `backend`, or why there is none. Each backend is opened once per process.
    pub fn open(backend: Backend) -> Result<&'static Device, Error> {
        static WGPU: OnceLock<Result<Device, Error>> = OnceLock::new();
        static CUDA: OnceLock<Result<Device, Error>> = OnceLock::new();
        static CPU: OnceLock<Result<Device, Error>> = OnceLock::new();
        let (cell, open): (_, fn() -> Result<Device, Error>) = match backend {
            Backend::Wgpu => (&WGPU, open_wgpu),
            Backend::Cuda => (&CUDA, open_cuda),
            Backend::Cpu => (&CPU, open_cpu),
        };
        cell.get_or_init(open).as_ref().map_err(Clone::clone)
    }
}

fn choose_default() -> Result<Backend, Error> {
    if let Ok(name) = std::env::var("STRIDEX_BACKEND") {
        let backend = Backend::from_name(&name).ok_or_else(|| {
            Error::NoDevice(format!("STRIDEX_BACKEND={name} is not one of wgpu, vulkan, gl, cuda, cpu"))
        })?;
        if name.eq_ignore_ascii_case("vulkan") && !cfg!(feature = "vulkan") {
            return Err(Error::NoDevice(
                "STRIDEX_BACKEND=vulkan needs stridex built with the `vulkan` feature".into(),
            ));
        }
        Device::open(backend)?;
        return Ok(backend);
    }
    if cfg!(feature = "cuda") {
        match Device::open(Backend::Cuda) {
            Ok(_) => return Ok(Backend::Cuda),
            Err(e) if cfg!(any(feature = "wgpu", feature = "cpu")) => {
                eprintln!("stridex: CUDA is built in but unavailable ({e}); falling back");
            }
            Err(e) => return Err(e),
        }
    }
    // No GPU: CubeCL's CPU runtime, where built, moves these kernels' bytes faster than a
    // software wgpu adapter (lavapipe) on the same cores (bench/RESULTS.md, both tables).
    if cfg!(feature = "cpu") && !wgpu_has_gpu() && Device::open(Backend::Cpu).is_ok() {
        return Ok(Backend::Cpu);
    }
    Device::open(Backend::Wgpu)?;
    Ok(Backend::Wgpu)
}

#[cfg(feature = "wgpu")]
fn open_wgpu() -> Result<Device, Error> {
    use cubecl::wgpu::{try_init_setup, OpenGl, RuntimeOptions, Vulkan, WgpuDevice, WgpuInitError};
    let probe = |backends: wgpu::Backends| {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        !cubecl::future::block_on(instance.enumerate_adapters(backends)).is_empty()
    };
    // Set up once per process (`Device::open` caches it). Burn's default wgpu device is this
    // one too, so a client either side set up first is shared.
    let device = WgpuDevice::default();
    let options = RuntimeOptions::try_default().map_err(|e| Error::NoDevice(format!("wgpu: {e}")))?;
    // wgpu's GL backend is what runs where no Vulkan driver exists; STRIDEX_BACKEND=gl forces it.
    let force_gl = std::env::var("STRIDEX_BACKEND")
        .is_ok_and(|b| matches!(b.to_ascii_lowercase().as_str(), "gl" | "opengl"));
    let setup = if !force_gl && probe(wgpu::Backends::VULKAN) {
        quietly(|| try_init_setup::<Vulkan>(&device, options))
    } else if probe(wgpu::Backends::GL) {
        quietly(|| try_init_setup::<OpenGl>(&device, options))
    } else {
        return Err(Error::NoDevice(
            "wgpu found no Vulkan or OpenGL adapter; on Debian/Ubuntu without a GPU driver, \
             `apt-get install mesa-vulkan-drivers libvulkan1` provides lavapipe (Vulkan on the CPU)"
                .into(),
        ));
    };
    let compiler = |backend| {
        if cfg!(feature = "vulkan") && backend == wgpu::Backend::Vulkan {
            "SPIR-V"
        } else {
            "WGSL"
        }
    };
    let setup = match setup {
        Ok(Ok(setup)) => setup,
        // Another library in the process (Burn, say) set wgpu's default device up first:
        // stridex launches on that client, as Burn does on one stridex set up.
        Ok(Err(WgpuInitError::Registration { .. })) => {
            let device = cubecl::Device::Wgpu(device);
            let description = format!("wgpu ({}), set up before stridex", device.client().name());
            return Ok(Device::new(device, Backend::Wgpu, description));
        }
        Ok(Err(e)) => return Err(Error::NoDevice(format!("wgpu could not open its adapter: {e}"))),
        Err(panic) => {
            return Err(Error::NoDevice(format!(
                "wgpu could not open its adapter: {}",
                panic_message(&*panic)
            )))
        }
    };
    let info = setup.adapter.get_info();
    let compiler = compiler(info.backend);
    Ok(Device::new(
        cubecl::Device::Wgpu(device),
        Backend::Wgpu,
        format!(
            "wgpu/{:?}: {} ({:?}, driver {} {}), {compiler}",
            info.backend, info.name, info.device_type, info.driver, info.driver_info
        ),
    ))
}

/// Whether wgpu sees a GPU (an adapter that is not a CPU, as lavapipe is), without setting
/// anything up.
#[cfg(feature = "wgpu")]
fn wgpu_has_gpu() -> bool {
    let backends = wgpu::Backends::VULKAN | wgpu::Backends::GL;
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = cubecl::future::block_on(instance.enumerate_adapters(backends));
    adapters.iter().any(|a| a.get_info().device_type != wgpu::DeviceType::Cpu)
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_has_gpu() -> bool {
    false
}

/// What a caught panic said.
#[cfg(feature = "wgpu")]
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    let message =
        panic.downcast_ref::<String>().map(String::as_str).or(panic.downcast_ref::<&str>().copied());
    message.unwrap_or("(no message)")
}

/// `f`, its panic caught and not printed: CubeCL's setup panics where it cannot open an adapter
/// or where a client of the device exists already (both answered here, the first as an `Err`
/// that quotes it), and the default hook would print a backtrace for either. Once per process.
#[cfg(feature = "wgpu")]
fn quietly<T>(f: impl FnOnce() -> T + std::panic::UnwindSafe) -> std::thread::Result<T> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(f);
    std::panic::set_hook(hook);
    result
}

#[cfg(not(feature = "wgpu"))]
fn open_wgpu() -> Result<Device, Error> {
    Err(Error::NoDevice("stridex was built without the `wgpu` feature".into()))
}

#[cfg(feature = "cuda")]
fn open_cuda() -> Result<Device, Error> {
    use cubecl::cuda::CudaDevice;
    // cudarc panics when libcuda or NVRTC is missing, and CubeCL panics when the toolkit
    // headers are: check all of them before creating a client.
    // SAFETY: these only try to dlopen the libraries.
    let libs = unsafe { cudarc::driver::sys::is_culib_present() && cudarc::nvrtc::sys::is_culib_present() };
    if !libs {
        return Err(Error::NoDevice("no CUDA driver (libcuda) or NVRTC library found".into()));
    }
    if cubecl::cuda::install::cuda_path().is_none() {
        return Err(Error::NoDevice(
            "no CUDA toolkit headers found (set CUDA_PATH); NVRTC needs them to compile kernels".into(),
        ));
    }
    cudarc::driver::result::init().map_err(|e| Error::NoDevice(format!("cuInit failed: {e:?}")))?;
    let count = cudarc::driver::result::device::get_count()
        .map_err(|e| Error::NoDevice(format!("cuDeviceGetCount failed: {e:?}")))?;
    if count < 1 {
        return Err(Error::NoDevice("the CUDA driver reports no device".into()));
    }
    let name = cudarc::driver::CudaContext::new(0)
        .ok()
        .and_then(|c| c.name().ok())
        .unwrap_or_else(|| "CUDA device 0".into());
    let device = cubecl::Device::Cuda(CudaDevice::new(0));
    std::panic::catch_unwind(|| device.client())
        .map_err(|_| Error::NoDevice("CubeCL could not create a CUDA client".into()))?;
    Ok(Device::new(device, Backend::Cuda, format!("cuda: {name}")))
}

#[cfg(not(feature = "cuda"))]
fn open_cuda() -> Result<Device, Error> {
    Err(Error::NoDevice("stridex was built without the `cuda` feature".into()))
}

#[cfg(feature = "cpu")]
fn open_cpu() -> Result<Device, Error> {
    use cubecl::cpu::CpuDevice;
    let device = cubecl::Device::Cpu(CpuDevice);
    std::panic::catch_unwind(|| device.client())
        .map_err(|_| Error::NoDevice("CubeCL could not create a CPU client".into()))?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    Ok(Device::new(device, Backend::Cpu, format!("cpu: CubeCL's LLVM runtime, {threads} threads")))
}

#[cfg(not(feature = "cpu"))]
fn open_cpu() -> Result<Device, Error> {
    Err(Error::NoDevice("stridex was built without the `cpu` feature".into()))
}
