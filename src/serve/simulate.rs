//! One simulation for the playground: the page's knob settings checked and turned into the
//! `--set KEY=VALUE`s they stand for, the scenario run by the runner of `jitterlab run` (same
//! seed, same bytes) into a private temporary folder, and what the page shows read back from
//! that folder before it is removed: the headline table, the charts as SVG, the CSV files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::runner::{self, PointSummary, RunOptions};
use crate::scenario::{Knob, ScenarioDoc};
use crate::sweep::{Progress, Shard};

use super::http::{encode, query_pairs};

/// The playground refuses a request whose runs together could take more events than this
/// (the work estimate of `jitterlab run`, [`crate::sim::work`], which counts every attempt
/// failing at once, so most settings take far less): at 2e9 one knob move could take 15 s;
/// at 1e9 about 7 s at most, while the top of the thundering herd's clients knob (an
/// estimate of 8.3e8, 1.7 s) still runs.
pub const MAX_EVENTS: f64 = 1e9;

/// A scenario and its knobs, ready to run at any setting of them.
pub struct Playground {
    doc: ScenarioDoc,
    knobs: Vec<Knob>,
    /// How `jitterlab run` names the scenario: a built-in's name, or the file as given.
    scenario_arg: String,
    temp: TempRoot,
}

/// A setting of the knobs: the `--set KEY=VALUE`s it stands for, in the knobs' order, and
/// the query string that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `KEY=VALUE`, as `--set` takes them.
    pub sets: Vec<String>,
    /// `key=text&...`, percent-encoded, in the knobs' order.
    pub query: String,
}

/// What a run gives the page.
pub struct Outcome {
    /// The headline table's points ([`crate::output::table`]).
    pub points: Vec<PointSummary>,
    /// The charts as SVG: `(stem, title, svg)`, the headline first.
    pub charts: Vec<(String, String, String)>,
    /// The result folder's CSV files and `scenario.toml`, `(name, bytes)`, by name.
    pub files: Vec<(String, Vec<u8>)>,
    /// What in the scenario can never act ([`ScenarioDoc::warnings_of`]).
    pub warnings: Vec<String>,
}

impl Playground {
    /// The playground of `doc`, named `scenario_arg` on the command line; its knobs checked
    /// ([`ScenarioDoc::knobs`]) and its private temporary folder made.
    pub fn new(doc: ScenarioDoc, scenario_arg: String) -> Result<Playground> {
        let knobs = doc.knobs()?;
        Ok(Playground {
            doc,
            knobs,
            scenario_arg,
            temp: TempRoot::new()?,
        })
    }

    /// The knobs, in the page's order.
    pub fn knobs(&self) -> &[Knob] {
        &self.knobs
    }

    /// The scenario as given.
    pub fn doc(&self) -> &ScenarioDoc {
        &self.doc
    }

    /// Reads a query string of knob settings (`backoff.cap=5s&...`): every key a knob of this
    /// scenario, once, with a value it offers. Keys that are no knob are refused, naming the
    /// knobs there are.
    pub fn settings(&self, query: &str) -> Result<Settings> {
        let pairs = query_pairs(query).ok_or_else(|| Error::Usage {
            arg: "the page's settings".into(),
            message: "a malformed query string (a bad %-escape, or not UTF-8)".into(),
        })?;
        let mut chosen: Vec<Option<&str>> = vec![None; self.knobs.len()];
        for (key, value) in &pairs {
            let Some(i) = self.knobs.iter().position(|k| k.key == *key) else {
                let keys: Vec<&str> = self.knobs.iter().map(|k| k.key.as_str()).collect();
                return Err(Error::invalid(
                    "the playground's knob",
                    crate::text::shown(key),
                    format!("a knob of this scenario: {}", keys.join(", ")),
                ));
            };
            if chosen[i].replace(value).is_some() {
                return Err(Error::invalid(
                    key.as_str(),
                    crate::text::shown(value),
                    "one value per knob (this knob is given twice)",
                ));
            }
        }
        let mut settings = Settings {
            sets: Vec::new(),
            query: String::new(),
        };
        for (knob, value) in self.knobs.iter().zip(chosen) {
            if let Some(value) = value {
                settings.sets.push(knob.assignment(value)?);
                if !settings.query.is_empty() {
                    settings.query.push('&');
                }
                settings.query += &format!("{}={}", encode(&knob.key), encode(value));
            }
        }
        Ok(settings)
    }

    /// The scenario with the settings applied.
    fn doc_at(&self, settings: &Settings) -> Result<ScenarioDoc> {
        let mut doc = self.doc.clone();
        for set in &settings.sets {
            doc.set(set)?;
        }
        Ok(doc)
    }

    /// The command that gives the same results: `jitterlab run SCENARIO --set KEY=VALUE...`,
    /// each argument quoted for a POSIX shell where it needs to be.
    pub fn command(&self, settings: &Settings) -> String {
        let mut words = vec![
            "jitterlab".to_string(),
            "run".into(),
            quote(&self.scenario_arg),
        ];
        for set in &settings.sets {
            words.push("--set".into());
            words.push(quote(set));
        }
        words.join(" ")
    }

    /// The resolved scenario at these settings: the `scenario.toml` a run writes, which
    /// `jitterlab run` turns into the same results.
    pub fn scenario_toml(&self, settings: &Settings) -> Result<String> {
        let doc = self.doc_at(settings)?;
        Ok(doc.base()?.to_toml(doc.sweep_table()))
    }

    /// Runs the scenario at `settings` as `jitterlab run` does, into a private temporary
    /// folder removed before this returns; with `charts`, renders the playground's charts.
    /// [`Error::Interrupted`] once `cancel` is cancelled; [`Error::TooMuchWork`] above
    /// [`MAX_EVENTS`] or `run`'s own limits.
    pub fn run(
        &self,
        settings: &Settings,
        charts: bool,
        cancel: &CancelToken,
        progress: &dyn Progress,
    ) -> Result<Outcome> {
        let doc = self.doc_at(settings)?;
        let points = doc.points_until(cancel)?;
        self.run_doc(&doc, points, cancel, progress, |dir, report, warnings| {
            let charts = match charts {
                true => crate::output::plot::playground_svgs(dir, cancel)?,
                false => Vec::new(),
            };
            Ok(Outcome {
                points: report.points,
                charts,
                files: result_files(dir)?,
                warnings,
            })
        })
    }

    /// The first, fast answer to a knob moved: the herd chart from replication 0 of each
    /// strategy alone, the same bytes as [`Playground::run`]'s (and `jitterlab run`'s
    /// `herd.svg`) at these settings; `None` when that chart needs more than replication 0
    /// (see [`crate::output::plot::playground_first_herd`]) or replication 0 is the whole run.
    pub fn first_chart(
        &self,
        settings: &Settings,
        cancel: &CancelToken,
        progress: &dyn Progress,
    ) -> Result<Option<(String, String, String)>> {
        let mut doc = self.doc_at(settings)?;
        let points = doc.points_until(cancel)?;
        // A sweep's herd shows the point picked by every replication's means.
        if points.len() != 1 || points[0].scenario.replications <= 1 {
            return Ok(None);
        }
        doc.set_replications(1)?;
        let points = doc.points_until(cancel)?;
        self.run_doc(&doc, points, cancel, progress, |dir, _, _| {
            crate::output::plot::playground_first_herd(dir, cancel)
        })
    }

    /// Runs `doc`'s `points` into a new folder under the private temporary one, hands it to `read`
    /// (with the run's report and the scenario's warnings) and removes it.
    fn run_doc<T>(
        &self,
        doc: &ScenarioDoc,
        points: Vec<crate::scenario::Point>,
        cancel: &CancelToken,
        progress: &dyn Progress,
        read: impl FnOnce(&Path, runner::RunReport, Vec<String>) -> Result<T>,
    ) -> Result<T> {
        check_work(&points)?;
        let warnings = ScenarioDoc::warnings_of(&points);
        let dir = self.temp.next();
        let options = RunOptions {
            out: Some(dir.clone()),
            threads: 0,
            shard: Shard::ALL,
            resume: false,
            force: false,
            command: "jitterlab serve".into(),
        };
        let result = runner::run_points(doc, points, &options, cancel, progress)
            .and_then(|report| read(&dir, report, warnings));
        // The folder is this process's own (made new under its private root).
        let _ = std::fs::remove_dir_all(&dir);
        result
    }
}

/// Refuses a run whose units could together take more than [`MAX_EVENTS`] events.
fn check_work(points: &[crate::scenario::Point]) -> Result<()> {
    let mut total = 0.0f64;
    for point in points {
        let s = &point.scenario;
        for strategy in &s.strategies {
            let work = crate::sim::work::estimate(&s.model, strategy);
            total += work.events * f64::from(s.replications);
        }
    }
    if total.is_nan() || total > MAX_EVENTS {
        return Err(Error::TooMuchWork {
            message: format!(
                "too much work for the playground: the runs could take up to {total:.2e} events, more than the {MAX_EVENTS:.0e} it runs per change (several seconds at most). Lower workload.clients, workload.rate, replications or the horizon, limit client.max_attempts or client.deadline; or run it with `jitterlab run`"
            ),
        });
    }
    Ok(())
}

/// The CSV files and `scenario.toml` of a result folder, by name.
fn result_files(dir: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".csv") || name == crate::folder::names::SCENARIO)
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let path = dir.join(&name);
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            Ok((name, bytes))
        })
        .collect()
}

/// `word` quoted for a POSIX shell when it holds anything but `[A-Za-z0-9_./=:,+-]`.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./=:,+-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The playground's private temporary folder: made new (never an existing one) under the
/// system's temporary folder, each run's result folder inside it, removed with it.
struct TempRoot {
    path: PathBuf,
    runs: AtomicU64,
}

impl TempRoot {
    fn new() -> Result<TempRoot> {
        let base = std::env::temp_dir();
        for attempt in 0..100u32 {
            let path = base.join(format!("jitterlab-serve-{}-{attempt}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(TempRoot {
                        path,
                        runs: AtomicU64::new(0),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        Err(Error::io(
            base,
            std::io::Error::other("no new folder for the playground's runs"),
        ))
    }

    /// A new run's result folder (not made yet: the runner makes it).
    fn next(&self) -> PathBuf {
        let n = self.runs.fetch_add(1, Ordering::Relaxed);
        self.path.join(format!("run-{n}"))
    }
}

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Silent;

    fn playground(name: &str) -> Playground {
        let doc = crate::scenario::library::lookup(name).unwrap().doc();
        Playground::new(doc, name.into()).unwrap()
    }

    #[test]
    fn the_first_chart_is_the_herd_of_every_replication() {
        let p = playground("thundering-herd");
        for query in [
            "",
            "backoff.cap=700ms&backoff.strategies=no_jitter%2Cdecorrelated",
            "workload.clients=3000&server.workers=50&client.max_attempts=3",
        ] {
            let s = p.settings(query).unwrap();
            let first = p.first_chart(&s, &CancelToken::new(), &Silent).unwrap();
            let (stem, title, svg) = first.expect("the built-in's herd is replication 0's");
            let all = p.run(&s, true, &CancelToken::new(), &Silent).unwrap();
            let herd = all.charts.iter().find(|c| c.0 == "herd").unwrap();
            assert_eq!((&stem, &title), (&herd.0, &herd.1), "{query}");
            assert!(
                svg == herd.2,
                "{query}: the first chart differs from the run's"
            );
        }
    }

    #[test]
    fn a_preset_in_the_strategies_knob_runs_as_run_runs_it() {
        let p = playground("thundering-herd");
        let s = p
            .settings("backoff.strategies=full%2Caws-standard")
            .unwrap();
        let names = |o: &Outcome| -> Vec<String> {
            o.points[0]
                .strategies
                .iter()
                .map(|s| s.name.clone())
                .collect()
        };
        let outcome = p.run(&s, false, &CancelToken::new(), &Silent).unwrap();
        assert_eq!(names(&outcome), ["full", "aws-standard"]);
        // The command the page prints gives the same rows.
        let mut doc = ScenarioDoc::builtin();
        for set in &s.sets {
            doc.set(set).unwrap();
        }
        let again = Playground::new(doc, "thundering-herd".into()).unwrap();
        let same = again.settings("").unwrap();
        let rerun = again
            .run(&same, false, &CancelToken::new(), &Silent)
            .unwrap();
        assert!(rerun.files == outcome.files, "{}", p.command(&s));
    }

    #[test]
    fn no_first_chart_where_the_herd_needs_every_replication() {
        // Stuck and recovered replications side by side; a sweep's point picked by its means.
        for name in ["collapse-spike", "retry-after-herd"] {
            let p = playground(name);
            let s = p.settings("").unwrap();
            let first = p.first_chart(&s, &CancelToken::new(), &Silent).unwrap();
            assert!(first.is_none(), "{name}");
        }
    }

    #[test]
    fn a_sweep_is_never_drawn_from_replication_0_alone() {
        // `first_chart` returns before running a sweep; the chart's own check, tested here,
        // is what keeps that answer right if the early return goes: a sweep's herd shows the
        // point picked by every replication's means.
        let p = playground("retry-after-herd");
        let mut doc = p.doc_at(&p.settings("").unwrap()).unwrap();
        doc.set_replications(1).unwrap();
        let points = doc.points_until(&CancelToken::new()).unwrap();
        assert!(points.len() > 1, "not a sweep");
        let first = p.run_doc(&doc, points, &CancelToken::new(), &Silent, |dir, _, _| {
            crate::output::plot::playground_first_herd(dir, &CancelToken::new())
        });
        assert!(first.unwrap().is_none());
    }

    #[test]
    fn words_are_quoted_for_the_shell_when_they_must_be() {
        assert_eq!(quote("backoff.cap=5s"), "backoff.cap=5s");
        assert_eq!(
            quote(r#"backoff.strategies=["full", "equal"]"#),
            r#"'backoff.strategies=["full", "equal"]'"#
        );
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
