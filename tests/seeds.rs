//! Every worked example of SPEC.md section 5, value for value, on a real kernel launch.

fn iota_f32(n: usize) -> Vec<f32> {
    (1..=n).map(|v| v as f32).collect()
}

fn iota_i32(n: usize) -> Vec<i32> {
    (1..=n as i32).collect()
}

// DirectML GATHER (seed 000), data f32, indices u32.

#[test]
fn directml_gather_1_remap_1d() {
    let op = stridex::gather! { rules: directml, data: f32[4], indices: u32[5], axis: 0, index_dims: 1 };
    let y = op.run(&[11.0, 12.0, 13.0, 14.0], &[3, 1, 3, 0, 2]).unwrap();
    assert_eq!(y.shape(), &[5]);
    assert_eq!(y.data(), &[14.0, 12.0, 14.0, 11.0, 13.0]);
}

#[test]
fn directml_gather_2_rows() {
    let op =
        stridex::gather! { rules: directml, data: f32[3, 2], indices: u32[1, 4], axis: 0, index_dims: 1 };
    let y = op.run(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[0, 1, 1, 2]).unwrap();
    assert_eq!(y.shape(), &[4, 2]);
    assert_eq!(y.data(), &[1.0, 2.0, 3.0, 4.0, 3.0, 4.0, 5.0, 6.0]);
}

/// As the seed writes it (IndexDimensions 2), its formula gives {3,1,2}, which does not fit
/// DimensionCount 2 (ui-tests/gather/directml_seed_example_3_as_written.rs shows the error and
/// its fix). IndexDimensions 1 treats the leading 1 as padding and gives the printed {3,2}.
#[test]
fn directml_gather_3_swap_columns() {
    let op =
        stridex::gather! { rules: directml, data: f32[3, 2], indices: u32[1, 2], axis: 1, index_dims: 1 };
    let y = op.run(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[1, 0]).unwrap();
    assert_eq!(y.shape(), &[3, 2]);
    assert_eq!(y.data(), &[2.0, 1.0, 4.0, 3.0, 6.0, 5.0]);
}

#[test]
fn directml_gather_4_nested_indices() {
    let op = stridex::gather! { rules: directml, data: f32[1, 3, 3], indices: u32[1, 1, 2], axis: 2, index_dims: 2 };
    let y = op.run(&iota_f32(9), &[0, 2]).unwrap();
    assert_eq!(y.shape(), &[3, 1, 2]);
    assert_eq!(y.data(), &[1.0, 3.0, 4.0, 6.0, 7.0, 9.0]);
}

#[test]
fn directml_gather_5_nested_indices_axis_1() {
    let op = stridex::gather! { rules: directml, data: f32[1, 3, 2], indices: u32[1, 2, 2], axis: 1, index_dims: 2 };
    let y = op.run(&iota_f32(6), &[0, 1, 1, 2]).unwrap();
    assert_eq!(y.shape(), &[2, 2, 2]);
    assert_eq!(y.data(), &[1.0, 2.0, 3.0, 4.0, 3.0, 4.0, 5.0, 6.0]);
}

// DirectML SLICE1 (seed 001), input f32 {1,1,4,4} = 1..16.

#[test]
fn slice1_1_positive_strides() {
    let s = stridex::slice! {
        input: f32[1, 1, 4, 4],
        offsets: [0, 0, 0, 1],
        sizes: [1, 1, 4, 3],
        strides: [1, 1, 2, 2],
    };
    let y = s.run(&iota_f32(16)).unwrap();
    assert_eq!(y.shape(), &[1, 1, 2, 2]);
    assert_eq!(y.data(), &[2.0, 4.0, 10.0, 12.0]);
}

#[test]
fn slice1_2_negative_stride() {
    let s = stridex::slice! {
        input: f32[1, 1, 4, 4],
        offsets: [0, 0, 0, 1],
        sizes: [1, 1, 4, 3],
        strides: [1, 1, -2, 2],
        output: [1, 1, 2, 2],
    };
    let y = s.run(&iota_f32(16)).unwrap();
    assert_eq!(y.shape(), &[1, 1, 2, 2]);
    assert_eq!(y.data(), &[14.0, 16.0, 6.0, 8.0]);
}

// OpenVINO Gather-8 (seed 002).

#[test]
fn openvino_1_default_batch_dims() {
    let op = stridex::gather! { rules: openvino, data: i32[5], indices: i32[3], axis: 0, batch_dims: 0 };
    let y = op.run(&iota_i32(5), &[0, 0, 4]).unwrap();
    assert_eq!(y.data(), &[1, 1, 5]);
}

#[test]
fn openvino_2_batch_dims_1() {
    let op =
        stridex::gather! { rules: openvino, data: i32[2, 5], indices: i32[2, 3], axis: 1, batch_dims: 1 };
    let y = op.run(&iota_i32(10), &[0, 0, 4, 4, 0, 0]).unwrap();
    assert_eq!(y.shape(), &[2, 3]);
    assert_eq!(y.data(), &[1, 1, 5, 10, 6, 6]);
}

#[test]
fn openvino_3_batch_dims_2() {
    let op = stridex::gather! { rules: openvino, data: i32[2, 2, 5], indices: i32[2, 2, 3], axis: 2, batch_dims: 2 };
    let y = op.run(&iota_i32(20), &[0, 0, 4, 4, 0, 0, 1, 2, 4, 4, 3, 2]).unwrap();
    assert_eq!(y.shape(), &[2, 2, 3]);
    assert_eq!(y.data(), &[1, 1, 5, 10, 6, 6, 12, 13, 15, 20, 19, 18]);
}

#[test]
fn openvino_4_axis_after_batch_dims() {
    let op = stridex::gather! { rules: openvino, data: i32[2, 1, 5, 4], indices: i32[2, 3], axis: 2, batch_dims: 1 };
    let y = op.run(&iota_i32(40), &[1, 2, 4, 4, 3, 2]).unwrap();
    assert_eq!(y.shape(), &[2, 1, 3, 4]);
    let expected: Vec<i32> =
        [5..=8, 9..=12, 17..=20, 37..=40, 33..=36, 29..=32].into_iter().flatten().collect();
    assert_eq!(y.data(), expected.as_slice());
}

#[test]
fn openvino_5_negative_batch_dims() {
    let op =
        stridex::gather! { rules: openvino, data: i32[2, 5], indices: i32[2, 3], axis: 1, batch_dims: -1 };
    assert_eq!(op.plan().unwrap().batch_dims, 1);
    let y = op.run(&iota_i32(10), &[0, 0, 4, 4, 0, 0]).unwrap();
    assert_eq!(y.data(), &[1, 1, 5, 10, 6, 6]);
}

#[test]
fn openvino_6_negative_indices() {
    let op = stridex::gather! { rules: openvino, data: i32[5], indices: i32[3], axis: 0 };
    let y = op.run(&iota_i32(5), &[0, -2, -1]).unwrap();
    assert_eq!(y.data(), &[1, 4, 5]);
}

#[test]
fn openvino_7_out_of_range_gives_zero() {
    let op = stridex::gather! { rules: openvino, data: i32[5], indices: i32[3], axis: 0 };
    let y = op.run(&iota_i32(5), &[3, 10, -20]).unwrap();
    assert_eq!(y.data(), &[4, 0, 0]);
}

#[test]
fn openvino_8_ir_example_shape() {
    let op = stridex::gather! { rules: openvino, data: f32[2, 64, 128], indices: i64[2, 32, 21], axis: 1, batch_dims: 1 };
    assert_eq!(op.plan().unwrap().output.sizes.as_slice(), &[2, 32, 21, 128]);
    let data: Vec<f32> = (0..2 * 64 * 128).map(|v| v as f32).collect();
    let indices: Vec<i64> = (0..2 * 32 * 21).map(|v| (v * 7 % 64) as i64).collect();
    let y = op.run(&data, &indices).unwrap();
    assert_eq!(y.shape(), &[2, 32, 21, 128]);
    // output[b, i, j, k] = data[b, indices[b, i, j], k]
    for (b, i, j, k) in [(0, 0, 0, 0), (1, 31, 20, 127), (1, 5, 7, 64), (0, 17, 3, 1)] {
        let idx = indices[(b * 32 + i) * 21 + j] as usize;
        assert_eq!(y.get(&[b, i, j, k]), Some(data[(b * 64 + idx) * 128 + k]));
    }
}

// ONNX Gather (seed 003), data f32.

#[test]
fn onnx_1_axis_0() {
    let op = stridex::gather! { rules: onnx, data: f32[3, 2], indices: i64[2, 2], axis: 0 };
    let y = op.run(&[1.0, 1.2, 2.3, 3.4, 4.5, 5.7], &[0, 1, 1, 2]).unwrap();
    assert_eq!(y.shape(), &[2, 2, 2]);
    assert_eq!(y.data(), &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]);
}

#[test]
fn onnx_2_axis_1() {
    let op = stridex::gather! { rules: onnx, data: f32[3, 3], indices: i64[1, 2], axis: 1 };
    let y = op.run(&[1.0, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9], &[0, 2]).unwrap();
    assert_eq!(y.shape(), &[3, 1, 2]);
    assert_eq!(y.data(), &[1.0, 1.9, 2.3, 3.9, 4.5, 5.9]);
}

#[test]
fn onnx_3_shape_table() {
    // (P,Q) = (2,3), (R,S) = (4,5); values checked against the formula on a real launch.
    let data: Vec<f32> = iota_f32(6);
    let op = stridex::gather! { data: f32[2, 3], indices: i64[], axis: 0 };
    let y = op.run(&data, &[1]).unwrap();
    assert_eq!((y.shape(), y.data()), (&[3][..], &[4.0, 5.0, 6.0][..]));

    let data3: Vec<f32> = iota_f32(2 * 3 * 4);
    let op = stridex::gather! { data: f32[2, 3, 4], indices: i64[], axis: 1 };
    let y = op.run(&data3, &[2]).unwrap();
    assert_eq!(y.shape(), &[2, 4]);
    assert_eq!(y.data(), &[9.0, 10.0, 11.0, 12.0, 21.0, 22.0, 23.0, 24.0]);

    let idx: Vec<i64> = (0..20).map(|v| v % 2).collect();
    let op = stridex::gather! { data: f32[2, 3], indices: i64[4, 5], axis: 0 };
    let y = op.run(&data, &idx).unwrap();
    assert_eq!(y.shape(), &[4, 5, 3]);
    let rows: Vec<f32> = idx.iter().flat_map(|&i| data[i as usize * 3..][..3].to_vec()).collect();
    assert_eq!(y.data(), rows.as_slice());

    let idx: Vec<i64> = (0..20).map(|v| v % 3).collect();
    let op = stridex::gather! { data: f32[2, 3], indices: i64[4, 5], axis: 1 };
    let y = op.run(&data, &idx).unwrap();
    assert_eq!(y.shape(), &[2, 4, 5]);
    assert_eq!(y.get(&[1, 3, 4]), Some(data[3 + idx[19] as usize]));
    let data = &data;
    let picked: Vec<f32> = (0..2).flat_map(|r| idx.iter().map(move |&i| data[r * 3 + i as usize])).collect();
    assert_eq!(y.data(), picked.as_slice());
}

// Tensor layout (seed 004): the layouts, read through a full-window slice into packed order.

#[test]
fn layout_abcdef_packed_and_column_major() {
    let packed =
        stridex::slice! { input: u8[2, 3] strides [3, 1], offsets: [0, 0], sizes: [2, 3], strides: [1, 1] };
    assert_eq!(packed.run(b"ABCDEF").unwrap().data(), b"ABCDEF");
    // Column-major "WH": the buffer holds A D B E C F.
    let column =
        stridex::slice! { input: u8[2, 3] strides [1, 2], offsets: [0, 0], sizes: [2, 3], strides: [1, 1] };
    assert_eq!(column.run(b"ADBECF").unwrap().data(), b"ABCDEF");
}

#[test]
fn layout_dhw_offset_7() {
    let op = stridex::gather! { data: f32[2, 2, 3] strides [6, 3, 1], indices: i64[], axis: 0 };
    let data: Vec<f32> = (0..12).map(|v| v as f32).collect();
    // Element (1,0,1) lives at offset 1*6 + 0*3 + 1*1 = 7.
    assert_eq!(op.run(&data, &[1]).unwrap().get(&[0, 1]), Some(7.0));
}

#[test]
fn layout_broadcast_and_padded() {
    let broadcast =
        stridex::slice! { input: u8[2, 3] strides [0, 1], offsets: [0, 0], sizes: [2, 3], strides: [1, 1] };
    assert_eq!(broadcast.run(b"ABC").unwrap().data(), b"ABCABC");
    // Rows of 3 stored 5 apart: 10 elements in the seed's buffer (8 are needed).
    let padded =
        stridex::slice! { input: u8[2, 3] strides [5, 1], offsets: [0, 0], sizes: [2, 3], strides: [1, 1] };
    assert_eq!(padded.run(b"ABC__DEF__").unwrap().data(), b"ABCDEF");
    assert_eq!(padded.run(b"ABC__DEF").unwrap().data(), b"ABCDEF");
}

#[test]
fn layout_nchw_and_nhwc() {
    let data: Vec<f32> = (0..15).map(|v| v as f32).collect();
    let nchw = stridex::slice! { input: f32[1, 1, 3, 5] strides [15, 15, 5, 1], offsets: [0, 0, 0, 0], sizes: [1, 1, 3, 5], strides: [1, 1, 1, 1] };
    let nhwc = stridex::slice! { input: f32[1, 1, 3, 5] strides [15, 1, 5, 1], offsets: [0, 0, 0, 0], sizes: [1, 1, 3, 5], strides: [1, 1, 1, 1] };
    assert_eq!(nchw.run(&data).unwrap().data(), data.as_slice());
    assert_eq!(nhwc.run(&data).unwrap().data(), data.as_slice());
}
