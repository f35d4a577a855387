//! One gather, three rule sets, one index out of range: ONNX refuses it (`error`), OpenVINO
//! writes zeros for it (`zero`), DirectML clamps it into the data (`clamp`):
//! `cargo run --example onnx_vs_openvino`.

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), stridex::Error> {
    println!("device: {}", stridex::Device::default_device()?.description());
    let data = [1.0f32, 1.2, 2.3, 3.4, 4.5, 5.7];
    // Row 7 of a 3-row table: out of range under every rule set. (DirectML tensors all have
    // the same dimension count: its indices are [1, 3], one meaningful dimension.)
    let onnx = stridex::gather! { rules: onnx, data: f32[3, 2], indices: i32[3], axis: 0 };
    let openvino = stridex::gather! { rules: openvino, data: f32[3, 2], indices: i32[3], axis: 0 };
    let directml =
        stridex::gather! { rules: directml, data: f32[3, 2], indices: i32[1, 3], axis: 0, index_dims: 1 };
    let indices = [2, 7, -1];
    println!("data f32[3, 2] = {data:?}, indices = {indices:?} (7 is out of range for 3 rows)\n");

    let onnx_result = onnx.run(&data, &indices);
    let zero = openvino.run(&data, &indices)?;
    let clamp = directml.run(&data, &indices)?;
    println!("{:<28} {:<46} row for index 7", "rule set (policy)", "result");
    match &onnx_result {
        Err(e) => println!("{:<28} Err: {e}", "onnx (error)"),
        Ok(y) => println!("{:<28} {:?}", "onnx (error)", y.data()),
    }
    println!("{:<28} {:<46} {:?}", "openvino (zero)", format!("{:?}", zero.data()), &zero.data()[2..4]);
    println!("{:<28} {:<46} {:?}", "directml (clamp)", format!("{:?}", clamp.data()), &clamp.data()[2..4]);

    assert!(matches!(onnx_result, Err(stridex::Error::IndexOutOfRange { value: 7, .. })));
    assert_eq!(zero.data(), [4.5, 5.7, 0.0, 0.0, 4.5, 5.7]);
    assert_eq!(clamp.data(), [4.5, 5.7, 4.5, 5.7, 4.5, 5.7]);
    println!(
        "\n(each policy can be chosen explicitly under any rule set: `out_of_range: error | zero | clamp`)"
    );
    Ok(())
}
