//! Prints the kernel a descriptor expands to: `cargo run --example explain -- [--dialect D]
//! <macro> '<keys>'`, where `<macro>` is one of `gather`, `gather_elements`, `gather_nd`,
//! `slice`, `chain`, `scatter`, `scatter_elements` or `scatter_nd`, with the keys exactly as
//! inside that macro's braces.
//!
//! ```sh
//! cargo run --example explain -- gather 'rules: onnx, data: f32[3, 2], indices: i64[2, 2], axis: 0'
//! cargo run --example explain -- --dialect spirv slice 'input: u8[4, 4], offsets: [0, 1], sizes: [4, 3], strides: [-1, 2]'
//! cargo run --features cuda --example explain -- --dialect sm_90 gather 'data: f16[8, 64], indices: i32[16]'
//! cargo run --example explain -- chain 'data: f32[100, 16], gather { indices: i64[8, 12] }, slice { rules: onnx, starts: [-1], ends: [12], axes: [1] }'
//! cargo run --example explain -- describe slice 'input: f32[1, 1, 4, 4], offsets: [0, 0, 0, 1], sizes: [1, 1, 4, 3], strides: [1, 1, -2, 2]'
//! cargo run --example explain -- scatter_elements 'data: f32[4096, 4096], indices: i32[4096, 512], updates: f32[4096, 512], axis: 1, reduction: add'
//! ```
//! `describe` prints the layout a person reads (`op.describe()`) instead of the kernel.
//! Dialects: `wgsl` (default), `spirv` (feature `vulkan`), `cuda` / `sm_80` / `sm_90` (feature
//! `cuda`; no GPU needed). The descriptor is read by the macros' own front end
//! (`stridex-syntax`), so the text means exactly what the macros read.

use stridex::explain::{chain_source, gather_source, scatter_source, slice_source};
use stridex::{Dialect, GatherDesc, GatherForm};

const MACROS: &str = "gather|gather_elements|gather_nd|slice|chain|scatter|scatter_elements|scatter_nd";

fn usage() -> ! {
    eprintln!(
        "usage: explain [--dialect wgsl|spirv|cuda|sm_80|sm_90] {MACROS} '<keys as in the macro>'\n       \
         explain describe {MACROS} '<keys as in the macro>'   (the rules' reading)"
    );
    std::process::exit(2)
}

/// A gather form's front end: its keys as text to a checked descriptor.
type GatherFront = fn(&str) -> Result<GatherDesc, String>;

/// The gather forms' front ends by macro name.
fn gather_front(op: &str) -> Option<GatherFront> {
    match op {
        "gather" => Some(stridex_syntax::gather_str),
        "gather_elements" => Some(stridex_syntax::gather_elements_str),
        "gather_nd" => Some(stridex_syntax::gather_nd_str),
        _ => None,
    }
}

/// The scatter forms by macro name.
fn scatter_form(op: &str) -> Option<GatherForm> {
    match op {
        "scatter" => Some(GatherForm::Axis),
        "scatter_elements" => Some(GatherForm::Elements),
        "scatter_nd" => Some(GatherForm::Nd),
        _ => None,
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut dialect = Dialect::Wgsl;
    if let Some(i) = args.iter().position(|a| a == "--dialect") {
        let name = args.get(i + 1).cloned().unwrap_or_else(|| usage());
        dialect = Dialect::from_name(&name).unwrap_or_else(|| usage());
        args.drain(i..i + 2);
    }
    if args.first().is_some_and(|a| a == "describe") {
        describe(&args[1..]);
    }
    let (Some(op), true) = (args.first(), args.len() >= 2) else { usage() };
    let text = args[1..].join(" ");
    let result = match (op.as_str(), gather_front(op), scatter_form(op)) {
        (_, Some(front), _) => front(&text).map(|desc| {
            println!("// {desc:?}");
            if let Ok(plan) = desc.plan() {
                println!(
                    "// output shape {:?}, kernel {:?}",
                    plan.output.sizes,
                    stridex::core::kernel::GatherKernelDesc::new(&plan)
                );
            }
            gather_source(&desc, dialect)
        }),
        ("slice", ..) => stridex_syntax::slice_str(&text).map(|desc| {
            println!("// {desc:?}");
            if let Ok(plan) = desc.plan() {
                println!(
                    "// output shape {:?}, kernel {:?}",
                    plan.output.sizes,
                    stridex::core::kernel::SliceKernelDesc::new(&plan)
                );
            }
            slice_source(&desc, dialect)
        }),
        ("chain", ..) => stridex_syntax::chain_str(&text).map(|desc| {
            println!("// {desc:?}");
            if let Ok(plan) = desc.plan() {
                for (i, stage) in plan.stages.iter().enumerate() {
                    println!("// stage {} output {:?}", i + 1, stage.output().sizes);
                }
                match stridex::core::ChainKernelDesc::new(&plan) {
                    Ok(k) => println!("// fused into one kernel: {k:?}"),
                    Err(cause) => println!("// runs stage by stage: {cause}"),
                }
            }
            chain_source(&desc, dialect)
        }),
        (_, _, Some(form)) => stridex_syntax::scatter_str(&text, form).map(|desc| {
            println!("// {desc:?}");
            scatter_source(&desc, dialect)
        }),
        _ => usage(),
    };
    match result {
        Ok(Ok(Some(source))) => println!("{source}"),
        Ok(Ok(None)) => println!("// the output is empty: no kernel is launched"),
        Ok(Err(e)) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    }
}

/// `describe <macro> '<keys>'`: the descriptor's layout as `op.describe()` gives it.
fn describe(args: &[String]) -> ! {
    use stridex::core::describe;
    let (Some(op), true) = (args.first(), args.len() >= 2) else { usage() };
    let text = args[1..].join(" ");
    let described = match (op.as_str(), gather_front(op), scatter_form(op)) {
        (_, Some(front), _) => front(&text).map(|d| d.plan().map(|p| describe::gather(&d, &p))),
        (_, _, Some(form)) => {
            stridex_syntax::scatter_str(&text, form).map(|d| d.plan().map(|p| describe::scatter(&d, &p)))
        }
        ("slice", ..) => stridex_syntax::slice_str(&text).map(|d| d.plan().map(|p| describe::slice(&d, &p))),
        ("chain", ..) => stridex_syntax::chain_str(&text).map(|d| d.plan().map(|p| describe::chain(&d, &p))),
        _ => usage(),
    };
    match described {
        Ok(Ok(text)) => {
            print!("{text}");
            std::process::exit(0)
        }
        Ok(Err(e)) => eprintln!("error: {e}"),
        Err(e) => eprintln!("error: {e}"),
    }
    std::process::exit(1)
}
