//! The async executor in paused time: the blocking executor's cases, the same decisions, and
//! what only an async call has (a cut-off attempt, the concurrency limit, a dropped future).

use std::future::{Ready, pending, ready};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use ::tokio::time::{Instant, advance, sleep, timeout};

use super::*;
use crate::backoff::{Backoff, Jitter};
use crate::exec::tests::{
    ReadError, Reply, Seen, ms, policy, retrier, secs, seen, server, too_many,
};
use crate::exec::{VirtualClock, lock};
use crate::policy::Outcome;
use crate::policy::{
    Breaker, BreakerConfig, Budget, BudgetConfig, Decision, Idempotency, StopReason,
};
use std::fmt;

impl From<TimedOut> for Reply {
    /// What a gateway answers for a backend that took too long.
    fn from(_: TimedOut) -> Reply {
        Reply::new(504, None)
    }
}

impl From<TimedOut> for ReadError {
    fn from(t: TimedOut) -> ReadError {
        ReadError(std::io::Error::new(std::io::ErrorKind::TimedOut, t))
    }
}

/// An async operation that answers at once, from a blocking one.
fn at_once<T, E>(
    mut op: impl FnMut(AttemptCtx) -> Result<T, E>,
) -> impl FnMut(AttemptCtx) -> Ready<Result<T, E>> {
    move |ctx| ready(op(ctx))
}

fn async_retrier(policy: RetryPolicy) -> AsyncRetrier {
    AsyncRetrier::new(retrier(policy))
}

/// The async call of `script`, checked against the blocking executor's with the same seed:
/// the same events and the same result. Its events, its result and the tokio time it took.
async fn both(
    policy: RetryPolicy,
    script: Vec<Reply>,
) -> (Vec<Seen>, Result<&'static str, RetryError<Reply>>, Duration) {
    let mut blocking = Vec::new();
    let blocking_result = retrier(policy.clone()).retry(
        &VirtualClock::new(),
        &CancelToken::new(),
        server(script.clone()),
        |e| blocking.push(seen(e)),
    );
    let mut events = Vec::new();
    let began = Instant::now();
    let result = async_retrier(policy)
        .retry(&CancelToken::new(), at_once(server(script)), |e| {
            events.push(seen(e))
        })
        .await;
    assert_eq!(
        events, blocking,
        "the same decisions as the blocking executor"
    );
    assert_eq!(format!("{result:?}"), format!("{blocking_result:?}"));
    (events, result, began.elapsed())
}

#[::tokio::test(start_paused = true)]
async fn retry_after_twice_takes_four_virtual_seconds() {
    let real = std::time::Instant::now();
    let (events, result, took) = both(policy(), too_many(2, "2")).await;
    assert_eq!(result.ok(), Some("ok"));
    assert_eq!(events.len(), 3, "{events:?}");
    for e in &events[..2] {
        assert_eq!(
            (e.1, e.2),
            (Some(Outcome::Status(429)), Some(Duration::from_secs(2)))
        );
        assert_eq!(e.3, Decision::Retry { sleep: secs(2) });
    }
    assert_eq!(events[2].3, Decision::Done);
    assert_eq!(took, Duration::from_secs(4));
    let real = real.elapsed();
    assert!(real < Duration::from_millis(500), "{real:?} of real time");
}

#[::tokio::test(start_paused = true)]
async fn jittered_sleeps_are_the_blocking_executors() {
    // Five connection errors: four jittered sleeps, drawn from the same seed.
    let p = RetryPolicy {
        max_attempts: Some(5),
        ..policy()
    };
    let refused = vec![Reply::new(503, None); 5];
    let (events, result, took) = both(p, refused).await;
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::Attempts,
            attempts: 5,
            ..
        })
    ));
    // Tokio's timers tick in whole milliseconds: each sleep ends on the next tick.
    let slept: Duration = events.iter().filter_map(|e| e.3.sleep()).sum();
    assert!(
        took >= slept && took <= slept + Duration::from_millis(4),
        "{took:?} vs {slept:?}"
    );
}

#[::tokio::test(start_paused = true)]
async fn max_attempts_returns_the_last_error() {
    let p = RetryPolicy {
        max_attempts: Some(2),
        ..policy()
    };
    let (_, result, took) = both(p, too_many(2, "2")).await;
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::Attempts,
            error: Reply { status: 429, .. },
            attempts: 2
        })
    ));
    assert_eq!(took, Duration::from_secs(2), "one wait, not two");
}

#[::tokio::test(start_paused = true)]
async fn http_date_is_relative_to_tokio_time() {
    let r = async_retrier(policy());
    let epoch = r.wall();
    advance(Duration::from_secs(10)).await;
    assert_eq!(
        r.wall().duration_since(epoch).ok(),
        Some(Duration::from_secs(10))
    );
    let mut expected = None;
    let mut events = Vec::new();
    let began = Instant::now();
    let result = r
        .retry(
            &CancelToken::new(),
            at_once(|ctx| {
                if ctx.attempt > 1 {
                    return Ok("ok");
                }
                // Whole seconds: between 2 and 3 s ahead of the retrier's wall time.
                let date = httpdate::fmt_http_date(r.wall() + Duration::from_secs(3));
                expected = crate::policy::parse_retry_after(&date, r.wall());
                Err(Reply::new(503, Some(&date)))
            }),
            |e| events.push(seen(e)),
        )
        .await;
    assert_eq!(result.ok(), Some("ok"));
    let hint = expected.expect("a date");
    assert!(hint > secs(2) && hint <= secs(3), "{hint:?}");
    assert_eq!(events[0].2, Some(hint));
    assert_eq!(events[0].3, Decision::Retry { sleep: hint });
    let took = began.elapsed();
    assert!(took >= hint && took <= hint + Duration::from_millis(1));
    // A date in the past means "now": the backoff alone decides.
    let past = "Mon, 01 Jan 2024 00:00:00 GMT";
    let (events, result, _) = both(policy(), vec![Reply::new(503, Some(past))]).await;
    assert_eq!(result.ok(), Some("ok"));
    assert!(
        events[0].3.sleep().is_some_and(|s| s <= ms(50)),
        "{events:?}"
    );
}

#[::tokio::test(start_paused = true)]
async fn a_400_is_tried_once() {
    let (events, result, took) = both(policy(), vec![Reply::new(400, Some("1"))]).await;
    assert_eq!(events.len(), 1);
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::NotRetryable,
            attempts: 1,
            ..
        })
    ));
    assert_eq!(took, Duration::ZERO);
}

#[::tokio::test(start_paused = true)]
async fn non_idempotent_requests_are_not_retried_without_a_key() {
    let post = AsyncRetrier::new(retrier(policy()).with_idempotency(Idempotency::NonIdempotent));
    let result = post.call(at_once(server(too_many(1, "1")))).await;
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::NotRetryable,
            attempts: 1,
            ..
        })
    ));
    let keyed = AsyncRetrier::new(retrier(policy()).with_idempotency(Idempotency::WithKey));
    let result = keyed.call(at_once(server(too_many(1, "1")))).await;
    assert_eq!(result.ok(), Some("ok"));
}

#[::tokio::test(start_paused = true)]
async fn deadline_shortens_the_attempt_timeout_and_stops_sleeping() {
    // Attempt 1 at 0 s (1 s timeout), sleep 2 s, attempt 2 at 2 s with 0.5 s left; the next
    // 2 s sleep would end past 2.5 s. Each executor's attempts see the same timeouts.
    let p = RetryPolicy {
        deadline: Some(ms(2_500)),
        max_attempts: None,
        ..policy()
    };
    let (mut blocking, mut timeouts) = (Vec::new(), Vec::new());
    let mut script = server(too_many(100, "2"));
    let blocking_result = retrier(p.clone()).retry(
        &VirtualClock::new(),
        &CancelToken::new(),
        |ctx| {
            blocking.push(ctx.timeout);
            script(ctx)
        },
        |_| {},
    );
    let mut script = server(too_many(100, "2"));
    let began = Instant::now();
    let result = async_retrier(p)
        .call(|ctx| {
            timeouts.push(ctx.timeout);
            ready(script(ctx))
        })
        .await;
    assert_eq!(timeouts, blocking);
    assert_eq!(timeouts.last(), Some(&Some(Duration::from_millis(500))));
    assert_eq!(format!("{result:?}"), format!("{blocking_result:?}"));
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::SleepPastDeadline,
            ..
        })
    ));
    assert_eq!(began.elapsed(), Duration::from_secs(2));
}

/// A call whose attempts never answer, bounded by a minute of tokio time, so an attempt
/// timeout that never fires fails the test instead of hanging it.
async fn hung<E>(
    r: &AsyncRetrier,
    on_attempt: impl FnMut(&AttemptEvent<'_, E>),
) -> Result<(), RetryError<E>>
where
    E: Classify + From<TimedOut>,
{
    let cancel = CancelToken::new();
    let call = r.retry(&cancel, |_| pending(), on_attempt);
    timeout(Duration::from_secs(60), call)
        .await
        .expect("cut off")
}

#[::tokio::test(start_paused = true)]
async fn a_hung_attempt_is_cut_off_at_its_timeout() {
    // A 1 s attempt timeout, a 2.5 s deadline, a server that never answers.
    let p = RetryPolicy {
        deadline: Some(ms(2_500)),
        max_attempts: None,
        ..policy()
    };
    let real = std::time::Instant::now();
    let mut spans = Vec::new();
    let result: Result<(), RetryError<Outcome>> = hung(&async_retrier(p), |e| {
        spans.push((e.outcome, e.start, e.end, e.sleep()))
    })
    .await;
    assert!(
        matches!(
            result,
            Err(RetryError::TimedOut {
                reason: StopReason::Deadline,
                ..
            })
        ),
        "{result:?}"
    );
    assert!(spans.len() >= 3, "{spans:?}");
    assert!(
        spans.iter().all(|s| s.0 == Some(Outcome::Timeout)),
        "{spans:?}"
    );
    let (last, full) = spans.split_last().unwrap();
    for s in full {
        // Each ran its full second (its start rounded up to tokio's millisecond tick).
        let ran = s.2 - s.1;
        assert!(
            ran >= Duration::from_secs(1) && ran <= ms(1_001),
            "{spans:?}"
        );
    }
    // The last one only until the deadline, which then refuses any sleep.
    assert!(last.2 - last.1 < Duration::from_secs(1), "{spans:?}");
    assert!(last.2 >= ms(2_500) && last.2 <= ms(2_501), "{spans:?}");
    assert_eq!(last.3, None);
    assert!(real.elapsed() < Duration::from_millis(500));
}

/// A retrier of up to 10 attempts with a token bucket of `capacity`: a retry costs 5, a retry
/// after a timeout 10.
fn with_bucket(capacity: u32) -> AsyncRetrier {
    let bucket = BudgetConfig::TokenBucket {
        capacity,
        retry_cost: 5,
        timeout_cost: 10,
        throttling_cost: 5,
        success_refund: 1,
    };
    let p = RetryPolicy {
        max_attempts: Some(10),
        ..policy()
    };
    AsyncRetrier::new(retrier(p).with_budget(Budget::new(bucket).unwrap()))
}

/// The attempts a call the budget stopped made.
fn stopped_by_budget<E: fmt::Debug>(result: Result<(), RetryError<E>>) -> u32 {
    match result {
        Err(
            RetryError::Stopped {
                reason: StopReason::Budget,
                attempts,
                ..
            }
            | RetryError::TimedOut {
                reason: StopReason::Budget,
                attempts,
                ..
            },
        ) => attempts,
        other => panic!("expected Stopped(Budget), got {other:?}"),
    }
}

/// Every attempt fails with a 503.
fn unavailable(_: AttemptCtx) -> Ready<Result<(), Outcome>> {
    ready(Err(Outcome::Status(503)))
}

#[::tokio::test(start_paused = true)]
async fn a_timed_out_attempt_costs_what_a_timeout_costs() {
    // 15 tokens: one retry after a timeout (10), then the bucket is short. The error a
    // cut-off attempt gets here is a 504, but it counts as a timeout.
    let result: Result<(), RetryError<Reply>> = hung(&with_bucket(15), |_| {}).await;
    assert_eq!(stopped_by_budget(result), 2);
    // A 503 costs 5: three retries.
    assert_eq!(
        stopped_by_budget(with_bucket(15).call(unavailable).await),
        4
    );
}

#[::tokio::test(start_paused = true)]
async fn budget_is_shared_and_stops_retries() {
    let r = with_bucket(10);
    assert_eq!(stopped_by_budget(r.call(unavailable).await), 3);
    // The bucket is empty for the next call too.
    assert_eq!(stopped_by_budget(r.call(unavailable).await), 1);
}

#[::tokio::test(start_paused = true)]
async fn a_ratio_budget_counting_successes_earns_from_successes_only() {
    // 100 % of the successes in the window, no floor: a failing call earns no retry; a
    // success earns the next failing call one.
    let ratio = BudgetConfig::Ratio {
        percent: 100.0,
        min_per_sec: 0.0,
        window: secs(10),
        deposit: crate::policy::RatioDeposit::Success,
    };
    let p = RetryPolicy {
        max_attempts: Some(5),
        ..policy()
    };
    let r = AsyncRetrier::new(retrier(p).with_budget(Budget::new(ratio).unwrap()));
    assert_eq!(stopped_by_budget(r.call(unavailable).await), 1);
    let ok = |_: AttemptCtx| ready(Ok::<(), Outcome>(()));
    assert!(r.call(ok).await.is_ok());
    assert_eq!(stopped_by_budget(r.call(unavailable).await), 2);
}

#[::tokio::test(start_paused = true)]
async fn an_open_breaker_refuses_the_next_attempt() {
    let breaker = Breaker::new(BreakerConfig {
        min_requests: 2,
        ..BreakerConfig::default()
    })
    .unwrap();
    let r = AsyncRetrier::new(retrier(policy()).with_breaker(breaker));
    let mut calls = 0;
    let result: Result<(), _> = r
        .call(|_| {
            calls += 1;
            ready(Err(Outcome::Timeout))
        })
        .await;
    assert_eq!(calls, 2);
    assert!(matches!(
        result,
        Err(RetryError::BreakerOpen {
            last: Some(Outcome::Timeout),
            attempts: 2
        })
    ));
    // Still open a little later; 5 s after it opened a probe goes through and closes it.
    let ok = |_: AttemptCtx| ready(Ok::<_, Outcome>(1));
    advance(Duration::from_secs(4)).await;
    assert!(matches!(
        r.call(ok).await,
        Err(RetryError::BreakerOpen { attempts: 0, .. })
    ));
    advance(Duration::from_secs(1)).await;
    assert_eq!(r.call(ok).await.ok(), Some(1));
}

#[::tokio::test(start_paused = true)]
async fn a_fatal_error_stops_at_once_and_counts_as_a_failure() {
    // A breaker that opens on the first failure, a budget that loses a token per failure.
    let guarded = || {
        let config = BreakerConfig {
            min_requests: 1,
            ..BreakerConfig::default()
        };
        let budget = BudgetConfig::Grpc {
            max_tokens: 10.0,
            token_ratio: 0.1,
        };
        retrier(policy())
            .with_breaker(Breaker::new(config).unwrap())
            .with_budget(Budget::new(budget).unwrap())
    };
    let fatal = |_: AttemptCtx| Err::<(), _>(ReadError(std::io::Error::other("truncated")));
    let mut blocking = Vec::new();
    let clock = VirtualClock::new();
    let _ = guarded().retry(&clock, &CancelToken::new(), fatal, |e| {
        blocking.push(seen(e))
    });
    let r = AsyncRetrier::new(guarded());
    let mut events = Vec::new();
    let result = r
        .retry(&CancelToken::new(), at_once(fatal), |e| {
            events.push(seen(e))
        })
        .await;
    assert_eq!(events, blocking);
    assert_eq!(events[0].3, Decision::Stop(StopReason::NotRetryable));
    match result {
        Err(RetryError::Stopped {
            reason: StopReason::NotRetryable,
            error,
            attempts: 1,
        }) => assert_eq!(error.to_string(), "reading the answer"),
        other => panic!("expected Stopped(NotRetryable), got {other:?}"),
    }
    // The budget lost a token, the breaker is open.
    let available = lock(r.retrier().budget.as_ref().unwrap()).available(r.timer().now());
    assert_eq!(available, 9.0);
    assert!(matches!(
        r.call(|_| ready(Ok::<_, Outcome>(()))).await,
        Err(RetryError::BreakerOpen { attempts: 0, .. })
    ));
}

/// The second attempt succeeds; the first is a 503 asking for 1 s.
fn second_time_lucky(attempt: u32) -> Result<&'static str, Reply> {
    if attempt == 1 {
        Err(Reply::new(503, Some("1")))
    } else {
        Ok("ok")
    }
}

#[::tokio::test(start_paused = true)]
async fn events_say_when_each_attempt_ran() {
    type Line = (String, Duration, Duration, Option<Duration>);
    let line = |e: &AttemptEvent<'_, Reply>| (e.to_string(), e.start, e.end, e.sleep());
    // Attempts of 120 ms, on the blocking executor's virtual clock and in tokio time.
    let clock = VirtualClock::new();
    let mut blocking: Vec<Line> = Vec::new();
    let _ = retrier(policy()).retry(
        &clock,
        &CancelToken::new(),
        |ctx| {
            clock.advance(ms(120));
            second_time_lucky(ctx.attempt)
        },
        |e| blocking.push(line(e)),
    );
    let mut lines: Vec<Line> = Vec::new();
    let result = async_retrier(policy())
        .retry(
            &CancelToken::new(),
            |ctx| async move {
                sleep(Duration::from_millis(120)).await;
                second_time_lucky(ctx.attempt)
            },
            |e| lines.push(line(e)),
        )
        .await;
    assert_eq!(result.ok(), Some("ok"));
    assert_eq!(lines, blocking);
    let ms = Duration::from_millis;
    assert_eq!(
        lines[1],
        (
            "attempt 2: success after 120ms, done".into(),
            ms(1_120),
            ms(1_240),
            None
        )
    );
}

#[::tokio::test(start_paused = true)]
async fn cancel_ends_a_sleep_at_once() {
    let cancel = CancelToken::new();
    let canceller = {
        let cancel = cancel.clone();
        ::tokio::spawn(async move {
            sleep(Duration::from_millis(20)).await;
            cancel.cancel();
        })
    };
    let began = Instant::now();
    let result = async_retrier(policy())
        .retry(&cancel, at_once(server(too_many(5, "30"))), |_| {})
        .await;
    assert_eq!(
        began.elapsed(),
        Duration::from_millis(20),
        "not the 30 s sleep"
    );
    canceller.await.unwrap();
    match result {
        Err(RetryError::Cancelled { last, attempts }) => {
            assert_eq!(attempts, 1);
            assert_eq!(last.map(|r| r.status), Some(429));
        }
        other => panic!("expected Cancelled, got {other:?}"),
    }
}

#[::tokio::test(start_paused = true)]
async fn cancelled_before_the_first_attempt_makes_none() {
    let cancel = CancelToken::new();
    cancel.cancel();
    // Awaiting a cancelled token returns at once.
    cancel.cancelled().await;
    let mut calls = 0;
    let r = async_retrier(policy()).with_concurrency_limit(1).unwrap();
    let result: Result<(), RetryError<Outcome>> = r
        .retry(
            &cancel,
            |_| {
                calls += 1;
                ready(Ok(()))
            },
            |_| {},
        )
        .await;
    assert!(matches!(
        result,
        Err(RetryError::Cancelled {
            last: None,
            attempts: 0
        })
    ));
    assert_eq!(calls, 0);
    assert_eq!(r.in_flight(), Some(0));
}

/// Counts the attempts running at once and the most there were.
#[derive(Default)]
struct Gauge {
    now: AtomicU32,
    peak: AtomicU32,
}

impl Gauge {
    /// An attempt that takes `d` of tokio time, counted while it runs.
    async fn attempt(&self, d: Duration) -> Result<(), Outcome> {
        let running = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(running, Ordering::SeqCst);
        sleep(d).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    }
}

#[::tokio::test(start_paused = true)]
async fn the_limit_bounds_attempts_in_flight_across_calls() {
    let r = Arc::new(async_retrier(policy()).with_concurrency_limit(2).unwrap());
    assert_eq!(r.concurrency_limit(), Some(2));
    let gauge = Arc::new(Gauge::default());
    let began = Instant::now();
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let (r, gauge) = (Arc::clone(&r), Arc::clone(&gauge));
            // Spawned: the call's future is `Send`.
            ::tokio::spawn(async move {
                r.call(|_| {
                    let gauge = Arc::clone(&gauge);
                    async move { gauge.attempt(Duration::from_millis(100)).await }
                })
                .await
            })
        })
        .collect();
    sleep(Duration::from_millis(50)).await;
    assert_eq!(r.in_flight(), Some(2));
    for call in calls {
        assert!(call.await.unwrap().is_ok());
    }
    assert_eq!(gauge.peak.load(Ordering::SeqCst), 2);
    // Five 100 ms attempts, two at a time.
    assert_eq!(began.elapsed(), Duration::from_millis(300));
    assert_eq!(r.in_flight(), Some(0));
}

#[::tokio::test(start_paused = true)]
async fn a_sleeping_call_holds_no_slot() {
    let r = async_retrier(policy()).with_concurrency_limit(1).unwrap();
    let began = Instant::now();
    let sleeper = async {
        let result = r.call(at_once(server(too_many(1, "1")))).await;
        (result.ok(), began.elapsed())
    };
    let other = async {
        let result = r.call(|_| async {
            sleep(Duration::from_millis(100)).await;
            Ok::<_, Outcome>("other")
        });
        (result.await.ok(), began.elapsed())
    };
    let (sleeper, other) = ::tokio::join!(sleeper, other);
    // The other call's attempt ran during the first call's 1 s sleep.
    assert_eq!(other, (Some("other"), Duration::from_millis(100)));
    assert_eq!(sleeper, (Some("ok"), Duration::from_secs(1)));
}

#[::tokio::test(start_paused = true)]
async fn dropping_the_future_gives_back_the_slot_and_the_probe() {
    // A breaker that opens on one failure, and one slot.
    let breaker = Breaker::new(BreakerConfig {
        min_requests: 1,
        ..BreakerConfig::default()
    })
    .unwrap();
    let r = AsyncRetrier::new(retrier(policy()).with_breaker(breaker))
        .with_concurrency_limit(1)
        .unwrap();
    let _ = r.call(|_| ready(Err::<(), _>(Outcome::Fatal))).await;
    advance(Duration::from_secs(5)).await;
    // The half-open breaker's probe hangs, and its caller gives up on it.
    let hung = r.call(|_| pending::<Result<(), Outcome>>());
    assert!(timeout(Duration::from_millis(500), hung).await.is_err());
    assert_eq!(r.in_flight(), Some(0), "the slot was given back");
    // The next attempt takes the slot and probes; its success closes the breaker.
    let next = timeout(
        Duration::from_secs(1),
        r.call(|_| ready(Ok::<_, Outcome>(1))),
    );
    assert_eq!(next.await.expect("a free slot").ok(), Some(1));
    // A call dropped while it waits for the slot, or sleeps, holds none either.
    let holder = r.call(|_| async {
        sleep(Duration::from_secs(1)).await;
        Ok::<_, Outcome>(())
    });
    let waiter = r.call(|_| ready(Ok::<_, Outcome>(())));
    let (held, waited) = ::tokio::join!(
        timeout(Duration::from_secs(2), holder),
        timeout(Duration::from_millis(10), waiter)
    );
    assert!(held.is_ok() && waited.is_err());
    let sleeper = r.call(at_once(server(too_many(1, "30"))));
    assert!(timeout(Duration::from_secs(1), sleeper).await.is_err());
    assert_eq!(r.in_flight(), Some(0));
}

#[::tokio::test(start_paused = true)]
async fn cancel_ends_a_wait_for_a_slot() {
    let r = async_retrier(policy()).with_concurrency_limit(1).unwrap();
    let cancel = CancelToken::new();
    let holder = r.call(|_| async {
        sleep(Duration::from_secs(1)).await;
        Ok::<_, Outcome>(())
    });
    let waiter = r.retry(&cancel, |_| ready(Ok::<_, Outcome>(())), |_| {});
    let canceller = async {
        sleep(Duration::from_millis(10)).await;
        cancel.cancel();
        Instant::now()
    };
    let began = Instant::now();
    let (held, waited, cancelled_at) = ::tokio::join!(holder, waiter, canceller);
    assert!(held.is_ok());
    assert!(matches!(
        waited,
        Err(RetryError::Cancelled {
            last: None,
            attempts: 0
        })
    ));
    assert_eq!(cancelled_at - began, Duration::from_millis(10));
}

/// A retry waiting for a slot gives up at its deadline, not when the slot frees: its token
/// goes back and it says why.
#[::tokio::test(start_paused = true)]
async fn a_wait_for_a_slot_ends_at_the_deadline() {
    let r = Retrier::builder()
        .jitter(Jitter::Constant)
        .base(ms(950))
        .deadline(secs(1))
        .seed(1)
        .build_async()
        .unwrap()
        .with_concurrency_limit(1)
        .unwrap();
    let began = Instant::now();
    // Fails at once, then sleeps 950 ms; its deadline is at 1 s.
    let mut events = Vec::new();
    let retried = async {
        let result = r
            .call(at_once(server(too_many(1, "0"))))
            .on_attempt(|e| events.push(e.to_string()))
            .await;
        (result, began.elapsed())
    };
    // From 900 ms, holds the only slot until its own deadline cuts it off at 1.9 s.
    let holder = async {
        sleep(ms(900)).await;
        r.call(|_| pending::<Result<(), Outcome>>()).await
    };
    let ((result, ended), held) = ::tokio::join!(retried, holder);
    assert_eq!(held.unwrap_err().reason(), StopReason::Deadline);
    let e = result.unwrap_err();
    assert_eq!((e.reason(), e.attempts()), (StopReason::Deadline, 1), "{e}");
    assert_eq!(ended, secs(1), "the wait ends at the deadline");
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1], "attempt 2: not sent, stop: deadline reached");
    let budget = lock(r.retrier().budget.as_ref().unwrap()).available(r.timer().now());
    assert_eq!(budget, 500.0, "the retry's token was given back");
}

#[test]
fn the_limit_is_at_least_one() {
    let err = async_retrier(policy())
        .with_concurrency_limit(0)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value for `concurrency`: 0: an integer of at least 1"
    );
    let t = TimedOut {
        after: Duration::from_secs(1),
    };
    assert_eq!(t.to_string(), "attempt timed out after 1s");
    assert_eq!(Outcome::from(t), Outcome::Timeout);
}

#[::tokio::test(start_paused = true)]
async fn each_class_backs_off_and_pays_as_in_the_blocking_executor() {
    // A 429 draws from the throttling backoff (1 s, no jitter), a 503 from the policy's
    // (50 ms), retry k doubling for either: 1 s, then 100 ms; 14 + 5 tokens, 5 back.
    let transient = Backoff::new(Jitter::NoJitter, ms(50), 2.0, secs(20)).unwrap();
    let throttling = Backoff::new(Jitter::NoJitter, secs(1), 2.0, secs(20)).unwrap();
    let p = RetryPolicy {
        throttling: Some(crate::policy::Throttling::on_429(Some(throttling))),
        ..RetryPolicy::new(transient)
    };
    let bucket = BudgetConfig::TokenBucket {
        capacity: 500,
        retry_cost: 14,
        timeout_cost: 14,
        throttling_cost: 5,
        success_refund: 1,
    };
    let script = vec![Reply::new(429, None), Reply::new(503, None)];
    let (events, result, took) = both(p.clone(), script.clone()).await;
    assert_eq!(result.ok(), Some("ok"));
    let sleeps: Vec<_> = events.iter().filter_map(|e| e.3.sleep()).collect();
    assert_eq!(sleeps, [secs(1), ms(100)]);
    assert_eq!(took, ms(1_100));
    let r = AsyncRetrier::new(retrier(p).with_budget(Budget::new(bucket).unwrap()));
    let result = r.call(at_once(server(script))).await;
    assert_eq!(result.ok(), Some("ok"));
    let tokens = lock(r.retrier().budget.as_ref().unwrap()).available(Duration::ZERO);
    // 500 - 5 - 14, and the success of the retry after the 503 gives its 14 back.
    assert_eq!(tokens, 495.0);
}

#[::tokio::test(start_paused = true)]
async fn a_dropped_call_frees_its_place_in_a_concurrency_budget() {
    // Envoy's defaults with no other traffic: 3 retries in flight at most.
    let budget = Budget::new(BudgetConfig::concurrency()).unwrap();
    let p = RetryPolicy {
        timeout: None,
        ..policy()
    };
    let r = AsyncRetrier::new(retrier(p).with_budget(budget));
    let room =
        |r: &AsyncRetrier| lock(r.retrier.budget.as_ref().unwrap()).available(Duration::ZERO);
    // Three calls whose retries hang; a fourth call's retry is refused.
    let hang = |ctx: AttemptCtx| async move {
        if ctx.attempt == 1 {
            return Err(Outcome::Status(503));
        }
        pending::<Result<(), Outcome>>().await
    };
    let [x, y, z] = [r.call(hang), r.call(hang), r.call(hang)];
    let fourth = r.call(|_| ready(Err::<(), _>(Outcome::Status(503))));
    let (a, b, c, d) = ::tokio::join!(
        timeout(Duration::from_secs(10), x),
        timeout(Duration::from_secs(10), y),
        timeout(Duration::from_secs(10), z),
        async {
            // After the three retries went out (their sleeps are at most 50 ms).
            sleep(Duration::from_secs(1)).await;
            let refused = fourth.await;
            (refused, room(&r))
        }
    );
    assert!(
        a.is_err() && b.is_err() && c.is_err(),
        "the hung calls were dropped"
    );
    let (refused, room_then) = d;
    assert!(matches!(
        refused,
        Err(RetryError::Stopped {
            reason: StopReason::Budget,
            attempts: 1,
            ..
        })
    ));
    assert_eq!(room_then, 0.0);
    // Dropped mid-attempt, they gave back their retries and their attempts.
    assert_eq!(room(&r), 3.0);
    assert_eq!(
        lock(r.retrier.budget.as_ref().unwrap()).max_concurrent_retries(),
        Some(3)
    );
    let ok = r.call(|ctx| {
        ready(if ctx.attempt == 1 {
            Err(Outcome::Status(503))
        } else {
            Ok(())
        })
    });
    assert!(ok.await.is_ok(), "a retry is allowed again");
}
