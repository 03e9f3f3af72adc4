//! The peers' defaults in a small herd (200 clients): each stops where its docs say, and the
//! seeded ones are the same bytes on one thread and on two.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jitterlab::cancel::CancelToken;
use jitterlab::metric::Metric;
use jitterlab::runner::{self, RunOptions, RunReport};
use jitterlab::scenario::ScenarioDoc;
use jitterlab::sim::DelaySource;
use jitterlab::sweep::{Shard, Silent};
use jitterlab_peers::herd::Defaults;

/// The built-in herd with 200 clients, two replications, the seeded peers as its strategies.
fn doc() -> ScenarioDoc {
    let mut doc = ScenarioDoc::builtin();
    let peers: Vec<String> = seeded()
        .iter()
        .map(|d| {
            format!(
                "{{ name = \"{}\", jitter = \"full\", max_attempts = 1000 }}",
                d.name()
            )
        })
        .collect();
    doc.set(&format!("backoff.strategies=[{}]", peers.join(", ")))
        .unwrap();
    doc.set("workload.clients=200").unwrap();
    doc.set("replications=2").unwrap();
    doc
}

fn seeded() -> Vec<Defaults> {
    Defaults::ALL
        .into_iter()
        .filter(|d| d.reproducible())
        .collect()
}

fn run(out: &Path, threads: usize) -> RunReport {
    let options = RunOptions {
        out: Some(out.to_path_buf()),
        threads,
        shard: Shard::ALL,
        resume: false,
        force: true,
        command: "peers herd test".into(),
    };
    let sources: Vec<(&str, Arc<dyn DelaySource>)> = seeded()
        .into_iter()
        .map(|d| (d.name(), Arc::new(d) as Arc<dyn DelaySource>))
        .collect();
    runner::run_with_sources(&doc(), &options, &sources, &CancelToken::new(), &Silent).unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jitterlab-peers-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn the_seeded_peers_stop_where_they_say_the_same_bytes_on_any_thread_count() {
    let (one, two) = (temp("herd-1"), temp("herd-2"));
    let report = run(&one, 1);
    // Every request fails inside the 5 s outage but backon's last, which lands at 7 s: each
    // makes all its attempts, 1 + its retries.
    let amplification: Vec<(String, f64)> = report.points[0]
        .strategies
        .iter()
        .map(|s| (s.name.clone(), s.estimates[Metric::Amplification].mean))
        .collect();
    let expected = [
        ("backon", 4.0),
        ("exponential-backoff", 3.0),
        ("tokio-retry", 4.0),
    ];
    assert_eq!(amplification.len(), expected.len(), "{amplification:?}");
    for ((name, a), (want_name, want)) in amplification.iter().zip(expected) {
        assert_eq!((name.as_str(), *a), (want_name, want));
    }
    run(&two, 2);
    let mut names: Vec<String> = std::fs::read_dir(&one)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".csv") || n.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert!(names.iter().any(|n| n == "summary.csv"), "{names:?}");
    for name in &names {
        let read = |dir: &Path| std::fs::read(dir.join(name)).unwrap();
        assert!(
            read(&one) == read(&two),
            "{name} differs at 1 and 2 threads"
        );
    }
    let _ = std::fs::remove_dir_all(&one);
    let _ = std::fs::remove_dir_all(&two);
}
