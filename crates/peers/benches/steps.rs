//! One next-delay step of jitterlab's kinds and of each peer crate in its own idiom, seeded
//! where the crate allows, beside the bare generator draw; then the ratios to the bare draw,
//! as a Markdown table on stdout and a chart (`<target>/criterion/peers-steps.png`).
//!
//! `cargo bench -p jitterlab-peers --bench steps`
//!
//! Every implementation runs the same schedule where its API can express it: 50 ms doubling
//! to 2 s (jitterlab's bench). A request is 16 retries: the state (or the crate's per-request
//! object, whose construction is then part of the cost, as it is for a real request) is made
//! anew every 16 steps, so the steps walk through the uncapped and the capped regime.

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use backon::BackoffBuilder;
use criterion::Criterion;
use jitterlab::backoff::{Backoff, BackoffState, Jitter};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use jitterlab_peers::steps::GROUP;
const RETRIES: usize = 16;
const BASE: Duration = Duration::from_millis(50);
const CAP: Duration = Duration::from_secs(2);

/// Steps a request object made by `start`, a new one every `RETRIES` steps.
fn per_request<T>(
    mut start: impl FnMut() -> T,
    mut step: impl FnMut(&mut T) -> Option<Duration>,
) -> impl FnMut() -> Option<Duration> {
    let mut current = start();
    let mut steps = 0;
    move || {
        if steps == RETRIES {
            current = start();
            steps = 0;
        }
        steps += 1;
        step(&mut current)
    }
}

/// A backoff 0.4 clock that never moves: the step without its clock read.
#[derive(Debug, Default, Clone)]
struct FrozenClock;

impl backoff::Clock for FrozenClock {
    fn now(&self) -> Instant {
        static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        *ORIGIN.get_or_init(Instant::now)
    }
}

/// backoff 0.4 on clock `C`, the shared schedule, no elapsed-time limit.
fn backoff_request<C: backoff::Clock + Default>() -> backoff::exponential::ExponentialBackoff<C> {
    backoff::exponential::ExponentialBackoffBuilder::<C>::new()
        .with_initial_interval(BASE)
        .with_multiplier(2.0)
        .with_max_interval(CAP)
        .with_max_elapsed_time(None)
        .build()
}

fn jitterlab_kinds(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    let mut rng = Pcg64Mcg::seed_from_u64(42);
    let high = CAP.as_nanos() as u64;
    group.bench_function("bare_draw", |b| {
        b.iter(|| black_box(rng.random_range(0..=black_box(high))))
    });
    for jitter in Jitter::ALL {
        let policy = Backoff::new(jitter, BASE, 2.0, CAP).expect("valid parameters");
        let mut rng = Pcg64Mcg::seed_from_u64(42);
        let mut state = BackoffState::new();
        group.bench_function(format!("jitterlab/{}", jitter.name()), |b| {
            b.iter(|| {
                if state.retries() == RETRIES as u32 {
                    state.reset();
                }
                black_box(policy.next_delay_nanos(black_box(&mut state), &mut rng))
            })
        });
    }
    group.finish();
}

fn peers(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    let mut seeds = Pcg64Mcg::seed_from_u64(42);
    let mut next = per_request(
        || {
            backon::ExponentialBuilder::default()
                .with_min_delay(BASE)
                .with_max_delay(CAP)
                .with_max_times(RETRIES)
                .with_jitter()
                .with_jitter_seed(seeds.random())
                .build()
        },
        |b| b.next(),
    );
    group.bench_function("backon/with_jitter", |b| b.iter(|| black_box(next())));

    let mut next = per_request(
        backoff_request::<backoff::SystemClock>,
        backoff::backoff::Backoff::next_backoff,
    );
    group.bench_function("backoff/default_clock", |b| b.iter(|| black_box(next())));

    let mut next = per_request(
        backoff_request::<FrozenClock>,
        backoff::backoff::Backoff::next_backoff,
    );
    group.bench_function("backoff/frozen_clock", |b| b.iter(|| black_box(next())));

    let mut seeds = Pcg64Mcg::seed_from_u64(42);
    let mut next = per_request(
        || {
            let mut b = exponential_backoff::Backoff::new(RETRIES as u32 + 1, BASE, CAP);
            fastrand::seed(seeds.random());
            b.set_jitter(0.3);
            b.into_iter()
        },
        |it| it.next().flatten(),
    );
    group.bench_function("exponential-backoff/default_jitter", |b| {
        b.iter(|| black_box(next()))
    });

    let policy = retry_policies::policies::ExponentialBackoff::builder()
        .retry_bounds(BASE, CAP)
        .build_with_max_retries(RETRIES as u32);
    let mut next = per_request(
        || 0u32,
        |past| {
            use retry_policies::{RetryDecision, RetryPolicy};
            let before = SystemTime::now();
            let decision = policy.should_retry(before, *past);
            *past += 1;
            match decision {
                RetryDecision::Retry { execute_after } => {
                    Some(jitterlab_peers::peers::read_back(execute_after, before))
                }
                RetryDecision::DoNotRetry => None,
            }
        },
    );
    group.bench_function("retry-policies/full", |b| b.iter(|| black_box(next())));

    let strategy = || {
        tokio_retry::strategy::ExponentialBackoff::from_millis(2)
            .factor(25)
            .max_delay(CAP)
    };
    let mut next = per_request(
        || strategy().map(tokio_retry::strategy::jitter),
        |it| it.next(),
    );
    group.bench_function("tokio-retry/jitter", |b| b.iter(|| black_box(next())));

    let mut seeds = Pcg64Mcg::seed_from_u64(42);
    let mut next = per_request(
        || {
            let mut rng = Pcg64Mcg::seed_from_u64(seeds.random());
            strategy().map(move |d| d.mul_f64(rng.random::<f64>()))
        },
        |it| it.next(),
    );
    group.bench_function("tokio-retry/seeded_jitter", |b| {
        b.iter(|| black_box(next()))
    });
    group.finish();
}

fn main() {
    let dir = jitterlab_peers::steps::criterion_dir();
    let mut c = Criterion::default()
        .output_directory(&dir)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    jitterlab::output::plot::register_fonts();
    jitterlab_kinds(&mut c);
    peers(&mut c);
    c.final_summary();
    let mut names = vec!["bare_draw".to_string()];
    names.extend(Jitter::ALL.map(|j| format!("jitterlab/{}", j.name())));
    names.extend(
        [
            "backon/with_jitter",
            "backoff/default_clock",
            "backoff/frozen_clock",
            "exponential-backoff/default_jitter",
            "retry-policies/full",
            "tokio-retry/jitter",
            "tokio-retry/seeded_jitter",
        ]
        .map(String::from),
    );
    jitterlab_peers::steps::report(&dir, &names);
}
