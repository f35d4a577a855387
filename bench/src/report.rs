//! The table, the JSON lines and RESULTS.md.

use crate::concurrency::Concurrency;
use crate::measure::Settings;

/// What a case must reach: stridex's bandwidth over the copy's and over Burn's.
#[derive(Clone, Copy)]
pub struct Targets {
    pub copy: f64,
    pub burn: f64,
}

/// One case's medians, in seconds, each moving `bytes` (read + written).
pub struct Outcome {
    pub case: &'static str,
    pub bytes: usize,
    pub stridex: f64,
    pub copy: f64,
    pub burn: Option<f64>,
    pub burn_op: &'static str,
    pub cpu_rows: Option<f64>,
    pub ndarray: Option<f64>,
    pub targets: Targets,
}

impl Outcome {
    pub fn gbps(&self, secs: f64) -> f64 {
        self.bytes as f64 / secs / 1e9
    }

    pub fn vs_copy(&self) -> f64 {
        self.copy / self.stridex
    }

    pub fn vs_burn(&self) -> Option<f64> {
        self.burn.map(|b| b / self.stridex)
    }

    pub fn meets_targets(&self) -> bool {
        self.vs_copy() >= self.targets.copy && self.vs_burn().is_none_or(|r| r >= self.targets.burn)
    }
}

#[derive(Default)]
pub struct Results {
    pub cases: Vec<Outcome>,
    pub concurrency: Option<Concurrency>,
}

fn opt(v: Option<f64>) -> String {
    v.map_or("null".into(), |x| format!("{x:.3}"))
}

pub fn json_line(o: &Outcome) -> String {
    format!(
        "{{\"case\": \"{}\", \"bytes\": {}, \"stridex_gbps\": {:.3}, \"copy_gbps\": {:.3}, \"burn_gbps\": {}, \
         \"cpu_rows_gbps\": {}, \"burn_ndarray_gbps\": {}, \"burn_op\": \"{}\", \"stridex_vs_copy\": {:.3}, \
         \"stridex_vs_burn\": {}, \"meets_targets\": {}}}",
        o.case,
        o.bytes,
        o.gbps(o.stridex),
        o.gbps(o.copy),
        opt(o.burn.map(|t| o.gbps(t))),
        opt(o.cpu_rows.map(|t| o.gbps(t))),
        opt(o.ndarray.map(|t| o.gbps(t))),
        o.burn_op,
        o.vs_copy(),
        opt(o.vs_burn()),
        o.meets_targets()
    )
}

pub fn concurrency_json(c: &Concurrency) -> String {
    let runs: Vec<String> = c
        .runs
        .iter()
        .map(|r| {
            format!(
                "{{\"threads\": {}, \"ops_per_s\": {:.0}, \"errors_checked\": {}}}",
                r.threads, r.ops_per_s, r.errors
            )
        })
        .collect();
    format!(
        "{{\"case\": \"concurrency: {}\", \"runs\": [{}], \"ratio_16_vs_1\": {:.3}, \"meets_targets\": {}}}",
        c.op,
        runs.join(", "),
        c.ratio(),
        c.ratio() >= 0.8
    )
}

pub fn print_row(o: &Outcome, first: bool) {
    if first {
        println!(
            "{:<50} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7}  Burn op",
            "case", "MB", "stridex", "copy", "Burn", "x copy", "x Burn"
        );
    }
    println!(
        "{:<50} {:>7.1} {:>8.2} {:>8.2} {:>8} {:>7.2} {:>7}  {}{}",
        o.case,
        o.bytes as f64 / 1e6,
        o.gbps(o.stridex),
        o.gbps(o.copy),
        o.burn.map_or("-".into(), |t| format!("{:.2}", o.gbps(t))),
        o.vs_copy(),
        o.vs_burn().map_or("-".into(), |r| format!("{r:.1}")),
        o.burn_op,
        if o.meets_targets() { "" } else { "  (below target)" }
    );
}

pub fn print_concurrency(c: &Concurrency) {
    println!("\nconcurrency: {} (each call uploads, launches and reads back)", c.op);
    for r in &c.runs {
        println!("  {:>2} threads: {:>7.0} ops/s", r.threads, r.ops_per_s);
    }
    println!("  16 threads / 1 thread: {:.2}", c.ratio());
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

pub fn markdown(device: &str, settings: &Settings, r: &Results) -> String {
    let mut s = String::new();
    s.push_str("# Benchmark results\n\n");
    s.push_str(&format!(
        "{} on `{}`, one process, `cargo run --release -p stridex-bench -- --write bench` \
         (median of {} synced launches per figure, after warm-up).\n\n",
        today(),
        device,
        settings.reps
    ));
    s.push_str(
        "GB/s = (bytes read + bytes written) / time, the same bytes credited to every column of a \
         row. *copy* is a plain 128-bit-vector copy kernel moving those bytes on the same device; \
         *Burn* is Burn 0.21.0's `CubeBackend` (no fusion) on the same CubeCL client. Every \
         output, stridex's and Burn's, was checked against a host computation in this run.\n\n",
    );
    s.push_str("![GB/s per case](results.svg)\n\n");
    s.push_str("| case | MB moved | stridex GB/s | copy GB/s | Burn GB/s | stridex / copy | stridex / Burn | Burn op | targets |\n");
    s.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
    for o in &r.cases {
        s.push_str(&format!(
            "| {} | {:.1} | {:.2} | {:.2} | {} | {:.2} | {} | {} | {} (>= {:.1}x copy{}) |\n",
            o.case,
            o.bytes as f64 / 1e6,
            o.gbps(o.stridex),
            o.gbps(o.copy),
            o.burn.map_or("-".into(), |t| format!("{:.2}", o.gbps(t))),
            o.vs_copy(),
            o.vs_burn().map_or("-".into(), |x| format!("{x:.1}")),
            o.burn_op,
            if o.meets_targets() { "met" } else { "**missed**" },
            o.targets.copy,
            if o.targets.burn > 0.0 { format!(", >= {:.0}x Burn", o.targets.burn) } else { String::new() }
        ));
    }
    let host: Vec<String> = r
        .cases
        .iter()
        .filter_map(|o| {
            let rows = o.cpu_rows.map(|t| format!("plain Rust row copies {:.2} GB/s", o.gbps(t)))?;
            let nd = o
                .ndarray
                .map_or(String::new(), |t| format!(", Burn NdArray `select(0)` {:.2} GB/s", o.gbps(t)));
            Some(format!("- {}: {rows}{nd}\n", o.case))
        })
        .collect();
    if !host.is_empty() {
        s.push_str("\nOn the host CPU, for scale (no device involved):\n\n");
        s.extend(host);
    }
    if let Some(c) = &r.concurrency {
        s.push_str(&format!(
            "\nConcurrency: one shared `static` op ({}) called from N threads, each call `run` \
             (upload, launch, read back), every value checked and every {}th call an out-of-range \
             index that must come back as `Err`:\n\n| threads | ops/s |\n| ---: | ---: |\n",
            c.op,
            crate::concurrency::BAD_EVERY
        ));
        for run in &c.runs {
            s.push_str(&format!("| {} | {:.0} |\n", run.threads, run.ops_per_s));
        }
        s.push_str(&format!("\n16 threads / 1 thread: {:.2} (target >= 0.8).\n", c.ratio()));
    }
    s
}
