//! The `run` and `merge` commands as library calls: plan the units, run them (or the shard's
//! share, or what a resume still needs), and write the result folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::atomic::write_atomic;
use crate::cancel::CancelToken;
use crate::error::{Error, Result, Setting};
use crate::folder::Folder;
use crate::folder::names::{JOURNAL, SCENARIO, STAGE};
use crate::folder::stage::Stage;
use crate::output::publish::{Meta, Prepared, commit};
pub use crate::output::publish::{PointSummary, RunReport, StrategySummary};
use crate::scenario::{Point, ScenarioDoc};
use crate::sim::DelaySource;
use crate::sweep::journal::{self, JournalWriter, UnitRecord, Written};
use crate::sweep::{self, Progress, Shard};

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
    /// Go ahead even when the work estimate is over its limits ([`crate::sweep::Plan::check_work`]), and
    /// write into `out` even when it holds files and is not a result folder (replacing only
    /// the files jitterlab owns, [`crate::folder::owned`]).
    pub force: bool,
    /// The command line, for meta.json.
    pub command: String,
}

/// The command line's name of a library option that an error names ([`Setting`]): what the
/// binary and the playground (whose page prints the `jitterlab run` command) show, so the
/// messages say what to type. Library callers read the field ([`Setting::field`]).
pub fn flag(setting: Setting) -> &'static str {
    match setting {
        Setting::ResumeRun => "`jitterlab run ... --resume`",
        Setting::Out => "--out",
        Setting::Threads => "--threads",
        Setting::Shard => "--shard",
        Setting::Resume => "--resume",
        Setting::Force | Setting::ReplacePlot => "--force",
        Setting::DelaysPlot => "--plot",
    }
}

/// Why a journal of a result folder is not of `prep`'s work: the first line where the
/// resolved scenario it was run with (the `scenario.toml` beside it) differs.
fn other_work(dir: &Path, prep: &Prepared) -> Error {
    let before = crate::input::read_text(&dir.join(SCENARIO), crate::input::SCENARIO);
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
            "its journal is of a different scenario or options{difference}; run without {} to start over",
            Setting::Resume
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
    let recorded = crate::folder::owned::read_meta(dir).map(|meta| {
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
    if from.join(JOURNAL).symlink_metadata().is_err() {
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
        format!(
            "resume with the {} it was run with (its meta.json says which)",
            Setting::Shard
        )
    } else {
        format!(
            "resume with {} {}/{}",
            Setting::Shard,
            found.index,
            found.count
        )
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
    let folder = Folder::claim(dir.clone(), options.force)?;
    let created = folder.create()?;
    // A resume keeps every finished unit, or refuses; anything else starts a new stage.
    let stage = folder
        .stage(options.resume)
        .inspect_err(|_| remove_created(&dir, created))?;
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
    write_atomic(&stage.path().join(SCENARIO), prep.resolved.as_bytes())?;
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

/// Merges shard folders into `out`, identical to an unsharded run (meta.json aside). `out`
/// must be new, empty or a result folder unless `force` is given ([`Folder::claim`]).
pub fn merge(dirs: &[PathBuf], out: &Path, command: &str, force: bool) -> Result<RunReport> {
    let first = dirs.first().ok_or_else(|| Error::Usage {
        arg: "merge".into(),
        message: "name at least one shard folder".into(),
    })?;
    let folder = Folder::claim(out.to_path_buf(), force)?;
    // Each shard is checked before any is read, the first one's scenario included.
    for dir in dirs {
        finished_shard(dir)?;
    }
    let prep = Prepared::new(
        &ScenarioDoc::load(&first.join(SCENARIO))?,
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
        for r in records {
            match all.get(&r.unit) {
                // The same unit in two folders: the same run, or one of them was edited.
                Some(kept) if *kept != r => {
                    return Err(Error::ResultFolder {
                        path: dir.join(JOURNAL),
                        message: format!(
                            "unit {} is recorded here with other values than in a folder before it (`counts`, `events` or another field differ): a unit is run once, so one of the two records was edited; merge each shard once",
                            r.unit
                        ),
                    });
                }
                _ => {
                    all.insert(r.unit, r);
                }
            }
        }
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
    folder.create()?;
    let records: Vec<UnitRecord> = all.into_values().collect();
    let stage = folder.stage(false)?;
    let staged = || {
        write_atomic(&stage.path().join(SCENARIO), prep.resolved.as_bytes())?;
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
        ..prep.meta(command, first.join(SCENARIO).display().to_string())
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
    if dir.join(JOURNAL).symlink_metadata().is_err() && journal::is_journal(&dir.join(STAGE)) {
        return Err(Error::ResultFolder {
            path: dir.to_path_buf(),
            message: format!(
                "holds a run that was interrupted (its units are in the staging folder {STAGE}): finish it with {} and the same {}, then merge",
                Setting::ResumeRun,
                Setting::Shard
            ),
        });
    }
    Ok(())
}
