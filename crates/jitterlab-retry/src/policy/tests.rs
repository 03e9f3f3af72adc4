//! Unit tests of [`RetryPolicy::decide`]: the order of the checks, the 4xx and idempotency
//! rules, attempts, deadline, budget and random-number consumption.

use super::*;
use crate::backoff::Jitter;
use crate::test_rng;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
fn at(v: u64) -> Duration {
    ms(v)
}

fn policy(jitter: Jitter) -> RetryPolicy {
    let backoff = Backoff::new(jitter, ms(100), 2.0, ms(1_000)).unwrap();
    RetryPolicy::new(backoff)
}

fn report(attempt: u32, outcome: Outcome) -> AttemptReport {
    AttemptReport {
        attempt,
        start: at(0),
        now: at(10),
        outcome,
        retry_after: None,
        idempotency: Idempotency::Idempotent,
        follows: RetryClass::Transient,
    }
}

fn decide(p: &RetryPolicy, a: &AttemptReport) -> Decision {
    p.decide(a, &mut BackoffState::new(), None, &mut test_rng(1))
}

#[test]
fn success_is_done_and_4xx_rules_hold() {
    let p = policy(Jitter::NoJitter);
    assert_eq!(decide(&p, &report(1, Outcome::Success)), Decision::Done);
    for code in [409, 429, 502, 503, 504] {
        assert_eq!(
            decide(&p, &report(1, Outcome::Status(code))),
            Decision::Retry { sleep: ms(100) },
            "{code}"
        );
    }
    for code in [400, 401, 403, 404, 408, 422, 500, 501] {
        assert_eq!(
            decide(&p, &report(1, Outcome::Status(code))),
            Decision::Stop(StopReason::NotRetryable),
            "{code}"
        );
    }
    assert!(decide(&p, &report(1, Outcome::Timeout)).sleep().is_some());
    assert!(
        decide(&p, &report(1, Outcome::Connection))
            .sleep()
            .is_some()
    );
    // 500 is opt-in.
    let with_500 = RetryPolicy {
        retry_on: RetryOn::default().with_status(500).unwrap(),
        ..p
    };
    assert_eq!(
        decide(&with_500, &report(1, Outcome::Status(500))),
        Decision::Retry { sleep: ms(100) }
    );
}

#[test]
fn non_idempotent_requests_need_a_key() {
    let p = policy(Jitter::NoJitter);
    let post = AttemptReport {
        idempotency: Idempotency::NonIdempotent,
        ..report(1, Outcome::Status(503))
    };
    assert_eq!(decide(&p, &post), Decision::Stop(StopReason::NotRetryable));
    let keyed = AttemptReport {
        idempotency: Idempotency::WithKey,
        ..post
    };
    assert_eq!(decide(&p, &keyed), Decision::Retry { sleep: ms(100) });
    // Not retryable wins over attempts exhausted; attempts over deadline.
    let last = AttemptReport { attempt: 5, ..post };
    assert_eq!(decide(&p, &last), Decision::Stop(StopReason::NotRetryable));
}

#[test]
fn attempts_count_the_first() {
    let p = RetryPolicy {
        max_attempts: Some(3),
        ..policy(Jitter::NoJitter)
    };
    let mut state = BackoffState::new();
    let mut rng = test_rng(1);
    let sleeps: Vec<Decision> = (1..=3)
        .map(|n| p.decide(&report(n, Outcome::Status(503)), &mut state, None, &mut rng))
        .collect();
    assert_eq!(
        sleeps,
        [
            Decision::Retry { sleep: ms(100) },
            Decision::Retry { sleep: ms(200) },
            Decision::Stop(StopReason::Attempts)
        ]
    );
    // The stop drew no backoff.
    assert_eq!(state.retries(), 2);
    let unlimited = RetryPolicy {
        max_attempts: None,
        ..p
    };
    assert!(
        decide(&unlimited, &report(1_000_000, Outcome::Timeout))
            .sleep()
            .is_some()
    );
}

#[test]
fn retry_after_combines_with_backoff() {
    let p = policy(Jitter::NoJitter);
    let hinted = AttemptReport {
        retry_after: Some(ms(2_000)),
        ..report(1, Outcome::Status(429))
    };
    assert_eq!(decide(&p, &hinted), Decision::Retry { sleep: ms(2_000) });
    let short = AttemptReport {
        retry_after: Some(ms(30)),
        ..hinted
    };
    assert_eq!(decide(&p, &short), Decision::Retry { sleep: ms(100) });
    let ignoring = RetryPolicy {
        retry_after: RetryAfterPolicy {
            mode: RetryAfterMode::Ignore,
            max: None,
            ..RetryAfterPolicy::default()
        },
        ..p
    };
    assert_eq!(
        decide(&ignoring, &hinted),
        Decision::Retry { sleep: ms(100) }
    );
}

#[test]
fn deadline_refuses_a_sleep_ending_at_it() {
    let p = RetryPolicy {
        deadline: Some(ms(1_000)),
        ..policy(Jitter::NoJitter)
    };
    // now = 900 ms, sleep 100 ms ends exactly at the deadline: refused.
    let late = AttemptReport {
        now: at(900),
        ..report(1, Outcome::Status(503))
    };
    assert_eq!(
        decide(&p, &late),
        Decision::Stop(StopReason::SleepPastDeadline)
    );
    // With no time left at all, the deadline itself is the reason.
    let past = AttemptReport {
        now: at(1_000),
        ..late
    };
    assert_eq!(decide(&p, &past), Decision::Stop(StopReason::Deadline));
    let earlier = AttemptReport {
        now: at(899),
        ..late
    };
    assert_eq!(decide(&p, &earlier), Decision::Retry { sleep: ms(100) });
    // A Retry-After beyond the deadline stops instead of sleeping in vain.
    let hinted = AttemptReport {
        retry_after: Some(ms(5_000)),
        ..earlier
    };
    assert_eq!(
        decide(&p, &hinted),
        Decision::Stop(StopReason::SleepPastDeadline)
    );
    assert_eq!(
        p.attempt_timeout(at(0), at(500)),
        AttemptTimeout::After(ms(500))
    );
    assert_eq!(
        p.attempt_timeout(at(0), at(100)),
        AttemptTimeout::After(ms(900))
    );
    assert_eq!(
        p.attempt_timeout(at(0), at(0)),
        AttemptTimeout::After(ms(1_000))
    );
    assert_eq!(p.attempt_timeout(at(0), at(1_000)), AttemptTimeout::Expired);
}

#[test]
fn a_sleep_past_the_deadline_can_be_shortened_for_one_last_attempt() {
    let p = RetryPolicy {
        deadline: Some(ms(1_000)),
        fit_last_attempt: Some(ms(50)),
        ..policy(Jitter::NoJitter)
    };
    // At 900 ms the 100 ms sleep would end at the deadline: 50 ms instead, 50 ms left.
    let late = AttemptReport {
        now: at(900),
        ..report(1, Outcome::Status(503))
    };
    assert_eq!(decide(&p, &late), Decision::Retry { sleep: ms(50) });
    // Not below an honoured Retry-After, and never a sleep of zero.
    let hinted = AttemptReport {
        retry_after: Some(ms(60)),
        ..late
    };
    assert_eq!(
        decide(&p, &hinted),
        Decision::Stop(StopReason::SleepPastDeadline)
    );
    let ignoring = RetryPolicy {
        retry_after: RetryAfterPolicy {
            mode: RetryAfterMode::Ignore,
            max: None,
            ..RetryAfterPolicy::default()
        },
        ..p.clone()
    };
    assert_eq!(
        decide(&ignoring, &hinted),
        Decision::Retry { sleep: ms(50) }
    );
    let last = AttemptReport {
        now: at(950),
        ..late
    };
    assert_eq!(
        decide(&p, &last),
        Decision::Stop(StopReason::SleepPastDeadline)
    );
    // A sleep that fits is drawn as always.
    let early = AttemptReport {
        now: at(100),
        ..late
    };
    assert_eq!(decide(&p, &early), Decision::Retry { sleep: ms(100) });
    let zero = RetryPolicy {
        fit_last_attempt: Some(Duration::ZERO),
        ..p
    };
    assert_eq!(zero.validate().unwrap_err().field, "fit_last_attempt");
}

#[test]
fn budget_is_asked_last_and_books_are_kept() {
    let config = BudgetConfig::TokenBucket {
        capacity: 10,
        retry_cost: 5,
        timeout_cost: 10,
        throttling_cost: 5,
        success_refund: 1,
    };
    let mut budget = Budget::new(config).unwrap();
    let p = RetryPolicy {
        max_attempts: Some(2),
        deadline: Some(ms(1_000)),
        ..policy(Jitter::NoJitter)
    };
    let mut rng = test_rng(1);
    let mut run = |a: AttemptReport, budget: &mut Budget| {
        p.decide(&a, &mut BackoffState::new(), Some(budget), &mut rng)
    };
    // Stops for other reasons spend nothing.
    assert_eq!(
        run(report(2, Outcome::Status(503)), &mut budget),
        Decision::Stop(StopReason::Attempts)
    );
    let late = AttemptReport {
        now: at(950),
        ..report(1, Outcome::Status(503))
    };
    assert_eq!(
        run(late, &mut budget),
        Decision::Stop(StopReason::SleepPastDeadline)
    );
    assert_eq!(
        run(report(1, Outcome::Status(400)), &mut budget),
        Decision::Stop(StopReason::NotRetryable)
    );
    assert_eq!(budget.available(at(10)), 10.0);
    // Two plain retries fit, the third is denied.
    assert!(
        run(report(1, Outcome::Status(503)), &mut budget)
            .sleep()
            .is_some()
    );
    assert!(
        run(report(1, Outcome::Status(503)), &mut budget)
            .sleep()
            .is_some()
    );
    assert_eq!(
        run(report(1, Outcome::Status(503)), &mut budget),
        Decision::Stop(StopReason::Budget)
    );
    // A success on a retry after a timeout refunds the timeout cost (10), capped at 10.
    let won = AttemptReport {
        follows: RetryClass::Timeout,
        ..report(2, Outcome::Success)
    };
    assert_eq!(run(won, &mut budget), Decision::Done);
    assert_eq!(budget.available(at(10)), 10.0);
    // A timeout costs 10.
    assert!(
        run(report(1, Outcome::Timeout), &mut budget)
            .sleep()
            .is_some()
    );
    assert_eq!(budget.available(at(10)), 0.0);
}

#[test]
fn grpc_budget_counts_retryable_failures_in_decide() {
    let mut budget = Budget::new(BudgetConfig::grpc()).unwrap();
    let p = RetryPolicy {
        max_attempts: None,
        ..policy(Jitter::NoJitter)
    };
    let mut rng = test_rng(1);
    let mut state = BackoffState::new();
    let decisions: Vec<Decision> = (1..=6)
        .map(|n| {
            p.decide(
                &report(n, Outcome::Status(503)),
                &mut state,
                Some(&mut budget),
                &mut rng,
            )
        })
        .collect();
    assert_eq!(decisions[3], Decision::Retry { sleep: ms(800) });
    assert_eq!(decisions[4], Decision::Stop(StopReason::Budget));
    // A 404 is not a retryable failure: no token taken.
    p.decide(
        &report(1, Outcome::Status(404)),
        &mut state,
        Some(&mut budget),
        &mut rng,
    );
    assert_eq!(budget.available(at(10)), 4.0);
}

#[test]
fn ratio_budget_counts_requests_from_first_reports() {
    let config = BudgetConfig::Ratio {
        percent: 50.0,
        min_per_sec: 0.0,
        window: Duration::from_secs(10),
        deposit: RatioDeposit::Request,
    };
    let mut budget = Budget::new(config).unwrap();
    let p = policy(Jitter::NoJitter);
    let mut rng = test_rng(1);
    // Four requests whose first attempts fail: 50 % of 4 = 2 retries.
    let d: Vec<Decision> = (0..4)
        .map(|_| {
            p.decide(
                &report(1, Outcome::Status(503)),
                &mut BackoffState::new(),
                Some(&mut budget),
                &mut rng,
            )
        })
        .collect();
    assert_eq!(d.iter().filter(|d| d.sleep().is_some()).count(), 2);
    // Second attempts are not new requests.
    assert_eq!(
        p.decide(
            &report(2, Outcome::Status(503)),
            &mut BackoffState::new(),
            Some(&mut budget),
            &mut rng
        ),
        Decision::Stop(StopReason::Budget)
    );
}

#[test]
fn ratio_budget_counting_successes_earns_nothing_from_failures() {
    // Finagle's RequeueFilter: deposit() only when the request succeeds. 20 % and a floor of
    // 1 per second over 10 s: 10 retries of floor, 1 more per 5 successes.
    let config = BudgetConfig::Ratio {
        percent: 20.0,
        min_per_sec: 1.0,
        window: Duration::from_secs(10),
        deposit: RatioDeposit::Success,
    };
    let mut budget = Budget::new(config).unwrap();
    let p = policy(Jitter::NoJitter);
    let mut rng = test_rng(1);
    let mut decide = |attempt, outcome, budget: &mut Budget| {
        p.decide(
            &report(attempt, outcome),
            &mut BackoffState::new(),
            Some(budget),
            &mut rng,
        )
    };
    // 30 failing requests: only the floor's 10 retries, however many requests were sent.
    let granted = (0..30)
        .filter(|_| {
            decide(1, Outcome::Status(503), &mut budget)
                .sleep()
                .is_some()
        })
        .count();
    assert_eq!(granted, 10);
    // Five successes (first attempts): 20 % of 5 = 1 retry more, and no second.
    for _ in 0..5 {
        assert_eq!(decide(1, Outcome::Success, &mut budget), Decision::Done);
    }
    assert!(
        decide(1, Outcome::Status(503), &mut budget)
            .sleep()
            .is_some()
    );
    assert_eq!(
        decide(1, Outcome::Status(503), &mut budget),
        Decision::Stop(StopReason::Budget)
    );
    // A success on a retry counts too: the request succeeded.
    for _ in 0..5 {
        decide(2, Outcome::Success, &mut budget);
    }
    assert!(
        decide(1, Outcome::Status(503), &mut budget)
            .sleep()
            .is_some()
    );
}

#[test]
fn one_backoff_draw_per_retry_and_none_otherwise() {
    use crate::random::RandomSource;
    let p = policy(Jitter::Full);
    let mut state = BackoffState::new();
    let mut rng = test_rng(5);
    let mut twin = test_rng(5);
    let mut twin_state = BackoffState::new();
    // Stops draw nothing.
    p.decide(&report(1, Outcome::Status(404)), &mut state, None, &mut rng);
    p.decide(&report(5, Outcome::Status(503)), &mut state, None, &mut rng);
    p.decide(&report(1, Outcome::Success), &mut state, None, &mut rng);
    // A retry draws exactly what one next_delay draws (at_least uses no randomness).
    let got = p.decide(&report(1, Outcome::Status(503)), &mut state, None, &mut rng);
    let expected = p.backoff.next_delay(&mut twin_state, &mut twin);
    assert_eq!(got, Decision::Retry { sleep: expected });
    assert_eq!(state.retries(), 1);
    assert_eq!(rng.next_u64(), twin.next_u64());
}

#[test]
fn validate_names_the_fields() {
    let p = policy(Jitter::Full);
    assert!(p.validate().is_ok());
    let bad = [
        (
            RetryPolicy {
                max_attempts: Some(0),
                ..p.clone()
            },
            "max_attempts",
        ),
        (
            RetryPolicy {
                timeout: Some(Duration::ZERO),
                ..p.clone()
            },
            "timeout",
        ),
        (
            RetryPolicy {
                deadline: Some(Duration::ZERO),
                ..p.clone()
            },
            "deadline",
        ),
    ];
    for (policy, field) in bad {
        assert_eq!(policy.validate().unwrap_err().field, field);
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn no_retry_sleeps_past_the_deadline(
            jitter in proptest::sample::select(Jitter::ALL.to_vec()),
            deadline in 1u64..20_000,
            elapsed in 0u64..25_000,
            hint in proptest::option::of(0u64..30_000),
            spread in any::<bool>(),
            attempt in 1u32..40,
            seed in any::<u64>(),
        ) {
            let p = RetryPolicy {
                deadline: Some(ms(deadline)),
                max_attempts: None,
                retry_after: RetryAfterPolicy {
                    mode: if spread { RetryAfterMode::Spread } else { RetryAfterMode::AtLeast },
                    max: None,
                    ..RetryAfterPolicy::default()
                },
                ..policy(jitter)
            };
            let a = AttemptReport {
                attempt,
                start: at(1_000),
                now: at(1_000 + elapsed),
                outcome: Outcome::Status(503),
                retry_after: hint.map(ms),
                idempotency: Idempotency::Idempotent,
                follows: RetryClass::Transient,
            };
            let mut state = BackoffState::new();
            match p.decide(&a, &mut state, None, &mut test_rng(seed)) {
                Decision::Retry { sleep } => {
                    prop_assert!(a.now + sleep < at(1_000 + deadline));
                    if let Some(h) = hint { prop_assert!(sleep >= ms(h)); }
                }
                Decision::Stop(reason) => prop_assert!(
                    matches!(reason, StopReason::Deadline | StopReason::SleepPastDeadline),
                    "{reason:?}"
                ),
                Decision::Done => prop_assert!(false, "a 503 is not a success"),
            }
        }
    }
}

#[test]
fn decide_with_draws_where_decide_would_and_stops_on_none() {
    let p = policy(Jitter::Full).nanos();
    let nanos = |a: &AttemptReport| AttemptReport {
        attempt: a.attempt,
        start: to_nanos(a.start),
        now: to_nanos(a.now),
        outcome: a.outcome,
        retry_after: None,
        idempotency: a.idempotency,
        follows: a.follows,
    };
    let retry = nanos(&report(1, Outcome::Status(503)));
    // The policy's own backoff as the closure: the same decision, the same stream after.
    let (mut rng, mut twin) = (test_rng(3), test_rng(3));
    let (mut state, mut twin_state) = (BackoffState::new(), BackoffState::new());
    let backoff = &p.policy().backoff;
    let with = p.decide_with(&retry, None, &mut rng, |r| {
        Some(backoff.next_delay_nanos(&mut state, r))
    });
    assert_eq!(with, p.decide(&retry, &mut twin_state, None, &mut twin));
    assert_eq!(rng.next_u64(), twin.next_u64());
    // A source that gives up stops as the attempt limit does; a stop before the draw (a 404)
    // never asks it.
    let none = p.decide_with(&retry, None, &mut rng, |_| None);
    assert_eq!(none, Decision::Stop(StopReason::Attempts));
    let not_found = nanos(&report(1, Outcome::Status(404)));
    let asked = std::cell::Cell::new(false);
    p.decide_with(&not_found, None, &mut rng, |_| {
        asked.set(true);
        Some(1)
    });
    assert!(!asked.get());
}

/// The AWS 2026 shape by hand: 50 ms after a transient error, 1 s after a throttling one,
/// doubling per retry of the request whatever the classes before (no jitter, so exact).
fn two_class_policy() -> RetryPolicy {
    let transient = Backoff::new(Jitter::NoJitter, ms(50), 2.0, Duration::from_secs(20)).unwrap();
    let throttling =
        Backoff::new(Jitter::NoJitter, ms(1_000), 2.0, Duration::from_secs(20)).unwrap();
    RetryPolicy {
        max_attempts: Some(10),
        throttling: Some(Throttling::on_429(Some(throttling))),
        ..RetryPolicy::new(transient)
    }
}

#[test]
fn each_class_draws_from_its_own_backoff() {
    let p = two_class_policy();
    let mut state = BackoffState::new();
    let mut rng = test_rng(1);
    // Retry k's nominal delay is base_class * 2^(k-1): 50, 2000, 200, 8000, 800 ms.
    let outcomes = [503, 429, 503, 429, 502];
    let sleeps: Vec<Duration> = outcomes
        .iter()
        .enumerate()
        .map(|(i, &code)| {
            let a = report(i as u32 + 1, Outcome::Status(code));
            p.decide(&a, &mut state, None, &mut rng).sleep().unwrap()
        })
        .collect();
    assert_eq!(sleeps, [ms(50), ms(2_000), ms(200), ms(8_000), ms(800)]);
    assert_eq!(p.class_of(Outcome::Status(429)), RetryClass::Throttling);
    assert_eq!(p.class_of(Outcome::Timeout), RetryClass::Timeout);
    assert_eq!(p.class_of(Outcome::Status(503)), RetryClass::Transient);
    // Without a throttling class, 429 is transient and uses the one backoff.
    let plain = policy(Jitter::NoJitter);
    assert_eq!(plain.class_of(Outcome::Status(429)), RetryClass::Transient);
}

/// The 2026 token bucket: 500 tokens, 14 per retry (timeouts too), 5 per throttling retry.
fn aws_2026_bucket() -> Budget {
    Budget::new(BudgetConfig::TokenBucket {
        capacity: 500,
        retry_cost: 14,
        timeout_cost: 14,
        throttling_cost: 5,
        success_refund: 1,
    })
    .unwrap()
}

#[test]
fn each_class_pays_its_own_cost_and_gets_it_back() {
    let p = two_class_policy();
    let mut budget = aws_2026_bucket();
    let mut state = BackoffState::new();
    let mut rng = test_rng(1);
    let mut step = |attempt, outcome, follows, budget: &mut Budget| {
        let a = AttemptReport {
            follows,
            ..report(attempt, outcome)
        };
        p.decide(&a, &mut state, Some(budget), &mut rng)
    };
    // A 429 costs 5 (495 left), a 503 then 14 (481), and the success of the retry that
    // followed the 503 gives those 14 back (495).
    step(1, Outcome::Status(429), RetryClass::Transient, &mut budget);
    assert_eq!(budget.available(at(0)), 495.0);
    step(2, Outcome::Status(503), RetryClass::Throttling, &mut budget);
    assert_eq!(budget.available(at(0)), 481.0);
    step(3, Outcome::Timeout, RetryClass::Transient, &mut budget);
    assert_eq!(budget.available(at(0)), 467.0, "a timeout costs 14 too");
    assert_eq!(
        step(4, Outcome::Success, RetryClass::Timeout, &mut budget),
        Decision::Done
    );
    assert_eq!(budget.available(at(0)), 481.0);
}

#[test]
fn an_outage_longer_than_the_run_gets_quota_over_cost_retries() {
    // Every attempt fails: each request retries once (2 attempts) and the bucket refuses
    // the retry after floor(500 / cost) grants: 35 at 14, 100 at 5 (throttling), 100 at 5
    // (the legacy cost).
    for (config, code, expected) in [
        (aws_2026_bucket(), 503, 35),
        (aws_2026_bucket(), 429, 100),
        (Budget::new(BudgetConfig::token_bucket()).unwrap(), 503, 100),
    ] {
        let mut budget = config;
        let p = RetryPolicy {
            max_attempts: Some(2),
            ..two_class_policy()
        };
        let mut granted = 0;
        for _ in 0..1_000 {
            let a = report(1, Outcome::Status(code));
            let d = p.decide(
                &a,
                &mut BackoffState::new(),
                Some(&mut budget),
                &mut test_rng(1),
            );
            if d.sleep().is_some() {
                granted += 1;
            }
        }
        assert_eq!(granted, expected, "{code}");
    }
}

#[test]
fn a_hint_is_honoured_up_to_max_extra_above_the_backoff() {
    // botocore: max(t_i, min(retry_after, t_i + 5)).
    let p = RetryPolicy {
        retry_after: RetryAfterPolicy {
            max_extra: Some(Duration::from_secs(5)),
            header: RetryAfterHeader::AmzMillis,
            ..RetryAfterPolicy::default()
        },
        ..two_class_policy()
    };
    let with_hint = |hint_ms: u64| AttemptReport {
        retry_after: Some(ms(hint_ms)),
        ..report(1, Outcome::Status(503))
    };
    // The backoff is 50 ms: a hint of 2 s is honoured, one of 10 s is cut to 5.05 s, one of
    // 10 ms is below the backoff.
    assert_eq!(decide(&p, &with_hint(2_000)).sleep(), Some(ms(2_000)));
    assert_eq!(decide(&p, &with_hint(10_000)).sleep(), Some(ms(5_050)));
    assert_eq!(decide(&p, &with_hint(10)).sleep(), Some(ms(50)));
    // `max` still applies, whichever is lower.
    let capped = RetryPolicy {
        retry_after: RetryAfterPolicy {
            max: Some(ms(3_000)),
            ..p.retry_after
        },
        ..p.clone()
    };
    assert_eq!(decide(&capped, &with_hint(10_000)).sleep(), Some(ms(3_000)));
    // The nanosecond path gives the same.
    let nanos = capped.clone().nanos();
    let a = with_hint(10_000);
    let a = AttemptReport {
        attempt: a.attempt,
        start: 0,
        now: 10_000_000,
        outcome: a.outcome,
        retry_after: Some(10_000_000_000),
        idempotency: a.idempotency,
        follows: a.follows,
    };
    let d = nanos.decide(&a, &mut BackoffState::new(), None, &mut test_rng(1));
    assert_eq!(d.sleep(), Some(3_000_000_000));
}
