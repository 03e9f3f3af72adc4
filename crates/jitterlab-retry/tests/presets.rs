//! Each preset against numbers computed from its source: the delay envelope per retry, what
//! its budget grants in an outage longer than the run, and for the AWS presets the vectors
//! botocore itself wrote (tests/vectors/botocore_standard.py).

use std::time::Duration;

use jitterlab_retry::backoff::{Backoff, BackoffState, Jitter};
use jitterlab_retry::policy::{
    AdaptiveRateConfig, AttemptReport, Budget, BudgetConfig, Decision, Idempotency, Outcome,
    RetryAfterMode, RetryClass, RetryPolicy, StopReason,
};
use jitterlab_retry::presets::{self, Preset};
use jitterlab_retry::random::Pcg64Mcg;
use rand::{RngExt, SeedableRng};
use serde_json::Value;

fn vectors(version: &str) -> Value {
    let path = format!(
        "{}/tests/vectors/botocore-{version}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn seconds(v: &Value) -> Vec<Duration> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| Duration::from_secs_f64(x.as_f64().unwrap()))
        .collect()
}

/// The nominal delays d_1..d_n: full jitter draws U[0, d_k].
fn envelope(b: &Backoff, n: u32) -> Vec<Duration> {
    (1..=n).map(|k| b.nominal(k)).collect()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn throttling_backoff(p: &Preset) -> &Backoff {
    p.policy.backoff_for(RetryClass::Throttling)
}

fn report(attempt: u32, outcome: Outcome, retry_after: Option<Duration>) -> AttemptReport {
    AttemptReport {
        attempt,
        start: Duration::ZERO,
        now: Duration::ZERO,
        outcome,
        retry_after,
        idempotency: Idempotency::Idempotent,
        follows: RetryClass::Transient,
    }
}

/// Requests whose every attempt fails with `outcome`, one after the other: how many retries
/// the preset's budget grants before it refuses (its attempt limit never reached first).
fn retries_in_an_endless_outage(p: &Preset, outcome: Outcome) -> u32 {
    let mut budget = Budget::new(p.budget.unwrap()).unwrap();
    let policy = RetryPolicy {
        max_attempts: None,
        ..p.policy.clone()
    };
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut granted = 0;
    for _ in 0..10_000 {
        let mut state = BackoffState::new();
        let mut attempt = 1;
        loop {
            match policy.decide(
                &report(attempt, outcome, None),
                &mut state,
                Some(&mut budget),
                &mut rng,
            ) {
                Decision::Retry { .. } => granted += 1,
                Decision::Stop(StopReason::Budget) => break,
                other => panic!("{}: {other:?}", p.name),
            }
            attempt += 1;
        }
        if budget.available(Duration::ZERO) == 0.0 || granted > 100_000 {
            break;
        }
    }
    granted
}

#[test]
fn aws_standard_matches_botocore_2026() {
    let v = vectors("1.44.8");
    let p = presets::aws_standard();
    assert_eq!(
        p.policy.max_attempts,
        Some(v["max_attempts"].as_u64().unwrap() as u32)
    );
    assert_eq!(
        p.policy.backoff.jitter(),
        Jitter::Full,
        "t = random() * envelope"
    );
    assert_eq!(
        envelope(&p.policy.backoff, 10),
        seconds(&v["envelope_s"]["transient"])
    );
    assert_eq!(
        envelope(throttling_backoff(&p), 10),
        seconds(&v["envelope_s"]["throttling"])
    );
    // 500 / 14 = 35 transient retries, 500 / 5 = 100 throttling ones.
    let refused = &v["retries_until_refused"];
    assert_eq!(retries_in_an_endless_outage(&p, Outcome::Status(503)), 35);
    assert_eq!(refused["transient_503"], 35);
    assert_eq!(retries_in_an_endless_outage(&p, Outcome::Status(429)), 100);
    assert_eq!(refused["throttling_429"], 100);
    assert_eq!(
        retries_in_an_endless_outage(&p, Outcome::Timeout),
        35,
        "timeouts cost 14 too"
    );
    // x-amz-retry-after after a transient error on attempt 1 (envelope 50 ms, drawn at its top).
    let top = RetryPolicy {
        backoff: Backoff::new(Jitter::NoJitter, ms(50), 2.0, secs(20)).unwrap(),
        ..p.policy.clone()
    };
    for (hint, key) in [
        (2_000, "hint_2000ms"),
        (60_000, "hint_60000ms"),
        (10, "hint_10ms"),
    ] {
        let d = top.decide(
            &report(1, Outcome::Status(503), Some(ms(hint))),
            &mut BackoffState::new(),
            None,
            &mut Pcg64Mcg::seed_from_u64(1),
        );
        let expected = Duration::from_secs_f64(v["retry_after_s"][key].as_f64().unwrap());
        assert_eq!(d.sleep(), Some(expected), "{key}");
    }
    quota_sequences(&p, &v);
}

/// The quota after botocore's sequences: retries after a 429 and a 503, then a success that
/// gives back what the last retry cost.
fn quota_sequences(p: &Preset, v: &Value) {
    for (key, outcomes) in [
        ("429_503_ok", [Outcome::Status(429), Outcome::Status(503)]),
        ("503_429_ok", [Outcome::Status(503), Outcome::Status(429)]),
    ] {
        let mut budget = Budget::new(p.budget.unwrap()).unwrap();
        let mut state = BackoffState::new();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let mut follows = RetryClass::Transient;
        for (i, outcome) in outcomes.iter().enumerate() {
            let a = AttemptReport {
                follows,
                ..report(i as u32 + 1, *outcome, None)
            };
            assert!(
                p.policy
                    .decide(&a, &mut state, Some(&mut budget), &mut rng)
                    .sleep()
                    .is_some()
            );
            follows = p.policy.class_of(*outcome);
        }
        let a = AttemptReport {
            follows,
            ..report(3, Outcome::Success, None)
        };
        assert_eq!(
            p.policy.decide(&a, &mut state, Some(&mut budget), &mut rng),
            Decision::Done
        );
        assert_eq!(
            budget.available(Duration::ZERO),
            v["capacity_after"][key].as_f64().unwrap(),
            "{key}"
        );
    }
    // "ok": a 503 retried, its success (the retry's cost back), then a first-try success
    // (+1, never above the capacity).
    let mut budget = Budget::new(p.budget.unwrap()).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut state = BackoffState::new();
    let d = p.policy.decide(
        &report(1, Outcome::Status(503), None),
        &mut state,
        Some(&mut budget),
        &mut rng,
    );
    assert!(d.sleep().is_some());
    let after_retry = AttemptReport {
        follows: p.policy.class_of(Outcome::Status(503)),
        ..report(2, Outcome::Success, None)
    };
    for a in [after_retry, report(1, Outcome::Success, None)] {
        let d = p
            .policy
            .decide(&a, &mut BackoffState::new(), Some(&mut budget), &mut rng);
        assert_eq!(d, Decision::Done);
    }
    assert_eq!(
        budget.available(Duration::ZERO),
        v["capacity_after"]["ok"].as_f64().unwrap(),
        "ok"
    );
}

/// Retries each AWS preset's quota grants when every attempt times out or cannot connect,
/// against botocore's `retries_until_refused` for ReadTimeoutError, ConnectTimeoutError and
/// EndpointConnectionError.
#[test]
fn aws_quotas_for_timeouts_and_connection_errors_match_botocore() {
    for (p, version) in [
        (presets::aws_standard(), "1.44.8"),
        (presets::aws_standard_dynamodb(), "1.44.8"),
        (presets::aws_standard_legacy(), "1.35.99"),
    ] {
        let v = &vectors(version)["retries_until_refused"];
        let timeouts = retries_in_an_endless_outage(&p, Outcome::Timeout);
        assert_eq!(
            u64::from(timeouts),
            v["read_timeout"].as_u64().unwrap(),
            "{}",
            p.name
        );
        assert_eq!(
            u64::from(timeouts),
            v["connect_timeout"].as_u64().unwrap(),
            "{}",
            p.name
        );
        assert_eq!(
            u64::from(retries_in_an_endless_outage(&p, Outcome::Connection)),
            v["endpoint_connection_error"].as_u64().unwrap(),
            "{}",
            p.name
        );
    }
}

#[test]
fn aws_standard_dynamodb_matches_botocore_2026() {
    let v = vectors("1.44.8");
    let p = presets::aws_standard_dynamodb();
    assert_eq!(
        p.policy.max_attempts,
        Some(v["service_max_attempts"]["dynamodb"].as_u64().unwrap() as u32)
    );
    assert_eq!(
        envelope(&p.policy.backoff, 10),
        seconds(&v["envelope_s"]["dynamodb_transient"])
    );
    assert_eq!(
        envelope(throttling_backoff(&p), 10),
        seconds(&v["envelope_s"]["throttling"])
    );
    assert_eq!(retries_in_an_endless_outage(&p, Outcome::Status(503)), 35);
    assert_eq!(retries_in_an_endless_outage(&p, Outcome::Status(429)), 100);
}

#[test]
fn aws_standard_legacy_matches_botocore_before_2026() {
    let v = vectors("1.35.99");
    let p = presets::aws_standard_legacy();
    assert_eq!(
        p.policy.max_attempts,
        Some(v["max_attempts"].as_u64().unwrap() as u32)
    );
    assert_eq!(
        envelope(&p.policy.backoff, 10),
        seconds(&v["envelope_s"]["transient"])
    );
    assert_eq!(
        envelope(throttling_backoff(&p), 10),
        seconds(&v["envelope_s"]["throttling"])
    );
    // 500 / 5 = 100 for any error but a timeout, 500 / 10 = 50 after timeouts.
    assert_eq!(retries_in_an_endless_outage(&p, Outcome::Status(503)), 100);
    assert_eq!(v["retries_until_refused"]["transient_503"], 100);
    assert_eq!(retries_in_an_endless_outage(&p, Outcome::Status(429)), 100);
    assert_eq!(retries_in_an_endless_outage(&p, Outcome::Timeout), 50);
    // No hint is read: the backoff alone (at most 1 s on retry 1).
    assert_eq!(p.policy.retry_after.mode, RetryAfterMode::Ignore);
    assert_eq!(v["retry_after_s"]["hint_60000ms"], 1.0);
    quota_sequences(&p, &v);
}

#[test]
fn grpc_is_the_a6_example() {
    let p = presets::grpc();
    // random(0, min(initialBackoff * backoffMultiplier^(n-1), maxBackoff)): 0.1, 0.2, 0.4, 0.8, 1 s.
    assert_eq!(
        envelope(&p.policy.backoff, 5),
        [ms(100), ms(200), ms(400), ms(800), secs(1)]
    );
    assert_eq!(p.policy.max_attempts, Some(4));
    // UNAVAILABLE: a failed connection, and HTTP 429, 502, 503, 504 (grpc/grpc
    // doc/http-grpc-status-mapping.md); nothing else, not even a timeout (DEADLINE_EXCEEDED).
    for code in [429, 502, 503, 504] {
        assert!(p.policy.retry_on.retries(Outcome::Status(code)), "{code}");
    }
    assert!(p.policy.retry_on.retries(Outcome::Connection));
    for code in [408, 500, 501] {
        assert!(!p.policy.retry_on.retries(Outcome::Status(code)), "{code}");
    }
    assert!(!p.policy.retry_on.retries(Outcome::Timeout));
    // 10 tokens, 1 per failure, retries only above 5: failures leave 9, 8, 7, 6 (retries), 5
    // (refused). One request after another, each stopped by its 4 attempts first: 3 retries
    // for the first request (9, 8, 7; its 4th failure leaves 6 with no attempt left), none
    // after.
    let mut budget = Budget::new(p.budget.unwrap()).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut per_request = Vec::new();
    for _ in 0..3 {
        let mut state = BackoffState::new();
        let mut retries = 0;
        for attempt in 1..=4 {
            let d = p.policy.decide(
                &report(attempt, Outcome::Status(503), None),
                &mut state,
                Some(&mut budget),
                &mut rng,
            );
            match d {
                Decision::Retry { .. } => retries += 1,
                _ => break,
            }
        }
        per_request.push(retries);
    }
    assert_eq!(per_request, [3, 0, 0]);
    assert_eq!(
        budget.available(Duration::ZERO),
        4.0,
        "the 5th and 6th failures took a token each"
    );
}

/// The sleeps of `p` for `outcome`, drawn with `seed`, retry 1 to `n`.
fn sleeps(p: &Preset, outcome: Outcome, seed: u64, n: u32) -> Vec<Duration> {
    let mut state = BackoffState::new();
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    (1..=n)
        .map(|a| {
            p.policy
                .decide(&report(a, outcome, None), &mut state, None, &mut rng)
                .sleep()
                .unwrap()
        })
        .collect()
}

#[test]
fn polly_v8_sleeps_a_constant_2s_three_times() {
    let p = presets::polly_v8();
    // RetryConstants: DefaultRetryCount 3, DefaultBaseDelay 2 s, DefaultBackoffType Constant.
    assert_eq!(sleeps(&p, Outcome::Status(503), 1, 3), [secs(2); 3]);
    assert_eq!(p.policy.max_attempts, Some(4));
    assert!(p.budget.is_none() && p.policy.retry_on.retries(Outcome::Status(500)));
}

#[test]
fn resilience4j_waits_a_fixed_500ms_between_3_attempts() {
    let p = presets::resilience4j();
    // RetryConfig: DEFAULT_MAX_ATTEMPTS 3, DEFAULT_WAIT_DURATION 500 (ms), a constant interval.
    assert_eq!(sleeps(&p, Outcome::Timeout, 1, 2), [ms(500), ms(500)]);
    assert_eq!(p.policy.max_attempts, Some(3));
}

#[test]
fn google_api_core_doubles_from_1s_to_60s_within_120s() {
    let p = presets::google_api_core();
    // exponential_sleep_generator: uniform(0, min(initial * multiplier^(n-1), maximum)).
    let e: Vec<Duration> = [1, 2, 4, 8, 16, 32, 60, 60].map(secs).into();
    assert_eq!(envelope(&p.policy.backoff, 8), e);
    assert_eq!(p.policy.deadline, Some(secs(120)));
    assert_eq!(p.policy.max_attempts, None);
    for code in [429, 500, 503] {
        assert!(p.policy.retry_on.retries(Outcome::Status(code)), "{code}");
    }
    assert!(!p.policy.retry_on.retries(Outcome::Status(502)));
    assert!(
        !p.policy.retry_on.retries(Outcome::Timeout),
        "DeadlineExceeded is not transient"
    );
}

#[test]
fn google_api_core_stops_when_a_sleep_would_pass_120s() {
    // _retry_error_helper: `if deadline is not None and time.monotonic() + next_sleep >
    // deadline_time` the request stops instead of sleeping. Attempts here take no time, so
    // `now` is the sum of the sleeps so far.
    let p = presets::google_api_core();
    let deadline = secs(120);
    for seed in 1..=20 {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let mut state = BackoffState::new();
        let mut now = Duration::ZERO;
        for attempt in 1.. {
            // The sleep this decision draws, from copies of the same state and stream.
            let would_sleep = p
                .policy
                .backoff
                .next_delay(&mut state.clone(), &mut rng.clone());
            let a = AttemptReport {
                now,
                ..report(attempt, Outcome::Status(503), None)
            };
            match p.policy.decide(&a, &mut state, None, &mut rng) {
                Decision::Retry { sleep, .. } => {
                    assert_eq!(sleep, would_sleep, "seed {seed}, retry {attempt}");
                    assert!(now + sleep < deadline, "seed {seed}, retry {attempt}");
                    now += sleep;
                }
                Decision::Stop(StopReason::SleepPastDeadline) => {
                    assert!(now + would_sleep >= deadline, "seed {seed}: {now:?}");
                    // Sleeps reach the 60 s cap from retry 7: at least 6 retries fit.
                    assert!(attempt >= 7, "seed {seed}: stopped at attempt {attempt}");
                    break;
                }
                other => panic!("seed {seed}, attempt {attempt}: {other:?}"),
            }
        }
    }
}

#[test]
fn dotnet_resilience_sleeps_as_pollys_decorrelated_jitter_v2() {
    // Polly.Core RetryHelper.DecorrelatedJitterBackoffV2 (0-based attempt a, u = random()):
    //   t = a + u; next = 2^t * tanh(sqrt(4 t)); delay = (next - prev) / 1.4 * baseDelay,
    // baseDelay 2 s. The u's are the stream's first draws, one per retry.
    let p = presets::dotnet_resilience();
    for seed in [1, 7, 27] {
        let mut draws = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        let mut prev = 0.0;
        let expected: Vec<f64> = (0..3)
            .map(|a| {
                let t = f64::from(a) + draws.random::<f64>();
                let next = t.exp2() * (4.0 * t).sqrt().tanh();
                let delay = (next - prev) / 1.4 * 2.0;
                prev = next;
                delay
            })
            .collect();
        let got = sleeps(&p, Outcome::Status(503), seed, 3);
        for (g, e) in got.iter().zip(&expected) {
            assert!(
                (g.as_secs_f64() - e).abs() < 1e-6,
                "seed {seed}: {got:?} vs {expected:?}"
            );
        }
        // The sleeps grow on average (2 s * 2^a / 1.4 around), none above the 30 s cap.
        assert!(got.iter().all(|d| *d <= secs(30)), "{got:?}");
    }
    // Upper bounds by hand: a = 0 sleeps below 2 tanh(2) / 1.4 * 2 s = 2.754 s.
    let mut rng = Pcg64Mcg::seed_from_u64(3);
    for _ in 0..1000 {
        let d = p
            .policy
            .backoff
            .next_delay(&mut BackoffState::new(), &mut rng);
        assert!(d < ms(2755), "{d:?}");
    }
}

#[test]
fn dotnet_resilience_is_the_standard_handler() {
    let p = presets::dotnet_resilience();
    assert_eq!(p.policy.backoff.jitter(), Jitter::DecorrelatedV2);
    assert_eq!(p.policy.backoff.base(), secs(2));
    assert_eq!(
        (p.policy.timeout, p.policy.deadline),
        (Some(secs(10)), Some(secs(30)))
    );
    assert_eq!(p.policy.max_attempts, Some(4));
    // Retry-After replaces the delay, shorter or longer.
    let d = p.policy.decide(
        &report(1, Outcome::Status(503), Some(ms(300))),
        &mut BackoffState::new(),
        None,
        &mut Pcg64Mcg::seed_from_u64(1),
    );
    assert_eq!(d.sleep(), Some(ms(300)));
    let b = p.breaker.unwrap();
    assert_eq!(
        (b.failure_ratio, b.min_requests, b.window, b.open_for),
        (0.1, 100, secs(30), secs(5))
    );
    for code in [408, 429, 500, 503] {
        assert!(p.policy.retry_on.retries(Outcome::Status(code)), "{code}");
    }
}

/// Go's `wait.Jitter(d, 0.1)`: `d + time.Duration(rand.Float64() * 0.1 * float64(d))`, the
/// `u`'s being the stream's first draws, one per retry.
fn go_jitter(nominal_ms: &[u64], seed: u64) -> Vec<Duration> {
    let mut draws = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    nominal_ms
        .iter()
        .map(|&d| {
            let d = d * 1_000_000;
            Duration::from_nanos(d + (draws.random::<f64>() * 0.1 * d as f64) as u64)
        })
        .collect()
}

/// Attempts until the preset stops, every one answered `outcome`.
fn attempts_until_stop(p: &Preset, outcome: Outcome) -> (u32, StopReason) {
    let mut state = BackoffState::new();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    for a in 1.. {
        if let Decision::Stop(why) =
            p.policy
                .decide(&report(a, outcome, None), &mut state, None, &mut rng)
        {
            return (a, why);
        }
    }
    unreachable!()
}

#[test]
fn client_go_default_retry_sleeps_10ms_plus_up_to_a_tenth_four_times() {
    // util/retry DefaultRetry: Steps 5, Duration 10 ms, Factor 1.0, Jitter 0.1. Steps is the
    // number of attempts (ExponentialBackoff runs the condition at most Steps times and
    // breaks before sleeping when Steps == 1): 4 sleeps of Jitter(10 ms, 0.1).
    let p = presets::client_go();
    for seed in [1, 7, 27] {
        assert_eq!(
            sleeps(&p, Outcome::Status(409), seed, 4),
            go_jitter(&[10, 10, 10, 10], seed),
            "seed {seed}"
        );
    }
    assert_eq!(
        attempts_until_stop(&p, Outcome::Status(409)),
        (5, StopReason::Attempts)
    );
    // RetryOnConflict retries a conflict only.
    assert!(!p.policy.retry_on.retries(Outcome::Status(503)));
    assert!(!p.policy.retry_on.retries(Outcome::Timeout));
    assert!(p.budget.is_none());
}

#[test]
fn client_go_default_backoff_sleeps_10_50_250ms_plus_up_to_a_tenth() {
    // DefaultBackoff: Steps 4, Duration 10 ms, Factor 5.0, Jitter 0.1, no Cap: delay() sleeps
    // Jitter(duration) and multiplies duration by 5 for the next step: 10, 50, 250 ms.
    let p = presets::client_go_backoff();
    assert_eq!(
        envelope(&p.policy.backoff, 3),
        [ms(10), ms(50), ms(250)].to_vec()
    );
    for seed in [1, 7, 27] {
        let got = sleeps(&p, Outcome::Status(409), seed, 3);
        assert_eq!(got, go_jitter(&[10, 50, 250], seed), "seed {seed}");
        for (g, d) in got.iter().zip([10, 50, 250]) {
            assert!(*g >= ms(d) && *g <= ms(d) * 11 / 10, "{got:?}");
        }
    }
    assert_eq!(
        attempts_until_stop(&p, Outcome::Status(409)),
        (4, StopReason::Attempts)
    );
}

#[test]
fn finagle_requeues_failed_connections_at_once_within_its_budget() {
    // Retries.Budget.emptyBackoffSchedule = Backoff.const(Duration.Zero): no sleep; the
    // RequeueFilter requeues RetryableWriteExceptions only (the request never left).
    let p = presets::finagle();
    assert_eq!(sleeps(&p, Outcome::Connection, 1, 20), [Duration::ZERO; 20]);
    assert!(!p.policy.retry_on.retries(Outcome::Status(503)));
    assert!(!p.policy.retry_on.retries(Outcome::Timeout));
    // maxRetries = ceil(MaxRequeuesPerReq 0.2 * balance), balance 100 when only the floor is
    // there: 20 requeues, 21 attempts.
    assert_eq!(p.policy.max_attempts, Some(21));
}

#[test]
fn finagle_budget_is_finagles_token_arithmetic() {
    // RetryBudget.apply(): ttl 10 s, minRetriesPerSec 10, percentCanRetry 0.2, so deposit
    // 1000 (ScaleFactor), withdrawal (1000 / 0.2).toInt = 5000, reserve 10 * 10 * 5000 =
    // 500 000 in TokenBucket.newLeakyBucket; tryWithdraw needs count = sum + reserve >= 5000.
    let (deposit, withdrawal) = (1000_i64, 5000_i64);
    let reserve = 10 * 10 * withdrawal;
    let allowed = |successes: i64| (successes * deposit + reserve) / withdrawal;
    let p = presets::finagle();
    // An outage longer than the run (no success deposits anything): the floor only.
    assert_eq!(allowed(0), 100);
    assert_eq!(retries_in_an_endless_outage(&p, Outcome::Connection), 100);
    // 50 successes in the window: 10 more, whatever the failures.
    let mut budget = Budget::new(p.budget.unwrap()).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    let mut state = BackoffState::new();
    for _ in 0..50 {
        p.policy.decide(
            &report(1, Outcome::Success, None),
            &mut state,
            Some(&mut budget),
            &mut rng,
        );
    }
    let mut granted = 0;
    while let Decision::Retry { .. } = p.policy.decide(
        &report(2, Outcome::Connection, None),
        &mut state,
        Some(&mut budget),
        &mut rng,
    ) {
        granted += 1;
    }
    assert_eq!(granted, allowed(50));
    assert_eq!(granted, 110);
}

#[test]
fn envoy_is_the_route_retry_policy_defaults_with_5xx_connect_failure() {
    // backoff_strategy.cc JitteredBackOffStrategy: random() % min(base * 2^(k-1), max),
    // base_interval 25 ms, max_interval 10 x 25 ms: 25, 50, 100, 200, then 250 ms.
    let p = presets::envoy();
    assert_eq!(p.policy.backoff.jitter(), Jitter::Full);
    assert_eq!(
        envelope(&p.policy.backoff, 6),
        [ms(25), ms(50), ms(100), ms(200), ms(250), ms(250)]
    );
    // The cap is applied before the draw: no sleep above 250 ms, far out in the sequence.
    let far = RetryPolicy {
        max_attempts: None,
        ..p.policy.clone()
    };
    let mut state = BackoffState::new();
    let mut rng = Pcg64Mcg::seed_from_u64(27);
    for a in 1..=40 {
        let d = far
            .decide(
                &report(a, Outcome::Status(503), None),
                &mut state,
                None,
                &mut rng,
            )
            .sleep()
            .unwrap();
        assert!(d <= ms(250), "retry {a}: {d:?}");
    }
    // num_retries 1: two attempts.
    assert_eq!(
        attempts_until_stop(&p, Outcome::Status(503)),
        (2, StopReason::Attempts)
    );
    // 5xx: every 5xx, and no answer at all (reset, per-try timeout); connect-failure.
    for code in [500, 502, 503, 504, 599] {
        assert!(p.policy.retry_on.retries(Outcome::Status(code)), "{code}");
    }
    assert!(p.policy.retry_on.retries(Outcome::Connection));
    assert!(p.policy.retry_on.retries(Outcome::Timeout));
    for code in [408, 409, 429] {
        assert!(!p.policy.retry_on.retries(Outcome::Status(code)), "{code}");
    }
    // rate_limited_retry_back_off is off by default: no hint read.
    assert_eq!(p.policy.retry_after.mode, RetryAfterMode::Ignore);
    assert!(p.breaker.is_none());
    assert_eq!(
        p.budget,
        Some(BudgetConfig::Concurrency {
            percent: 20.0,
            min_concurrency: 3
        })
    );
}

#[test]
fn envoy_budget_is_retry_budget_impl_max() {
    // RetryBudgetImpl::max(): std::max<uint64_t>(budget_percent / 100.0 * current_active,
    // min_retry_concurrency), with circuit_breaker.proto's defaults 20 % and 3.
    let max = |active: u64| ((20.0 / 100.0 * active as f64) as u64).max(3);
    let p = presets::envoy();
    for (active, allowed) in [
        (100, 20),
        (5, 3),
        (0, 3),
        (14, 3),
        (15, 3),
        (16, 3),
        (99, 19),
    ] {
        assert_eq!(max(active), allowed);
        let mut budget = Budget::new(p.budget.unwrap()).unwrap();
        for _ in 0..active {
            budget.on_send();
        }
        let mut granted = 0;
        while budget.try_retry(Duration::ZERO, RetryClass::Transient) {
            granted += 1;
            assert!(granted <= 1000, "never refused");
        }
        assert_eq!(granted, allowed, "{active} attempts in flight");
    }
    // An outage longer than the run: no total cap over time. A retry's place is free again
    // when its attempt ends, so one request after another gets its retry every time.
    let mut budget = Budget::new(p.budget.unwrap()).unwrap();
    let mut rng = Pcg64Mcg::seed_from_u64(1);
    for _ in 0..1000 {
        let mut state = BackoffState::new();
        budget.on_send();
        let d = p.policy.decide(
            &report(1, Outcome::Status(503), None),
            &mut state,
            Some(&mut budget),
            &mut rng,
        );
        assert!(matches!(d, Decision::Retry { .. }), "{d:?}");
        budget.on_send();
        let d = p.policy.decide(
            &report(2, Outcome::Status(503), None),
            &mut state,
            Some(&mut budget),
            &mut rng,
        );
        assert!(matches!(d, Decision::Stop(StopReason::Attempts)), "{d:?}");
    }
}

#[test]
fn every_preset_is_listed_builds_and_keeps_its_values() {
    assert_eq!(presets::all().len(), presets::NAMES.len());
    for p in presets::all() {
        assert!(presets::by_name(p.name).is_some());
        let builder = p.builder().seed(1);
        if p.policy.hedging.is_some() {
            // The blocking executor refuses a hedging policy; the async one runs it.
            let e = builder.build().unwrap_err().to_string();
            assert!(e.contains("`hedging`"), "{}: {e}", p.name);
        } else {
            builder
                .build()
                .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        }
        let q = &builder
            .policy()
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(q.hedging, p.policy.hedging, "{}", p.name);
        assert_eq!(q.backoff.params(), p.policy.backoff.params(), "{}", p.name);
        assert_eq!(q.max_attempts, p.policy.max_attempts, "{}", p.name);
        assert_eq!(q.retry_after, p.policy.retry_after, "{}", p.name);
        assert_eq!(q.retry_on, p.policy.retry_on, "{}", p.name);
        assert_eq!(
            (q.timeout, q.deadline),
            (p.policy.timeout, p.policy.deadline),
            "{}",
            p.name
        );
    }
    assert!(presets::by_name("aws").is_none());
}

#[test]
fn aws_adaptive_is_aws_standard_with_botocores_rate_limiter() {
    // botocore 1.44.8 client.py `_register_retries`: "adaptive" registers the standard
    // handler, then adaptive.register_retry_handler (the limiter, constants in
    // tests/adaptive_rate.rs against botocore's own).
    let (a, s) = (presets::aws_adaptive(), presets::aws_standard());
    assert_eq!(a.rate_limiter, Some(AdaptiveRateConfig::default()));
    assert_eq!(s.rate_limiter, None);
    assert_eq!(a.budget, s.budget);
    assert_eq!(a.policy.backoff.params(), s.policy.backoff.params());
    assert_eq!(a.policy.max_attempts, Some(3));
    assert_eq!(a.policy.retry_after, s.policy.retry_after);
    let built = a.builder().seed(1).build().unwrap();
    assert!(built.rate_limiter().is_none(), "made at the first call");
    let clock = jitterlab_retry::exec::VirtualClock::new();
    let cancel = jitterlab_retry::cancel::CancelToken::new();
    let _ = built.retry(&clock, &cancel, |_| Ok::<_, Outcome>(()), |_| {});
    let limiter = built.rate_limiter().expect("the builder passes it on");
    assert!(!limiter.enabled(), "a success does not turn it on");
}

/// The A6 excerpt in tests/vectors: its two JSON examples, as one object.
fn a6_hedging() -> (Value, String) {
    let path = format!(
        "{}/tests/vectors/grpc-a6-hedging.md",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let blocks: Vec<&str> = text.split("```").skip(1).step_by(2).collect();
    let json = format!("{{{}}}", blocks.join(","));
    (serde_json::from_str(&json).unwrap(), text)
}

#[test]
fn grpc_hedging_is_the_a6_example() {
    let (a6, text) = a6_hedging();
    let (h, t) = (&a6["hedgingPolicy"], &a6["retryThrottling"]);
    let p = presets::grpc_hedging();
    let hedging = p.policy.hedging.expect("it hedges");
    // "hedgingDelay": "0.5s" (a proto3 Duration: seconds with an "s").
    let delay = h["hedgingDelay"]
        .as_str()
        .unwrap()
        .strip_suffix('s')
        .unwrap();
    let delay = Duration::from_secs_f64(delay.parse().unwrap());
    assert_eq!(hedging.fixed_delay(), Some(delay));
    assert_eq!(
        u64::from(hedging.max_attempts),
        h["maxAttempts"].as_u64().unwrap()
    );
    // nonFatalStatusCodes as an HTTP client sees them (grpc/grpc
    // doc/http-grpc-status-mapping.md): UNAVAILABLE is a failed connection or HTTP 429, 502,
    // 503, 504. INTERNAL (HTTP 400 from a proxy, never retried here) and ABORTED (no HTTP
    // answer) have nothing a simulated server answers: left out, and said so.
    let codes: Vec<&str> = h["nonFatalStatusCodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(codes, ["UNAVAILABLE", "INTERNAL", "ABORTED"]);
    for code in [429, 502, 503, 504] {
        assert!(hedging.non_fatal.retries(Outcome::Status(code)), "{code}");
    }
    assert!(hedging.non_fatal.retries(Outcome::Connection));
    for code in [400, 500, 501] {
        assert!(!hedging.non_fatal.retries(Outcome::Status(code)), "{code}");
    }
    assert!(!hedging.non_fatal.retries(Outcome::Timeout));
    // retryThrottling: hedges count against it (grpc's budget).
    assert_eq!(
        p.budget,
        Some(BudgetConfig::Grpc {
            max_tokens: t["maxTokens"].as_f64().unwrap(),
            token_ratio: t["tokenRatio"].as_f64().unwrap(),
        })
    );
    // The timeline the text gives: "after 1ms ... one outstanding RPC", "after 501ms ...
    // two", "after 1001ms ... three", "after 1501ms ... four".
    let outstanding: Vec<(u64, usize)> = ["one", "two", "three", "four"]
        .iter()
        .enumerate()
        .map(|(i, word)| {
            let at = text
                .split(&format!(" {word} outstanding RPC"))
                .next()
                .and_then(|before| before.rsplit("after ").next())
                .and_then(|s| s.split("ms").next())
                .unwrap_or_else(|| panic!("{word}"));
            (at.parse().unwrap(), i + 1)
        })
        .collect();
    assert_eq!(outstanding, [(1, 1), (501, 2), (1001, 3), (1501, 4)]);
    #[cfg(feature = "tokio")]
    copies_leave_as_a6_says(&p, &outstanding);
}

/// A hedged call of `p` to a server that never answers: the copies outstanding at each of
/// A6's instants, and no fifth.
#[cfg(feature = "tokio")]
fn copies_leave_as_a6_says(p: &Preset, outstanding: &[(u64, usize)]) {
    use jitterlab_retry::exec::CopyEvent;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let retrier = p.builder().seed(1).deadline(None).build_async().unwrap();
        let sent = std::cell::RefCell::new(Vec::new());
        let call = retrier
            .call(|_| std::future::pending::<Result<(), Outcome>>())
            .on_attempt(|e| {
                if e.copy == Some(CopyEvent::Sent) {
                    sent.borrow_mut().push(e.start);
                }
            });
        let _ = tokio::time::timeout(secs(60), call).await;
        let sent = sent.into_inner();
        for &(at, n) in outstanding {
            let by = sent.iter().filter(|s| **s <= ms(at)).count();
            assert_eq!(by, n, "copies sent by {at} ms: {sent:?}");
        }
        assert_eq!(sent.len(), 4);
    });
}
