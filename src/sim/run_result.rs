//! What one run measures: request outcomes, attempts, latency, peaks, the time series.
//!
//! Every request ends exactly once, in one of the outcome counters, or is still unfinished
//! when the clock stops: `succeeded + failed + gave_up_* + rejected_by_breaker + throttled +
//! unfinished = requests` ([`RunResult::conservation`]). Each side is counted on its own (endings
//! as they happen, unfinished requests at the horizon, client by client) and the client ledger
//! refuses a second ending, so the check observes the engine rather than restating its arithmetic.

use super::hedge::HedgeCounts;
use std::cell::Cell;

use hdrhistogram::Histogram;

use super::passage::Passage;
use super::recovery::Recovery;
use super::spare;
use crate::time::{SimDuration, SimTime};

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// A successful answer.
    Succeeded,
    /// A non-retryable error answer.
    Failed,
    /// Out of attempts.
    GaveUpAttempts,
    /// The overall deadline left no room for another attempt or sleep.
    GaveUpDeadline,
    /// The retry budget said no.
    GaveUpBudget,
    /// The circuit breaker refused the attempt.
    RejectedByBreaker,
    /// The client's adaptive throttle rejected the attempt locally (it was never sent).
    Throttled,
}

/// Request outcome counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests started.
    pub requests: u64,
    /// Attempts sent.
    pub attempts: u64,
    /// See [`Ending::Succeeded`].
    pub succeeded: u64,
    /// See [`Ending::Failed`].
    pub failed: u64,
    /// See [`Ending::GaveUpAttempts`].
    pub gave_up_attempts: u64,
    /// See [`Ending::GaveUpDeadline`].
    pub gave_up_deadline: u64,
    /// See [`Ending::GaveUpBudget`].
    pub gave_up_budget: u64,
    /// See [`Ending::RejectedByBreaker`].
    pub rejected_by_breaker: u64,
    /// See [`Ending::Throttled`].
    pub throttled: u64,
    /// Started but not ended when the clock stopped.
    pub unfinished: u64,
}

impl Counts {
    /// Counts one ending.
    pub fn record(&mut self, ending: Ending) {
        *match ending {
            Ending::Succeeded => &mut self.succeeded,
            Ending::Failed => &mut self.failed,
            Ending::GaveUpAttempts => &mut self.gave_up_attempts,
            Ending::GaveUpDeadline => &mut self.gave_up_deadline,
            Ending::GaveUpBudget => &mut self.gave_up_budget,
            Ending::RejectedByBreaker => &mut self.rejected_by_breaker,
            Ending::Throttled => &mut self.throttled,
        } += 1;
    }

    /// Requests that ended (every counter but `unfinished`).
    pub fn ended(&self) -> u64 {
        self.succeeded
            + self.failed
            + self.gave_up_attempts
            + self.gave_up_deadline
            + self.gave_up_budget
            + self.rejected_by_breaker
            + self.throttled
    }
}

/// Per-bucket counters (replication 0 keeps them for `timeseries.csv`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimeSeries {
    /// Bucket width.
    pub bucket: SimDuration,
    /// Attempts reaching the server.
    pub arrivals: Vec<u32>,
    /// First attempts reaching the server.
    pub first_attempts: Vec<u32>,
    /// Retries reaching the server.
    pub retries: Vec<u32>,
    /// Successful answers received by clients.
    pub successes: Vec<u32>,
    /// Attempts the server answered with an error without serving them (overload, rate limit,
    /// outage, injected errors, OCC conflicts).
    pub rejections: Vec<u32>,
    /// Attempts that timed out at the client.
    pub timeouts: Vec<u32>,
    /// Attempts at the server (waiting or in service) at the end of the bucket.
    pub in_system: Vec<u32>,
}

impl TimeSeries {
    /// The counters' names, as `timeseries.csv` columns, in [`TimeSeries::columns`] order.
    pub const COLUMNS: [&'static str; 7] = [
        "arrivals",
        "first_attempts",
        "retries",
        "successes",
        "rejections",
        "timeouts",
        "in_system",
    ];

    /// The counters in [`TimeSeries::COLUMNS`] order.
    pub fn columns(&self) -> [&Vec<u32>; 7] {
        [
            &self.arrivals,
            &self.first_attempts,
            &self.retries,
            &self.successes,
            &self.rejections,
            &self.timeouts,
            &self.in_system,
        ]
    }

    /// The counters in [`TimeSeries::COLUMNS`] order, mutable.
    pub(crate) fn columns_mut(&mut self) -> [&mut Vec<u32>; 7] {
        [
            &mut self.arrivals,
            &mut self.first_attempts,
            &mut self.retries,
            &mut self.successes,
            &mut self.rejections,
            &mut self.timeouts,
            &mut self.in_system,
        ]
    }

    /// Number of buckets.
    pub fn len(&self) -> usize {
        self.arrivals.len()
    }

    /// True when there are no buckets.
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty()
    }

    /// The re-synchronisation measure of the retries, per bucket (see [`super::resync`]).
    pub fn retry_dispersion(&self) -> Vec<Option<f64>> {
        super::resync::dispersion(&self.retries, super::resync::window_buckets(self.bucket))
    }

    /// Keeps the first `buckets` buckets.
    pub(crate) fn truncate(&mut self, buckets: usize) {
        for v in self.columns_mut() {
            v.truncate(buckets);
        }
    }
}

/// Everything one run (point × strategy × replication) measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Outcome counts.
    pub counts: Counts,
    /// Latency of succeeded requests, first send to final outcome, in microseconds.
    pub latency_us: Histogram<u64>,
    /// Their exact mean in milliseconds (NaN when nothing succeeded).
    pub latency_mean_ms: f64,
    /// Largest count of attempts reaching the server in one bucket.
    pub peak_arrivals: u32,
    /// Largest count of retries reaching the server in one bucket.
    pub peak_retries: u32,
    /// Time of the last request's final outcome.
    pub makespan: SimTime,
    /// Worker time spent serving / (workers × simulated time).
    pub server_busy_share: f64,
    /// Share of service time spent on attempts whose client was no longer waiting for them.
    pub wasted_work_share: f64,
    /// Share of the server's error answers that carried a Retry-After hint.
    pub retry_after_share: f64,
    /// Events processed.
    pub events: u64,
    /// Beginnings and endings the client ledger refused: a request ended twice, or begun while
    /// its client had one in flight. Always 0 unless the engine is wrong.
    pub ledger_faults: u64,
    /// `by_attempt[n - 1]`: requests that succeeded on attempt `n`.
    pub by_attempt: Vec<u64>,
    /// Recovery from the model's trigger (`None` without one, or when it cannot be measured).
    pub recovery: Option<Recovery>,
    /// The server's state and first passages (`None` where the count is not watched: live
    /// mode).
    pub passage: Option<Passage>,
    /// The time series (kept for replication 0 only).
    pub series: Option<TimeSeries>,
    /// One per layer of a chain of services, layer 1 first; empty for one server.
    pub layers: Vec<LayerResult>,
    /// What hedged requests measured (`None` without hedging).
    pub hedging: Option<HedgeCounts>,
    /// The values recorded into `latency_us` when there are at most [`LATENCY_SAMPLES`] of
    /// them (else empty): [`RunResult::latency_buckets`] then reads them instead of walking
    /// the histogram's 40 000 buckets.
    pub(crate) latency_samples: Vec<u64>,
}

/// Up to this many succeeded requests, a run keeps their latencies beside the histogram.
pub(crate) const LATENCY_SAMPLES: usize = 4096;

/// What one layer of a chain of services measured in one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayerResult {
    /// The requests into this layer (layer 1: the edge clients' own; below, the outbound
    /// requests of the layer above) and their outcomes; `attempts` are those sent to it.
    pub counts: Counts,
    /// Attempts that reached this layer.
    pub arrivals: u64,
    /// Attempts this layer answered with a success.
    pub served: u64,
    /// Worker time (own service, and for a calling layer the time held waiting for the layer
    /// below) / (workers × simulated time).
    pub busy_share: f64,
    /// Share of that worker time spent on attempts whose caller no longer waited.
    pub wasted_work_share: f64,
    /// Mean time from the start of a request into this layer to its success, ms (NaN when
    /// none succeeded; layer 1: the edge clients' latency).
    pub latency_mean_ms: f64,
    /// Attempts reaching the layer per bucket, as the run's [`TimeSeries`] (kept with it).
    pub series: Option<LayerSeries>,
}

/// Attempts reaching one layer of a chain per time bucket (the buckets of [`TimeSeries`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LayerSeries {
    /// Attempts reaching the layer.
    pub arrivals: Vec<u32>,
    /// Of those, retries (an attempt after the first of its request into the layer).
    pub retries: Vec<u32>,
}

impl LayerSeries {
    /// Counts an attempt reaching the layer in bucket `b`.
    #[inline]
    pub(crate) fn count(&mut self, b: usize, first: bool) {
        if b >= self.arrivals.len() {
            let len = (self.arrivals.len() * 2).max(64).max(b + 1);
            self.arrivals.resize(len, 0);
            self.retries.resize(len, 0);
        }
        self.arrivals[b] += 1;
        self.retries[b] += u32::from(!first);
    }

    /// Cuts or pads the series to `len` buckets.
    pub(crate) fn fit(&mut self, len: usize) {
        self.arrivals.resize(len, 0);
        self.retries.resize(len, 0);
    }
}

impl RunResult {
    /// Checks that every request ended exactly once or is unfinished.
    pub fn check_conservation(&self) -> bool {
        self.conservation().is_ok()
    }

    /// Checks that every request ended exactly once or is unfinished; the error says how the
    /// counts disagree.
    pub fn conservation(&self) -> Result<(), String> {
        let c = &self.counts;
        let ended = c.ended();
        let accounted = ended.checked_add(c.unfinished);
        if self.ledger_faults != 0 || accounted != Some(c.requests) {
            return Err(format!(
                "requests are not conserved: {} begun, {ended} ended, {} unfinished at the horizon, {} beginnings or endings refused by the client ledger",
                c.requests, c.unfinished, self.ledger_faults
            ));
        }
        // Every layer of a chain too (layer 1's counts are the clients' own).
        if let Some((i, l)) = self.layers.iter().enumerate().find(|(_, l)| !l.conserved()) {
            let c = &l.counts;
            return Err(format!(
                "requests into layer {} are not conserved: {} begun, {} ended, {} unfinished at the horizon",
                i + 1,
                c.requests,
                c.ended(),
                c.unfinished
            ));
        }
        Ok(())
    }

    /// Attempts per request.
    pub fn amplification(&self) -> f64 {
        ratio(self.counts.attempts, self.counts.requests)
    }

    /// The latency histogram's non-empty buckets as `(value, count)`, ascending, each bucket
    /// named by its highest equivalent value: what `latency_us.iter_recorded()` gives, from
    /// the kept samples when they can stand for the histogram (a sweep's small runs spent
    /// 5 % of their time walking its empty buckets).
    pub fn latency_buckets(&self) -> Vec<(u64, u64)> {
        self.buckets_from_samples().unwrap_or_else(|| {
            self.latency_us
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        })
    }

    /// [`RunResult::latency_buckets`] from the samples, when they are all of the histogram's
    /// values and each within its range (a value past it was clamped, and lands where only
    /// the walk knows).
    pub(crate) fn buckets_from_samples(&self) -> Option<Vec<(u64, u64)>> {
        let (h, samples) = (&self.latency_us, &self.latency_samples);
        if samples.is_empty()
            || samples.len() as u64 != h.len()
            || samples.iter().any(|&v| v > h.high())
        {
            return None;
        }
        let mut keys: Vec<u64> = samples.iter().map(|&v| h.highest_equivalent(v)).collect();
        keys.sort_unstable();
        let mut buckets: Vec<(u64, u64)> = Vec::new();
        for key in keys {
            match buckets.last_mut() {
                Some((k, n)) if *k == key => *n += 1,
                _ => buckets.push((key, 1)),
            }
        }
        Some(buckets)
    }

    /// Succeeded / requests.
    pub fn success_rate(&self) -> f64 {
        ratio(self.counts.succeeded, self.counts.requests)
    }
}

impl LayerResult {
    /// Attempts that reached this layer per request of the edge clients.
    pub fn amplification(&self, edge_requests: u64) -> f64 {
        ratio(self.arrivals, edge_requests)
    }

    /// True when every request into this layer ended exactly once or is unfinished.
    pub fn conserved(&self) -> bool {
        self.counts.ended().checked_add(self.counts.unfinished) == Some(self.counts.requests)
    }
}

/// A server's busy share (`busy_ns` of worker time over `workers` × `end`, at most 1) and its
/// wasted-work share (`wasted_ns` of that worker time), each 0 when undefined.
pub(crate) fn work_shares(
    busy_ns: u128,
    wasted_ns: u128,
    end: SimTime,
    workers: usize,
) -> (f64, f64) {
    let capacity_ns = workers as f64 * end.as_nanos() as f64;
    let busy = busy_ns as f64;
    let busy_share = if capacity_ns > 0.0 {
        (busy / capacity_ns).min(1.0)
    } else {
        0.0
    };
    let wasted_share = if busy > 0.0 {
        wasted_ns as f64 / busy
    } else {
        0.0
    };
    (busy_share, wasted_share)
}

/// `a / b`, or 0 when `b` is 0.
pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// A latency histogram in microseconds, up to about 12 days, 3 significant digits.
pub fn new_latency_histogram() -> Histogram<u64> {
    // 1 µs .. 2^40 µs with 3 significant figures: constant parameters that are always valid.
    Histogram::new_with_bounds(1, 1 << 40, 3).expect("constant, valid histogram bounds")
}

thread_local! {
    static SPARE_HISTOGRAM: Cell<Option<Histogram<u64>>> = const { Cell::new(None) };
    static SPARE_SERIES: Cell<Option<TimeSeries>> = const { Cell::new(None) };
}

/// A time series keeps its columns for the next run on its thread (see [`spare`]) when each
/// has room for at most this many buckets.
const SPARE_SERIES_MAX: usize = 1 << 16;

/// An empty latency histogram for a run: the one a previous run on this thread gave back
/// (see [`RunResult::recycle`]), emptied, else a new one.
pub(crate) fn spare_latency_histogram() -> Histogram<u64> {
    match spare::take(&SPARE_HISTOGRAM) {
        Some(mut h) => {
            h.reset();
            h
        }
        None => new_latency_histogram(),
    }
}

/// An empty time series of `bucket`-wide buckets for a run, with the columns a previous run
/// on this thread gave back, else none yet.
pub(crate) fn spare_series(bucket: SimDuration) -> TimeSeries {
    let mut series = spare::take(&SPARE_SERIES).unwrap_or_default();
    series.truncate(0);
    series.bucket = bucket;
    series
}

/// Keeps `series`'s columns for the next run on this thread, unless they are large.
pub(crate) fn give_back_series(series: TimeSeries) {
    if series
        .columns()
        .iter()
        .all(|v| v.capacity() <= SPARE_SERIES_MAX)
    {
        spare::give(&SPARE_SERIES, series);
    }
}

impl RunResult {
    /// Hands this result's latency histogram and time series to the next run on this thread,
    /// which would otherwise allocate (and the kernel fault in) its own: a sweep calls this
    /// once it has taken what it needs from the result. Dropping a result instead is always
    /// correct, only slower.
    pub fn recycle(self) {
        spare::give(&SPARE_HISTOGRAM, self.latency_us);
        if let Some(series) = self.series {
            give_back_series(series);
        }
    }
}
