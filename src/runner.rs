//! The `run` and `merge` commands as library calls: plan the units, run them (or the shard's
//! share, or what a resume still needs), and write the result folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::atomic::write_atomic;
use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::metric::{PerMetric, estimates};
use crate::output::stage::Stage;
use crate::output::{csv, owned};
use crate::scenario::{Point, Scenario, ScenarioDoc};
use crate::sim::{DelaySource, Model, Strategy};
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
    /// The files of the result, `meta.json` included: what jitterlab can prove it wrote
    /// there ([`owned::Ownership`]); `plot` and `recommend` add theirs.
    files: Vec<String>,
    /// The delay sources of [`run_with_sources`], in scenario order; absent without any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sources: Vec<SourceMeta>,
}

/// A strategy's delay source, as meta.json records it.
#[derive(Serialize, Clone)]
struct SourceMeta {
    strategy: String,
    /// [`DelaySource::describe`].
    source: String,
}

/// A scenario document ready to run: its checked points, the resolved text and the journal
/// header that identifies the work.
struct Prepared {
    base: Scenario,
    plan: Plan,
    resolved: String,
    units: Vec<sweep::Unit>,
    header: Header,
    /// The delay sources attached ([`Prepared::attach`]).
    sources: Vec<SourceMeta>,
}

impl Prepared {
    fn new(doc: &ScenarioDoc, cancel: &CancelToken) -> Result<Prepared> {
        Prepared::of_points(doc, doc.points_until(cancel)?)
    }

    /// The work of `doc`, whose points are `points` (checked already).
    fn of_points(doc: &ScenarioDoc, points: Vec<Point>) -> Result<Prepared> {
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
    fn attach(&mut self, sources: &[(&str, Arc<dyn DelaySource>)]) -> Result<()> {
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
    fn write_results(
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
        let mut files = vec![dir.join("scenario.toml"), dir.join(journal::JOURNAL)];
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
fn commit(
    stage: Stage,
    mut meta: Meta<'_>,
    files: &[PathBuf],
    extra: serde_json::Map<String, serde_json::Value>,
) -> Result<Vec<PathBuf>> {
    let path = stage.path().join("meta.json");
    meta.files = files
        .iter()
        .filter_map(|f| f.file_name()?.to_str().map(str::to_string))
        .chain(["meta.json".to_string()])
        .collect();
    let mut value = serde_json::to_value(&meta).map_err(|e| Error::io(&path, e.into()))?;
    if let serde_json::Value::Object(map) = &mut value {
        map.extend(extra);
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| Error::io(&path, e.into()))?;
    write_atomic(&path, text.as_bytes())?;
    stage.commit()
}

/// Why a journal of a result folder is not of `prep`'s work: the first line where the
/// resolved scenario it was run with (the `scenario.toml` beside it) differs.
fn other_work(dir: &Path, prep: &Prepared) -> Error {
    let before = crate::input::read_text(&dir.join("scenario.toml"), crate::input::SCENARIO);
    let difference = before.ok().and_then(|old| {
        let (mut a, mut b) = (old.lines(), prep.resolved.lines());
        (1..).find_map(|n| match (a.next(), b.next()) {
            (None, None) => Some(None),
            (x, y) if x == y => None,
            (x, y) => Some(Some(format!(
                " (scenario.toml line {n}: {} there, {} now)",
                x.map_or("nothing".into(), |l| format!("`{}`", crate::text::shown(l))),
                y.map_or("nothing".into(), |l| format!("`{}`", crate::text::shown(l))),
            ))),
        })?
    });
    let difference = difference.unwrap_or_else(|| other_sources(dir, prep));
    Error::ResultFolder {
        path: dir.to_path_buf(),
        message: format!(
            "its journal is of a different scenario or options{difference}; run without --resume to start over"
        ),
    }
}

/// The difference between the delay sources (`run_with_sources`) that `dir`'s units ran with,
/// as its `meta.json` records them, and `prep`'s: for a journal whose scenario is the same.
fn other_sources(dir: &Path, prep: &Prepared) -> String {
    let listed = |sources: &mut dyn Iterator<Item = (String, String)>| {
        let all: Vec<String> = sources.map(|(s, d)| format!("{s:?} from {d:?}")).collect();
        if all.is_empty() {
            "the built-in kinds".to_string()
        } else {
            all.join(", ")
        }
    };
    let now = listed(
        &mut prep
            .sources
            .iter()
            .map(|s| (s.strategy.clone(), s.source.clone())),
    );
    let recorded = crate::output::owned::read_meta(dir).map(|meta| {
        let sources = meta.get("sources").and_then(|s| s.as_array()).cloned();
        let text = |v: &serde_json::Value, k: &str| v.get(k)?.as_str().map(str::to_string);
        let pairs = sources.unwrap_or_default().into_iter();
        listed(&mut pairs.filter_map(|v| Some((text(&v, "strategy")?, text(&v, "source")?))))
    });
    match recorded {
        Some(then) if then != now => {
            format!(" (the same scenario.toml, run with delay sources {then}; this run has {now})")
        }
        _ => format!(" (the same scenario.toml; this run's delay sources: {now})"),
    }
}

/// `shard 0/2`, or `the whole run`.
fn describe_shard(shard: Shard) -> String {
    if shard.is_all() {
        "the whole run".into()
    } else {
        format!("shard {}/{}", shard.index, shard.count)
    }
}

/// The units a `--resume` keeps: those of the interrupted run in the stage, else those of the
/// folder's own journal (a finished run or shard, which the resumed run's stage starts from);
/// none without a journal. A journal of other work is refused with the reason, and so is one
/// holding a unit that this run's shard does not: a resume never discards a finished unit.
/// The records decide, not the header's shard: a shard's journal written before headers named
/// their shard reads as the whole run's. Also says whether the stage's journal can be
/// appended to as it is (it is there, and its header names this run's shard).
fn resumed(
    dir: &Path,
    stage: &Stage,
    prep: &Prepared,
    shard: Shard,
) -> Result<(Vec<UnitRecord>, bool)> {
    let staged = stage.has_journal();
    let from = if staged { stage.path() } else { dir };
    if from.join(journal::JOURNAL).symlink_metadata().is_err() {
        return Ok((Vec::new(), false));
    }
    let (found, records) = journal::read_checked(from, &prep.header, &prep.plan)?
        .ok_or_else(|| other_work(from, prep))?;
    if let Some(foreign) = records.iter().find(|r| !shard.owns(r.unit)) {
        return Err(not_this_shard(dir, found, &records, foreign.unit, shard));
    }
    Ok((records, staged && found == shard))
}

/// The refusal to resume, as `shard`, a journal of `records` (its header says `found`) that
/// holds `unit`, which is not one of `shard`'s.
fn not_this_shard(
    dir: &Path,
    found: Shard,
    records: &[UnitRecord],
    unit: usize,
    shard: Shard,
) -> Error {
    // A header without a shard is the whole run's, or a shard's from before headers named
    // theirs: its records say which units it holds, not which shard it was.
    let advice = if found.is_all() {
        "resume with the --shard it was run with (its meta.json says which)".to_string()
    } else {
        format!("resume with --shard {}/{}", found.index, found.count)
    };
    Error::ResultFolder {
        path: dir.to_path_buf(),
        message: format!(
            "its journal holds {} finished units, unit {unit} among them, which {} does not hold: a resume keeps every finished unit, so {advice}, or run {} into a folder of its own and combine the shards with `jitterlab merge`",
            records.len(),
            describe_shard(shard),
            describe_shard(shard),
        ),
    }
}

/// Runs a scenario document (overrides already applied) into its result folder, reporting to
/// `progress` as units finish. Once `cancel` is cancelled the runs in flight stop, and the call
/// returns [`Error::Interrupted`], with the finished units kept in the journal of the folder's
/// stage ([`Stage`]) for `--resume`. The old results in the folder stay until the new ones
/// are complete, then are replaced whole.
pub fn run(
    doc: &ScenarioDoc,
    options: &RunOptions,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> Result<RunReport> {
    run_points(doc, doc.points_until(cancel)?, options, cancel, progress)
}

/// [`run`], with user-supplied backoffs: each `(name, source)` replaces the backoff of the
/// scenario's strategy `name` (its sleeps are drawn from `source`, see
/// [`crate::sim::source`]), so that any backoff code runs through any scenario into the same
/// result files. The scenario file still names the strategy's built-in kind; the result
/// folder's `scenario.toml` shows that kind, and `meta.json`'s `command` is the caller's to
/// describe what ran. A name that is no strategy of the scenario is refused before anything
/// is written, and so is a source for a strategy with unlimited attempts where
/// `network.latency` is zero (a source that sleeps zero would retry forever at one instant).
pub fn run_with_sources(
    doc: &ScenarioDoc,
    options: &RunOptions,
    sources: &[(&str, Arc<dyn DelaySource>)],
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> Result<RunReport> {
    let mut prep = Prepared::new(doc, cancel)?;
    prep.attach(sources)?;
    run_prepared(doc, prep, options, cancel, progress)
}

/// [`run`] of `doc`'s points checked already ([`ScenarioDoc::points_until`]), so that a
/// caller that looked at them first (for their warnings) does not check a large sweep twice.
pub fn run_points(
    doc: &ScenarioDoc,
    points: Vec<Point>,
    options: &RunOptions,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> Result<RunReport> {
    run_prepared(
        doc,
        Prepared::of_points(doc, points)?,
        options,
        cancel,
        progress,
    )
}

/// Runs `prep`, the work of `doc`, into its result folder.
fn run_prepared(
    doc: &ScenarioDoc,
    prep: Prepared,
    options: &RunOptions,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> Result<RunReport> {
    // Refused before anything is written.
    let owned = prep.units.iter().filter(|u| options.shard.owns(u.index));
    let threads = sweep::threads_for(options.threads, owned.count())?;
    if !options.force {
        prep.plan.check_share(threads, options.shard)?;
    }
    let dir = options
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(&prep.base.name));
    owned::claim(&dir, "--out", options.force)?;
    let created = create_folder(&dir)?;
    // A resume keeps every finished unit, or refuses; anything else starts a new stage.
    let stage = Stage::open(&dir, options.resume).inspect_err(|_| remove_created(&dir, created))?;
    match run_staged(&prep, &dir, &stage, threads, options, cancel, progress) {
        Ok((meta, files, points)) => {
            let meta = Meta {
                shard: format!("{}/{}", options.shard.index, options.shard.count),
                ..meta.with(&prep, &options.command, doc.origin().to_string())
            };
            let complete = points.len() == prep.plan.points.len() && !points.is_empty();
            let files = commit(stage, meta, &files, serde_json::Map::new())?;
            Ok(RunReport {
                dir,
                complete,
                points,
                files,
            })
        }
        Err(e) => {
            // An interrupted run or a failed one keeps its finished units for --resume;
            // nothing else of it stays.
            stage.abandon(true);
            remove_created(&dir, created);
            Err(e)
        }
    }
}

/// Creates the folder `dir`; true when it was not there.
fn create_folder(dir: &Path) -> Result<bool> {
    let created = dir.symlink_metadata().is_err();
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    Ok(created)
}

/// Removes `dir` when this run `created` it and it is empty (a run that failed).
fn remove_created(dir: &Path, created: bool) {
    if created {
        let _ = std::fs::remove_dir(dir);
    }
}

/// The figures of a run for its meta.json.
struct Figures {
    units_run: usize,
    threads: usize,
    wall_seconds: f64,
    events: u64,
}

impl Figures {
    fn with<'a>(&self, prep: &Prepared, command: &'a str, scenario: String) -> Meta<'a> {
        let wall = self.wall_seconds;
        Meta {
            units_run: self.units_run,
            threads: self.threads,
            wall_seconds: wall,
            events: self.events,
            events_per_second: if wall > 0.0 {
                self.events as f64 / wall
            } else {
                0.0
            },
            ..prep.meta(command, scenario)
        }
    }
}

/// The work of [`run_points`] in its locked `stage`, up to the commit: the units to run, the
/// journal, the run, the result files. Returns the figures for meta.json, the files written
/// and the summary of every point (empty unless the folder holds every unit).
fn run_staged(
    prep: &Prepared,
    dir: &Path,
    stage: &Stage,
    threads: usize,
    options: &RunOptions,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> Result<(Figures, Vec<PathBuf>, Vec<PointSummary>)> {
    let header = prep.header.for_shard(options.shard);
    let (kept, staged) = if options.resume {
        resumed(dir, stage, prep, options.shard)?
    } else {
        (Vec::new(), false)
    };
    let mut done: BTreeMap<usize, UnitRecord> = kept.into_iter().map(|r| (r.unit, r)).collect();
    let todo: Vec<sweep::Unit> = prep
        .units
        .iter()
        .copied()
        .filter(|u| options.shard.owns(u.index) && !done.contains_key(&u.index))
        .collect();
    let threads = sweep::threads_for(threads, todo.len())?;
    write_atomic(
        &stage.path().join("scenario.toml"),
        prep.resolved.as_bytes(),
    )?;
    let mut writer = JournalWriter::open(stage.path(), &header, !staged)?;
    if !staged {
        // Units of the folder's own journal, or of a staged one whose header names another
        // shard, go on in a journal of this run's shard.
        for record in done.values() {
            writer.append(record)?;
        }
    }
    let writer = Mutex::new(writer);

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
    let (mut files, points) =
        prep.write_results(stage.path(), &header, &records, &written, threads)?;
    // A shard or an interrupted run writes no palette, as it writes no CSV file.
    if records.len() == prep.units.len() {
        files.push(prep.write_palette(stage.path())?);
    }
    let figures = Figures {
        units_run: ran,
        threads,
        wall_seconds: wall,
        events,
    };
    Ok((figures, files, points))
}

/// A result folder claimed for results computed elsewhere (`jitterlab live`): checked before
/// the work, as `run` does, and written after it, whole.
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
        let prep = Prepared::new(doc, &CancelToken::new())?;
        let dir = out.unwrap_or_else(|| Path::new("out").join(&prep.base.name));
        owned::claim(&dir, "--out", force)?;
        Ok(Folder { prep, dir })
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
        let dir = &self.dir;
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let stage = Stage::open(dir, false)?;
        let staged = || -> Result<(Vec<PathBuf>, Vec<PointSummary>)> {
            write_atomic(
                &stage.path().join("scenario.toml"),
                self.prep.resolved.as_bytes(),
            )?;
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
    // Each shard is checked before any is read, the first one's scenario included.
    for dir in dirs {
        finished_shard(dir)?;
    }
    let prep = Prepared::new(
        &ScenarioDoc::load(&first.join("scenario.toml"))?,
        &CancelToken::new(),
    )?;
    let mut all: BTreeMap<usize, UnitRecord> = BTreeMap::new();
    for dir in dirs {
        let (_, records) =
            journal::read_checked(dir, &prep.header, &prep.plan)?.ok_or_else(|| {
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
    let stage = Stage::open(out, false)?;
    let staged = || {
        write_atomic(
            &stage.path().join("scenario.toml"),
            prep.resolved.as_bytes(),
        )?;
        let (mut files, points) =
            prep.write_results(stage.path(), &prep.header, &records, &Written::default(), 1)?;
        files.push(prep.write_palette(stage.path())?);
        Ok((files, points))
    };
    let (files, points) = match staged() {
        Ok(written) => written,
        Err(e) => {
            stage.abandon(false);
            return Err(e);
        }
    };
    let meta = Meta {
        shard: "merged".into(),
        events: records.iter().map(UnitRecord::events).sum(),
        ..prep.meta(command, first.join("scenario.toml").display().to_string())
    };
    let files = commit(stage, meta, &files, serde_json::Map::new())?;
    Ok(RunReport {
        dir: out.into(),
        complete: true,
        points,
        files,
    })
}

/// Refuses a shard folder for `merge` whose run was interrupted before its first result:
/// its units are in its staging folder, and its own files are none or an earlier run's.
fn finished_shard(dir: &Path) -> Result<()> {
    if dir.join(journal::JOURNAL).symlink_metadata().is_err()
        && journal::is_journal(&dir.join(owned::STAGE))
    {
        return Err(Error::ResultFolder {
            path: dir.to_path_buf(),
            message: "holds a run that was interrupted (its units are in the staging folder .jitterlab-partial): finish it with `jitterlab run ... --resume` and the same --shard, then merge".into(),
        });
    }
    Ok(())
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
