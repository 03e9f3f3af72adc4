//! Retry storms and load shapes end to end: a load spike that must leave immediate retries
//! stuck and one they must recover from (server contention, rate profiles, the recovery
//! columns together), and rate profiles that must not change a constant workload's bytes.

use std::path::Path;

use jitterlab::metric::Metric;

use crate::common::{TempDir, execute, jitterlab, plan, sim_doc, stderr};
use crate::scenarios::csv_rows;

fn collapse(
    sets: &[&str],
) -> (
    jitterlab::sweep::Plan,
    Vec<jitterlab::sweep::journal::UnitRecord>,
) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sims/collapse-spike.toml");
    let mut all = vec!["replications=4"];
    all.extend_from_slice(sets);
    let p = plan(&sim_doc(&path, &all));
    let records = execute(&p);
    (p, records)
}

/// 40/s, 10 s at 100/s: in-flight work makes service slower than the timeout, every attempt
/// times out, 3 tries per request exceed what the server can ever complete (100/s): stuck.
#[test]
fn a_long_high_spike_leaves_immediate_retries_stuck() {
    let (p, r) = collapse(&["workload.spike.rate=100.0", "workload.spike.length=\"10s\""]);
    let get = |m| crate::common::metric(&p, &r, 0, "immediate", m);
    for ((rec, before), after) in get(Metric::Recovered)
        .into_iter()
        .zip(get(Metric::GoodputBefore))
        .zip(get(Metric::GoodputAfter))
    {
        assert_eq!(rec, 0.0, "stuck");
        assert!(before > 35.0 && after < 0.1 * before, "{before} -> {after}");
    }
    assert!(
        get(Metric::RecoveryMs).iter().all(|x| x.is_nan()),
        "no time to recover"
    );
}

/// The same server with a mild spike (60/s for 5 s) stays below the timeout: both strategies
/// are back at once.
#[test]
fn a_mild_spike_recovers() {
    let (p, r) = collapse(&["workload.spike.rate=60.0"]);
    for s in ["immediate", "backoff"] {
        let get = |m| crate::common::metric(&p, &r, 0, s, m);
        assert_eq!(get(Metric::Recovered), vec![1.0; 4], "{s}");
        assert!(get(Metric::RecoveryMs).iter().all(|&x| x < 10_000.0), "{s}");
        let (before, after) = (get(Metric::GoodputBefore), get(Metric::GoodputAfter));
        for (b, a) in before.iter().zip(&after) {
            assert!((a - b).abs() < 0.15 * b, "{s}: {b} -> {a}");
        }
    }
}

/// `jitterlab run` on a constant rate and on a stepped profile whose step comes after the
/// arrivals end: the same arrivals, so the same result files byte for byte.
#[test]
fn a_step_profile_reproduces_the_constant_workload_bytes() {
    let tmp = TempDir::new("profile-bytes");
    let body = |rate: &str| {
        format!(
            "name = \"p\"\nhorizon = \"20s\"\nreplications = 2\n[workload]\nkind = \"poisson\"\nrate = {rate}\nstart = \"1s\"\nduration = \"9s\"\n[server]\nworkers = 20\nservice = {{ dist = \"exponential\", mean = \"100ms\" }}\n[backoff]\nstrategies = [\"full\", \"none\"]\n"
        )
    };
    let files = [
        ("constant.toml", body("300.0")),
        // Times count from start: 300/s until 9 s after it (10 s on the clock), then a step.
        (
            "step.toml",
            body("[[\"0s\", 300], [\"5s\", 300], [\"9s\", 300], [\"9s\", 900]]"),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(tmp.join(name), text).unwrap();
        let out = name.trim_end_matches(".toml");
        let o = jitterlab(
            tmp.path(),
            &["run", name, "--out", out, "--quiet", "--no-plots"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    for f in [
        "summary.csv",
        "timeseries.csv",
        "latency.csv",
        "aggregate.csv",
    ] {
        let a = std::fs::read(tmp.join("constant").join(f)).unwrap();
        let b = std::fs::read(tmp.join("step").join(f)).unwrap();
        assert!(a == b, "{f} differs");
    }
    // And a step up inside the arrivals changes them.
    let text = body("[[\"0s\", 300], [\"4s\", 300], [\"4s\", 900]]");
    std::fs::write(tmp.join("up.toml"), text).unwrap();
    let o = jitterlab(
        tmp.path(),
        &["run", "up.toml", "--out", "up", "--quiet", "--no-plots"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a = std::fs::read(tmp.join("constant/summary.csv")).unwrap();
    let b = std::fs::read(tmp.join("up/summary.csv")).unwrap();
    assert!(a != b);
}

/// `poisson_clients` with a per-client profile: 50 clients, each at 2/s for 5 s, then 6/s for
/// 5 s. Every client's arrivals follow the profile: 50 × (10 + 30) = 2000 requests expected
/// per run, three times as many in the second half as in the first; and a step that comes
/// after the arrivals end gives the constant rate's bytes.
#[test]
fn persistent_clients_follow_their_rate_profile() {
    let tmp = TempDir::new("client-profile");
    let body = |rate: &str| {
        format!(
            "name = \"c\"\nhorizon = \"12s\"\nreplications = 4\n[workload]\nkind = \"poisson_clients\"\nclients = 50\nrate = {rate}\nduration = \"10s\"\n[server]\nworkers = 50\nservice = {{ dist = \"constant\", mean = \"1ms\" }}\n[client]\nmax_attempts = 1\n[backoff]\nstrategies = [\"full\"]\n[output]\nbucket = \"5s\"\n"
        )
    };
    let files = [
        ("shaped", body("[[\"0s\", 2], [\"5s\", 2], [\"5s\", 6]]")),
        ("constant", body("2.0")),
        (
            "late-step",
            body("[[\"0s\", 2], [\"10s\", 2], [\"10s\", 6]]"),
        ),
    ];
    for (name, text) in &files {
        std::fs::write(tmp.join(&format!("{name}.toml")), text).unwrap();
        let o = jitterlab(
            tmp.path(),
            &[
                "run",
                &format!("{name}.toml"),
                "--out",
                name,
                "--quiet",
                "--no-plots",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let read = |path: &str| std::fs::read_to_string(tmp.join(path)).unwrap();
    let column = |text: &str, name: &str| -> Vec<f64> {
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let i = header.iter().position(|h| *h == name).unwrap();
        lines
            .map(|l| l.split(',').nth(i).unwrap().parse().unwrap())
            .collect()
    };
    // Four runs of 2000 expected arrivals each: 8000 ± 4 standard deviations (4 × 89).
    let requests: f64 = column(&read("shaped/summary.csv"), "requests").iter().sum();
    assert!((requests - 8000.0).abs() < 360.0, "{requests}");
    // Replication 0 per 5 s bucket: 500 then 1500 expected (sd 22 and 39).
    let firsts = column(&read("shaped/timeseries.csv"), "first_attempts");
    assert!((firsts[0] - 500.0).abs() < 90.0, "{firsts:?}");
    assert!((firsts[1] - 1500.0).abs() < 160.0, "{firsts:?}");
    for f in ["summary.csv", "timeseries.csv", "aggregate.csv"] {
        assert!(
            read(&format!("constant/{f}")) == read(&format!("late-step/{f}")),
            "{f} differs"
        );
    }
}

/// The phase map reduced to a 2 × 2 grid, one replication: the same CSV bytes with 1 and 2
/// threads, its `phase_<metric>` charts drawn for the two-key sweep and none for one key.
#[test]
fn the_phase_map_is_deterministic_and_draws_its_charts_only_for_two_keys() {
    let tmp = TempDir::new("phase-map");
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("sims/metastable-phase-map.toml");
    let sim = sim.to_str().unwrap();
    let two = r#"sweep={"workload.rate"=[33.0, 60.0], "workload.spike.length"=["2s", "16s"]}"#;
    let run = |out: &str, threads: &str, sweep: &str| {
        let o = jitterlab(
            tmp.path(),
            &[
                "run",
                sim,
                "--out",
                out,
                "--quiet",
                "--threads",
                threads,
                "--set",
                "replications=1",
                "--set",
                sweep,
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    run("t1", "1", two);
    run("t2", "2", two);
    for f in [
        "summary.csv",
        "aggregate.csv",
        "compare.csv",
        "timeseries.csv",
        "attempts.csv",
        "latency.csv",
    ] {
        let a = std::fs::read(tmp.join("t1").join(f)).unwrap();
        let b = std::fs::read(tmp.join("t2").join(f)).unwrap();
        assert!(a == b, "{f} differs between 1 and 2 threads");
    }
    for stem in ["phase_recovered", "phase_recovery_ms"] {
        for ext in ["png", "svg"] {
            let file = tmp.join("t1").join(format!("{stem}.{ext}"));
            assert!(file.is_file(), "{} missing", file.display());
        }
    }
    let svg = std::fs::read_to_string(tmp.join("t1/phase_recovered.svg")).unwrap();
    assert!(svg.contains("retries_3") && svg.contains("spike length"));
    let report = std::fs::read_to_string(tmp.join("t1/report.html")).unwrap();
    assert!(report.contains("Reading a phase map"));
    // The phase map is this scenario's headline: the reading guide, then it, open the page.
    let at = |needle: &str| report.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    assert!(at("Reading a phase map") < at("id=\"chart-phase_recovered\""));
    assert!(at("id=\"chart-phase_recovered\"") < at("id=\"summary-section\""));
    // One sweep key: no phase map, no error, no reading guide.
    run("one", "2", r#"sweep={"workload.rate"=[33.0, 60.0]}"#);
    let names: Vec<String> = std::fs::read_dir(tmp.join("one"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.starts_with("phase_")), "{names:?}");
    assert!(names.contains(&"summary.csv".to_string()));
    let report = std::fs::read_to_string(tmp.join("one/report.html")).unwrap();
    assert!(!report.contains("Reading a phase map"));
}

#[test]
fn collapse_spike_reports_its_passages_with_the_censored_runs() {
    let tmp = TempDir::new("passages");
    let o = jitterlab(
        tmp.path(),
        &[
            "run",
            "collapse-spike",
            "--out",
            "r",
            "--quiet",
            "--no-plots",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let summary = csv_rows(&tmp.join("r/summary.csv"));
    let passages = csv_rows(&tmp.join("r/passage.csv"));
    let aggregate = csv_rows(&tmp.join("r/aggregate.csv"));
    for strategy in ["immediate", "backoff"] {
        let runs: Vec<_> = summary
            .iter()
            .filter(|r| r["strategy"] == strategy)
            .collect();
        for (passage, column) in [
            ("to_collapse", "time_to_collapse_ms"),
            ("to_healthy", "time_to_healthy_ms"),
        ] {
            let row = (passages.iter())
                .find(|r| r["strategy"] == strategy && r["passage"] == passage)
                .unwrap_or_else(|| panic!("{strategy} {passage}"));
            // The runs that got there have their time; the censored ones are empty in
            // summary.csv but counted in passage.csv and in aggregate.csv's estimate.
            let reached = runs.iter().filter(|r| !r[column].is_empty()).count();
            assert_eq!(row["reached"], reached.to_string(), "{strategy} {passage}");
            assert_eq!(row["runs"], runs.len().to_string(), "{strategy} {passage}");
            let agg = (aggregate.iter())
                .find(|r| r["strategy"] == strategy && r["metric"] == column)
                .unwrap();
            assert_eq!(agg["n"], runs.len().to_string(), "{strategy} {column}");
            assert_eq!(
                agg["mean"], row["restricted_mean_ms"],
                "{strategy} {column}"
            );
        }
        // A stuck run never comes back down to the healthy level; a recovered one does.
        for r in &runs {
            let back = !r["time_to_healthy_ms"].is_empty();
            assert_eq!(
                back,
                r["recovered"] == "1",
                "{strategy} {}",
                r["replication"]
            );
        }
    }
    // Immediate retries leave some runs stuck: censored, so the estimate is past the
    // quick mean of the runs that did come back.
    let healthy = |s: &str| -> f64 {
        (passages.iter())
            .find(|r| r["strategy"] == s && r["passage"] == "to_healthy")
            .unwrap()["restricted_mean_ms"]
            .parse()
            .unwrap()
    };
    assert!(healthy("immediate") > 3.0 * healthy("backoff"));
}
