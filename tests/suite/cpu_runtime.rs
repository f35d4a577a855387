//! What CubeCL 0.11's CPU runtime does differently from wgpu and CUDA, in the smallest kernel
//! that shows it, and the form stridex's kernels use instead.
//!
//! A slice with a negative stride on an outer dimension reads row `r` at `base + r * stride`,
//! `stride < 0`. stridex's kernels computed that in `usize` with the stride's two's
//! complement, relying on 32-bit wrapping (`usize` is 32 bits under CubeCL's default address
//! type): exact on wgpu and CUDA. The CPU runtime does not wrap that `usize` sum, and the load
//! reads far outside the buffer (a segfault; `usize_offsets_read_out_of_bounds_on_the_cpu_runtime`
//! below, run with `--ignored` under `STRIDEX_BACKEND=cpu`). Summed in `u32`, which wraps on
//! every runtime, and turned into a `usize` index only once it lies in the buffer, the same
//! offset is right everywhere: that is what the row walk does (`backends/src/kernels/rows.rs`,
//! `times`).

use stridex::cubecl;
use stridex::cubecl::prelude::*;

/// Element 13 - 8 * row, summed in wrapping u32 arithmetic.
#[cube(launch_unchecked)]
fn offset_in_u32(input: &[u32], output: &mut [u32], row: u32) {
    let at = 13u32 + row * comptime!((-8i64) as u32);
    output[0] = input[usize::cast_from(at)];
}

/// The same offset summed in `usize`.
#[cube(launch_unchecked)]
fn offset_in_usize(input: &[u32], output: &mut [u32], row: u32) {
    let at = 13usize + usize::cast_from(row) * comptime!((-8i64) as u32 as usize);
    output[0] = input[at];
}

fn run(kernel: fn(&Client, &cubecl::server::Handle, &cubecl::server::Handle)) -> u32 {
    let client = stridex::Device::default_device().expect("a device").client();
    let input: Vec<u8> = (100u32..116).flat_map(u32::to_le_bytes).collect();
    let input = client.create_from_slice(&input);
    let output = client.empty(4);
    kernel(client, &input, &output);
    let bytes = client.read_one(output).expect("read back");
    u32::from_le_bytes(bytes[..4].try_into().unwrap())
}

fn launch_u32(client: &Client, input: &cubecl::server::Handle, output: &cubecl::server::Handle) {
    // SAFETY: the kernel reads element 5 of 16 and writes element 0 of 1.
    unsafe {
        offset_in_u32::launch_unchecked(
            client,
            CubeCount::Static(1, 1, 1),
            CubeDim::new_1d(1),
            BufferArg::from_raw_parts(input.clone(), 16),
            BufferArg::from_raw_parts(output.clone(), 1),
            1,
        )
    }
}

fn launch_usize(client: &Client, input: &cubecl::server::Handle, output: &cubecl::server::Handle) {
    // SAFETY: in 32-bit wrapping arithmetic the kernel reads element 5 of 16; on the CPU
    // runtime it does not (this is what the test shows).
    unsafe {
        offset_in_usize::launch_unchecked(
            client,
            CubeCount::Static(1, 1, 1),
            CubeDim::new_1d(1),
            BufferArg::from_raw_parts(input.clone(), 16),
            BufferArg::from_raw_parts(output.clone(), 1),
            1,
        )
    }
}

#[test]
fn u32_offsets_wrap_on_every_runtime() {
    assert_eq!(run(launch_u32), 105);
}

#[test]
fn usize_offsets_wrap_on_wgpu_and_cuda() {
    if stridex::Device::default_device().unwrap().backend() == stridex::Backend::Cpu {
        return; // see usize_offsets_read_out_of_bounds_on_the_cpu_runtime
    }
    assert_eq!(run(launch_usize), 105);
}

/// Crashes the process under `STRIDEX_BACKEND=cpu` (CubeCL 0.11.3): run it alone.
#[test]
#[ignore = "segfaults on CubeCL 0.11's CPU runtime, which does not wrap usize arithmetic"]
fn usize_offsets_read_out_of_bounds_on_the_cpu_runtime() {
    assert_eq!(run(launch_usize), 105);
}

/// On the CPU runtime an invocation moves up to 4096 lines of a row (a loop), not 4 (unrolled):
/// rows long enough for that, forwards and reversed, gathered and sliced, against the host.
#[test]
fn long_rows_move_whole() {
    let table: Vec<f32> = (0..1024 * 256).map(|v| v as f32).collect();
    let ids: Vec<i32> = (0..300).map(|i| (i * 7919 + 13) % 1024).collect();
    let embed = stridex::gather! { data: f32[1024, 256], indices: i32[300] };
    let y = embed.run(&table, &ids).unwrap();
    let want: Vec<f32> = ids.iter().flat_map(|&r| table[r as usize * 256..][..256].to_vec()).collect();
    assert_eq!(y.data(), want.as_slice());
    // Out-of-range ids zero their whole row under `zero`.
    let zeroing =
        stridex::gather! { rules: openvino, data: f32[1024, 256], indices: i32[300], out_of_range: zero };
    let mut bad = ids.clone();
    bad[123] = 5000;
    let y = zeroing.run(&table, &bad).unwrap();
    assert!(y.data()[123 * 256..124 * 256].iter().all(|&v| v == 0.0));
    assert_eq!(y.data()[122 * 256..123 * 256], want[122 * 256..123 * 256]);

    // Rows of 2048 lines: one invocation per row.
    let wide: Vec<f32> = (0..64 * 8192).map(|v| v as f32).collect();
    let wide_ids: Vec<i32> = (0..80).map(|i| (i * 29 + 3) % 64).collect();
    let rows = stridex::gather! { data: f32[64, 8192], indices: i32[80] };
    let want: Vec<f32> = wide_ids.iter().flat_map(|&r| wide[r as usize * 8192..][..8192].to_vec()).collect();
    assert_eq!(rows.run(&wide, &wide_ids).unwrap().data(), want.as_slice());

    let image: Vec<f32> = (0..64 * 512).map(|v| v as f32).collect();
    let flip = stridex::slice!(input: f32[64, 512], s[.., ..;-1]);
    let y = flip.run(&image).unwrap();
    let want: Vec<f32> = (0..64).flat_map(|r| (0..512).rev().map(move |c| (r * 512 + c) as f32)).collect();
    assert_eq!(y.data(), want.as_slice());
    let crop = stridex::slice!(input: f32[64, 512], s[8..40, 128..384]);
    let y = crop.run(&image).unwrap();
    let want: Vec<f32> = (8..40).flat_map(|r| (128..384).map(move |c| (r * 512 + c) as f32)).collect();
    assert_eq!(y.data(), want.as_slice());
}

/// A long tile that is no multiple of the walk's own (rows of 12 lines, 4 per invocation, 6 on
/// the CPU runtime), fixed and with a `_` count.
#[test]
fn a_long_tile_need_not_be_a_multiple_of_the_walks() {
    let table: Vec<f32> = (0..100 * 48).map(|v| v as f32).collect();
    let ids: Vec<i32> = (0..45).map(|i| (i * 37 + 5) % 100).collect();
    let want: Vec<f32> = ids.iter().flat_map(|&r| table[r as usize * 48..][..48].to_vec()).collect();
    let fixed = stridex::gather! { data: f32[100, 48], indices: i32[45] };
    assert_eq!(fixed.run(&table, &ids).unwrap().data(), want.as_slice());
    let counted = stridex::gather! { data: f32[100, 48], indices: i32[_, 9] };
    assert_eq!(counted.run(&table, &ids).unwrap().data(), want.as_slice());
}

/// Rows read element by element also move in long tiles on the CPU runtime: a gather along the
/// last axis (its rows grouped to share their indices, f32 and u8), under `zero` and `error`,
/// and a slice with a step along the row, against the host.
#[test]
fn long_element_rows_move_whole() {
    let (rows, cols, picks) = (64usize, 1024usize, 512usize);
    let ids: Vec<i32> = (0..picks as i32).map(|i| (i * 613 + 7) % cols as i32).collect();
    let table: Vec<f32> = (0..rows * cols).map(|v| v as f32).collect();
    let want: Vec<f32> =
        (0..rows).flat_map(|r| ids.iter().map(move |&c| (r * cols + c as usize) as f32)).collect();
    let columns = stridex::gather! { data: f32[64, 1024], indices: i32[512], axis: 1 };
    assert_eq!(columns.run(&table, &ids).unwrap().data(), want.as_slice());

    let bytes: Vec<u8> = (0..rows * cols).map(|v| (v % 251) as u8).collect();
    let want_bytes: Vec<u8> =
        (0..rows).flat_map(|r| ids.iter().map(move |&c| ((r * cols + c as usize) % 251) as u8)).collect();
    let byte_columns = stridex::gather! { data: u8[64, 1024], indices: i32[512], axis: 1 };
    assert_eq!(byte_columns.run(&bytes, &ids).unwrap().data(), want_bytes.as_slice());

    // One id out of range, late in a long tile: zeroed in every row under `zero`, an `Err`
    // under `error`.
    let mut bad = ids.clone();
    bad[500] = 4000;
    let zeroing = stridex::gather! {
        rules: openvino, data: f32[64, 1024], indices: i32[512], axis: 1, out_of_range: zero
    };
    let y = zeroing.run(&table, &bad).unwrap();
    for r in 0..rows {
        assert_eq!(y.data()[r * picks + 500], 0.0, "row {r}");
        assert_eq!(y.data()[r * picks + 499], want[r * picks + 499], "row {r}");
    }
    assert!(columns.run(&table, &bad).is_err());

    let every_other = stridex::slice!(input: f32[64, 1024], s[.., 1..;2]);
    let want: Vec<f32> =
        (0..rows).flat_map(|r| (1..cols).step_by(2).map(move |c| (r * cols + c) as f32)).collect();
    assert_eq!(every_other.run(&table).unwrap().data(), want.as_slice());
}

/// Elements narrower than a word read one by one are loaded and stored as bytes or halfwords
/// on the CPU runtime, four rows sharing each index (`RowWalk::narrow_units`, `regroup`): u8
/// and f16 columns under `zero` with ids out of range, rows that do not regroup, a `_` count,
/// signed steps and GatherElements, against the host (the same on every runtime).
#[test]
fn narrow_elements_move_as_their_own_units() {
    let ids: Vec<i32> = (0..96).map(|i| (i * 53 + 11) % 200).collect();
    let mut bad = ids.clone();
    bad[5] = 900;
    bad[95] = -7;
    let bytes: Vec<u8> = (0..24 * 200).map(|v| (v * 7 % 253) as u8).collect();
    let bytes = bytes.as_slice();
    // OpenVINO's negative ids count from the end; past either end, `zero`.
    let column = |c: i32| (-200..200).contains(&c).then(|| c.rem_euclid(200) as usize);
    let pick = |rows: usize, ids: &[i32]| -> Vec<u8> {
        (0..rows)
            .flat_map(|r| ids.iter().map(move |&c| column(c).map_or(0, |c| bytes[r * 200 + c])))
            .collect()
    };
    let u8_columns = stridex::gather! {
        rules: openvino, data: u8[24, 200], indices: i32[96], axis: 1, out_of_range: zero
    };
    assert_eq!(u8_columns.run(bytes, &bad).unwrap().data(), pick(24, &bad).as_slice());
    // Six rows: groups of two, which do not regroup into fours.
    let six = stridex::gather! { data: u8[6, 200], indices: i32[96], axis: 1 };
    assert_eq!(six.run(&bytes[..6 * 200], &ids).unwrap().data(), pick(6, &ids).as_slice());
    let counted = stridex::slice!(input: u8[_, 200], s[.., 1..;2]);
    let want: Vec<u8> = (0..12).flat_map(|r| (1..200).step_by(2).map(move |c| bytes[r * 200 + c])).collect();
    assert_eq!(counted.run(&bytes[..12 * 200]).unwrap().data(), want.as_slice());

    let halves: Vec<stridex::half::f16> =
        (0..24 * 200).map(|v| stridex::half::f16::from_f32(v as f32)).collect();
    let f16_columns = stridex::gather! {
        rules: openvino, data: f16[24, 200], indices: i32[96], axis: 1, out_of_range: zero
    };
    let want: Vec<stridex::half::f16> = (0..24)
        .flat_map(|r| {
            bad.iter()
                .map(move |&c| stridex::half::f16::from_f32(column(c).map_or(0.0, |c| (r * 200 + c) as f32)))
        })
        .collect();
    assert_eq!(f16_columns.run(&halves, &bad).unwrap().data(), want.as_slice());

    let stepped = stridex::slice!(input: u8[24, 200], s[.., ..;-3]);
    let want: Vec<u8> =
        (0..24).flat_map(|r| (0..200).rev().step_by(3).map(move |c| bytes[r * 200 + c])).collect();
    assert_eq!(stepped.run(bytes).unwrap().data(), want.as_slice());

    let elem_ids: Vec<i32> = (0..24 * 16).map(|i| (i * 31 + 3) % 200).collect();
    let elements = stridex::gather_elements! { data: u8[24, 200], indices: i32[24, 16], axis: 1 };
    let want: Vec<u8> = (0..24 * 16).map(|i| bytes[(i / 16) * 200 + elem_ids[i] as usize]).collect();
    assert_eq!(elements.run(bytes, &elem_ids).unwrap().data(), want.as_slice());
}

/// Short rows move several to an invocation on the CPU runtime (`RowWalk::row_block`): a flip
/// and a crop of 64-element rows, an embedding of 16-element rows under `zero` and `error` with
/// ids out of range, and u8 columns, against the host (the same on every runtime).
#[test]
fn short_rows_move_in_blocks() {
    let image: Vec<f32> = (0..8 * 3 * 64 * 64).map(|v| v as f32).collect();
    let flip = stridex::slice!(input: f32[8, 3, 64, 64], s[.., .., .., ..;-1]);
    let want: Vec<f32> =
        (0..8 * 3 * 64).flat_map(|r| (0..64).rev().map(move |c| (r * 64 + c) as f32)).collect();
    assert_eq!(flip.run(&image).unwrap().data(), want.as_slice());
    let crop = stridex::slice!(input: f32[8, 3, 64, 64], s[.., .., 4..60, 8..56]);
    let want: Vec<f32> = (0..8 * 3)
        .flat_map(|p| (4..60).flat_map(move |y| (8..56).map(move |x| ((p * 64 + y) * 64 + x) as f32)))
        .collect();
    assert_eq!(crop.run(&image).unwrap().data(), want.as_slice());

    let table: Vec<f32> = (0..1000 * 16).map(|v| v as f32).collect();
    let mut ids: Vec<i32> = (0..4096).map(|i| (i * 613 + 7) % 1000).collect();
    let embed = stridex::gather! { data: f32[1000, 16], indices: i32[4096] };
    let rows = |ids: &[i32]| -> Vec<f32> {
        ids.iter()
            .flat_map(|&r| {
                (0..16).map(move |c| if (0..1000).contains(&r) { (r * 16 + c) as f32 } else { 0.0 })
            })
            .collect()
    };
    assert_eq!(embed.run(&table, &ids).unwrap().data(), rows(&ids).as_slice());
    ids[4000] = 1000;
    assert!(embed.run(&table, &ids).is_err());
    let zeroing = stridex::gather! {
        rules: openvino, data: f32[1000, 16], indices: i32[4096], out_of_range: zero
    };
    assert_eq!(zeroing.run(&table, &ids).unwrap().data(), rows(&ids).as_slice());

    let bytes: Vec<u8> = (0..1024 * 64).map(|v| (v % 241) as u8).collect();
    let cols: Vec<i32> = (0..16).map(|i| (i * 5 + 3) % 64).collect();
    let columns = stridex::gather! { data: u8[1024, 64], indices: i32[16], axis: 1 };
    let want: Vec<u8> =
        (0..1024).flat_map(|r| cols.iter().map(move |&c| ((r * 64 + c as usize) % 241) as u8)).collect();
    assert_eq!(columns.run(&bytes, &cols).unwrap().data(), want.as_slice());
}

/// On the CPU runtime one invocation of the grouped scatter applies its run's list to up to
/// 64 KiB of the run (tiles one after another), not to one tile of four vectors: a scatter-add
/// of rows of 256 with many repeats, and one along axis 1 (a run of four rows), against a
/// serial host sum from the data.
#[test]
fn scatter_adds_apply_long_runs_per_invocation() {
    let data: Vec<f32> = (0..300 * 256).map(|v| (v % 97) as f32 * 0.25).collect();
    let ids: Vec<i32> = (0..500).map(|i| (i * i * 7 + 3) % 300).collect();
    let updates: Vec<f32> = (0..500 * 256).map(|v| ((v * 31) % 1000) as f32 * 1.0e-3).collect();
    let rows = stridex::scatter! {
        data: f32[300, 256], indices: i32[500], updates: f32[500, 256], axis: 0, reduction: add
    };
    let mut want = data.clone();
    for (p, &r) in ids.iter().enumerate() {
        for c in 0..256 {
            want[r as usize * 256 + c] += updates[p * 256 + c];
        }
    }
    assert_eq!(rows.run(&data, &ids, &updates).unwrap().data(), want.as_slice());

    // data [4, 300, 64] along axis 1: `updates` [4, 100, 64], ids 100 of the 300.
    let columns = stridex::scatter! {
        data: f32[4, 300, 64], indices: i32[100], updates: f32[4, 100, 64], axis: 1, reduction: add
    };
    let mut want = data.clone();
    for b in 0..4 {
        for (p, &r) in ids[..100].iter().enumerate() {
            for c in 0..64 {
                want[(b * 300 + r as usize) * 64 + c] += updates[(b * 100 + p) * 64 + c];
            }
        }
    }
    let y = columns.run(&data, &ids[..100], &updates[..4 * 100 * 64]).unwrap();
    assert_eq!(y.data(), want.as_slice());
}
