//! One next-delay step per jitter kind through the `Duration` API real code calls
//! (`Backoff::next_delay`), RNG included: `backoff_duration/<jitter>`. Compare with
//! `backoff/<jitter>`, the simulator's nanosecond entry point, for the cost of the conversion.
//!
//! A bench target of its own: a second call site of the step in `benches/backoff.rs` makes
//! LLVM stop inlining it there, and every figure of that bench doubles.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use jitterlab::backoff::{Backoff, BackoffState, Jitter};

fn backoff_duration(c: &mut Criterion) {
    // criterion draws its own charts with plotters: give it the embedded font.
    jitterlab::output::plot::register_fonts();
    let mut group = c.benchmark_group("backoff_duration");
    for jitter in Jitter::ALL {
        let policy = Backoff::new(
            jitter,
            Duration::from_millis(50),
            2.0,
            Duration::from_secs(2),
        )
        .expect("valid parameters");
        let mut rng = jitterlab::rng::from_seed(42);
        let mut state = BackoffState::new();
        group.bench_function(jitter.name(), |b| {
            b.iter(|| {
                if state.retries() == 16 {
                    state.reset();
                }
                black_box(policy.next_delay(black_box(&mut state), &mut rng))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, backoff_duration);
criterion_main!(benches);
