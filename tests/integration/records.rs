//! Issue 42 (6), through the real binary: journals are checked whole against the scenario
//! when `merge` and `--resume` read them. Each record no run can produce (a time series
//! that disagrees with its counts, a peak above the attempts, more events than the work
//! bound, a success past `max_attempts`, a unit recorded twice) is refused with its line and
//! field, exit 2, nothing written.

use std::path::Path;

use serde_json::Value;

use crate::cli::assert_bad_input;
use crate::common::{TempDir, jitterlab, stderr};

/// Two strategies × two replications in a moment, at most 5 attempts a request.
const SMALL: &str = r#"
name = "small"
horizon = "2s"
replications = 2
[workload]
clients = 30
[client]
max_attempts = 5
[backoff]
strategies = ["full", "equal"]
"#;

/// The journal's lines: the header, then one record a unit.
fn lines(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("units.jsonl")).unwrap();
    text.lines().map(str::to_string).collect()
}

fn write_lines(dir: &Path, lines: &[String]) {
    std::fs::write(dir.join("units.jsonl"), lines.join("\n") + "\n").unwrap();
}

/// The journal of `good` with the record on line 2 (unit 0, replication 0: it has a time
/// series) changed by `edit`.
fn edited(good: &[String], edit: impl Fn(&mut Value)) -> Vec<String> {
    let mut lines = good.to_vec();
    let mut record: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(record["replication"], 0);
    edit(&mut record);
    lines[1] = record.to_string();
    lines
}

#[test]
fn case6_records_no_run_can_produce_are_refused_with_their_line_and_field() {
    let tmp = TempDir::new("records");
    std::fs::write(tmp.join("small.toml"), SMALL).unwrap();
    let run = ["run", "small.toml", "--out", "a", "--quiet", "--no-plots"];
    let o = jitterlab(tmp.path(), &run);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let a = tmp.join("a");
    let good = lines(&a);
    let succeeded = |r: &Value| r["counts"][2].as_u64().unwrap();
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit, &[&str])> = vec![
        (
            "the series' successes doubled",
            Box::new(|r: &mut Value| {
                for v in r["series"]["successes"].as_array_mut().unwrap() {
                    *v = (v.as_u64().unwrap() * 2).into();
                }
            }),
            &[
                "line 2, column",
                "`series` counts",
                "successes, but `counts` holds",
            ],
        ),
        (
            "a peak of 1e9 arrivals",
            Box::new(|r: &mut Value| r["peak_arrivals"] = 1_000_000_000u64.into()),
            &[
                "line 2, column",
                "`peak_arrivals` is 1000000000, but `counts` holds",
            ],
        ),
        (
            "the variant: a peak of retries above the busiest bucket",
            Box::new(|r: &mut Value| {
                let arrivals = r["peak_arrivals"].as_u64().unwrap();
                r["peak_retries"] = arrivals.into();
            }),
            &["line 2, column", "`peak_retries`"],
        ),
        (
            "2^64 - 1 events",
            Box::new(|r: &mut Value| r["events"] = u64::MAX.into()),
            &[
                "line 2, column",
                "`events` is 18446744073709551615, more than a run of this unit can process",
            ],
        ),
        (
            "every success on attempt 99",
            Box::new(move |r: &mut Value| {
                let n = succeeded(r);
                let mut by = vec![Value::from(0u64); 99];
                by[98] = n.into();
                r["by_attempt"] = by.into();
            }),
            &[
                "line 2, column",
                "`by_attempt` holds",
                "on attempt 99, but the strategy makes at most 5 attempts",
            ],
        ),
    ];
    for (what, edit, needles) in &cases {
        // --resume of the folder and merge of it: both read the journal whole.
        let lines = edited(&good, edit);
        assert_ne!(lines, good, "{what}");
        write_lines(&a, &lines);
        let o = jitterlab(tmp.path(), &[&run[..], &["--resume"]].concat());
        assert_bad_input(&o, needles);
        let o = jitterlab(tmp.path(), &["merge", "a", "--out", "m"]);
        assert_bad_input(&o, needles);
        assert!(!tmp.join("m").exists(), "{what}");
    }
    // The same unit twice, with different counts (each record possible on its own).
    let mut twice = good.clone();
    let mut other: Value = serde_json::from_str(&good[1]).unwrap();
    other["events"] = (other["events"].as_u64().unwrap() - 1).into();
    twice.push(other.to_string());
    write_lines(&a, &twice);
    let line = twice.len();
    let o = jitterlab(tmp.path(), &["merge", "a", "--out", "m"]);
    assert_bad_input(
        &o,
        &[
            &format!("line {line}, column"),
            "`unit` is 0 again: line 2 holds that unit already",
        ],
    );
    // The variant: across two folders (a shard given with an edited copy of itself).
    write_lines(&a, &good);
    let b = tmp.join("b");
    std::fs::create_dir(&b).unwrap();
    for name in ["scenario.toml", "units.jsonl", "meta.json"] {
        std::fs::copy(a.join(name), b.join(name)).unwrap();
    }
    write_lines(&b, &edited(&good, |r| r["events"] = 1u64.into()));
    let o = jitterlab(tmp.path(), &["merge", "a", "b", "--out", "m"]);
    assert_bad_input(
        &o,
        &["b/units.jsonl", "unit 0 is recorded here with other values"],
    );
    // Untouched, both are read.
    let o = jitterlab(tmp.path(), &["merge", "a", "--out", "m"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
