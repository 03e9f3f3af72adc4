//! Chains of services end to end (`[[layers]]`): `sims/layered-retries.toml`'s storm and
//! remedies as `layers.csv` reports them, its bytes on 1 and 2 threads and from its resolved
//! `scenario.toml`, and the schema's refusals.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{TempDir, jitterlab, repo, stderr};

/// `layers.csv` as (point, strategy, replication) → arrivals per client request by layer.
fn amplification(dir: &Path) -> BTreeMap<(u32, String, u32), Vec<f64>> {
    let mut rows = csv::Reader::from_path(dir.join("layers.csv")).expect("layers.csv");
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (point, strategy, rep, layer, amp, requests, unfinished) = (
        col("point"),
        col("strategy"),
        col("replication"),
        col("layer"),
        col("amplification"),
        col("requests"),
        col("unfinished"),
    );
    let mut out: BTreeMap<(u32, String, u32), Vec<f64>> = BTreeMap::new();
    for row in rows.records() {
        let row = row.unwrap();
        let key = (
            row[point].parse().unwrap(),
            row[strategy].to_string(),
            row[rep].parse().unwrap(),
        );
        let v = out.entry(key).or_default();
        assert_eq!(
            row[layer].parse::<usize>().unwrap(),
            v.len() + 1,
            "layers in order"
        );
        assert!(row[requests].parse::<u64>().unwrap() > 0);
        assert_eq!(
            &row[unfinished], "0",
            "every request ends before the horizon"
        );
        v.push(row[amp].parse().unwrap());
    }
    out
}

fn run(dir: &TempDir, args: &[&str]) {
    let o = jitterlab(dir.path(), args);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn three_layers_of_three_attempts_send_27_to_the_last_and_each_remedy_cuts_it() {
    let dir = TempDir::new("layers");
    let scenario = repo().join("sims/layered-retries.toml");
    let scenario = scenario.to_str().unwrap();
    run(
        &dir,
        &[
            "run",
            scenario,
            "--out",
            "a",
            "--no-plots",
            "--quiet",
            "--threads",
            "1",
        ],
    );
    let amp = amplification(&dir.join("a"));
    // Point 0: the last layer fails throughout. Exactly N, N², N³ per request for the storm;
    // the remedies as computed by hand (the budget and the deadline only bound it).
    for ((point, strategy, _), by_layer) in amp.iter().filter(|(k, _)| k.0 == 0) {
        let expected: Option<[f64; 3]> = match strategy.as_str() {
            "every_layer" => Some([3.0, 9.0, 27.0]),
            "edge_only" => Some([3.0, 3.0, 3.0]),
            "do_not_retry" => Some([1.0, 1.0, 3.0]),
            _ => None,
        };
        match expected {
            Some(e) => assert_eq!(by_layer[..], e[..], "point {point}, {strategy}"),
            // A budget in the middle leaves the upper layers as they are; a propagated
            // deadline cuts the middle too. Both send fewer than 27 and more than 3.
            None => {
                assert_eq!(by_layer[0], 3.0, "{strategy}");
                assert!(by_layer[1] <= 9.0, "{strategy}: {by_layer:?}");
                assert!(
                    by_layer[2] < 27.0 && by_layer[2] > 3.0,
                    "{strategy}: {by_layer:?}"
                );
            }
        }
    }
    // Layer 1 is the clients' server: its shares are summary.csv's, run by run.
    let mut summary = csv::Reader::from_path(dir.join("a/summary.csv")).unwrap();
    let shares: BTreeMap<(String, String, String), (String, String)> = summary
        .deserialize::<BTreeMap<String, String>>()
        .map(|row| {
            let row = row.unwrap();
            let key = (
                row["point"].clone(),
                row["strategy"].clone(),
                row["replication"].clone(),
            );
            (
                key,
                (
                    row["server_busy_share"].clone(),
                    row["wasted_work_share"].clone(),
                ),
            )
        })
        .collect();
    let mut layers = csv::Reader::from_path(dir.join("a/layers.csv")).unwrap();
    for row in layers.deserialize::<BTreeMap<String, String>>() {
        let row = row.unwrap();
        if row["layer"] == "1" {
            let key = (
                row["point"].clone(),
                row["strategy"].clone(),
                row["replication"].clone(),
            );
            let layer1 = (row["busy_share"].clone(), row["wasted_work_share"].clone());
            assert_eq!(layer1, shares[&key], "{key:?}");
        }
    }
    // The herd at every layer adds up to the layers' arrivals of replication 0.
    let mut sums: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    let mut series = csv::Reader::from_path(dir.join("a/layer_timeseries.csv")).unwrap();
    for row in series.deserialize::<BTreeMap<String, String>>() {
        let row = row.unwrap();
        let (first, retries): (u64, u64) = (
            row["first_attempts"].parse().unwrap(),
            row["retries"].parse().unwrap(),
        );
        assert_eq!(first + retries, row["arrivals"].parse::<u64>().unwrap());
        let key = (
            row["point"].clone(),
            row["strategy"].clone(),
            row["layer"].clone(),
        );
        *sums.entry(key).or_default() += first + retries;
    }
    let mut layers = csv::Reader::from_path(dir.join("a/layers.csv")).unwrap();
    let mut checked = 0;
    for row in layers.deserialize::<BTreeMap<String, String>>() {
        let row = row.unwrap();
        if row["replication"] == "0" {
            let key = (
                row["point"].clone(),
                row["strategy"].clone(),
                row["layer"].clone(),
            );
            assert_eq!(
                sums[&key],
                row["arrivals"].parse::<u64>().unwrap(),
                "{key:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * 5 * 3, "2 points, 5 strategies, 3 layers");
    // The same bytes on two threads, from the resolved scenario.toml of the first run, and
    run(
        &dir,
        &[
            "run",
            scenario,
            "--out",
            "b",
            "--no-plots",
            "--quiet",
            "--threads",
            "2",
        ],
    );
    run(
        &dir,
        &[
            "run",
            "a/scenario.toml",
            "--out",
            "c",
            "--no-plots",
            "--quiet",
        ],
    );
    // And merged from two shards (the journal carries every layer).
    for (shard, out) in [("0/2", "s0"), ("1/2", "s1")] {
        run(
            &dir,
            &["run", scenario, "--shard", shard, "--out", out, "--quiet"],
        );
    }
    run(&dir, &["merge", "s0", "s1", "--out", "d", "--no-plots"]);
    for file in [
        "summary.csv",
        "layers.csv",
        "layer_timeseries.csv",
        "timeseries.csv",
        "aggregate.csv",
    ] {
        let a = std::fs::read(dir.join("a").join(file)).unwrap();
        for other in ["b", "c", "d"] {
            let b = std::fs::read(dir.join(other).join(file)).unwrap();
            assert!(a == b, "{file} differs between a and {other}");
        }
    }
}

#[test]
fn the_chain_schema_refuses_what_it_cannot_run_naming_the_key() {
    let dir = TempDir::new("layers-refusals");
    let chain = r#"
[workload]
kind = "burst"
clients = 10
[[layers]]
name = "a"
[[layers]]
name = "b"
"#;
    std::fs::write(dir.join("ok.toml"), chain).unwrap();
    run(
        &dir,
        &[
            "run",
            "ok.toml",
            "--no-plots",
            "--quiet",
            "--replications",
            "1",
        ],
    );
    let refused = |extra: &str, key: &str| {
        std::fs::write(dir.join("bad.toml"), format!("{chain}{extra}")).unwrap();
        let o = jitterlab(dir.path(), &["run", "bad.toml", "--no-plots", "--quiet"]);
        assert_eq!(o.status.code(), Some(2), "{extra}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(key),
            "{extra}: wants {key}: {}",
            stderr(&o)
        );
    };
    refused("[server]\nworkers = 3\n", "server");
    refused(
        "[[faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"1s\"\n",
        "faults",
    );
    refused("client = { max_attempts = 2 }\n", "layers[1].client");
    refused("on_give_up = \"drop\"\n", "layers[1].on_give_up");
    refused("[[layers]]\nname = \"a\"\n", "layers[2].name");
    refused("[layers.server]\nkind = \"occ\"\n", "layers[1].server.kind");
    // The first layer calls the second: its workers are caller slots, never unlimited.
    let calling = chain.replacen(
        "name = \"a\"\n",
        "name = \"a\"\nserver = { workers = \"unlimited\" }\non_give_up = \"maybe\"\n",
        1,
    );
    std::fs::write(dir.join("bad.toml"), &calling).unwrap();
    let o = jitterlab(dir.path(), &["run", "bad.toml", "--no-plots", "--quiet"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("layers[0].server.workers"),
        "{}",
        stderr(&o)
    );
    refused(
        "[backoff]\nstrategies = [{ jitter = \"full\", layers = [{}, {}] }]\n",
        "backoff.strategies[0].layers",
    );
    refused(
        "[backoff]\nstrategies = [{ jitter = \"full\", layers = [{ name = \"x\" }] }]\n",
        "backoff.strategies[0].layers[0].name",
    );
}

/// Writes `text` as `name` in `dir` and runs it; the folder's CSV `file`.
fn run_text(dir: &TempDir, name: &str, text: &str, file: &str) -> Vec<u8> {
    std::fs::write(dir.join(&format!("{name}.toml")), text).unwrap();
    let out = format!("out-{name}");
    run(
        dir,
        &[
            "run",
            &format!("{name}.toml"),
            "--out",
            &out,
            "--no-plots",
            "--quiet",
        ],
    );
    std::fs::read(dir.join(&out).join(file)).unwrap()
}

#[test]
fn a_chain_of_one_layer_gives_the_bytes_of_its_server() {
    let dir = TempDir::new("layers-one");
    let common = "replications = 3\n[workload]\nkind = \"poisson\"\nrate = 200.0\nduration = \"5s\"\n[client]\nmax_attempts = 3\n";
    let server = "workers = 2\nqueue = 5\nservice = { dist = \"exponential\", mean = \"8ms\" }\n";
    let fault = "kind = \"outage\"\nstart = \"1s\"\nend = \"2s\"\n";
    let lone = format!("{common}[server]\n{server}[[faults]]\n{fault}");
    let layer = format!(
        "{common}[[layers]]\nname = \"only\"\n[layers.server]\n{server}[[layers.faults]]\n{fault}"
    );
    for file in ["summary.csv", "timeseries.csv", "latency.csv"] {
        assert!(
            run_text(&dir, "lone", &lone, file) == run_text(&dir, "layer", &layer, file),
            "{file}"
        );
    }
}

#[test]
fn a_sweep_of_backoff_reaches_the_layers_also_from_the_resolved_file() {
    // The layer's backoff sets only its jitter: its base follows the swept [backoff].base,
    // in the file and in the scenario.toml written back.
    let dir = TempDir::new("layers-sweep");
    let text = r#"
replications = 2
[workload]
kind = "burst"
clients = 50
[[layers]]
backoff = { jitter = "full" }
[[layers]]
[[layers.faults]]
kind = "outage"
start = "0s"
end = "1h"
[sweep]
"backoff.base" = ["10ms", "200ms"]
"#;
    let first = run_text(&dir, "sw", text, "layers.csv");
    run(
        &dir,
        &[
            "run",
            "out-sw/scenario.toml",
            "--out",
            "again",
            "--no-plots",
            "--quiet",
        ],
    );
    let again = std::fs::read(dir.join("again/layers.csv")).unwrap();
    assert!(
        first == again,
        "layers.csv differs when run from the resolved file"
    );
    let resolved = std::fs::read_to_string(dir.join("out-sw/scenario.toml")).unwrap();
    assert!(
        !resolved.contains("[layers.backoff]\njitter = \"full\"\nbase"),
        "{resolved}"
    );
}

#[test]
fn a_layer_that_would_retry_forever_at_one_instant_is_refused() {
    let dir = TempDir::new("layers-forever");
    let text = r#"
[workload]
kind = "burst"
clients = 10
[[layers]]
client = { max_attempts = "unlimited", timeout = "off" }
backoff = { jitter = "none" }
[[layers]]
"#;
    std::fs::write(dir.join("bad.toml"), text).unwrap();
    let o = jitterlab(dir.path(), &["run", "bad.toml", "--no-plots", "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("layers[0].client.max_attempts"),
        "{}",
        stderr(&o)
    );
    // A layer's base above the inherited cap is named under the layer.
    let text = text.replace(
        "client = { max_attempts = \"unlimited\", timeout = \"off\" }\nbackoff = { jitter = \"none\" }",
        "backoff = { base = \"5s\" }",
    );
    std::fs::write(dir.join("bad.toml"), text).unwrap();
    let o = jitterlab(dir.path(), &["run", "bad.toml", "--no-plots", "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("layers[0].backoff.cap"),
        "{}",
        stderr(&o)
    );
}

/// With the database down, `run`'s table, `summary.csv` and `recommend` weigh the load on the
/// whole chain: `every_layer` and `edge_only` both send 3 attempts per request at the edge,
/// but 3 + 9 + 27 against 3 + 3 + 3 down the chain, and `recommend` never names the storm.
#[test]
fn the_chain_load_separates_the_storm_from_retrying_at_the_edge() {
    let dir = TempDir::new("chain-load");
    let scenario = repo().join("sims/layered-retries.toml");
    let o = jitterlab(
        dir.path(),
        &[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            "a",
            "--no-plots",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    let header = table.lines().next().unwrap();
    for column in [
        "amplification_edge",
        "amplification_chain",
        "amplification_deepest",
    ] {
        assert!(header.contains(column), "{header}");
    }
    // The first point's rows: edge 3.00 for both, chain 39 against 9, deepest 27 against 3.
    let row = |name: &str| -> Vec<String> {
        let line = (table.lines())
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in\n{table}"));
        line.split_whitespace()
            .skip(1)
            .take(3)
            .map(String::from)
            .collect()
    };
    assert_eq!(row("every_layer"), ["3.00", "39.00", "27.00"], "{table}");
    assert_eq!(row("edge_only"), ["3.00", "9.00", "3.00"], "{table}");
    let mut summary = csv::Reader::from_path(dir.join("a/summary.csv")).unwrap();
    for row in summary.deserialize::<BTreeMap<String, String>>() {
        let row = row.unwrap();
        let expected = match (row["point"].as_str(), row["strategy"].as_str()) {
            ("0", "every_layer") => ["39", "27"],
            ("0", "edge_only") => ["9", "3"],
            _ => continue,
        };
        assert_eq!(
            [
                row["chain_amplification"].as_str(),
                row["deepest_amplification"].as_str()
            ],
            expected
        );
    }
    let at = "--at=layers[2].faults=[{ kind = \"outage\", start = \"0s\", end = \"60s\" }]";
    let o = jitterlab(dir.path(), &["recommend", "a", at, "--no-plots"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        text.contains("lowest calls per request, every layer"),
        "{text}"
    );
    // Every candidate fails every request there: the closest is the least load on the chain.
    let closest = (text.lines())
        .skip_while(|l| !l.contains("the closest are"))
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert!(closest.trim_start().starts_with("do_not_retry"), "{text}");
    let o = jitterlab(dir.path(), &["recommend", "a", "--no-plots"]);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let outage = (text.lines())
        .find(|l| l.contains("outage 0–60 s"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!outage.contains("every_layer"), "{text}");
}
