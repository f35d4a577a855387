//! Beam search reorders its key/value cache after every step: each beam continues from a parent
//! beam, so cache row `[b, k]` becomes the parent's row `[b, parent[b, k]]`. That is OpenVINO's
//! Gather-8 with `batch_dims: 1`: `cargo run --example beam_reorder`.

const BATCH: usize = 2;
const BEAMS: usize = 4;
const SEQ: usize = 3;
const HEAD: usize = 2;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), stridex::Error> {
    println!("device: {}", stridex::Device::default_device()?.description());
    // A cache [batch, beam, seq, head] whose values say where they came from: b*1000 + k*100 + ...
    let cache: Vec<f32> = (0..BATCH * BEAMS * SEQ * HEAD)
        .map(|i| {
            let (b, k, rest) = (i / (BEAMS * SEQ * HEAD), i / (SEQ * HEAD) % BEAMS, i % (SEQ * HEAD));
            (b * 1000 + k * 100 + rest) as f32
        })
        .collect();
    // The parent of each new beam, per batch entry (beam 3 of batch 0 died; beam 1 has two
    // children). OpenVINO takes unsigned ids too.
    let parents: [u32; BATCH * BEAMS] = [1, 1, 0, 2, 3, 2, 1, 0];
    let reorder = stridex::gather! {
        rules: openvino,
        data: f32[2, 4, 3, 2],
        indices: u32[2, 4],
        axis: 1,
        batch_dims: 1,
    };
    let y = reorder.run(&cache, &parents)?;
    assert_eq!(y.shape(), [BATCH, BEAMS, SEQ, HEAD]);
    for b in 0..BATCH {
        for k in 0..BEAMS {
            let p = parents[b * BEAMS + k] as usize;
            let got = &y.data()[(b * BEAMS + k) * SEQ * HEAD..][..SEQ * HEAD];
            let want = &cache[(b * BEAMS + p) * SEQ * HEAD..][..SEQ * HEAD];
            assert_eq!(got, want, "batch {b}, beam {k} continues from beam {p}");
            println!("batch {b} beam {k} <- beam {p}: {got:?}");
        }
    }
    println!("every beam's cache rows are its parent's");
    Ok(())
}
