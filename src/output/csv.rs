//! The CSV files of a result folder (DESIGN §6), built from the finished units.
//!
//! Tidy: one observation per row, snake_case headers, times in milliseconds with an `_ms`
//! suffix, one column per sweep key named by its dotted key. Numbers are written in Rust's
//! shortest round-trip form, so the same results give the same bytes; a value that does not
//! exist (the latency of a run where nothing succeeded, the sd of one replication) is empty.

use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use crate::atomic::write_atomic;
use crate::error::{Error, Result};
use crate::scenario::format_value;
use crate::sim::TimeSeries;
use crate::sim::metrics::new_latency_histogram;
use crate::stats::{estimate, paired_difference};
use crate::sweep::Plan;
use crate::sweep::journal::UnitRecord;
use crate::time::millis_string;

/// The metric columns of `summary.csv`, in order (after the sweep keys).
pub const METRICS: [&str; 24] = [
    "requests",
    "attempts",
    "amplification",
    "succeeded",
    "failed",
    "gave_up_attempts",
    "gave_up_deadline",
    "gave_up_budget",
    "rejected_by_breaker",
    "unfinished",
    "success_rate",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "latency_max_ms",
    "peak_arrivals",
    "peak_retries",
    "makespan_ms",
    "server_busy_share",
    "wasted_work_share",
    "retry_after_share",
    "events",
];

/// Index of a metric in [`METRICS`].
pub fn metric_index(name: &str) -> Option<usize> {
    METRICS.iter().position(|m| *m == name)
}

/// The metric values of one unit, in [`METRICS`] order (NaN where undefined).
pub fn metric_values(r: &UnitRecord) -> [f64; 24] {
    let c = r.counts();
    let ratio = |a: u64, b: u64| {
        if b == 0 {
            f64::NAN
        } else {
            a as f64 / b as f64
        }
    };
    let q = |q: f64| {
        r.latency_quantile_us(q)
            .map_or(f64::NAN, |us| us as f64 / 1000.0)
    };
    let mean = r.latency_mean_ms.unwrap_or(f64::NAN);
    [
        c.requests as f64,
        c.attempts as f64,
        ratio(c.attempts, c.requests),
        c.succeeded as f64,
        c.failed as f64,
        c.gave_up_attempts as f64,
        c.gave_up_deadline as f64,
        c.gave_up_budget as f64,
        c.rejected_by_breaker as f64,
        c.unfinished as f64,
        ratio(c.succeeded, c.requests),
        mean,
        q(0.5),
        q(0.95),
        q(0.99),
        q(0.999),
        q(1.0),
        r.peak_arrivals as f64,
        r.peak_retries as f64,
        r.makespan_ns as f64 / 1e6,
        r.server_busy_share,
        r.wasted_work_share,
        r.retry_after_share,
        r.events as f64,
    ]
}

/// A number as written in the CSVs: shortest round-trip form, empty when undefined.
pub fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

fn opt(x: Option<f64>) -> String {
    x.map_or_else(String::new, number)
}

struct Table {
    name: &'static str,
    out: csv::Writer<Vec<u8>>,
}

impl Table {
    fn new(name: &'static str, header: &[String]) -> Result<Table> {
        let mut t = Table {
            name,
            out: csv::Writer::from_writer(Vec::with_capacity(1 << 16)),
        };
        t.row(header)?;
        Ok(t)
    }

    fn row<S: AsRef<[u8]>>(&mut self, fields: &[S]) -> Result<()> {
        self.out.write_record(fields).map_err(|source| Error::Csv {
            path: self.name.into(),
            source,
        })
    }

    fn finish(self, dir: &Path) -> Result<PathBuf> {
        let path = dir.join(self.name);
        let bytes = self
            .out
            .into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?;
        write_atomic(&path, &bytes)?;
        Ok(path)
    }
}

fn header(lead: &[&str], keys: &[String], tail: &[&str]) -> Vec<String> {
    lead.iter()
        .map(|s| s.to_string())
        .chain(keys.iter().cloned())
        .chain(tail.iter().map(|s| s.to_string()))
        .collect()
}

/// Writes summary, aggregate, compare, timeseries, attempts and latency CSVs into `dir`.
/// `records` must hold every unit of `plan`, in unit order.
pub fn write_all(dir: &Path, plan: &Plan, records: &[UnitRecord]) -> Result<Vec<PathBuf>> {
    let values: Vec<[f64; 24]> = records.iter().map(metric_values).collect();
    write_all_with(dir, plan, records, &values)
}

/// [`write_all`] with the metric values of every record already computed (in record order).
pub fn write_all_with(
    dir: &Path,
    plan: &Plan,
    records: &[UnitRecord],
    values: &[[f64; 24]],
) -> Result<Vec<PathBuf>> {
    let keys = plan.sweep.keys();
    let point_values: Vec<Vec<String>> = plan
        .points
        .iter()
        .map(|p| p.values.iter().map(|(_, v)| format_value(v)).collect())
        .collect();
    let strategy_name = |p: usize, s: usize| plan.points[p].scenario.strategies[s].name.clone();
    let reps = plan.replications as usize;

    let mut summary = Table::new(
        "summary.csv",
        &header(
            &["point", "strategy", "replication", "seed"],
            &keys,
            &METRICS,
        ),
    )?;
    for (r, v) in records.iter().zip(values) {
        let mut row = vec![
            r.point.to_string(),
            strategy_name(r.point, r.strategy),
            r.replication.to_string(),
            r.seed.to_string(),
        ];
        row.extend(point_values[r.point].iter().cloned());
        row.extend(v.iter().map(|x| number(*x)));
        summary.row(&row)?;
    }

    let mut aggregate = Table::new(
        "aggregate.csv",
        &header(
            &["point", "strategy"],
            &keys,
            &["metric", "mean", "sd", "ci95_low", "ci95_high", "n"],
        ),
    )?;
    let mut compare = Table::new(
        "compare.csv",
        &header(
            &["point"],
            &keys,
            &[
                "metric",
                "strategy_a",
                "strategy_b",
                "mean_diff",
                "ci95_low",
                "ci95_high",
                "n",
            ],
        ),
    )?;
    let mut timeseries = Table::new(
        "timeseries.csv",
        &header(
            &["point", "strategy"],
            &keys,
            &std::iter::once("t_ms")
                .chain(TimeSeries::COLUMNS)
                .collect::<Vec<_>>(),
        ),
    )?;
    let mut attempts = Table::new(
        "attempts.csv",
        &header(
            &["point", "strategy"],
            &keys,
            &["attempt", "succeeded", "share"],
        ),
    )?;
    let mut latency = Table::new(
        "latency.csv",
        &header(&["point", "strategy"], &keys, &["latency_ms", "cdf"]),
    )?;

    // Records are in unit order: point-major, strategy, replication.
    let mut offset = 0;
    for (p, point) in plan.points.iter().enumerate() {
        let strategies = point.scenario.strategies.len();
        let block = &records[offset..offset + strategies * reps];
        let block_values = &values[offset..offset + strategies * reps];
        offset += strategies * reps;
        if block.iter().enumerate().any(|(i, r)| {
            r.point != p || r.strategy != i / reps || r.replication as usize != i % reps
        }) {
            return Err(Error::ResultFolder {
                path: dir.into(),
                message: "the finished units do not match the scenario".into(),
            });
        }
        let lead = |s: usize| {
            let mut row = vec![p.to_string(), strategy_name(p, s)];
            row.extend(point_values[p].iter().cloned());
            row
        };
        for s in 0..strategies {
            let runs = &block[s * reps..(s + 1) * reps];
            let vals = &block_values[s * reps..(s + 1) * reps];
            for (m, metric) in METRICS.iter().enumerate() {
                let sample: Vec<f64> = vals
                    .iter()
                    .map(|v| v[m])
                    .filter(|x| x.is_finite())
                    .collect();
                let e = estimate(&sample);
                let mut row = lead(s);
                row.extend([
                    metric.to_string(),
                    number(e.mean),
                    opt(e.sd),
                    opt(e.ci95_low),
                    opt(e.ci95_high),
                    e.n.to_string(),
                ]);
                aggregate.row(&row)?;
            }
            if let Some(series) = runs[0].series.as_ref() {
                for i in 0..series.arrivals.len() {
                    let mut row = lead(s);
                    row.push(millis_string(i as u64 * series.bucket.as_nanos()));
                    row.extend(series.columns().map(|col| col[i].to_string()));
                    timeseries.row(&row)?;
                }
            }
            let requests: u64 = runs.iter().map(|r| r.counts[0]).sum();
            let longest = runs.iter().map(|r| r.by_attempt.len()).max().unwrap_or(0);
            for a in 0..longest {
                let n: u64 = runs
                    .iter()
                    .map(|r| r.by_attempt.get(a).copied().unwrap_or(0))
                    .sum();
                let mut row = lead(s);
                row.extend([
                    (a + 1).to_string(),
                    n.to_string(),
                    number(if requests == 0 {
                        f64::NAN
                    } else {
                        n as f64 / requests as f64
                    }),
                ]);
                attempts.row(&row)?;
            }
            let mut merged: Histogram<u64> = new_latency_histogram();
            for r in runs {
                for &(value, count) in &r.latency_us {
                    merged.saturating_record_n(value, count);
                }
            }
            // The CDF at HDR's percentile ticks (10 per halving of the distance to 100 %):
            // fine in the tail where the charts look, a few hundred rows per strategy however
            // many requests there were. Each row is (value, share of requests at or below it).
            let mut last_value = None;
            for v in merged.iter_quantiles(10) {
                let value = v.value_iterated_to();
                if last_value == Some(value) {
                    continue;
                }
                last_value = Some(value);
                let mut row = lead(s);
                row.extend([millis_string(value * 1000), number(v.quantile())]);
                latency.row(&row)?;
            }
        }
        for (m, metric) in METRICS.iter().enumerate() {
            for a in 0..strategies {
                for b in a + 1..strategies {
                    let (xa, xb): (Vec<f64>, Vec<f64>) = (0..reps)
                        .map(|r| (block_values[a * reps + r][m], block_values[b * reps + r][m]))
                        .filter(|(x, y)| x.is_finite() && y.is_finite())
                        .unzip();
                    let e = paired_difference(&xa, &xb);
                    let mut row = vec![p.to_string()];
                    row.extend(point_values[p].iter().cloned());
                    row.extend([
                        metric.to_string(),
                        strategy_name(p, a),
                        strategy_name(p, b),
                        number(e.mean),
                        opt(e.ci95_low),
                        opt(e.ci95_high),
                        e.n.to_string(),
                    ]);
                    compare.row(&row)?;
                }
            }
        }
    }
    if offset != records.len() {
        return Err(Error::ResultFolder {
            path: dir.into(),
            message: "more finished units than the scenario has".into(),
        });
    }
    let mut written = Vec::new();
    for t in [summary, aggregate, compare, timeseries, attempts, latency] {
        written.push(t.finish(dir)?);
    }
    Ok(written)
}
