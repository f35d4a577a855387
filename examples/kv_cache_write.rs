//! An inference engine's KV-cache write (vLLM's `reshape_and_cache`): after each step, the new
//! tokens' keys and values go into a paged f16 cache `[blocks, block_size, heads, head_dim]` at
//! slot ids, where slot `b * block_size + o` is offset `o` of block `b` and `-1` marks a
//! padding token. `cargo run --example kv_cache_write`.
//!
//! The count of new tokens changes from step to step (a prefill, then decode steps), so it is
//! `_`: one op, and one compiled kernel, serves every count. The cache stays on the device:
//! `launch_at` writes it in place, told the step's count. `out_of_range: skip` drops the
//! padding tokens' rows (under ONNX's rules `-1` would count from the end and overwrite the
//! last slot), and `duplicates: error` refuses two tokens with one slot before anything runs.
//! Written as a chain, the write takes the K third of each token's QKV projection where it
//! lies, with no intermediate copy: one fused pair of kernels for every count.

use stridex::half::f16;
use stridex::{Device, Element, Error};

const BLOCKS: usize = 16;
const BLOCK_SIZE: usize = 8;
const HEADS: usize = 4;
const HEAD_DIM: usize = 32;
const ROW: usize = HEADS * HEAD_DIM;

// The paged cache seen as its slots: `[16 * 8, 4, 32]` is the same buffer as `[16, 8, 4, 32]`.
stridex::scatter! {
    static WRITE_SLOTS;
    data: f16[128, 4, 32],
    indices: i64[_],
    updates: f16[_, 4, 32],
    axis: 0,
    out_of_range: skip,
    duplicates: error,
}

// The keys sliced from each token's QKV rows `[_, 3, heads, head_dim]` and written at their
// slots by one chain: the fused kernels read each K row in place.
stridex::chain! {
    static WRITE_K_FROM_QKV;
    data: f16[_, 3, 4, 32],
    slice { rules: onnx, starts: [1], ends: [2], axes: [1] },
    scatter { into: f16[128, 1, 4, 32], indices: i64[_], axis: 0, out_of_range: skip },
}

// The same write addressed by (block, offset) pairs into the 4-D cache: ONNX's ScatterND.
stridex::scatter_nd! {
    static WRITE_PAIRS;
    data: f16[16, 8, 4, 32],
    indices: i64[_, 2],
    updates: f16[_, 4, 32],
    out_of_range: skip,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Error> {
    let device = Device::default_device()?;
    println!("device: {}", device.description());
    let client = device.client();
    let cache: Vec<f16> = (0..BLOCKS * BLOCK_SIZE * ROW).map(|i| f16::from_f32((i % 97) as f32)).collect();
    let keys = client.create_from_slice(&f16::bytes(&cache));
    let mut expected = cache.clone();

    // A prefill of six tokens (the third and sixth padding), then two decode steps of a batch
    // whose sequences finish one by one.
    let steps: [&[i64]; 3] = [&[3, 17, -1, 40, 127, -1], &[4, 18, 64, 41], &[5, 65]];
    for (step, slots) in steps.iter().enumerate() {
        let tokens = slots.len();
        let new: Vec<f16> =
            (0..tokens * ROW).map(|i| f16::from_f32(-((step * 1000 + i) as f32) / 8.0)).collect();
        let (ids, rows) =
            (client.create_from_slice(&i64::bytes(slots)), client.create_from_slice(&f16::bytes(&new)));
        WRITE_SLOTS.launch_at(client, tokens, &keys, &ids, &rows)?;
        for (t, &slot) in slots.iter().enumerate() {
            if slot >= 0 {
                let s = slot as usize;
                expected[s * ROW..][..ROW].copy_from_slice(&new[t * ROW..][..ROW]);
            }
        }
        let written = slots.iter().filter(|&&s| s >= 0).count();
        println!("step {step}: slots {slots:?}: {written} rows written, {} padding", tokens - written);
    }
    let bytes = client.read_one(keys).map_err(|e| Error::Device(format!("{e:?}")))?;
    let got = f16::from_bytes(&bytes[..expected.len() * 2]);
    assert!(got == expected, "the cache on the device equals a plain loop's");

    // From the QKV projection of each step's tokens, in place on a second cache.
    let from_qkv = client.create_from_slice(&f16::bytes(&cache));
    let mut expected = cache.clone();
    for (step, slots) in steps.iter().enumerate() {
        let tokens = slots.len();
        let qkv: Vec<f16> =
            (0..tokens * 3 * ROW).map(|i| f16::from_f32(((step * 7000 + i) % 2048) as f32)).collect();
        let (ids, rows) =
            (client.create_from_slice(&i64::bytes(slots)), client.create_from_slice(&f16::bytes(&qkv)));
        WRITE_K_FROM_QKV.launch_at(client, tokens, &rows, &[&ids], &from_qkv)?;
        for (t, &slot) in slots.iter().enumerate().filter(|(_, &s)| s >= 0) {
            expected[slot as usize * ROW..][..ROW].copy_from_slice(&qkv[(3 * t + 1) * ROW..][..ROW]);
        }
    }
    let bytes = client.read_one(from_qkv).map_err(|e| Error::Device(format!("{e:?}")))?;
    assert!(f16::from_bytes(&bytes[..expected.len() * 2]) == expected, "the K rows of each QKV");
    println!(
        "the same steps from the QKV projection: each slot holds its token's K, fused: {}",
        WRITE_K_FROM_QKV.is_fused()?
    );

    // The pairs form, from the host: the same rows land in the same places.
    let slots = steps[0];
    let pairs: Vec<i64> = slots.iter().flat_map(|&s| if s < 0 { [-1, -1] } else { [s / 8, s % 8] }).collect();
    let new: Vec<f16> = (0..slots.len() * ROW).map(|i| f16::from_f32(i as f32)).collect();
    let by_pairs = WRITE_PAIRS.run(&cache, &pairs, &new)?;
    let by_slots = WRITE_SLOTS.run(&cache, slots, &new)?;
    assert_eq!(by_pairs.data(), by_slots.data(), "(block, offset) pairs and flat slots agree");
    println!("(block, offset) pairs {:?} write what the flat slots do", &pairs[..4]);

    // Two tokens given one slot is a bug in the caller's slot mapping: an `Err`, not a race.
    let err = WRITE_SLOTS.run(&cache, &[5, 9, 5, -1, -1, 2], &new).unwrap_err();
    assert!(matches!(err, Error::DuplicateIndex { .. }), "{err}");
    println!("a repeated slot: {err}");
    println!("every cached row equals a plain loop's; padding rows were dropped");
    Ok(())
}
