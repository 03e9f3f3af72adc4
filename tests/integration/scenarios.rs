//! The scenario library in sims/: every file checks and its resolved form is a fixed point,
//! every file runs through the binary and keeps its books, and the built-in default shows the
//! lesson it is there to teach.

use std::collections::HashMap;
use std::path::Path;

use jitterlab::metric::Metric;
use jitterlab::scenario::ScenarioDoc;

use crate::common::{TempDir, est, execute, half_width, jitterlab, plan, repo, sims, stderr};

#[test]
fn every_sim_file_checks_and_its_resolved_form_reads_back_the_same() {
    for path in sims() {
        let name = path.display().to_string();
        let doc = ScenarioDoc::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let points = doc.points().unwrap_or_else(|e| panic!("{e}"));
        assert!(!points.is_empty(), "{name}");
        let base = doc.base().unwrap_or_else(|e| panic!("{e}"));
        assert!(!base.description.is_empty(), "{name} has a description");
        assert_eq!(
            base.name,
            path.file_stem().unwrap().to_string_lossy(),
            "{name}: name matches the file"
        );
        let resolved = base.to_toml(doc.sweep_table());
        let again = ScenarioDoc::parse(&resolved, "<resolved>", "other-fallback")
            .unwrap_or_else(|e| panic!("{name}: resolved form does not parse: {e}\n{resolved}"));
        let base_again = again.base().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(base_again.to_toml(again.sweep_table()), resolved, "{name}");
        // Every point, too: same count, same resolved scenario at each.
        let points_again = again.points().unwrap();
        assert_eq!(points.len(), points_again.len(), "{name}");
        for (p, q) in points.iter().zip(&points_again) {
            assert_eq!(p.values, q.values, "{name}");
            assert_eq!(
                p.scenario.to_toml(None),
                q.scenario.to_toml(None),
                "{name} point {}",
                p.index
            );
        }
    }
}

/// The rows of a CSV file as column name -> value.
pub(crate) fn csv_rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut reader =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers = reader.headers().expect("a header row").clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            headers
                .iter()
                .map(str::to_string)
                .zip(r.iter().map(str::to_string))
                .collect()
        })
        .collect()
}

/// A numeric cell (empty: NaN, as for the latency of a run without successes).
fn num(row: &HashMap<String, String>, column: &str) -> f64 {
    let text = row
        .get(column)
        .unwrap_or_else(|| panic!("no column {column}"));
    if text.is_empty() {
        return f64::NAN;
    }
    text.parse()
        .unwrap_or_else(|e| panic!("{column} = {text:?}: {e}"))
}

#[test]
fn every_sim_file_runs_with_two_replications_and_keeps_its_books() {
    const REPLICATIONS: usize = 2;
    for path in sims() {
        let name = path.display().to_string();
        // A `[passage]` table turns the server's watch on: its mean count in every run.
        let watched = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .any(|l| l.trim() == "[passage]");
        let tmp = TempDir::new("sim-run");
        let out = tmp.join("out");
        let o = jitterlab(
            &repo(),
            &[
                "run",
                path.to_str().unwrap(),
                "--replications",
                &REPLICATIONS.to_string(),
                "--no-plots",
                "--quiet",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        for file in [
            "summary.csv",
            "aggregate.csv",
            "compare.csv",
            "timeseries.csv",
            "attempts.csv",
            "latency.csv",
            "scenario.toml",
            "meta.json",
        ] {
            assert!(out.join(file).is_file(), "{name}: no {file}");
        }

        let doc = ScenarioDoc::load(&path).unwrap();
        let points = doc.points().unwrap().len();
        let strategies = doc.base().unwrap().strategies.len();
        let summary = csv_rows(&out.join("summary.csv"));
        assert_eq!(summary.len(), points * strategies * REPLICATIONS, "{name}");
        for (key, _) in doc.sweep().unwrap().axes {
            assert!(
                summary[0].contains_key(&key),
                "{name}: no column for sweep key {key}"
            );
        }
        for (i, row) in summary.iter().enumerate() {
            let at = format!("{name}: summary.csv row {}", i + 1);
            let requests = num(row, "requests");
            assert!(requests > 0.0, "{at}: no requests");
            // Every request ends exactly once.
            let gave_up: f64 = row
                .keys()
                .filter(|k| k.starts_with("gave_up_"))
                .map(|k| num(row, k))
                .sum();
            let ended = num(row, "succeeded")
                + num(row, "failed")
                + gave_up
                + num(row, "rejected_by_breaker")
                + num(row, "throttled")
                + num(row, "unfinished");
            assert_eq!(
                ended, requests,
                "{at}: outcomes do not add up to the requests"
            );
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
            assert!(
                close(num(row, "amplification"), num(row, "attempts") / requests),
                "{at}: amplification"
            );
            assert!(
                close(num(row, "success_rate"), num(row, "succeeded") / requests),
                "{at}: success_rate"
            );
            if num(row, "succeeded") > 0.0 {
                let p: Vec<f64> = [
                    "latency_p50_ms",
                    "latency_p95_ms",
                    "latency_p99_ms",
                    "latency_max_ms",
                ]
                .iter()
                .map(|c| num(row, c))
                .collect();
                assert!(
                    p[0] >= 0.0 && p.windows(2).all(|w| w[0] <= w[1]),
                    "{at}: percentiles {p:?}"
                );
            }
            for share in [
                "server_busy_share",
                "wasted_work_share",
                "retry_after_share",
            ] {
                let v = num(row, share);
                assert!((0.0..=1.0).contains(&v), "{at}: {share} = {v}");
            }
        }

        let aggregate = csv_rows(&out.join("aggregate.csv"));
        assert!(!aggregate.is_empty(), "{name}: empty aggregate.csv");
        let layered = out.join("layers.csv").exists();
        for row in &aggregate {
            // The recovery metrics exist only in runs with a trigger (recovery_ms only in
            // those that recovered); every other metric in every run of these scenarios.
            let recovery = [
                "goodput_before",
                "goodput_after",
                "recovered",
                "recovery_ms",
                "relapsed",
                "oscillating",
                "oscillation_period_ms",
                "degraded_before",
                "time_to_collapse_ms",
                "time_to_healthy_ms",
                "full_share",
            ]
            .contains(&row["metric"].as_str());
            // Latencies exist in the runs where some request succeeded.
            let succeeded_runs = summary
                .iter()
                .filter(|r| {
                    r["point"] == row["point"]
                        && r["strategy"] == row["strategy"]
                        && num(r, "succeeded") > 0.0
                })
                .count();
            if recovery {
                assert!(
                    num(row, "n") <= REPLICATIONS as f64,
                    "{name}: aggregate.csv {row:?}"
                );
            } else if [
                "chain_attempts",
                "chain_amplification",
                "deepest_amplification",
            ]
            .contains(&row["metric"].as_str())
            {
                // A chain's load: in every run of a scenario with layers, in none without.
                let n = if layered { REPLICATIONS } else { 0 };
                assert_eq!(num(row, "n"), n as f64, "{name}: aggregate.csv {row:?}");
            } else if row["metric"] == "in_system_mean" {
                let n = if watched { REPLICATIONS } else { 0 };
                assert_eq!(num(row, "n"), n as f64, "{name}: aggregate.csv {row:?}");
            } else if row["metric"].starts_with("latency_") {
                assert_eq!(
                    num(row, "n"),
                    succeeded_runs as f64,
                    "{name}: aggregate.csv {row:?}"
                );
            } else {
                assert_eq!(
                    num(row, "n"),
                    REPLICATIONS as f64,
                    "{name}: aggregate.csv {row:?}"
                );
            }
        }

        // Each bucket's arrivals are its first attempts and retries; an attempt reaches the
        // server at most once, so replication 0's buckets hold at most its attempts.
        let series = csv_rows(&out.join("timeseries.csv"));
        assert!(!series.is_empty(), "{name}: empty timeseries.csv");
        let mut arrivals: HashMap<(String, String), f64> = HashMap::new();
        for row in &series {
            assert_eq!(
                num(row, "arrivals"),
                num(row, "first_attempts") + num(row, "retries"),
                "{name}: timeseries.csv {row:?}"
            );
            *arrivals
                .entry((row["point"].clone(), row["strategy"].clone()))
                .or_default() += num(row, "arrivals");
        }
        for row in summary.iter().filter(|r| r["replication"] == "0") {
            let key = (row["point"].clone(), row["strategy"].clone());
            let seen = arrivals.get(&key).copied().unwrap_or(0.0);
            assert!(
                seen <= num(row, "attempts"),
                "{name} {key:?}: {seen} arrivals but {} attempts",
                num(row, "attempts")
            );
        }
    }
}

#[test]
fn builtin_is_the_thundering_herd_file() {
    let file = ScenarioDoc::load(&crate::common::repo().join("sims/thundering-herd.toml")).unwrap();
    let builtin = ScenarioDoc::builtin();
    assert_eq!(
        builtin.base().unwrap().to_toml(None),
        file.base().unwrap().to_toml(None)
    );
}

#[test]
fn thundering_herd_default_shows_the_herd_and_the_cure() {
    // The built-in default with its own replications (5).
    let doc = ScenarioDoc::builtin();
    let plan = plan(&doc);
    let records = execute(&plan);
    let get = |s: &str, m: Metric| {
        let e = est(&plan, &records, 0, s, m);
        eprintln!(
            "herd {s:>12} {m:<15} {:>10.1} ± {:.1}",
            e.mean,
            half_width(&e)
        );
        e.mean
    };
    // Clients outlast the outage: the run shows the herd at recovery, not give-ups.
    for s in ["no_jitter", "full", "equal", "decorrelated"] {
        assert!(get(s, Metric::SuccessRate) > 0.99, "{s}");
    }
    let (nj, full) = (
        get("no_jitter", Metric::PeakRetries),
        get("full", Metric::PeakRetries),
    );
    assert!(nj > full, "peak_retries: no_jitter {nj} > full {full}");
    let (nj, full) = (
        get("no_jitter", Metric::LatencyP99Ms),
        get("full", Metric::LatencyP99Ms),
    );
    assert!(full < nj, "p99: full {full} < no_jitter {nj}");
}
