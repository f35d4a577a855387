//! stridex-bench: effective bandwidth ((bytes read + bytes written) / time) of stridex's kernels
//! beside a plain vectorized copy of the same bytes and beside Burn's matching op, all on one
//! device and one CubeCL client, in one run.
//!
//! Chains (`chains.rs`) run fused, stage by stage and in Burn, each over its own bytes. Ops
//! whose leading size is `_` (`dynamic.rs`) run against ops written for each count.
//!
//! `cargo run --release -p stridex-bench` prints a table; `-- --json` one JSON object per case
//! and line; `-- --quick` fewer repetitions (every case still at full size); `-- --write DIR`
//! also writes `DIR/RESULTS.md` and `DIR/results.svg`.
//!
//! Every figure is the median of synced launches after warm-up, and every case checks its
//! output (stridex's and Burn's) once against a host computation: lavapipe caps a buffer at
//! 128 MiB, and a launch that failed surfaces only when its output is read.

mod cases;
mod chains;
mod chart;
mod concurrency;
mod dynamic;
mod interop;
mod measure;
mod report;

use measure::Settings;
use stridex::cubecl::Runtime;

fn main() {
    // Mesa's on-disk shader cache would hand a later run the kernels an earlier run compiled:
    // the first use of a shape (dynamic.rs) is then timed as on a machine that never saw it.
    // Set before the device is opened; steady-state figures are after warm-up either way.
    if std::env::var_os("MESA_SHADER_CACHE_DISABLE").is_none() {
        std::env::set_var("MESA_SHADER_CACHE_DISABLE", "true");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    if flag("--help") || flag("-h") {
        println!("usage: stridex-bench [--json] [--quick] [--write DIR] [--only NAME,..]");
        return;
    }
    let value = |f: &str| args.iter().position(|a| a == f).and_then(|i| args.get(i + 1)).cloned();
    let settings = Settings {
        reps: if flag("--quick") { 9 } else { 21 },
        concurrency_secs: if flag("--quick") { 1.5 } else { 4.0 },
        json: flag("--json"),
        only: value("--only").map(|s| s.split(',').map(str::to_owned).collect()),
    };
    let device = match stridex::Device::default_device() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("stridex-bench: {e} (scripts/install-vulkan.sh installs lavapipe)");
            std::process::exit(2);
        }
    };
    if !settings.json {
        println!("device: {}", device.description());
    }
    let results = match device.backend() {
        stridex::Backend::Wgpu => {
            use stridex::cubecl::wgpu::{WgpuDevice, WgpuRuntime};
            let d = WgpuDevice::DefaultDevice;
            run::<WgpuRuntime>(&settings, &WgpuRuntime::client(&d), &d)
        }
        #[cfg(feature = "cuda")]
        stridex::Backend::Cuda => {
            use stridex::cubecl::cuda::{CudaDevice, CudaRuntime};
            let d = CudaDevice::new(0);
            run::<CudaRuntime>(&settings, &CudaRuntime::client(&d), &d)
        }
        other => {
            eprintln!("stridex-bench: no benchmark for {other:?}");
            std::process::exit(2);
        }
    };
    if let Some(dir) = value("--write") {
        let dir = std::path::Path::new(&dir);
        let md = report::markdown(device.description(), &settings, &results);
        std::fs::write(dir.join("RESULTS.md"), md).expect("write RESULTS.md");
        std::fs::write(dir.join("results.svg"), chart::svg(&results.cases)).expect("write results.svg");
        eprintln!("wrote {}/RESULTS.md and results.svg", dir.display());
    }
}

fn run<R: Runtime>(
    settings: &Settings,
    client: &stridex::cubecl::client::ComputeClient<R>,
    device: &R::Device,
) -> report::Results
where
    R::Device: burn::tensor::backend::DeviceOps,
{
    let mut results = report::Results::default();
    let env = measure::Env { client, device, settings };
    // The first large buffers of a process fault their pages in and the CPU clocks up: measured
    // before this warm-up, the first case read 25% slower than when run alone.
    env.warm_up();
    for case in cases::all::<R>() {
        if settings.only.as_ref().is_some_and(|o| !o.iter().any(|n| case.0.contains(n.as_str()))) {
            continue;
        }
        let outcome = (case.1)(&env);
        if settings.json {
            println!("{}", report::json_line(&outcome));
        } else {
            report::print_row(&outcome, results.cases.is_empty());
        }
        results.cases.push(outcome);
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "chains")) {
        for c in chains::all(&env) {
            if settings.json {
                println!("{}", report::chain_json(&c));
            } else {
                report::print_chain(&c, results.chains.is_empty());
            }
            results.chains.push(c);
        }
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "dynamic")) {
        for d in dynamic::all(&env) {
            if settings.json {
                println!("{}", dynamic::json(&d));
            } else {
                dynamic::print(&d, results.dynamic.is_empty());
            }
            results.dynamic.push(d);
        }
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "interop")) {
        for i in interop::all(&env) {
            if settings.json {
                println!("{}", interop::json(&i));
            } else {
                interop::print(&i, results.interop.is_empty());
            }
            results.interop.push(i);
        }
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "probes")) {
        let p = env.probes();
        if settings.json {
            println!("{}", report::probes_json(&p));
        } else {
            report::print_probes(&p);
        }
        results.probes = Some(p);
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "concurrency")) {
        let c = concurrency::run(settings);
        if settings.json {
            println!("{}", report::concurrency_json(&c));
        } else {
            report::print_concurrency(&c);
        }
        results.concurrency = Some(c);
    }
    results
}
