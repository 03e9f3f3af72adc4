//! The playground's latency, input to new chart (`jitterlab serve`, issue 29's target: under
//! 100 ms for the built-in scenario): a knob moved (`backoff.cap` to a new value each
//! iteration, so nothing is reused) re-runs the scenario's 20 runs and renders its chart.
//!
//! - `serve/run_and_chart`: the server's work, [`Playground::run`] with charts.
//! - `serve/run_only`: the same without the chart, to tell the simulation's share from the
//!   chart's.
//! - `serve/http_round_trip`: the same through the server, a `GET /api/run?...` on loopback
//!   until the whole JSON answer (table and SVG) has arrived; what the page waits for, less
//!   the browser's drawing of the SVG.
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
use jitterlab::sweep::Silent;

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

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("serve");
    group.sample_size(20);
    let counter = AtomicU64::new(0);

    let p = playground();
    group.bench_function("run_and_chart", |b| {
        b.iter(|| {
            let settings = p.settings(&next_cap(&counter)).unwrap();
            black_box(
                p.run(&settings, true, &CancelToken::new(), &Silent)
                    .unwrap(),
            )
        })
    });

    group.bench_function("run_only", |b| {
        b.iter(|| {
            let settings = p.settings(&next_cap(&counter)).unwrap();
            black_box(
                p.run(&settings, false, &CancelToken::new(), &Silent)
                    .unwrap(),
            )
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
        group.bench_function("http_round_trip", |b| {
            b.iter(|| {
                let mut stream = TcpStream::connect(&addr).unwrap();
                let request = format!(
                    "GET /api/run?{} HTTP/1.1\r\nHost: {addr}\r\n\r\n",
                    next_cap(&counter)
                );
                stream.write_all(request.as_bytes()).unwrap();
                let mut answer = Vec::new();
                stream.read_to_end(&mut answer).unwrap();
                assert!(answer.starts_with(b"HTTP/1.1 200"));
                black_box(answer)
            })
        });
        stop.cancel();
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
