//! One next-delay step of jitterlab's kinds and of each peer crate in its own idiom, seeded
//! where the crate allows, beside the bare generator draw (the steps of
//! [`jitterlab_peers::step`]); then the ratios to the bare draw, as a Markdown table on stdout
//! and a chart (`<target>/criterion/peers-steps.png`).
//!
//! `cargo bench -p jitterlab-peers --bench steps`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, measurement::WallTime};
use jitterlab_peers::step::{self, Visit};
use jitterlab_peers::steps::{GROUP, criterion_dir, report};

/// Benches each step in one criterion group.
struct Bench<'a>(BenchmarkGroup<'a, WallTime>);

impl Visit for Bench<'_> {
    fn step<T>(&mut self, name: &str, mut step: impl FnMut() -> T) {
        self.0
            .bench_function(name, |b| b.iter(|| black_box(step())));
    }
}

fn main() {
    let dir = criterion_dir();
    let mut c = Criterion::default()
        .output_directory(&dir)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    // criterion draws its own charts with plotters: give it the embedded font.
    jitterlab::output::plot::register_fonts();
    {
        let mut bench = Bench(c.benchmark_group(GROUP));
        step::each(&mut bench);
        bench.0.finish();
    }
    c.final_summary();
    report(&dir, &step::names());
}
