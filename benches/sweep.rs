//! Sweep throughput and parallel speed-up: the `choose-base-and-cap` grid (16 points x 2
//! strategies, replications cut to 4) on 1 and on 2 threads. The work units are independent,
//! so on the project's 2-core machine the 2-thread run should take a little over half the
//! time; the measured speed-up is printed at the end.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use jitterlab::cancel::CancelToken;
use jitterlab::scenario::ScenarioDoc;
use jitterlab::sweep::{self, Plan, Silent};

fn plan() -> Plan {
    let mut doc = ScenarioDoc::load(std::path::Path::new("sims/choose-base-and-cap.toml"))
        .expect("sims/choose-base-and-cap.toml");
    doc.set("replications=4").expect("a valid override");
    Plan::new(doc.sweep().expect("sweep"), doc.points().expect("points")).expect("plan")
}

fn run(plan: &Plan, threads: usize) -> u64 {
    let units = plan.units();
    sweep::execute(plan, &units, threads, &Silent, None, &CancelToken::new())
        .expect("a complete sweep")
        .events
}

fn sweep_bench(c: &mut Criterion) {
    jitterlab::output::plot::register_fonts();
    let plan = plan();
    let mut group = c.benchmark_group("sweep");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for threads in [1usize, 2] {
        group.bench_function(format!("choose_base_and_cap/threads/{threads}"), |b| {
            b.iter(|| black_box(run(&plan, threads)))
        });
    }
    group.finish();
    let time = |threads| {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let started = Instant::now();
            black_box(run(&plan, threads));
            best = best.min(started.elapsed().as_secs_f64());
        }
        best
    };
    let (one, two) = (time(1), time(2));
    eprintln!(
        "sweep speed-up on 2 threads: {:.2}x (best of 5: {:.3} s on 1 thread, {:.3} s on 2)",
        one / two,
        one,
        two
    );
}

criterion_group!(benches, sweep_bench);
criterion_main!(benches);
