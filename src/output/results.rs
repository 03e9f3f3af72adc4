//! Reads a result folder (DESIGN §6) into typed rows.
//!
//! Columns are found by their header names, so extra columns are ignored and the order of
//! columns does not matter. The sweep-key columns are those that `summary.csv` holds between
//! `seed` and `requests`; the other files may or may not repeat them (the values of a point
//! are taken from `summary.csv`). Strategies keep the order in which they first appear in
//! `summary.csv`; that order gives every strategy its colour in every chart.
//!
//! Every problem is an [`Error::ResultFolder`] naming the file, and for a bad value the line
//! and the column: a missing or malformed file never panics.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::time::parse_duration;

/// `summary.csv`: one row per (point, strategy, replication).
pub const SUMMARY: &str = "summary.csv";
/// `aggregate.csv`: one row per (point, strategy, metric).
pub const AGGREGATE: &str = "aggregate.csv";
/// `timeseries.csv`: one row per (point, strategy, output bucket), replication 0.
pub const TIMESERIES: &str = "timeseries.csv";
/// `attempts.csv`: one row per (point, strategy, attempt number).
pub const ATTEMPTS: &str = "attempts.csv";
/// `latency.csv`: the latency distribution per (point, strategy).
pub const LATENCY: &str = "latency.csv";
/// `compare.csv` (optional): paired differences between strategies.
pub const COMPARE: &str = "compare.csv";
/// `pareto.csv` (optional, from `jitterlab recommend`): the amplification/p99 front.
pub const PARETO: &str = "pareto.csv";
/// `scenario.toml`: the resolved scenario.
pub const SCENARIO: &str = "scenario.toml";

/// The CSV files every result folder holds; a folder without one of them is refused.
pub const REQUIRED: [&str; 5] = [SUMMARY, AGGREGATE, TIMESERIES, ATTEMPTS, LATENCY];

/// One point of the sweep grid: its index and the value of each sweep key as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The `point` column.
    pub index: u32,
    /// One value per sweep key, in the order of [`ResultFolder::sweep_keys`], as written
    /// (`"50ms"`, `"100"`).
    pub values: Vec<String>,
}

impl Point {
    /// `key=value, key=value`, or `""` when there is no sweep.
    pub fn label(&self, keys: &[String]) -> String {
        keys.iter()
            .zip(&self.values)
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A row of `summary.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// Replication index.
    pub replication: u32,
    /// The run's seed.
    pub seed: u64,
    /// Every numeric column after the sweep keys, by header name; empty cells are left out.
    pub metrics: BTreeMap<String, f64>,
}

/// A row of `aggregate.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// The summary column this row aggregates.
    pub metric: String,
    /// Mean across replications (`None` when the cell is empty).
    pub mean: Option<f64>,
    /// Standard deviation (`None` when n = 1).
    pub sd: Option<f64>,
    /// Lower end of the 95 % confidence interval.
    pub ci95_low: Option<f64>,
    /// Upper end of the 95 % confidence interval.
    pub ci95_high: Option<f64>,
    /// Number of replications.
    pub n: u32,
}

/// A row of `timeseries.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeseriesRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// Start of the bucket, ms.
    pub t_ms: f64,
    /// Attempts reaching the server in the bucket.
    pub arrivals: f64,
    /// First attempts among them.
    pub first_attempts: f64,
    /// Retries among them.
    pub retries: f64,
    /// Attempts answered with success.
    pub successes: f64,
    /// Attempts rejected (overload, errors).
    pub rejections: f64,
    /// Attempts that timed out.
    pub timeouts: f64,
    /// Requests in the system at the end of the bucket.
    pub in_system: f64,
}

/// A row of `attempts.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptsRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// Attempt number (1 = first attempt).
    pub attempt: u32,
    /// Requests that succeeded on this attempt, all replications.
    pub succeeded: f64,
    /// Share of requests that succeeded on this attempt (0..1).
    pub share: f64,
}

/// A row of `latency.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// Latency, ms.
    pub latency_ms: f64,
    /// Share of succeeded requests with a latency at most `latency_ms` (0..1).
    pub cdf: f64,
}

/// A row of `compare.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    /// Sweep point index.
    pub point: u32,
    /// The compared metric.
    pub metric: String,
    /// First strategy.
    pub strategy_a: String,
    /// Second strategy.
    pub strategy_b: String,
    /// Mean of (a - b) over paired replications.
    pub mean_diff: Option<f64>,
    /// Lower end of its 95 % confidence interval.
    pub ci95_low: Option<f64>,
    /// Upper end of its 95 % confidence interval.
    pub ci95_high: Option<f64>,
}

/// A row of `pareto.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoRow {
    /// Sweep point index.
    pub point: u32,
    /// Strategy name.
    pub strategy: String,
    /// Mean amplification.
    pub amplification: f64,
    /// Mean p99 latency, ms.
    pub latency_p99_ms: f64,
    /// On the amplification/p99 Pareto front.
    pub on_front: bool,
    /// The recommended choice.
    pub recommended: bool,
}

/// A fault window from `scenario.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultWindow {
    /// `outage`, `errors`, `slow`.
    pub kind: String,
    /// Start, ms.
    pub start_ms: f64,
    /// End, ms.
    pub end_ms: f64,
}

/// The server's capacity as a reference line for the herd chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// Attempts the server completes per output bucket when every worker is busy.
    pub per_bucket: f64,
    /// How it was computed, for the legend.
    pub label: String,
}

/// What the charts need from `scenario.toml`, and its text.
#[derive(Debug, Clone)]
pub struct ScenarioInfo {
    /// The file as written.
    pub text: String,
    /// The file parsed as a generic TOML value.
    pub value: toml::Value,
    /// `name`.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `server.kind` (`queue` when absent).
    pub server_kind: String,
    /// `output.bucket` in ms.
    pub bucket_ms: Option<f64>,
    /// `[[faults]]`.
    pub faults: Vec<FaultWindow>,
    /// workers / mean service time × bucket, for a `queue` server with a known service time.
    pub capacity: Option<Capacity>,
}

impl ScenarioInfo {
    /// Parses the text of a resolved scenario; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<ScenarioInfo> {
        let value: toml::Value = toml::from_str(text).map_err(|e| Error::ResultFolder {
            path: path.to_path_buf(),
            message: format!("not a TOML scenario: {e}"),
        })?;
        let get = |dotted: &str| -> Option<&toml::Value> {
            dotted.split('.').try_fold(&value, |v, part| v.get(part))
        };
        let string = |dotted: &str| get(dotted).and_then(|v| v.as_str()).map(str::to_string);
        let duration_ms = |key: &str, v: &toml::Value| -> Result<f64> {
            let text = v.as_str().ok_or_else(|| Error::ResultFolder {
                path: path.to_path_buf(),
                message: format!("`{key}` should be a duration such as \"10ms\", found {v}"),
            })?;
            parse_duration(key, text)
                .map(|d| d.as_millis_f64())
                .map_err(|e| Error::ResultFolder {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })
        };
        let bucket_ms = match get("output.bucket") {
            Some(v) => Some(duration_ms("output.bucket", v)?),
            None => None,
        };
        let mut faults = Vec::new();
        if let Some(list) = get("faults").and_then(|v| v.as_array()) {
            for (i, fault) in list.iter().enumerate() {
                let kind = fault
                    .get("kind")
                    .and_then(|v| v.as_str())
                    .unwrap_or("fault")
                    .to_string();
                let (Some(start), Some(end)) = (fault.get("start"), fault.get("end")) else {
                    continue;
                };
                faults.push(FaultWindow {
                    kind,
                    start_ms: duration_ms(&format!("faults[{i}].start"), start)?,
                    end_ms: duration_ms(&format!("faults[{i}].end"), end)?,
                });
            }
        }
        let server_kind = string("server.kind").unwrap_or_else(|| "queue".to_string());
        let workers = get("server.workers")
            .and_then(|v| v.as_integer().map(|i| i as f64).or_else(|| v.as_float()));
        let service_ms = match get("server.service.mean") {
            Some(v) => Some(duration_ms("server.service.mean", v)?),
            None => None,
        };
        let capacity = match (server_kind.as_str(), workers, service_ms, bucket_ms) {
            ("queue", Some(w), Some(s), Some(b)) if w > 0.0 && s > 0.0 && b > 0.0 => {
                let per_bucket = w / s * b;
                Some(Capacity {
                    per_bucket,
                    label: format!(
                        "capacity: {} workers / {} mean service = {} attempts per bucket",
                        fmt_number(w),
                        fmt_ms(s),
                        fmt_number(per_bucket)
                    ),
                })
            }
            _ => None,
        };
        Ok(ScenarioInfo {
            text: text.to_string(),
            name: string("name"),
            description: string("description"),
            server_kind,
            bucket_ms,
            faults,
            capacity,
            value,
        })
    }
}

/// A result folder read into memory.
#[derive(Debug, Clone)]
pub struct ResultFolder {
    /// The folder.
    pub dir: PathBuf,
    /// Sweep keys (dotted), in column order; empty without a sweep.
    pub sweep_keys: Vec<String>,
    /// Strategies in the order of their first appearance in `summary.csv`.
    pub strategies: Vec<String>,
    /// Sweep points in index order.
    pub points: Vec<Point>,
    /// `summary.csv`.
    pub summary: Vec<SummaryRow>,
    /// `aggregate.csv`.
    pub aggregate: Vec<AggregateRow>,
    /// `timeseries.csv`.
    pub timeseries: Vec<TimeseriesRow>,
    /// `attempts.csv`.
    pub attempts: Vec<AttemptsRow>,
    /// `latency.csv`.
    pub latency: Vec<LatencyRow>,
    /// `compare.csv`, when present.
    pub compare: Option<Vec<CompareRow>>,
    /// `pareto.csv`, when present.
    pub pareto: Option<Vec<ParetoRow>>,
    /// `scenario.toml`, when present.
    pub scenario: Option<ScenarioInfo>,
}

impl ResultFolder {
    /// Reads every file of the folder. The five CSVs of [`REQUIRED`] must be there;
    /// `compare.csv`, `pareto.csv` and `scenario.toml` are read when present.
    pub fn read(dir: &Path) -> Result<ResultFolder> {
        if !dir.is_dir() {
            return Err(Error::ResultFolder {
                path: dir.to_path_buf(),
                message: "not a folder (expected a result folder written by `jitterlab run`)"
                    .to_string(),
            });
        }
        let missing: Vec<&str> = REQUIRED
            .iter()
            .copied()
            .filter(|f| !dir.join(f).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(Error::ResultFolder {
                path: dir.to_path_buf(),
                message: format!(
                    "missing {}: a result folder holds {} (written by `jitterlab run` or `merge`)",
                    missing.join(", "),
                    REQUIRED.join(", ")
                ),
            });
        }

        let summary_table = Table::read(&dir.join(SUMMARY))?;
        let seed_col = summary_table.col("seed")?;
        let requests_col = summary_table.col("requests")?;
        if requests_col < seed_col {
            return Err(summary_table.error("column `requests` comes before `seed`"));
        }
        let sweep_keys: Vec<String> = summary_table.headers[seed_col + 1..requests_col].to_vec();
        let mut strategies: Vec<String> = Vec::new();
        let mut points: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        let mut summary = Vec::with_capacity(summary_table.rows.len());
        {
            let t = &summary_table;
            let (c_point, c_strategy, c_rep) =
                (t.col("point")?, t.col("strategy")?, t.col("replication")?);
            for (i, row) in t.rows.iter().enumerate() {
                let point: u32 = t.parse(i, c_point)?;
                let strategy = t.text(i, c_strategy)?.to_string();
                if !strategies.contains(&strategy) {
                    strategies.push(strategy.clone());
                }
                let values: Vec<String> = (seed_col + 1..requests_col)
                    .map(|c| row.get(c).unwrap_or("").trim().to_string())
                    .collect();
                if let Some(known) = points.get(&point) {
                    if *known != values {
                        return Err(t.row_error(
                            i,
                            &format!("point {point} has sweep values {values:?} here but {known:?} before"),
                        ));
                    }
                } else {
                    points.insert(point, values);
                }
                let mut metrics = BTreeMap::new();
                for c in requests_col..t.headers.len() {
                    if let Some(v) = t.opt_f64(i, c)? {
                        metrics.insert(t.headers[c].clone(), v);
                    }
                }
                summary.push(SummaryRow {
                    point,
                    strategy,
                    replication: t.parse(i, c_rep)?,
                    seed: t.parse(i, seed_col)?,
                    metrics,
                });
            }
        }
        if summary.is_empty() {
            return Err(summary_table.error("no rows"));
        }
        let mut note_strategy = |s: &str| {
            if !strategies.iter().any(|x| x == s) {
                strategies.push(s.to_string());
            }
        };

        let t = Table::read(&dir.join(AGGREGATE))?;
        let (cp, cs, cm) = (t.col("point")?, t.col("strategy")?, t.col("metric")?);
        let (cmean, csd, clo, chi, cn) = (
            t.col("mean")?,
            t.col("sd")?,
            t.col("ci95_low")?,
            t.col("ci95_high")?,
            t.col("n")?,
        );
        let mut aggregate = Vec::with_capacity(t.rows.len());
        for i in 0..t.rows.len() {
            let strategy = t.text(i, cs)?.to_string();
            note_strategy(&strategy);
            aggregate.push(AggregateRow {
                point: t.parse(i, cp)?,
                strategy,
                metric: t.text(i, cm)?.to_string(),
                mean: t.opt_f64(i, cmean)?,
                sd: t.opt_f64(i, csd)?,
                ci95_low: t.opt_f64(i, clo)?,
                ci95_high: t.opt_f64(i, chi)?,
                n: t.parse(i, cn)?,
            });
        }

        let t = Table::read(&dir.join(TIMESERIES))?;
        let (cp, cs) = (t.col("point")?, t.col("strategy")?);
        let cols: Vec<usize> = std::iter::once("t_ms")
            .chain(crate::sim::TimeSeries::COLUMNS)
            .map(|name| t.col(name))
            .collect::<Result<_>>()?;
        let mut timeseries = Vec::with_capacity(t.rows.len());
        for i in 0..t.rows.len() {
            let strategy = t.text(i, cs)?.to_string();
            note_strategy(&strategy);
            let v = |k: usize| t.f64(i, cols[k]);
            timeseries.push(TimeseriesRow {
                point: t.parse(i, cp)?,
                strategy,
                t_ms: v(0)?,
                arrivals: v(1)?,
                first_attempts: v(2)?,
                retries: v(3)?,
                successes: v(4)?,
                rejections: v(5)?,
                timeouts: v(6)?,
                in_system: v(7)?,
            });
        }

        let t = Table::read(&dir.join(ATTEMPTS))?;
        let (cp, cs, ca, csu, csh) = (
            t.col("point")?,
            t.col("strategy")?,
            t.col("attempt")?,
            t.col("succeeded")?,
            t.col("share")?,
        );
        let mut attempts = Vec::with_capacity(t.rows.len());
        for i in 0..t.rows.len() {
            let strategy = t.text(i, cs)?.to_string();
            note_strategy(&strategy);
            attempts.push(AttemptsRow {
                point: t.parse(i, cp)?,
                strategy,
                attempt: t.parse(i, ca)?,
                succeeded: t.f64(i, csu)?,
                share: t.f64(i, csh)?,
            });
        }

        let t = Table::read(&dir.join(LATENCY))?;
        let (cp, cs, cl, cc) = (
            t.col("point")?,
            t.col("strategy")?,
            t.col("latency_ms")?,
            t.col("cdf")?,
        );
        let mut latency = Vec::with_capacity(t.rows.len());
        for i in 0..t.rows.len() {
            let strategy = t.text(i, cs)?.to_string();
            note_strategy(&strategy);
            latency.push(LatencyRow {
                point: t.parse(i, cp)?,
                strategy,
                latency_ms: t.f64(i, cl)?,
                cdf: t.f64(i, cc)?,
            });
        }

        let compare = if dir.join(COMPARE).is_file() {
            let t = Table::read(&dir.join(COMPARE))?;
            let c = [
                "point",
                "metric",
                "strategy_a",
                "strategy_b",
                "mean_diff",
                "ci95_low",
                "ci95_high",
            ]
            .map(|name| t.col(name));
            let c: Vec<usize> = c.into_iter().collect::<Result<_>>()?;
            let mut rows = Vec::with_capacity(t.rows.len());
            for i in 0..t.rows.len() {
                rows.push(CompareRow {
                    point: t.parse(i, c[0])?,
                    metric: t.text(i, c[1])?.to_string(),
                    strategy_a: t.text(i, c[2])?.to_string(),
                    strategy_b: t.text(i, c[3])?.to_string(),
                    mean_diff: t.opt_f64(i, c[4])?,
                    ci95_low: t.opt_f64(i, c[5])?,
                    ci95_high: t.opt_f64(i, c[6])?,
                });
            }
            Some(rows)
        } else {
            None
        };

        let pareto = if dir.join(PARETO).is_file() {
            let t = Table::read(&dir.join(PARETO))?;
            let c = [
                "point",
                "strategy",
                "amplification",
                "latency_p99_ms",
                "on_front",
                "recommended",
            ]
            .map(|name| t.col(name));
            let c: Vec<usize> = c.into_iter().collect::<Result<_>>()?;
            let mut rows = Vec::with_capacity(t.rows.len());
            for i in 0..t.rows.len() {
                let strategy = t.text(i, c[1])?.to_string();
                note_strategy(&strategy);
                rows.push(ParetoRow {
                    point: t.parse(i, c[0])?,
                    strategy,
                    amplification: t.f64(i, c[2])?,
                    latency_p99_ms: t.f64(i, c[3])?,
                    on_front: t.bool(i, c[4])?,
                    recommended: t.bool(i, c[5])?,
                });
            }
            Some(rows)
        } else {
            None
        };

        let scenario_path = dir.join(SCENARIO);
        let scenario = if scenario_path.is_file() {
            let text = std::fs::read_to_string(&scenario_path)
                .map_err(|e| Error::io(&scenario_path, e))?;
            Some(ScenarioInfo::parse(&scenario_path, &text)?)
        } else {
            None
        };

        Ok(ResultFolder {
            dir: dir.to_path_buf(),
            sweep_keys,
            strategies,
            points: points
                .into_iter()
                .map(|(index, values)| Point { index, values })
                .collect(),
            summary,
            aggregate,
            timeseries,
            attempts,
            latency,
            compare,
            pareto,
            scenario,
        })
    }

    /// The point that single-point charts show for a sweep: the lowest index.
    pub fn first_point(&self) -> &Point {
        &self.points[0]
    }

    /// The point with this index.
    pub fn point(&self, index: u32) -> Option<&Point> {
        self.points.iter().find(|p| p.index == index)
    }

    /// The aggregate row for (point, strategy, metric).
    pub fn aggregate_of(&self, point: u32, strategy: &str, metric: &str) -> Option<&AggregateRow> {
        self.aggregate
            .iter()
            .find(|r| r.point == point && r.strategy == strategy && r.metric == metric)
    }

    /// The metrics present in `aggregate.csv`, in first-appearance order.
    pub fn aggregate_metrics(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in &self.aggregate {
            if !out.contains(&r.metric.as_str()) {
                out.push(&r.metric);
            }
        }
        out
    }

    /// The output bucket in ms: `output.bucket` from the scenario, else the step of
    /// `timeseries.csv`.
    pub fn bucket_ms(&self) -> Option<f64> {
        if let Some(b) = self.scenario.as_ref().and_then(|s| s.bucket_ms) {
            return Some(b);
        }
        let first = self.timeseries.first()?;
        self.timeseries
            .iter()
            .skip(1)
            .find(|r| r.point == first.point && r.strategy == first.strategy)
            .map(|r| r.t_ms - first.t_ms)
            .filter(|d| *d > 0.0)
    }
}

/// Parses a sweep value written as in a scenario (`"50ms"`, `100`, `0.5`) as a number: a
/// duration in ms, else a plain number. `None` for anything else (a name, a table).
pub fn sweep_value_number(text: &str) -> Option<f64> {
    let t = text.trim().trim_matches('"');
    if let Ok(v) = t.parse::<f64>() {
        return v.is_finite().then_some(v);
    }
    parse_duration("sweep", t).ok().map(|d| d.as_millis_f64())
}

/// Formats a number with a thin grouping of thousands and at most 3 significant decimals.
pub(crate) fn fmt_number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a >= 1000.0 {
        let whole = v.round() as i64;
        let s = whole.unsigned_abs().to_string();
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(' ');
            }
            out.push(ch);
        }
        if whole < 0 { format!("-{out}") } else { out }
    } else if a >= 100.0 || (v.fract() == 0.0) {
        format!("{v:.0}")
    } else if a >= 10.0 {
        trim_zeros(format!("{v:.1}"))
    } else if a >= 1.0 {
        trim_zeros(format!("{v:.2}"))
    } else {
        trim_zeros(format!("{v:.3}"))
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Formats milliseconds with a unit chosen by size: `850 µs`, `12.5 ms`, `2.4 s`, `3.1 min`.
pub(crate) fn fmt_ms(ms: f64) -> String {
    let a = ms.abs();
    if a == 0.0 {
        "0 ms".to_string()
    } else if a < 1.0 {
        format!("{} µs", fmt_number(ms * 1000.0))
    } else if a < 1000.0 {
        format!("{} ms", fmt_number(ms))
    } else if a < 120_000.0 {
        format!("{} s", fmt_number(ms / 1000.0))
    } else {
        format!("{} min", fmt_number(ms / 60_000.0))
    }
}

/// A CSV file held as strings, with errors that name the file, line and column.
struct Table {
    path: PathBuf,
    headers: Vec<String>,
    rows: Vec<csv::StringRecord>,
    lines: Vec<u64>,
}

impl Table {
    fn read(path: &Path) -> Result<Table> {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_path(path)
            .map_err(|e| Error::ResultFolder {
                path: path.to_path_buf(),
                message: format!("cannot read: {e}"),
            })?;
        let headers: Vec<String> = reader
            .headers()
            .map_err(|e| Error::ResultFolder {
                path: path.to_path_buf(),
                message: format!("cannot read the header: {e}"),
            })?
            .iter()
            .map(str::to_string)
            .collect();
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| {
                let line = e.position().map(|p| p.line()).unwrap_or(0);
                Error::ResultFolder {
                    path: path.to_path_buf(),
                    message: format!("line {line}: malformed row: {e}"),
                }
            })?;
            lines.push(record.position().map(|p| p.line()).unwrap_or(0));
            rows.push(record);
        }
        Ok(Table {
            path: path.to_path_buf(),
            headers,
            rows,
            lines,
        })
    }

    fn error(&self, message: &str) -> Error {
        Error::ResultFolder {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }

    fn row_error(&self, i: usize, message: &str) -> Error {
        self.error(&format!("line {}: {message}", self.lines[i]))
    }

    fn col(&self, name: &str) -> Result<usize> {
        self.headers.iter().position(|h| h == name).ok_or_else(|| {
            self.error(&format!(
                "no column `{name}` (the header is: {})",
                self.headers.join(",")
            ))
        })
    }

    fn text(&self, i: usize, c: usize) -> Result<&str> {
        self.rows[i]
            .get(c)
            .ok_or_else(|| self.row_error(i, &format!("no value for column `{}`", self.headers[c])))
    }

    fn parse<T: std::str::FromStr>(&self, i: usize, c: usize) -> Result<T> {
        let text = self.text(i, c)?;
        text.parse().map_err(|_| {
            self.row_error(
                i,
                &format!(
                    "column `{}`: cannot read {text:?} as a whole number",
                    self.headers[c]
                ),
            )
        })
    }

    fn opt_f64(&self, i: usize, c: usize) -> Result<Option<f64>> {
        let text = self.text(i, c)?;
        if text.is_empty() {
            return Ok(None);
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_nan() => Ok(None),
            Ok(v) => Ok(Some(v)),
            Err(_) => Err(self.row_error(
                i,
                &format!(
                    "column `{}`: cannot read {text:?} as a number",
                    self.headers[c]
                ),
            )),
        }
    }

    fn f64(&self, i: usize, c: usize) -> Result<f64> {
        self.opt_f64(i, c)?
            .ok_or_else(|| self.row_error(i, &format!("column `{}` is empty", self.headers[c])))
    }

    fn bool(&self, i: usize, c: usize) -> Result<bool> {
        match self.text(i, c)? {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            other => Err(self.row_error(
                i,
                &format!(
                    "column `{}`: expected true or false, found {other:?}",
                    self.headers[c]
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_durations() {
        assert_eq!(fmt_number(12345.0), "12 345");
        assert_eq!(fmt_number(1.5), "1.5");
        assert_eq!(fmt_number(0.1234), "0.123");
        assert_eq!(fmt_ms(0.5), "500 µs");
        assert_eq!(fmt_ms(12.5), "12.5 ms");
        assert_eq!(fmt_ms(2500.0), "2.5 s");
        assert_eq!(sweep_value_number("50ms"), Some(50.0));
        assert_eq!(sweep_value_number("\"2s\""), Some(2000.0));
        assert_eq!(sweep_value_number("100"), Some(100.0));
        assert_eq!(sweep_value_number("full"), None);
    }

    #[test]
    fn scenario_capacity_and_faults() {
        let text = r#"
name = "herd"
[server]
kind = "queue"
workers = 100
service = { dist = "exponential", mean = "10ms" }
[[faults]]
kind = "outage"
start = "0s"
end = "5s"
[output]
bucket = "10ms"
"#;
        let s = ScenarioInfo::parse(Path::new("scenario.toml"), text).unwrap();
        assert_eq!(s.name.as_deref(), Some("herd"));
        assert_eq!(s.capacity.as_ref().unwrap().per_bucket, 100.0);
        assert_eq!(s.faults[0].end_ms, 5000.0);
        let bad = ScenarioInfo::parse(Path::new("scenario.toml"), "output = { bucket = 3 }");
        assert!(matches!(bad, Err(Error::ResultFolder { .. })));
    }
}
