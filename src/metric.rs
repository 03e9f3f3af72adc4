//! The summary metrics: what one run (point × strategy × replication) measured, as named
//! numbers.
//!
//! A [`Metric`] is the one definition of a metric: its `summary.csv` column name, a short name
//! for tables, a label for charts, its unit, which way is better, and how it aggregates the
//! run into one number ([`Aggregation`]). The CSV writer, the result reader, the charts, the
//! report, `recommend` and the table `run` prints all name metrics through it, so a typo is a
//! compile error; a name a user types (`recommend --objective`) or a file holds
//! (`aggregate.csv`) is parsed once, and an unknown one is an error that lists the known ones.
//!
//! Across replications every metric aggregates the same way: the mean and a 95 % Student-t
//! interval over the runs where it is defined ([`estimates`]); a latency is undefined in a run
//! where nothing succeeded, a ratio where its denominator is 0.

use std::fmt;
use std::ops::{Index, IndexMut};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::sim::Counts;
use crate::sim::passage::Censored;
use crate::sim::recovery::{Recovery, Verdict};
use crate::stats::{Estimate, estimate};
use crate::sweep::journal::{LayerRecord, UnitRecord};

/// A summary metric, in `summary.csv` column order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    /// `requests`: requests started.
    Requests,
    /// `attempts`: attempts sent.
    Attempts,
    /// `amplification`: attempts per request.
    Amplification,
    /// `succeeded`: requests that ended with a successful answer.
    Succeeded,
    /// `failed`: requests answered with a non-retryable error.
    Failed,
    /// `gave_up_attempts`: requests out of attempts.
    GaveUpAttempts,
    /// `gave_up_deadline`: requests whose overall deadline left no room to go on.
    GaveUpDeadline,
    /// `gave_up_budget`: requests the retry budget stopped.
    GaveUpBudget,
    /// `rejected_by_breaker`: requests the circuit breaker refused.
    RejectedByBreaker,
    /// `unfinished`: requests still going when the clock stopped.
    Unfinished,
    /// `success_rate`: succeeded / requests.
    SuccessRate,
    /// `latency_mean_ms`: mean latency of succeeded requests.
    LatencyMeanMs,
    /// `latency_p50_ms`: median latency of succeeded requests.
    LatencyP50Ms,
    /// `latency_p95_ms`.
    LatencyP95Ms,
    /// `latency_p99_ms`.
    LatencyP99Ms,
    /// `latency_p999_ms`: the p99.9 latency.
    LatencyP999Ms,
    /// `latency_max_ms`.
    LatencyMaxMs,
    /// `peak_arrivals`: the most attempts reaching the server in one output bucket.
    PeakArrivals,
    /// `peak_retries`: the most retries reaching the server in one output bucket.
    PeakRetries,
    /// `makespan_ms`: time of the last request's final outcome.
    MakespanMs,
    /// `server_busy_share`: worker time spent serving / (workers × simulated time).
    ServerBusyShare,
    /// `wasted_work_share`: share of service time spent on answers nobody waited for.
    WastedWorkShare,
    /// `retry_after_share`: share of error answers that carried a Retry-After hint.
    RetryAfterShare,
    /// `events`: simulation events processed.
    Events,
    /// `goodput_before`: successes per second in the window before the trigger.
    GoodputBefore,
    /// `goodput_after`: successes per second from the trigger's end to the horizon.
    GoodputAfter,
    /// `recovered`: 1 when the run serves its offered load again after the trigger, to the end.
    Recovered,
    /// `recovery_ms`: from the trigger's end until goodput was back (undefined when stuck).
    RecoveryMs,
    /// `throttled`: requests the client's adaptive throttle rejected locally.
    Throttled,
    /// `relapsed`: 1 when the run served its load again after the trigger, then collapsed
    /// again to the end.
    Relapsed,
    /// `oscillating`: 1 when the run swings between served and collapsed.
    Oscillating,
    /// `oscillation_period_ms`: the swing's period (undefined unless oscillating).
    OscillationPeriodMs,
    /// `degraded_before`: 1 when the run did not serve its offered load before the trigger.
    DegradedBefore,
    /// `in_system_mean`: time-average of the attempts at the server.
    InSystemMean,
    /// `full_share`: share of the run's time the server was full.
    FullShare,
    /// `time_to_collapse_ms`: from the start to the collapse level (undefined when not
    /// reached; `aggregate.csv` and `passage.csv` hold the Kaplan–Meier estimate with the
    /// censored runs).
    TimeToCollapseMs,
    /// `time_to_healthy_ms`: from the trigger's end to the healthy level (as above).
    TimeToHealthyMs,
    /// `chain_attempts`: attempts that reached a layer, summed over every layer of a chain
    /// (undefined without two layers or more).
    ChainAttempts,
    /// `chain_amplification`: `chain_attempts` per request, the load a request puts on the
    /// whole chain.
    ChainAmplification,
    /// `deepest_amplification`: attempts that reached a chain's last layer per request.
    DeepestAmplification,
}

/// How a metric's values are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A count, shown as is.
    Count,
    /// A multiple (attempts per request), shown with `×`.
    Times,
    /// Milliseconds, shown in ms or s by size.
    Millis,
    /// A share 0..1, shown as a percentage.
    Share,
}

impl Unit {
    /// `x` within the values a metric of this unit can take: none is negative, a share is at
    /// most 1 (a 95 % interval around a mean near a bound can reach past it). NaN stays NaN.
    pub fn clamp(self, x: f64) -> f64 {
        let high = if self == Unit::Share {
            1.0
        } else {
            f64::INFINITY
        };
        if x < 0.0 {
            0.0
        } else if x > high {
            high
        } else {
            x
        }
    }
}

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Less is better (load, latency, failures).
    Lower,
    /// More is better (successes).
    Higher,
    /// Neither: a description of the run (requests, events).
    Neither,
}

/// How a metric aggregates one run into one number.
#[derive(Debug, Clone, Copy)]
pub enum Aggregation {
    /// A count over the run's requests or attempts.
    Count(fn(&Counts) -> u64),
    /// One count of the run over another; undefined when the second is 0.
    Ratio(Metric, Metric),
    /// The exact mean latency of the succeeded requests, ms.
    LatencyMean,
    /// The latency at this quantile (0..=1) of the succeeded requests, nearest rank, ms.
    LatencyQuantile(f64),
    /// A number the simulator measured over the whole run (a peak, a time, a share).
    Measured(fn(&UnitRecord) -> f64),
}

/// Everything about one metric: one row of [`SPECS`].
struct Spec {
    /// The metric the row is about (the rows are checked to stand in [`Metric`] order).
    metric: Metric,
    name: &'static str,
    short: &'static str,
    label: &'static str,
    unit: Unit,
    better: Better,
    aggregation: Aggregation,
}

impl Spec {
    /// A count of the run's requests or attempts, named as its column.
    const fn count(
        metric: Metric,
        name: &'static str,
        label: &'static str,
        better: Better,
        count: fn(&Counts) -> u64,
    ) -> Spec {
        Spec {
            metric,
            name,
            short: name,
            label,
            unit: Unit::Count,
            better,
            aggregation: Aggregation::Count(count),
        }
    }

    /// A latency of the succeeded requests, in ms; `short` is its name without `latency_`.
    const fn latency(
        metric: Metric,
        name: &'static str,
        short: &'static str,
        label: &'static str,
        aggregation: Aggregation,
    ) -> Spec {
        Spec {
            metric,
            name,
            short,
            label,
            unit: Unit::Millis,
            better: Better::Lower,
            aggregation,
        }
    }

    /// A number the simulator measured over the run, named as its column.
    const fn measured(
        metric: Metric,
        name: &'static str,
        label: &'static str,
        unit: Unit,
        better: Better,
        measure: fn(&UnitRecord) -> f64,
    ) -> Spec {
        Spec {
            metric,
            name,
            short: name,
            label,
            unit,
            better,
            aggregation: Aggregation::Measured(measure),
        }
    }
}

/// `of` the run's recovery measurement; undefined (NaN) without one.
fn verdict(r: &UnitRecord, of: fn(&Recovery) -> f64) -> f64 {
    r.recovery.as_ref().map_or(f64::NAN, of)
}

/// `of` the layers of a chain's run; undefined (NaN) without two layers or more (a chain of
/// one layer is its server, and reads as one).
fn chain(r: &UnitRecord, of: fn(&[LayerRecord]) -> u64) -> f64 {
    match r.layers.len() {
        0 | 1 => f64::NAN,
        _ => of(&r.layers) as f64,
    }
}

/// A passage time in ms when the level was reached; undefined (NaN) when censored.
fn reached(passage: Option<Censored>) -> f64 {
    passage
        .filter(|p| p.reached)
        .map_or(f64::NAN, |p| p.time_ns as f64 / 1e6)
}

/// The table of metric definitions, one row a metric, in [`Metric`] (column) order.
#[rustfmt::skip] // One row a line reads as a table; rustfmt would give each argument a line.
const SPECS: [Spec; Metric::COUNT] = {
    use Aggregation::{LatencyMean, LatencyQuantile, Measured, Ratio};
    use Better::{Higher, Lower, Neither};
    use Metric as M;
    use Unit::{Count, Millis, Share, Times};
    let (count, latency, measured) = (Spec::count, Spec::latency, Spec::measured);
    [
        count(M::Requests, "requests", "requests", Neither, |c| c.requests),
        count(M::Attempts, "attempts", "total calls (attempts)", Lower, |c| c.attempts),
        Spec {
            metric: M::Amplification,
            name: "amplification",
            short: "amplification",
            label: "amplification (attempts per request)",
            unit: Times,
            better: Lower,
            aggregation: Ratio(M::Attempts, M::Requests),
        },
        count(M::Succeeded, "succeeded", "succeeded", Higher, |c| c.succeeded),
        count(M::Failed, "failed", "failed", Lower, |c| c.failed),
        count(M::GaveUpAttempts, "gave_up_attempts", "gave up attempts", Lower,
            |c| c.gave_up_attempts),
        count(M::GaveUpDeadline, "gave_up_deadline", "gave up deadline", Lower,
            |c| c.gave_up_deadline),
        count(M::GaveUpBudget, "gave_up_budget", "gave up budget", Lower, |c| c.gave_up_budget),
        count(M::RejectedByBreaker, "rejected_by_breaker", "rejected by breaker", Lower,
            |c| c.rejected_by_breaker),
        count(M::Unfinished, "unfinished", "unfinished", Lower, |c| c.unfinished),
        Spec {
            metric: M::SuccessRate,
            name: "success_rate",
            short: "success",
            label: "success rate",
            unit: Share,
            better: Higher,
            aggregation: Ratio(M::Succeeded, M::Requests),
        },
        latency(M::LatencyMeanMs, "latency_mean_ms", "mean_ms", "mean latency", LatencyMean),
        latency(M::LatencyP50Ms, "latency_p50_ms", "p50_ms", "p50 latency", LatencyQuantile(0.5)),
        latency(M::LatencyP95Ms, "latency_p95_ms", "p95_ms", "p95 latency", LatencyQuantile(0.95)),
        latency(M::LatencyP99Ms, "latency_p99_ms", "p99_ms", "p99 latency", LatencyQuantile(0.99)),
        latency(M::LatencyP999Ms, "latency_p999_ms", "p999_ms", "p99.9 latency",
            LatencyQuantile(0.999)),
        latency(M::LatencyMaxMs, "latency_max_ms", "max_ms", "max latency", LatencyQuantile(1.0)),
        measured(M::PeakArrivals, "peak_arrivals", "peak attempts per bucket", Count, Lower,
            |r| r.peak_arrivals as f64),
        measured(M::PeakRetries, "peak_retries", "peak retries per bucket", Count, Lower,
            |r| r.peak_retries as f64),
        measured(M::MakespanMs, "makespan_ms", "completion time (makespan)", Millis, Lower,
            |r| r.makespan_ns as f64 / 1e6),
        measured(M::ServerBusyShare, "server_busy_share", "server busy share", Share, Neither,
            |r| r.server_busy_share),
        measured(M::WastedWorkShare, "wasted_work_share", "wasted work share", Share, Lower,
            |r| r.wasted_work_share),
        measured(M::RetryAfterShare, "retry_after_share", "retry after share", Share, Neither,
            |r| r.retry_after_share),
        measured(M::Events, "events", "events", Count, Neither, |r| r.events as f64),
        // Undefined (empty) in runs without a trigger, see crate::sim::recovery.
        measured(M::GoodputBefore, "goodput_before", "goodput before the trigger (successes/s)",
            Count, Neither, |r| r.recovery.map_or(f64::NAN, |x| x.goodput_before)),
        measured(M::GoodputAfter, "goodput_after", "goodput after the trigger (successes/s)",
            Count, Higher, |r| r.recovery.map_or(f64::NAN, |x| x.goodput_after)),
        measured(M::Recovered, "recovered", "recovered share", Share, Higher,
            |r| r.recovery.map_or(f64::NAN, |x| x.recovered() as u8 as f64)),
        measured(M::RecoveryMs, "recovery_ms", "time to recover", Millis, Lower,
            |r| r.recovery.and_then(|x| x.recovery_ns).map_or(f64::NAN, |ns| ns as f64 / 1e6)),
        count(M::Throttled, "throttled", "throttled", Lower, |c| c.throttled),
        measured(M::Relapsed, "relapsed", "relapsed share", Share, Lower,
            |r| verdict(r, |x| (x.verdict == Verdict::Relapsed) as u8 as f64)),
        measured(M::Oscillating, "oscillating", "oscillating share", Share, Lower,
            |r| verdict(r, |x| (x.verdict == Verdict::Oscillating) as u8 as f64)),
        measured(M::OscillationPeriodMs, "oscillation_period_ms", "oscillation period", Millis,
            Neither, |r| r.recovery.and_then(|x| x.period_ns).map_or(f64::NAN, |ns| ns as f64 / 1e6)),
        measured(M::DegradedBefore, "degraded_before", "degraded before the trigger", Share,
            Lower, |r| verdict(r, |x| x.degraded_before as u8 as f64)),
        measured(M::InSystemMean, "in_system_mean", "mean attempts at the server", Count,
            Lower, |r| r.passage.map_or(f64::NAN, |p| p.in_system_mean)),
        measured(M::FullShare, "full_share", "server full share", Share, Lower,
            |r| r.passage.and_then(|p| p.full_share).unwrap_or(f64::NAN)),
        measured(M::TimeToCollapseMs, "time_to_collapse_ms", "time to collapse", Millis,
            Higher, |r| reached(r.passage.and_then(|p| p.to_collapse))),
        measured(M::TimeToHealthyMs, "time_to_healthy_ms", "time back to healthy", Millis,
            Lower, |r| reached(r.passage.and_then(|p| p.to_healthy))),
        measured(M::ChainAttempts, "chain_attempts", "total calls, every layer", Count, Lower,
            |r| chain(r, |l| l.iter().map(|l| l.arrivals).sum())),
        Spec {
            metric: M::ChainAmplification,
            name: "chain_amplification",
            short: "amplification_chain",
            label: "calls per request, every layer",
            unit: Times,
            better: Lower,
            aggregation: Ratio(M::ChainAttempts, M::Requests),
        },
        Spec {
            metric: M::DeepestAmplification,
            name: "deepest_amplification",
            short: "amplification_deepest",
            label: "calls per request at the deepest layer",
            unit: Times,
            better: Lower,
            aggregation: Measured(|r| match (&r.layers[..], r.counts.requests) {
                ([_, .., last], n) if n > 0 => last.arrivals as f64 / n as f64,
                _ => f64::NAN,
            }),
        },
    ]
};

// Row `i` of the table is about metric `i`: a row out of place is a compile error.
const _: () = {
    let mut i = 0;
    while i < Metric::COUNT {
        assert!(SPECS[i].metric as usize == i, "SPECS is in Metric order");
        i += 1;
    }
};

impl Metric {
    /// How many metrics there are.
    pub const COUNT: usize = 40;

    /// Every metric, in `summary.csv` column order.
    pub const ALL: [Metric; Metric::COUNT] = [
        Metric::Requests,
        Metric::Attempts,
        Metric::Amplification,
        Metric::Succeeded,
        Metric::Failed,
        Metric::GaveUpAttempts,
        Metric::GaveUpDeadline,
        Metric::GaveUpBudget,
        Metric::RejectedByBreaker,
        Metric::Unfinished,
        Metric::SuccessRate,
        Metric::LatencyMeanMs,
        Metric::LatencyP50Ms,
        Metric::LatencyP95Ms,
        Metric::LatencyP99Ms,
        Metric::LatencyP999Ms,
        Metric::LatencyMaxMs,
        Metric::PeakArrivals,
        Metric::PeakRetries,
        Metric::MakespanMs,
        Metric::ServerBusyShare,
        Metric::WastedWorkShare,
        Metric::RetryAfterShare,
        Metric::Events,
        Metric::GoodputBefore,
        Metric::GoodputAfter,
        Metric::Recovered,
        Metric::RecoveryMs,
        Metric::Throttled,
        Metric::Relapsed,
        Metric::Oscillating,
        Metric::OscillationPeriodMs,
        Metric::DegradedBefore,
        Metric::InSystemMean,
        Metric::FullShare,
        Metric::TimeToCollapseMs,
        Metric::TimeToHealthyMs,
        Metric::ChainAttempts,
        Metric::ChainAmplification,
        Metric::DeepestAmplification,
    ];

    /// Whether the metric was added after the first result folders were written (recovery
    /// and everything after it): a folder without its column still reads (it is undefined
    /// there). New metrics are appended, so these are the columns from `goodput_before` on.
    pub fn added_later(self) -> bool {
        self >= Metric::GoodputBefore
    }

    /// The attempts-per-request figure that a run's pages name as its load: the whole
    /// chain's where the run has layers (the edge's `amplification` counts only the clients'
    /// own attempts), else `amplification`.
    pub fn load(layered: bool) -> Metric {
        match layered {
            true => Metric::ChainAmplification,
            false => Metric::Amplification,
        }
    }

    /// The total calls that a run's pages name as its load, as [`Metric::load`].
    pub fn calls(layered: bool) -> Metric {
        match layered {
            true => Metric::ChainAttempts,
            false => Metric::Attempts,
        }
    }

    /// The metric's row of [`SPECS`]: everything about it in one place.
    fn spec(self) -> &'static Spec {
        &SPECS[self as usize]
    }

    /// The `summary.csv` column name (`latency_p99_ms`).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// A short name for table headers (`p99_ms`, `success`).
    pub fn short(self) -> &'static str {
        self.spec().short
    }

    /// A readable label for chart axes and titles (`p99 latency`).
    pub fn label(self) -> &'static str {
        self.spec().label
    }

    /// How its values are shown.
    pub fn unit(self) -> Unit {
        self.spec().unit
    }

    /// Which way is better.
    pub fn better(self) -> Better {
        self.spec().better
    }

    /// How it aggregates a run into one number.
    pub fn aggregation(self) -> Aggregation {
        self.spec().aggregation
    }

    /// Its value in one finished run; NaN where it is undefined (a latency when nothing
    /// succeeded, a ratio over zero).
    pub fn of(self, r: &UnitRecord) -> f64 {
        match self.aggregation() {
            Aggregation::Count(count) => count(&r.counts) as f64,
            Aggregation::Ratio(num, den) => {
                let den = den.of(r);
                if den == 0.0 {
                    f64::NAN
                } else {
                    num.of(r) / den
                }
            }
            Aggregation::LatencyMean => r.latency_mean_ms.unwrap_or(f64::NAN),
            Aggregation::LatencyQuantile(q) => r
                .latency_quantile_us(q)
                .map_or(f64::NAN, |us| us as f64 / 1000.0),
            Aggregation::Measured(measure) => measure(r),
        }
    }

    /// Parses a metric name given for `key` (a flag, a column); an unknown name is an
    /// [`Error::InvalidValue`] that lists the known ones.
    pub fn parse(key: &str, text: &str) -> Result<Metric> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == text)
            .ok_or_else(|| {
                Error::invalid(
                    key,
                    format!("{text:?}"),
                    format!("a metric: {}", names(Metric::ALL)),
                )
            })
    }
}

/// Metric names joined by `, `, for messages.
pub fn names(metrics: impl IntoIterator<Item = Metric>) -> String {
    metrics
        .into_iter()
        .map(Metric::name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Metric {
    type Err = Error;

    fn from_str(text: &str) -> Result<Metric> {
        Metric::parse("metric", text)
    }
}

impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Metric, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One value per metric, indexed by [`Metric`]; serialized as the sequence of values in
/// column order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerMetric<T>([T; Metric::COUNT]);

// By hand: serde derives arrays of at most 32.
impl<T: Serialize> Serialize for PerMetric<T> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(&self.0)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for PerMetric<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let values = Vec::<T>::deserialize(d)?;
        let got = values.len();
        values.try_into().map(PerMetric).map_err(|_| {
            serde::de::Error::custom(format!(
                "{got} metric values where there are {}",
                Metric::COUNT
            ))
        })
    }
}

impl<T> PerMetric<T> {
    /// The value of `f` for every metric.
    pub fn from_fn(mut f: impl FnMut(Metric) -> T) -> PerMetric<T> {
        PerMetric(Metric::ALL.map(&mut f))
    }

    /// `(metric, value)` in column order.
    pub fn iter(&self) -> impl Iterator<Item = (Metric, &T)> {
        Metric::ALL.into_iter().zip(&self.0)
    }
}

impl<T: Default> Default for PerMetric<T> {
    fn default() -> Self {
        PerMetric::from_fn(|_| T::default())
    }
}

impl<T> Index<Metric> for PerMetric<T> {
    type Output = T;
    fn index(&self, m: Metric) -> &T {
        &self.0[m as usize]
    }
}

impl<T> IndexMut<Metric> for PerMetric<T> {
    fn index_mut(&mut self, m: Metric) -> &mut T {
        &mut self.0[m as usize]
    }
}

impl PerMetric<f64> {
    /// Every metric of one finished run (NaN where undefined).
    pub fn measure(r: &UnitRecord) -> PerMetric<f64> {
        PerMetric::from_fn(|m| m.of(r))
    }
}

/// Mean and 95 % interval of every metric over the runs given (the replications of one point
/// and strategy), each over the runs where it is defined.
pub fn estimates(runs: &[PerMetric<f64>]) -> PerMetric<Estimate> {
    PerMetric::from_fn(|m| {
        let sample: Vec<f64> = runs
            .iter()
            .map(|v| v[m])
            .filter(|x| x.is_finite())
            .collect();
        estimate(&sample)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_parses_from_its_name_in_column_order() {
        for (i, m) in Metric::ALL.into_iter().enumerate() {
            assert_eq!(m as usize, i, "{m}: ALL is in declaration order");
            assert_eq!(m.name().parse::<Metric>().unwrap(), m);
            assert_eq!(m.to_string(), m.name());
        }
        let mut names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Metric::COUNT, "names are unique");
    }

    #[test]
    fn a_latency_is_short_named_without_its_latency_prefix() {
        for m in Metric::ALL {
            if let Some(rest) = m.name().strip_prefix("latency_") {
                assert_eq!(m.short(), rest, "{m}");
            }
        }
    }

    #[test]
    fn an_unknown_name_is_an_error_listing_the_known_ones() {
        let err = Metric::parse("--objective", "latency_p98_ms").unwrap_err();
        assert!(err.is_user_error());
        let text = err.to_string();
        assert!(
            text.contains("--objective") && text.contains("\"latency_p98_ms\""),
            "{text}"
        );
        for m in Metric::ALL {
            assert!(text.contains(m.name()), "{text} lists {m}");
        }
        assert!(
            "Amplification".parse::<Metric>().is_err(),
            "names are exact"
        );
    }

    #[test]
    fn values_of_a_run_follow_their_aggregation() {
        let mut r = UnitRecord {
            unit: 0,
            point: 0,
            strategy: 0,
            replication: 0,
            seed: 1,
            counts: Counts {
                requests: 4,
                attempts: 10,
                succeeded: 3,
                unfinished: 1,
                ..Counts::default()
            },
            peak_arrivals: 7,
            peak_retries: 5,
            makespan_ns: 2_500_000,
            server_busy_share: 0.5,
            wasted_work_share: 0.25,
            retry_after_share: 0.0,
            events: 99,
            by_attempt: vec![1, 2],
            latency_mean_ms: Some(2.0),
            latency_us: vec![(1000, 1), (2000, 1), (3000, 1)],
            recovery: None,
            passage: None,
            series: None,
            layers: Vec::new(),
            hedging: None,
        };
        let v = PerMetric::measure(&r);
        assert_eq!(v[Metric::Amplification], 2.5);
        assert_eq!(v[Metric::SuccessRate], 0.75);
        assert_eq!(v[Metric::Unfinished], 1.0);
        assert_eq!(v[Metric::LatencyP50Ms], 2.0);
        assert_eq!(v[Metric::LatencyMaxMs], 3.0);
        assert_eq!(v[Metric::MakespanMs], 2.5);
        assert_eq!(v[Metric::Events], 99.0);
        // Nothing requested, nothing succeeded: ratios and latencies are undefined.
        r.counts = Counts::default();
        r.latency_mean_ms = None;
        r.latency_us.clear();
        let v = PerMetric::measure(&r);
        for m in [
            Metric::Amplification,
            Metric::SuccessRate,
            Metric::LatencyP99Ms,
        ] {
            assert!(v[m].is_nan(), "{m}");
        }
        assert_eq!(v[Metric::Requests], 0.0);
    }

    #[test]
    fn metrics_read_from_a_column_by_serde() {
        let m: Metric = serde_json::from_str("\"latency_p999_ms\"").unwrap();
        assert_eq!(m, Metric::LatencyP999Ms);
        assert_eq!(serde_json::to_string(&m).unwrap(), "\"latency_p999_ms\"");
        let err = serde_json::from_str::<Metric>("\"p99\"").unwrap_err();
        assert!(err.to_string().contains("success_rate"), "{err}");
    }
}
