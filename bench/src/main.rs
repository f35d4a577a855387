//! stridex-bench: effective bandwidth ((bytes read + bytes written) / time) of stridex's kernels
//! beside a plain vectorized copy of the same bytes, beside Burn's matching op and beside plain
//! Rust on the host computing the same output, all on one device and one CubeCL client, in one
//! run.
//!
//! Chains (`chains.rs`) run fused, stage by stage and in Burn, each over its own bytes. Ops
//! whose leading size is `_` (`dynamic.rs`) run against ops written for each count.
//!
//! `cargo run --release -p stridex-bench` prints a table; `-- --json` one JSON object per case
//! and line; `-- --quick` fewer repetitions (every case still at full size); `-- --write DIR`
//! also writes `DIR/RESULTS.md` and `DIR/results.svg` (`RESULTS-cpu.md` and `results-cpu.svg` for
//! `--backend cpu`, likewise `-cuda`); `-- --only NAME,..` runs the cases whose
//! names contain one of the NAMEs (and `chains`, `dynamic`, `first-use`, `interop`,
//! `backward-parts`, `probes`, `concurrency` by those names).
//!
//! `-- --backend wgpu|cpu|cuda` picks the device every case runs on (`stridex::Device::open`;
//! without it, `stridex::Device::default_device()`): `cpu` is CubeCL's CPU runtime and needs
//! `--features cpu` (and the LLVM bundle, `scripts/install-llvm.sh`), `cuda` needs
//! `--features cuda`. Burn's peer runs on the same runtime: Burn 0.22.1's `Tensor` ops on its
//! CubeCL device (wgpu's default device, which shares stridex's client; the CPU runtime; CUDA
//! device 0), in Burn's fusion stream. On `cpu` the headline cases also run Burn's pure-Rust
//! CPU backend (Flex), and report the faster of the two.
//!
//! Every figure is the median of synced launches after warm-up (a headline case times its
//! columns round by round, `measure::medians`, so that drift slows them alike), and every case
//! checks its output (stridex's, Burn's and Rust's) once against a host computation: lavapipe
//! caps a buffer at 128 MiB, and a launch that failed surfaces only when its output is read.

mod backward_parts;
mod cases;
mod chains;
mod chart;
mod concurrency;
mod dynamic;
mod first_use;
mod interop;
mod measure;
mod report;
mod scatters;

use measure::{backend_name, Env, Peer, Settings};
use stridex::cubecl;
use stridex::Backend;

const USAGE: &str =
    "usage: stridex-bench [--backend wgpu|cpu|cuda] [--json] [--quick] [--write DIR] [--only NAME,..]\n\
    \n\
    --backend B   run every case on B: wgpu (Vulkan/GL; lavapipe without a GPU), cpu (CubeCL's CPU\n\
    \x20             runtime; build with --features cpu), cuda (build with --features cuda).\n\
    \x20             Without it: stridex's default device (STRIDEX_BACKEND, else CUDA if built in\n\
    \x20             and present, else wgpu).\n\
    --json        one JSON object per case and line (each with \"backend\" and \"rust_gbps\")\n\
    --quick       fewer repetitions (every case still at full size)\n\
    --write DIR   also write DIR/RESULTS.md and DIR/results.svg (RESULTS-cpu.md.. for cpu, cuda)\n\
    --only N,..   only the cases whose names contain one of N (or chains, dynamic, first-use,\n\
    \x20             interop, backward-parts, probes, concurrency)";

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
        println!("{USAGE}");
        return;
    }
    let value = |f: &str| args.iter().position(|a| a == f).and_then(|i| args.get(i + 1)).cloned();
    let settings = Settings {
        reps: if flag("--quick") { 9 } else { 21 },
        concurrency_secs: if flag("--quick") { 1.5 } else { 4.0 },
        json: flag("--json"),
        only: value("--only").map(|s| s.split(',').map(str::to_owned).collect()),
    };
    let opened = match value("--backend").as_deref() {
        None if flag("--backend") => {
            eprintln!("stridex-bench: --backend needs a value\n{USAGE}");
            std::process::exit(2);
        }
        None => stridex::Device::default_device(),
        Some(name) => {
            let backend = match name.to_ascii_lowercase().as_str() {
                "wgpu" => Backend::Wgpu,
                "cpu" => Backend::Cpu,
                "cuda" => Backend::Cuda,
                _ => {
                    eprintln!("stridex-bench: unknown backend `{name}`\n{USAGE}");
                    std::process::exit(2);
                }
            };
            stridex::Device::open(backend)
        }
    };
    let device = match opened {
        Ok(d) => d,
        Err(e) => {
            eprintln!(
                "stridex-bench: {e} (scripts/install-vulkan.sh installs lavapipe; --backend cpu needs \
                 --features cpu, --backend cuda --features cuda)"
            );
            std::process::exit(2);
        }
    };
    if !settings.json {
        println!("device: {} (backend {})", device.description(), backend_name(device.backend()));
    }
    let results = run(&settings, device);
    if let Some(dir) = value("--write") {
        let dir = std::path::Path::new(&dir);
        // wgpu's run is RESULTS.md (what CI machines and most users have); another backend's
        // is RESULTS-<backend>.md beside it.
        let suffix = match results.backend {
            "wgpu" => String::new(),
            other => format!("-{other}"),
        };
        let (md_name, svg_name) = (format!("RESULTS{suffix}.md"), format!("results{suffix}.svg"));
        let md = report::markdown(device.description(), &settings, &results);
        std::fs::write(dir.join(&md_name), md).expect("write the results");
        std::fs::write(dir.join(&svg_name), chart::svg(&results.cases)).expect("write the chart");
        eprintln!("wrote {}/{md_name} and {svg_name}", dir.display());
    }
}

/// The CubeCL device of `backend` (the one stridex's client is for) and the Burn devices the
/// headline cases run Burn's peer op on: Burn's CubeCL device of the same runtime, and on the
/// CPU runtime also Flex.
fn burn_devices(backend: Backend) -> (cubecl::Device, Vec<Peer>) {
    use stridex::cubecl::device::{CpuDevice, CudaDevice, WgpuDevice};
    let (cube, name) = match backend {
        // Burn's default wgpu device (`Device::default()` under wgpu): the id stridex set its
        // client up on, so Burn launches on stridex's client.
        Backend::Wgpu => (cubecl::Device::Wgpu(WgpuDevice::default()), "CubeCL wgpu"),
        // `burn::tensor::Device::cpu()`, named through the CubeCL device it wraps.
        Backend::Cpu => (cubecl::Device::Cpu(CpuDevice), "CubeCL CPU"),
        Backend::Cuda => (cubecl::Device::Cuda(CudaDevice::new(0)), "CubeCL CUDA"),
    };
    let mut peers = vec![Peer { name, device: burn::tensor::Device::new(cube.clone()) }];
    if backend == Backend::Cpu {
        peers.push(Peer { name: "Flex", device: burn::tensor::Device::flex() });
    }
    (cube, peers)
}

fn run(settings: &Settings, device: &'static stridex::Device) -> report::Results {
    let backend = backend_name(device.backend());
    let (cube, peers) = burn_devices(device.backend());
    let env = Env {
        stridex: device,
        client: device.client(),
        cube,
        device: peers[0].device.clone(),
        peers,
        settings,
    };
    let mut results = report::Results { backend, ..Default::default() };
    // The first large buffers of a process fault their pages in and the CPU clocks up: measured
    // before this warm-up, the first case read 25% slower than when run alone.
    env.warm_up();
    for case in cases::all() {
        if settings.only.as_ref().is_some_and(|o| !o.iter().any(|n| case.0.contains(n.as_str()))) {
            continue;
        }
        let outcome = (case.1)(&env);
        if settings.json {
            println!("{}", report::json_line(&outcome, backend));
        } else {
            report::print_row(&outcome, results.cases.is_empty(), backend);
        }
        results.cases.push(outcome);
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "chains")) {
        for c in chains::all(&env) {
            if settings.json {
                println!("{}", report::chain_json(&c, backend));
            } else {
                report::print_chain(&c, results.chains.is_empty());
            }
            results.chains.push(c);
        }
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "dynamic")) {
        for d in dynamic::all(&env) {
            if settings.json {
                println!("{}", dynamic::json(&d, backend));
            } else {
                dynamic::print(&d, results.dynamic.is_empty());
            }
            results.dynamic.push(d);
        }
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "first-use")) {
        let f = first_use::run();
        if settings.json {
            f.iter().for_each(|f| println!("{}", first_use::json(f)));
        } else {
            first_use::print(&f);
        }
        results.first_use = f;
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "interop")) {
        for i in interop::all(&env) {
            if settings.json {
                println!("{}", interop::json(&i, backend));
            } else {
                interop::print(&i, results.interop.is_empty());
            }
            results.interop.push(i);
        }
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "backward-parts")) {
        let p = backward_parts::run(&env);
        if settings.json {
            println!("{}", backward_parts::json(&p, backend));
        } else {
            backward_parts::print(&p);
        }
        results.backward_parts = Some(p);
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "probes")) {
        let p = env.probes();
        if settings.json {
            println!("{}", report::probes_json(&p, backend));
        } else {
            report::print_probes(&p);
        }
        results.probes = Some(p);
    }
    if settings.only.as_ref().is_none_or(|o| o.iter().any(|n| n == "concurrency")) {
        let c = concurrency::run(settings, env.stridex);
        if settings.json {
            println!("{}", report::concurrency_json(&c, backend));
        } else {
            report::print_concurrency(&c);
        }
        results.concurrency = Some(c);
    }
    results
}
