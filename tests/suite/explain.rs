//! `explain` builds a kernel's definition without a device, from the kernel struct CubeCL's
//! `#[cube]` macro generates and offline device properties (`backends/src/explain.rs`). This
//! checks, on a device, that the definition built with the device's own properties (what the
//! launcher does) compiles to the same WGSL, so neither the offline properties nor a CubeCL
//! upgrade can make `explain` show a kernel that is not the one launched.

use std::sync::Arc;
use stridex::core::kernel::{RowWalk, Walk};
use stridex::cubecl::client::Client;
use stridex::cubecl::prelude::*;
use stridex::cubecl::{Compiler, WgpuCompilationOptions};
use stridex::{Device, Dialect};
use stridex_backends::kernels::{gather_kernel, rows_kernel, slice_kernel};

const CUBE_DIM: u32 = 256;

/// What `launch_unchecked` sets.
fn settings() -> KernelSettings {
    KernelSettings::new(CubeDim::new_1d(CUBE_DIM).into(), ExecutionMode::Unchecked, AddressType::U32)
}

fn wgsl(def: KernelDefinition) -> String {
    stridex::cubecl::wgpu::WgslCompiler
        .compile(def, &WgpuCompilationOptions::default())
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

fn client() -> Client {
    let device = Device::default_device().expect("a device");
    assert_eq!(device.backend(), stridex::Backend::Wgpu, "this test compiles WGSL as the wgpu runtime does");
    device.client().clone()
}

const BUFFER: BufferCompilationArg = BufferCompilationArg { inplace: None };

fn props(c: &Client) -> (Arc<DeviceProperties>, Arc<TargetProperties>) {
    (c.properties_shared(), c.target_properties_shared())
}

fn rows(c: &Client, w: &RowWalk) -> String {
    let (ni, no) = (w.src_line() as usize, w.line as usize);
    let (device, target) = props(c);
    // Off the CPU runtime the launcher spreads tiles only where STRIDEX_TILE says (wgpu).
    let mut free = w.specialized();
    free.spread = std::env::var("STRIDEX_TILE").as_deref() == Ok("spread");
    let kernel = rows_kernel::RowsKernel::<u32>::new(
        settings(),
        device,
        target,
        BUFFER,
        BUFFER,
        BUFFER,
        BUFFER,
        BUFFER,
        BUFFER,
        BUFFER,
        (),
        (),
        ni,
        no,
        free,
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
            Walk::Convert(_) => unreachable!("single ops take the row or slot walk"),
            Walk::Slots(m) => {
                let n = m.line as usize;
                let (device, target) = props(&c);
                let kernel = gather_kernel::GatherKernel::new(
                    settings(),
                    device,
                    target,
                    BUFFER,
                    BUFFER,
                    BUFFER,
                    BUFFER,
                    (),
                    (),
                    n,
                    m.specialized(),
                    k.reads.clone(),
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
            Walk::Convert(_) => unreachable!("single ops take the row or slot walk"),
            Walk::Slots(m) => {
                let n = m.line as usize;
                let (device, target) = props(&c);
                let kernel = slice_kernel::SliceKernel::new(
                    settings(),
                    device,
                    target,
                    BUFFER,
                    BUFFER,
                    BUFFER,
                    (),
                    (),
                    n,
                    m.specialized(),
                );
                wgsl(kernel.define())
            }
        };
        let ours = op.kernel_source(Dialect::Wgsl).unwrap().unwrap();
        assert_eq!(normalized(&ours), normalized(&theirs), "{k:?}");
    }
}
