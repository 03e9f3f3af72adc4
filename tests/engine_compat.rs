//! Code written against jitterlab 0.1's engine API, where durations and instants were the
//! simulator's `SimDuration` and `SimTime`, keeps compiling: the engine takes
//! `impl Into<Duration>` where that is cheap, and both convert. What does not is listed in
//! crates/jitterlab-retry/CHANGELOG.md.

use std::time::Duration;

use jitterlab::backoff::{Backoff, BackoffState, Jitter};
use jitterlab::exec::VirtualClock;
use jitterlab::policy::throttle::{Throttle, ThrottleConfig};
use jitterlab::policy::{Breaker, BreakerConfig, Budget, BudgetConfig, RetryClass};
use jitterlab::time::{SimDuration, SimTime};

/// The README's snippet of jitterlab 0.1, verbatim but for the `?` target.
#[test]
fn the_old_readme_snippet_compiles() -> Result<(), jitterlab::Error> {
    let policy = Backoff::new(
        Jitter::Full,
        SimDuration::from_millis(50),
        2.0,
        SimDuration::from_secs(2),
    )?;
    let mut rng = jitterlab::rng::from_seed(42);
    let mut state = BackoffState::new(); // one per request
    let sleep = policy.next_delay(&mut state, &mut rng);
    assert!(sleep <= Duration::from_millis(50));
    Ok(())
}

/// The pure state machines take the simulator's instants, and a virtual clock its spans.
#[test]
fn simulator_instants_and_spans_still_go_in() {
    let at = |ms: u64| SimTime(ms * 1_000_000);
    let mut breaker = Breaker::new(BreakerConfig::default()).unwrap();
    assert!(breaker.allow(at(1)));
    breaker.record(at(2), true);
    assert!(breaker.would_allow(at(3)));
    let mut budget = Budget::new(BudgetConfig::ratio()).unwrap();
    budget.on_request(at(1));
    budget.on_begin(at(1));
    assert!(budget.try_retry(at(2), RetryClass::Transient));
    budget.refund_retry(at(2), RetryClass::Transient);
    assert!(budget.available(at(3)) > 0.0);
    let mut throttle = Throttle::new(ThrottleConfig::default()).unwrap();
    throttle.on_accept(at(1));
    assert!(throttle.admit(at(2), &mut jitterlab::rng::from_seed(1)));
    assert_eq!(throttle.counts(at(3)), (1, 1));
    assert_eq!(throttle.reject_probability(at(3)), 0.0);
    let clock = VirtualClock::new();
    clock.advance(SimDuration::from_secs(2));
    assert_eq!(jitterlab::exec::Clock::now(&clock), Duration::from_secs(2));
    assert_eq!(Duration::from(at(5)), Duration::from_millis(5));
}
