//! The built binary, as a user runs it: exit codes, error messages that
//! name what is wrong, nothing written on bad input, the `delays` table, the result folder's
//! files and headers, `list`.

use std::path::Path;
use std::process::Output;

use crate::common::{TempDir, jitterlab, repo, sims, stderr, stdout};

/// Names of the entries of a folder, sorted.
pub(crate) fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Exit code 2, an error naming every `needle`, no panic.
pub(crate) fn assert_bad_input(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {err}");
    assert!(!err.contains("panicked"), "panicked: {err}");
    assert!(err.starts_with("error: "), "one error line first: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr should name {n:?}: {err}");
    }
}

#[test]
fn check_refuses_bad_scenarios_naming_key_and_line() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "unknown-key.toml",
            "name = \"x\"\n[workload]\nclients = 10\nbogus = 3\n",
            &["unknown-key.toml:4:1: `workload.bogus`: unknown field"],
        ),
        (
            "negative-duration.toml",
            "name = \"x\"\n[workload]\nkind = \"poisson\"\nduration = \"-5s\"\n",
            &["negative-duration.toml:4:12: invalid value for `workload.duration`: \"-5s\""],
        ),
        (
            "zero-workers.toml",
            "[server]\nkind = \"queue\"\nworkers = 0\n",
            &["zero-workers.toml:3:11: invalid value for `server.workers`: 0"],
        ),
        (
            "not-toml.toml",
            "this is { not toml\n",
            &["not-toml.toml:1:6: "],
        ),
        (
            "base-above-cap.toml",
            "[workload]\nclients = 10\n\n[backoff]\nbase = \"100ms\"\ncap = \"10ms\"\n",
            &[
                "base-above-cap.toml:6:7: invalid value for `backoff.cap`: 10ms: a duration at least base (100ms)",
            ],
        ),
        (
            "healthy-above-collapse.toml",
            "[passage]\ncollapse = 200\nhealthy = 300\n",
            &[
                "healthy-above-collapse.toml:3:11: invalid value for `passage.healthy`: 300: a level below passage.collapse (200)",
            ],
        ),
        (
            "zero-collapse.toml",
            "[passage]\ncollapse = 0\n",
            &[
                "zero-collapse.toml:2:12: invalid value for `passage.collapse`: 0: an integer from 1 to 4294967295",
            ],
        ),
        (
            "passage-typo.toml",
            "[passage]\ncolapse = 200\n",
            &[
                "passage-typo.toml:2:1: `passage.colapse`: unknown field `colapse`, expected `collapse` or `healthy`",
            ],
        ),
    ];
    for (file, text, needles) in cases {
        let tmp = TempDir::new("check-bad");
        std::fs::write(tmp.join(file), text).unwrap();
        let o = jitterlab(tmp.path(), &["check", file]);
        assert_bad_input(&o, needles);
        assert!(stderr(&o).contains(file), "names the file: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{file}: nothing on stdout");
        assert_eq!(
            entries(tmp.path()),
            vec![file.to_string()],
            "{file}: wrote nothing"
        );
    }
}

#[test]
fn check_accepts_every_sim_file() {
    for path in sims() {
        let o = jitterlab(&repo(), &["check", path.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            stderr(&o)
        );
        // It prints the resolved scenario: the library's, and one that checks again.
        let out = stdout(&o);
        let doc = jitterlab::scenario::ScenarioDoc::load(&path).unwrap();
        let resolved = doc.base().unwrap().to_toml(doc.sweep_table());
        assert_eq!(out.trim_end(), resolved.trim_end(), "{}", path.display());
        let again = jitterlab::scenario::ScenarioDoc::parse(&out, "<stdout>", "x").unwrap();
        again.points().unwrap();
        assert!(stderr(&o).starts_with("ok: "), "{}", stderr(&o));
    }
}

#[test]
fn delays_refuses_bad_parameters_naming_them() {
    // Each engine field is named by the flag that set it.
    let cases: &[(&[&str], &str)] = &[
        (
            &["--cap", "10ms", "--base", "50ms"],
            "invalid value for `--cap`: 10ms: a duration at least base (50ms)",
        ),
        (
            &["--multiplier", "0.5"],
            "invalid value for `--multiplier`: 0.5: a finite number >= 1",
        ),
        (
            &["--jitter", "decorrelated", "--growth", "0.5"],
            "invalid value for `--growth`: 0.5: a finite number >= 1",
        ),
        (
            &["--factor", "2"],
            "invalid value for `--factor`: 2: a number from 0 to 1",
        ),
        (
            &["--base", "0ms"],
            "invalid value for `--base`: 0ms: a duration greater than 0",
        ),
        (&["--base", "-1s"], "invalid value for `--base`: \"-1s\""),
        (
            &["--base", "banana"],
            "invalid value for `--base`: \"banana\"",
        ),
        (
            &["--cap", "5parsec"],
            "invalid value for `--cap`: \"5parsec\"",
        ),
        (
            &["--jitter", "fuzzy"],
            "invalid value for `--jitter`: \"fuzzy\"",
        ),
        (&["--jitter", "full,"], "invalid value for `--jitter`: \"\""),
    ];
    for (args, first) in cases {
        let tmp = TempDir::new("delays-bad");
        let mut all = vec!["delays"];
        all.extend_from_slice(args);
        let o = jitterlab(tmp.path(), &all);
        assert_bad_input(&o, &[&format!("error: {first}")]);
        assert!(stdout(&o).is_empty(), "{args:?}: no CSV on stdout");
        assert!(entries(tmp.path()).is_empty());
    }
}

const FULL: &[&str] = &[
    "delays",
    "--jitter",
    "full",
    "--base",
    "50ms",
    "--multiplier",
    "2",
    "--cap",
    "2s",
    "--retries",
    "8",
    "--samples",
    "20000",
];

/// Parses the delays CSV into (retry, delay_ms) after checking its header and jitter column.
fn parse_delays(text: &str, jitter: &str) -> Vec<(usize, f64)> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("jitter,sample,retry,delay_ms"));
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), 4, "{l}");
            assert_eq!(cells[0], jitter);
            (cells[2].parse().unwrap(), cells[3].parse().unwrap())
        })
        .collect()
}

#[test]
fn delays_full_jitter_has_the_right_means_and_is_seeded() {
    let tmp = TempDir::new("delays");
    let with_seed = |seed: &str| {
        let mut args = FULL.to_vec();
        args.extend(["--seed", seed]);
        let o = jitterlab(tmp.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o.stdout
    };
    let a = with_seed("1");
    let text = String::from_utf8(a.clone()).unwrap();
    assert_eq!(
        text.lines().count(),
        160_001,
        "header + 20 000 samples x 8 retries"
    );
    let rows = parse_delays(&text, "full");
    let mut sums = [0.0f64; 9];
    let mut counts = [0usize; 9];
    for (k, d) in rows {
        assert!((1..=8).contains(&k));
        sums[k] += d;
        counts[k] += 1;
    }
    for k in 1..=8 {
        // d_k = min(cap, base * multiplier^(k-1)); full jitter is U[0, d_k], mean d_k / 2.
        let d_k = (50.0 * 2f64.powi(k as i32 - 1)).min(2000.0);
        let mean = sums[k] / counts[k] as f64;
        assert_eq!(counts[k], 20_000);
        assert!(
            (mean - d_k / 2.0).abs() <= 0.02 * d_k / 2.0,
            "retry {k}: mean {mean} vs {}",
            d_k / 2.0
        );
    }
    assert_eq!(a, with_seed("1"), "same seed, same bytes");
    assert_ne!(a, with_seed("2"), "another seed, other sleeps");
    assert!(
        entries(tmp.path()).is_empty(),
        "delays writes only to stdout"
    );
}

#[test]
fn decorrelated_delays_stay_within_base_and_cap() {
    let tmp = TempDir::new("decorrelated");
    let mut args = FULL.to_vec();
    args[2] = "decorrelated";
    args.extend(["--seed", "3"]);
    let o = jitterlab(tmp.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = parse_delays(&stdout(&o), "decorrelated");
    assert_eq!(rows.len(), 160_000);
    for &(k, d) in &rows {
        assert!(
            (50.0..=2000.0).contains(&d),
            "retry {k}: {d} ms outside [base, cap]"
        );
    }
    // The AWS formula clamps at the cap: late retries bunch exactly there.
    let at_cap = rows.iter().filter(|(k, d)| *k == 8 && *d == 2000.0).count();
    assert!(
        at_cap > 1000,
        "{at_cap} of 20 000 eighth retries at the cap"
    );
}

const SUMMARY: &str = "point,strategy,replication,seed,requests,attempts,amplification,succeeded,failed,gave_up_attempts,gave_up_deadline,gave_up_budget,rejected_by_breaker,unfinished,success_rate,latency_mean_ms,latency_p50_ms,latency_p95_ms,latency_p99_ms,latency_p999_ms,latency_max_ms,peak_arrivals,peak_retries,makespan_ms,server_busy_share,wasted_work_share,retry_after_share,events,goodput_before,goodput_after,recovered,recovery_ms,throttled,relapsed,oscillating,oscillation_period_ms,degraded_before,in_system_mean,full_share,time_to_collapse_ms,time_to_healthy_ms,chain_attempts,chain_amplification,deepest_amplification";

fn first_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// `run` of the built-in scenario, 200 clients and 2 replications, into `dir/result`.
fn run_small(dir: &Path) -> Output {
    jitterlab(
        dir,
        &[
            "run",
            "--set",
            "workload.clients=200",
            "--replications",
            "2",
            "--out",
            "result",
            "--quiet",
            "--no-plots",
        ],
    )
}

#[test]
fn run_writes_the_result_folder_of_the_contract() {
    let tmp = TempDir::new("run");
    let o = run_small(tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
    assert_eq!(entries(tmp.path()), vec!["result"], "only --out is written");
    let out = tmp.join("result");
    let names = entries(&out);
    for f in [
        "summary.csv",
        "aggregate.csv",
        "timeseries.csv",
        "attempts.csv",
        "latency.csv",
        "scenario.toml",
        "meta.json",
    ] {
        assert!(names.contains(&f.to_string()), "{f} missing: {names:?}");
    }
    assert!(
        !names.iter().any(|n| n.ends_with(".tmp")),
        "temp files left: {names:?}"
    );
    // docs/results.md headers, literally (no sweep in the built-in scenario).
    assert_eq!(first_line(&out.join("summary.csv")), SUMMARY);
    assert_eq!(
        first_line(&out.join("aggregate.csv")),
        "point,strategy,metric,mean,sd,ci95_low,ci95_high,n"
    );
    assert_eq!(
        first_line(&out.join("timeseries.csv")),
        "point,strategy,t_ms,arrivals,first_attempts,retries,successes,rejections,timeouts,in_system,retry_dispersion"
    );
    assert_eq!(
        first_line(&out.join("attempts.csv")),
        "point,strategy,attempt,succeeded,share"
    );
    assert_eq!(
        first_line(&out.join("latency.csv")),
        "point,strategy,latency_ms,cdf"
    );
    // 4 strategies x 2 replications, 200 requests each.
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<&str> = summary.lines().skip(1).collect();
    assert_eq!(rows.len(), 8);
    for row in &rows {
        assert_eq!(row.split(',').nth(4), Some("200"), "{row}");
    }
    // meta.json has at least the documented keys.
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("meta.json")).unwrap()).unwrap();
    for key in [
        "version",
        "command",
        "seed",
        "threads",
        "wall_seconds",
        "events",
        "events_per_second",
    ] {
        assert!(meta.get(key).is_some(), "meta.json lacks {key}: {meta}");
    }
    assert_eq!(meta["seed"], 1);
    // scenario.toml is the resolved scenario, with the overrides applied, and it checks.
    let resolved = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    let doc = jitterlab::scenario::ScenarioDoc::parse(&resolved, "scenario.toml", "x").unwrap();
    let base = doc.base().unwrap();
    assert_eq!(base.replications, 2);
    assert!(resolved.contains("clients = 200"), "{resolved}");
    // The table on stdout: a header and one line per strategy.
    let table = stdout(&o);
    assert!(table.starts_with("strategy"), "{table}");
    for s in ["no_jitter", "full", "equal", "decorrelated"] {
        assert!(
            table.lines().any(|l| l.starts_with(s)),
            "{s} missing: {table}"
        );
    }
}

#[test]
fn run_with_a_sweep_adds_one_column_per_sweep_key() {
    let tmp = TempDir::new("run-sweep");
    let scenario = repo().join("sims/retry-after-herd.toml");
    let o = jitterlab(
        tmp.path(),
        &[
            "run",
            scenario.to_str().unwrap(),
            "--set",
            "workload.clients=300",
            "--replications",
            "2",
            "--out",
            "r",
            "--quiet",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let header = first_line(&tmp.join("r/summary.csv"));
    assert_eq!(
        header,
        SUMMARY.replacen("seed,", "seed,client.retry_after,", 1)
    );
    assert_eq!(
        first_line(&tmp.join("r/aggregate.csv")),
        "point,strategy,client.retry_after,metric,mean,sd,ci95_low,ci95_high,n"
    );
    let summary = std::fs::read_to_string(tmp.join("r/summary.csv")).unwrap();
    // 2 points x 2 strategies x 2 replications, the point's value in its column.
    assert_eq!(summary.lines().count(), 1 + 8);
    assert_eq!(
        summary.lines().filter(|l| l.contains(",spread,")).count(),
        4
    );
}

#[test]
fn list_shows_every_sim_file() {
    let o = jitterlab(&repo(), &["list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for path in sims() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let doc = jitterlab::scenario::ScenarioDoc::load(&path).unwrap();
        let base = doc.base().unwrap();
        let line = out
            .lines()
            .find(|l| l.contains(&format!("{stem}.toml")))
            .unwrap_or_else(|| panic!("{stem} not listed: {out}"));
        assert!(line.starts_with(&base.name), "{line}");
        assert!(line.contains(&base.description), "{line}");
        assert!(!line.contains("(invalid"), "{line}");
    }
}

#[test]
fn bad_shard_is_a_usage_error() {
    let tmp = TempDir::new("shard");
    for shard in ["3/2", "2/2", "0/0", "x"] {
        let o = jitterlab(
            tmp.path(),
            &["run", "--shard", shard, "--out", "o", "--quiet"],
        );
        assert_bad_input(&o, &["--shard"]);
        assert!(
            entries(tmp.path()).is_empty(),
            "--shard {shard} wrote something"
        );
    }
}

#[test]
fn recommend_parses_the_objective_once_and_writes_pareto_csv() {
    let tmp = TempDir::new("recommend");
    let o = run_small(tmp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // An unknown objective: exit 2, the name given and the known ones listed, nothing written.
    let o = jitterlab(
        tmp.path(),
        &["recommend", "result", "--objective", "p98", "--no-plots"],
    );
    assert_bad_input(&o, &["--objective", "\"p98\"", "p99", "latency_p999_ms"]);
    assert!(!tmp.join("result").join("pareto.csv").exists());
    // Any metric that is better low or high ranks; the answer names it.
    let o = jitterlab(
        tmp.path(),
        &[
            "recommend",
            "result",
            "--objective",
            "latency_p999_ms",
            "--no-plots",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with("objective: lowest p99.9 latency, then lowest amplification\n"),
        "{text}"
    );
    assert!(
        text.contains("p999_ms [95% CI]") && text.contains("\nrecommended: "),
        "{text}"
    );
    let pareto = std::fs::read_to_string(tmp.join("result").join("pareto.csv")).unwrap();
    let mut lines = pareto.lines();
    assert_eq!(
        lines.next(),
        Some(
            "point,strategy,amplification,latency_p99_ms,on_front,recommended,success_rate,eligible,chain_amplification"
        )
    );
    // One world point (no sweep): one recommendation, eligible and on the front.
    let recommended: Vec<&str> = lines.filter(|l| l.contains(",true,true,")).collect();
    assert_eq!(recommended.len(), 1, "{pareto}");
    assert!(recommended[0].ends_with(",true,"), "{pareto}");
}

#[test]
fn recommend_says_when_its_pick_sits_at_the_edge_of_the_grid() {
    let tmp = TempDir::new("recommend-edge");
    let o = jitterlab(
        tmp.path(),
        &[
            "run",
            "choose-base-and-cap",
            "--replications",
            "2",
            "--out",
            "r",
            "--quiet",
            "--no-plots",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Unconstrained, the fewest attempts come at the grid's largest base and cap.
    let o = jitterlab(tmp.path(), &["recommend", "r", "--no-plots"]);
    let text = stdout(&o);
    assert!(
        text.contains("recommended: backoff.base=200ms, backoff.cap=8s / full"),
        "{text}"
    );
    for key in ["backoff.base = 200ms", "backoff.cap = 8s"] {
        let line = format!(
            "at the edge of the grid: {key} is the largest value swept, so the best may lie beyond it"
        );
        assert!(text.contains(&line), "{key}: {text}");
    }
    // Within a p99 of 8 s the cap is inside the grid: only the base is at its edge.
    let o = jitterlab(tmp.path(), &["recommend", "r", "--no-plots", "--p99", "8s"]);
    let text = stdout(&o);
    assert!(
        text.contains("recommended: backoff.base=200ms, backoff.cap=2s / full"),
        "{text}"
    );
    assert_eq!(text.matches("at the edge of the grid").count(), 1, "{text}");
    assert!(text.contains("extend the sweep above 200ms."), "{text}");
}

#[test]
fn recommend_says_when_its_pick_is_tied_or_far_from_the_others() {
    let tmp = TempDir::new("recommend-doubts");
    let run = ["run", "aws-2026", "--out", "r", "--quiet", "--no-plots"];
    let o = jitterlab(tmp.path(), &run);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // At 280/s the adaptive mode and its DynamoDB variant send as many attempts within the
    // noise of their paired difference: a tie, told apart by nothing the replications support.
    let at = |rate: &str| -> String {
        let o = jitterlab(tmp.path(), &["recommend", "r", "--no-plots", "--at", rate]);
        stdout(&o)
    };
    let text = at("workload.rate=28");
    assert!(
        text.contains("recommended: workload.rate=28.0 / aws-adaptive\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "tied on amplification with aws-adaptive-dynamodb (the replications' 95 % intervals do not tell them apart)"
        ),
        "{text}"
    );
    // At 200/s their paired difference (common random numbers) excludes 0: no tie, though
    // their own intervals overlap.
    let text = at("workload.rate=20");
    assert!(
        text.contains("recommended: workload.rate=20.0 / aws-adaptive\n"),
        "{text}"
    );
    assert!(!text.contains("tied on"), "{text}");
    // The fewest attempts cost a p99 about ten times the others': said, with the way out.
    let note = (text.lines())
        .find(|l| l.starts_with("note: aws-adaptive's p99"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(note.ends_with("--p99 sets a limit."), "{note}");
    // The world point is named as the load in total, with the per-client rate beside it.
    assert!(
        text.contains("at: offered load 200/s in total (10 clients × 20/s)"),
        "{text}"
    );
    // Within a p99 limit and a lower floor, the standard mode wins on load and its p99 is
    // like the others', but it serves fewer requests than the adaptive mode: said.
    let o = jitterlab(
        tmp.path(),
        &[
            "recommend",
            "r",
            "--no-plots",
            "--at",
            "workload.rate=20",
            "--p99",
            "5s",
            "--min-success",
            "0.85",
        ],
    );
    let text = stdout(&o);
    assert!(!text.contains("'s p99"), "{text}");
    assert!(
        text.contains(
            "note: aws-standard serves 88.1 % of requests where another pair here serves 95.2 %"
        ),
        "{text}"
    );
}

#[test]
fn presets_lists_every_preset_and_shows_envoys_keys() {
    let dir = TempDir::new("presets-list");
    let o = jitterlab(dir.path(), &["presets"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    // Two lines each (summary, source), every preset.
    assert_eq!(
        out.lines().count(),
        2 * jitterlab::presets::NAMES.len(),
        "{out}"
    );
    assert_eq!(jitterlab::presets::NAMES.len(), 14, "{out}");
    let names: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, jitterlab::presets::NAMES, "{out}");
    assert!(names.contains(&"envoy"), "{out}");
    let o = jitterlab(dir.path(), &["presets", "show", "envoy"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let show = stdout(&o);
    for needle in [
        "base = \"25ms\"",
        "cap = \"250ms\"",
        "max_attempts = 2",
        "kind = \"concurrency\"",
        "min_concurrency = 3",
        "scope = \"shared\"",
    ] {
        assert!(show.contains(needle), "{needle}: {show}");
    }
}

/// A `recommendation.txt` jitterlab did not write stops `recommend` before it writes
/// anything: exit 2, the user's file as it was, no `pareto.csv`.
#[test]
fn recommend_refuses_a_foreign_recommendation_txt_before_writing() {
    let tmp = TempDir::new("recommend-foreign");
    let run = [
        "run",
        "thundering-herd",
        "--replications",
        "2",
        "--out",
        "r",
        "--quiet",
        "--no-plots",
    ];
    let o = jitterlab(tmp.path(), &run);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(tmp.join("r/recommendation.txt"), "mine").unwrap();
    let o = jitterlab(tmp.path(), &["recommend", "r", "--no-plots"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("recommendation.txt"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(tmp.join("r/recommendation.txt")).unwrap(),
        "mine"
    );
    assert!(!tmp.join("r/pareto.csv").exists());
}
