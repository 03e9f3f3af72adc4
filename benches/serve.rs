//! The playground's latency (`jitterlab serve`, issue 29's target: input to new chart under
//! 100 ms for the built-in scenario). A knob moved (`backoff.cap` to a new value each
//! iteration, so nothing is reused) asks first for the herd chart from replication 0 alone
//! (`/api/chart`), then for the table of every replication and its charts (`/api/run`).
//!
//! - `serve/input_to_chart`: [`Playground::first_chart`], the server's work for the chart.
//! - `serve/input_to_table`: the chart, then [`Playground::run`] with charts: what the page
//!   waits for until the table is in.
//! - `serve/http_chart`, `serve/http_table`: the same through the server, a `GET` of each on
//!   loopback until its whole JSON answer has arrived (`http_table`: both, one after the
//!   other, as the page asks); what the page waits for, less the browser's drawing.
//! - Where the time goes: `serve/sims_replication_0` (the chart pass's simulations alone,
//!   [`jitterlab::sim::run`] on every core, nothing written), `serve/chart_pass_no_chart`
//!   (the same through the runner into the temporary folder: the files' share),
//!   `serve/all_runs_no_chart` (every replication, no chart).
//!
//! `cargo bench --bench serve`; figures in docs/playground.md.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use jitterlab::cancel::CancelToken;
use jitterlab::scenario::ScenarioDoc;
use jitterlab::serve::{Playground, Server};
use jitterlab::sim::{self, RunSpec};
use jitterlab::sweep::Silent;
use rayon::prelude::*;

/// A cap that no iteration before used: 1000 ms, 1001 ms, ...
fn next_cap(counter: &AtomicU64) -> String {
    format!(
        "backoff.cap={}ms",
        1000 + counter.fetch_add(1, Ordering::Relaxed) % 9000
    )
}

fn playground() -> Playground {
    Playground::new(ScenarioDoc::builtin(), "thundering-herd".into()).expect("the built-in")
}

/// `GET target` on loopback until the whole answer is in; its body.
fn get(addr: &str, target: &str) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"));
    answer
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("serve");
    group.sample_size(20);
    let counter = AtomicU64::new(0);
    let p = playground();
    let silent = &Silent;
    let fresh = || p.settings(&next_cap(&counter)).unwrap();

    group.bench_function("input_to_chart", |b| {
        b.iter(|| {
            let chart = p.first_chart(&fresh(), &CancelToken::new(), silent);
            black_box(
                chart
                    .unwrap()
                    .expect("the built-in's herd is replication 0's"),
            )
        })
    });
    group.bench_function("input_to_table", |b| {
        b.iter(|| {
            let settings = fresh();
            let chart = p.first_chart(&settings, &CancelToken::new(), silent);
            black_box(chart.unwrap());
            black_box(p.run(&settings, true, &CancelToken::new(), silent).unwrap())
        })
    });

    let server = Server::bind(playground(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server
        .url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let stop = CancelToken::new();
    std::thread::scope(|scope| {
        scope.spawn(|| server.serve_until(&stop));
        group.bench_function("http_chart", |b| {
            b.iter(|| black_box(get(&addr, &format!("/api/chart?{}", next_cap(&counter)))))
        });
        group.bench_function("http_table", |b| {
            b.iter(|| {
                let q = next_cap(&counter);
                black_box(get(&addr, &format!("/api/chart?{q}")));
                black_box(get(&addr, &format!("/api/run?{q}")))
            })
        });
        stop.cancel();
    });

    // Where the time goes.
    group.bench_function("sims_replication_0", |b| {
        b.iter(|| {
            let mut doc = ScenarioDoc::builtin();
            doc.set(&next_cap(&counter)).unwrap();
            let s = doc.base().unwrap();
            let runs: Vec<_> = (s.strategies.par_iter())
                .map(|strategy| {
                    sim::run(RunSpec {
                        model: &s.model,
                        strategy,
                        seed: s.seed,
                        replication: 0,
                        keep_series: true,
                    })
                })
                .collect();
            black_box(runs)
        })
    });
    group.bench_function("chart_pass_no_chart", |b| {
        b.iter(|| {
            let mut doc = ScenarioDoc::builtin();
            doc.set(&next_cap(&counter)).unwrap();
            doc.set_replications(1).unwrap();
            let dir = tempdir(&counter);
            let options = jitterlab::runner::RunOptions {
                out: Some(dir.clone()),
                threads: 0,
                shard: jitterlab::sweep::Shard::ALL,
                resume: false,
                force: false,
                command: "bench".into(),
            };
            let points = doc.points_until(&CancelToken::new()).unwrap();
            let report =
                jitterlab::runner::run_points(&doc, points, &options, &CancelToken::new(), silent);
            std::fs::remove_dir_all(&dir).unwrap();
            black_box(report.unwrap().points)
        })
    });
    group.bench_function("all_runs_no_chart", |b| {
        b.iter(|| black_box(p.run(&fresh(), false, &CancelToken::new(), silent).unwrap()))
    });
    group.finish();
}

/// A new folder name under the system's temporary folder (the runner makes it).
fn tempdir(counter: &AtomicU64) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "jitterlab-bench-serve-{}-{}",
        std::process::id(),
        counter.fetch_add(1, Ordering::Relaxed)
    ))
}

criterion_group!(benches, bench);
criterion_main!(benches);
