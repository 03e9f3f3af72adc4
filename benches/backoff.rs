//! One next-delay step per jitter kind, RNG included, in the integer nanoseconds the
//! simulator uses (`Backoff::next_delay_nanos`): `backoff/<jitter>`; and one bare uniform draw
//! from the same generator, `backoff/bare_uniform_draw`, the floor of a jittered step.
//!
//! One call site of the step only: a second one (say, the `Duration` API's `next_delay` in
//! another bench) makes LLVM stop inlining it here, and every figure doubles.
//!
//! Targets on the project's 2-core machine: at most 3 ns a step for `full`, `equal` and
//! `no_jitter`, 5 ns for `decorrelated`. The state is reset every 16 steps so that the
//! nominal delay walks through the uncapped and the capped regime as real requests do.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use jitterlab::backoff::{Backoff, BackoffState, Jitter};
use rand::RngExt;
use std::time::Duration;

fn backoff(c: &mut Criterion) {
    // criterion draws its own charts with plotters: give it the embedded font.
    jitterlab::output::plot::register_fonts();
    let mut group = c.benchmark_group("backoff");
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
                black_box(policy.next_delay_nanos(black_box(&mut state), &mut rng))
            })
        });
    }
    // The floor a step is measured against: one uniform draw from the same generator, over
    // a range as wide as the capped delay (scripts/bench-vs-reference.sh prints the ratio).
    let mut rng = jitterlab::rng::from_seed(42);
    let high = 2_000_000_000u64;
    group.bench_function("bare_uniform_draw", |b| {
        b.iter(|| black_box(rng.random_range(0..=black_box(high))))
    });
    group.finish();
}

criterion_group!(benches, backoff);
criterion_main!(benches);
