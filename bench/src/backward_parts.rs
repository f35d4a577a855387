//! Where the embedding backward's time goes on this device. The case's scatter-add (16384 Zipf
//! ids into f32[32000, 1024], its rules' `zero` policy: an update out of range is dropped, no
//! check) is timed round by round beside variants that each add or leave out one part: under
//! `error` (every index checked before the launch), at distinct ids (no long list: the Zipf
//! head's updates to one row spread over as many rows), and in rows of 4 floats instead of 1024
//! (the bytes gone; the grouping and the walk of the lists kept). Their differences name
//! the parts, on whatever grouping this device uses (on GPUs the lists are made on the device,
//! elsewhere on the host), so a GPU run says which part keeps the case from the copy's rate.

use crate::measure::{medians, Env, Timer};
use crate::scatters::{add_rows, assert_bits, distinct, exact_values, zipf_ids, Rng};

/// The variants, in the order of [`BackwardParts::times`].
pub const VARIANTS: [&str; 5] = [
    "the case: Zipf ids, rows of 1024, its policy",
    "under error (each index checked first)",
    "distinct ids",
    "rows of 4 floats",
    "rows of 4 floats, distinct ids",
];

pub struct BackwardParts {
    /// Seconds per call of each of [`VARIANTS`].
    pub times: [f64; 5],
    /// The case's out-of-range policy.
    pub policy: String,
    /// Updates in the longest list of the Zipf ids (the most frequent id's).
    pub longest: usize,
    /// Rows the Zipf ids touch.
    pub touched: usize,
}

impl BackwardParts {
    /// The parts, each a difference of two variants: (what, seconds). At rows of 4 floats a
    /// run is one unit, walked by one invocation: its list's walk keeps its chain of loads, and
    /// the bytes are gone.
    pub fn parts(&self) -> [(&'static str, f64); 4] {
        let t = &self.times;
        [
            ("the index check before the launch (error - the case)", t[1] - t[0]),
            ("grouping, launches and a sync (rows of 4, distinct ids)", t[4]),
            ("the Zipf lists' walk (rows of 4: Zipf - distinct ids)", t[3] - t[4]),
            ("the rows' bytes (Zipf: rows of 1024 - rows of 4)", t[0] - t[3]),
        ]
    }
}

pub fn run(env: &Env) -> BackwardParts {
    let (vocab, dim, n) = (32000, 1024, 16384);
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let zipf = zipf_ids(n, vocab, &mut rng);
    let grads = exact_values(n * dim, &mut rng);
    let mut counts = vec![0usize; vocab];
    zipf.iter().for_each(|&i| counts[i as usize] += 1);
    let longest = counts.iter().copied().max().unwrap_or(0);
    // As many distinct ids, spread over the table in a shuffled order.
    let mut order: Vec<i32> = (0..vocab as i32).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    let spread = order[..n].to_vec();
    let narrow_grads = grads[..n * 4].to_vec();

    let case = stridex::scatter! {
        data: f32[32000, 1024], indices: i32[16384], updates: f32[16384, 1024], axis: 0, reduction: add,
    };
    let checked = stridex::scatter! {
        data: f32[32000, 1024], indices: i32[16384], updates: f32[16384, 1024], axis: 0, reduction: add,
        out_of_range: error,
    };
    let narrow = stridex::scatter! {
        data: f32[32000, 4], indices: i32[16384], updates: f32[16384, 4], axis: 0, reduction: add,
    };
    let (wide_zeros, narrow_zeros) = (vec![0.0f32; vocab * dim], vec![0.0f32; vocab * 4]);
    let variants = [
        (&case, &zipf, &grads, &wide_zeros, dim),
        (&checked, &zipf, &grads, &wide_zeros, dim),
        (&case, &spread, &grads, &wide_zeros, dim),
        (&narrow, &zipf, &narrow_grads, &narrow_zeros, 4),
        (&narrow, &spread, &narrow_grads, &narrow_zeros, 4),
    ];
    let mut timers: Vec<Timer> = Vec::new();
    for (i, (op, ids, updates, zeros, width)) in variants.into_iter().enumerate() {
        let (timer, out) = env.scatter(op, zeros, ids, updates);
        let mut expected = zeros.clone();
        add_rows(&mut expected, ids, updates, width);
        assert_bits("stridex", VARIANTS[i], &out, &expected);
        timers.push(timer);
    }
    let t = medians(env.settings.reps, &mut timers);
    BackwardParts {
        times: [t[0], t[1], t[2], t[3], t[4]],
        policy: case.plan().expect("planned").out_of_range.to_string(),
        longest,
        touched: distinct(&zipf, vocab),
    }
}

pub fn json(p: &BackwardParts, backend: &str) -> String {
    let times: Vec<String> =
        VARIANTS.iter().zip(p.times).map(|(v, t)| format!("\"{v}\": {:.4}", t * 1e3)).collect();
    format!(
        "{{\"case\": \"embedding backward parts\", \"backend\": \"{backend}\", \"ms\": {{{}}}, \"longest_list\": {}}}",
        times.join(", "),
        p.longest
    )
}

pub fn print(p: &BackwardParts) {
    println!("\nembedding backward, its parts (ms per call, round by round):");
    for (v, t) in VARIANTS.iter().zip(p.times) {
        println!("  {v:<62} {:>8.3}", t * 1e3);
    }
    for (what, t) in p.parts() {
        println!("  = {what:<60} {:>8.3}", t * 1e3);
    }
}

pub fn markdown(p: &BackwardParts) -> String {
    let mut s = format!(
        "\n## The embedding backward, part by part\n\nThe embedding backward case (16384 Zipf ids, the \
         longest list {} updates, into f32[32000, 1024]; out_of_range `{}`) beside variants that \
         each add or leave out one part, all timed round by round in this run (each output checked against \
         the serial sums). On GPUs the lists are grouped on the device, elsewhere on the host.\n\n\
         | variant | ms |\n| --- | ---: |\n",
        p.longest, p.policy
    );
    for (v, t) in VARIANTS.iter().zip(p.times) {
        s.push_str(&format!("| {v} | {:.3} |\n", t * 1e3));
    }
    s.push_str("\n| part (a difference of the rows above) | ms |\n| --- | ---: |\n");
    for (what, t) in p.parts() {
        s.push_str(&format!("| {what} | {:.3} |\n", t * 1e3));
    }
    s.push_str(&format!(
        "\nThe copy kernel's time for the case's bytes is the first table's (its copy GB/s). At \
         rows of 4 floats a run is one unit, walked by one invocation: the walk of a list keeps its chain of loads while its \
         bytes are gone, so the two rows of 4 part the case's fixed costs from the long lists'. \
         Distinct ids at rows of 1024 touch 16384 rows against the Zipf ids' {}, so that row \
         moves more bytes than the case.\n",
        p.touched
    ));
    s
}
