//! One gather and one slice, end to end: `cargo run --example quickstart`.
//!
//! Without a GPU this runs on Mesa's lavapipe (Vulkan on the CPU) through wgpu.

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), stridex::Error> {
    let device = stridex::Device::default_device()?;
    println!("device: {}", device.description());

    // ONNX Gather, seed 003 example 1.
    let op = stridex::gather! {
        rules: onnx,
        data: f32[3, 2],
        indices: i64[2, 2],
        axis: 0,
    };
    let data = [1.0, 1.2, 2.3, 3.4, 4.5, 5.7];
    let indices = [0, 1, 1, 2];
    let y = op.run(&data, &indices)?;
    println!("gather (onnx, axis 0)");
    println!("  data    f32[3, 2] = {data:?}");
    println!("  indices i64[2, 2] = {indices:?}");
    println!("  output  {:?} = {:?}", y.shape(), y.data());

    // DirectML SLICE1, seed 001 example 2 (a negative window stride).
    let s = stridex::slice! {
        input: f32[1, 1, 4, 4],
        offsets: [0, 0, 0, 1],
        sizes: [1, 1, 4, 3],
        strides: [1, 1, -2, 2],
    };
    let input: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let z = s.run(&input)?;
    println!("slice (directml SLICE1, strides [1, 1, -2, 2])");
    println!("  input   f32[1, 1, 4, 4] = {input:?}");
    println!("  output  {:?} = {:?}", z.shape(), z.data());
    Ok(())
}
