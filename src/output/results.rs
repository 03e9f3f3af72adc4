//! Reads a result folder (docs/results.md) into typed rows, the row types of [`super::rows`] that
//! the writer writes.
//!
//! Columns are found by their header names, so extra columns are ignored and the order of
//! columns does not matter. The sweep-key columns are those that `summary.csv` holds between
//! `seed` and `requests`; the other files may or may not repeat them (the values of a point
//! are taken from `summary.csv`). Strategies keep the order in which they first appear in
//! `summary.csv`; that order gives every strategy its colour in every chart. `scenario.toml`
//! is read by the scenario parser itself ([`crate::scenario`]).
//!
//! Every problem is an [`Error::ResultFolder`] naming the file, and for a bad value the line
//! and the column: a missing or malformed file never panics.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use super::rows::{
    AggregateRow, AttemptsRow, CompareRow, HedgingRow, LatencyRow, LayerTimeseriesRow, LayersRow,
    LiveVsSimRow, ParetoRow, Row, SummaryRow, TimeseriesRow,
};
use super::rows::{METRICS, MetricColumns, SWEEP, fields};
use crate::error::{Error, Result};
use crate::metric::{Metric, PerMetric};
use crate::scenario::{Role, ScenarioDoc};
use crate::sim::workload::Workload;
use crate::sim::{Model, ServerConfig, UNLIMITED_WORKERS};
use crate::time::parse_duration;

/// `scenario.toml`: the resolved scenario.
pub const SCENARIO: &str = crate::folder::names::SCENARIO;

/// The CSV files every result folder holds; a folder without one of them is refused.
pub const REQUIRED: [&str; 5] = [
    SummaryRow::FILE,
    AggregateRow::FILE,
    TimeseriesRow::FILE,
    AttemptsRow::FILE,
    LatencyRow::FILE,
];

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

    /// ` (point N: label)` for a chart's title, or ` (point N)` when the label is too long
    /// for one (a swept list of fault windows); the chart's guide then gives it whole.
    pub fn title_suffix(&self, keys: &[String]) -> String {
        let label = self.label(keys);
        if label.chars().count() <= MAX_TITLE_LABEL {
            format!(" (point {}: {label})", self.index)
        } else {
            format!(" (point {})", self.index)
        }
    }
}

/// The longest point label a chart title holds.
const MAX_TITLE_LABEL: usize = 48;

/// A fault window of the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultWindow {
    /// `outage`, `errors`, `slow`.
    pub kind: String,
    /// Start, ms.
    pub start_ms: f64,
    /// End, ms.
    pub end_ms: f64,
    /// False for a window that changes nothing (`errors` with a share of 0, `slow` by 1):
    /// charts do not shade it.
    pub effective: bool,
}

/// The server's capacity as a reference line for the herd chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// Attempts the server completes per output bucket when every worker is busy.
    pub per_bucket: f64,
    /// How it was computed, for the legend.
    pub label: String,
}

/// What the charts need to know of one sweep point's scenario (or of a scenario without a
/// sweep).
#[derive(Debug, Clone)]
pub struct PointInfo {
    /// `[[faults]]` of the single server.
    pub faults: Vec<FaultWindow>,
    /// workers / mean service time × bucket, for a `queue` server with a worker limit.
    pub capacity: Option<Capacity>,
    /// Requests per second the server can complete usefully, and how that was worked out:
    /// workers / mean service time, or for a load-dependent server without a worker limit the
    /// load at which service reaches the client's timeout.
    pub capacity_rps: Option<(f64, String)>,
    /// A `poisson` workload's offered rate over time as a polyline `(ms, requests per
    /// second)`: its rate profile, 0 before it starts and after its arrivals end.
    pub offered: Option<Vec<(f64, f64)>>,
    /// The trigger whose recovery is measured, `(start, end)` in ms.
    pub trigger_ms: Option<(f64, f64)>,
    /// True for a `burst` workload (every client sends once, around the same instant).
    pub burst: bool,
    /// A `poisson_clients` workload's client count: its `workload.rate` is each client's,
    /// so the offered load is that many times the rate.
    pub rate_clients: Option<u32>,
    /// A chain's layers in call order (empty for one server).
    pub layers: Vec<LayerInfo>,
}

/// What the charts and the report need from `scenario.toml`, and its text.
#[derive(Debug, Clone)]
pub struct ScenarioInfo {
    /// The file as written.
    pub text: String,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `output.bucket` in ms.
    pub bucket_ms: f64,
    /// The role of each sweep key, in the order of the sweep ([`crate::scenario::roles`]).
    pub roles: Vec<Role>,
    /// `recommend.min_success`, when the scenario gives it.
    pub min_success: Option<f64>,
    /// Each sweep point's scenario as the charts need it, in grid order (one without a
    /// sweep).
    pub points: Vec<PointInfo>,
}

/// One layer of a chain as the charts draw it.
#[derive(Debug, Clone)]
pub struct LayerInfo {
    /// `layers[].name`.
    pub name: String,
    /// Its server's capacity per bucket, as [`PointInfo::capacity`].
    pub capacity: Option<Capacity>,
    /// Its fault windows.
    pub faults: Vec<FaultWindow>,
}

impl ScenarioInfo {
    /// Reads the text of a resolved scenario with the scenario parser, every sweep point
    /// checked; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<ScenarioInfo> {
        let folder = path.parent().and_then(Path::file_name).map_or_else(
            || "jitterlab run".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let error = |e: Error| Error::ResultFolder {
            path: path.to_path_buf(),
            message: match e {
                // The scenario error already names the file.
                Error::Scenario { message, .. } => message,
                other => other.to_string(),
            },
        };
        let doc = ScenarioDoc::parse(text, &path.display().to_string(), &folder).map_err(error)?;
        let base = doc.base().map_err(error)?;
        let sweep = doc.sweep().map_err(error)?;
        let bucket_ms = base.model.bucket.as_millis_f64();
        let points = doc
            .points()
            .map_err(error)?
            .iter()
            .map(|p| PointInfo::of(&p.scenario.model, bucket_ms))
            .collect();
        Ok(ScenarioInfo {
            text: text.to_string(),
            name: base.name,
            description: base.description,
            bucket_ms,
            roles: sweep.roles,
            min_success: base.min_success,
            points,
        })
    }
}

impl PointInfo {
    fn of(model: &Model, bucket_ms: f64) -> PointInfo {
        // A layer that calls another holds its workers while it waits for the layer below:
        // workers / service time is no capacity of it. Only the last layer has one.
        let calls = |i: usize| model.chain.as_ref().is_some_and(|c| i < c.hops.len());
        let layers =
            model
                .chain
                .iter()
                .flat_map(|chain| {
                    let servers = std::iter::once((&model.server, &model.faults[..]))
                        .chain(chain.hops.iter().map(|h| (&h.server, &h.faults[..])));
                    chain.names.iter().zip(servers).enumerate().map(
                        |(i, (name, (server, faults)))| LayerInfo {
                            name: name.clone(),
                            capacity: capacity(server, bucket_ms).filter(|_| !calls(i)),
                            faults: windows(faults),
                        },
                    )
                })
                .collect();
        let ms = |t: crate::time::SimTime| t.as_nanos() as f64 / 1e6;
        PointInfo {
            faults: windows(&model.faults),
            capacity: capacity(&model.server, bucket_ms).filter(|_| !calls(0)),
            capacity_rps: capacity_rps(model).filter(|_| model.chain.is_none()),
            offered: offered_rate(&model.workload),
            trigger_ms: model.trigger.map(|(a, b)| (ms(a), ms(b))),
            burst: matches!(model.workload, Workload::Burst { .. }),
            rate_clients: match model.workload {
                Workload::PoissonClients { clients, .. } => Some(clients),
                _ => None,
            },
            layers,
        }
    }
}

/// A queue server's capacity per bucket of `bucket_ms` (none for unlimited workers or OCC).
fn capacity(server: &ServerConfig, bucket_ms: f64) -> Option<Capacity> {
    match server {
        ServerConfig::Queue(q) if q.workers == UNLIMITED_WORKERS => None,
        ServerConfig::Queue(q) => {
            let (workers, service_ms) = (q.workers as f64, q.service.mean_param().as_millis_f64());
            (workers > 0.0 && service_ms > 0.0 && bucket_ms > 0.0).then(|| {
                let per_bucket = workers / service_ms * bucket_ms;
                // A rate limiter below the workers is what gets through: it answers the rest 429.
                if let Some(limit) = q
                    .rate_limit
                    .filter(|r| r.rate * bucket_ms / 1000.0 < per_bucket)
                {
                    let per_bucket = limit.rate * bucket_ms / 1000.0;
                    return Capacity {
                        per_bucket,
                        label: format!(
                            "capacity: the rate limiter's {}/s = {} attempts per bucket",
                            fmt_number(limit.rate),
                            fmt_number(per_bucket)
                        ),
                    };
                }
                Capacity {
                    per_bucket,
                    label: format!(
                        "capacity: {} workers / {} mean service = {} attempts per bucket",
                        fmt_number(workers),
                        fmt_ms(service_ms),
                        fmt_number(per_bucket)
                    ),
                }
            })
        }
        ServerConfig::Occ => None,
    }
}

/// Requests per second a server completes usefully; see [`PointInfo::capacity_rps`]. A rate
/// limiter below what the workers complete is the capacity (it answers the rest with 429).
fn capacity_rps(model: &Model) -> Option<(f64, String)> {
    let ServerConfig::Queue(q) = &model.server else {
        return None;
    };
    let limiter = q.rate_limit.map(|r| {
        let how = format!("the rate limiter's {}/s", fmt_number(r.rate));
        (r.rate, how)
    });
    match (workers_rps(model, q), limiter) {
        (Some(w), Some(l)) => Some(if l.0 < w.0 { l } else { w }),
        (w, l) => w.or(l),
    }
}

/// What `q`'s workers complete usefully per second; see [`capacity_rps`].
fn workers_rps(model: &Model, q: &crate::sim::server::QueueConfig) -> Option<(f64, String)> {
    let service_ms = q.service.mean_param().as_millis_f64();
    let contention_ms = q.contention.as_millis_f64();
    if q.workers != UNLIMITED_WORKERS && contention_ms == 0.0 && service_ms > 0.0 {
        let rps = f64::from(q.workers) / service_ms * 1000.0;
        let how = format!(
            "{} workers / {} mean service",
            q.workers,
            fmt_ms(service_ms)
        );
        return Some((rps, how));
    }
    let timeout_ms = model.client.timeout?.as_millis_f64();
    if q.workers == UNLIMITED_WORKERS && contention_ms > 0.0 && timeout_ms > service_ms {
        // Service takes service + contention per other attempt in flight: it reaches the
        // timeout at n = (timeout - service) / contention in flight, n / timeout per second.
        let n = (timeout_ms - service_ms) / contention_ms;
        let rps = n / timeout_ms * 1000.0;
        let how = format!(
            "service reaches the {} timeout at {} in flight",
            fmt_ms(timeout_ms),
            fmt_number(n)
        );
        return Some((rps, how));
    }
    None
}

/// Fault windows as the charts draw them.
fn windows(faults: &[crate::sim::faults::Fault]) -> Vec<FaultWindow> {
    use crate::sim::faults::FaultKind;
    faults
        .iter()
        .map(|f| FaultWindow {
            kind: f.kind_name().to_string(),
            start_ms: f.start.as_millis_f64(),
            end_ms: f.end.as_millis_f64(),
            effective: f.end > f.start
                && match f.kind {
                    FaultKind::Errors { share, .. } => share > 0.0,
                    FaultKind::Slow { factor } => factor != 1.0,
                    FaultKind::Outage(_) => true,
                },
        })
        .collect()
}

/// The offered rate of a `poisson` workload as a polyline; see [`PointInfo::offered`].
fn offered_rate(workload: &Workload) -> Option<Vec<(f64, f64)>> {
    let (profile, start, end) = workload.poisson_profile()?;
    let ms = |t: crate::time::SimTime| t.as_nanos() as f64 / 1e6;
    let mut line = vec![(0.0, 0.0), (ms(start), 0.0)];
    line.extend(
        profile
            .points()
            .iter()
            .filter(|p| p.0 < end)
            .map(|&(t, r)| (ms(t), r)),
    );
    line.extend([(ms(end), profile.rate_at(end)), (ms(end), 0.0)]);
    Some(line)
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
    /// `live_vs_sim.csv` (a `jitterlab live` folder), when present.
    pub live_vs_sim: Option<Vec<LiveVsSimRow>>,
    /// `layers.csv` (a chain of services), when present.
    pub layers: Option<Vec<LayersRow>>,
    /// `layer_timeseries.csv` (a chain of services), when present.
    pub layer_timeseries: Option<Vec<LayerTimeseriesRow>>,
    /// `hedging.csv` (some strategy hedges), when present.
    pub hedging: Option<Vec<HedgingRow>>,
    /// `scenario.toml`, when present.
    pub scenario: Option<ScenarioInfo>,
    /// `aggregate.csv`'s rows by (point, strategy, metric), built on the first lookup.
    pub(crate) aggregate_index: OnceLock<AggregateIndex>,
}

/// Where each (point, strategy, metric) sits in [`ResultFolder::aggregate`], and how many rows
/// there were when it was built (a vector changed since is searched row by row instead).
#[derive(Debug, Clone, Default)]
pub(crate) struct AggregateIndex {
    rows: usize,
    at: HashMap<(u32, String, Metric), usize>,
}

#[cfg(test)]
impl ResultFolder {
    /// A folder named `dir` with nothing in it, for tests to fill in what they draw.
    pub(crate) fn empty(dir: &str) -> ResultFolder {
        ResultFolder {
            dir: dir.into(),
            sweep_keys: Vec::new(),
            strategies: Vec::new(),
            points: Vec::new(),
            summary: Vec::new(),
            aggregate: Vec::new(),
            timeseries: Vec::new(),
            attempts: Vec::new(),
            latency: Vec::new(),
            compare: None,
            pareto: None,
            live_vs_sim: None,
            layers: None,
            layer_timeseries: None,
            hedging: None,
            scenario: None,
            aggregate_index: OnceLock::new(),
        }
    }
}

impl ResultFolder {
    /// Reads every file of the folder. The five CSVs of [`REQUIRED`] must be there;
    /// `compare.csv`, `pareto.csv` and `scenario.toml` are read when present.
    pub fn read(dir: &Path) -> Result<ResultFolder> {
        check_holds_required_files(dir)?;
        let Summary {
            sweep_keys,
            summary,
            mut strategies,
            points,
        } = read_summary(dir)?;

        let aggregate: Vec<AggregateRow> = read_rows(dir, &sweep_keys)?;
        let timeseries: Vec<TimeseriesRow> = read_rows(dir, &sweep_keys)?;
        let attempts: Vec<AttemptsRow> = read_rows(dir, &sweep_keys)?;
        let latency: Vec<LatencyRow> = read_rows(dir, &sweep_keys)?;
        let compare: Option<Vec<CompareRow>> = read_optional_rows(dir, &sweep_keys)?;
        let pareto: Option<Vec<ParetoRow>> = read_optional_rows(dir, &sweep_keys)?;
        let live_vs_sim: Option<Vec<LiveVsSimRow>> = read_optional_rows(dir, &sweep_keys)?;
        let layers: Option<Vec<LayersRow>> = read_optional_rows(dir, &sweep_keys)?;
        let layer_timeseries: Option<Vec<LayerTimeseriesRow>> =
            read_optional_rows(dir, &sweep_keys)?;
        let hedging: Option<Vec<HedgingRow>> = read_optional_rows(dir, &sweep_keys)?;
        let more = aggregate
            .iter()
            .map(|r| &r.strategy)
            .chain(timeseries.iter().map(|r| &r.strategy))
            .chain(attempts.iter().map(|r| &r.strategy))
            .chain(latency.iter().map(|r| &r.strategy))
            .chain(pareto.iter().flatten().map(|r| &r.strategy));
        for s in more {
            if !strategies.contains(s) {
                strategies.push(s.clone());
            }
        }

        Ok(ResultFolder {
            dir: dir.to_path_buf(),
            sweep_keys,
            strategies,
            points,
            summary,
            aggregate,
            timeseries,
            attempts,
            latency,
            compare,
            pareto,
            live_vs_sim,
            layers,
            layer_timeseries,
            hedging,
            scenario: read_scenario_info(dir)?,
            aggregate_index: OnceLock::new(),
        })
    }

    /// The folder as charts and the report show it: every strategy and layer name escaped and
    /// shortened ([`crate::text::shown`]), the same name always the same text and two names
    /// never one (a long name would run off a chart; a control character would reach a
    /// terminal through an SVG's text). The data is unchanged.
    pub fn for_display(mut self) -> ResultFolder {
        let mut shown: BTreeMap<String, String> = BTreeMap::new();
        for name in &self.strategies {
            let mut text = crate::text::shown(name);
            // Two long names alike at both ends: numbered apart.
            let base = text.clone();
            let mut n = 1;
            while shown.values().any(|t| *t == text) {
                n += 1;
                text = format!("{base} #{n}");
            }
            shown.insert(name.clone(), text);
        }
        let map = |s: &mut String| {
            if let Some(t) = shown.get(s.as_str()) {
                s.clone_from(t);
            }
        };
        self.strategies.iter_mut().for_each(map);
        self.summary.iter_mut().for_each(|r| map(&mut r.strategy));
        self.aggregate.iter_mut().for_each(|r| map(&mut r.strategy));
        self.timeseries
            .iter_mut()
            .for_each(|r| map(&mut r.strategy));
        self.attempts.iter_mut().for_each(|r| map(&mut r.strategy));
        self.latency.iter_mut().for_each(|r| map(&mut r.strategy));
        for r in self.compare.iter_mut().flatten() {
            map(&mut r.strategy_a);
            map(&mut r.strategy_b);
        }
        self.pareto
            .iter_mut()
            .flatten()
            .for_each(|r| map(&mut r.strategy));
        self.live_vs_sim
            .iter_mut()
            .flatten()
            .for_each(|r| map(&mut r.strategy));
        (self.hedging.iter_mut().flatten()).for_each(|r| map(&mut r.strategy));
        for r in self.layers.iter_mut().flatten() {
            map(&mut r.strategy);
            r.name = crate::text::shown(&r.name);
        }
        for r in self.layer_timeseries.iter_mut().flatten() {
            map(&mut r.strategy);
            r.name = crate::text::shown(&r.name);
        }
        if let Some(s) = self.scenario.as_mut() {
            s.name = crate::text::shown(&s.name);
            s.description = crate::text::escape(&s.description).into_owned();
            for layer in s.points.iter_mut().flat_map(|p| p.layers.iter_mut()) {
                layer.name = crate::text::shown(&layer.name);
            }
        }
        self
    }

    /// True when strategy `strategy` (as this folder names it) hedges: `hedging.csv` has a row
    /// of it.
    pub fn hedges(&self, strategy: &str) -> bool {
        (self.hedging.iter().flatten()).any(|r| r.strategy == strategy)
    }

    /// The point that single-point charts show for a sweep: the lowest index.
    pub fn first_point(&self) -> &Point {
        &self.points[0]
    }

    /// What the charts know of sweep point `point`'s scenario (none without `scenario.toml`).
    pub fn info(&self, point: u32) -> Option<&PointInfo> {
        self.scenario.as_ref()?.points.get(point as usize)
    }

    /// The point with this index (points are kept in index order).
    pub fn point(&self, index: u32) -> Option<&Point> {
        match self.points.binary_search_by_key(&index, |p| p.index) {
            Ok(i) => Some(&self.points[i]),
            // Points built out of order (by hand) are still found.
            Err(_) => self.points.iter().find(|p| p.index == index),
        }
    }

    /// The aggregate row for (point, strategy, metric): a look-up in an index of the rows
    /// built once, so that charts of large sweeps do not scan the rows for every cell.
    pub fn aggregate_of(
        &self,
        point: u32,
        strategy: &str,
        metric: Metric,
    ) -> Option<&AggregateRow> {
        let index = self.aggregate_index.get_or_init(|| AggregateIndex {
            rows: self.aggregate.len(),
            at: (self.aggregate.iter().enumerate())
                .rev() // the first of equal rows wins, as in a scan
                .map(|(i, r)| ((r.point, r.strategy.clone(), r.metric), i))
                .collect(),
        });
        let is =
            |r: &&AggregateRow| r.point == point && r.strategy == strategy && r.metric == metric;
        if index.rows == self.aggregate.len() {
            let key = (point, strategy.to_string(), metric);
            let found = index.at.get(&key).and_then(|&i| self.aggregate.get(i));
            if found.is_none_or(|r| is(&r)) {
                return found;
            }
        }
        // The rows changed after the index was built (tests do): scan them.
        self.aggregate.iter().find(is)
    }

    /// True when `aggregate.csv` holds the metric.
    pub fn has(&self, metric: Metric) -> bool {
        self.aggregate.iter().any(|r| r.metric == metric)
    }

    /// The output bucket in ms: `output.bucket` from the scenario, else the step of
    /// `timeseries.csv`.
    pub fn bucket_ms(&self) -> Option<f64> {
        if let Some(s) = &self.scenario {
            return Some(s.bucket_ms);
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

/// Refuses a `dir` that is not a folder or lacks one of the files of [`REQUIRED`], before
/// anything in it is read.
fn check_holds_required_files(dir: &Path) -> Result<()> {
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
        .filter(|f| !dir.join(f).exists())
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
    Ok(())
}

/// What `summary.csv` says of the whole folder: the sweep keys, the runs, and the
/// strategies and points in the order they first appear.
struct Summary {
    sweep_keys: Vec<String>,
    summary: Vec<SummaryRow>,
    strategies: Vec<String>,
    points: Vec<Point>,
}

/// Reads `summary.csv`: its sweep keys are the columns between `seed` and the first metric.
fn read_summary(dir: &Path) -> Result<Summary> {
    let table = Table::read(&dir.join(SummaryRow::FILE))?;
    let seed_col = table.col("seed")?;
    let requests_col = table.col(Metric::ALL[0].name())?;
    if requests_col < seed_col {
        return Err(table.error(format!(
            "column `{}` comes before `seed`",
            Metric::ALL[0].name()
        )));
    }
    let sweep_keys: Vec<String> = table
        .headers
        .iter()
        .take(requests_col)
        .skip(seed_col + 1)
        .map(str::to_string)
        .collect();
    let mut summary: Vec<SummaryRow> = table.rows(&sweep_keys)?;
    for (row, metrics) in summary.iter_mut().zip(table.metric_columns()?) {
        row.metrics = metrics;
    }
    if summary.is_empty() {
        return Err(table.error("no rows".to_string()));
    }
    let (strategies, points) = strategies_and_points(&table, &summary)?;
    Ok(Summary {
        sweep_keys,
        summary,
        strategies,
        points,
    })
}

/// The strategies in the order they first appear and the points by index; a point whose
/// sweep values differ between two rows is an error at the second.
fn strategies_and_points(
    table: &Table,
    summary: &[SummaryRow],
) -> Result<(Vec<String>, Vec<Point>)> {
    let mut strategies: Vec<String> = Vec::new();
    let mut points: BTreeMap<u32, &Vec<String>> = BTreeMap::new();
    for (row, record) in summary.iter().zip(&table.records) {
        if !strategies.contains(&row.strategy) {
            strategies.push(row.strategy.clone());
        }
        match points.get(&row.point) {
            Some(known) if **known != row.sweep => {
                return Err(table.record_error(
                    record,
                    &format!(
                        "point {} has sweep values {:?} here but {known:?} before",
                        row.point, row.sweep
                    ),
                ));
            }
            Some(_) => {}
            None => {
                points.insert(row.point, &row.sweep);
            }
        }
    }
    let points: Vec<Point> = points
        .into_iter()
        .map(|(index, values)| Point {
            index,
            values: values.clone(),
        })
        .collect();
    Ok((strategies, points))
}

/// The folder's `scenario.toml`, when it is there.
fn read_scenario_info(dir: &Path) -> Result<Option<ScenarioInfo>> {
    let scenario_path = dir.join(SCENARIO);
    if !scenario_path.exists() {
        return Ok(None);
    }
    let text = crate::input::read_text(&scenario_path, crate::input::SCENARIO)?;
    Ok(Some(ScenarioInfo::parse(&scenario_path, &text)?))
}

/// The rows of the file of `R` in `dir`.
fn read_rows<R: Row>(dir: &Path, sweep_keys: &[String]) -> Result<Vec<R>> {
    Table::read(&dir.join(R::FILE))?.rows(sweep_keys)
}

/// The rows of the file of `R` in `dir`, when it is there.
fn read_optional_rows<R: Row>(dir: &Path, sweep_keys: &[String]) -> Result<Option<Vec<R>>> {
    // Read when there, whatever it is: a FIFO or a folder of that name is refused by name.
    if dir.join(R::FILE).exists() {
        read_rows(dir, sweep_keys).map(Some)
    } else {
        Ok(None)
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

/// A CSV file held as records, with errors that name the file, line and column.
struct Table {
    path: PathBuf,
    headers: csv::StringRecord,
    records: Vec<csv::StringRecord>,
}

impl Table {
    fn read(path: &Path) -> Result<Table> {
        let bytes = crate::input::read(path, crate::input::RESULT_CSV).map_err(|e| match e {
            Error::Io { source, .. } => Error::ResultFolder {
                path: path.to_path_buf(),
                message: format!("cannot read: {source}"),
            },
            other => other,
        })?;
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(bytes.as_slice());
        let headers = reader
            .headers()
            .map_err(|e| Error::ResultFolder {
                path: path.to_path_buf(),
                message: format!("cannot read the header: {e}"),
            })?
            .clone();
        let records = reader
            .records()
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                Error::ResultFolder {
                    path: path.to_path_buf(),
                    message: format!("line {line}: malformed row: {e}"),
                }
            })?;
        Ok(Table {
            path: path.to_path_buf(),
            headers,
            records,
        })
    }

    fn error(&self, message: String) -> Error {
        Error::ResultFolder {
            path: self.path.clone(),
            message,
        }
    }

    fn record_error(&self, record: &csv::StringRecord, message: &str) -> Error {
        let line = record.position().map_or(0, |p| p.line());
        // `line 3, column 5 (...)` when the message names a column, else `line 3: ...`.
        let sep = if message.starts_with("column ") {
            ", "
        } else {
            ": "
        };
        self.error(format!("line {line}{sep}{message}"))
    }

    fn col(&self, name: &str) -> Result<usize> {
        self.headers.iter().position(|h| h == name).ok_or_else(|| {
            self.error(format!(
                "no column `{name}` (the header is: {})",
                self.headers.iter().collect::<Vec<_>>().join(",")
            ))
        })
    }

    /// Every record as a row `R`, its sweep values taken from the columns named `sweep_keys`
    /// (left empty when the file does not repeat them).
    fn rows<R: Row>(&self, sweep_keys: &[String]) -> Result<Vec<R>> {
        let mut metric_columns = false;
        for &field in fields::<R>() {
            match field {
                SWEEP => {}
                METRICS => metric_columns = true,
                name if R::ADDED_LATER.contains(&name) => {}
                name => {
                    self.col(name)?;
                }
            }
        }
        if metric_columns {
            for m in Metric::ALL
                .into_iter()
                .filter(|m| !Metric::ADDED_LATER.contains(m))
            {
                self.col(m.name())?;
            }
        }
        let sweep_cols: Option<Vec<usize>> = sweep_keys
            .iter()
            .map(|k| self.headers.iter().position(|h| h == k))
            .collect();
        self.records
            .iter()
            .map(|record| {
                let mut row: R = self.deserialize(record, &|name| {
                    fields::<R>().contains(&name)
                        || (metric_columns && Metric::ALL.iter().any(|m| m.name() == name))
                })?;
                if let Some(cols) = &sweep_cols {
                    *row.sweep_mut() = cols.iter().map(|&c| record[c].to_string()).collect();
                }
                Ok(row)
            })
            .collect()
    }

    /// The metric columns of every record, in record order (NaN for an empty cell).
    fn metric_columns(&self) -> Result<Vec<PerMetric<f64>>> {
        self.records
            .iter()
            .map(|record| {
                let MetricColumns(values) =
                    self.deserialize(record, &|name| Metric::ALL.iter().any(|m| m.name() == name))?;
                Ok(PerMetric::from_fn(|m| values[m].unwrap_or(f64::NAN)))
            })
            .collect()
    }

    /// One record through serde, by header names; a bad cell names its line and column.
    /// `reads` tells the columns that the type reads, to name the cell of a refusal that serde
    /// does not place (a number that is not finite, a layer number out of range).
    fn deserialize<T: serde::de::DeserializeOwned>(
        &self,
        record: &csv::StringRecord,
        reads: &dyn Fn(&str) -> bool,
    ) -> Result<T> {
        record.deserialize(Some(&self.headers)).map_err(|e| {
            let not_finite = || {
                (0..record.len()).find(|&c| {
                    reads(self.headers.get(c).unwrap_or(""))
                        && record[c].parse::<f64>().is_ok_and(|x| !x.is_finite())
                })
            };
            // Nor does it place a layer number out of range (`rows::layer_number`).
            let not_a_layer = || {
                let c = self.headers.iter().position(|h| h == "layer")?;
                let n = record.get(c)?.parse::<u32>().ok()?;
                (!(1..=crate::sim::MAX_LAYERS as u32).contains(&n)).then_some(c)
            };
            let message = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => {
                    match (err.field().map(|c| c as usize))
                        .or_else(not_finite)
                        .or_else(not_a_layer)
                    {
                        Some(c) => {
                            format!(
                                "column {} (`{}`): cannot read {:?}: {}",
                                c + 1,
                                self.headers.get(c).unwrap_or("?"),
                                record.get(c).unwrap_or(""),
                                err.kind()
                            )
                        }
                        None => err.kind().to_string(),
                    }
                }
                _ => e.to_string(),
            };
            self.record_error(record, &message)
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
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
        assert_eq!(s.name, "herd");
        let p = &s.points[0];
        assert_eq!(p.capacity.as_ref().unwrap().per_bucket, 100.0);
        assert_eq!(p.capacity_rps.as_ref().unwrap().0, 10_000.0);
        assert_eq!(p.faults[0].end_ms, 5000.0);
        assert!(p.faults[0].effective && p.burst);
        assert_eq!(s.roles, []);
        assert_eq!(s.min_success, None);
        let bad = ScenarioInfo::parse(Path::new("scenario.toml"), "output = { bucket = 3 }");
        assert!(matches!(bad, Err(Error::ResultFolder { .. })));
    }

    /// A fresh folder under the temp dir (the output tests' scratch space).
    pub(crate) fn temp(label: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("jitterlab-rows-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn summary_row(strategy: &str) -> SummaryRow {
        SummaryRow {
            point: 0,
            strategy: strategy.into(),
            replication: 0,
            seed: 7,
            sweep: vec!["50ms".into()],
            metrics: PerMetric::from_fn(|m| m as usize as f64 / 3.0),
        }
    }

    fn aggregate_row(metric: Metric) -> AggregateRow {
        AggregateRow {
            point: 0,
            strategy: "full".into(),
            sweep: vec!["50ms".into()],
            metric,
            mean: Some(0.1 + 0.2),
            sd: None,
            ci95_low: Some(-1e-9),
            ci95_high: Some(1234.5),
            n: 1,
        }
    }

    /// Writes a folder of one point with the writer's own code.
    fn write_folder(dir: &Path) -> (Vec<AggregateRow>, Vec<TimeseriesRow>, Vec<ParetoRow>) {
        use crate::output::csv::write_rows;
        let keys = ["backoff.base".to_string()];
        let sweep = vec!["50ms".to_string()];
        let aggregate: Vec<AggregateRow> = Metric::ALL.into_iter().map(aggregate_row).collect();
        let timeseries = vec![TimeseriesRow {
            point: 0,
            strategy: "full".into(),
            sweep: sweep.clone(),
            t_ms: 12.5,
            arrivals: 9,
            first_attempts: 4,
            retries: 5,
            successes: 3,
            rejections: 2,
            timeouts: 1,
            in_system: 6,
            retry_dispersion: Some(2.5),
        }];
        let pareto = vec![ParetoRow {
            point: 0,
            strategy: "full".into(),
            sweep: sweep.clone(),
            amplification: Some(1.5),
            latency_p99_ms: None,
            on_front: true,
            recommended: false,
            success_rate: Some(0.5),
            eligible: Some(false),
        }];
        write_rows(dir, &keys, &[summary_row("full"), summary_row("no_jitter")]).unwrap();
        write_rows(dir, &keys, &aggregate).unwrap();
        write_rows(dir, &keys, &timeseries).unwrap();
        write_rows::<AttemptsRow>(dir, &keys, &[]).unwrap();
        write_rows::<LatencyRow>(dir, &keys, &[]).unwrap();
        write_rows(dir, &keys, &pareto).unwrap();
        (aggregate, timeseries, pareto)
    }

    #[test]
    fn names_are_shown_short_and_escaped_and_never_merged() {
        let dir = temp("display");
        write_folder(&dir);
        let mut folder = ResultFolder::read(&dir).unwrap();
        let long = |tail: &str| format!("{}{tail}", "x".repeat(100));
        // Two long names alike at both ends stay two strategies.
        folder.strategies = vec![long("\u{1b}a"), long("\u{1b}b"), "plain".into()];
        folder.summary[0].strategy = long("\u{1b}b");
        let shown = folder.for_display();
        assert_eq!(shown.strategies.len(), 3);
        assert_ne!(shown.strategies[0], shown.strategies[1]);
        assert_eq!(shown.strategies[2], "plain");
        assert_eq!(shown.summary[0].strategy, shown.strategies[1]);
        for s in &shown.strategies {
            assert!(
                s.chars().count() < 100 && !s.chars().any(crate::text::is_unsafe),
                "{s}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rows_written_are_read_back_the_same() {
        let dir = temp("round-trip");
        let (aggregate, timeseries, pareto) = write_folder(&dir);
        let folder = ResultFolder::read(&dir).unwrap();
        assert_eq!(folder.sweep_keys, ["backoff.base"]);
        assert_eq!(folder.strategies, ["full", "no_jitter"]);
        assert_eq!(
            folder.points,
            [Point {
                index: 0,
                values: vec!["50ms".into()]
            }]
        );
        assert_eq!(
            folder.summary,
            [summary_row("full"), summary_row("no_jitter")]
        );
        assert_eq!(folder.aggregate, aggregate);
        assert_eq!(folder.timeseries, timeseries);
        assert_eq!(folder.pareto.as_deref(), Some(&pareto[..]));
        assert!(folder.compare.is_none() && folder.scenario.is_none());
        assert_eq!(
            folder.aggregate_of(0, "full", Metric::LatencyP99Ms),
            Some(&aggregate_row(Metric::LatencyP99Ms))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn aggregate_lookups_agree_with_a_scan_before_and_after_the_rows_change() {
        let mut f = ResultFolder::empty("index");
        for point in 0..50 {
            for strategy in ["a", "b"] {
                for metric in [Metric::Requests, Metric::SuccessRate] {
                    f.aggregate.push(AggregateRow {
                        point,
                        strategy: strategy.into(),
                        mean: Some(f64::from(point)),
                        ..aggregate_row(metric)
                    });
                }
            }
        }
        let scan = |f: &ResultFolder, p: u32, s: &str, m: Metric| {
            f.aggregate
                .iter()
                .find(|r| r.point == p && r.strategy == s && r.metric == m)
                .cloned()
        };
        let keys = [
            (7, "a", Metric::Requests),
            (49, "b", Metric::SuccessRate),
            (3, "c", Metric::Requests),
            (50, "a", Metric::Requests),
            (1, "a", Metric::Attempts),
        ];
        for (p, s, m) in keys {
            assert_eq!(f.aggregate_of(p, s, m).cloned(), scan(&f, p, s, m));
        }
        // Rows removed or replaced after the index was built are never answered from it.
        f.aggregate.retain(|r| r.point != 7);
        f.aggregate[0].strategy = "c".into();
        f.aggregate[0].point = 3;
        for (p, s, m) in keys {
            assert_eq!(f.aggregate_of(p, s, m).cloned(), scan(&f, p, s, m));
        }
        assert!(f.aggregate_of(7, "a", Metric::Requests).is_none());
        assert!(f.aggregate_of(3, "c", Metric::Requests).is_some());
    }

    #[test]
    fn a_bad_cell_names_its_line_and_column_and_an_unknown_metric_the_known_ones() {
        let dir = temp("bad-cells");
        write_folder(&dir);
        let error = |file: &str, from: &str, to: &str| {
            let path = dir.join(file);
            let good = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, good.replacen(from, to, 1)).unwrap();
            let message = match ResultFolder::read(&dir) {
                Err(Error::ResultFolder { path, message }) => {
                    assert!(path.ends_with(file), "{}", path.display());
                    message
                }
                other => panic!("expected a result folder error, got {other:?}"),
            };
            std::fs::write(&path, good).unwrap();
            message
        };
        let m = error("timeseries.csv", ",9,4,", ",9,four,");
        assert!(
            m.contains("line 2") && m.contains("`first_attempts`") && m.contains("\"four\""),
            "{m}"
        );
        let m = error("aggregate.csv", ",latency_p99_ms,", ",latency_p98_ms,");
        assert!(
            m.contains("\"latency_p98_ms\"") && m.contains("latency_p999_ms"),
            "{m}"
        );
        let m = error("summary.csv", ",events", ",evnts");
        assert!(m.contains("no column `events`"), "{m}");
        // Numbers the writer never writes: NaN and infinities.
        let m = error("aggregate.csv", ",1234.5,", ",inf,");
        assert!(
            m.contains("line 2, column 8 (`ci95_high`)") && m.contains("not a finite number"),
            "{m}"
        );
        let m = error("summary.csv", ",0.3333333333333333,", ",NaN,");
        assert!(m.contains("line 2, column") && m.contains("\"NaN\""), "{m}");
        let m = error("timeseries.csv", ",12.5,", ",-inf,");
        assert!(m.contains("(`t_ms`)") && m.contains("not a finite"), "{m}");
        let m = error("pareto.csv", ",true,", ",yes,");
        assert!(m.contains("`on_front`") && m.contains("\"yes\""), "{m}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
