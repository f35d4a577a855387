//! Every worked example of the operator pages (ONNX, OpenVINO, DirectML; `stridex::core::seeds`), value for value, on a real kernel launch. Each is
//! written here as the macro takes it; its values come from the one table of examples
//! (`stridex::core::seeds`), and the macro's op must plan exactly as the table's descriptor does.

use stridex::core::seeds;
use stridex::{Element, GatherOp, IndexElement, SliceOp};

/// A data type the table's values convert into exactly.
trait SeedValue: Element {
    fn of(v: f64) -> Self;
}
impl SeedValue for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
}
impl SeedValue for i32 {
    fn of(v: f64) -> Self {
        v as i32
    }
}

fn check_gather<T: SeedValue, I: IndexElement + TryFrom<i64>>(op: &GatherOp<T, I>, name: &str) {
    let seed = seeds::gather_seed(name).expect("a seed of that name");
    let table = GatherOp::<T, I>::new(seed.desc(T::DTYPE, I::INDEX.dtype())).unwrap();
    assert_eq!(op.plan().unwrap(), table.plan().unwrap(), "{name}: the macro and the table disagree");
    let data: Vec<T> = seed.data.iter().map(|&v| T::of(v)).collect();
    let idx: Vec<I> = seed.indices.iter().map(|&v| I::try_from(v).ok().expect("index fits")).collect();
    let y = op.run(&data, &idx).unwrap();
    assert_eq!(y.shape(), seed.out_sizes, "{name}");
    let out: Vec<T> = seed.out.iter().map(|&v| T::of(v)).collect();
    assert_eq!(y.data(), out.as_slice(), "{name}");
}

fn check_slice(op: &SliceOp<f32>, name: &str) {
    let seed = seeds::slice_seed(name).expect("a seed of that name");
    let table = SliceOp::<f32>::new(seed.desc(f32::DTYPE)).unwrap();
    assert_eq!(op.plan().unwrap(), table.plan().unwrap(), "{name}: the macro and the table disagree");
    let input: Vec<f32> = seed.input.iter().map(|&v| v as f32).collect();
    let y = op.run(&input).unwrap();
    assert_eq!(y.shape(), seed.out_sizes, "{name}");
    let out: Vec<f32> = seed.out.iter().map(|&v| v as f32).collect();
    assert_eq!(y.data(), out.as_slice(), "{name}");
}

fn iota_f32(n: usize) -> Vec<f32> {
    (1..=n).map(|v| v as f32).collect()
}

// DirectML GATHER (seed 000), data f32, indices u32.

#[test]
fn directml_gather_1_remap_1d() {
    let op = stridex::gather! { rules: directml, data: f32[4], indices: u32[5], axis: 0, index_dims: 1 };
    check_gather(&op, "directml_1_remap_1d");
}

#[test]
fn directml_gather_2_rows() {
    let op =
        stridex::gather! { rules: directml, data: f32[3, 2], indices: u32[1, 4], axis: 0, index_dims: 1 };
    check_gather(&op, "directml_2_rows");
}

/// As the seed writes it (IndexDimensions 2), its formula gives {3,1,2}, which does not fit
/// DimensionCount 2 (ui-tests/gather/directml_seed_example_3_as_written.rs shows the error and
/// its fix). IndexDimensions 1 treats the leading 1 as padding and gives the printed {3,2}.
#[test]
fn directml_gather_3_swap_columns() {
    let op =
        stridex::gather! { rules: directml, data: f32[3, 2], indices: u32[1, 2], axis: 1, index_dims: 1 };
    check_gather(&op, "directml_3_swap_columns");
}

#[test]
fn directml_gather_4_nested_indices() {
    let op = stridex::gather! { rules: directml, data: f32[1, 3, 3], indices: u32[1, 1, 2], axis: 2, index_dims: 2 };
    check_gather(&op, "directml_4_nested_indices");
}

#[test]
fn directml_gather_5_nested_indices_axis_1() {
    let op = stridex::gather! { rules: directml, data: f32[1, 3, 2], indices: u32[1, 2, 2], axis: 1, index_dims: 2 };
    check_gather(&op, "directml_5_nested_axis_1");
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
    check_slice(&s, "slice1_1_positive_strides");
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
    check_slice(&s, "slice1_2_negative_stride");
}

// OpenVINO Gather-8 (seed 002).

#[test]
fn openvino_1_default_batch_dims() {
    let op = stridex::gather! { rules: openvino, data: i32[5], indices: i32[3], axis: 0, batch_dims: 0 };
    check_gather(&op, "openvino_1");
}

#[test]
fn openvino_2_batch_dims_1() {
    let op =
        stridex::gather! { rules: openvino, data: i32[2, 5], indices: i32[2, 3], axis: 1, batch_dims: 1 };
    check_gather(&op, "openvino_2_batch_1");
}

#[test]
fn openvino_3_batch_dims_2() {
    let op = stridex::gather! { rules: openvino, data: i32[2, 2, 5], indices: i32[2, 2, 3], axis: 2, batch_dims: 2 };
    check_gather(&op, "openvino_3_batch_2");
}

#[test]
fn openvino_4_axis_after_batch_dims() {
    let op = stridex::gather! { rules: openvino, data: i32[2, 1, 5, 4], indices: i32[2, 3], axis: 2, batch_dims: 1 };
    check_gather(&op, "openvino_4_batch_1_axis_2");
}

#[test]
fn openvino_5_negative_batch_dims() {
    let op =
        stridex::gather! { rules: openvino, data: i32[2, 5], indices: i32[2, 3], axis: 1, batch_dims: -1 };
    assert_eq!(op.plan().unwrap().batch_dims, 1);
    check_gather(&op, "openvino_5_negative_batch");
}

#[test]
fn openvino_6_negative_indices() {
    let op = stridex::gather! { rules: openvino, data: i32[5], indices: i32[3], axis: 0 };
    check_gather(&op, "openvino_6_negative_indices");
}

#[test]
fn openvino_7_out_of_range_gives_zero() {
    let op = stridex::gather! { rules: openvino, data: i32[5], indices: i32[3], axis: 0 };
    check_gather(&op, "openvino_7_out_of_range_zero");
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
    check_gather(&op, "onnx_1_axis_0");
}

#[test]
fn onnx_2_axis_1() {
    let op = stridex::gather! { rules: onnx, data: f32[3, 3], indices: i64[1, 2], axis: 1 };
    check_gather(&op, "onnx_2_axis_1");
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

// ndarray / Burn style ranges lower to the same SLICE1 windows.

#[test]
fn ranges_lower_to_the_same_window() {
    let ranged = stridex::slice!(input: f32[20, 10, 5], s[.., 1..9;2, ..;-1]);
    let window = stridex::slice! {
        input: f32[20, 10, 5], offsets: [0, 1, 0], sizes: [20, 8, 5], strides: [1, 2, -1],
    };
    assert_eq!(ranged.plan().unwrap(), window.plan().unwrap());
    assert_eq!(ranged.output_shape().unwrap(), [20, 4, 5]);
    let input = iota_f32(1000);
    let y = ranged.run(&input).unwrap();
    // ndarray's rule: 1..9;2 is 1, 3, 5, 7; ..;-1 walks 4, 3, 2, 1, 0.
    assert_eq!(y.get(&[0, 0, 0]), Some(input[5 + 4]));
    assert_eq!(y.get(&[2, 3, 4]), Some(input[2 * 50 + 7 * 5]));
    // Fewer ranges than dimensions: the rest whole; negative bounds from the end; `..=`.
    let tail = stridex::slice!(input: u8[4, 6], s[-2.., 1..=4;-3]);
    assert_eq!(tail.output_shape().unwrap(), [2, 2]);
    let grid: Vec<u8> = (0..24).collect();
    // Rows 2, 3; columns 1..=4 walked backwards by 3: 4, 1.
    assert_eq!(tail.run(&grid).unwrap().data(), [16, 13, 22, 19]);
}
