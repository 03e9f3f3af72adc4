//! What a live run measures beyond the simulator's recorder: how late its timers wake, the
//! timer resolution, and the service times and one-way latencies it observed.
//!
//! The recorder itself is the simulator's ([`crate::sim::recorder::Recorder`]), fed from real
//! timestamps by [`super::state`]; this module keeps what only a real run has. Every sleep of
//! the run (service timers, network legs, scheduled starts) goes through [`Lag::sleep`], which
//! records how much later than asked it woke; the executor's backoff sleeps are measured from
//! its decision to the next attempt's start ([`Lag::record`]). That scheduling lag says how far
//! to trust a comparison with the simulator, whose timers are exact.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::atomic::write_atomic;
use crate::error::Result;

pub use crate::folder::names::{
    OBSERVED_LATENCY as LATENCY_FILE, OBSERVED_SERVICE as SERVICE_FILE,
};

/// How late sleeps woke, in microseconds.
pub(crate) struct Lag {
    late_us: Mutex<Histogram<u64>>,
}

impl Lag {
    pub fn new() -> Lag {
        Lag {
            late_us: Mutex::new(
                Histogram::new_with_bounds(1, 1 << 36, 3).expect("constant, valid bounds"),
            ),
        }
    }

    /// Sleeps `d` on tokio's clock and records how late it woke.
    pub async fn sleep(&self, d: Duration) {
        if d.is_zero() {
            return;
        }
        let asked = Instant::now() + d;
        tokio::time::sleep(d).await;
        self.record(asked);
    }

    /// Sleeps until `at` and records how late it woke.
    pub async fn sleep_until(&self, at: Instant) {
        tokio::time::sleep_until(at.into()).await;
        self.record(at);
    }

    /// Records a wake-up that was due at `asked` (a sleep measured by its owner).
    pub fn record(&self, asked: Instant) {
        let late = Instant::now().saturating_duration_since(asked);
        let us = (late.as_nanos() / 1000) as u64;
        let mut h = self.late_us.lock().unwrap_or_else(|p| p.into_inner());
        h.saturating_record(us.max(1));
    }

    /// The lag's summary, with the timer resolution measured before the run.
    pub fn report(&self, resolution: Duration) -> TimerReport {
        let h = self.late_us.lock().unwrap_or_else(|p| p.into_inner());
        let ms = |us: u64| us as f64 / 1000.0;
        TimerReport {
            timer_resolution_ms: resolution.as_secs_f64() * 1000.0,
            sleeps: h.len(),
            lag_p50_ms: ms(h.value_at_quantile(0.5)),
            lag_p99_ms: ms(h.value_at_quantile(0.99)),
            lag_max_ms: ms(h.max()),
        }
    }
}

/// Timer resolution and scheduling lag, as written to `meta.json` (`timers`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TimerReport {
    /// The median time a 1 µs sleep took on this runtime: the granularity of every timer.
    pub timer_resolution_ms: f64,
    /// Sleeps measured (service timers, network legs, backoff sleeps, scheduled starts).
    pub sleeps: u64,
    /// Median lateness of a sleep.
    pub lag_p50_ms: f64,
    /// 99th percentile lateness.
    pub lag_p99_ms: f64,
    /// Largest lateness.
    pub lag_max_ms: f64,
}

/// The timer resolution: the median duration of `n` sleeps of 1 µs (tokio's timer wheel
/// rounds every sleep up to its next tick).
pub(crate) async fn timer_resolution(n: usize) -> Duration {
    let mut took = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        tokio::time::sleep(Duration::from_micros(1)).await;
        took.push(t.elapsed());
    }
    took.sort_unstable();
    took[n / 2]
}

/// Service times and one-way latencies as observed, in nanoseconds.
#[derive(Debug, Default)]
pub(crate) struct Observed {
    pub service_ns: Vec<u64>,
    pub latency_ns: Vec<u64>,
}

/// Most samples kept per file: beyond, the first ones are kept.
const MAX_OBSERVED: usize = 1_000_000;

impl Observed {
    pub fn service(&mut self, d: Duration) {
        if self.service_ns.len() < MAX_OBSERVED {
            self.service_ns.push(d.as_nanos() as u64);
        }
    }

    pub fn latency(&mut self, ns: u64) {
        if self.latency_ns.len() < MAX_OBSERVED {
            self.latency_ns.push(ns);
        }
    }

    pub fn extend(&mut self, other: Observed) {
        for s in other.service_ns {
            self.service(Duration::from_nanos(s));
        }
        for l in other.latency_ns {
            self.latency(l);
        }
    }

    /// Writes the two files into `dir`: one sample in milliseconds per line after a `#`
    /// header, the format `dist = "empirical"` reads.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let files = [
            (
                SERVICE_FILE,
                "service times observed by the live server: from a worker taking an attempt to the end of its service timer",
                &self.service_ns,
            ),
            (
                LATENCY_FILE,
                "one-way latencies observed: from a client starting an attempt's first leg to the server receiving the request",
                &self.latency_ns,
            ),
        ];
        let mut written = Vec::new();
        for (name, what, samples) in files {
            let mut text = format!(
                "# {what}, in milliseconds, all strategies, {} samples.\n# Use as {{ dist = \"empirical\", file = \"{name}\" }}.\n",
                samples.len()
            );
            for &ns in samples.iter() {
                text.push_str(&format!("{}\n", ns as f64 / 1e6));
            }
            let path = dir.join(name);
            write_atomic(&path, text.as_bytes())?;
            written.push(path);
        }
        Ok(written)
    }
}
