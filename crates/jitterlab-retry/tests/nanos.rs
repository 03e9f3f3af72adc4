//! The `_nanos` entry points a simulator calls give exactly what their `Duration` twins give:
//! the same decisions, the same sleeps, the same random draws, for any input.

use std::time::Duration;

use jitterlab_retry::backoff::{Backoff, BackoffState, Jitter};
use jitterlab_retry::policy::throttle::{Throttle, ThrottleConfig};
use jitterlab_retry::policy::{
    AttemptReport, Breaker, BreakerConfig, Budget, BudgetConfig, Decision, Idempotency, Outcome,
    RetryAfterMode, RetryAfterPolicy, RetryClass, RetryPolicy,
};
use jitterlab_retry::random::Pcg64Mcg;
use proptest::prelude::*;

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn policy(
    jitter: Jitter,
    base: u64,
    cap: u64,
    deadline: Option<u64>,
    fit: Option<u64>,
) -> RetryPolicy {
    let backoff = Backoff::new(
        jitter,
        Duration::from_nanos(base),
        2.0,
        Duration::from_nanos(base.max(cap)),
    )
    .expect("valid");
    RetryPolicy {
        deadline: deadline.map(Duration::from_nanos),
        fit_last_attempt: fit.map(Duration::from_nanos),
        max_attempts: None,
        retry_after: RetryAfterPolicy {
            mode: RetryAfterMode::Spread,
            max: Some(Duration::from_secs(5)),
            ..RetryAfterPolicy::default()
        },
        ..RetryPolicy::new(backoff)
    }
}

proptest! {
    #[test]
    fn decide_and_attempt_timeout_agree(
        jitter in prop::sample::select(Jitter::ALL.to_vec()),
        base in 1u64..1_000_000_000,
        cap in 1u64..10_000_000_000,
        deadline in prop::option::of(1u64..20_000_000_000),
        fit in prop::option::of(1u64..1_000_000_000),
        start in 0u64..1 << 50,
        elapsed in prop::collection::vec(0u64..3_000_000_000, 1..8),
        hint in prop::option::of(0u64..10_000_000_000),
        seed in any::<u64>(),
    ) {
        let p = policy(jitter, base, cap, deadline, fit);
        let fast = p.clone().nanos();
        let (mut rng_a, mut rng_b) = (Pcg64Mcg::seed_from_u64(seed), Pcg64Mcg::seed_from_u64(seed));
        let (mut state_a, mut state_b) = (BackoffState::new(), BackoffState::new());
        let mut budget_a = Budget::new(BudgetConfig::ratio()).unwrap();
        let mut budget_b = budget_a.clone();
        let mut now = start;
        for (i, e) in elapsed.iter().enumerate() {
            now += e;
            prop_assert_eq!(
                p.attempt_timeout(Duration::from_nanos(start), Duration::from_nanos(now)),
                fast.attempt_timeout(start, now).to_duration()
            );
            let report = AttemptReport {
                attempt: i as u32 + 1,
                start,
                now,
                outcome: Outcome::Status(503),
                retry_after: hint,
                idempotency: Idempotency::Idempotent,
                follows: RetryClass::Transient,
            };
            let slow = p.decide(
                &AttemptReport {
                    attempt: report.attempt,
                    start: Duration::from_nanos(start),
                    now: Duration::from_nanos(now),
                    outcome: report.outcome,
                    retry_after: hint.map(Duration::from_nanos),
                    idempotency: report.idempotency,
                    follows: RetryClass::Transient,
                },
                &mut state_a,
                Some(&mut budget_a),
                &mut rng_a,
            );
            let quick = fast.decide(&report, &mut state_b, Some(&mut budget_b), &mut rng_b);
            prop_assert_eq!(slow, quick.to_duration());
            prop_assert_eq!(state_a, state_b);
            if let Decision::Retry { sleep } = quick {
                now += sleep;
            }
        }
    }

    #[test]
    fn backoff_breaker_throttle_and_budget_agree(
        jitter in prop::sample::select(Jitter::ALL.to_vec()),
        times in prop::collection::vec((0u64..2_000_000_000, any::<bool>()), 1..40),
        seed in any::<u64>(),
    ) {
        let b = Backoff::new(jitter, Duration::from_millis(10), 2.0, Duration::from_secs(1)).unwrap();
        let (mut ra, mut rb) = (Pcg64Mcg::seed_from_u64(seed), Pcg64Mcg::seed_from_u64(seed));
        let (mut sa, mut sb) = (BackoffState::new(), BackoffState::new());
        let config = BreakerConfig { min_requests: 3, ..BreakerConfig::default() };
        let (mut ba, mut bb) = (Breaker::new(config).unwrap(), Breaker::new(config).unwrap());
        let t = ThrottleConfig { k: 1.5, window: Duration::from_secs(1) };
        let (mut ta, mut tb) = (Throttle::new(t).unwrap(), Throttle::new(t).unwrap());
        let mut ga = Budget::new(BudgetConfig::adaptive()).unwrap();
        let mut gb = ga.clone();
        let mut ra_budget = Budget::new(BudgetConfig::ratio()).unwrap();
        let mut rb_budget = ra_budget.clone();
        let mut now = 0u64;
        for (step, ok) in times {
            now += step;
            let d = Duration::from_nanos(now);
            prop_assert_eq!(ns(b.next_delay(&mut sa, &mut ra)), b.next_delay_nanos(&mut sb, &mut rb));
            prop_assert_eq!(ba.would_allow(d), bb.would_allow_nanos(now));
            prop_assert_eq!(ba.allow(d), bb.allow_nanos(now));
            ba.record(d, ok);
            bb.record_nanos(now, ok);
            prop_assert_eq!(ba.state(), bb.state());
            prop_assert_eq!(ta.admit(d, &mut ra), tb.admit_nanos(now, &mut rb));
            if ok {
                ta.on_accept(d);
                tb.on_accept_nanos(now);
            }
            ga.on_begin(d);
            gb.on_begin_nanos(now);
            prop_assert_eq!(ga.available(d), gb.available(d));
            // A ratio budget's retry given back where it was granted, or later.
            let later = Duration::from_nanos(now + step / 2);
            let class = if ok { RetryClass::Timeout } else { RetryClass::Transient };
            prop_assert_eq!(ra_budget.try_retry(d, class), rb_budget.try_retry(d, class));
            if step % 3 == 0 {
                ra_budget.refund_retry(d, class);
                rb_budget.refund_retry_nanos(now, class);
            }
            prop_assert_eq!(ra_budget.available(later), rb_budget.available(later));
        }
    }
}
