//! The CSV files of a result folder (docs/results.md), one row type each: the one definition of
//! every file's columns, written by [`super::csv`] and read by [`super::results`].
//!
//! A row type's fields are its columns, in order, named as in the file. Two fields stand for
//! columns named by the data: [`SWEEP`] for one column per sweep key (named by the dotted key,
//! holding the point's values as written) and, in `summary.csv`, [`METRICS`] for one column
//! per [`Metric`]. Numbers are written in Rust's shortest round-trip form, so the same results
//! give the same bytes, and a value that does not exist (the latency of a run where nothing
//! succeeded, the sd of one replication) is an empty cell.

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::folder::names;
use crate::metric::{Metric, PerMetric};
use crate::sim::MAX_LAYERS;

/// The field that stands for the sweep-key columns.
pub const SWEEP: &str = "sweep";
/// The field of [`SummaryRow`] that stands for the metric columns.
pub const METRICS: &str = "metrics";

/// A row of one of the result folder's CSV files.
pub trait Row: Serialize + DeserializeOwned {
    /// The file's name in a result folder.
    const FILE: &'static str;
    /// Columns added after files of this kind were first written: a file without them still
    /// reads (their fields take their serde default).
    const ADDED_LATER: &'static [&'static str] = &[];
    /// The row's [`SWEEP`] field, which no column fills by name.
    fn sweep_mut(&mut self) -> &mut Vec<String>;
}

/// The row type's fields in declaration order: its columns, with [`SWEEP`] and [`METRICS`]
/// standing for theirs. Read from the field list serde derives for the type.
pub fn fields<R: Row>() -> &'static [&'static str] {
    /// A deserializer that only takes note of the fields a struct asks for.
    struct FieldNames<'a>(&'a mut &'static [&'static str]);

    impl<'de> Deserializer<'de> for FieldNames<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("a row is a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("only the field names were asked for"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    let mut names: &'static [&'static str] = &[];
    // The error is the point: deserialization stops once the names are known.
    let _ = R::deserialize(FieldNames(&mut names));
    names
}

/// The header of a file of rows `R` for a run whose sweep keys are `keys`.
pub fn header<R: Row>(keys: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for &field in fields::<R>() {
        match field {
            SWEEP => out.extend(keys.iter().cloned()),
            METRICS => out.extend(Metric::ALL.iter().map(|m| m.name().to_string())),
            name => out.push(name.to_string()),
        }
    }
    out
}

/// A row of `summary.csv`: one run (point, strategy, replication).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// Replication index.
    pub replication: u32,
    /// The run's seed.
    pub seed: u64,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// Every metric of the run (NaN where undefined), one column per metric.
    #[serde(default, serialize_with = "numbers")]
    pub metrics: PerMetric<f64>,
}

impl Row for SummaryRow {
    const FILE: &'static str = names::SUMMARY;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `aggregate.csv`: one metric of one (point, strategy) across replications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregateRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// The metric.
    pub metric: Metric,
    /// Mean across replications (`None` when no replication defines it).
    #[serde(with = "optional")]
    pub mean: Option<f64>,
    /// Standard deviation (`None` below two replications).
    #[serde(with = "optional")]
    pub sd: Option<f64>,
    /// Lower end of the 95 % confidence interval.
    #[serde(with = "optional")]
    pub ci95_low: Option<f64>,
    /// Upper end of the 95 % confidence interval.
    #[serde(with = "optional")]
    pub ci95_high: Option<f64>,
    /// Replications that define the metric.
    pub n: u32,
}

impl Row for AggregateRow {
    const FILE: &'static str = names::AGGREGATE;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `compare.csv`: paired differences of one metric between two strategies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    /// Sweep point index.
    pub point: u32,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// The compared metric.
    pub metric: Metric,
    /// First strategy.
    pub strategy_a: String,
    /// Second strategy.
    pub strategy_b: String,
    /// Mean of (a - b) over paired replications.
    #[serde(with = "optional")]
    pub mean_diff: Option<f64>,
    /// Lower end of its 95 % confidence interval.
    #[serde(with = "optional")]
    pub ci95_low: Option<f64>,
    /// Upper end of its 95 % confidence interval.
    #[serde(with = "optional")]
    pub ci95_high: Option<f64>,
    /// Replications where both strategies define the metric.
    pub n: u32,
}

impl Row for CompareRow {
    const FILE: &'static str = names::COMPARE;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `live_vs_sim.csv` (a `jitterlab live` folder): one metric of one strategy as
/// measured live and as simulated for the same unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveVsSimRow {
    /// The metric.
    pub metric: Metric,
    /// Strategy name.
    pub strategy: String,
    /// Sweep values (a live folder has no sweep: no columns).
    #[serde(default)]
    pub sweep: Vec<String>,
    /// Measured by the live run (`None` where undefined).
    #[serde(with = "optional")]
    pub live: Option<f64>,
    /// Predicted by the simulator.
    #[serde(with = "optional")]
    pub simulated: Option<f64>,
    /// `(live - simulated) / |simulated|`; 0 when both are 0, `None` when simulated is 0
    /// alone or either is undefined.
    #[serde(with = "optional")]
    pub relative_difference: Option<f64>,
}

impl LiveVsSimRow {
    /// The metrics a reader of a live run looks at first (tables, the `live_vs_sim` chart).
    pub const KEY_METRICS: [Metric; 7] = [
        Metric::Amplification,
        Metric::SuccessRate,
        Metric::MakespanMs,
        Metric::PeakRetries,
        Metric::PeakArrivals,
        Metric::LatencyP50Ms,
        Metric::LatencyP99Ms,
    ];
}

impl Row for LiveVsSimRow {
    const FILE: &'static str = names::LIVE_VS_SIM;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `timeseries.csv`: one output bucket of replication 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeseriesRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// Start of the bucket, ms.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub t_ms: f64,
    /// Attempts reaching the server in the bucket.
    pub arrivals: u32,
    /// First attempts among them.
    pub first_attempts: u32,
    /// Retries among them.
    pub retries: u32,
    /// Attempts answered with success.
    pub successes: u32,
    /// Attempts rejected (overload, errors).
    pub rejections: u32,
    /// Attempts that timed out.
    pub timeouts: u32,
    /// Attempts at the server at the end of the bucket.
    pub in_system: u32,
    /// Index of dispersion of retries over the trailing second (re-synchronisation; empty
    /// when no retry is in the window). See [`crate::sim::resync`].
    #[serde(default, with = "optional")]
    pub retry_dispersion: Option<f64>,
}

impl Row for TimeseriesRow {
    const FILE: &'static str = names::TIMESERIES;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `attempts.csv`: the requests that succeeded on one attempt number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptsRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// Attempt number (1 = first attempt).
    pub attempt: u32,
    /// Requests that succeeded on this attempt, all replications.
    pub succeeded: u64,
    /// Their share of all requests (0..1).
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub share: f64,
}

impl Row for AttemptsRow {
    const FILE: &'static str = names::ATTEMPTS;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `layers.csv` (a chain of services only): one layer of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayersRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// Replication.
    pub replication: u32,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// The layer's number in call order (1 = the one the clients call).
    #[serde(deserialize_with = "layer_number")]
    pub layer: u32,
    /// Its name (`layers[i].name`).
    pub name: String,
    /// Requests into the layer: the clients' (layer 1), or the outbound requests of the
    /// layer above.
    pub requests: u64,
    /// Attempts sent to it.
    pub attempts: u64,
    /// Attempts that reached it (attempts lost on the way or still travelling excluded).
    pub arrivals: u64,
    /// `arrivals` per request of the clients: the load the layer sees per original request.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub amplification: f64,
    /// Requests into the layer that succeeded.
    pub succeeded: u64,
    /// `succeeded / requests`.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub success_rate: f64,
    /// Mean time from a request's start at this layer to its success, ms (empty when none
    /// succeeded).
    #[serde(with = "optional")]
    pub latency_mean_ms: Option<f64>,
    /// Worker time (own service and, for a calling layer, the time held waiting for the layer
    /// below) over workers × simulated time.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub busy_share: f64,
    /// Share of that worker time spent on attempts whose caller no longer waited.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub wasted_work_share: f64,
    /// Requests into the layer still in flight at the horizon.
    pub unfinished: u64,
}

impl Row for LayersRow {
    const FILE: &'static str = names::LAYERS;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `hedging.csv` (hedged runs only): what one run's hedged requests cost and won.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HedgingRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// Replication.
    pub replication: u32,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// Copies sent after the first, per request.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub hedges_per_request: f64,
    /// Share of requests whose winning copy was a hedge (not the first copy).
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub won_by_hedge_share: f64,
    /// Copies the server served to the end whose answer nobody read, per request.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub unread_served_per_request: f64,
    /// Share of the server's service time spent on attempts nobody awaited any more (as
    /// `summary.csv`'s `wasted_work_share`).
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub wasted_work_share: f64,
}

impl Row for HedgingRow {
    const FILE: &'static str = names::HEDGING;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `passage.csv` (scenarios with `[passage]`): the Kaplan–Meier estimate of one
/// first passage over a strategy's replications at a point, the runs that never reached the
/// level counted as censored at the horizon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassageRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// `to_collapse` (from the start) or `to_healthy` (from the trigger's end).
    pub passage: String,
    /// The level: attempts at the server.
    pub level: u32,
    /// Replications.
    pub runs: u32,
    /// Replications that reached the level.
    pub reached: u32,
    /// Median passage time (empty when half the runs or more never got there).
    #[serde(with = "optional")]
    pub median_ms: Option<f64>,
    /// Mean passage time restricted to `observed_ms`.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub restricted_mean_ms: f64,
    /// Lower end of its 95 % interval.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub ci95_low: f64,
    /// Upper end of its 95 % interval.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub ci95_high: f64,
    /// The time observed: from the passage's origin to the horizon.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub observed_ms: f64,
}

impl Row for PassageRow {
    const FILE: &'static str = names::PASSAGE;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `layer_timeseries.csv` (a chain of services only): attempts reaching one layer in
/// one time bucket, replication 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerTimeseriesRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// The layer's number in call order (1 = the one the clients call).
    #[serde(deserialize_with = "layer_number")]
    pub layer: u32,
    /// Its name.
    pub name: String,
    /// Bucket start, ms.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub t_ms: f64,
    /// Attempts reaching the layer in the bucket.
    pub arrivals: u32,
    /// Of those, first attempts of their request into the layer.
    pub first_attempts: u32,
    /// Of those, retries.
    pub retries: u32,
}

impl Row for LayerTimeseriesRow {
    const FILE: &'static str = names::LAYER_TIMESERIES;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `latency.csv`: one step of the latency distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// Latency, ms.
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub latency_ms: f64,
    /// Share of succeeded requests with a latency at most `latency_ms` (0..1).
    #[serde(serialize_with = "number", deserialize_with = "finite")]
    pub cdf: f64,
}

impl Row for LatencyRow {
    const FILE: &'static str = names::LATENCY;
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// A row of `pareto.csv` (written by `jitterlab recommend`): one (point, strategy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParetoRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// The point's sweep values, one column per key.
    #[serde(default)]
    pub sweep: Vec<String>,
    /// Mean amplification.
    #[serde(with = "optional")]
    pub amplification: Option<f64>,
    /// Mean p99 latency, ms (`None` where nothing succeeded).
    #[serde(with = "optional")]
    pub latency_p99_ms: Option<f64>,
    /// On the Pareto front of load (amplification; in a chain the chain's) and p99 of the
    /// eligible pairs at its world point.
    pub on_front: bool,
    /// The recommended choice at its world point.
    pub recommended: bool,
    /// Mean success rate (a column added later: empty in older files).
    #[serde(default, with = "optional")]
    pub success_rate: Option<f64>,
    /// Meets every constraint of the `recommend` that wrote the file, its success floor
    /// included (`None`: a file written before the column existed).
    #[serde(default)]
    pub eligible: Option<bool>,
    /// Mean chain amplification ([`Metric::ChainAmplification`]): in a chain, the load the
    /// front and the ranking weigh; empty without layers (and in older files).
    #[serde(default, with = "optional")]
    pub chain_amplification: Option<f64>,
}

impl Row for ParetoRow {
    const FILE: &'static str = names::PARETO;
    const ADDED_LATER: &'static [&'static str] =
        &["success_rate", "eligible", "chain_amplification"];
    fn sweep_mut(&mut self) -> &mut Vec<String> {
        &mut self.sweep
    }
}

/// `Some(x)` for a finite `x`, `None` for a value that does not exist.
pub fn defined(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// A number as written in the CSVs: shortest round-trip form, empty when not finite.
pub fn number_text(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

fn number<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&number_text(*x))
}

fn numbers<S: Serializer>(values: &PerMetric<f64>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(values.iter().map(|(_, x)| number_text(*x)))
}

/// Why a number read back is refused: the writer writes only finite numbers (an undefined
/// value is an empty cell), so NaN or an infinity is not jitterlab's.
const NOT_FINITE: &str =
    "not a finite number (jitterlab writes an undefined value as an empty cell, never NaN or inf)";

/// A layer's number read back: from 1 to [`MAX_LAYERS`], or refused.
fn layer_number<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if (1..=MAX_LAYERS as u32).contains(&n) {
        Ok(n)
    } else {
        Err(de::Error::custom(format!(
            "{n}: not a layer number (from 1 to {MAX_LAYERS})"
        )))
    }
}

/// A number read back: finite, or refused.
fn finite<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let x = f64::deserialize(d)?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(de::Error::custom(NOT_FINITE))
    }
}

/// A number that may not exist, read back: an empty cell, or a finite number.
fn optional_finite<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Option::<f64>::deserialize(d)? {
        Some(x) if !x.is_finite() => Err(de::Error::custom(NOT_FINITE)),
        other => Ok(other),
    }
}

/// A number that may not exist: an empty cell.
mod optional {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        super::number(&x.unwrap_or(f64::NAN), s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        super::optional_finite(d)
    }
}

/// One metric cell of `summary.csv`, read back.
struct MetricCell(Option<f64>);

impl<'de> Deserialize<'de> for MetricCell {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MetricCell, D::Error> {
        optional_finite(d).map(MetricCell)
    }
}

/// The metric columns of a `summary.csv` row, read by name (other columns are skipped).
pub(crate) struct MetricColumns(pub PerMetric<Option<f64>>);

impl<'de> Deserialize<'de> for MetricColumns {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MetricColumns, D::Error> {
        struct Columns;

        impl<'de> Visitor<'de> for Columns {
            type Value = MetricColumns;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a row with one column per metric")
            }

            fn visit_map<A: de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<MetricColumns, A::Error> {
                let mut values = PerMetric::default();
                while let Some(column) = map.next_key::<String>()? {
                    match Metric::ALL.into_iter().find(|m| m.name() == column) {
                        Some(m) => values[m] = map.next_value::<MetricCell>()?.0,
                        None => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(MetricColumns(values))
            }
        }

        d.deserialize_map(Columns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_come_from_the_row_types() {
        let keys = ["backoff.base".to_string(), "backoff.cap".to_string()];
        assert_eq!(
            header::<AggregateRow>(&keys).join(","),
            "point,strategy,backoff.base,backoff.cap,metric,mean,sd,ci95_low,ci95_high,n"
        );
        assert_eq!(
            header::<CompareRow>(&[]).join(","),
            "point,metric,strategy_a,strategy_b,mean_diff,ci95_low,ci95_high,n"
        );
        let summary = header::<SummaryRow>(&keys);
        assert_eq!(
            summary[..6].join(","),
            "point,strategy,replication,seed,backoff.base,backoff.cap"
        );
        assert_eq!(summary[6], "requests");
        assert_eq!(summary[5 + 24], "events");
        assert_eq!(
            summary[6 + 24..].join(","),
            "goodput_before,goodput_after,recovered,recovery_ms,throttled,relapsed,oscillating,\
             oscillation_period_ms,degraded_before,in_system_mean,full_share,time_to_collapse_ms,\
             time_to_healthy_ms,chain_attempts,chain_amplification,deepest_amplification"
        );
        assert_eq!(summary.len(), 6 + Metric::COUNT);
    }

    #[test]
    fn timeseries_columns_are_the_series_counters() {
        let header = header::<TimeseriesRow>(&[]);
        assert_eq!(header[..3], ["point", "strategy", "t_ms"]);
        assert_eq!(header[3..10], crate::sim::TimeSeries::COLUMNS);
        assert_eq!(header[10..], ["retry_dispersion"]);
    }

    #[test]
    fn numbers_are_shortest_and_undefined_is_empty() {
        assert_eq!(number_text(1.0), "1");
        assert_eq!(number_text(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(number_text(f64::NAN), "");
        assert_eq!(number_text(f64::INFINITY), "");
    }
}
