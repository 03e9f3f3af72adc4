//! One next-delay step of every implementation the step benchmark compares, defined once for
//! both of its meters: criterion's clock (`benches/steps.rs`) and callgrind's instruction count
//! (`--bin steps-instructions`), which the machine's load does not move.
//!
//! Every implementation runs the same schedule where its API can express it: 50 ms doubling
//! to 2 s. A request is [`RETRIES`] retries: the state (or the crate's per-request object,
//! whose construction is then part of the cost, as it is for a real request) is made anew
//! every [`RETRIES`] steps, so the steps walk through the uncapped and the capped regime.
//! jitterlab steps through the `Duration` API real code calls (`Backoff::next_delay`), as the
//! peers do; its simulator's nanosecond entry point is benched at the root
//! (`benches/backoff.rs`), in a target of its own, because a second call site of the step in
//! one target changes how LLVM inlines the first.

use std::time::{Duration, Instant, SystemTime};

use backoff::backoff::Backoff as _;
use backon::BackoffBuilder;
use jitterlab::backoff::{Backoff, BackoffState, Jitter};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Retries per request.
pub const RETRIES: usize = 16;
/// The first delay of the shared schedule.
pub const BASE: Duration = Duration::from_millis(50);
/// The cap of the shared schedule.
pub const CAP: Duration = Duration::from_secs(2);
/// The step every ratio divides by: one bare `Pcg64Mcg` draw in `0..=CAP` nanoseconds.
pub const BARE: &str = "bare_draw";

/// What is done with each implementation's step: benched, counted, or only named. A step is a
/// closure of its own type, so that each meter calls it as directly as real code would.
pub trait Visit {
    /// Implementation `name`, whose one step is a call of `step`.
    fn step<T>(&mut self, name: &str, step: impl FnMut() -> T);
}

/// Visits the bare draw, jitterlab's kinds, then each peer crate in its own idiom, seeded
/// where the crate allows (backon `with_jitter_seed`; exponential-backoff through
/// `fastrand::seed` before `into_iter()`; tokio-retry's strategy with a seeded `.map`, the
/// crate's formula on our generator, beside its own unseedable `jitter`).
pub fn each(v: &mut impl Visit) {
    let mut rng = Pcg64Mcg::seed_from_u64(42);
    let high = CAP.as_nanos() as u64;
    v.step(BARE, || rng.random_range(0..=std::hint::black_box(high)));
    for jitter in Jitter::ALL {
        let policy = Backoff::new(jitter, BASE, 2.0, CAP).expect("valid parameters");
        let mut rng = Pcg64Mcg::seed_from_u64(42);
        let mut state = BackoffState::new();
        v.step(&format!("jitterlab/{}", jitter.name()), || {
            if state.retries() == RETRIES as u32 {
                state.reset();
            }
            policy.next_delay(std::hint::black_box(&mut state), &mut rng)
        });
    }
    peers(v);
}

fn peers(v: &mut impl Visit) {
    let mut seeds = Pcg64Mcg::seed_from_u64(42);
    let backon = || {
        backon::ExponentialBuilder::default()
            .with_min_delay(BASE)
            .with_max_delay(CAP)
            .with_max_times(RETRIES)
            .with_jitter()
            .with_jitter_seed(seeds.random())
            .build()
    };
    v.step("backon/with_jitter", per_request(backon, |b| b.next()));

    let clock = per_request(backoff_request::<backoff::SystemClock>, |b| {
        b.next_backoff()
    });
    v.step("backoff/default_clock", clock);
    let frozen = per_request(backoff_request::<FrozenClock>, |b| b.next_backoff());
    v.step("backoff/frozen_clock", frozen);

    let mut seeds = Pcg64Mcg::seed_from_u64(42);
    let expo = || {
        let mut b = exponential_backoff::Backoff::new(RETRIES as u32 + 1, BASE, CAP);
        fastrand::seed(seeds.random());
        b.set_jitter(0.3);
        b.into_iter()
    };
    let step = per_request(expo, |it| it.next().flatten());
    v.step("exponential-backoff/default_jitter", step);

    let policy = retry_policies::policies::ExponentialBackoff::builder()
        .retry_bounds(BASE, CAP)
        .build_with_max_retries(RETRIES as u32);
    let ask = |past: &mut u32| {
        use retry_policies::{RetryDecision, RetryPolicy};
        let before = SystemTime::now();
        let decision = policy.should_retry(before, *past);
        *past += 1;
        match decision {
            RetryDecision::Retry { execute_after } => {
                Some(crate::idiom::read_back(execute_after, before))
            }
            RetryDecision::DoNotRetry => None,
        }
    };
    v.step("retry-policies/full", per_request(|| 0u32, ask));

    let strategy = || {
        tokio_retry::strategy::ExponentialBackoff::from_millis(2)
            .factor(25)
            .max_delay(CAP)
    };
    let jitter = || strategy().map(tokio_retry::strategy::jitter);
    v.step("tokio-retry/jitter", per_request(jitter, |it| it.next()));
    let mut seeds = Pcg64Mcg::seed_from_u64(42);
    let seeded = || {
        let mut rng = Pcg64Mcg::seed_from_u64(seeds.random());
        strategy().map(move |d| d.mul_f64(rng.random::<f64>()))
    };
    v.step(
        "tokio-retry/seeded_jitter",
        per_request(seeded, |it| it.next()),
    );
}

/// The names of [`each`]'s implementations, in its order.
pub fn names() -> Vec<String> {
    struct Names(Vec<String>);
    impl Visit for Names {
        fn step<T>(&mut self, name: &str, _step: impl FnMut() -> T) {
            self.0.push(name.to_string());
        }
    }
    let mut names = Names(Vec::new());
    each(&mut names);
    names.0
}

/// Steps a request object made by `start`, a new one every [`RETRIES`] steps.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `name`'s step `n` times, counting the calls.
    struct Run<'a>(&'a str, usize, usize);
    impl Visit for Run<'_> {
        fn step<T>(&mut self, name: &str, mut step: impl FnMut() -> T) {
            if name == self.0 {
                for _ in 0..self.1 {
                    std::hint::black_box(step());
                    self.2 += 1;
                }
            }
        }
    }

    #[test]
    fn every_implementation_has_a_unique_name_and_the_bare_draw_comes_first() {
        let names = names();
        assert_eq!(names[0], BARE);
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert_eq!(names.len(), 1 + Jitter::ALL.len() + 7);
    }

    #[test]
    fn each_step_runs_across_a_request_boundary() {
        for name in names() {
            let mut run = Run(&name, 2 * RETRIES + 1, 0);
            each(&mut run);
            assert_eq!(run.2, 2 * RETRIES + 1, "{name}");
        }
    }
}
