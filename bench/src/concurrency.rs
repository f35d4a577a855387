//! One `static` op shared by N threads, as a server shares it between request threads, on the
//! run's device (`run_on`).

use crate::measure::Settings;
use std::time::{Duration, Instant};

stridex::gather! {
    static SERVE;
    data: f32[4096, 64],
    indices: i64[32],
}

/// Every `BAD_EVERY`th call carries an out-of-range index and must return `Err`.
pub const BAD_EVERY: usize = 8;

pub struct Run {
    pub threads: usize,
    pub ops_per_s: f64,
    pub errors: usize,
}

pub struct Concurrency {
    pub op: &'static str,
    pub runs: Vec<Run>,
}

impl Concurrency {
    pub fn ratio(&self) -> f64 {
        let at = |n| self.runs.iter().find(|r| r.threads == n).map_or(f64::NAN, |r| r.ops_per_s);
        at(16) / at(1)
    }
}

fn worker(device: &stridex::Device, thread: usize, table: &[f32], until: Instant) -> (usize, usize) {
    let (mut ops, mut errors) = (0, 0);
    // One output buffer per thread, reused for every request (`run_into`: no tensor per call).
    let mut out = vec![0f32; 32 * 64];
    while Instant::now() < until {
        let ids: Vec<i64> = (0..32).map(|i| ((thread * 131 + ops * 17 + i * 7) % 4096) as i64).collect();
        if ops % BAD_EVERY == BAD_EVERY - 1 {
            let mut bad = ids.clone();
            bad[5] = 4096;
            match SERVE.run_into_on(device, table, &bad, &mut out) {
                Err(stridex::Error::IndexOutOfRange { position, value: 4096, .. }) if position == [5] => {
                    errors += 1
                }
                other => panic!("thread {thread}: expected IndexOutOfRange, got {other:?}"),
            }
        } else {
            SERVE.run_into_on(device, table, &ids, &mut out).expect("gather");
            for (row, &id) in out.chunks_exact(64).zip(&ids) {
                assert_eq!(row, &table[id as usize * 64..][..64], "thread {thread}: wrong row {id}");
            }
        }
        ops += 1;
    }
    (ops, errors)
}

pub fn run(settings: &Settings, device: &'static stridex::Device) -> Concurrency {
    let table: Vec<f32> = (0..4096 * 64).map(|i| i as f32).collect();
    // Warm-up: the kernel is built and verified once.
    worker(device, 0, &table, Instant::now() + Duration::from_millis(200));
    let runs = [1, 4, 16]
        .into_iter()
        .map(|threads| {
            let start = Instant::now();
            let until = start + Duration::from_secs_f64(settings.concurrency_secs);
            let (ops, errors) = std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        s.spawn({
                            let table = &table;
                            move || worker(device, t, table, until)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("worker"))
                    .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
            });
            Run { threads, ops_per_s: ops as f64 / start.elapsed().as_secs_f64(), errors }
        })
        .collect();
    Concurrency { op: "gather f32[4096, 64] <- i64[32], out_of_range: error", runs }
}
