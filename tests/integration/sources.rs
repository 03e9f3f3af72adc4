//! A user-supplied delay source (`jitterlab::sim::source`) in place of a strategy's built-in
//! backoff: one that reproduces a built-in kind gives the same bytes as the kind, in every
//! result file; one that gives up ends requests as a retry limit does; and a source for a
//! strategy the scenario does not have is refused.

use std::path::Path;
use std::sync::Arc;

use jitterlab::backoff::{Backoff, BackoffState};
use jitterlab::cancel::CancelToken;
use jitterlab::rng::SimRng;
use jitterlab::runner::{self, RunOptions};
use jitterlab::scenario::ScenarioDoc;
use jitterlab::sim::{ClientDelays, DelaySource, RetryAt};
use jitterlab::sweep::{Shard, Silent};
use jitterlab::time::{SimDuration, SimTime};

use crate::common::{TempDir, repo, sim_doc};

/// The engine's own backoff, run as a user's source would be: a state per client.
#[derive(Debug)]
struct Builtin {
    backoff: Backoff,
    /// After this many retries the source gives up (`None`: never).
    give_up_after: Option<u32>,
}

struct BuiltinClient {
    backoff: Backoff,
    state: BackoffState,
    give_up_after: Option<u32>,
}

impl DelaySource for Builtin {
    fn client(&self, _client: u32, _seed: u64) -> Box<dyn ClientDelays> {
        Box::new(BuiltinClient {
            backoff: self.backoff.clone(),
            state: BackoffState::new(),
            give_up_after: self.give_up_after,
        })
    }

    fn describe(&self) -> String {
        format!(
            "jitterlab {} {:?}, giving up after {:?}",
            env!("CARGO_PKG_VERSION"),
            self.backoff.params(),
            self.give_up_after
        )
    }
}

impl ClientDelays for BuiltinClient {
    fn next_delay(&mut self, at: RetryAt, rng: &mut SimRng) -> Option<SimDuration> {
        if self.give_up_after.is_some_and(|n| at.retry > n) {
            return None;
        }
        Some(SimDuration(
            self.backoff.next_delay_nanos(&mut self.state, rng),
        ))
    }

    fn reset(&mut self, _now: SimTime) {
        self.state.reset();
    }
}

/// The built-in thundering herd (10 000 clients), two replications, at most 1000 attempts (a
/// source needs a limit where the network takes no time, see
/// `a_source_that_may_sleep_zero_needs_an_attempt_limit`; none of these runs reaches it).
fn herd(sets: &[&str]) -> ScenarioDoc {
    let mut all = vec!["replications=2"];
    if !sets.iter().any(|s| s.starts_with("client.max_attempts=")) {
        all.push("client.max_attempts=1000");
    }
    all.extend_from_slice(sets);
    sim_doc(&repo().join("sims/thundering-herd.toml"), &all)
}

/// Each named strategy's own backoff (as the scenario checked it), as a source.
fn sources_for(
    doc: &ScenarioDoc,
    names: &[&str],
    give_up_after: Option<u32>,
) -> Vec<(String, Arc<dyn DelaySource>)> {
    let base = doc.base().unwrap();
    names
        .iter()
        .map(|name| {
            let strategy = base.strategies.iter().find(|s| s.name == *name).unwrap();
            let source: Arc<dyn DelaySource> = Arc::new(Builtin {
                backoff: strategy.backoff.clone(),
                give_up_after,
            });
            (name.to_string(), source)
        })
        .collect()
}

/// Runs `doc` into `out` with `sources` attached to their strategies.
fn try_run(
    doc: &ScenarioDoc,
    out: &Path,
    sources: &[(String, Arc<dyn DelaySource>)],
) -> jitterlab::Result<runner::RunReport> {
    let options = RunOptions {
        out: Some(out.to_path_buf()),
        threads: 2,
        shard: Shard::ALL,
        resume: false,
        force: false,
        command: "integration test".into(),
    };
    let sources: Vec<(&str, Arc<dyn DelaySource>)> = sources
        .iter()
        .map(|(n, s)| (n.as_str(), s.clone()))
        .collect();
    runner::run_with_sources(doc, &options, &sources, &CancelToken::new(), &Silent)
}

fn run(doc: &ScenarioDoc, out: &Path, sources: &[(String, Arc<dyn DelaySource>)]) {
    let report =
        try_run(doc, out, sources).unwrap_or_else(|e| panic!("run into {}: {e}", out.display()));
    assert!(report.complete);
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every file of a result folder but meta.json (wall time, threads), by name.
fn result_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "meta.json")
        .collect();
    names.sort();
    names
}

#[test]
fn a_source_reproducing_a_builtin_kind_gives_the_same_bytes() {
    let tmp = TempDir::new("sources-same");
    let doc = herd(&[]);
    run(&doc, &tmp.join("builtin"), &[]);
    // Full jitter draws once per retry; decorrelated jitter also carries the previous sleep
    // in the client's state.
    let sources = sources_for(&doc, &["full", "decorrelated"], None);
    run(&doc, &tmp.join("source"), &sources);
    let names = result_files(&tmp.join("builtin"));
    assert!(
        names.iter().any(|n| n == "summary.csv") && names.iter().any(|n| n == "timeseries.csv")
    );
    assert_eq!(names, result_files(&tmp.join("source")));
    // The same staged commit as a plain run: palette.json beside the results, every file in
    // meta.json's `files`, no stage left behind.
    assert!(names.iter().any(|n| n == "palette.json"), "{names:?}");
    let meta: serde_json::Value =
        serde_json::from_slice(&read(&tmp.join("source"), "meta.json")).unwrap();
    let mut listed: Vec<String> = meta["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .filter(|n| n != "meta.json")
        .collect();
    listed.sort();
    assert_eq!(listed, names);
    // It records the sources, which a plain run's meta.json has no key for.
    let sources = meta["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2);
    assert_eq!(sources[0]["strategy"], "full");
    assert!(
        sources[0]["source"]
            .as_str()
            .unwrap()
            .starts_with("jitterlab ")
    );
    let plain: serde_json::Value =
        serde_json::from_slice(&read(&tmp.join("builtin"), "meta.json")).unwrap();
    assert!(plain.get("sources").is_none());
    // Every file the same bytes, but the journal's header: its fingerprint counts the
    // sources (a resume with other sources is other work).
    let body = |dir: &str, name: &str| {
        let bytes = read(&tmp.join(dir), name);
        if name != "units.jsonl" {
            return bytes;
        }
        let at = bytes.iter().position(|&b| b == b'\n').unwrap();
        bytes[at..].to_vec()
    };
    for name in &names {
        assert!(
            body("builtin", name) == body("source", name),
            "{name} differs between the built-in kinds and the same kinds as sources"
        );
    }
    assert!(read(&tmp.join("builtin"), "units.jsonl") != read(&tmp.join("source"), "units.jsonl"));
}

#[test]
fn a_source_that_gives_up_ends_requests_as_a_retry_limit_does() {
    let tmp = TempDir::new("sources-give-up");
    // Four attempts: the limit stops the request before a fourth retry is drawn; the source
    // is asked for it and says no. Either way, nothing more is drawn.
    run(&herd(&["client.max_attempts=4"]), &tmp.join("limit"), &[]);
    let doc = herd(&[]);
    run(
        &doc,
        &tmp.join("source"),
        &sources_for(&doc, &["full"], Some(3)),
    );
    let summary = |dir: &str| String::from_utf8(read(&tmp.join(dir), "summary.csv")).unwrap();
    let full = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains(",full,"))
            .map(String::from)
            .collect()
    };
    let limit = full(&summary("limit"));
    assert_eq!(limit.len(), 2, "{limit:?}");
    assert_eq!(limit, full(&summary("source")));
    // And it is the source that decided: without the limit the run is another.
    let unlimited = TempDir::new("sources-unlimited");
    run(&doc, unlimited.path(), &[]);
    let other = String::from_utf8(read(unlimited.path(), "summary.csv")).unwrap();
    assert_ne!(limit, full(&other));
}

#[test]
fn a_source_for_a_strategy_the_scenario_lacks_is_refused() {
    let tmp = TempDir::new("sources-unknown");
    let doc = herd(&[]);
    let mut sources = sources_for(&doc, &["full"], None);
    sources[0].0 = "backon".into();
    let err = try_run(&doc, &tmp.join("out"), &sources)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"backon\"") && err.contains("no_jitter, full, equal, decorrelated"),
        "{err}"
    );
    assert!(
        !tmp.join("out").exists(),
        "nothing is written for a refused source"
    );
}

/// Sleeps zero before every retry, never gives up.
#[derive(Debug)]
struct Zero;

impl DelaySource for Zero {
    fn client(&self, _client: u32, _seed: u64) -> Box<dyn ClientDelays> {
        Box::new(Zero)
    }

    fn describe(&self) -> String {
        "zero sleeps (a test source)".into()
    }
}

impl ClientDelays for Zero {
    fn next_delay(&mut self, _at: RetryAt, _rng: &mut SimRng) -> Option<SimDuration> {
        Some(SimDuration::ZERO)
    }
}

/// Runs `doc` with [`Zero`] for strategy "full" on a thread of its own; `None` when it has
/// not returned within a minute (a run whose virtual time stands still).
fn run_zero(doc: ScenarioDoc, out: std::path::PathBuf) -> Option<jitterlab::Result<()>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let zero: Arc<dyn DelaySource> = Arc::new(Zero);
        let _ = tx.send(try_run(&doc, &out, &[("full".into(), zero)]).map(|_| ()));
    });
    rx.recv_timeout(std::time::Duration::from_secs(60)).ok()
}

#[test]
fn a_source_that_may_sleep_zero_needs_an_attempt_limit() {
    let tmp = TempDir::new("sources-zero");
    // The herd's network takes no time: unlimited attempts are refused before anything runs.
    let unlimited = herd(&["client.max_attempts=unlimited"]);
    let err = run_zero(unlimited, tmp.join("unlimited"))
        .expect("a zero-sleep source with unlimited attempts hangs the run")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("client.max_attempts")
            && err.contains("\"unlimited\"")
            && err.contains("a number when strategy \"full\" draws its sleeps from a delay source"),
        "{err}"
    );
    assert!(!tmp.join("unlimited").exists(), "nothing is written");
    // A strategy's own unlimited is named by its key.
    let mut own = herd(&[]);
    own.set("backoff.strategies=[\"no_jitter\", { name = \"full\", jitter = \"full\", max_attempts = \"unlimited\" }]")
        .unwrap();
    let err = run_zero(own, tmp.join("own"))
        .expect("a zero-sleep source with unlimited attempts hangs the run")
        .unwrap_err()
        .to_string();
    assert!(err.contains("backoff.strategies[1].max_attempts"), "{err}");
    // With a limit the same source runs: every request ends at its limit.
    let limited = herd(&["client.max_attempts=3"]);
    run_zero(limited, tmp.join("limited"))
        .expect("a limited run ends")
        .unwrap();
}

#[test]
fn a_resume_with_other_sources_is_refused() {
    let tmp = TempDir::new("sources-resume");
    let out = tmp.join("out");
    let doc = herd(&[]);
    run(&doc, &out, &sources_for(&doc, &["full"], None));
    let resume = |sources: &[(String, Arc<dyn DelaySource>)]| {
        let options = RunOptions {
            out: Some(out.clone()),
            threads: 2,
            shard: Shard::ALL,
            resume: true,
            force: false,
            command: "integration test".into(),
        };
        let sources: Vec<(&str, Arc<dyn DelaySource>)> = sources
            .iter()
            .map(|(n, s)| (n.as_str(), s.clone()))
            .collect();
        runner::run_with_sources(&doc, &options, &sources, &CancelToken::new(), &Silent)
    };
    // The same sources: the finished run is kept, nothing to run.
    let same = resume(&sources_for(&doc, &["full"], None)).unwrap();
    assert!(same.complete);
    // Another source for the same strategy, no source, a source for another strategy: each
    // is other work, and the folder's results stay as they were.
    let before = read(&out, "summary.csv");
    // The refusal says what differs: the sources the folder's units ran with and this run's.
    let recorded = "run with delay sources \"full\" from \"jitterlab ";
    for (other, now) in [
        (
            sources_for(&doc, &["full"], Some(3)),
            "giving up after Some(3)",
        ),
        (Vec::new(), "this run has the built-in kinds"),
        (
            sources_for(&doc, &["equal"], None),
            "this run has \"equal\" from",
        ),
    ] {
        let err = resume(&other).unwrap_err().to_string();
        assert!(
            err.contains("its journal is of a different scenario or options")
                && err.contains("the same scenario.toml")
                && err.contains(recorded)
                && err.contains(now),
            "{err}"
        );
    }
    assert!(read(&out, "summary.csv") == before);
}
