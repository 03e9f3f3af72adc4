//! The `run` and `merge` commands as library calls: plan the units, run them (or the shard's
//! share, or what a resume still needs), and write the result folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use crate::atomic::write_atomic;
use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::metric::{PerMetric, estimates};
use crate::output::{csv, owned};
use crate::scenario::{Scenario, ScenarioDoc};
use crate::stats::Estimate;
use crate::sweep::journal::{self, Header, JournalWriter, UnitRecord, Written};
use crate::sweep::{self, Plan, Progress, Shard};

/// Options of `jitterlab run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Output folder (default `out/<name>`).
    pub out: Option<PathBuf>,
    /// Worker threads (0: one per core); never more than the units to run, at most
    /// [`sweep::MAX_THREADS`].
    pub threads: usize,
    /// The share of the units to run.
    pub shard: Shard,
    /// Continue a partial run in `out`.
    pub resume: bool,
    /// Go ahead even when the work estimate is over its limits ([`Plan::check_work`]), and
    /// write into `out` even when it holds files and is not a result folder (replacing only
    /// the files jitterlab owns, [`crate::output::owned`]).
    pub force: bool,
    /// The command line, for meta.json.
    pub command: String,
}

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

#[derive(Serialize)]
struct Meta<'a> {
    version: &'a str,
    command: &'a str,
    scenario: String,
    seed: u64,
    replications: u32,
    points: usize,
    strategies: usize,
    units: usize,
    units_run: usize,
    shard: String,
    threads: usize,
    wall_seconds: f64,
    events: u64,
    events_per_second: f64,
}

/// A scenario document ready to run: its checked points, the resolved text and the journal
/// header that identifies the work.
struct Prepared {
    base: Scenario,
    plan: Plan,
    resolved: String,
    units: Vec<sweep::Unit>,
    header: Header,
}

impl Prepared {
    fn new(doc: &ScenarioDoc) -> Result<Prepared> {
        let base = doc.base()?;
        let plan = Plan::new(doc.sweep()?, doc.points()?)?;
        let resolved = base.to_toml(doc.sweep_table());
        let units = plan.units();
        let header = Header {
            jitterlab_journal: 1,
            fingerprint: journal::fingerprint(&base.to_toml_for_runs(doc.sweep_table())),
            units: units.len(),
        };
        Ok(Prepared {
            base,
            plan,
            resolved,
            units,
            header,
        })
    }

    /// `palette.json`: the colour of each strategy, in the scenario's order.
    fn write_palette(&self, dir: &Path) -> Result<PathBuf> {
        let names: Vec<String> = self
            .base
            .strategies
            .iter()
            .map(|s| s.name.clone())
            .collect();
        crate::output::palette::write(dir, &names)
    }

    /// meta.json with the fields every command fills the same way.
    fn meta<'a>(&self, command: &'a str, scenario: String) -> Meta<'a> {
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
        }
    }

    /// Writes the result files of `records` into `dir`: the journal in unit order (reusing
    /// what this run `written`) and, when it holds every unit, the CSV files; returns the files
    /// written and the summary of every point (empty for a partial folder). With `threads`
    /// above 1 the journal and the time series are written on a thread of their own beside
    /// the other CSV files, which take about as long (after the 2015 sweep: 60 + 50 ms against
    /// 100 ms, mostly the kernel copying megabytes into files).
    fn write_results(
        &self,
        dir: &Path,
        records: &[UnitRecord],
        written: &Written,
        threads: usize,
    ) -> Result<(Vec<PathBuf>, Vec<PointSummary>)> {
        let complete = records.len() == self.units.len();
        let journal = || journal::finalize(dir, &self.header, records, written);
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
        let mut files = vec![dir.join("scenario.toml"), dir.join(journal::JOURNAL)];
        let Some((csvs, values)) = tables else {
            return Ok((files, Vec::new()));
        };
        files.extend(csvs);
        files.extend(series);
        Ok((files, summarize(&self.plan, &values)))
    }
}

fn write_meta(dir: &Path, meta: &Meta<'_>) -> Result<PathBuf> {
    let path = dir.join("meta.json");
    let text = serde_json::to_string_pretty(meta).map_err(|e| Error::io(&path, e.into()))?;
    write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// Runs a scenario document (overrides already applied) into its result folder, reporting to
/// `progress` as units finish. Once `cancel` is cancelled no further unit starts and the call
/// returns [`Error::Interrupted`], with the finished units kept in the journal for `--resume`.
pub fn run(
    doc: &ScenarioDoc,
    options: &RunOptions,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> Result<RunReport> {
    let prep = Prepared::new(doc)?;
    // Refused before anything is written.
    let owned = prep.units.iter().filter(|u| options.shard.owns(u.index));
    let threads = sweep::threads_for(options.threads, owned.count())?;
    if !options.force {
        prep.plan.check_work(threads)?;
    }
    let dir = options
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(&prep.base.name));
    owned::claim(&dir, "--out", options.force)?;
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;

    let mut done: BTreeMap<usize, UnitRecord> = BTreeMap::new();
    // A resume without a journal starts from the beginning; a file that is not a jitterlab
    // journal, or the journal of other work, is refused rather than replaced.
    if options.resume && dir.join(journal::JOURNAL).exists() {
        let records = journal::read_checked(&dir, &prep.header, &prep.plan)?.ok_or_else(|| Error::ResultFolder {
            path: dir.clone(),
            message: "its journal is of a different scenario or options; run without --resume to start over".into(),
        })?;
        done.extend(records.into_iter().map(|r| (r.unit, r)));
    }
    clear_stale(&dir)?;
    let todo: Vec<sweep::Unit> = prep
        .units
        .iter()
        .copied()
        .filter(|u| options.shard.owns(u.index) && !done.contains_key(&u.index))
        .collect();
    let threads = sweep::threads_for(threads, todo.len())?;
    write_atomic(&dir.join("scenario.toml"), prep.resolved.as_bytes())?;
    let writer = Mutex::new(JournalWriter::open(&dir, &prep.header, !options.resume)?);

    progress.start(todo.len(), done.len(), prep.units.len());
    let execution = sweep::execute(&prep.plan, &todo, threads, progress, Some(&writer), cancel);
    progress.finish();
    let execution = execution?;
    let written = writer
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_written();
    let (ran, events, wall) = (execution.ran, execution.events, execution.wall_seconds);
    done.extend(execution.records.into_iter().map(|r| (r.unit, r)));
    let records: Vec<UnitRecord> = done
        .into_values()
        .filter(|r| options.shard.owns(r.unit))
        .collect();
    let (mut files, points) = prep.write_results(&dir, &records, &written, threads)?;

    let meta = Meta {
        units_run: ran,
        shard: format!("{}/{}", options.shard.index, options.shard.count),
        threads,
        wall_seconds: wall,
        events,
        events_per_second: if wall > 0.0 {
            events as f64 / wall
        } else {
            0.0
        },
        ..prep.meta(&options.command, doc.origin().to_string())
    };
    files.push(write_meta(&dir, &meta)?);
    // A shard or an interrupted run writes no palette, as it writes no CSV file.
    if records.len() == prep.units.len() {
        files.push(prep.write_palette(&dir)?);
    }
    Ok(RunReport {
        dir,
        complete: records.len() == prep.units.len(),
        points,
        files,
    })
}

/// A result folder claimed for results computed elsewhere (`jitterlab live`): checked and
/// cleared before the work, as `run` does, and written after it.
#[cfg(feature = "live")]
pub(crate) struct Folder {
    prep: Prepared,
    /// The folder.
    pub dir: PathBuf,
}

#[cfg(feature = "live")]
impl Folder {
    /// Claims `out` (default `out/<name>`) for `doc`; refusals as for `run`.
    pub(crate) fn claim(doc: &ScenarioDoc, out: Option<PathBuf>, force: bool) -> Result<Folder> {
        let prep = Prepared::new(doc)?;
        let dir = out.unwrap_or_else(|| Path::new("out").join(&prep.base.name));
        owned::claim(&dir, "--out", force)?;
        Ok(Folder { prep, dir })
    }

    /// The plan of the scenario.
    pub(crate) fn plan(&self) -> &Plan {
        &self.prep.plan
    }

    /// Writes the scenario, the journal, the CSV files and `meta.json` (with `extra`'s
    /// fields added) for every unit's record, replacing the files of an earlier run.
    pub(crate) fn write(
        &self,
        records: &[UnitRecord],
        command: &str,
        origin: &str,
        threads: usize,
        wall_seconds: f64,
        extra: serde_json::Map<String, serde_json::Value>,
    ) -> Result<RunReport> {
        let dir = &self.dir;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        clear_stale(dir)?;
        write_atomic(&dir.join("scenario.toml"), self.prep.resolved.as_bytes())?;
        let (mut files, points) =
            self.prep
                .write_results(dir, records, &Written::default(), threads)?;
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
        let path = dir.join("meta.json");
        let mut value = serde_json::to_value(&meta).map_err(|e| Error::io(&path, e.into()))?;
        if let serde_json::Value::Object(map) = &mut value {
            map.extend(extra);
        }
        let text = serde_json::to_string_pretty(&value).map_err(|e| Error::io(&path, e.into()))?;
        write_atomic(&path, text.as_bytes())?;
        files.push(path);
        files.push(self.prep.write_palette(dir)?);
        Ok(RunReport {
            dir: dir.clone(),
            complete: records.len() == self.prep.units.len(),
            points,
            files,
        })
    }
}

/// Merges shard folders into `out`, identical to an unsharded run (meta.json aside). `out`
/// must be new, empty or a result folder unless `force` is given ([`owned::claim`]).
pub fn merge(dirs: &[PathBuf], out: &Path, command: &str, force: bool) -> Result<RunReport> {
    let first = dirs.first().ok_or_else(|| Error::Usage {
        arg: "merge".into(),
        message: "name at least one shard folder".into(),
    })?;
    owned::claim(out, "--out", force)?;
    let prep = Prepared::new(&ScenarioDoc::load(&first.join("scenario.toml"))?)?;
    let mut all: BTreeMap<usize, UnitRecord> = BTreeMap::new();
    for dir in dirs {
        let records = journal::read_checked(dir, &prep.header, &prep.plan)?.ok_or_else(|| {
            Error::ResultFolder {
                path: dir.clone(),
                message: format!("its scenario differs from {}'s", first.display()),
            }
        })?;
        all.extend(records.into_iter().map(|r| (r.unit, r)));
    }
    let total = prep.units.len();
    if all.len() != total {
        let missing: Vec<usize> = (0..total)
            .filter(|i| !all.contains_key(i))
            .take(5)
            .collect();
        return Err(Error::ResultFolder {
            path: out.into(),
            message: format!(
                "{} of {total} units are missing (first: {missing:?}); merge every shard",
                total - all.len()
            ),
        });
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let records: Vec<UnitRecord> = all.into_values().collect();
    clear_stale(out)?;
    write_atomic(&out.join("scenario.toml"), prep.resolved.as_bytes())?;
    let (mut files, points) = prep.write_results(out, &records, &Written::default(), 1)?;
    let meta = Meta {
        shard: "merged".into(),
        events: records.iter().map(UnitRecord::events).sum(),
        ..prep.meta(command, first.join("scenario.toml").display().to_string())
    };
    files.push(write_meta(out, &meta)?);
    files.push(prep.write_palette(out)?);
    Ok(RunReport {
        dir: out.into(),
        complete: true,
        points,
        files,
    })
}

/// Deletes the files of an earlier run in `dir` (CSVs, charts, report, meta.json) before a run
/// or merge writes its own, so that none of them outlives the results it came from; the
/// scenario and the journal are rewritten in place. Other files are never touched.
fn clear_stale(dir: &Path) -> Result<()> {
    let keep = [dir.join("scenario.toml"), dir.join(journal::JOURNAL)];
    owned::remove_stale(dir, owned::is_owned, &keep).map(drop)
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
