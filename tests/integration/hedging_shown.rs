//! The hedging trade-off shown (issue 28): the `hedging` chart drawn for a folder that hedges
//! and for no other, the report's hedging words and answer, and `recommend`'s hedging default
//! (lowest p99 within 1.25 copies per request) against the choice computed from
//! `aggregate.csv` by hand.

use std::collections::HashMap;
use std::path::Path;

use crate::common::{TempDir, jitterlab, stderr, stdout};

/// Ten workers of exponential 10 ms service (1 000 requests/s), swept from light load to
/// near capacity; no hedging, a hedge after the service's p50 (about 1.5 copies a request at
/// light load, past the 1.25 limit) and one after its p90 (about 1.1).
const HEDGED: &str = r#"
name = "hedging-small"
seed = 7
horizon = "6s"
replications = 5
[workload]
kind = "poisson"
rate = 300.0
duration = "5s"
[server]
kind = "queue"
workers = 10
queue = 200
service = { dist = "exponential", mean = "10ms" }
[client]
timeout = "off"
max_attempts = 1
deadline = "2s"
[backoff]
strategies = [
  { name = "no_hedging", jitter = "full" },
  { name = "hedge_p50", jitter = "full", hedging = { delay = "7ms", max_attempts = 2 } },
  { name = "hedge_p90", jitter = "full", hedging = { delay = "23ms", max_attempts = 2 } },
]
[recommend]
min_success = 0.99
[sweep]
"workload.rate" = [300.0, 950.0]
"#;

/// The same world without hedging: retries after a failure.
const RETRIES: &str = r#"
name = "retries-small"
seed = 7
horizon = "6s"
replications = 2
[workload]
kind = "poisson"
rate = 300.0
duration = "5s"
[server]
kind = "queue"
workers = 10
queue = 200
service = { dist = "exponential", mean = "10ms" }
[client]
timeout = "30ms"
max_attempts = 3
[backoff]
strategies = ["full", "none"]
[sweep]
"workload.rate" = [300.0, 950.0]
"#;

/// Runs `text` into `tmp/name` (charts and report drawn) and returns the folder.
fn run(tmp: &TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let file = tmp.join(&format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let out = tmp.join(name);
    let o = jitterlab(
        tmp.path(),
        &[
            "run",
            &file.display().to_string(),
            "--out",
            &out.display().to_string(),
            "--quiet",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    out
}

/// `aggregate.csv`'s means by (point, strategy, metric).
fn means(dir: &Path) -> HashMap<(String, String, String), f64> {
    let text = std::fs::read_to_string(dir.join("aggregate.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (p, s, m, mean) = (col("point"), col("strategy"), col("metric"), col("mean"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| !f[mean].is_empty())
        .map(|f| {
            let key = (f[p].to_string(), f[s].to_string(), f[m].to_string());
            (key, f[mean].parse().unwrap())
        })
        .collect()
}

/// `pareto.csv`'s recommended strategy by point.
fn recommended(dir: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(dir.join("pareto.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (p, s, r) = (col("point"), col("strategy"), col("recommended"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[r] == "true")
        .map(|f| (f[p].to_string(), f[s].to_string()))
        .collect()
}

#[test]
fn the_hedging_chart_and_words_are_a_hedging_folders_only() {
    let tmp = TempDir::new("hedging-shown");
    let hedged = run(&tmp, "hedged", HEDGED);
    let retries = run(&tmp, "retries", RETRIES);
    for ext in ["png", "svg"] {
        assert!(
            hedged.join(format!("hedging.{ext}")).is_file(),
            "hedging.{ext}"
        );
        assert!(
            !retries.join(format!("hedging.{ext}")).exists(),
            "no hedging.{ext}"
        );
    }
    let svg = std::fs::read_to_string(hedged.join("hedging.svg")).unwrap();
    assert!(svg.contains("copies sent per request"), "its x axis");
    assert!(svg.contains("Hedging at offered load 300/s:"), "its answer");

    let report = std::fs::read_to_string(hedged.join("report.html")).unwrap();
    let first = report.find("<section class=\"chart headline\" id=\"chart-hedging\"");
    assert!(first.is_some(), "the hedging chart is the headline");
    assert!(
        report.contains("id=\"hedging-answer\""),
        "the answer's lead line"
    );
    assert!(
        report.contains("<h2>Copies reaching the server"),
        "hedges are copies"
    );
    assert!(!report.contains("<h2>Attempts reaching"), "not attempts");
    assert!(
        report.contains("peak hedges per bucket"),
        "the table says hedges"
    );
    // The file names and ids keep the simulator's words.
    assert!(report.contains("id=\"chart-attempts\"") && report.contains("attempts.svg"));

    let plain = std::fs::read_to_string(retries.join("report.html")).unwrap();
    assert!(!plain.contains("hedging-answer") && !plain.contains("chart-hedging"));
    assert!(
        plain.contains("<h2>Attempts reaching the server"),
        "retries stay retries"
    );
}

#[test]
fn recommend_on_a_hedging_folder_takes_the_lowest_p99_within_the_copy_limit() {
    let tmp = TempDir::new("hedging-recommend");
    let dir = run(&tmp, "hedged", HEDGED);
    let means = means(&dir);
    let mean = |p: &str, s: &str, m: &str| means[&(p.to_string(), s.to_string(), m.to_string())];
    // By hand: at each load, the strategies with success >= 0.99 and at most 1.25 copies a
    // request, the lowest p99 first, then the fewest copies.
    let expected: HashMap<String, String> = ["0", "1"]
        .into_iter()
        .filter_map(|p| {
            let mut ok: Vec<&str> = ["no_hedging", "hedge_p50", "hedge_p90"]
                .into_iter()
                .filter(|s| mean(p, s, "success_rate") >= 0.99)
                .filter(|s| mean(p, s, "amplification") <= 1.25)
                .collect();
            ok.sort_by(|a, b| {
                let key = |s: &str| (mean(p, s, "latency_p99_ms"), mean(p, s, "amplification"));
                key(a).partial_cmp(&key(b)).unwrap()
            });
            ok.first().map(|s| (p.to_string(), s.to_string()))
        })
        .collect();
    // The example is one where the answer is a hedge at light load: hedge_p50 sends too many
    // copies, hedge_p90 cuts the tail within the limit.
    assert!(mean("0", "hedge_p50", "amplification") > 1.25);
    assert_eq!(expected.get("0").map(String::as_str), Some("hedge_p90"));

    let at = dir.display().to_string();
    let o = jitterlab(tmp.path(), &["recommend", &at, "--no-plots"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let got = recommended(&dir);
    assert_eq!(got.len(), expected.len(), "{text}");
    for (p, best) in &expected {
        let pick = &got[p];
        if pick != best {
            // The lower p99 within the replications' noise is a tie: the fewer copies wins,
            // and the output says so.
            assert!(
                text.contains(&format!("tied on p99_ms with {best}")),
                "{text}"
            );
            assert!(
                mean(p, pick, "amplification") < mean(p, best, "amplification"),
                "{text}"
            );
        }
    }
    assert!(
        text.contains("objective: lowest p99 latency, then lowest amplification (the default for a folder that hedges"),
        "{text}"
    );
    assert!(text.contains("amplification <= 1.25 (copies per request, the hedging default"));

    // Named, the objective and the limit are the user's.
    let o = jitterlab(
        tmp.path(),
        &[
            "recommend",
            &at,
            "--no-plots",
            "--objective",
            "amplification",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        recommended(&dir).get("0").map(String::as_str),
        Some("no_hedging")
    );
    assert!(!stdout(&o).contains("hedging default"), "{}", stdout(&o));
    let o = jitterlab(
        tmp.path(),
        &["recommend", &at, "--no-plots", "--max-amplification", "2"],
    );
    // The lowest p99 within 2 copies, unless the replications do not tell it from the next.
    let text = stdout(&o);
    let pick = recommended(&dir).get("0").cloned();
    assert!(
        pick.as_deref() == Some("hedge_p50") || text.contains("tied on p99_ms with hedge_p50"),
        "{text}"
    );
    assert!(text.contains("amplification <= 2,"), "{text}");
}
