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
use crate::error::{Error, Result};
use crate::metric::Metric;

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

mod numbers;
mod records;
mod scenario_info;
#[cfg(test)]
pub(crate) mod tests;

pub use numbers::sweep_value_number;
pub(crate) use numbers::{fmt_ms, fmt_ms_extra, fmt_number, fmt_number_extra};
use records::Table;
pub use scenario_info::{
    Capacity, FaultWindow, LayerInfo, PointInfo, ScenarioInfo, Shedder, StrategyInfo,
};

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
    /// A folder whose commit has not ended is refused: its files may be of two runs.
    pub fn read(dir: &Path) -> Result<ResultFolder> {
        if crate::folder::commit::pending(dir) {
            return Err(crate::folder::commit::pending_error(dir));
        }
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
            for info in s.points.iter_mut().flat_map(|p| p.strategies.iter_mut()) {
                map(&mut info.name);
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

    /// What the scenario says of strategy `strategy` at sweep point `point` (none without
    /// `scenario.toml`).
    pub fn strategy_info(&self, point: u32, strategy: &str) -> Option<&StrategyInfo> {
        (self.info(point)?.strategies.iter()).find(|s| s.name == strategy)
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

    /// Whether the runs have layers whose load `aggregate.csv` measured: then the pages
    /// name the whole chain's load, not only the clients' own attempts.
    pub fn layered(&self) -> bool {
        self.layers.is_some()
            && (self.aggregate.iter())
                .any(|r| r.metric == Metric::ChainAttempts && r.mean.is_some())
    }

    /// The attempts-per-request figure the pages name as the load ([`Metric::load`]).
    pub fn load_metric(&self) -> Metric {
        Metric::load(self.layered())
    }

    /// The total calls the pages name as the load ([`Metric::calls`]).
    pub fn calls_metric(&self) -> Metric {
        Metric::calls(self.layered())
    }

    /// The metric a page shows for `metric`: in a chain the whole chain's load for
    /// `attempts` and `amplification` (which count only the clients' own attempts there),
    /// else `metric`.
    pub fn as_load(&self, metric: Metric) -> Metric {
        match metric {
            Metric::Amplification => self.load_metric(),
            Metric::Attempts => self.calls_metric(),
            other => other,
        }
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
