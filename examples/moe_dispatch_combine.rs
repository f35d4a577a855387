//! A mixture-of-experts layer moves token rows to experts and back: each token is routed to two
//! experts with weights; each expert takes at most `CAPACITY` tokens (the rest are dropped, as
//! in Switch/GShard routing). `cargo run --example moe_dispatch_combine`.
//!
//! - dispatch: expert slot `s` reads the row of the token routed to it, a `gather!` (an empty
//!   slot holds index `TOKENS`, past the end, which OpenVINO's `zero` policy reads as zeros);
//! - each expert transforms its rows (here, on the host, a per-expert scale);
//! - combine: every slot adds its weighted row back into its token's row, a `scatter!` with
//!   `reduction: add` (an empty slot holds `-1`, which `skip` drops). A token's two
//!   contributions are added in slot order on every run and device: the bits do not change.

use stridex::Error;

const TOKENS: usize = 10;
const DIM: usize = 16;
const EXPERTS: usize = 4;
const CAPACITY: usize = 4;
const SLOTS: usize = EXPERTS * CAPACITY;

stridex::gather! {
    static DISPATCH;
    rules: openvino,
    data: f32[10, 16],
    indices: i32[16],
    axis: 0,
    out_of_range: zero,
}

stridex::scatter! {
    static COMBINE;
    data: f32[10, 16],
    indices: i32[16],
    updates: f32[16, 16],
    axis: 0,
    reduction: add,
    out_of_range: skip,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Top-2 routing with capacity: each slot's token (or `None`) and its gate weight.
fn route() -> (Vec<Option<usize>>, Vec<f32>) {
    let (mut token_of_slot, mut weight) = (vec![None; SLOTS], vec![0.0; SLOTS]);
    let mut filled = [0usize; EXPERTS];
    for t in 0..TOKENS {
        let (first, second) = ((t * 7) % EXPERTS, (t * 3 + 1) % EXPERTS);
        let second = if second == first { (first + 1) % EXPERTS } else { second };
        for (e, w) in [(first, 0.75f32), (second, 0.25)] {
            if filled[e] < CAPACITY {
                let s = e * CAPACITY + filled[e];
                (token_of_slot[s], weight[s]) = (Some(t), w);
                filled[e] += 1;
            }
        }
    }
    (token_of_slot, weight)
}

fn run() -> Result<(), Error> {
    println!("device: {}", stridex::Device::default_device()?.description());
    let x: Vec<f32> = (0..TOKENS * DIM).map(|i| ((i * 29) % 61) as f32 / 8.0 - 3.0).collect();
    let (token_of_slot, weight) = route();
    let dispatch_ids: Vec<i32> =
        token_of_slot.iter().map(|t| t.map_or(TOKENS as i32, |t| t as i32)).collect();
    let combine_ids: Vec<i32> = token_of_slot.iter().map(|t| t.map_or(-1, |t| t as i32)).collect();

    let expert_in = DISPATCH.run(&x, &dispatch_ids)?;
    assert_eq!(expert_in.shape(), [SLOTS, DIM]);
    // The experts: expert e scales its rows by (e + 1); the gate weight is applied on the way out.
    let gain: Vec<f32> = (0..SLOTS).map(|s| (s / CAPACITY + 1) as f32 * weight[s]).collect();
    let expert_out: Vec<f32> =
        expert_in.data().chunks(DIM).zip(&gain).flat_map(|(row, g)| row.iter().map(move |v| v * g)).collect();
    let zeros = vec![0.0f32; TOKENS * DIM];
    let y = COMBINE.run(&zeros, &combine_ids, &expert_out)?;

    // A plain loop over tokens, in slot order, for comparison.
    let mut expected = zeros.clone();
    for (s, t) in token_of_slot.iter().enumerate() {
        if let Some(t) = *t {
            for d in 0..DIM {
                expected[t * DIM + d] += x[t * DIM + d] * gain[s];
            }
        }
    }
    assert_eq!(y.data(), &expected[..], "the combined rows equal a plain loop's, bit for bit");
    let again = COMBINE.run(&zeros, &combine_ids, &expert_out)?;
    assert_eq!(again.data(), y.data(), "a second run gives the same bits");
    for e in 0..EXPERTS {
        let tokens: Vec<_> = token_of_slot[e * CAPACITY..][..CAPACITY].iter().flatten().collect();
        println!("expert {e}: tokens {tokens:?}");
    }
    let dropped = (0..TOKENS).filter(|t| !token_of_slot.contains(&Some(*t))).count();
    println!("token 0 out: {:?}", &y.data()[..4]);
    println!("{SLOTS} slots, {dropped} token(s) dropped by capacity; combine equals a plain loop");
    Ok(())
}
