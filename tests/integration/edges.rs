//! Hostile and extreme input at the edges of the engine and the command line (issue 9): work
//! too large for one run, thread counts, the whole seed range, fault windows after the
//! horizon, the size of `delays` output. Each answers with exit code 2 and a first line that
//! says what to change, or runs as documented.

use jitterlab::Error;
use jitterlab::scenario::library::SCENARIOS;

use crate::cli::{assert_bad_input, entries};
use crate::common::{TempDir, doc, jitterlab, plan, stderr, stdout};

/// 100 clients against a server in outage for the whole minute, retrying after 1 ns, forever:
/// billions of events a client (the run would go on for hours).
const ENDLESS: &str = r#"
name = "endless"
horizon = "60s"
replications = 1
[workload]
clients = 100
[client]
timeout = "off"
deadline = "off"
max_attempts = "unlimited"
[backoff]
strategies = ["constant"]
base = "1ns"
cap = "1ns"
[[faults]]
kind = "outage"
start = "0s"
end = "60s"
"#;

fn write(dir: &TempDir, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[test]
fn endless_work_is_refused_before_anything_is_written() {
    let tmp = TempDir::new("endless");
    write(&tmp, "endless.toml", ENDLESS);
    let o = jitterlab(
        tmp.path(),
        &["run", "endless.toml", "--out", "r", "--quiet"],
    );
    assert_bad_input(
        &o,
        &[
            "too much work",
            "3.6e13 events",
            "strategy \"constant\"",
            "client.max_attempts",
            "backoff.base",
            "--force",
        ],
    );
    assert_eq!(entries(tmp.path()), ["endless.toml"], "nothing written");
    // The same estimate for a server that answers at once: `--force` goes ahead, and the run
    // is quick because every request succeeds at its first attempt.
    let healthy = ENDLESS.split("[[faults]]").next().unwrap();
    write(&tmp, "healthy.toml", healthy);
    let args = ["run", "healthy.toml", "--out", "h", "--quiet", "--no-plots"];
    assert_eq!(jitterlab(tmp.path(), &args).status.code(), Some(2));
    let o = jitterlab(tmp.path(), &[&args[..], &["--force"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn no_shipped_scenario_is_refused_and_the_limits_say_what_to_lower() {
    for builtin in SCENARIOS {
        let p = plan(&builtin.doc());
        p.check_work(64)
            .unwrap_or_else(|e| panic!("{} refused: {e}", builtin.name));
    }
    let p = plan(&doc(ENDLESS, &[]));
    assert!(matches!(p.check_work(1), Err(Error::TooMuchWork { .. })));
    // Bounded attempts make the same scenario small.
    plan(&doc(ENDLESS, &["client.max_attempts=10"]))
        .check_work(1)
        .unwrap();
    // Ten million open-loop clients hold about 2 GiB a run: fine alone, not nine at once.
    let many = r#"
        [workload]
        kind = "poisson"
        rate = 1000000.0
        duration = "10s"
        [client]
        max_attempts = 1
    "#;
    let p = plan(&doc(many, &[]));
    p.check_work(1).unwrap();
    let e = p.check_work(9).unwrap_err().to_string();
    assert!(
        e.starts_with("too much memory: 9 runs at once") && e.contains("Lower RunOptions::threads"),
        "{e}"
    );
}

#[test]
fn threads_are_one_to_1024_and_never_more_than_the_runs() {
    let tmp = TempDir::new("threads");
    for bad in ["0", "100000"] {
        let o = jitterlab(tmp.path(), &["run", "--threads", bad, "--quiet"]);
        assert_bad_input(&o, &["--threads"]);
        assert_eq!(
            first_line(&stderr(&o)),
            format!("error: invalid value '{bad}' for '--threads <N>': {bad} is not in 1..=1024")
        );
    }
    assert!(entries(tmp.path()).is_empty(), "nothing written");
    // 1024 threads asked for a run of 2 units: 2 are used.
    let o = jitterlab(
        tmp.path(),
        &[
            "run",
            "--set",
            "workload.clients=20",
            "--set",
            "backoff.strategies=[\"full\"]",
            "--replications",
            "2",
            "--threads",
            "1024",
            "--out",
            "r",
            "--quiet",
            "--no-plots",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let meta = std::fs::read_to_string(tmp.join("r").join("meta.json")).unwrap();
    assert!(meta.contains("\"threads\": 2,"), "{meta}");
    assert_eq!(
        jitterlab::sweep::threads_for(5000, 3)
            .unwrap_err()
            .to_string(),
        "invalid argument `RunOptions::threads 5000`: at most 1024 threads"
    );
    assert_eq!(jitterlab::sweep::threads_for(8, 0).unwrap(), 1);
}

#[test]
fn the_seed_takes_the_whole_u64_range() {
    let tmp = TempDir::new("seed");
    let small = ["--set", "workload.clients=30", "--replications", "1"];
    let run = |seed: &str, out: &str| {
        let args = [
            &["run", "--seed", seed, "--out", out, "--quiet", "--no-plots"][..],
            &small[..],
        ]
        .concat();
        jitterlab(tmp.path(), &args)
    };
    let o = run("18446744073709551615", "max");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let resolved = std::fs::read_to_string(tmp.join("max").join("scenario.toml")).unwrap();
    assert!(
        resolved.contains("\nseed = \"18446744073709551615\"\n"),
        "{resolved}"
    );
    // The resolved file reads back and runs the same.
    let o = jitterlab(
        tmp.path(),
        &[
            "run",
            "max/scenario.toml",
            "--out",
            "again",
            "--quiet",
            "--no-plots",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = |d: &str| std::fs::read(tmp.join(d).join("summary.csv")).unwrap();
    assert_eq!(summary("max"), summary("again"));
    // Out of range: the flag is named, not a `--set` nobody typed.
    let o = run("18446744073709551616", "over");
    assert_bad_input(&o, &["--seed"]);
    let o = jitterlab(tmp.path(), &["run", "--replications", "0", "--quiet"]);
    assert_bad_input(&o, &["--replications 0", "replications"]);
    assert!(!stderr(&o).contains("--set"), "{}", stderr(&o));
    // In a file, a negative seed or one past u64 is refused at its line.
    for bad in ["-1", "\"18446744073709551616\"", "1.5"] {
        write(&tmp, "s.toml", &format!("seed = {bad}\n"));
        let o = jitterlab(tmp.path(), &["check", "s.toml"]);
        assert_bad_input(&o, &["s.toml:1:8", "seed", "18446744073709551615"]);
    }
}

#[test]
fn a_fault_after_the_horizon_is_run_with_a_warning() {
    let tmp = TempDir::new("late-fault");
    let text = r#"
horizon = "10s"
[workload]
clients = 10
[[faults]]
kind = "outage"
start = "10s"
end = "20s"
[[faults]]
kind = "slow"
factor = 2.0
start = "1s"
end = "30s"
"#;
    write(&tmp, "late.toml", text);
    let o = jitterlab(tmp.path(), &["check", "late.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&stderr(&o)),
        "warning: faults[0] starts at 10s, at or after the horizon (10s): it never acts"
    );
    assert!(!stderr(&o).contains("faults[1]"), "{}", stderr(&o));
    // In a sweep, the points it holds at.
    let o = jitterlab(
        tmp.path(),
        &[
            "check",
            "late.toml",
            "--set",
            "sweep.horizon=[\"5s\", \"15s\"]",
        ],
    );
    assert!(
        stderr(&o).contains("(at 1 of 2 sweep points, first at point 0: horizon = 5s)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn delays_output_is_bounded() {
    let tmp = TempDir::new("delays");
    let o = jitterlab(tmp.path(), &["delays", "--retries", "1000000000"]);
    assert_bad_input(&o, &["`--retries`", "1000000000", "at most 10000000"]);
    assert!(stdout(&o).is_empty());
    let o = jitterlab(
        tmp.path(),
        &[
            "delays",
            "--jitter",
            "all",
            "--samples",
            "4000000",
            "--retries",
            "1",
        ],
    );
    assert_bad_input(&o, &["`--samples`", "4000000"]);
    // At the limit it is written.
    let o = jitterlab(
        tmp.path(),
        &["delays", "--samples", "10", "--retries", "1000"],
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o).lines().count(), 1 + 10_000);
}
