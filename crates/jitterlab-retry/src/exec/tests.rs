//! The blocking executor's tests: its events, stops, books and clocks.

use super::*;
use crate::backoff::{Backoff, Jitter};
use crate::policy::{BreakerConfig, BudgetConfig, RatioDeposit, RetryAfterMode, StopReason};
use std::cell::RefCell;

pub(super) fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
pub(super) fn secs(v: u64) -> Duration {
    Duration::from_secs(v)
}

/// A fake HTTP answer.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reply {
    pub(super) status: u16,
    retry_after: Option<String>,
}

impl Reply {
    pub(super) fn new(status: u16, retry_after: Option<&str>) -> Reply {
        Reply {
            status,
            retry_after: retry_after.map(str::to_string),
        }
    }
}

impl Classify for Reply {
    fn outcome(&self) -> Outcome {
        Outcome::from_status(self.status)
    }
    fn retry_after(&self) -> Option<&str> {
        self.retry_after.as_deref()
    }
}

/// A server that answers from a script, then 200 forever.
pub(super) fn server(script: Vec<Reply>) -> impl FnMut(AttemptCtx) -> Result<&'static str, Reply> {
    let mut script = script.into_iter();
    move |_| match script.next() {
        Some(reply) if reply.status >= 400 => Err(reply),
        _ => Ok("ok"),
    }
}

pub(super) fn policy() -> RetryPolicy {
    let backoff = Backoff::new(Jitter::Full, ms(50), 2.0, secs(1)).unwrap();
    RetryPolicy::new(backoff)
}

pub(super) fn retrier(policy: RetryPolicy) -> Retrier {
    Retrier::seeded(policy, 7).unwrap()
}

/// What a test keeps of an event (the event borrows the attempt's error).
pub(super) type Seen = (u32, Option<Outcome>, Option<Duration>, Decision);
pub(super) fn seen<E>(e: &AttemptEvent<'_, E>) -> Seen {
    (e.attempt, e.outcome, e.retry_after, e.decision)
}

pub(super) fn too_many(n: usize, retry_after: &str) -> Vec<Reply> {
    vec![Reply::new(429, Some(retry_after)); n]
}

#[test]
fn honours_retry_after_on_a_virtual_clock() {
    let clock = VirtualClock::new();
    let mut events = Vec::new();
    let result =
        retrier(policy()).retry(&clock, &CancelToken::new(), server(too_many(2, "2")), |e| {
            events.push(seen(e))
        });
    assert_eq!(result.ok(), Some("ok"));
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events.iter().map(|e| e.0).collect::<Vec<_>>(), [1, 2, 3]);
    for e in &events[..2] {
        assert_eq!(e.1, Some(Outcome::Status(429)));
        assert_eq!(e.2, Some(Duration::from_secs(2)));
        let sleep = e.3.sleep().unwrap_or_default();
        assert!(sleep >= secs(2), "{sleep:?}");
    }
    assert_eq!(events[2].3, Decision::Done);
    assert!(clock.now() >= secs(4), "{:?}", clock.now());
    // Backoff (at most 100 ms here) is shorter than the hint: exactly the hint.
    assert_eq!(clock.now(), secs(4));
}

/// An AWS answer: a status with the two hint headers.
#[derive(Debug)]
struct AwsReply {
    status: u16,
    millis: Option<&'static str>,
    seconds: Option<&'static str>,
}

impl Classify for AwsReply {
    fn outcome(&self) -> Outcome {
        Outcome::from_status(self.status)
    }
    fn retry_after(&self) -> Option<&str> {
        self.seconds
    }
    fn retry_after_millis(&self) -> Option<&str> {
        self.millis
    }
}

#[test]
fn each_class_backs_off_pays_and_reads_milliseconds_in_the_executor() {
    use crate::backoff::BackoffParams;
    use crate::policy::{RetryAfterHeader, RetryOn};
    let throttling_backoff = BackoffParams {
        jitter: Jitter::NoJitter,
        base: secs(1),
        cap: secs(20),
        ..BackoffParams::default()
    };
    let r = Retrier::builder()
        .jitter(Jitter::NoJitter)
        .base(ms(50))
        .cap(secs(20))
        .max_attempts(5)
        .deadline(None)
        .retry_after(RetryAfterMode::AtLeast, None)
        .retry_after_max_extra(secs(5))
        .retry_after_header(RetryAfterHeader::AmzMillis)
        .throttling(
            RetryOn::none().with_status(429).unwrap(),
            Some(throttling_backoff),
        )
        .budget(BudgetConfig::TokenBucket {
            capacity: 500,
            retry_cost: 14,
            timeout_cost: 14,
            throttling_cost: 5,
            success_refund: 1,
        })
        .seed(1)
        .build()
        .unwrap();
    let mut script = vec![
        // Transient: backoff 50 ms, the 1500 ms hint honoured, `Retry-After: 9` unread.
        AwsReply {
            status: 503,
            millis: Some("1500"),
            seconds: Some("9"),
        },
        // Throttling, retry 2: 1 s * 2 = 2 s.
        AwsReply {
            status: 429,
            millis: None,
            seconds: None,
        },
        // Throttling, retry 3: 4 s, the 60 s hint cut to 4 + 5 = 9 s.
        AwsReply {
            status: 429,
            millis: Some("60000"),
            seconds: None,
        },
    ]
    .into_iter();
    let clock = VirtualClock::new();
    let mut sleeps = Vec::new();
    let result = r.retry(
        &clock,
        &CancelToken::new(),
        |_| script.next().map_or(Ok("ok"), Err),
        |e| sleeps.extend(e.decision.sleep()),
    );
    assert_eq!(result.ok(), Some("ok"));
    assert_eq!(sleeps, [ms(1_500), secs(2), secs(9)]);
    assert_eq!(clock.now(), ms(12_500));
    // 500 - 14 - 5 - 5, and the success of a retry after a throttling answer returns 5.
    let tokens = lock(r.budget.as_ref().unwrap()).available(clock.now());
    assert_eq!(tokens, 481.0);
}

#[test]
fn max_attempts_returns_the_last_error() {
    let clock = VirtualClock::new();
    let p = RetryPolicy {
        max_attempts: Some(2),
        ..policy()
    };
    let result = retrier(p).retry(
        &clock,
        &CancelToken::new(),
        server(too_many(2, "2")),
        |_| {},
    );
    match result {
        Err(RetryError::Stopped {
            reason,
            error,
            attempts,
        }) => {
            assert_eq!(reason, StopReason::Attempts);
            assert_eq!(error, Reply::new(429, Some("2")));
            assert_eq!(attempts, 2);
        }
        other => panic!("expected Stopped(Attempts), got {other:?}"),
    }
    assert_eq!(clock.now(), secs(2), "one wait, not two");
}

#[test]
fn cancel_wakes_a_system_clock_sleep() {
    let cancel = CancelToken::new();
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            cancel.cancel();
        })
    };
    let began = Instant::now();
    let result = retrier(policy()).retry(
        &SystemClock::new(),
        &cancel,
        server(too_many(5, "30")),
        |_| {},
    );
    let took = began.elapsed();
    let _ = canceller.join();
    assert!(
        took < Duration::from_secs(2),
        "took {took:?} of a 30 s sleep"
    );
    match result {
        Err(RetryError::Cancelled { last, attempts }) => {
            assert_eq!(attempts, 1);
            assert_eq!(last.map(|r| r.status), Some(429));
        }
        other => panic!("expected Cancelled, got {other:?}"),
    }
}

#[test]
fn cancelled_before_the_first_attempt_makes_none() {
    let cancel = CancelToken::new();
    cancel.cancel();
    let mut calls = 0;
    let result: Result<(), RetryError<Outcome>> = retrier(policy()).retry(
        &VirtualClock::new(),
        &cancel,
        |_| {
            calls += 1;
            Ok(())
        },
        |_| {},
    );
    assert!(matches!(
        result,
        Err(RetryError::Cancelled {
            last: None,
            attempts: 0
        })
    ));
    assert_eq!(calls, 0);
    // Both clocks refuse to sleep on a cancelled token; the virtual one does not advance.
    let clock = VirtualClock::new();
    assert!(matches!(
        clock.sleep(secs(1), &cancel),
        Err(Error::Cancelled)
    ));
    assert_eq!(clock.now(), Duration::ZERO);
    assert!(matches!(
        SystemClock::new().sleep(secs(30), &cancel),
        Err(Error::Cancelled)
    ));
}

/// The documented blocking pattern makes a `SystemClock::new()` per call while the
/// breaker is shared across calls: every clock must tell the same time, or an open
/// breaker's reopening instant is never reached.
#[test]
fn a_breaker_closes_again_across_calls_with_fresh_system_clocks() {
    let breaker = BreakerConfig {
        failure_ratio: 0.5,
        min_requests: 2,
        window: secs(10),
        open_for: ms(300),
    };
    let retrier = Retrier::builder()
        .max_attempts(2)
        .base(ms(1))
        .breaker(breaker)
        .seed(3)
        .build()
        .unwrap();
    let call = |fail: bool| {
        retrier.retry(
            &SystemClock::new(),
            &CancelToken::new(),
            |_| {
                if fail {
                    Err(Outcome::Status(503))
                } else {
                    Ok(())
                }
            },
            |_| {},
        )
    };
    // Two 503s open the breaker for 300 ms.
    assert!(call(true).is_err());
    let mut answers = Vec::new();
    for _ in 0..5 {
        std::thread::sleep(ms(200));
        answers.push(call(false).is_ok());
    }
    // 200 ms in: still open; 400 ms in: the probe goes and closes it; then closed.
    assert_eq!(answers, [false, true, true, true, true]);
}

/// An invalid request is not retried and tells the breaker nothing: not a failure that
/// opens it, not a success that closes it, and a half-open probe is given back.
#[test]
fn an_invalid_request_is_not_counted_by_the_breaker() {
    let breaker = BreakerConfig {
        failure_ratio: 1.0,
        min_requests: 1,
        window: secs(10),
        open_for: secs(1),
    };
    let retrier = Retrier::builder().breaker(breaker).seed(3).build().unwrap();
    let clock = VirtualClock::new();
    let call = |outcome: Outcome| {
        retrier.retry(
            &clock,
            &CancelToken::new(),
            |_| Err::<(), _>(outcome),
            |_| {},
        )
    };
    for _ in 0..3 {
        let e = call(Outcome::Invalid).unwrap_err();
        assert_eq!((e.reason(), e.attempts()), (StopReason::NotRetryable, 1));
    }
    // One failure opens it; once half-open, an invalid probe leaves it half-open.
    assert_eq!(
        call(Outcome::Fatal).unwrap_err().reason(),
        StopReason::NotRetryable
    );
    assert_eq!(
        call(Outcome::Invalid).unwrap_err().reason(),
        StopReason::BreakerOpen
    );
    clock.advance(secs(1));
    assert_eq!(
        call(Outcome::Invalid).unwrap_err().reason(),
        StopReason::NotRetryable
    );
    assert_eq!(
        call(Outcome::Invalid).unwrap_err().reason(),
        StopReason::NotRetryable
    );
}

/// A clock that oversleeps by `by`, or is cancelled as it starts a sleep.
struct Unruly {
    clock: VirtualClock,
    by: Duration,
    cancel_on_sleep: Option<CancelToken>,
}

impl Clock for Unruly {
    fn now(&self) -> Duration {
        self.clock.now()
    }
    fn wall(&self) -> SystemTime {
        self.clock.wall()
    }
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> Result<()> {
        if let Some(token) = &self.cancel_on_sleep {
            token.cancel();
        }
        self.clock.sleep(d + self.by, cancel)
    }
}

/// A stop decided before an attempt (cancelled, the deadline passed, the breaker refused)
/// is seen by the observer too: a call's last event always says why it ended.
#[test]
fn the_observer_sees_every_stop() {
    let log = |clock: &dyn Clock, cancel: &CancelToken, r: &Retrier| {
        let mut log = Vec::new();
        let result = r.retry(clock, cancel, server(vec![Reply::new(503, None); 9]), |e| {
            log.push(e.to_string())
        });
        (log, result.unwrap_err().reason())
    };
    let r = Retrier::builder()
        .seed(2)
        .deadline(secs(1))
        .build()
        .unwrap();
    // Cancelled during the sleep after the first attempt.
    let cancel = CancelToken::new();
    let clock = Unruly {
        clock: VirtualClock::new(),
        by: Duration::ZERO,
        cancel_on_sleep: Some(cancel.clone()),
    };
    let (events, reason) = log(&clock, &cancel, &r);
    assert_eq!(reason, StopReason::Cancelled);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1], "attempt 2: not sent, stop: cancelled");
    // Cancelled before the first attempt.
    let (events, _) = log(&VirtualClock::new(), &cancel, &r);
    assert_eq!(events, ["attempt 1: not sent, stop: cancelled"]);
    // A clock that overslept past the deadline.
    let clock = Unruly {
        clock: VirtualClock::new(),
        by: secs(2),
        cancel_on_sleep: None,
    };
    let (events, reason) = log(&clock, &CancelToken::new(), &r);
    assert_eq!(reason, StopReason::Deadline);
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events[1].starts_with("attempt 2: not sent")
            && events[1].ends_with("stop: deadline reached"),
        "{events:?}"
    );
    // An open breaker refuses a call's first attempt.
    let breaker = BreakerConfig {
        failure_ratio: 1.0,
        min_requests: 1,
        ..BreakerConfig::default()
    };
    let r = Retrier::builder()
        .seed(2)
        .max_attempts(1)
        .breaker(breaker)
        .build()
        .unwrap();
    let clock = VirtualClock::new();
    let (events, _) = log(&clock, &CancelToken::new(), &r);
    assert_eq!(events.len(), 1);
    let (events, reason) = log(&clock, &CancelToken::new(), &r);
    assert_eq!(reason, StopReason::BreakerOpen);
    assert_eq!(events, ["attempt 1: not sent, stop: circuit breaker open"]);
}

/// A refunded retry is refunded once: from a half-full bucket (a full one would hide a
/// second refund under its capacity), a retry given back leaves it where it was.
#[test]
fn a_refund_is_made_once() {
    let budget = BudgetConfig::TokenBucket {
        capacity: 100,
        retry_cost: 10,
        timeout_cost: 10,
        throttling_cost: 10,
        success_refund: 0,
    };
    let r = Retrier::builder()
        .seed(4)
        .max_attempts(6)
        .budget(budget)
        .build()
        .unwrap();
    let tokens = || lock(r.budget.as_ref().unwrap()).available(Duration::ZERO);
    let failing = || server(vec![Reply::new(503, None); 9]);
    // Five retries sent: half the bucket spent.
    let _ = r.retry(&VirtualClock::new(), &CancelToken::new(), failing(), |_| {});
    assert_eq!(tokens(), 50.0);
    // A retry granted, then cancelled during its sleep: its token back, once.
    let cancel = CancelToken::new();
    let clock = Unruly {
        clock: VirtualClock::new(),
        by: Duration::ZERO,
        cancel_on_sleep: Some(cancel.clone()),
    };
    let e = r.retry(&clock, &cancel, failing(), |_| {}).unwrap_err();
    assert_eq!(e.reason(), StopReason::Cancelled);
    assert_eq!(tokens(), 50.0);
    // A retry the breaker refuses before its sleep, and one past an overslept deadline.
    let r = Retrier::builder()
        .seed(4)
        .deadline(secs(1))
        .budget(budget)
        .build()
        .unwrap();
    let tokens = || lock(r.budget.as_ref().unwrap()).available(Duration::ZERO);
    let _ = r.retry(&VirtualClock::new(), &CancelToken::new(), failing(), |_| {});
    let before = tokens();
    assert!(before < 100.0, "{before}");
    let late = Unruly {
        clock: VirtualClock::new(),
        by: secs(2),
        cancel_on_sleep: None,
    };
    let e = r
        .retry(&late, &CancelToken::new(), failing(), |_| {})
        .unwrap_err();
    assert_eq!(e.reason(), StopReason::Deadline);
    assert_eq!(tokens(), before);
}

/// A call cancelled before its first attempt is not a request: Brooker's adaptive bucket
/// deposits nothing for it.
#[test]
fn a_call_cancelled_before_it_begins_is_not_counted() {
    let r = Retrier::builder()
        .seed(5)
        .unlimited_attempts()
        .deadline(None)
        .budget(BudgetConfig::adaptive())
        .build()
        .unwrap();
    let tokens = || lock(r.budget.as_ref().unwrap()).available(Duration::ZERO);
    let failing = || server(vec![Reply::new(503, None); 99]);
    let _ = r.retry(&VirtualClock::new(), &CancelToken::new(), failing(), |_| {});
    let drained = tokens();
    assert!(drained <= 1.0, "{drained}");
    let cancel = CancelToken::new();
    cancel.cancel();
    let e = r
        .retry(&VirtualClock::new(), &cancel, failing(), |_| {})
        .unwrap_err();
    assert_eq!(e.attempts(), 0);
    assert_eq!(tokens(), drained);
}

#[test]
fn system_clock_sleeps_for_real() {
    let clock = SystemClock::new();
    let before = clock.now();
    assert!(clock.sleep(ms(5), &CancelToken::new()).is_ok());
    assert!(clock.now().saturating_sub(before) >= ms(5));
}

#[test]
fn http_date_is_relative_to_the_clock_wall_time() {
    let clock = VirtualClock::new();
    clock.advance(secs(10));
    let mut events = Vec::new();
    let mut calls = 0;
    let result = retrier(policy()).retry(
        &clock,
        &CancelToken::new(),
        |_| {
            calls += 1;
            if calls == 1 {
                let date = httpdate::fmt_http_date(clock.wall() + Duration::from_secs(3));
                Err(Reply::new(503, Some(&date)))
            } else {
                Ok("ok")
            }
        },
        |e| events.push(seen(e)),
    );
    assert_eq!(result.ok(), Some("ok"));
    assert_eq!(events[0].2, Some(Duration::from_secs(3)));
    assert_eq!(events[0].3, Decision::Retry { sleep: secs(3) });
    assert_eq!(clock.now(), secs(13));
    // A date in the past means "now": the backoff alone decides.
    let clock = VirtualClock::new();
    let past = "Mon, 01 Jan 2024 00:00:00 GMT";
    let mut sleeps = Vec::new();
    let result = retrier(policy()).retry(
        &clock,
        &CancelToken::new(),
        server(vec![Reply::new(503, Some(past))]),
        |e| sleeps.extend(e.decision.sleep()),
    );
    assert_eq!(result.ok(), Some("ok"));
    assert!(sleeps[0] <= ms(50), "{:?}", sleeps);
}

#[test]
fn a_400_is_tried_once() {
    let mut calls = 0;
    let result: Result<(), _> = retrier(policy()).retry(
        &VirtualClock::new(),
        &CancelToken::new(),
        |_| {
            calls += 1;
            Err(Reply::new(400, Some("1")))
        },
        |_| {},
    );
    assert_eq!(calls, 1);
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::NotRetryable,
            attempts: 1,
            ..
        })
    ));
}

#[test]
fn idempotency_can_be_set_per_call() {
    let clock = VirtualClock::new();
    let r = retrier(policy());
    let once = r.retry_as(
        Idempotency::NonIdempotent,
        &clock,
        &CancelToken::new(),
        server(too_many(1, "1")),
        |_| {},
    );
    assert!(matches!(
        once,
        Err(RetryError::Stopped {
            reason: StopReason::NotRetryable,
            attempts: 1,
            ..
        })
    ));
    // The retrier's own default is untouched.
    let again = r.retry(
        &clock,
        &CancelToken::new(),
        server(too_many(1, "1")),
        |_| {},
    );
    assert_eq!(again.ok(), Some("ok"));
}

#[test]
fn non_idempotent_requests_are_not_retried_without_a_key() {
    let clock = VirtualClock::new();
    let post = retrier(policy()).with_idempotency(Idempotency::NonIdempotent);
    let result = post.retry(
        &clock,
        &CancelToken::new(),
        server(too_many(1, "1")),
        |_| {},
    );
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::NotRetryable,
            attempts: 1,
            ..
        })
    ));
    let keyed = retrier(policy()).with_idempotency(Idempotency::WithKey);
    assert_eq!(
        keyed
            .retry(
                &clock,
                &CancelToken::new(),
                server(too_many(1, "1")),
                |_| {}
            )
            .ok(),
        Some("ok")
    );
}

#[test]
fn deadline_shortens_the_attempt_timeout_and_stops_sleeping() {
    let clock = VirtualClock::new();
    let p = RetryPolicy {
        deadline: Some(ms(2_500)),
        max_attempts: None,
        ..policy()
    };
    let timeouts = RefCell::new(Vec::new());
    let mut script = server(too_many(100, "2"));
    let result = retrier(p).retry(
        &clock,
        &CancelToken::new(),
        |ctx| {
            timeouts.borrow_mut().push(ctx.timeout);
            script(ctx)
        },
        |_| {},
    );
    // Attempt 1 at 0 s (1 s timeout), sleep 2 s, attempt 2 at 2 s with 0.5 s left; the
    // next 2 s sleep would end past 2.5 s.
    assert_eq!(
        *timeouts.borrow(),
        [
            Some(Duration::from_secs(1)),
            Some(Duration::from_millis(500))
        ]
    );
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::SleepPastDeadline,
            attempts: 2,
            ..
        })
    ));
    assert_eq!(clock.now(), secs(2));
}

#[test]
fn an_adaptive_bucket_is_filled_as_each_request_begins() {
    // Starts full at 1.5; each request deposits 1 (never above 1.5); a retry needs more
    // than 1 token and takes 1. Each call fails throughout: its first retry takes the
    // bucket to 0.5, its second is refused. The second call can retry once only because
    // its beginning refilled the bucket.
    let budget = Budget::new(BudgetConfig::Adaptive(
        crate::policy::adaptive::AdaptiveBucketConfig {
            size: 1.5,
            fill: 1.0,
        },
    ))
    .unwrap();
    let p = RetryPolicy {
        max_attempts: Some(5),
        ..policy()
    };
    let r = retrier(p).with_budget(budget);
    let clock = VirtualClock::new();
    for call in 0..2 {
        let result = r.retry(
            &clock,
            &CancelToken::new(),
            server(vec![Reply::new(503, None); 5]),
            |_| {},
        );
        assert!(
            matches!(
                result,
                Err(RetryError::Stopped {
                    reason: StopReason::Budget,
                    attempts: 2,
                    ..
                })
            ),
            "call {call}: {result:?}"
        );
    }
}

#[test]
fn a_ratio_budget_counting_successes_earns_retries_from_successes_only() {
    // 100 % of the requests in the window, no floor. Counting successes: a failing call
    // earns nothing (1 attempt); after one success, a failing call may retry once.
    // Counting requests sent, the first failing call had earned its own retry.
    for (deposit, first) in [(RatioDeposit::Success, 1), (RatioDeposit::Request, 2)] {
        let budget = Budget::new(BudgetConfig::Ratio {
            percent: 100.0,
            min_per_sec: 0.0,
            window: secs(10),
            deposit,
        })
        .unwrap();
        let p = RetryPolicy {
            max_attempts: Some(5),
            ..policy()
        };
        let r = retrier(p).with_budget(budget);
        let clock = VirtualClock::new();
        let call =
            |script: Vec<Reply>| match r.retry(&clock, &CancelToken::new(), server(script), |_| {})
            {
                Ok(_) => 0,
                Err(RetryError::Stopped {
                    reason: StopReason::Budget,
                    attempts,
                    ..
                }) => attempts,
                other => panic!("{deposit:?}: {other:?}"),
            };
        assert_eq!(call(vec![Reply::new(503, None); 5]), first, "{deposit:?}");
        if deposit == RatioDeposit::Success {
            assert_eq!(call(vec![]), 0);
            assert_eq!(call(vec![Reply::new(503, None); 5]), 2);
        }
    }
}

#[test]
fn budget_is_shared_and_stops_retries() {
    let budget = Budget::new(BudgetConfig::TokenBucket {
        capacity: 10,
        retry_cost: 5,
        timeout_cost: 10,
        throttling_cost: 5,
        success_refund: 1,
    })
    .unwrap();
    let p = RetryPolicy {
        max_attempts: Some(10),
        ..policy()
    };
    let r = retrier(p).with_budget(budget);
    let clock = VirtualClock::new();
    let failing = |_: AttemptCtx| -> Result<(), Outcome> { Err(Outcome::Status(503)) };
    let result = r.retry(&clock, &CancelToken::new(), failing, |_| {});
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::Budget,
            attempts: 3,
            ..
        })
    ));
    // The bucket is empty for the next call too.
    let result = r.retry(&clock, &CancelToken::new(), failing, |_| {});
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::Budget,
            attempts: 1,
            ..
        })
    ));
}

/// Retries the retrier's concurrency budget would grant now, and its retries in flight.
fn concurrency_room(r: &Retrier) -> (f64, Option<u64>) {
    let budget = lock(r.budget.as_ref().expect("a budget"));
    (
        budget.available(Duration::ZERO),
        budget.max_concurrent_retries(),
    )
}

#[test]
fn concurrency_budget_is_shared_by_calls_and_freed_on_every_path() {
    // percent 0, min_concurrency 1: one retry in flight at a time, whatever the traffic.
    let budget = Budget::new(BudgetConfig::Concurrency {
        percent: 0.0,
        min_concurrency: 1,
    })
    .unwrap();
    let p = RetryPolicy {
        max_attempts: Some(3),
        ..policy()
    };
    let r = retrier(p).with_budget(budget);
    let clock = VirtualClock::new();
    let cancel = CancelToken::new();
    // Call A's retry is in flight while call B runs inside it: B's retry is refused.
    let mut inner = None;
    let result = r.retry(
        &clock,
        &cancel,
        |ctx| {
            if ctx.attempt == 1 {
                return Err(Outcome::Status(503));
            }
            assert_eq!(
                concurrency_room(&r),
                (0.0, Some(1)),
                "A's retry holds the one place"
            );
            inner = Some(r.retry(
                &clock,
                &cancel,
                |_| Err::<(), _>(Outcome::Status(503)),
                |_| {},
            ));
            Ok(())
        },
        |_| {},
    );
    assert!(result.is_ok());
    assert!(matches!(
        inner,
        Some(Err(RetryError::Stopped {
            reason: StopReason::Budget,
            attempts: 1,
            ..
        }))
    ));
    // A's retry ended with its success: the place is free again.
    assert_eq!(concurrency_room(&r), (1.0, Some(1)));
    // A retry that fails too is over when its attempt ends: the next retry may start.
    let failing = |_: AttemptCtx| -> Result<(), Outcome> { Err(Outcome::Status(503)) };
    let result = r.retry(&clock, &cancel, failing, |_| {});
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::Attempts,
            attempts: 3,
            ..
        })
    ));
    assert_eq!(concurrency_room(&r), (1.0, Some(1)));
    // An operation that panics during a retry: the retry and the attempt are given up.
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        r.retry(
            &clock,
            &cancel,
            |ctx| -> Result<(), Outcome> {
                if ctx.attempt == 2 {
                    panic!("the operation panics");
                }
                Err(Outcome::Status(503))
            },
            |_| {},
        )
    }));
    assert!(panicked.is_err());
    assert_eq!(concurrency_room(&r), (1.0, Some(1)));
}

#[test]
fn concurrency_budget_counts_the_attempts_in_flight() {
    // Envoy's defaults: 20 % of active attempts, at least 3. Twenty calls whose first
    // attempts are all out (nested) make room for 4 retries.
    let r = retrier(policy()).with_budget(Budget::new(BudgetConfig::concurrency()).unwrap());
    let clock = VirtualClock::new();
    let cancel = CancelToken::new();
    fn nest(
        r: &Retrier,
        clock: &VirtualClock,
        cancel: &CancelToken,
        depth: u32,
        seen: &mut Vec<Option<u64>>,
    ) {
        let _ = r.retry(
            clock,
            cancel,
            |_| {
                seen.push(concurrency_room(r).1);
                if depth > 1 {
                    nest(r, clock, cancel, depth - 1, seen);
                }
                Ok::<_, Outcome>(())
            },
            |_| {},
        );
    }
    let mut seen = Vec::new();
    nest(&r, &clock, &cancel, 25, &mut seen);
    // With k attempts out, max(3, ⌊k / 5⌋): 3 up to 19, 4 from 20, 5 at 25.
    let want: Vec<Option<u64>> = (1..=25u64).map(|k| Some((k / 5).max(3))).collect();
    assert_eq!(seen, want);
    assert_eq!(
        concurrency_room(&r),
        (3.0, Some(3)),
        "all ended: none active"
    );
}

#[test]
fn calls_share_one_real_clock_so_the_breaker_cools_down_across_them() {
    // The first call's failure opens the breaker for 300 ms; 400 ms later, on the same
    // retrier's real clock, the next call is the probe. Were each call on a clock of its
    // own (time 0 at its start), the breaker would still look open.
    let breaker = Breaker::new(BreakerConfig {
        min_requests: 1,
        open_for: ms(300),
        ..BreakerConfig::default()
    })
    .unwrap();
    let p = RetryPolicy {
        max_attempts: Some(1),
        ..policy()
    };
    let r = retrier(p).with_breaker(breaker);
    assert!(r.call(|_| Err::<(), _>(Outcome::Timeout)).is_err());
    assert!(matches!(
        r.call(|_| Ok::<_, Outcome>(1)),
        Err(RetryError::BreakerOpen { attempts: 0, .. })
    ));
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(r.call(|_| Ok::<_, Outcome>(1)).ok(), Some(1));
}

/// A token bucket of 20 tokens at 5 a retry, shared by every call.
fn bucket_of_20() -> Budget {
    Budget::new(BudgetConfig::TokenBucket {
        capacity: 20,
        retry_cost: 5,
        timeout_cost: 10,
        throttling_cost: 5,
        success_refund: 1,
    })
    .unwrap()
}

fn tokens(r: &Retrier, clock: &impl Clock) -> f64 {
    lock(r.budget.as_ref().unwrap()).available(clock.now())
}

#[test]
fn a_retry_the_breaker_refuses_spends_no_token_and_is_not_announced() {
    // The breaker opens on the first failure, for 10 s: no retry is ever sent.
    let breaker = Breaker::new(BreakerConfig {
        min_requests: 1,
        open_for: secs(10),
        ..BreakerConfig::default()
    })
    .unwrap();
    let r = retrier(policy())
        .with_breaker(breaker)
        .with_budget(bucket_of_20());
    let clock = VirtualClock::new();
    let mut decisions = Vec::new();
    for _ in 0..5 {
        let result = r.retry(
            &clock,
            &CancelToken::new(),
            |_| Err::<(), _>(Outcome::Status(503)),
            |e| decisions.push(e.decision),
        );
        assert!(
            matches!(result, Err(RetryError::BreakerOpen { .. })),
            "{result:?}"
        );
    }
    assert!(
        decisions.iter().all(|d| d.sleep().is_none()),
        "a retry the breaker refuses was announced: {decisions:?}"
    );
    assert_eq!(
        tokens(&r, &clock),
        20.0,
        "no retry was sent, none is paid for"
    );
}

#[test]
fn a_cancelled_call_spends_no_token_and_is_not_announced() {
    let r = retrier(policy()).with_budget(bucket_of_20());
    let clock = VirtualClock::new();
    let cancel = CancelToken::new();
    let mut decisions = Vec::new();
    // Cancelled while its first attempt is in flight.
    let result = r.retry(
        &clock,
        &cancel,
        |_| {
            cancel.cancel();
            Err::<(), _>(Outcome::Status(503))
        },
        |e| decisions.push(e.decision),
    );
    assert!(
        matches!(result, Err(RetryError::Cancelled { attempts: 1, .. })),
        "{result:?}"
    );
    assert_eq!(tokens(&r, &clock), 20.0, "the retry was never sent");
    assert!(
        decisions.iter().all(|d| d.sleep().is_none()),
        "a retry of a cancelled call was announced: {decisions:?}"
    );
    assert_eq!(clock.now(), Duration::ZERO, "and not slept for");
}

#[test]
fn a_call_cancelled_during_its_sleep_gets_its_token_back() {
    let r = retrier(policy()).with_budget(bucket_of_20());
    let clock = SystemClock::new();
    let cancel = CancelToken::new();
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            cancel.cancel();
        })
    };
    let result = r.retry(&clock, &cancel, server(too_many(5, "30")), |_| {});
    let _ = canceller.join();
    assert!(matches!(
        result,
        Err(RetryError::Cancelled { attempts: 1, .. })
    ));
    assert_eq!(tokens(&r, &clock), 20.0, "the retry was never sent");
}

#[test]
fn a_sleep_past_the_deadline_says_so() {
    // No jitter: attempt 1 at 0 s, sleep 2 s, attempt 2 at 2 s; the next sleep (4 s) would
    // end past the 2.5 s deadline, with 0.5 s still left.
    let p = RetryPolicy {
        backoff: Backoff::new(Jitter::NoJitter, secs(2), 2.0, secs(8)).unwrap(),
        deadline: Some(ms(2_500)),
        max_attempts: None,
        ..policy()
    };
    let clock = VirtualClock::new();
    let result = retrier(p).retry(
        &clock,
        &CancelToken::new(),
        |_| Err::<(), _>(Outcome::Status(503)),
        |_| {},
    );
    let e = result.unwrap_err();
    assert_eq!(e.attempts(), 2);
    assert_eq!(
        e.to_string(),
        "the next sleep would pass the deadline after 2 attempts",
        "not \"deadline reached\": 0.5 s of it was left"
    );
}

#[test]
fn an_open_breaker_refuses_the_next_attempt() {
    let breaker = Breaker::new(BreakerConfig {
        min_requests: 2,
        ..BreakerConfig::default()
    })
    .unwrap();
    let r = retrier(policy()).with_breaker(breaker);
    let clock = VirtualClock::new();
    let mut calls = 0;
    let result: Result<(), _> = r.retry(
        &clock,
        &CancelToken::new(),
        |_| {
            calls += 1;
            Err(Outcome::Timeout)
        },
        |_| {},
    );
    assert_eq!(calls, 2);
    assert!(matches!(
        result,
        Err(RetryError::BreakerOpen {
            last: Some(Outcome::Timeout),
            attempts: 2
        })
    ));
    // 5 s later a probe goes through; its success closes the breaker.
    clock.advance(secs(5));
    assert_eq!(
        r.retry(&clock, &CancelToken::new(), |_| Ok::<_, Outcome>(1), |_| {})
            .ok(),
        Some(1)
    );
}

#[test]
fn a_fatal_error_stops_at_once_and_counts_as_a_failure() {
    // A breaker that opens on the first failure: a fatal error must open it.
    let breaker = Breaker::new(BreakerConfig {
        min_requests: 1,
        ..BreakerConfig::default()
    })
    .unwrap();
    let budget = Budget::new(BudgetConfig::Grpc {
        max_tokens: 10.0,
        token_ratio: 0.1,
    })
    .unwrap();
    let r = retrier(policy()).with_breaker(breaker).with_budget(budget);
    let clock = VirtualClock::new();
    let mut events = Vec::new();
    let result: Result<(), _> = r.retry(
        &clock,
        &CancelToken::new(),
        |_| Err(ReadError(std::io::Error::other("truncated"))),
        |e| events.push((seen(e), e.error.map(ToString::to_string))),
    );
    assert!(matches!(
        result,
        Err(RetryError::Stopped {
            reason: StopReason::NotRetryable,
            attempts: 1,
            ..
        })
    ));
    assert_eq!(
        events,
        [(
            (
                1,
                Some(Outcome::Fatal),
                None,
                Decision::Stop(StopReason::NotRetryable)
            ),
            Some("reading the answer".to_string())
        )]
    );
    // The budget lost a token (gRPC: one per failure), the breaker is open.
    let available = lock(r.budget.as_ref().unwrap()).available(clock.now());
    assert_eq!(available, 9.0);
    assert!(matches!(
        r.retry(
            &clock,
            &CancelToken::new(),
            |_| Ok::<_, Outcome>(()),
            |_| {}
        ),
        Err(RetryError::BreakerOpen { attempts: 0, .. })
    ));
}

#[test]
fn events_say_when_each_attempt_ran() {
    let clock = VirtualClock::new();
    let mut lines = Vec::new();
    let mut spans = Vec::new();
    let result = retrier(policy()).retry(
        &clock,
        &CancelToken::new(),
        |ctx| {
            clock.advance(Duration::from_millis(120));
            if ctx.attempt == 1 {
                Err(Reply::new(503, Some("1")))
            } else {
                Ok("ok")
            }
        },
        |e| {
            lines.push(e.to_string());
            spans.push((e.start, e.end, e.sleep()));
        },
    );
    assert_eq!(result.ok(), Some("ok"));
    assert_eq!(
        lines,
        [
            "attempt 1: 503 after 120ms, retry in 1s",
            "attempt 2: success after 120ms, done"
        ]
    );
    let ms = Duration::from_millis;
    assert_eq!(
        spans,
        [
            (ms(0), ms(120), Some(ms(1_000))),
            (ms(1_120), ms(1_240), None)
        ]
    );
}

#[test]
fn entropy_seeds_differ_and_seeds_repeat() {
    let sleeps = |r: &Retrier| {
        let mut sleeps = Vec::new();
        let _ = r.retry(
            &VirtualClock::new(),
            &CancelToken::new(),
            |_| Err::<(), _>(Outcome::Connection),
            |e| sleeps.extend(e.sleep()),
        );
        sleeps
    };
    let a = sleeps(&Retrier::new(policy()).unwrap());
    let b = sleeps(&Retrier::new(policy()).unwrap());
    assert_eq!(a.len(), 4);
    assert_ne!(a, b, "two entropy-seeded retriers drew the same jitter");
    let built = |seed| Retrier::builder().seed(seed).build().unwrap();
    assert_eq!(sleeps(&built(3)), sleeps(&built(3)));
}

#[test]
fn every_bad_setting_is_an_error_naming_its_field() {
    let b = Retrier::builder;
    let zero = Duration::ZERO;
    let breaker = |c: BreakerConfig| b().breaker(c);
    let cases: Vec<(RetrierBuilder, &str)> = vec![
        (b().max_attempts(0), "max_attempts"),
        (b().base(zero), "base"),
        (b().multiplier(0.5), "multiplier"),
        (b().multiplier(f64::NAN), "multiplier"),
        (b().multiplier(f64::INFINITY), "multiplier"),
        (b().cap(Duration::from_millis(99)), "cap"),
        (b().timeout(zero), "timeout"),
        (b().deadline(zero), "deadline"),
        (b().fit_last_attempt(zero), "fit_last_attempt"),
        (
            b().retry_after(RetryAfterMode::Spread, zero),
            "retry_after_max",
        ),
        (
            breaker(BreakerConfig {
                window: zero,
                ..BreakerConfig::default()
            }),
            "window",
        ),
        (
            breaker(BreakerConfig {
                open_for: zero,
                ..BreakerConfig::default()
            }),
            "open_for",
        ),
        (
            breaker(BreakerConfig {
                min_requests: 0,
                ..BreakerConfig::default()
            }),
            "min_requests",
        ),
        (
            b().budget(BudgetConfig::TokenBucket {
                capacity: 0,
                retry_cost: 0,
                timeout_cost: 0,
                throttling_cost: 0,
                success_refund: 0,
            }),
            "capacity",
        ),
        (
            b().budget(BudgetConfig::Ratio {
                percent: 20.0,
                min_per_sec: 1.0,
                window: zero,
                deposit: RatioDeposit::Request,
            }),
            "window",
        ),
    ];
    for (builder, field) in cases {
        let err = builder.build().unwrap_err();
        assert_eq!(err.field(), Some(field), "{err}");
        assert!(
            err.to_string()
                .starts_with(&format!("invalid value for `{field}`"))
        );
    }
    // The longest Duration is taken, saturating at u64 nanoseconds, not refused or a panic.
    let long = b()
        .base(Duration::MAX)
        .cap(Duration::MAX)
        .timeout(Duration::MAX)
        .deadline(Duration::MAX)
        .seed(1)
        .build()
        .unwrap();
    let answer = long.retry(
        &VirtualClock::new(),
        &CancelToken::new(),
        |ctx| {
            if ctx.attempt < 2 {
                Err(Outcome::Timeout)
            } else {
                Ok(())
            }
        },
        |_| {},
    );
    assert_eq!(
        answer.ok(),
        Some(()),
        "one sleep of up to 584 years, in virtual time"
    );
}

#[test]
fn builder_errors_name_its_fields() {
    let message = |b: RetrierBuilder| b.build().unwrap_err().to_string();
    let b = Retrier::builder;
    // Worded for the API (`None`, `unlimited_attempts`), not for a scenario file.
    assert_eq!(
        message(b().timeout(Duration::ZERO)),
        "invalid value for `timeout`: 0ms: a duration greater than 0, or None for none"
    );
    assert_eq!(
        message(b().max_attempts(0)),
        "invalid value for `max_attempts`: 0: an integer of at least 1, \
         or unlimited_attempts() (None) for no limit"
    );
    assert_eq!(
        message(b().retry_after(RetryAfterMode::AtLeast, Duration::ZERO)),
        "invalid value for `retry_after_max`: 0ms: a duration greater than 0, or None for \
         no limit (RetryAfterMode::Ignore ignores every hint)"
    );
    assert!(message(b().deadline(Duration::ZERO)).starts_with("invalid value for `deadline`"));
    assert!(message(b().cap(Duration::from_millis(10))).starts_with("invalid value for `cap`"));
    assert!(message(b().multiplier(0.5)).starts_with("invalid value for `multiplier`"));
    let config = BreakerConfig {
        failure_ratio: 2.0,
        ..BreakerConfig::default()
    };
    assert!(message(b().breaker(config)).starts_with("invalid value for `failure_ratio`"));
    // The defaults, as documented on the builder.
    let p = b().policy().unwrap();
    assert_eq!(p.max_attempts, Some(4));
    assert_eq!(p.timeout, None);
    assert_eq!(p.deadline, Some(secs(30)));
    assert_eq!((p.backoff.base(), p.backoff.cap()), (ms(100), secs(10)));
    assert_eq!(p.retry_after.max, Some(secs(60)));
}

#[test]
fn same_seed_same_sleeps() {
    let run = || {
        let clock = VirtualClock::new();
        let mut sleeps = Vec::new();
        let failing = |_: AttemptCtx| -> Result<(), Outcome> { Err(Outcome::Connection) };
        let _ = retrier(policy()).retry(&clock, &CancelToken::new(), failing, |e| {
            sleeps.extend(e.decision.sleep())
        });
        sleeps
    };
    let a = run();
    assert_eq!(a.len(), 4, "5 attempts, 4 sleeps");
    assert_eq!(a, run());
}

/// An error type with a cause, as real code's errors are.
#[derive(Debug)]
pub(super) struct ReadError(pub(super) std::io::Error);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("reading the answer")
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl Classify for ReadError {
    fn outcome(&self) -> Outcome {
        Outcome::Fatal
    }
}

/// Each message of `e`'s source chain.
fn chain(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut chain = Vec::new();
    let mut next = Some(e);
    while let Some(cause) = next {
        chain.push(cause.to_string());
        next = cause.source();
    }
    chain
}

#[test]
fn errors_chain_each_cause_once() {
    // A boxed error (what `?` makes of most errors) is read through: its own chain follows.
    let boxed: Box<dyn std::error::Error + Send + Sync> =
        Box::new(ReadError(std::io::Error::other("connection reset")));
    let e = RetryError::Stopped {
        reason: StopReason::Attempts,
        error: boxed,
        attempts: 5,
    };
    assert_eq!(
        chain(&e),
        [
            "attempts exhausted after 5 attempts",
            "reading the answer",
            "connection reset"
        ]
    );
    assert!(std::error::Error::source(&e).unwrap().is::<ReadError>());
    // Any other type that can be shown is an error source too, through its `Display`.
    let e = RetryError::Stopped {
        reason: StopReason::NotRetryable,
        error: String::from("no such bucket"),
        attempts: 1,
    };
    assert_eq!(
        chain(&e),
        ["not retryable after 1 attempt", "no such bucket"]
    );
    let e = RetryError::Stopped {
        reason: StopReason::Attempts,
        error: ReadError(std::io::Error::other("connection reset")),
        attempts: 5,
    };
    assert_eq!(chain(&e)[1], "reading the answer");
    assert_eq!(
        e.map_err(|r| r.0.to_string())
            .last_error()
            .map(String::as_str),
        Some("connection reset")
    );
    let e: RetryError<Outcome> = RetryError::Cancelled {
        last: None,
        attempts: 1,
    };
    assert_eq!(e.to_string(), "cancelled after 1 attempt");
    assert_eq!(e.into_last_error(), None);
}
