//! `explain` builds a kernel's definition without a device, the way CubeCL 0.10's generated
//! launcher does (`backends/src/explain.rs`). This checks, on a device, that the hand-built
//! definition and CubeCL's own (`<Kernel>::new(settings, client, ..).define()`, which needs a
//! client) compile to the same WGSL, so an upgrade of CubeCL that changes its launcher fails
//! here instead of making `explain` show a kernel that is not the one launched.

use stridex::core::kernel::{RowWalk, Walk};
use stridex::cubecl::prelude::*;
use stridex::cubecl::wgpu::{WgpuDevice, WgpuRuntime};
use stridex::cubecl::{Compiler, WgpuCompilationOptions};
use stridex::{Device, Dialect};
use stridex_backends::kernels::{gather_kernel, rows_kernel, slice_kernel};

const CUBE_DIM: u32 = 256;

fn settings() -> KernelSettings {
    KernelSettings::default().cube_dim(CubeDim::new_1d(CUBE_DIM)).address_type(AddressType::U32)
}

fn wgsl(def: KernelDefinition) -> String {
    stridex::cubecl::wgpu::WgslCompiler::default()
        .compile(
            def,
            &WgpuCompilationOptions::default(),
            ExecutionMode::Unchecked,
            AddressType::U32.unsigned_type(),
        )
        .expect("compiles")
        .to_string()
}

/// WGSL with its local variable declarations in a fixed order: CubeCL lists them in an order
/// that depends on how the definition was built, which says nothing about the kernel.
fn normalized(source: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut vars, body): (Vec<&str>, Vec<&str>) = source.lines().partition(|l| l.starts_with("var l_"));
    vars.sort_unstable();
    (vars, body)
}

fn client() -> ComputeClient<WgpuRuntime> {
    let device = Device::default_device().expect("a device");
    assert_eq!(device.backend(), stridex::Backend::Wgpu, "this test runs CubeCL's wgpu launcher");
    WgpuRuntime::client(&WgpuDevice::DefaultDevice)
}

fn array() -> ArrayCompilationArg {
    ArrayCompilationArg { inplace: None }
}

fn rows(c: &ComputeClient<WgpuRuntime>, w: &RowWalk) -> String {
    let (ni, no) = (w.src_line() as usize, w.line as usize);
    let kernel = rows_kernel::RowsKernel::<WgpuRuntime>::new(
        settings(),
        c.clone(),
        array(),
        array(),
        array(),
        array(),
        array(),
        array(),
        array(),
        (),
        ni,
        no,
        w.count_free(),
    );
    wgsl(kernel.define())
}

#[test]
fn explain_builds_the_kernel_cubecl_launches() {
    let c = client();
    let gathers = [
        stridex::Gather::onnx().data::<f32>(&[64, 32]).indices::<i64>(&[8]).build().unwrap(),
        stridex::Gather::onnx().data::<f32>(&[64, 32]).indices::<i64>(&[8]).axis(1).build().unwrap(),
        stridex::Gather::onnx()
            .data::<f32>(&[4, 3])
            .indices::<i64>(&[2])
            .output(&[2, 3], Some(&[1, 2]))
            .build()
            .unwrap(),
    ];
    for op in &gathers {
        let k = op.kernel().unwrap().unwrap();
        let theirs = match &k.walk {
            Walk::Rows(w) => rows(&c, w),
            Walk::Slots(m) => {
                let n = m.line as usize;
                let kernel = gather_kernel::GatherKernel::<WgpuRuntime>::new(
                    settings(),
                    c.clone(),
                    array(),
                    array(),
                    array(),
                    array(),
                    (),
                    (),
                    n,
                    m.count_free(),
                    k.index,
                );
                wgsl(kernel.define())
            }
        };
        let ours = op.kernel_source(Dialect::Wgsl).unwrap().unwrap();
        assert_eq!(normalized(&ours), normalized(&theirs), "{k:?}");
    }
    let slices = [
        stridex::Slice::directml().input::<f32>(&[8, 8]).window(&[0, 0], &[8, 8], &[-1, 1]).build().unwrap(),
        stridex::Slice::directml()
            .input::<f32>(&[5, 5])
            .window(&[0, 0], &[5, 5], &[1, 2])
            .output(&[5, 3], Some(&[1, 5]))
            .build()
            .unwrap(),
    ];
    for op in &slices {
        let k = op.kernel().unwrap().unwrap();
        let theirs = match &k.walk {
            Walk::Rows(w) => rows(&c, w),
            Walk::Slots(m) => {
                let n = m.line as usize;
                let kernel = slice_kernel::SliceKernel::<WgpuRuntime>::new(
                    settings(),
                    c.clone(),
                    array(),
                    array(),
                    array(),
                    (),
                    (),
                    n,
                    m.count_free(),
                );
                wgsl(kernel.define())
            }
        };
        let ours = op.kernel_source(Dialect::Wgsl).unwrap().unwrap();
        assert_eq!(normalized(&ours), normalized(&theirs), "{k:?}");
    }
}
