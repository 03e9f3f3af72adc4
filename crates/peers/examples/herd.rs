//! Each peer crate's defaults through the thundering herd (`sims/thundering-herd.toml`: 10 000
//! clients, a 5 s outage, 30 s deadline, no attempt limit of the scenario's own), beside
//! jitterlab's kinds, through the library API (`runner::run_with_sources`): the result folder
//! has the same CSV files as `jitterlab run` writes, and `jitterlab plot` draws it.
//!
//! `cargo run -p jitterlab-peers --release --example herd [-- OUT_DIR]`
//!
//! The peers stop where their defaults stop (backon after 3 retries, exponential-backoff
//! after 2, tokio-retry's example after 3, retry-policies with 3, backoff after 15 minutes),
//! so the success rate is printed first: a strategy that gives up early sends fewer attempts
//! and never looks good for it.

use std::path::PathBuf;

use jitterlab::cancel::CancelToken;
use jitterlab::metric::Metric;
use jitterlab::runner::{self, RunOptions};
use jitterlab::scenario::ScenarioDoc;
use jitterlab::sweep::{Shard, Silent};
use jitterlab_peers::herd::{Defaults, sources};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("out/peers-herd"));
    let mut doc = ScenarioDoc::builtin();
    // Three of jitterlab's kinds and one placeholder strategy per peer (its backoff keys only
    // size the work estimate; the sources replace its sleeps): eight strategies, one colour
    // each in the charts. The herd's network takes no time, so a source needs an attempt
    // limit (one that sleeps zero would retry forever at one instant); 1000 is never reached,
    // each peer gives up by itself long before.
    let peers: Vec<String> = Defaults::ALL
        .iter()
        .map(|d| {
            format!(
                "{{ name = \"{}\", jitter = \"full\", max_attempts = 1000 }}",
                d.name()
            )
        })
        .collect();
    doc.set(&format!(
        "backoff.strategies=[\"no_jitter\", \"full\", \"decorrelated\", {}]",
        peers.join(", ")
    ))?;
    let options = RunOptions {
        out: Some(out.clone()),
        threads: 0,
        shard: Shard::ALL,
        resume: false,
        force: true,
        command: "cargo run -p jitterlab-peers --example herd (peer strategies: each crate's defaults as a delay source)".into(),
    };
    let report =
        runner::run_with_sources(&doc, &options, &sources(), &CancelToken::new(), &Silent)?;
    let base = doc.base()?;
    // The scenario's own words and numbers, so that the table never outlives a change to it.
    let deadline = match base.model.client.deadline {
        Some(d) => format!("{} s deadline", d.as_secs_f64()),
        None => "no deadline".to_string(),
    };
    println!(
        "{}: {}; {deadline}; mean of {} replications\n",
        base.name, base.description, base.replications
    );
    println!(
        "| strategy | configuration | max total sleep | success rate | amplification | peak retries / 10 ms | p99 latency (ms) | reproducible |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for s in &report.points[0].strategies {
        let m = |metric: Metric| s.estimates[metric].mean;
        let peer = Defaults::ALL.into_iter().find(|d| d.name() == s.name);
        let reproducible = peer.is_none_or(|d| d.reproducible());
        let (configuration, max_sleep) = match peer {
            None => (
                format!("jitterlab `{}`, no attempt limit", s.name),
                format!("none ({deadline})"),
            ),
            Some(d) => (
                d.configuration().to_string(),
                d.max_total_sleep()
                    .map_or(format!("15 min of elapsed time ({deadline})"), |t| {
                        format!("{t} s")
                    }),
            ),
        };
        // Latency is of succeeded requests: none, none to report.
        let p99 = if m(Metric::Succeeded) > 0.0 {
            format!("{:.0}", m(Metric::LatencyP99Ms))
        } else {
            "none succeeded".into()
        };
        println!(
            "| {} | {configuration} | {max_sleep} | {:.1} % | {:.2} | {:.0} | {p99} | {} |",
            s.name,
            100.0 * m(Metric::SuccessRate),
            m(Metric::Amplification),
            m(Metric::PeakRetries),
            if reproducible {
                "yes"
            } else {
                "no (thread-local RNG)"
            }
        );
    }
    println!("\nresults: {}", out.display());
    Ok(())
}
