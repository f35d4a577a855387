//! Token ids -> rows of an embedding table, as a language model's first layer does it:
//! `cargo run --release --example embedding_lookup`.
//!
//! Two tables (f32 and f16) declared once as `static` ops (the item form), looked up with the
//! same i64 ids; every row is checked against the table, and each lookup is timed: with `run`
//! (the table uploaded on every call) and with `launch` on a table already on the device, as a
//! model keeps it. Then prompts of different lengths through one op whose token count is `_`:
//! one kernel for every length.

use std::time::Instant;
use stridex::half::f16;

const VOCAB: usize = 32000;
const DIM: usize = 256;
const TOKENS: usize = 512;

stridex::gather! {
    static EMBED_F32;
    data: f32[32000, 256],
    indices: i64[512],
}

stridex::gather! {
    static EMBED_F16;
    data: f16[32000, 256],
    indices: i64[512],
}

// Token counts change per prompt: `_` reads the count from the ids' length at `run`.
stridex::gather! {
    static EMBED_ANY_LENGTH;
    data: f32[32000, 256],
    indices: i64[_],
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// The median of `n` timed calls of `f`, after one untimed call (kernel build).
fn time<T>(n: usize, mut f: impl FnMut() -> T) -> (std::time::Duration, T) {
    let mut last = f();
    let mut times = Vec::new();
    for _ in 0..n {
        let start = Instant::now();
        last = f();
        times.push(start.elapsed());
    }
    times.sort();
    (times[n / 2], last)
}

fn run() -> Result<(), stridex::Error> {
    let device = stridex::Device::default_device()?;
    println!("device: {}", device.description());
    let table32: Vec<f32> = (0..VOCAB * DIM).map(|i| (i % 997) as f32 * 0.25).collect();
    let table16: Vec<f16> = table32.iter().map(|&v| f16::from_f32(v)).collect();
    // Token ids as a tokenizer gives them: i64, in no particular order, some repeated.
    let ids: Vec<i64> = (0..TOKENS).map(|i| ((i * 7919 + 17) % VOCAB) as i64).collect();

    let (t32, rows32) = time(5, || EMBED_F32.run(&table32, &ids));
    let rows32 = rows32?;
    let (t16, rows16) = time(5, || EMBED_F16.run(&table16, &ids));
    let rows16 = rows16?;

    for (t, &id) in ids.iter().enumerate() {
        let row = id as usize * DIM..(id as usize + 1) * DIM;
        assert_eq!(&rows32.data()[t * DIM..(t + 1) * DIM], &table32[row.clone()], "f32 row of token {t}");
        assert_eq!(&rows16.data()[t * DIM..(t + 1) * DIM], &table16[row], "f16 row of token {t}");
    }
    println!("ids i64[{TOKENS}]: first {:?}", &ids[..4]);
    println!(
        "f32[{VOCAB}, {DIM}] -> {:?}, {:.2} ms per lookup (upload of the table, launch, read back)",
        rows32.shape(),
        t32.as_secs_f64() * 1e3
    );
    println!(
        "f16[{VOCAB}, {DIM}] -> {:?}, {:.2} ms per lookup; row 0 starts {:?}",
        rows16.shape(),
        t16.as_secs_f64() * 1e3,
        &rows16.data()[..3]
    );
    println!("every row matches its table row");
    resident(&table32, &ids, rows32.data())?;
    any_length(&table32)
}

/// Prompts of several lengths through the one `_` op: each new length is timed on its first
/// call, which builds nothing (the kernel was compiled for the first prompt).
fn any_length(table: &[f32]) -> Result<(), stridex::Error> {
    for (n, length) in [7usize, 130, 1, 512, 33].into_iter().enumerate() {
        let ids: Vec<i64> = (0..length).map(|i| ((i * 31 + n) % VOCAB) as i64).collect();
        let start = Instant::now();
        let rows = EMBED_ANY_LENGTH.run(table, &ids)?;
        let first_call = start.elapsed();
        assert_eq!(rows.shape(), [length, DIM]);
        for (t, &id) in ids.iter().enumerate() {
            assert_eq!(&rows.data()[t * DIM..(t + 1) * DIM], &table[id as usize * DIM..][..DIM]);
        }
        println!(
            "`_` op, a prompt of {length:>3} tokens -> {:?}, first call at this length {:.2} ms (table upload included){}",
            rows.shape(),
            first_call.as_secs_f64() * 1e3,
            if n == 0 { " (compiles the one kernel)" } else { "" }
        );
    }
    Ok(())
}

/// The table kept on the device: each lookup launches on it and reads the rows back.
fn resident(table: &[f32], ids: &[i64], expected: &[f32]) -> Result<(), stridex::Error> {
    use stridex::{buffers, Operand};
    let client = stridex::Device::default_device()?.client();
    let table_h = buffers::upload(client, table, EMBED_F32.buffer_bytes(Operand::Data)?)?;
    let ids_h = buffers::upload(client, ids, EMBED_F32.buffer_bytes(Operand::Indices)?)?;
    let out_h = client.empty(EMBED_F32.buffer_bytes(Operand::Output)?);
    let (t, rows) = time(5, || {
        EMBED_F32.launch(client, &table_h, &ids_h, &out_h)?;
        buffers::read::<f32>(client, &out_h, TOKENS * DIM)
    });
    assert_eq!(rows?, expected);
    println!(
        "f32 table resident on the device: {:.2} ms per lookup (launch, read back the rows)",
        t.as_secs_f64() * 1e3
    );
    Ok(())
}
