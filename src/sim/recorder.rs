//! The recorder: the running measurements of one run, one method per measurement, and the final
//! tally into a [`RunResult`].
//!
//! Nothing else touches its fields: the engine tells it what happened (an event, an arrival, a
//! rejection, an ending...), and it keeps the counts, the latency histogram, the busy and
//! wasted service time and the per-bucket time series.

use hdrhistogram::Histogram;

use super::passage::Watch;
use super::recovery::{self, RecoveryConfig};
use super::run_result::{
    Counts, Ending, LATENCY_SAMPLES, RunResult, TimeSeries, give_back_series, ratio,
    spare_latency_histogram, spare_series, work_shares,
};
use crate::time::{SimDuration, SimTime};

/// Running measurements of one run.
pub(crate) struct Recorder {
    counts: Counts,
    latency_us: Histogram<u64>,
    /// The values recorded into `latency_us`, while at most `LATENCY_SAMPLES` (one more
    /// means too many).
    latency_samples: Vec<u64>,
    /// Exact sum of succeeded requests' latencies, for an exact mean.
    latency_sum_ns: u128,
    by_attempt: Vec<u64>,
    series: TimeSeries,
    /// Requests begun per bucket, and of those the ones that succeeded (whenever they did):
    /// what recovery judges (see [`recovery`]); kept beside the series, which
    /// `timeseries.csv` writes whole.
    begun: Vec<u32>,
    served: Vec<u32>,
    /// Whether `begun` and `served` are kept: only a run with a trigger is judged, and the
    /// others skip the two counts on every request.
    judging: bool,
    /// Index of the bucket holding `now`.
    bucket: usize,
    bucket_ns: u64,
    /// Where bucket `bucket` ends, once the series holds it (0 before): an event earlier than
    /// this is in the same bucket, found without a division.
    bucket_end: u64,
    /// Buckets up to the horizon.
    max_buckets: usize,
    horizon: SimDuration,
    busy_ns: u128,
    wasted_ns: u128,
    error_answers: u64,
    hinted_answers: u64,
    events: u64,
    makespan: SimTime,
    /// Beginnings and endings the client ledger refused (see [`RunResult::ledger_faults`]).
    ledger_faults: u64,
    /// The server's count, watched for its mean and first passages ([`Recorder::watching`]).
    watch: Option<Watch>,
}

impl Recorder {
    /// A recorder with time-series buckets of `bucket` up to `horizon`.
    pub fn new(bucket: SimDuration, horizon: SimDuration) -> Recorder {
        let bucket_ns = bucket.as_nanos().max(1);
        Recorder {
            counts: Counts::default(),
            latency_us: spare_latency_histogram(),
            // Allocated once, at the start: grown while the event queue grows, it pinned
            // megabytes of freed heap in a million-client run.
            latency_samples: Vec::with_capacity(LATENCY_SAMPLES + 1),
            latency_sum_ns: 0,
            by_attempt: Vec::new(),
            series: spare_series(bucket),
            begun: Vec::new(),
            served: Vec::new(),
            judging: false,
            bucket: 0,
            bucket_ns,
            bucket_end: 0,
            max_buckets: (horizon.as_nanos() / bucket_ns) as usize + 1,
            horizon,
            busy_ns: 0,
            wasted_ns: 0,
            error_answers: 0,
            hinted_answers: 0,
            events: 0,
            makespan: SimTime::ZERO,
            ledger_faults: 0,
            watch: None,
        }
    }

    /// This recorder, also counting requests begun and served per bucket when `judging`
    /// (a run with a trigger, whose recovery [`Recorder::finish`] measures).
    pub fn judging(mut self, judging: bool) -> Recorder {
        self.judging = judging;
        self
    }

    /// This recorder, also watching the server's count with `watch`.
    pub fn watching(mut self, watch: Watch) -> Recorder {
        self.watch = Some(watch);
        self
    }

    /// An event is processed at `now`; `in_system` attempts were at the server until now.
    #[inline]
    pub fn event(&mut self, now: SimTime, in_system: u32) {
        self.advance(now, in_system);
        if let Some(watch) = &mut self.watch {
            watch.observe(now, in_system);
        }
        self.events += 1;
    }

    /// Moves the bucket cursor to `now`, closing the buckets passed (their `in_system` is the
    /// count at their end) and growing the series lazily.
    #[inline]
    fn advance(&mut self, now: SimTime, in_system: u32) {
        if now.as_nanos() < self.bucket_end {
            return;
        }
        let b = (now.as_nanos() / self.bucket_ns) as usize;
        if b >= self.series.len() {
            // Doubling, but never past the horizon's last bucket.
            let len = (self.series.len() * 2)
                .max(64)
                .min(self.max_buckets)
                .max(b + 1);
            for v in self.series.columns_mut() {
                v.resize(len, 0);
            }
            if self.judging {
                self.begun.resize(len, 0);
                self.served.resize(len, 0);
            }
        }
        for slot in &mut self.series.in_system[self.bucket..b] {
            *slot = in_system;
        }
        self.bucket = b;
        self.bucket_end = (b as u64 + 1).saturating_mul(self.bucket_ns);
    }

    /// Attempts that reached the server so far.
    pub fn arrivals(&self) -> u64 {
        self.series.arrivals.iter().map(|&n| u64::from(n)).sum()
    }

    /// A request begins.
    #[inline]
    pub fn request(&mut self) {
        self.counts.requests += 1;
        if self.judging {
            self.begun[self.bucket] += 1;
        }
    }

    /// An attempt leaves its client.
    #[inline]
    pub fn attempt(&mut self) {
        self.counts.attempts += 1;
    }

    /// An attempt reaches the server; `first` when it is its request's first.
    #[inline]
    pub fn arrival(&mut self, first: bool) {
        let b = self.bucket;
        self.series.arrivals[b] += 1;
        if first {
            self.series.first_attempts[b] += 1;
        } else {
            self.series.retries[b] += 1;
        }
    }

    /// The server answers an attempt with an error without serving it; `hinted` when the
    /// answer carries a Retry-After.
    #[inline]
    pub fn rejection(&mut self, hinted: bool) {
        self.series.rejections[self.bucket] += 1;
        self.error_answers += 1;
        self.hinted_answers += hinted as u64;
    }

    /// The server swallows an attempt without any answer (it counts as a rejection in the
    /// time series, but as no error answer).
    #[inline]
    pub fn dropped(&mut self) {
        self.series.rejections[self.bucket] += 1;
    }

    /// A client receives a successful answer.
    #[inline]
    pub fn success(&mut self) {
        self.series.successes[self.bucket] += 1;
    }

    /// An attempt times out at its client.
    #[inline]
    pub fn timeout(&mut self) {
        self.series.timeouts[self.bucket] += 1;
    }

    /// A worker spent `work` nanoseconds serving an attempt.
    #[inline]
    pub fn service(&mut self, work: u64) {
        self.busy_ns += work as u128;
    }

    /// `work` nanoseconds of service went to an attempt nobody waits for any more.
    #[inline]
    pub fn wasted(&mut self, work: u64) {
        self.wasted_ns += work as u128;
    }

    /// A worker is done with an attempt after `work` nanoseconds; `awaited` when its client
    /// still waits for it (else the work was wasted). The engine and live mode both tally
    /// a finished service here.
    #[inline]
    pub fn work(&mut self, work: u64, awaited: bool) {
        self.service(work);
        if !awaited {
            self.wasted(work);
        }
    }

    /// A request first sent at `start` ends at `now` after `attempts` attempts.
    pub fn ending(&mut self, ending: Ending, now: SimTime, start: SimTime, attempts: u32) {
        self.counts.record(ending);
        self.makespan = now;
        if ending == Ending::Succeeded {
            // The start's bucket is at or before now's, so it is there once events have come.
            if self.judging
                && let Some(n) = self
                    .served
                    .get_mut((start.as_nanos() / self.bucket_ns) as usize)
            {
                *n += 1;
            }
            let latency_ns = now.saturating_since(start).as_nanos();
            self.latency_sum_ns += latency_ns as u128;
            // The histogram starts at 1 us; values beyond its range (12 days) are clamped to it.
            let latency_us = (latency_ns / 1_000).max(1);
            self.latency_us.saturating_record(latency_us);
            if self.latency_samples.len() <= LATENCY_SAMPLES {
                self.latency_samples.push(latency_us);
            }
            let n = attempts as usize;
            if self.by_attempt.len() < n {
                self.by_attempt.resize(n, 0);
            }
            self.by_attempt[n - 1] += 1;
        }
    }

    /// The client ledger refused to begin or end a request (a bug in the engine).
    #[cold]
    pub fn ledger_fault(&mut self) {
        self.ledger_faults += 1;
    }

    /// The tally: the clock stopped at `end` with `in_system` attempts at a server of
    /// `workers` workers and `unfinished` requests still in flight (counted on their own, so
    /// that conservation is observed, not computed); the time series is kept when
    /// `keep_series`; recovery from `trigger` is measured when there is one.
    pub fn finish(
        mut self,
        end: SimTime,
        in_system: u32,
        workers: usize,
        unfinished: u64,
        keep_series: bool,
        trigger: Option<((SimTime, SimTime), RecoveryConfig)>,
    ) -> RunResult {
        self.advance(end, in_system);
        let passage = self.watch.take().map(|mut w| {
            w.observe(end, in_system);
            w.finish(end, self.horizon)
        });
        let used = self.bucket + 1;
        self.series.truncate(used);
        let last = self.series.in_system.len() - 1;
        self.series.in_system[last] = in_system;
        let mut counts = self.counts;
        counts.unfinished = unfinished;
        let (server_busy_share, wasted_work_share) =
            work_shares(self.busy_ns, self.wasted_ns, end, workers);
        let recovery = trigger.and_then(|(span, config)| {
            let counts = recovery::Counts {
                successes: &self.series.successes,
                begun: &self.begun,
                served: &self.served,
            };
            recovery::measure(counts, self.series.bucket, self.horizon, span, config)
        });
        RunResult {
            counts,
            latency_mean_ms: if counts.succeeded == 0 {
                f64::NAN
            } else {
                self.latency_sum_ns as f64 / counts.succeeded as f64 / 1e6
            },
            latency_us: self.latency_us,
            peak_arrivals: self.series.arrivals.iter().copied().max().unwrap_or(0),
            peak_retries: self.series.retries.iter().copied().max().unwrap_or(0),
            makespan: self.makespan,
            server_busy_share,
            wasted_work_share,
            retry_after_share: ratio(self.hinted_answers, self.error_answers),
            events: self.events,
            ledger_faults: self.ledger_faults,
            by_attempt: self.by_attempt,
            recovery,
            passage,
            series: if keep_series {
                Some(self.series)
            } else {
                give_back_series(self.series);
                None
            },
            layers: Vec::new(),
            hedging: None,
            latency_samples: if self.latency_samples.len() <= LATENCY_SAMPLES {
                self.latency_samples
            } else {
                Vec::new()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    /// A run whose succeeded requests took `latencies_ns`.
    fn run_with(latencies_ns: &[u64]) -> RunResult {
        let mut recorder = Recorder::new(SimDuration::from_secs(1), SimDuration::from_secs(10));
        for &ns in latencies_ns {
            recorder.ending(Ending::Succeeded, SimTime(ns), SimTime::ZERO, 1);
        }
        recorder.finish(SimTime(0), 0, 1, 0, false, None)
    }

    fn walked(r: &RunResult) -> Vec<(u64, u64)> {
        r.latency_us
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    #[test]
    fn latency_buckets_from_samples_equal_the_histogram_walk() {
        let mut rng = crate::rng::from_seed(5);
        let top = (1u64 << 40) * 1_000; // the histogram's highest value, 2^40 us, in ns
        for (n, scale) in [(1, 1), (7, 1_000), (300, 1 << 30), (4096, top)] {
            // Latencies from 0 ns to the histogram's top, many repeated.
            let ns: Vec<u64> = (0..n)
                .map(|i| match i % 5 {
                    0 => 12_345_678,
                    1 => top,
                    _ => rng.random_range(0..scale),
                })
                .collect();
            let r = run_with(&ns);
            let fast = r
                .buckets_from_samples()
                .expect("samples stand for the histogram");
            assert_eq!(fast, walked(&r), "{n} latencies up to {scale} ns");
            assert_eq!(r.latency_buckets(), fast);
        }
        // A value past the top is clamped into the histogram: the walk answers.
        let r = run_with(&[5_000, top + 1_000_000_000]);
        assert_eq!(r.buckets_from_samples(), None);
        assert_eq!(r.latency_buckets(), walked(&r));
        // So it does past the samples kept, and without any success.
        let r = run_with(&vec![5_000; LATENCY_SAMPLES + 1]);
        assert!(r.latency_samples.is_empty());
        assert_eq!(r.latency_buckets(), [(5, LATENCY_SAMPLES as u64 + 1)]);
        assert_eq!(run_with(&[]).latency_buckets(), []);
    }
}
