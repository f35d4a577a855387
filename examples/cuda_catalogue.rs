//! Writes the CUDA C++ of a catalogue of descriptors, as CubeCL's CUDA runtime would compile it
//! for sm_80 and sm_90 devices, without a GPU: `cargo run --features cuda --example
//! cuda_catalogue -- OUT_DIR`. `scripts/cuda-offline.py` then compiles each with NVRTC and
//! ptxas and reports what reached the machine code.
//!
//! The catalogue: every seed example, one gather per element width (1, 2, 4, 8 bytes; packed
//! and lane-assembled), vectorized and strided variants, all three out-of-range policies, and
//! slices with negative strides, ops with a `_` leading size, and fused chains (a gather of a
//! gather, gathers on sliced and reversed views, the README's two pipelines), chains that end
//! in `convert` (every source width to f32, f16 and bf16), and scatters (each vector width, the
//! reductions, narrow lanes, every form).

use stridex::core::{ChainDesc, GatherDesc, ScatterDesc, SliceDesc};
use stridex::explain::{chain_source, gather_source, scatter_source, slice_source};
use stridex::half::{bf16, f16};
use stridex::{Chain, Dialect, Gather, OutOfRange, Reduction, Scatter, Slice, SliceRange};

enum Desc {
    Gather(GatherDesc),
    Slice(SliceDesc),
    Chain(ChainDesc),
    Scatter(ScatterDesc),
}

fn g<T, I>(b: Gather<T, I>) -> Desc
where
    T: stridex::Element,
    I: stridex::IndexElement,
{
    Desc::Gather(b.desc().expect("catalogue descriptors are valid"))
}

fn s<T: stridex::Element>(b: Slice<T>) -> Desc {
    Desc::Slice(b.desc().expect("catalogue descriptors are valid"))
}

/// A chain that must fuse into one kernel.
fn c<T: stridex::Element, I: stridex::IndexTypes, O: stridex::Element>(b: Chain<T, I, O>) -> Desc {
    let op = b.build().expect("catalogue descriptors are valid");
    assert!(op.is_fused().unwrap(), "catalogue chains fuse: {:?}", op.desc());
    Desc::Chain(op.desc().clone())
}

/// A chain that ends in a scatter (its kernels: the stages' before it, then the scatter's).
fn cs<T: stridex::Element, I: stridex::IndexTypes>(b: Chain<T, I>) -> Desc {
    Desc::Chain(b.build().expect("catalogue descriptors are valid").desc().clone())
}

/// Every worked example of the source documents (the operator pages' own), from the one table (`stridex::core::seeds`):
/// DirectML's with unsigned indices (its seed's), the others with i32 ones; data f32, and i32
/// for OpenVINO's (its seed's integers).
fn seeds() -> Vec<(String, Desc)> {
    use stridex::core::seeds::{GATHERS, SLICES};
    use stridex::{DType, GatherRules};
    let gathers = GATHERS.iter().map(|s| {
        let (data, index) = match s.rules {
            GatherRules::DirectMl => (DType::F32, DType::U32),
            GatherRules::OpenVino => (DType::I32, DType::I32),
            GatherRules::Onnx => (DType::F32, DType::I64),
        };
        (format!("seed_{}", s.name), Desc::Gather(s.desc(data, index)))
    });
    let slices = SLICES.iter().map(|s| (format!("seed_{}", s.name), Desc::Slice(s.desc(DType::F32))));
    gathers.chain(slices).collect()
}

fn sc<T: stridex::Element, I: stridex::IndexElement>(b: Scatter<T, I>) -> Desc {
    Desc::Scatter(b.desc().expect("catalogue descriptors are valid"))
}

/// A ScatterElements of `T` updates at `I` indices along `axis` under `rules`, the updates
/// the indices' sizes.
fn elements<T: stridex::Element, I: stridex::IndexElement>(
    rules: Scatter,
    data: &[usize],
    indices: &[usize],
    axis: i64,
) -> Scatter<T, I> {
    rules.elements().data::<T>(data).indices::<I>(indices).updates(indices).axis(axis)
}

fn catalogue() -> Vec<(String, Desc)> {
    let mut all = seeds();
    all.extend(others().into_iter().chain(scatters()).map(|(name, d)| (name.to_string(), d)));
    all
}

/// Scatters: 16-, 8- and 4-byte units, 64-bit elements, narrow lanes, every reduction and form.
fn scatters() -> Vec<(&'static str, Desc)> {
    let ov = Scatter::openvino;
    vec![
        (
            "scatter_embedding_add_f32",
            sc(ov()
                .data::<f32>(&[32000, 1024])
                .indices::<i32>(&[64])
                .updates(&[64, 1024])
                .reduction(Reduction::Add)),
        ),
        (
            "scatter_kv_cache_f16",
            sc(ov()
                .data::<f16>(&[4096, 8, 128])
                .indices::<i32>(&[16])
                .updates(&[16, 8, 128])
                .out_of_range(OutOfRange::Skip)),
        ),
        (
            // Fused: the write kernel reads each K row from the QKV rows at a base and a stride.
            "chain_kv_cache_k_of_qkv_f16",
            cs(Chain::data::<f16>(&[64, 3, 8, 128])
                .slice(Slice::onnx().starts_ends(&[1], &[2]).axes(&[1]))
                .scatter(
                    ov().data::<f16>(&[4096, 1, 8, 128]).indices::<i32>(&[64]).out_of_range(OutOfRange::Skip),
                )),
        ),
        (
            // Fused: the gather folded into the grouped kernel's lists; under `zero` its variant
            // that takes an out-of-range row as zeros.
            "chain_moe_combine_zero_rows_f32",
            cs(Chain::data::<f32>(&[64, 256])
                .gather(Gather::onnx().indices::<i32>(&[32]).axis(0).out_of_range(OutOfRange::Zero))
                .scatter(ov().data::<f32>(&[16, 256]).indices::<i32>(&[32]).reduction(Reduction::Add))),
        ),
        (
            "scatter_rows_of_6_max_i32",
            sc(ov().data::<i32>(&[100, 6]).indices::<i64>(&[9]).updates(&[9, 6]).reduction(Reduction::Max)),
        ),
        ("scatter_rows_f64", sc(ov().data::<f64>(&[100, 3]).indices::<i32>(&[9]).updates(&[9, 3]))),
        (
            "scatter_bytes_add_i8",
            sc(ov().data::<i8>(&[50, 4]).indices::<i32>(&[7]).updates(&[7, 4]).reduction(Reduction::Add)),
        ),
        (
            "scatter_rows_mul_bf16",
            sc(ov().data::<bf16>(&[64, 8]).indices::<i32>(&[5]).updates(&[5, 8]).reduction(Reduction::Mul)),
        ),
        (
            "scatter_elements_add_f32",
            sc(elements::<f32, i64>(Scatter::onnx(), &[64, 64], &[64, 8], 1).reduction(Reduction::Add)),
        ),
        (
            "scatter_elements_add_f16",
            sc(elements::<f16, i64>(Scatter::onnx(), &[64, 64], &[64, 8], 1).reduction(Reduction::Add)),
        ),
        (
            // 512 lines: the line kernel, which reads its indices on the device.
            "scatter_elements_lines_max_f32",
            sc(elements::<f32, i64>(Scatter::onnx(), &[512, 64], &[512, 16], 1).reduction(Reduction::Max)),
        ),
        (
            "scatter_elements_mean_i32",
            sc(elements::<i32, i64>(ov(), &[64, 64], &[64, 8], 1).reduction(Reduction::Mean)),
        ),
        (
            "scatter_elements_mean_without_data_i16",
            sc(elements::<i16, i32>(ov(), &[64, 64], &[64, 8], 1)
                .reduction(Reduction::Mean)
                .use_init_val(false)),
        ),
        (
            "scatter_elements_max_without_data_f16",
            sc(elements::<f16, i32>(ov(), &[64, 64], &[8, 64], 0)
                .reduction(Reduction::Max)
                .use_init_val(false)),
        ),
        (
            "scatter_nd_sub_i16",
            sc(ov()
                .nd()
                .data::<i16>(&[16, 16, 32])
                .indices::<i32>(&[10, 2])
                .updates(&[10, 32])
                .reduction(Reduction::Sub)),
        ),
        (
            "scatter_nd_min_f32",
            sc(Scatter::onnx()
                .nd()
                .data::<f32>(&[16, 16, 32])
                .indices::<i64>(&[10, 2])
                .updates(&[10, 32])
                .reduction(Reduction::Min)),
        ),
    ]
}

fn others() -> Vec<(&'static str, Desc)> {
    let ov = Gather::openvino;
    let onnx = Gather::onnx;
    vec![
        (
            "seed_openvino_8_ir",
            g(ov().data::<f32>(&[2, 64, 128]).indices::<i64>(&[2, 32, 21]).axis(1).batch_dims(1)),
        ),
        ("seed_onnx_3_scalar", g(onnx().data::<f32>(&[2, 3, 4]).indices::<i64>(&[]).axis(1))),
        // Seed 004: layouts.
        (
            "seed_layout_column_major",
            s(Slice::directml().input_strided::<u8>(&[2, 3], Some(&[1, 2])).window(
                &[0, 0],
                &[2, 3],
                &[1, 1],
            )),
        ),
        (
            "seed_layout_broadcast",
            s(Slice::directml().input_strided::<u8>(&[2, 3], Some(&[0, 1])).window(
                &[0, 0],
                &[2, 3],
                &[1, 1],
            )),
        ),
        (
            "seed_layout_nhwc",
            s(Slice::directml().input_strided::<f32>(&[1, 3, 3, 5], Some(&[45, 1, 15, 3])).window(
                &[0; 4],
                &[1, 3, 3, 5],
                &[1; 4],
            )),
        ),
        // One gather per element width: whole words (vectorized) and lane-assembled.
        ("width1_rows_u8", g(onnx().data::<u8>(&[256, 64]).indices::<i32>(&[32]))),
        ("width1_lanes_u8", g(onnx().data::<u8>(&[256, 3]).indices::<i32>(&[32]).axis(0))),
        ("width2_rows_f16", g(onnx().data::<f16>(&[1024, 128]).indices::<i64>(&[64]))),
        ("width2_lanes_bf16", g(onnx().data::<bf16>(&[64, 64]).indices::<i64>(&[16]).axis(1))),
        ("width4_embedding_f32", g(onnx().data::<f32>(&[1000, 64]).indices::<i32>(&[32]))),
        ("width8_rows_f64", g(onnx().data::<f64>(&[512, 32]).indices::<i64>(&[16]))),
        ("width8_columns_u64", g(ov().data::<u64>(&[16, 40]).indices::<u64>(&[8]).axis(1))),
        // Strided layouts.
        (
            "strided_permuted_data",
            g(onnx().data_strided::<f32>(&[8, 16, 4], Some(&[4, 32, 1])).indices::<i64>(&[5]).axis(1)),
        ),
        (
            "strided_padded_output",
            g(onnx().data::<f32>(&[10, 6]).indices::<i32>(&[4]).output(&[4, 6], Some(&[8, 1]))),
        ),
        (
            "strided_broadcast_indices",
            g(ov().data::<f32>(&[4, 7]).indices_strided::<i32>(&[4, 3], Some(&[0, 1])).axis(1).batch_dims(1)),
        ),
        // Out-of-range policies on one descriptor.
        (
            "policy_error",
            g(onnx().data::<f32>(&[100, 8]).indices::<i64>(&[10]).out_of_range(OutOfRange::Error)),
        ),
        (
            "policy_zero",
            g(onnx().data::<f32>(&[100, 8]).indices::<i64>(&[10]).out_of_range(OutOfRange::Zero)),
        ),
        (
            "policy_clamp",
            g(onnx().data::<f32>(&[100, 8]).indices::<i64>(&[10]).out_of_range(OutOfRange::Clamp)),
        ),
        // Slices with negative strides.
        (
            "slice_reverse_rows_f32",
            s(Slice::directml().input::<f32>(&[64, 64]).window(&[0, 0], &[64, 64], &[-1, 1])),
        ),
        (
            "slice_negative_strides_u16",
            s(Slice::directml().input::<u16>(&[16, 32]).window(&[2, 1], &[12, 30], &[-3, -2])),
        ),
        (
            "slice_onnx_neg_steps_f32",
            s(Slice::onnx()
                .input::<f32>(&[20, 10, 5])
                .starts_ends(&[20, 10, 4], &[0, 0, 1])
                .steps(&[-1, -3, -2])),
        ),
        // Steps of 2 and 3 along rows: output lines picked from whole source lines.
        (
            "slice_step2_rows_f32",
            s(Slice::directml().input::<f32>(&[8, 4, 64]).window(&[0, 0, 0], &[8, 4, 64], &[1, 2, 2])),
        ),
        (
            "slice_step_minus3_rows_f32",
            s(Slice::onnx().input::<f32>(&[6, 48]).starts_ends(&[-1], &[-49]).axes(&[1]).steps(&[-3])),
        ),
        (
            "slice_step2_rows_f64",
            s(Slice::directml().input::<f64>(&[8, 32]).window(&[0, 0], &[8, 32], &[1, 2])),
        ),
        (
            "slice_step3_rows_f16",
            s(Slice::directml().input::<f16>(&[4, 48]).window(&[0, 0], &[4, 48], &[1, 3])),
        ),
        (
            "slice_step2_rows_u8",
            s(Slice::directml().input::<u8>(&[4, 64]).window(&[0, 0], &[4, 64], &[1, -2])),
        ),
        (
            "dynamic_stepped_reversed_f32",
            s(Slice::directml()
                .input::<f32>(&[0, 3, 16, 32])
                .window(&[0, 0, 0, 0], &[0, 3, 16, 32], &[1, 1, 2, -2])
                .dynamic_leading()),
        ),
        // A `_` leading size: the invocation limit is a launch argument.
        (
            "dynamic_embedding_f16",
            g(onnx().data::<f16>(&[32000, 512]).indices::<i64>(&[0, 8]).dynamic_leading()),
        ),
        (
            "dynamic_batch_crop_u8",
            s(Slice::directml()
                .input::<u8>(&[0, 3, 64, 64])
                .window(&[0, 0, 8, 8], &[0, 3, 48, 48], &[1, 1, 1, 1])
                .dynamic_leading()),
        ),
        (
            "dynamic_odd_crop_u8",
            s(Slice::directml()
                .input::<u8>(&[0, 3, 8, 8])
                .window(&[0, 0, 0, 1], &[0, 3, 8, 3], &[1, 1, 1, 1])
                .dynamic_leading()),
        ),
        // Windows read backwards under a `_` count: the walk NVRTC once compiled to a read 16 GiB
        // past its buffer while its base was a constant (`rows::rows_kernel` says why).
        (
            "dynamic_reversed_window_i32",
            s(Slice::directml()
                .input::<i32>(&[0, 2, 2, 3, 4])
                .window(&[0, 0, 0, 0, 0], &[0, 2, 2, 1, 2], &[1, 1, -1, 2, -3])
                .dynamic_leading()),
        ),
        // Fused chains.
        (
            "chain_embedding_last_token_f16",
            c(Chain::data::<f16>(&[32000, 512])
                .gather(onnx().indices::<i64>(&[8, 128]))
                .slice(Slice::onnx().starts_ends(&[-1], &[128]).axes(&[1]))),
        ),
        (
            "chain_issue_example_f32",
            c(Chain::data::<f32>(&[1000, 64])
                .gather(onnx().indices::<i64>(&[8, 16]))
                .slice(Slice::onnx().starts_ends(&[-1], &[16]).axes(&[1]))
                .slice(Slice::directml().window(&[0, 0, 0], &[8, 1, 64], &[1, 1, -2]))
                .gather(ov().indices::<i32>(&[8, 16]).axis(2).batch_dims(1))),
        ),
        (
            "chain_image_u8",
            c(Chain::data::<u8>(&[8, 3, 224, 224])
                .slice(Slice::directml().window(&[0, 0, 16, 16], &[8, 3, 192, 192], &[1, 1, 1, 1]))
                .slice(Slice::onnx().starts_ends(&[-1], &[-193]).axes(&[3]).steps(&[-1]))
                .gather(onnx().indices::<i32>(&[3]).axis(1))
                .slice(Slice::directml().window(&[0, 0, 0, 0], &[8, 3, 192, 192], &[1, 1, 2, 2]))),
        ),
        (
            "chain_gather_of_gather_clamp_f64",
            c(Chain::data::<f64>(&[50, 32])
                .gather(ov().indices::<u32>(&[40]).out_of_range(OutOfRange::Clamp))
                .gather(Gather::directml().indices::<u64>(&[1, 6]).axis(0).index_dims(1))),
        ),
        // Chains with a `_` count: on the first gather's indices, and on the data.
        (
            "chain_dynamic_last_token_f16",
            c(Chain::data::<f16>(&[32000, 512])
                .gather(onnx().indices::<i64>(&[0, 128]).dynamic_leading())
                .slice(Slice::onnx().starts_ends(&[-1], &[128]).axes(&[1]))),
        ),
        (
            "chain_dynamic_image_u8",
            c(Chain::data::<u8>(&[0, 3, 224, 224])
                .dynamic_leading()
                .slice(Slice::directml().ranges(&[
                    SliceRange::FULL,
                    SliceRange::FULL,
                    SliceRange::new(16, 208),
                    SliceRange::new(16, 208).step(-1),
                ]))
                .gather(onnx().indices::<i32>(&[3]).axis(1))
                .slice(Slice::directml().ranges(&[
                    SliceRange::FULL,
                    SliceRange::FULL,
                    SliceRange::FULL.step(2),
                    SliceRange::FULL.step(2),
                ]))),
        ),
        // Chains that end in `convert`: the image pipeline's NHWC u8 batch to normalized NCHW
        // f32, channels last to f16, signed and float sources, a gather per element, a count.
        (
            "convert_nhwc_to_nchw_f32",
            c(Chain::data_strided::<u8>(&[0, 3, 256, 256], Some(&[196608, 1, 768, 3]))
                .dynamic_leading()
                .slice(Slice::directml().ranges(&[
                    SliceRange::FULL,
                    SliceRange::FULL.step(-1),
                    SliceRange::new(16, 240),
                    SliceRange::new(16, 240),
                ]))
                .convert::<f32>(1, &[0.0171, 0.0175, 0.0174], &[-2.1179, -2.0357, -1.8044])),
        ),
        (
            "convert_channels_last_i8_f16",
            c(Chain::data::<i8>(&[8, 32, 32, 3]).convert::<f16>(-1, &[0.5, 0.25, 0.125], &[1.0, 2.0, 3.0])),
        ),
        (
            "convert_gather_i16_bf16",
            c(Chain::data::<i16>(&[16, 64])
                .gather(ov().indices::<i32>(&[16, 8]).axis(1).batch_dims(1))
                .convert::<bf16>(0, &[0.001], &[0.0])),
        ),
        (
            "convert_half_to_f32",
            c(Chain::data::<f16>(&[4, 4, 64])
                .slice(Slice::onnx().starts_ends(&[-1], &[0]).axes(&[2]).steps(&[-1]))
                .convert::<f32>(0, &[1.0], &[0.0])),
        ),
        ("convert_f32_to_bf16", c(Chain::data::<f32>(&[128, 256]).convert::<bf16>(1, &[1.0], &[0.0]))),
        (
            "chain_beam_cache_f16",
            c(Chain::data_strided::<f16>(&[4, 8, 64, 32], Some(&[32768, 4096, 32, 1]))
                .gather(ov().indices::<i32>(&[4, 8]).axis(1).batch_dims(1))
                .slice(Slice::onnx().starts_ends(&[0], &[48]).axes(&[2]))),
        ),
    ]
}

fn main() {
    let out = std::env::args().nth(1).unwrap_or_else(|| "target/cuda-catalogue".into());
    std::fs::create_dir_all(&out).expect("output directory");
    let mut manifest = String::from("name\tarch\tfile\n");
    for (name, desc) in catalogue() {
        for arch in [80, 90] {
            let dialect = Dialect::Cuda { arch };
            let source = match &desc {
                Desc::Gather(d) => gather_source(d, dialect),
                Desc::Slice(d) => slice_source(d, dialect),
                Desc::Chain(d) => chain_source(d, dialect),
                Desc::Scatter(d) => scatter_source(d, dialect),
            };
            let source =
                source.unwrap_or_else(|e| panic!("{name}: {e}")).expect("catalogue outputs are not empty");
            // An op of several kernels heads each (`// kernel k of n`): one file per kernel, as
            // CubeCL compiles them.
            let parts = kernels(&source);
            for (k, part) in parts.iter().enumerate() {
                let name = if parts.len() > 1 { format!("{name}_k{}", k + 1) } else { name.clone() };
                let file = format!("{name}.sm{arch}.cu");
                std::fs::write(format!("{out}/{file}"), part).expect("write source");
                manifest.push_str(&format!("{name}\t{arch}\t{file}\n"));
            }
        }
    }
    let written = manifest.lines().count() - 1;
    std::fs::write(format!("{out}/manifest.tsv"), manifest).expect("write manifest");
    println!("wrote {written} kernels to {out}");
}

/// The kernels of a source, split at their `// kernel k of n` headings (one part without them).
fn kernels(source: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for line in source.lines() {
        if line.starts_with("// kernel ") || parts.is_empty() {
            parts.push(String::new());
        }
        let part = parts.last_mut().expect("a part");
        part.push_str(line);
        part.push('\n');
    }
    parts.retain(|p| !p.trim().is_empty());
    parts
}
