//! A scenario's results published as a result folder: the work prepared from a scenario
//! document (its plan, resolved text and journal header), and the folder's files written
//! from its units' records into the stage (the journal, the CSV files, the palette and, last,
//! `meta.json` listing them), then committed whole. `run` and `merge` publish what they
//! computed; `live` publishes what it measured ([`Claimed`]), without going through the
//! runner.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::atomic::write_atomic;
use crate::cancel::CancelToken;
use crate::error::{Error, Result};
#[cfg(feature = "live")]
use crate::folder::Folder;
use crate::folder::names::{JOURNAL, META, SCENARIO};
use crate::folder::stage::Stage;
use crate::metric::{PerMetric, estimates};
use crate::output::csv;
use crate::scenario::{Point, Scenario, ScenarioDoc};
use crate::sim::{DelaySource, Model, Strategy};
use crate::stats::Estimate;
use crate::sweep::journal::{self, Header, UnitRecord, Written};
use crate::sweep::{self, Plan};

/// What a run did.
#[derive(Debug)]
pub struct RunReport {
    /// The result folder.
    pub dir: PathBuf,
    /// True when every unit of the scenario is in the folder (CSV files written).
    pub complete: bool,
    /// Every point with its strategies' results (complete runs; empty for a shard).
    pub points: Vec<PointSummary>,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// One sweep point of a complete run.
#[derive(Debug, Clone)]
pub struct PointSummary {
    /// 0-based, in grid order.
    pub index: usize,
    /// `(dotted key, value)` for each sweep key (empty without a sweep).
    pub values: Vec<(String, toml::Value)>,
    /// Its strategies, in scenario order.
    pub strategies: Vec<StrategySummary>,
}

/// One strategy at one point: every metric across replications.
#[derive(Debug, Clone)]
pub struct StrategySummary {
    /// Strategy name.
    pub name: String,
    /// Mean and 95 % interval of every metric, as in `aggregate.csv`.
    pub estimates: PerMetric<Estimate>,
}

/// meta.json: what ran, its figures and the files written.
#[derive(Serialize)]
pub(crate) struct Meta<'a> {
    pub(crate) version: &'a str,
    pub(crate) command: &'a str,
    pub(crate) scenario: String,
    pub(crate) seed: u64,
    pub(crate) replications: u32,
    pub(crate) points: usize,
    pub(crate) strategies: usize,
    pub(crate) units: usize,
    pub(crate) units_run: usize,
    pub(crate) shard: String,
    pub(crate) threads: usize,
    pub(crate) wall_seconds: f64,
    pub(crate) events: u64,
    pub(crate) events_per_second: f64,
    /// The files of the result, `meta.json` included: what jitterlab can prove it wrote
    /// there ([`crate::folder::owned::Ownership`]); `plot` and `recommend` add theirs.
    pub(crate) files: Vec<String>,
    /// The delay sources of [`crate::runner::run_with_sources`], in scenario order; absent without any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) sources: Vec<SourceMeta>,
}

/// A strategy's delay source, as meta.json records it.
#[derive(Serialize, Clone)]
pub(crate) struct SourceMeta {
    pub(crate) strategy: String,
    /// [`DelaySource::describe`].
    pub(crate) source: String,
}

/// A scenario document ready to run: its checked points, the resolved text and the journal
/// header that identifies the work.
pub(crate) struct Prepared {
    pub(crate) base: Scenario,
    pub(crate) plan: Plan,
    pub(crate) resolved: String,
    pub(crate) units: Vec<sweep::Unit>,
    pub(crate) header: Header,
    /// The delay sources attached ([`Prepared::attach`]).
    pub(crate) sources: Vec<SourceMeta>,
}

impl Prepared {
    pub(crate) fn new(doc: &ScenarioDoc, cancel: &CancelToken) -> Result<Prepared> {
        Prepared::of_points(doc, doc.points_until(cancel)?)
    }

    /// The work of `doc`, whose points are `points` (checked already).
    pub(crate) fn of_points(doc: &ScenarioDoc, points: Vec<Point>) -> Result<Prepared> {
        let base = doc.base()?;
        let plan = Plan::new(doc.sweep()?, points)?;
        let resolved = base.to_toml(doc.sweep_table());
        let units = plan.units();
        let header = Header {
            jitterlab_journal: 1,
            fingerprint: journal::fingerprint(&base.to_toml_for_runs(doc.sweep_table())),
            units: units.len(),
            shard: None,
        };
        Ok(Prepared {
            base,
            plan,
            resolved,
            units,
            header,
            sources: Vec::new(),
        })
    }

    /// The strategies named in `sources` draw their sleeps from their source, at every
    /// point; a name that is no strategy of the scenario is refused. The sources'
    /// descriptions join the journal's fingerprint, so that a resume with other sources is
    /// refused, and meta.json's `sources`.
    pub(crate) fn attach(&mut self, sources: &[(&str, Arc<dyn DelaySource>)]) -> Result<()> {
        for (name, source) in sources {
            let scenarios = std::iter::once(&mut self.base)
                .chain(self.plan.points.iter_mut().map(|p| &mut p.scenario));
            for scenario in scenarios {
                let found = scenario.strategies.iter().position(|s| s.name == *name);
                let Some(i) = found else {
                    let names: Vec<&str> = scenario
                        .strategies
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect();
                    return Err(Error::invalid(
                        "delay source",
                        format!("{name:?}"),
                        format!(
                            "the name of a strategy of the scenario: {}",
                            names.join(", ")
                        ),
                    ));
                };
                zero_delays_end(&scenario.model, &scenario.strategies[i], i)?;
                scenario.strategies[i].source = Some(source.clone());
            }
        }
        let described = |s: &crate::sim::Strategy| {
            let source = s.source.as_ref()?;
            Some(SourceMeta {
                strategy: s.name.clone(),
                source: source.describe(),
            })
        };
        self.sources = self.base.strategies.iter().filter_map(described).collect();
        if !self.sources.is_empty() {
            let text: String = self
                .sources
                .iter()
                .map(|s| format!("\nsource {:?} = {:?}", s.strategy, s.source))
                .collect();
            self.header.fingerprint =
                journal::fingerprint(&format!("{}{text}", self.header.fingerprint));
        }
        Ok(())
    }

    /// `palette.json`: the colour of each strategy, in the scenario's order.
    pub(crate) fn write_palette(&self, dir: &Path) -> Result<PathBuf> {
        let names: Vec<String> = self
            .base
            .strategies
            .iter()
            .map(|s| s.name.clone())
            .collect();
        crate::output::palette::write(dir, &names)
    }

    /// meta.json with the fields every command fills the same way.
    pub(crate) fn meta<'a>(&self, command: &'a str, scenario: String) -> Meta<'a> {
        Meta {
            version: env!("CARGO_PKG_VERSION"),
            command,
            scenario,
            seed: self.plan.seed,
            replications: self.plan.replications,
            points: self.plan.points.len(),
            strategies: self.base.strategies.len(),
            units: self.units.len(),
            units_run: 0,
            shard: String::new(),
            threads: 0,
            wall_seconds: 0.0,
            events: 0,
            events_per_second: 0.0,
            files: Vec::new(),
            sources: self.sources.clone(),
        }
    }

    /// Writes the result files of `records` into `dir`: the journal in unit order (reusing
    /// what this run `written`) and, when it holds every unit, the CSV files; returns the files
    /// written and the summary of every point (empty for a partial folder). With `threads`
    /// above 1 the journal and the time series are written on a thread of their own beside
    /// the other CSV files, which take about as long (after the 2015 sweep: 60 + 50 ms against
    /// 100 ms, mostly the kernel copying megabytes into files).
    pub(crate) fn write_results(
        &self,
        dir: &Path,
        header: &Header,
        records: &[UnitRecord],
        written: &Written,
        threads: usize,
    ) -> Result<(Vec<PathBuf>, Vec<PointSummary>)> {
        let complete = records.len() == self.units.len();
        let journal = || journal::finalize(dir, header, records, written);
        let series = || {
            complete
                .then(|| csv::write_timeseries(dir, &self.plan, records))
                .transpose()
        };
        // The other CSV files and every unit's metrics; none for a partial folder.
        type Tables = Option<(Vec<PathBuf>, Vec<PerMetric<f64>>)>;
        let tables = || -> Result<Tables> {
            if !complete {
                return Ok(None);
            }
            let values: Vec<PerMetric<f64>> = records.iter().map(PerMetric::measure).collect();
            let files = csv::write_all(dir, &self.plan, records, &values)?;
            Ok(Some((files, values)))
        };
        let (series, tables) = if threads > 1 && complete {
            let (journal_and_series, tables) = std::thread::scope(|s| {
                let other = s.spawn(|| journal().and_then(|()| series()));
                let tables = tables();
                let other = other
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (other, tables)
            });
            (journal_and_series?, tables?)
        } else {
            journal()?;
            let tables = tables()?;
            (series()?, tables)
        };
        let mut files = vec![dir.join(SCENARIO), dir.join(JOURNAL)];
        let Some((csvs, values)) = tables else {
            return Ok((files, Vec::new()));
        };
        files.extend(csvs);
        files.extend(series);
        Ok((files, summarize(&self.plan, &values)))
    }
}

/// Refuses a delay source for `strategy` when nothing would end a request whose source
/// sleeps zero: with zero network latency and unlimited attempts the client would retry
/// forever at one instant (virtual time would never advance), as the scenario check refuses
/// for jitter "none".
fn zero_delays_end(model: &Model, strategy: &Strategy, i: usize) -> Result<()> {
    if !model.latency.is_zero() || strategy.client_config(&model.client).max_attempts.is_some() {
        return Ok(());
    }
    let key = if strategy.client.max_attempts.is_some() {
        format!("backoff.strategies[{i}].max_attempts")
    } else {
        "client.max_attempts".to_string()
    };
    Err(Error::invalid(
        key,
        "\"unlimited\"",
        format!(
            "a number when strategy {:?} draws its sleeps from a delay source and network.latency is zero: a source that sleeps zero would retry forever at one instant",
            strategy.name
        ),
    ))
}

/// Writes `meta` (with `extra`'s fields added) as the staged `meta.json`, listing `files` and
/// itself, then commits the stage: the new results replace the old ones whole. Returns the
/// files in the result folder.
pub(crate) fn commit(
    stage: Stage,
    mut meta: Meta<'_>,
    files: &[PathBuf],
    extra: serde_json::Map<String, serde_json::Value>,
) -> Result<Vec<PathBuf>> {
    let path = stage.path().join(META);
    meta.files = files
        .iter()
        .filter_map(|f| f.file_name()?.to_str().map(str::to_string))
        .chain([META.to_string()])
        .collect();
    let mut value = serde_json::to_value(&meta).map_err(|e| Error::io(&path, e.into()))?;
    if let serde_json::Value::Object(map) = &mut value {
        map.extend(extra);
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| Error::io(&path, e.into()))?;
    write_atomic(&path, text.as_bytes())?;
    stage.commit()
}

/// A result folder claimed for results computed elsewhere (`jitterlab live`): checked before
/// the work, as `run` does, and written after it, whole.
#[cfg(feature = "live")]
pub(crate) struct Claimed {
    prep: Prepared,
    folder: Folder,
}

#[cfg(feature = "live")]
impl Claimed {
    /// Claims `out` (default `out/<name>`) for `doc`; refusals as for `run`.
    pub(crate) fn claim(doc: &ScenarioDoc, out: Option<PathBuf>, force: bool) -> Result<Claimed> {
        let prep = Prepared::new(doc, &CancelToken::new())?;
        let dir = out.unwrap_or_else(|| Path::new("out").join(&prep.base.name));
        let folder = Folder::claim(dir, force)?;
        Ok(Claimed { prep, folder })
    }

    /// The plan of the scenario.
    pub(crate) fn plan(&self) -> &Plan {
        &self.prep.plan
    }

    /// Writes the scenario, the journal, the CSV files, the files of `more` (which writes
    /// into the folder it is given and returns their paths) and `meta.json` (with `extra`'s
    /// fields added) for every unit's record, then replaces the files of an earlier run whole.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write(
        &self,
        records: &[UnitRecord],
        command: &str,
        origin: &str,
        threads: usize,
        wall_seconds: f64,
        extra: serde_json::Map<String, serde_json::Value>,
        more: &dyn Fn(&Path) -> Result<Vec<PathBuf>>,
    ) -> Result<RunReport> {
        self.folder.create()?;
        let stage = self.folder.stage(false)?;
        let staged = || -> Result<(Vec<PathBuf>, Vec<PointSummary>)> {
            write_atomic(&stage.path().join(SCENARIO), self.prep.resolved.as_bytes())?;
            let (mut files, points) = self.prep.write_results(
                stage.path(),
                &self.prep.header,
                records,
                &Written::default(),
                threads,
            )?;
            files.extend(more(stage.path())?);
            files.push(self.prep.write_palette(stage.path())?);
            Ok((files, points))
        };
        let (files, points) = match staged() {
            Ok(written) => written,
            Err(e) => {
                stage.abandon(false);
                return Err(e);
            }
        };
        let events: u64 = records.iter().map(UnitRecord::events).sum();
        let meta = Meta {
            units_run: records.len(),
            shard: "0/1".into(),
            threads,
            wall_seconds,
            events,
            events_per_second: if wall_seconds > 0.0 {
                events as f64 / wall_seconds
            } else {
                0.0
            },
            ..self.prep.meta(command, origin.to_string())
        };
        let files = commit(stage, meta, &files, extra)?;
        Ok(RunReport {
            dir: self.folder.dir().to_path_buf(),
            complete: records.len() == self.prep.units.len(),
            points,
            files,
        })
    }
}

/// Means and intervals across replications of every (point, strategy), as `aggregate.csv`
/// holds them, from the metric values of every unit in unit order.
fn summarize(plan: &Plan, values: &[PerMetric<f64>]) -> Vec<PointSummary> {
    let reps = plan.replications as usize;
    let mut offset = 0;
    plan.points
        .iter()
        .map(|point| PointSummary {
            index: point.index,
            values: point.values.clone(),
            strategies: point
                .scenario
                .strategies
                .iter()
                .map(|strategy| {
                    let runs = &values[offset..offset + reps];
                    offset += reps;
                    StrategySummary {
                        name: strategy.name.clone(),
                        estimates: estimates(runs),
                    }
                })
                .collect(),
        })
        .collect()
}
