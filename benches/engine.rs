//! Simulator throughput: events per second on the thundering-herd scenario (the built-in
//! default) with one strategy (full jitter) and one replication, at 1 000 to 1 000 000 clients.
//!
//! Targets on the project's 2-core machine: at least 10 million events per second at 10 000
//! clients and 4 million at 1 000 000, the 1 000 000-client run under 500 MB peak memory (the
//! peak resident size is printed at the end; it includes criterion's own few MB).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jitterlab::scenario::ScenarioDoc;
use jitterlab::sim::{self, RunSpec};

fn scenario(clients: u32) -> jitterlab::scenario::Scenario {
    let mut doc = ScenarioDoc::builtin();
    doc.set(&format!("workload.clients={clients}"))
        .expect("a valid override");
    doc.set("backoff.strategies=[\"full\"]")
        .expect("a valid override");
    doc.base().expect("the built-in scenario is valid")
}

fn engine(c: &mut Criterion) {
    // criterion draws its own charts with plotters: give it the embedded font.
    jitterlab::output::plot::register_fonts();
    let mut group = c.benchmark_group("engine");
    for clients in [1_000u32, 10_000, 100_000, 1_000_000] {
        let s = scenario(clients);
        let spec = RunSpec {
            model: &s.model,
            strategy: &s.strategies[0],
            seed: s.seed,
            replication: 0,
            keep_series: false,
        };
        let events = sim::run(spec).events;
        group.throughput(Throughput::Elements(events));
        if clients >= 100_000 {
            group.sample_size(10);
            group.measurement_time(Duration::from_secs(if clients >= 1_000_000 {
                60
            } else {
                10
            }));
        }
        group.bench_function(format!("thundering_herd/{clients}"), |b| {
            b.iter(|| black_box(sim::run(black_box(spec)).events))
        });
    }
    group.finish();
    if let Ok(status) = std::fs::read_to_string("/proc/self/status")
        && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM"))
    {
        eprintln!(
            "peak resident memory of the bench process: {}",
            line.trim_start_matches("VmHWM:").trim()
        );
    }
}

criterion_group!(benches, engine);
criterion_main!(benches);
