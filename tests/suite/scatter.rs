//! The scatters (`scatter!`, `scatter_elements!`, `scatter_nd!`): ONNX's own cases, the
//! macros, in-place launches, the policies, random descriptors against a naive serial
//! reference written from the specs (below, apart from the kernels), and identical bits over
//! many runs.

use crate::common::generate::Rng;
use crate::common::props::{cases, choices};
use proptest::prelude::*;
use serde_json::Value;
use stridex::half::f16;
use stridex::{
    DType, Device, Duplicates, Element, Error, GatherForm, GatherRules, OutOfRange, Reduction, Scatter,
    ScatterDesc, ScatterOp,
};
use stridex_core::TensorDecl;

fn decl(dtype: DType, sizes: &[usize]) -> TensorDecl {
    TensorDecl::packed(dtype, stridex_core::Dims::new(sizes).unwrap())
}

/// ONNX's ScatterElements, Scatter (its opset-9 name) and ScatterND node tests, value for value.
#[test]
fn onnx_scatter_cases() {
    let path = format!("{}/tests/data/onnx_index_family_cases.json", env!("CARGO_MANIFEST_DIR"));
    let all: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let floats = |v: &Value| -> Vec<f32> {
        v["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
    };
    let ints = |v: &Value| -> Vec<i64> {
        v["data"].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect()
    };
    let shape = |v: &Value| -> Vec<usize> {
        v["shape"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect()
    };
    let mut ran = 0;
    for case in all.iter().filter(|c| c["op"].as_str().unwrap().starts_with("Scatter")) {
        let name = case["name"].as_str().unwrap();
        let form = if case["op"] == "ScatterND" { GatherForm::Nd } else { GatherForm::Elements };
        let [data, indices, updates] = [0, 1, 2].map(|i| &case["inputs"][i]);
        let out = &case["outputs"][0];
        assert_eq!(indices["dtype"], "int64", "{name}");
        let mut desc = ScatterDesc::new(
            form,
            GatherRules::Onnx,
            decl(DType::F32, &shape(data)),
            decl(DType::I64, &shape(indices)),
            decl(DType::F32, &shape(updates)),
            case["attributes"]["axis"].as_i64().unwrap_or(0),
        );
        desc.reduction = case["attributes"]["reduction"].as_str().map(|r| Reduction::from_name(r).unwrap());
        let op = ScatterOp::<f32, i64>::new(desc).unwrap_or_else(|e| panic!("{name}: {e}"));
        let y =
            op.run(&floats(data), &ints(indices), &floats(updates)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((y.shape(), y.data()), (shape(out).as_slice(), floats(out).as_slice()), "{name}");
        ran += 1;
    }
    assert_eq!(ran, 12);
}

/// An embedding's backward pass: gradient rows added into the table's rows by id, repeated ids
/// accumulating in order. `scatter!` is OpenVINO's, whose default policy (`zero`) counts a
/// negative id from the end and drops an id past it.
#[test]
fn the_macro_adds_rows_by_id() {
    let op =
        stridex::scatter! { data: f32[4, 3], indices: i64[5], updates: f32[5, 3], axis: 0, reduction: add };
    let table = [0.0f32; 12];
    let grads: Vec<f32> = (1..=15).map(|v| v as f32).collect();
    let y = op.run(&table, &[1, 3, 1, -1, 9], &grads).unwrap();
    // Row 1 gets rows 0 and 2; row 3 gets rows 1 and 3 (-1 is the last row); 9 is dropped.
    let expected = [0.0, 0.0, 0.0, 8.0, 10.0, 12.0, 0.0, 0.0, 0.0, 14.0, 16.0, 18.0];
    assert_eq!((y.shape(), y.data()), (&[4usize, 3][..], &expected[..]));
    assert!(op.describe().starts_with("OpenVINO ScatterUpdate-3"), "{}", op.describe());
}

/// A KV-cache write in place: f16 rows at slot ids, `-1` marking padding tokens (`skip`).
#[test]
fn a_kv_cache_write_in_place_skips_padding() {
    let op = stridex::scatter! {
        data: f16[6, 2, 4], indices: i32[3], updates: f16[3, 2, 4], axis: 0, out_of_range: skip
    };
    let device = Device::default_device().unwrap();
    let client = device.client();
    let cache: Vec<f16> = (0..48).map(|v| f16::from_f32(v as f32)).collect();
    let new: Vec<f16> = (0..24).map(|v| f16::from_f32(-(v as f32) - 1.0)).collect();
    let upload = |bytes: &[u8]| client.create_from_slice(bytes);
    let (data, ids, rows) =
        (upload(&f16::bytes(&cache)), upload(&i32::bytes(&[4, -1, 0])), upload(&f16::bytes(&new)));
    op.launch(client, &data, &ids, &rows).unwrap();
    let bytes = client.read_one(data.clone()).unwrap();
    let got = f16::from_bytes(&bytes[..96]);
    let mut expected = cache.clone();
    expected[32..40].copy_from_slice(&new[..8]);
    expected[..8].copy_from_slice(&new[16..]);
    assert_eq!(got, &expected[..]);
    // Later launches on this runtime queue without waiting; the next token's rows land in
    // order after them.
    let next = upload(&i32::bytes(&[5, 1, -1]));
    op.launch(client, &data, &next, &rows).unwrap();
    op.launch(client, &data, &upload(&i32::bytes(&[-1, -1, 1])), &rows).unwrap();
    let got = f16::from_bytes(&client.read_one(data).unwrap()[..96]).to_vec();
    expected[40..48].copy_from_slice(&new[..8]);
    expected[8..16].copy_from_slice(&new[16..]);
    assert_eq!(got, expected);
}

/// A KV cache's decode steps with the count of new tokens left to run time (`_`): one op, one
/// compiled kernel pair (its source is the fixed op's, whatever the count), `launch_at` for
/// each step's count, `-1` still padding.
#[test]
fn a_kv_cache_write_takes_each_steps_count() {
    static KV: ScatterOp<f16, i32> = stridex::scatter! {
        data: f16[6, 2, 4], indices: i32[_], updates: f16[_, 2, 4], axis: 0, out_of_range: skip
    };
    let fixed = stridex::scatter! {
        data: f16[6, 2, 4], indices: i32[5], updates: f16[5, 2, 4], axis: 0, out_of_range: skip
    };
    let dialect = stridex::Dialect::Wgsl;
    assert_eq!(KV.kernel_source(dialect).unwrap(), fixed.kernel_source(dialect).unwrap());
    assert!(KV.describe().contains("the leading size `_` is the count"), "{}", KV.describe());
    let device = Device::default_device().unwrap();
    let client = device.client();
    let cache: Vec<f16> = (0..48).map(|v| f16::from_f32(v as f32)).collect();
    let rows: Vec<f16> = (0..40).map(|v| f16::from_f32(-(v as f32) - 1.0)).collect();
    let upload = |bytes: &[u8]| client.create_from_slice(bytes);
    let data = upload(&f16::bytes(&cache));
    let mut expected = cache.clone();
    // A prefill of three tokens (one padding), then decode steps of one and of five.
    for ids in [&[4, -1, 0][..], &[2], &[5, 1, -1, 3, 5]] {
        let count = ids.len();
        assert_eq!(KV.buffer_bytes_at(count, stridex::Operand::Updates).unwrap(), count * 16);
        let step_rows = upload(&f16::bytes(&rows[..count * 8]));
        KV.launch_at(client, count, &data, &upload(&i32::bytes(ids)), &step_rows).unwrap();
        for (p, &id) in ids.iter().enumerate().filter(|(_, &id)| id >= 0) {
            expected[id as usize * 8..][..8].copy_from_slice(&rows[p * 8..][..8]);
        }
        let got = f16::from_bytes(&client.read_one(data.clone()).unwrap()[..96]).to_vec();
        assert_eq!(got, expected, "after {ids:?}");
    }
    // `launch` has no count to go by; buffers shorter than the count's are refused.
    let one = upload(&i32::bytes(&[1]));
    assert!(matches!(KV.launch(client, &data, &one, &one), Err(Error::CountNeeded { call: "launch" })));
    let short =
        KV.launch_at(client, 2, &data, &upload(&i32::bytes(&[1, 2])), &upload(&f16::bytes(&rows[..8])));
    assert!(
        matches!(short, Err(Error::HandleTooSmall { tensor: stridex::Operand::Updates, .. })),
        "{short:?}"
    );
}

/// An embedding's gradient with the count of ids left to run time: `run` reads it from the
/// indices' length (rows of two ids here), and the updates must hold that many rows.
#[test]
fn an_embedding_gradient_takes_the_count_of_its_ids() {
    let op = stridex::scatter! {
        data: f32[5, 3], indices: i64[_, 2], updates: f32[_, 2, 3], axis: 0, reduction: add
    };
    let table = [0.5f32; 15];
    for count in [0usize, 1, 3, 40] {
        let ids: Vec<i64> = (0..2 * count as i64).map(|p| (p * 7) % 5).collect();
        let grads: Vec<f32> = (0..6 * count).map(|v| v as f32 * 0.25).collect();
        let y = op.run(&table, &ids, &grads).unwrap();
        let mut serial = table.to_vec();
        for (p, &id) in ids.iter().enumerate() {
            for e in 0..3 {
                serial[id as usize * 3 + e] += grads[p * 3 + e];
            }
        }
        assert_eq!((y.shape(), y.data()), (&[5usize, 3][..], &serial[..]), "count {count}");
    }
    // Three ids are not whole rows of two; two rows of ids need two rows of gradients.
    assert!(matches!(op.run(&table, &[0, 1, 2], &[0.0; 9]), Err(Error::PartialRow { .. })));
    assert!(matches!(op.run(&table, &[0, 1, 2, 3], &[0.0; 6]), Err(Error::BufferTooShort { .. })));
    assert!(matches!(op.run(&table, &[0, 1], &[0.0; 12]), Err(Error::BufferTooLong { .. })));
    // An id out of range under `error` names its position at the count.
    let checked = stridex::scatter_nd! { data: f32[5, 3], indices: i64[_, 1], updates: f32[_, 3], reduction: add, out_of_range: error };
    let err = checked.run(&table, &[1, 9], &[0.0; 6]).unwrap_err();
    assert!(
        matches!(&err, Error::IndexOutOfRange { position, value: 9, .. } if position == &[1, 0]),
        "{err}"
    );
}

/// An embedding's gradient added in place on device buffers: a frequent id's long list summed in
/// the indices' order, bit for bit the serial sum, launch after launch (on GPUs, and under
/// `STRIDEX_TILE=spread`, its lists are grouped on the device). Under `error` an index out of
/// range is an `Err` naming it, and nothing is written.
#[test]
fn a_sum_launched_in_place_adds_in_order() {
    let op = stridex::scatter_nd! {
        data: f32[40, 8], indices: i64[300, 1], updates: f32[300, 8], reduction: add
    };
    let device = Device::default_device().unwrap();
    let client = device.client();
    let mut rng = Rng::new(23);
    // Two ids take most positions (lists of about a hundred), a few others the rest; ids
    // 30..40 are never written.
    let ids: Vec<i64> = (0..300).map(|p| if p % 3 == 0 { rng.range(0, 29) } else { (p % 2) * 7 }).collect();
    let updates: Vec<f32> = (0..300 * 8).map(|_| rng.range(-1000, 1000) as f32 * 1.0e-3 + 1.0e3).collect();
    let table: Vec<f32> = (0..320).map(|v| v as f32 * 0.25).collect();
    let mut serial = table.clone();
    let upload = |bytes: &[u8]| client.create_from_slice(bytes);
    let (data, idx, rows) =
        (upload(&f32::bytes(&table)), upload(&i64::bytes(&ids)), upload(&f32::bytes(&updates)));
    for _ in 0..3 {
        op.launch(client, &data, &idx, &rows).unwrap();
        for (p, &id) in ids.iter().enumerate() {
            for e in 0..8 {
                serial[id as usize * 8 + e] += updates[p * 8 + e];
            }
        }
    }
    let got = f32::from_bytes(&client.read_one(data.clone()).unwrap()[..1280]).to_vec();
    assert!(got.iter().zip(&serial).all(|(a, b)| a.to_bits() == b.to_bits()));
    let mut bad = ids.clone();
    bad[250] = 40;
    let err = op.launch(client, &data, &upload(&i64::bytes(&bad)), &rows).unwrap_err();
    assert!(
        matches!(&err, Error::IndexOutOfRange { position, value: 40, .. } if position == &[250, 0]),
        "{err}"
    );
    let after = f32::from_bytes(&client.read_one(data).unwrap()[..1280]).to_vec();
    assert_eq!(after, got);
}

/// A `_` embedding gradient added in place at counts of one to six hundred ids, one op: each
/// launch bit for bit the serial sum (on GPUs, and under `STRIDEX_TILE=spread`, its lists are
/// grouped on the device by kernels that take the count, their sort's blocks and histogram
/// sizes as launch arguments: one to three blocks here). Under `error`, an id out of range at
/// a count is an `Err` naming its position, and nothing is written.
#[test]
fn a_counted_sum_launched_in_place_adds_in_order_at_every_count() {
    let op = stridex::scatter! {
        data: f32[40, 8], indices: i32[_], updates: f32[_, 8], axis: 0, reduction: add
    };
    let checked = stridex::scatter! {
        data: f32[40, 8], indices: i32[_], updates: f32[_, 8], axis: 0, reduction: add, out_of_range: error
    };
    let device = Device::default_device().unwrap();
    let client = device.client();
    let upload = |bytes: &[u8]| client.create_from_slice(bytes);
    let mut rng = Rng::new(41);
    let table: Vec<f32> = (0..320).map(|v| v as f32 * 0.25).collect();
    let mut serial = table.clone();
    let data = upload(&f32::bytes(&table));
    for (launch, count) in [1usize, 600, 17, 300, 257].into_iter().enumerate() {
        // Id 7 takes every other position; ids 30..40 are never written.
        let ids: Vec<i32> =
            (0..count).map(|p| if p % 2 == 0 { 7 } else { rng.range(0, 29) as i32 }).collect();
        let rows: Vec<f32> = (0..count * 8).map(|_| rng.range(-1000, 1000) as f32 * 1.0e-3 + 1.0e3).collect();
        let op = if launch % 2 == 0 { &op } else { &checked };
        op.launch_at(client, count, &data, &upload(&i32::bytes(&ids)), &upload(&f32::bytes(&rows))).unwrap();
        for (p, &id) in ids.iter().enumerate() {
            for e in 0..8 {
                serial[id as usize * 8 + e] += rows[p * 8 + e];
            }
        }
        let got = f32::from_bytes(&client.read_one(data.clone()).unwrap()[..1280]).to_vec();
        assert!(got.iter().zip(&serial).all(|(a, b)| a.to_bits() == b.to_bits()), "count {count}");
    }
    let mut ids: Vec<i32> = (0..280).map(|p| p % 40).collect();
    ids[270] = 40;
    let rows = upload(&f32::bytes(&vec![1.0; 280 * 8]));
    let err = checked.launch_at(client, 280, &data, &upload(&i32::bytes(&ids)), &rows).unwrap_err();
    assert!(
        matches!(&err, Error::IndexOutOfRange { position, value: 40, .. } if position == &[270]),
        "{err}"
    );
    let after = f32::from_bytes(&client.read_one(data).unwrap()[..1280]).to_vec();
    assert!(after.iter().zip(&serial).all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// A ScatterElements along axis 0 whose rows of positions are counted at run time (`_`), as the
/// gradient of a `_` gather_elements is: 300 columns of f32 (the line kernel: each column a
/// line of the count's positions, its length a launch argument, so the `_` op's kernel is the
/// fixed op's) and 4 columns of f16 (the grouped kernel). `run` and `launch_at` at counts of 0
/// to 700 give the serial reference's bits, the chain that ends in it too; under `error`, an
/// index out of range is an `Err` naming its position and nothing is written.
#[test]
fn a_counted_scatter_elements_walks_lines_of_the_count() {
    static LINES: ScatterOp<f32, i32> = stridex::scatter_elements! {
        data: f32[50, 300], indices: i32[_, 300], updates: f32[_, 300], axis: 0, reduction: add
    };
    let checked = stridex::scatter_elements! {
        data: f32[50, 300], indices: i32[_, 300], updates: f32[_, 300], axis: 0, reduction: add,
        out_of_range: error
    };
    let fixed = stridex::scatter_elements! {
        data: f32[50, 300], indices: i32[7, 300], updates: f32[7, 300], axis: 0, reduction: add
    };
    let dialect = stridex::Dialect::Wgsl;
    assert_eq!(LINES.kernel_source(dialect).unwrap(), fixed.kernel_source(dialect).unwrap());
    let sliced = stridex::chain! {
        data: f32[_, 2, 300],
        slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
        scatter_elements { into: f32[50, 1, 300], indices: i32[_, 1, 300], axis: 0, reduction: add },
    };
    let device = Device::default_device().unwrap();
    let client = device.client();
    let upload = |bytes: &[u8]| client.create_from_slice(bytes);
    let mut rng = Rng::new(53);
    let mut serial: Vec<f32> = (0..15000).map(|v| v as f32 * 0.25).collect();
    let data = upload(&f32::bytes(&serial));
    let add_in_order = |into: &mut [f32], ids: &[i32], rows: &[f32]| {
        for (p, (&id, &u)) in ids.iter().zip(rows).enumerate() {
            into[id as usize * 300 + p % 300] += u;
        }
    };
    let same =
        |a: &[f32], b: &[f32]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    for (launch, count) in [1usize, 700, 0, 13, 64].into_iter().enumerate() {
        // Row 3 takes every other row of positions (long lists, summed in order).
        let ids: Vec<i32> =
            (0..count * 300).map(|p| if p % 600 < 300 { 3 } else { rng.range(0, 49) as i32 }).collect();
        let rows: Vec<f32> =
            (0..count * 300).map(|_| rng.range(-1000, 1000) as f32 * 1.0e-3 + 1.0e3).collect();
        let mut after = serial.clone();
        add_in_order(&mut after, &ids, &rows);
        let op = if launch % 2 == 0 { &LINES } else { &checked };
        let y = op.run(&serial, &ids, &rows).unwrap();
        assert!(same(y.data(), &after), "run at {count}");
        // The chain reads each position's row from the second of its pair.
        let pairs: Vec<f32> =
            rows.chunks(300).flat_map(|r| r.iter().map(|v| v * 0.5).chain(r.iter().copied())).collect();
        let mut out = serial.clone();
        sliced.run_into(&pairs, (&ids[..],), &mut out).unwrap();
        assert!(same(&out, &after), "chain at {count}");
        op.launch_at(client, count, &data, &upload(&i32::bytes(&ids)), &upload(&f32::bytes(&rows))).unwrap();
        let got = f32::from_bytes(&client.read_one(data.clone()).unwrap()[..60000]).to_vec();
        assert!(same(&got, &after), "launch_at {count}");
        serial = after;
    }
    let mut ids: Vec<i32> = (0..2 * 300).map(|p| p % 50).collect();
    ids[457] = 50;
    let rows = upload(&f32::bytes(&vec![1.0; 600]));
    let err = checked.launch_at(client, 2, &data, &upload(&i32::bytes(&ids)), &rows).unwrap_err();
    assert!(
        matches!(&err, Error::IndexOutOfRange { position, value: 50, .. } if position == &[1, 157]),
        "{err}"
    );
    let after = f32::from_bytes(&client.read_one(data).unwrap()[..60000]).to_vec();
    assert!(same(&after, &serial));
    // Few lines of f16, under `none` and `skip`: the last write in order wins, -1 pads.
    let small = stridex::scatter_elements! {
        data: f16[6, 4], indices: i64[_, 4], updates: f16[_, 4], axis: 0, out_of_range: skip
    };
    let table: Vec<f16> = (0..24).map(|v| f16::from_f32(v as f32)).collect();
    for count in [0usize, 1, 5, 9] {
        let ids: Vec<i64> =
            (0..count as i64 * 4).map(|p| if p % 7 == 6 { -1 } else { (p * 5) % 6 }).collect();
        let rows: Vec<f16> = (0..count * 4).map(|v| f16::from_f32(-(v as f32) - 1.0)).collect();
        let mut expected = table.clone();
        for (p, &id) in ids.iter().enumerate().filter(|(_, &id)| id >= 0) {
            expected[id as usize * 4 + p % 4] = rows[p];
        }
        let y = small.run(&table, &ids, &rows).unwrap();
        assert_eq!(y.data(), &expected[..], "count {count}");
    }
}

/// One id taking almost every position (a padding id): its list of 19,000 updates summed in
/// order, the last run (never written) left as it was, and an id past the end dropped
/// (OpenVINO's `zero`); then half the positions on one id among 70000 rows.
#[test]
fn one_id_taking_every_position_sums_in_order() {
    let op = stridex::scatter! {
        data: f32[5, 4], indices: i32[20000], updates: f32[20000, 4], axis: 0, reduction: add
    };
    let ids: Vec<i32> = (0..20000)
        .map(|p| {
            if p % 20 == 7 {
                p % 3 + 1
            } else if p == 5 {
                9
            } else {
                0
            }
        })
        .collect();
    let updates: Vec<f32> = (0..80000).map(|v| (v % 1013) as f32 * 1.0e-3 + 1.0e3).collect();
    let data: Vec<f32> = (0..20).map(|v| v as f32).collect();
    let mut serial = data.clone();
    for (p, &id) in ids.iter().enumerate().filter(|(_, &id)| id < 5) {
        for e in 0..4 {
            serial[id as usize * 4 + e] += updates[p * 4 + e];
        }
    }
    let y = op.run(&data, &ids, &updates).unwrap();
    assert!(y.data().iter().zip(&serial).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert_eq!(&y.data()[16..], &data[16..]);
    // 70000 rows: ids of three bytes (a sort on the device takes three digits), half of them
    // the padding id 0.
    let wide = stridex::scatter! {
        data: f32[70000, 4], indices: i32[20000], updates: f32[20000, 4], axis: 0, reduction: add
    };
    let ids: Vec<i32> = (0..20000).map(|p| if p % 2 == 0 { 0 } else { p * 7919 % 70000 }).collect();
    let data = vec![0.5f32; 280000];
    let mut serial = data.clone();
    for (p, &id) in ids.iter().enumerate() {
        for e in 0..4 {
            serial[id as usize * 4 + e] += updates[p * 4 + e];
        }
    }
    let y = wide.run(&data, &ids, &updates).unwrap();
    assert!(y.data().iter().zip(&serial).all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// Every run applied, whatever their count: on lavapipe the runs are dealt over a power of two
/// of dispatch slots, at least 64 (`ScatterKernelDesc::dealt`), those past the runs' count
/// taking none. Here run counts at, around and past those powers: f32 rows of one tile and of
/// four (several invocations per run), and u8 elements written a 32-bit word at a time (a run
/// is a word of four); each row once in order, then as many updates again at rows drawn with
/// repeats, against the serial sum.
#[test]
fn every_run_is_applied_whatever_their_count() {
    fn rows_summed(n: usize, width: usize) {
        // Three rows past the ids are never written.
        let ids: Vec<i32> = (0..2 * n).map(|p| if p < n { p } else { (p * p + 7) % n } as i32).collect();
        let updates: Vec<f32> = (0..2 * n * width).map(|v| (v % 997) as f32 * 0.125 + 0.5).collect();
        let data: Vec<f32> = (0..(n + 3) * width).map(|v| v as f32 * 0.25).collect();
        let mut serial = data.clone();
        for (p, &id) in ids.iter().enumerate() {
            for e in 0..width {
                serial[id as usize * width + e] += updates[p * width + e];
            }
        }
        let op = Scatter::openvino()
            .data::<f32>(&[n + 3, width])
            .indices::<i32>(&[2 * n])
            .updates(&[2 * n, width])
            .reduction(Reduction::Add)
            .build()
            .unwrap();
        let y = op.run(&data, &ids, &updates).unwrap();
        let same = y.data().iter().zip(&serial).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{n} f32 rows of {width}");
    }
    fn bytes_summed(words: usize) {
        // Runs are words: `words` of them written, one more (its first three bytes) not.
        let n = 4 * words;
        let ids: Vec<i32> = (0..2 * n).map(|p| if p < n { p } else { (p * 31 + 5) % n } as i32).collect();
        let bytes: Vec<u8> = (0..2 * n).map(|p| (p * 13 % 251) as u8).collect();
        let data: Vec<u8> = (0..n + 3).map(|v| (v % 256) as u8).collect();
        let mut serial = data.clone();
        for (p, &id) in ids.iter().enumerate() {
            serial[id as usize] = serial[id as usize].wrapping_add(bytes[p]);
        }
        let op = Scatter::openvino()
            .data::<u8>(&[n + 3])
            .indices::<i32>(&[2 * n])
            .updates(&[2 * n])
            .reduction(Reduction::Add)
            .build()
            .unwrap();
        assert_eq!(op.run(&data, &ids, &bytes).unwrap().data(), &serial[..], "{words} u8 words");
    }
    for n in [1usize, 63, 64, 65, 127, 128, 129, 1000, 4096, 4097] {
        rows_summed(n, 4);
        bytes_summed(n);
    }
    for n in [63, 65, 128, 129] {
        rows_summed(n, 64);
    }
}

/// OpenVINO ScatterElementsUpdate-12's worked examples (its spec page), value for value, and the
/// cases of its reference tests for `mean` and `use_init_val: false`.
#[test]
fn openvino_scatter_elements_update_examples() {
    // Spec example 1: `sum` starting from the data; -2 and -1 count from the end.
    let op = stridex::scatter_elements! {
        rules: openvino, data: f32[4], indices: i64[6], updates: f32[6], axis: 0, reduction: add
    };
    let y =
        op.run(&[2.0, 3.0, 4.0, 6.0], &[1, 0, 0, -2, -1, 2], &[10.0, 20.0, 30.0, 40.0, 70.0, 60.0]).unwrap();
    assert_eq!(y.data(), &[52.0, 13.0, 104.0, 76.0]);
    // Spec example 2: the same sums without the data.
    let op = stridex::scatter_elements! {
        rules: openvino, data: f32[4], indices: i64[6], updates: f32[6], axis: 0, reduction: add,
        use_init_val: false
    };
    let y =
        op.run(&[2.0, 3.0, 4.0, 6.0], &[1, 0, 0, 2, 3, 2], &[10.0, 20.0, 30.0, 40.0, 70.0, 60.0]).unwrap();
    assert_eq!(y.data(), &[50.0, 10.0, 100.0, 70.0]);
    // Spec examples 3 to 5: `none`, `sum` and `prod` along axis 1 of a 3x4 i32.
    let none = stridex::scatter_elements! {
        rules: openvino, data: i32[3, 4], indices: i32[2, 2], updates: i32[2, 2], axis: 1
    };
    let y = none.run(&[0; 12], &[1, 2, 0, 3], &[11, 12, 13, 14]).unwrap();
    assert_eq!(y.data(), &[0, 11, 12, 0, 13, 0, 0, 14, 0, 0, 0, 0]);
    let sum = stridex::scatter_elements! {
        rules: openvino, data: i32[3, 4], indices: i32[2, 2], updates: i32[2, 2], axis: 1, reduction: add
    };
    let y = sum.run(&[1; 12], &[1, 1, 0, 3], &[11, 12, 13, 14]).unwrap();
    assert_eq!(y.data(), &[1, 24, 1, 1, 14, 1, 1, 15, 1, 1, 1, 1]);
    let prod = stridex::scatter_elements! {
        rules: openvino, data: i32[3, 4], indices: i32[2, 2], updates: i32[2, 2], axis: 1, reduction: mul
    };
    let y = prod.run(&[2; 12], &[1, 1, 0, 3], &[11, 12, 13, 14]).unwrap();
    assert_eq!(y.data(), &[2, 264, 2, 2, 26, 2, 2, 28, 2, 2, 2, 2]);

    // The reference tests' `mean`, with and without the data: (11 + 23 + 32) / 3 = 22.
    let data = [11, 12, 13, 14, 15, 16];
    let mean = stridex::scatter_elements! {
        rules: openvino, data: i32[1, 2, 3], indices: i64[1, 1, 4], updates: i32[1, 1, 4], axis: 2,
        reduction: mean
    };
    assert_eq!(mean.run(&data, &[0, 1, 0, 2], &[23, 38, 32, 7]).unwrap().data(), &[22, 25, 10, 14, 15, 16]);
    let mean_alone = stridex::Scatter::openvino()
        .elements()
        .data::<i32>(&[1, 2, 3])
        .indices::<i64>(&[1, 1, 4])
        .updates(&[1, 1, 4])
        .axis(2)
        .reduction(Reduction::Mean)
        .use_init_val(false)
        .build()
        .unwrap();
    let y = mean_alone.run(&data, &[0, 1, 0, 0], &[20, 33, 26, 29]).unwrap();
    assert_eq!(y.data(), &[25, 33, 13, 14, 15, 16]);
    // `sum`, `min` without the data, `prod` and `max` with it.
    let sum = stridex::scatter_elements! {
        rules: openvino, data: i32[2, 2], indices: i64[1, 5], updates: i32[1, 5], axis: 1,
        reduction: add, use_init_val: false
    };
    assert_eq!(
        sum.run(&[1, 2, 3, 4], &[0, 0, 1, 1, 1], &[50, 51, 10, 20, 30]).unwrap().data(),
        &[101, 60, 3, 4]
    );
    let prod = stridex::scatter_elements! {
        rules: openvino, data: i32[3, 2], indices: i64[4, 1], updates: i32[4, 1], axis: 0, reduction: mul
    };
    let y = prod.run(&[1, 2, 3, 4, 5, 6], &[0, 0, 1, 2], &[7, 7, 10, 5]).unwrap();
    assert_eq!(y.data(), &[49, 2, 30, 4, 25, 6]);
    let min = stridex::scatter_elements! {
        rules: openvino, data: i32[2, 3], indices: i64[2, 2], updates: i32[2, 2], axis: 1,
        reduction: min, use_init_val: false
    };
    let y = min.run(&[11, 12, 13, 14, 15, 16], &[-3, 1, 0, 2], &[1, 22, 24, 6]).unwrap();
    assert_eq!(y.data(), &[1, 22, 13, 24, 15, 6]);
    let max = stridex::scatter_elements! {
        rules: openvino, data: i32[3, 2], indices: i64[1, 2], updates: i32[1, 2], axis: 0, reduction: max
    };
    assert_eq!(
        max.run(&[11, 12, 13, 14, 15, 16], &[-1, 1], &[5, 24]).unwrap().data(),
        &[11, 12, 13, 24, 15, 16]
    );
}

/// A mean rounds integers down, toward negative infinity (-7 / 2 is -4), and divides floats
/// once; 8- and 16-bit lanes of one word keep their own counts.
#[test]
fn means_round_down_and_count_per_element() {
    let mean = stridex::scatter_elements! {
        rules: openvino, data: i32[3], indices: i32[4], updates: i32[4], axis: 0, reduction: mean
    };
    // Element 0: (-1 - 6) / 2; element 1: (5 + 1 + 1) / 3; element 2: 9 / 2.
    assert_eq!(mean.run(&[-1, 5, 9], &[0, 1, 1, 2], &[-6, 1, 1, 0]).unwrap().data(), &[-4, 2, 4]);
    let bytes = stridex::scatter_elements! {
        rules: openvino, data: i8[6], indices: i32[5], updates: i8[5], axis: 0, reduction: mean,
        use_init_val: false
    };
    // Element 0: (-3 - 4) / 2 rounds down to -4; 1: 7 alone; 3: 100 + 100 wraps in i8 to -56,
    // / 2 = -28; the rest keep the data.
    let y = bytes.run(&[1, 2, 3, 4, 5, 6], &[0, 1, 0, 3, 3], &[-3, 7, -4, 100, 100]).unwrap();
    assert_eq!(y.data(), &[-4, 7, 3, -28, 5, 6]);
    let halves = stridex::scatter_elements! {
        rules: openvino, data: f16[4], indices: i64[3], updates: f16[3], axis: 0, reduction: mean
    };
    let h = |v: f32| f16::from_f32(v);
    let y = halves.run(&[h(1.0), h(2.0), h(3.0), h(4.0)], &[2, 2, 1], &[h(0.5), h(1.0), h(-2.0)]).unwrap();
    assert_eq!(y.data(), &[h(1.0), h(0.0), h(1.5), h(4.0)]);
}

/// `duplicates: error` names both positions; the `error` policy names the index out of range.
#[test]
fn duplicates_and_indices_out_of_range_are_errors() {
    let op = stridex::scatter_elements! {
        data: f32[2, 3], indices: i64[2, 2], updates: f32[2, 2], axis: 1, duplicates: error
    };
    let err = op.run(&[0.0; 6], &[0, 2, 1, 1], &[1.0; 4]).unwrap_err();
    assert!(
        matches!(&err, Error::DuplicateIndex { first, second } if first == &[1, 0] && second == &[1, 1]),
        "{err}"
    );
    let err = op.run(&[0.0; 6], &[0, 3, 1, 2], &[1.0; 4]).unwrap_err();
    assert!(matches!(err, Error::IndexOutOfRange { value: 3, axis_size: 3, .. }), "{err}");
    let nd = stridex::scatter_nd! { data: i32[2, 2], indices: i64[3, 2], updates: i32[3], reduction: mul };
    let y = nd.run(&[1, 2, 3, 4], &[0, 1, 1, 0, 0, 1], &[5, 6, 7]).unwrap();
    assert_eq!(y.data(), &[1, 70, 18, 4]);
}

/// 8- and 16-bit reductions in whole words: i8 max, bf16 add (rounded after every step).
#[test]
fn narrow_types_reduce_lane_by_lane() {
    let op =
        stridex::scatter! { data: i8[3, 4], indices: i64[3], updates: i8[3, 4], axis: 0, reduction: max };
    let data = [0i8, -5, 7, -128, 1, 1, 1, 1, 2, 2, 2, 2];
    let y = op.run(&data, &[0, 0, 2], &[-1, -4, 8, -127, 3, -6, 6, 127, -3, 5, -9, 0]).unwrap();
    assert_eq!(y.data(), &[3, -4, 8, 127, 1, 1, 1, 1, 2, 5, 2, 2]);
    let op =
        stridex::scatter! { data: bf16[2, 2], indices: i64[3], updates: bf16[3, 2], axis: 0, reduction: add };
    let b = stridex::half::bf16::from_f32;
    let updates = [b(1.0), b(0.00390625), b(0.00390625), b(0.00390625), b(2.0), b(3.0)];
    let y = op.run(&[b(256.0), b(1.0), b(0.0), b(0.0)], &[0, 0, 1], &updates).unwrap();
    let serial = [b(256.0) + b(1.0) + b(0.00390625), b(1.0) + b(0.00390625) + b(0.00390625)];
    assert_eq!(y.data(), &[serial[0], serial[1], b(2.0), b(3.0)]);
}

/// 8- and 16-bit ScatterElements and ScatterND write single elements: one invocation per
/// destination word applies its elements' updates in order, so neighbours in a word never race.
#[test]
fn narrow_single_elements_share_words() {
    let h = f16::from_f32;
    let op = stridex::scatter_elements! {
        data: f16[2, 3], indices: i64[2, 2], updates: f16[2, 2], axis: 1, reduction: add,
    };
    let data = [h(1.0), h(2.0), h(3.0), h(4.0), h(5.0), h(6.0)];
    // Row 0: 0.5 and 0.25 both into column 1; row 1: columns 2 and 0.
    let y = op.run(&data, &[1, 1, 2, 0], &[h(0.5), h(0.25), h(10.0), h(20.0)]).unwrap();
    assert_eq!(y.data(), &[h(1.0), h(2.75), h(3.0), h(24.0), h(5.0), h(16.0)]);
    // Under `none` the last write to an element wins, whatever its neighbours get.
    let op = stridex::scatter_nd! { data: u8[7], indices: i64[5, 1], updates: u8[5] };
    let y = op.run(&[0; 7], &[3, 2, 3, 4, 0], &[1, 2, 3, 4, 5]).unwrap();
    assert_eq!(y.data(), &[5, 0, 2, 3, 4, 0, 0]);
    // A repeated element is refused under `duplicates: error`, by element, not by word.
    let op = stridex::scatter_nd! { data: u8[7], indices: i64[3, 1], updates: u8[3], duplicates: error };
    let e = op.run(&[0; 7], &[1, 2, 1], &[1, 2, 3]).unwrap_err();
    assert!(matches!(e, Error::DuplicateIndex { .. }), "{e}");
    assert_eq!(op.run(&[9; 7], &[1, 2, 0], &[1, 2, 3]).unwrap().data(), &[3, 1, 2, 9, 9, 9, 9]);
}

/// OpenVINO ScatterNDUpdate-15's `sub`: each update subtracted in the indices' order.
#[test]
fn openvino_nd_subtracts_in_order() {
    let op = stridex::scatter_nd! {
        rules: openvino, data: f32[3, 2], indices: i32[3, 1], updates: f32[3, 2], reduction: sub,
    };
    let y =
        op.run(&[10.0, 20.0, 30.0, 40.0, 50.0, 60.0], &[2, 0, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert_eq!(y.data(), &[7.0, 16.0, 30.0, 40.0, 44.0, 52.0]);
    let op = stridex::scatter_nd! {
        rules: openvino, data: u8[4], indices: i32[2, 1], updates: u8[2], reduction: sub,
    };
    assert_eq!(op.run(&[1, 2, 3, 4], &[1, 1], &[2, 1]).unwrap().data(), &[1, 255, 3, 4]);
}

/// The run-time builder writes the descriptor the macros write, and its op the same values.
#[test]
fn the_builder_matches_the_macros() {
    let built = Scatter::onnx()
        .elements()
        .data::<f32>(&[2, 3])
        .indices::<i64>(&[2, 2])
        .updates(&[2, 2])
        .axis(1)
        .reduction(Reduction::Max)
        .build()
        .unwrap();
    let by_macro = stridex::scatter_elements! {
        rules: onnx, data: f32[2, 3], indices: i64[2, 2], updates: f32[2, 2], axis: 1, reduction: max
    };
    assert_eq!(built.desc(), by_macro.desc());
    let args = (&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2i64, 2, 0, -1], &[9.0, 2.0, 0.5, 7.0]);
    let y = built.run(args.0, args.1, args.2).unwrap();
    assert_eq!(y.data(), by_macro.run(args.0, args.1, args.2).unwrap().data());
    assert_eq!(y.data(), &[1.0, 2.0, 9.0, 4.0, 5.0, 7.0]);
    let kv = Scatter::openvino()
        .data::<f16>(&[4, 2])
        .indices::<i32>(&[3])
        .updates(&[3, 2])
        .out_of_range(OutOfRange::Skip)
        .duplicates(Duplicates::Error)
        .build()
        .unwrap();
    let h = f16::from_f32;
    let y = kv.run(&[h(0.0); 8], &[3, -1, 0], &[h(1.0), h(2.0), h(3.0), h(4.0), h(5.0), h(6.0)]).unwrap();
    assert_eq!(y.data(), &[h(5.0), h(6.0), h(0.0), h(0.0), h(0.0), h(0.0), h(1.0), h(2.0)]);
    // The same write with its count left to run time: the leading sizes given are not read.
    let counted = Scatter::openvino()
        .data::<f16>(&[4, 2])
        .indices::<i32>(&[0])
        .updates(&[0, 2])
        .out_of_range(OutOfRange::Skip)
        .dynamic_leading()
        .build()
        .unwrap();
    let by_macro =
        stridex::scatter! { data: f16[4, 2], indices: i32[_], updates: f16[_, 2], out_of_range: skip };
    assert!(counted.is_dynamic() && by_macro.is_dynamic());
    let y =
        counted.run(&[h(0.0); 8], &[3, -1, 0], &[h(1.0), h(2.0), h(3.0), h(4.0), h(5.0), h(6.0)]).unwrap();
    assert_eq!(y.data(), &[h(5.0), h(6.0), h(0.0), h(0.0), h(0.0), h(0.0), h(1.0), h(2.0)]);
    let y = counted.run(&[h(0.0); 8], &[1], &[h(7.0), h(8.0)]).unwrap();
    assert_eq!(y.data(), by_macro.run(&[h(0.0); 8], &[1], &[h(7.0), h(8.0)]).unwrap().data());
    let nd = Scatter::onnx().nd().data::<i32>(&[2, 2]).indices::<i64>(&[1, 2]).updates(&[1]).axis(0);
    let e = nd.build().unwrap_err().to_string();
    assert!(e.contains("axis"), "{e}");
}

/// The rules the macros check at compile time, from the run-time constructor.
#[test]
fn rules_refuse_what_the_standards_do() {
    let new = |form, rules, data: &[usize], indices: &[usize], updates: &[usize], r: Option<Reduction>| {
        let mut d = ScatterDesc::new(
            form,
            rules,
            decl(DType::U8, data),
            decl(DType::I64, indices),
            decl(DType::U8, updates),
            0,
        );
        d.reduction = r;
        ScatterOp::<u8, i64>::new(d).map(|_| ()).unwrap_err().to_string()
    };
    let e = new(GatherForm::Axis, GatherRules::Onnx, &[4, 4], &[2], &[2, 4], None);
    assert!(e.contains("rules `onnx` have no such scatter"), "{e}");
    let e = new(GatherForm::Elements, GatherRules::DirectMl, &[4, 4], &[2, 4], &[2, 4], Some(Reduction::Add));
    assert!(e.contains("DirectML SCATTER takes no reduction"), "{e}");
    let e = new(GatherForm::Axis, GatherRules::OpenVino, &[4, 4], &[2], &[2, 3], None);
    assert!(e.contains("`updates` has sizes [2, 3], but the data and indices give [2, 4]"), "{e}");
    let e = new(GatherForm::Axis, GatherRules::OpenVino, &[4, 3], &[2], &[2, 3], None);
    assert!(e.contains("u8 scatter: the innermost run of 3 element(s) is not packed in whole words"), "{e}");
    let e = new(GatherForm::Nd, GatherRules::Onnx, &[4, 4], &[2, 3], &[2], None);
    assert!(e.contains("ONNX ScatterND-18 (its indices follow the matching gather's rules)"), "{e}");
}

// ---- the naive reference: the specs' loops, serial, in the element type ----

/// An element the reference combines as the standards do (floats in their own precision, as
/// `half` computes them; integers wrapping; bool as NumPy's or/and).
trait Combine: Element {
    /// `r` is never `mean` (whose sum `add` computes; `mean` below divides it).
    fn combine(self, u: Self, r: Reduction) -> Self;
    /// A sum of `n` values divided by `n`: floats in their own precision, integers rounded
    /// toward negative infinity (OpenVINO ScatterElementsUpdate-12).
    fn mean(self, n: usize) -> Self;
    fn from_seed(v: i64) -> Self;
}

macro_rules! combine_float {
    ($($t:ty => $from:expr, $mean:expr);*) => {$(
        impl Combine for $t {
            fn combine(self, u: Self, r: Reduction) -> Self {
                match r {
                    Reduction::None => u,
                    Reduction::Add => self + u,
                    Reduction::Mul => self * u,
                    Reduction::Sub => self - u,
                    Reduction::Max => if u > self { u } else { self },
                    Reduction::Min => if u < self { u } else { self },
                    Reduction::Mean => unreachable!("a mean adds"),
                }
            }
            fn mean(self, n: usize) -> Self {
                $mean(self, n)
            }
            fn from_seed(v: i64) -> Self {
                $from(v)
            }
        }
    )*};
}
combine_float!(
    f32 => |v: i64| v as f32 * 0.37, |x: f32, n: usize| x / n as f32;
    f16 => |v: i64| f16::from_f32(v as f32 * 0.37), |x: f16, n: usize| f16::from_f32(x.to_f32() / n as f32)
);

macro_rules! combine_int {
    ($($t:ty),*) => {$(
        impl Combine for $t {
            fn combine(self, u: Self, r: Reduction) -> Self {
                match r {
                    Reduction::None => u,
                    Reduction::Add => self.wrapping_add(u),
                    Reduction::Mul => self.wrapping_mul(u),
                    Reduction::Sub => self.wrapping_sub(u),
                    Reduction::Max => self.max(u),
                    Reduction::Min => self.min(u),
                    Reduction::Mean => unreachable!("a mean adds"),
                }
            }
            fn mean(self, n: usize) -> Self {
                (self as i64).div_euclid(n as i64) as $t
            }
            fn from_seed(v: i64) -> Self {
                v as $t
            }
        }
    )*};
}
combine_int!(i32, u8, i16);

/// A scatter drawn at random, small, with heavy duplication and hostile indices.
#[derive(Debug)]
struct Case {
    form: GatherForm,
    data: Vec<usize>,
    indices: Vec<usize>,
    updates: Vec<usize>,
    axis: usize,
    rules: GatherRules,
    reduction: Reduction,
    /// OpenVINO ScatterElementsUpdate-12's: `false` leaves the data out of the reductions.
    use_init_val: bool,
    policy: OutOfRange,
    values: Vec<i64>,
}

fn draw(rng: &mut Rng, dtype: DType) -> Case {
    let form = [GatherForm::Axis, GatherForm::Elements, GatherForm::Nd][rng.below(3)];
    let rank = 1 + rng.below(3);
    let mut data: Vec<usize> = (0..rank).map(|_| 1 + rng.below(4)).collect();
    let lanes = 4 / dtype.size().min(4);
    let (indices, updates, axis);
    match form {
        GatherForm::Axis => {
            axis = rng.below(rank);
            indices = (0..1 + rng.below(2)).map(|_| rng.below(5)).collect::<Vec<_>>();
            if lanes > 1 || rng.chance(30) {
                // A narrow type writes whole words: a packed innermost run of whole words;
                // runs of 2 and 4 words take the kernel's 8- and 16-byte vectors.
                data.push(lanes * [1, 2, 4, 8][rng.below(4)]);
            }
            let mut u = data[..axis].to_vec();
            u.extend(&indices);
            u.extend(&data[axis + 1..]);
            updates = u;
        }
        GatherForm::Elements => {
            axis = rng.below(rank);
            indices = data
                .iter()
                .enumerate()
                .map(|(d, &s)| if d == axis { rng.below(6) } else { 1 + rng.below(s) })
                .collect();
            updates = indices.clone();
        }
        GatherForm::Nd => {
            axis = 0;
            let k = 1 + rng.below(rank);
            if lanes > 1 || rng.chance(30) {
                data.push(lanes * [1, 2, 4, 8][rng.below(4)]);
            }
            let mut i: Vec<usize> = (0..rng.below(3)).map(|_| rng.below(4)).collect();
            let mut u = i.clone();
            u.extend(&data[k..]);
            i.push(k);
            indices = i;
            updates = u;
        }
    }
    // `sub` is OpenVINO ScatterNDUpdate-15's alone, `mean` and `use_init_val`
    // ScatterElementsUpdate-12's.
    let mut reduction = Reduction::ALL[rng.below(if form == GatherForm::Nd { 6 } else { 5 })];
    let openvino = form == GatherForm::Axis || reduction == Reduction::Sub || rng.chance(40);
    let rules = if openvino { GatherRules::OpenVino } else { GatherRules::Onnx };
    let mut use_init_val = true;
    if rules.has_init_choice(form) {
        if rng.chance(35) {
            reduction = Reduction::Mean;
        }
        use_init_val = rng.chance(50);
    }
    let policy = [OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp, OutOfRange::Skip][rng.below(4)];
    let n: usize = indices.iter().product();
    // Mostly in range, small (many repeats), some negative, a few past the end.
    let values = (0..n).map(|_| rng.range(-3, 4)).collect();
    Case { form, data, indices, updates, axis, rules, reduction, use_init_val, policy, values }
}

/// The serial reference: every update, in the updates' row-major order (for one destination,
/// the indices' row-major order), combined into the data (without `use_init_val`, into the
/// destination's first update), a mean divided at the end. `None`: an index out of range under
/// `error`.
fn reference<T: Combine>(c: &Case, data: &[T], updates: &[T]) -> Option<Vec<T>> {
    let mut out = data.to_vec();
    let mut taken = vec![0usize; out.len()];
    let strides = |s: &[usize]| -> Vec<usize> {
        let mut st = vec![1; s.len()];
        for i in (0..s.len().saturating_sub(1)).rev() {
            st[i] = st[i + 1] * s[i + 1];
        }
        st
    };
    let (ds, is) = (strides(&c.data), strides(&c.indices));
    let normalize = |v: i64, s: usize| -> Result<Option<usize>, ()> {
        let s = s as i64;
        let n = if v < 0 { v + s } else { v };
        match c.policy {
            OutOfRange::Error if !(-s..s).contains(&v) => Err(()),
            OutOfRange::Skip if !(0..s).contains(&v) => Ok(None),
            OutOfRange::Zero if !(0..s).contains(&n) => Ok(None),
            OutOfRange::Clamp if s == 0 => Ok(None),
            OutOfRange::Clamp => Ok(Some(n.clamp(0, s - 1) as usize)),
            _ => Ok(Some(n as usize)),
        }
    };
    let total: usize = c.updates.iter().product();
    let mut u = vec![0; c.updates.len()];
    for (at, &update) in updates.iter().enumerate().take(total) {
        let mut rem = at;
        for d in (0..u.len()).rev() {
            u[d] = rem % c.updates[d];
            rem /= c.updates[d];
        }
        let index_at = |coords: &[usize]| coords.iter().zip(&is).map(|(a, b)| a * b).sum::<usize>();
        let dest: Option<Vec<usize>> = match c.form {
            GatherForm::Axis => {
                let q = c.indices.len();
                let v = c.values[index_at(&u[c.axis..c.axis + q])];
                normalize(v, c.data[c.axis]).ok()?.map(|n| {
                    let mut d = u[..c.axis].to_vec();
                    d.push(n);
                    d.extend(&u[c.axis + q..]);
                    d
                })
            }
            GatherForm::Elements => {
                let v = c.values[index_at(&u)];
                normalize(v, c.data[c.axis]).ok()?.map(|n| {
                    let mut d = u.clone();
                    d[c.axis] = n;
                    d
                })
            }
            GatherForm::Nd => {
                let q = c.indices.len() - 1;
                let k = c.indices[q];
                let mut d = Vec::new();
                let mut dropped = false;
                for j in 0..k {
                    let mut coords = u[..q].to_vec();
                    coords.push(j);
                    match normalize(c.values[index_at(&coords)], c.data[j]).ok()? {
                        Some(n) => d.push(n),
                        None => dropped = true,
                    }
                }
                d.extend(&u[q..]);
                (!dropped).then_some(d)
            }
        };
        if let Some(d) = dest {
            let o = d.iter().zip(&ds).map(|(a, b)| a * b).sum::<usize>();
            let sum = if c.reduction == Reduction::Mean { Reduction::Add } else { c.reduction };
            out[o] = if !c.use_init_val && taken[o] == 0 { update } else { out[o].combine(update, sum) };
            taken[o] += 1;
        }
    }
    if c.reduction == Reduction::Mean {
        for (o, &n) in taken.iter().enumerate().filter(|(_, &n)| n > 0) {
            out[o] = out[o].mean(n + usize::from(c.use_init_val));
        }
    }
    Some(out)
}

/// The op of the drawn case `c` with `J` indices, and its data and updates drawn from `rng`
/// (`None`: a narrow type refuses runs that are not whole words, which the rules' own test
/// checks).
#[allow(clippy::type_complexity)]
fn build<T: Combine, J: stridex::IndexElement>(
    c: &Case,
    rng: &mut Rng,
    dtype: DType,
) -> Result<Option<(ScatterOp<T, J>, Vec<T>, Vec<T>)>, String> {
    let mut desc = ScatterDesc::new(
        c.form,
        c.rules,
        decl(dtype, &c.data),
        decl(J::DTYPE, &c.indices),
        decl(dtype, &c.updates),
        c.axis as i64,
    );
    desc.reduction = Some(c.reduction);
    desc.use_init_val = c.rules.has_init_choice(c.form).then_some(c.use_init_val);
    desc.map.out_of_range = Some(c.policy);
    let op = match ScatterOp::<T, J>::new(desc) {
        Ok(op) => op,
        Err(Error::Rule(stridex::RuleError::ScatterLanes { .. })) => return Ok(None),
        Err(e) => return Err(format!("{c:?}: {e}")),
    };
    let data: Vec<T> =
        (0..c.data.iter().product::<usize>()).map(|_| T::from_seed(rng.range(-9, 10))).collect();
    let updates: Vec<T> =
        (0..c.updates.iter().product::<usize>()).map(|_| T::from_seed(rng.range(-9, 10))).collect();
    Ok(Some((op, data, updates)))
}

/// `launch` in place on buffers between guard regions (which must come back untouched, as the
/// indices and updates must) gives what `run` gave: the same data, or the same `Err`.
fn guarded_agrees<T: Combine, J: stridex::IndexElement>(
    op: &ScatterOp<T, J>,
    (data, ids, updates): (&[T], &[J], &[T]),
    got: &Result<stridex::Tensor<T>, Error>,
) -> Result<(), String> {
    let device = Device::default_device().map_err(|e| e.to_string())?;
    let guarded = op.__run_guarded(device, data, ids, updates);
    match (got, &guarded) {
        (Ok(a), Ok(b)) if a.data() == b.data() => Ok(()),
        (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
        _ => Err(format!(
            "{:?}
run {got:?}
guarded launch {guarded:?}",
            op.desc()
        )),
    }
}

/// The same scatter with its indices' and updates' leading size `_` (`None`: a rule of the
/// count refuses it, which must be one of those rules, not another).
fn counted<T: Combine, J: stridex::IndexElement>(
    op: &ScatterOp<T, J>,
) -> Result<Option<ScatterOp<T, J>>, String> {
    let mut desc = *op.desc();
    let leading = |sizes: &stridex_core::Dims| {
        let mut v = sizes.to_vec();
        if let Some(first) = v.first_mut() {
            *first = stridex_core::dynamic::PLACEHOLDER;
        }
        stridex_core::Dims::new(&v).unwrap()
    };
    desc.map.indices.sizes = leading(&desc.map.indices.sizes);
    desc.updates.sizes = leading(&desc.updates.sizes);
    desc.map.dynamic_leading = true;
    let count_rule = |e: &stridex::RuleError| match e {
        stridex::RuleError::Dynamic { .. } => true,
        stridex::RuleError::InScatter { rule, .. } => matches!(**rule, stridex::RuleError::Dynamic { .. }),
        _ => false,
    };
    match ScatterOp::<T, J>::new(desc) {
        Ok(op) => Ok(Some(op)),
        Err(Error::Rule(e)) if count_rule(&e) => Ok(None),
        Err(e) => Err(format!("{desc:?} with `_`: {e}")),
    }
}

/// Where the `_` rules take the scatter with its count left to run time, `run` at the indices'
/// count gives what the fixed op gave: the same data, or the same `Err`.
fn counted_agrees<T: Combine, J: stridex::IndexElement>(
    op: &ScatterOp<T, J>,
    (data, ids, updates): (&[T], &[J], &[T]),
    got: &Result<stridex::Tensor<T>, Error>,
) -> Result<(), String> {
    let Some(counted) = counted(op)? else {
        if matches!(op.desc().map.form, GatherForm::Axis | GatherForm::Elements)
            && op.desc().map.axis == 0
            && op.desc().map.indices.sizes.iter().skip(1).all(|&n| n > 0)
            && !op.desc().map.indices.sizes.is_empty()
        {
            return Err(format!("{:?}: a scatter along axis 0 refused `_`", op.desc()));
        }
        return Ok(());
    };
    let again = counted.run(data, ids, updates);
    match (got, &again) {
        (Ok(a), Ok(b)) if a.data() == b.data() && a.shape() == b.shape() => Ok(()),
        (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
        _ => Err(format!("{:?}\nfixed {got:?}\nwith `_` {again:?}", op.desc())),
    }
}

fn check_case<T: Combine>(choices: Vec<u64>, seed: u64, dtype: DType) -> Result<(), String> {
    let mut rng = Rng::from_choices(choices, seed);
    let c = draw(&mut rng, dtype);
    let Some((op, data, updates)) = build::<T, i64>(&c, &mut rng, dtype)? else { return Ok(()) };
    let got = op.run(&data, &c.values, &updates);
    guarded_agrees(&op, (&data, &c.values, &updates), &got)?;
    counted_agrees(&op, (&data, &c.values, &updates), &got)?;
    match (reference(&c, &data, &updates), got) {
        (Some(expected), Ok(y)) if y.data() == expected.as_slice() => Ok(()),
        (None, Err(Error::IndexOutOfRange { .. })) => Ok(()),
        (expected, got) => Err(format!("{c:?}\nexpected {expected:?}\ngot {got:?}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(300), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn scatters_match_the_serial_reference((choices, seed) in choices(), t in 0usize..5) {
        let r = match t {
            0 => check_case::<f32>(choices, seed, DType::F32),
            1 => check_case::<f16>(choices, seed, DType::F16),
            2 => check_case::<i32>(choices, seed, DType::I32),
            3 => check_case::<i16>(choices, seed, DType::I16),
            _ => check_case::<u8>(choices, seed, DType::U8),
        };
        r.map_err(TestCaseError::fail)?;
    }
}

/// A float sum depends on its order: 4096 updates into 8 rows, repeated, give the same bits on
/// every run, and those of the serial sum in the indices' order.
#[test]
fn sums_are_identical_over_runs() {
    let op = stridex::scatter! { data: f32[8, 64], indices: i64[4096], updates: f32[4096, 64], axis: 0, reduction: add };
    let mut rng = Rng::new(7);
    let ids: Vec<i64> = (0..4096).map(|_| rng.range(0, 7)).collect();
    let updates: Vec<f32> = (0..4096 * 64).map(|_| rng.range(-1000, 1000) as f32 * 1.0e-3 + 1.0e3).collect();
    let data = vec![0.5f32; 512];
    let mut serial = data.clone();
    for (p, &id) in ids.iter().enumerate() {
        for e in 0..64 {
            serial[id as usize * 64 + e] += updates[p * 64 + e];
        }
    }
    for _ in 0..10 {
        let y = op.run(&data, &ids, &updates).unwrap();
        assert!(y.data().iter().zip(&serial).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}

/// Duplicates under `none`: the last write in the indices' order wins.
#[test]
fn the_last_write_wins() {
    let mut d = ScatterDesc::new(
        GatherForm::Nd,
        GatherRules::OpenVino,
        decl(DType::I32, &[4]),
        decl(DType::I64, &[5, 1]),
        decl(DType::I32, &[5]),
        0,
    );
    d.duplicates = Some(Duplicates::Last);
    let op = ScatterOp::<i32, i64>::new(d).unwrap();
    let y = op.run(&[0, 0, 0, 0], &[2, 1, 2, 2, 1], &[10, 11, 12, 13, 14]).unwrap();
    assert_eq!(y.data(), &[0, 14, 13, 0]);
}

/// A ScatterElements of many lines (the line kernel, which reads its indices on the device),
/// drawn at random: ranks 2 and 3, any axis, heavy duplication, every policy and the
/// reductions it takes (a mean or `use_init_val: false` keeps the grouped kernel, drawn too).
fn draw_lines(rng: &mut Rng) -> Case {
    let rank = 2 + rng.below(2);
    let axis = rng.below(rank);
    // At least 256 lines: the product of the sizes off the axis.
    let off = if rank == 2 { vec![256 + rng.below(40)] } else { vec![16 + rng.below(5), 16 + rng.below(5)] };
    let mut data = off.clone();
    data.insert(axis, 1 + rng.below(5));
    // Indices smaller than the data off the axis (ONNX and OpenVINO ScatterElementsUpdate-12
    // allow it), now and then empty (no line at all).
    let mut indices: Vec<usize> = off
        .iter()
        .map(|&n| {
            if rng.chance(20) {
                n - rng.below(4)
            } else if rng.chance(3) {
                0
            } else {
                n
            }
        })
        .collect();
    // Up to 9 along the axis: lines read 4, 2 or 1 positions per load, once or more.
    indices.insert(axis, 1 + rng.below(9));
    let openvino = rng.chance(50);
    let rules = if openvino { GatherRules::OpenVino } else { GatherRules::Onnx };
    let mut reduction = Reduction::ALL[rng.below(5)];
    let mut use_init_val = true;
    if openvino && rng.chance(15) {
        reduction = Reduction::Mean;
        use_init_val = rng.chance(50);
    }
    let policy = [OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp, OutOfRange::Skip][rng.below(4)];
    let n: usize = indices.iter().product();
    // Rarely out of range under `error` (most such cases must still run).
    let bad = if policy == OutOfRange::Error { 2000 } else { 3 };
    let values = (0..n)
        .map(|_| if rng.below(n * bad / 1000 + 1) == 0 { rng.range(-8, 9) } else { rng.range(-2, 3) })
        .collect();
    let updates = indices.clone();
    Case {
        form: GatherForm::Elements,
        data,
        indices,
        updates,
        axis,
        rules,
        reduction,
        use_init_val,
        policy,
        values,
    }
}

/// Whole rows along axis 0 under `none` (the owned-row kernels, which claim each row for its
/// last writer on the device): many positions into few rows, every policy, multi-dimensional
/// indices, rows of 1 to 16 words.
fn draw_rows(rng: &mut Rng) -> Case {
    let mut data = vec![1 + rng.below(6)];
    data.extend((0..1 + rng.below(2)).map(|_| [1, 2, 4, 8][rng.below(4)]));
    let indices: Vec<usize> = (0..1 + rng.below(2)).map(|_| 1 + rng.below(12)).collect();
    let mut updates = indices.clone();
    updates.extend(&data[1..]);
    let policy = [OutOfRange::Error, OutOfRange::Zero, OutOfRange::Clamp, OutOfRange::Skip][rng.below(4)];
    let n: usize = indices.iter().product();
    let bad = if policy == OutOfRange::Error { 50 } else { 4 };
    let values =
        (0..n).map(|_| if rng.below(bad) == 0 { rng.range(-9, 10) } else { rng.range(-3, 4) }).collect();
    let rules = GatherRules::OpenVino;
    let reduction = Reduction::None;
    Case {
        form: GatherForm::Axis,
        data,
        indices,
        updates,
        axis: 0,
        rules,
        reduction,
        use_init_val: true,
        policy,
        values,
    }
}

fn check_drawn<T: Combine, J: stridex::IndexElement>(
    draw: fn(&mut Rng) -> Case,
    choices: Vec<u64>,
    seed: u64,
    dtype: DType,
    index: impl Fn(i64) -> J,
) -> Result<(), String> {
    let mut rng = Rng::from_choices(choices, seed);
    let c = draw(&mut rng);
    let Some((op, data, updates)) = build::<T, J>(&c, &mut rng, dtype)? else { return Ok(()) };
    let ids: Vec<J> = c.values.iter().map(|&v| index(v)).collect();
    let expected = reference(&c, &data, &updates);
    // `run`, then `launch` in place on device buffers: the same result, or the same `Err` with
    // the data untouched.
    let got = op.run(&data, &ids, &updates);
    guarded_agrees(&op, (&data, &ids, &updates), &got)?;
    counted_agrees(&op, (&data, &ids, &updates), &got)?;
    let client = Device::default_device().map_err(|e| e.to_string())?.client();
    // Buffers of whole words, as `buffer_bytes` says.
    let padded = |bytes: &[u8], tensor| {
        let mut b = bytes.to_vec();
        b.resize(op.buffer_bytes(tensor).unwrap().max(b.len()), 0);
        client.create_from_slice(&b)
    };
    let bytes = T::bytes(&data);
    let buffer = padded(&bytes, stridex::Operand::Data);
    let launched = op
        .launch(
            client,
            &buffer,
            &padded(&J::bytes(&ids), stridex::Operand::Indices),
            &padded(&T::bytes(&updates), stridex::Operand::Updates),
        )
        .map(|()| T::from_bytes(&client.read_one(buffer.clone()).unwrap()[..bytes.len()]).to_vec());
    // With the count left to run time, `launch_at` on a fresh copy of the data writes the same.
    if let Some(counted) = counted(&op)? {
        let count = c.indices[0];
        let again = padded(&bytes, stridex::Operand::Data);
        let at = |tensor| counted.buffer_bytes_at(count, tensor).unwrap();
        assert_eq!(at(stridex::Operand::Indices), op.buffer_bytes(stridex::Operand::Indices).unwrap());
        assert_eq!(at(stridex::Operand::Updates), op.buffer_bytes(stridex::Operand::Updates).unwrap());
        let relaunched = counted
            .launch_at(
                client,
                count,
                &again,
                &padded(&J::bytes(&ids), stridex::Operand::Indices),
                &padded(&T::bytes(&updates), stridex::Operand::Updates),
            )
            .map(|()| T::from_bytes(&client.read_one(again.clone()).unwrap()[..bytes.len()]).to_vec());
        let same = match (&launched, &relaunched) {
            (Ok(a), Ok(b)) => a == b,
            (Err(a), Err(b)) => a.to_string() == b.to_string(),
            _ => false,
        };
        if !same {
            return Err(format!("{c:?}\nlaunch {launched:?}\nlaunch_at {relaunched:?}"));
        }
    }
    match (&expected, got, launched) {
        (Some(e), Ok(y), Ok(l)) if y.data() == e.as_slice() && &l == e => Ok(()),
        (None, Err(Error::IndexOutOfRange { .. }), Err(Error::IndexOutOfRange { .. }))
            if T::from_bytes(&client.read_one(buffer).unwrap()[..bytes.len()]) == data.as_slice() =>
        {
            Ok(())
        }
        (expected, got, launched) => {
            Err(format!("{c:?}\nexpected {expected:?}\nrun {got:?}\nlaunch {launched:?}"))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(60), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn scatter_elements_lines_match_the_serial_reference((choices, seed) in choices(), t in 0usize..4) {
        let r = match t {
            0 => check_drawn::<f32, i64>(draw_lines, choices, seed, DType::F32, |v| v),
            1 => check_drawn::<f32, i32>(draw_lines, choices, seed, DType::F32, |v| v as i32),
            2 => check_drawn::<i32, i32>(draw_lines, choices, seed, DType::I32, |v| v as i32),
            _ => check_drawn::<i32, i64>(draw_lines, choices, seed, DType::I32, |v| v),
        };
        r.map_err(TestCaseError::fail)?;
    }

    #[test]
    fn rows_under_none_match_the_serial_reference((choices, seed) in choices(), t in 0usize..4) {
        let r = match t {
            0 => check_drawn::<f16, i32>(draw_rows, choices, seed, DType::F16, |v| v as i32),
            1 => check_drawn::<f32, i64>(draw_rows, choices, seed, DType::F32, |v| v),
            2 => check_drawn::<u8, i32>(draw_rows, choices, seed, DType::U8, |v| v as i32),
            _ => check_drawn::<i32, i64>(draw_rows, choices, seed, DType::I32, |v| v),
        };
        r.map_err(TestCaseError::fail)?;
    }
}

/// The line kernel is what a ScatterElements of many lines launches (its source says so), and
/// its float sums are the serial ones, bit for bit, run after run.
#[test]
fn many_lines_sum_in_order_without_grouping() {
    let op = stridex::scatter_elements! {
        data: f32[512, 64], indices: i32[512, 40], updates: f32[512, 40], axis: 1, reduction: add
    };
    let source = op.kernel_source(stridex::Dialect::Wgsl).unwrap().unwrap();
    assert!(source.contains("scatter_lines"), "{source}");
    let mut rng = Rng::new(11);
    let ids: Vec<i32> = (0..512 * 40).map(|_| rng.range(0, 7) as i32).collect();
    let updates: Vec<f32> = (0..512 * 40).map(|_| rng.range(-1000, 1000) as f32 * 1.0e-3 + 1.0e3).collect();
    let data = vec![0.5f32; 512 * 64];
    let mut serial = data.clone();
    for (p, &id) in ids.iter().enumerate() {
        serial[p / 40 * 64 + id as usize] += updates[p];
    }
    for _ in 0..5 {
        let y = op.run(&data, &ids, &updates).unwrap();
        assert!(y.data().iter().zip(&serial).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}

/// Indices empty off the axis write nothing, whatever the policy (no line to walk), and
/// indices smaller than the data off the axis reach only their own lines.
#[test]
fn empty_and_smaller_lines_write_only_their_own() {
    let empty = stridex::scatter_elements! {
        data: f32[300, 5, 8], indices: i32[300, 0, 4], updates: f32[300, 0, 4], axis: 2, out_of_range: clamp
    };
    let data: Vec<f32> = (0..300 * 5 * 8).map(|v| v as f32).collect();
    assert_eq!(empty.run(&data, &[], &[]).unwrap().data(), &data[..]);
    let smaller = stridex::scatter_elements! {
        rules: openvino, data: f32[300, 4], indices: i32[280, 2], updates: f32[280, 2], axis: 1
    };
    let ids: Vec<i32> = (0..560).map(|p| p % 3).collect();
    let updates: Vec<f32> = (0..560).map(|p| -(p as f32)).collect();
    let data: Vec<f32> = (0..1200).map(|v| v as f32).collect();
    let mut expected = data.clone();
    for (p, &id) in ids.iter().enumerate() {
        expected[p / 2 * 4 + id as usize] = updates[p];
    }
    assert_eq!(smaller.run(&data, &ids, &updates).unwrap().data(), &expected[..]);
    let source = smaller.kernel_source(stridex::Dialect::Wgsl).unwrap().unwrap();
    assert!(source.contains("scatter_lines"), "280 lines take the line kernel");
}

/// Empty scatters whose other sizes multiply past `usize` (indices `[2^33, 2^33, 0]`, an
/// empty ScatterND of three sizes of 2^32 - 1, runs of 2^66 elements along an empty axis):
/// their source, their run and their launch return, the data unchanged, in a debug build too
/// (where an overflow panics). Under `STRIDEX_TILE=spread` the source is the device grouping's.
#[test]
fn empty_scatters_of_huge_sizes_run() {
    let (big, max) = (1usize << 33, u32::MAX as usize);
    let scatter = |form, rules, data: &[usize], ids: &[usize], updates: &[usize]| {
        let mut desc = ScatterDesc::new(
            form,
            rules,
            decl(DType::F32, data),
            decl(DType::I64, ids),
            decl(DType::F32, updates),
            0,
        );
        desc.reduction = Some(Reduction::Add);
        ScatterOp::<f32, i64>::new(desc).unwrap()
    };
    let cases = [
        scatter(GatherForm::Axis, GatherRules::OpenVino, &[4, 8], &[big, big, 0], &[big, big, 0, 8]),
        scatter(GatherForm::Nd, GatherRules::Onnx, &[max, max, max, 0, 8], &[2, 3], &[2, 0, 8]),
        scatter(GatherForm::Axis, GatherRules::OpenVino, &[4, big, big, 0], &[2], &[2, big, big, 0]),
        scatter(GatherForm::Axis, GatherRules::OpenVino, &[0, big, big], &[0], &[0, big, big]),
    ];
    for op in cases {
        op.kernel_source(stridex::Dialect::Wgsl).unwrap();
        let _ = op.describe();
        let data: Vec<f32> = (0..op.plan().unwrap().output.num_elements()).map(|i| i as f32).collect();
        let ids = vec![0i64; op.plan().unwrap().map.indices.num_elements()];
        let y = op.run(&data, &ids, &[]).unwrap();
        assert_eq!(y.data(), data.as_slice());
    }
}

/// `launch` checks what `run` checks where nothing is written: with empty runs nothing at all
/// (no element is read or written, as for every empty result), while runs of an empty axis
/// still name an index, every one out of range (`error`), even where the destination's
/// strides pass 32 bits (no kernel is made for them).
#[test]
fn scatters_that_write_nothing_check_as_run_does() {
    let op = |data: TensorDecl, updates: &[usize], policy, duplicates| {
        let mut desc = ScatterDesc::new(
            GatherForm::Axis,
            GatherRules::OpenVino,
            data,
            decl(DType::I64, &[2]),
            decl(DType::F32, updates),
            0,
        );
        desc.map.out_of_range = Some(policy);
        desc.duplicates = duplicates;
        ScatterOp::<f32, i64>::new(desc).unwrap()
    };
    let client = Device::default_device().unwrap().client();
    let launch = |op: &ScatterOp<f32, i64>, ids: &[i64], updates: &[f32]| {
        let buffer = |bytes: &[u8]| client.create_from_slice(if bytes.is_empty() { &[0; 4] } else { bytes });
        let (data, indices, rows) = (buffer(&[]), buffer(&i64::bytes(ids)), buffer(&f32::bytes(updates)));
        (op.launch(client, &data, &indices, &rows), op.run(&[], ids, updates).map(|_| ()))
    };
    // Empty runs: index 9 of 4 is never read.
    let empty_runs = op(decl(DType::F32, &[4, 0]), &[2, 0], OutOfRange::Error, Some(Duplicates::Error));
    assert_eq!(launch(&empty_runs, &[1, 9], &[]), (Ok(()), Ok(())));
    // Runs of 8 along an empty axis, 2^32 elements apart.
    let wide = TensorDecl {
        strides: Some(stridex_core::Dims::new(&[8, 1 << 32]).unwrap()),
        ..decl(DType::F32, &[0, 8])
    };
    let (launched, ran) = launch(&op(wide, &[2, 8], OutOfRange::Error, None), &[0, 1], &[1.0; 16]);
    for e in [launched.unwrap_err(), ran.unwrap_err()] {
        assert_eq!(e, Error::IndexOutOfRange { position: vec![0], value: 0, axis_size: 0 });
    }
    // Under `zero` both drop every update: no index is left to repeat.
    let zero = op(wide, &[2, 8], OutOfRange::Zero, Some(Duplicates::Error));
    assert_eq!(launch(&zero, &[2, 2], &[1.0; 16]), (Ok(()), Ok(())));
}
