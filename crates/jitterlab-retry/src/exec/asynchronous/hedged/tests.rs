//! Hedged calls in paused time against a fake server answering slowly at random: the copies,
//! the winner, the cancellations and their times, checked exactly against a model of the rules.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use ::tokio::time::{Instant, sleep, timeout};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::exec::{AttemptEvent, CopyEvent, RetryError};
use crate::policy::{BudgetConfig, Decision, HedgingPolicy, Outcome, RetryOn, StopReason};
use crate::prelude::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What the tests read of an event: attempt, kind, outcome, start, end, decision.
type Seen = (
    u32,
    Option<CopyEvent>,
    Option<Outcome>,
    Duration,
    Duration,
    Decision,
);

fn seen<E>(e: &AttemptEvent<'_, E>) -> Seen {
    (e.attempt, e.copy, e.outcome, e.start, e.end, e.decision)
}

/// A server that takes a random time per request (seeded), and counts the requests it was
/// still working on when their caller dropped them.
struct FakeServer {
    rng: Mutex<Pcg64Mcg>,
    dropped: AtomicU32,
    /// Every request's answer: the service time and status.
    answer: fn(&mut Pcg64Mcg) -> (Duration, Result<(), Outcome>),
}

/// Counts a request dropped before it was answered.
struct Unanswered<'a>(Option<&'a AtomicU32>);

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if let Some(count) = self.0 {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl FakeServer {
    fn new(seed: u64, answer: fn(&mut Pcg64Mcg) -> (Duration, Result<(), Outcome>)) -> Self {
        FakeServer {
            rng: Mutex::new(Pcg64Mcg::seed_from_u64(seed)),
            dropped: AtomicU32::new(0),
            answer,
        }
    }

    /// One request: the copy's number on success.
    async fn handle(&self, ctx: AttemptCtx) -> Result<u32, Outcome> {
        let (service, status) = (self.answer)(&mut self.rng.lock().unwrap());
        let mut pending = Unanswered(Some(&self.dropped));
        sleep(service).await;
        pending.0 = None;
        status.map(|()| ctx.attempt)
    }
}

/// A slow, healthy service: 1 to 39 ms, never a multiple of 10 ms (so an answer never ties
/// with a 10 ms delay; tokio's timer counts whole milliseconds).
fn slow(rng: &mut Pcg64Mcg) -> (Duration, Result<(), Outcome>) {
    let service = ms(10 * rng.random_range(0..4u64) + rng.random_range(1..=9u64));
    (service, Ok(()))
}

fn hedging(delay: Duration, copies: u32) -> RetrierBuilder {
    Retrier::builder()
        .seed(1)
        .budget(None)
        .deadline(None)
        .hedging(HedgingPolicy::fixed(delay).max_attempts(copies))
}

/// The events A6's rules give a call whose copies take `service` (drawn in the order they
/// leave), a copy every `delay`, at most `copies`: the copies sent, the winner, the
/// cancelled; and the winner's number and the call's time.
fn model(draws: &mut Pcg64Mcg, delay: Duration, copies: u32) -> (Vec<Seen>, u32, Duration) {
    let mut ends: Vec<Duration> = Vec::new();
    let mut events = Vec::new();
    loop {
        let n = ends.len() as u32 + 1;
        let at = delay * (n - 1);
        let service = slow(draws).0;
        ends.push(at + service);
        let next = if n < copies {
            Decision::Retry { sleep: delay }
        } else {
            Decision::Stop(StopReason::Attempts)
        };
        events.push((n, Some(CopyEvent::Sent), None, at, at, next));
        let first = *ends.iter().min().unwrap();
        if n == copies || first < at + delay {
            break;
        }
    }
    let end = *ends.iter().min().unwrap();
    let winner = ends.iter().position(|e| *e == end).unwrap() as u32 + 1;
    let sent = |n: u32| delay * (n - 1);
    events.push((
        winner,
        Some(CopyEvent::Answered),
        Some(Outcome::Success),
        sent(winner),
        end,
        Decision::Done,
    ));
    for n in (1..=ends.len() as u32).filter(|n| *n != winner) {
        let cancelled = Decision::Stop(StopReason::Cancelled);
        events.push((n, Some(CopyEvent::Cancelled), None, sent(n), end, cancelled));
    }
    (events, winner, end)
}

#[::tokio::test(start_paused = true)]
async fn copies_winner_and_cancellations_are_the_models_exactly() {
    let (delay, copies, seed) = (ms(10), 3, 7);
    let server = FakeServer::new(seed, slow);
    let retrier = hedging(delay, copies).build_async().unwrap();
    let mut draws = Pcg64Mcg::seed_from_u64(seed);
    let (mut hedged, mut won_by_hedge, mut cancelled) = (0, 0, 0);
    for call in 0..200 {
        let (expected, winner, took) = model(&mut draws, delay, copies);
        let mut events = Vec::new();
        let began = Instant::now();
        let answer = retrier
            .call(|ctx| server.handle(ctx))
            .on_attempt(|e| events.push(seen(e)))
            .await;
        assert_eq!(answer.unwrap(), winner, "call {call}");
        assert_eq!(began.elapsed(), took, "call {call}");
        assert_eq!(events, expected, "call {call}");
        let sent = events
            .iter()
            .filter(|e| e.1 == Some(CopyEvent::Sent))
            .count();
        hedged += sent - 1;
        won_by_hedge += usize::from(winner > 1);
        cancelled += sent - 1;
    }
    assert_eq!(server.dropped.load(Ordering::Relaxed) as usize, cancelled);
    // The seed exercises every case: hedges, hedges that win, and all three copies.
    assert!(
        hedged > 100 && won_by_hedge > 50,
        "{hedged} hedges, {won_by_hedge} won"
    );
}

/// Copy 1 answers `first` after 15 ms; the others never answer.
fn first_answers<E: Copy + 'static>(
    first: E,
) -> impl Fn(AttemptCtx) -> std::pin::Pin<Box<dyn Future<Output = Result<u32, E>>>> {
    move |ctx| {
        Box::pin(async move {
            if ctx.attempt == 1 {
                sleep(ms(15)).await;
                Err(first)
            } else {
                std::future::pending().await
            }
        })
    }
}

#[::tokio::test(start_paused = true)]
async fn a_fatal_answer_ends_the_call_and_cancels_the_copies() {
    let non_fatal = RetryOn::none().with_status(503).unwrap();
    let retrier = Retrier::builder()
        .seed(1)
        .hedging(
            HedgingPolicy::fixed(ms(10))
                .max_attempts(3)
                .non_fatal(non_fatal),
        )
        .build_async()
        .unwrap();
    let mut events = Vec::new();
    let result = retrier
        .call(first_answers(Outcome::Status(500)))
        .on_attempt(|e| events.push(seen(e)))
        .await;
    assert!(
        matches!(
            result,
            Err(RetryError::Stopped {
                reason: StopReason::NotRetryable,
                error: Outcome::Status(500),
                attempts: 2
            })
        ),
        "{result:?}"
    );
    let stop = Decision::Stop(StopReason::NotRetryable);
    assert_eq!(
        events[2],
        (
            1,
            Some(CopyEvent::Answered),
            Some(Outcome::Status(500)),
            ms(0),
            ms(15),
            stop
        )
    );
    assert_eq!(
        events[3],
        (
            2,
            Some(CopyEvent::Cancelled),
            None,
            ms(10),
            ms(15),
            Decision::Stop(StopReason::Cancelled)
        )
    );
    assert_eq!(events.len(), 4, "no third copy: {events:?}");

    // A non-fatal 503 sends the next copy at once, not at the next tick.
    let mut events = Vec::new();
    let result = timeout(
        ms(100),
        retrier
            .call(first_answers(Outcome::Status(503)))
            .on_attempt(|e| events.push(seen(e))),
    )
    .await;
    assert!(result.is_err(), "copies 2 and 3 never answer");
    let sent: Vec<_> = events
        .iter()
        .filter(|e| e.1 == Some(CopyEvent::Sent))
        .map(|e| e.3)
        .collect();
    assert_eq!(sent, [ms(0), ms(10), ms(15)]);
}

#[::tokio::test(start_paused = true)]
async fn a_dropped_call_cancels_every_copy() {
    let server = FakeServer::new(1, |_| (Duration::from_secs(3600), Ok(())));
    let retrier = hedging(ms(10), 3).build_async().unwrap();
    let mut sent = 0;
    let call = retrier
        .call(|ctx| server.handle(ctx))
        .on_attempt(|e| sent += u32::from(e.copy == Some(CopyEvent::Sent)));
    assert!(timeout(ms(25), call).await.is_err());
    assert_eq!(sent, 3);
    assert_eq!(
        server.dropped.load(Ordering::Relaxed),
        3,
        "every copy in flight dropped"
    );
}

#[::tokio::test(start_paused = true)]
async fn a_budget_refusal_sends_no_more_copies() {
    // 5 tokens: one hedge (cost 5), then the bucket is empty.
    let bucket = BudgetConfig::TokenBucket {
        capacity: 5,
        retry_cost: 5,
        timeout_cost: 5,
        throttling_cost: 5,
        success_refund: 1,
    };
    let retrier = hedging(ms(10), 5).budget(bucket).build_async().unwrap();
    let server = FakeServer::new(1, |_| (ms(35), Ok(())));
    let mut events = Vec::new();
    let answer = retrier
        .call(|ctx| server.handle(ctx))
        .on_attempt(|e| events.push(seen(e)))
        .await;
    assert_eq!(answer.unwrap(), 1, "the first copy wins at 35 ms");
    let sent: Vec<_> = events
        .iter()
        .filter(|e| e.1 == Some(CopyEvent::Sent))
        .map(|e| e.3)
        .collect();
    assert_eq!(sent, [ms(0), ms(10)]);
    assert_eq!(
        events[2],
        (
            3,
            None,
            None,
            ms(20),
            ms(20),
            Decision::Stop(StopReason::Budget)
        )
    );
    assert_eq!(server.dropped.load(Ordering::Relaxed), 1);
}

#[::tokio::test(start_paused = true)]
async fn the_deadline_bounds_the_whole_call() {
    let server = FakeServer::new(1, |_| (Duration::from_secs(3600), Ok(())));
    let retrier = hedging(ms(10), 3).deadline(ms(25)).build_async().unwrap();
    let began = Instant::now();
    let result = retrier.call(|ctx| server.handle(ctx)).await;
    assert_eq!(began.elapsed(), ms(25));
    assert!(
        matches!(
            result,
            Err(RetryError::TimedOut {
                reason: StopReason::Deadline,
                attempts: 3,
                ..
            })
        ),
        "{result:?}"
    );
    assert_eq!(server.dropped.load(Ordering::Relaxed), 3);
}

#[test]
fn the_blocking_executor_and_a_concurrency_limit_refuse_hedging() {
    let err = hedging(ms(10), 2).build().unwrap_err();
    assert!(
        err.to_string().starts_with("invalid value for `hedging`"),
        "{err}"
    );
    let percentile = Retrier::builder()
        .hedging(HedgingPolicy::new(crate::policy::HedgeDelay::Percentile(
            95.0,
        )))
        .build_async_on(crate::exec::timer::ThreadTimer::new())
        .unwrap_err();
    assert!(
        percentile.to_string().contains("`hedging.delay`: p95"),
        "{percentile}"
    );
    let runtime = ::tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let limit = hedging(ms(10), 2)
        .build_async()
        .unwrap()
        .with_concurrency_limit(4)
        .unwrap_err();
    assert!(limit.to_string().contains("`concurrency`"), "{limit}");
}

#[::tokio::test(start_paused = true)]
async fn each_copy_is_one_log_line() {
    let server = FakeServer::new(1, |_| (ms(35), Ok(())));
    let retrier = hedging(ms(10), 2).build_async().unwrap();
    let mut log = Vec::new();
    let answer = retrier
        .call(|ctx| server.handle(ctx))
        .on_attempt(|e| log.push(e.to_string()))
        .await;
    assert_eq!(answer.unwrap(), 1);
    assert_eq!(
        log,
        [
            "copy 1: sent at 0ns, next copy in 10ms",
            "copy 2: sent at 10ms, no more copies",
            "copy 1: success after 35ms, done",
            "copy 2: cancelled after 25ms",
        ]
    );
}

/// The budget of `retrier` as it stands at `now`: what [`Budget::available`] says.
///
/// [`Budget::available`]: crate::policy::Budget::available
fn available<T: super::super::Timer>(
    retrier: &super::super::AsyncRetrier<T>,
    now: Duration,
) -> f64 {
    let budget = retrier.retrier.budget.as_ref().expect("a budget");
    crate::exec::lock(budget).available(now)
}

/// Copies sent after the first, in `events`.
fn hedges(events: &[Seen]) -> usize {
    let sent = events.iter().filter(|e| e.1 == Some(CopyEvent::Sent));
    sent.count().saturating_sub(1)
}

#[::tokio::test(start_paused = true)]
async fn a_concurrency_budget_hears_every_copy_end() {
    // Envoy's budget: 3 hedges in flight at least. Every copy leaves (`on_send`) and ends:
    // answered, cancelled as a loser, or dropped with its call.
    let envoy = BudgetConfig::concurrency();
    let retrier = hedging(ms(10), 3).budget(envoy).build_async().unwrap();
    let server = FakeServer::new(3, slow);
    let idle = available(&retrier, Duration::ZERO);
    assert_eq!(idle, 3.0);
    let (mut late_hedges, mut dropped) = (0, 0);
    for call in 0..300 {
        let mut events = Vec::new();
        let run = retrier
            .call(|ctx| server.handle(ctx))
            .on_attempt(|e| events.push(seen(e)));
        if call % 10 == 9 {
            // Dropped after its first hedge left, with both copies in flight.
            dropped += u32::from(timeout(ms(15), run).await.is_err());
        } else {
            run.await.unwrap();
        }
        if call >= 200 {
            late_hedges += hedges(&events);
        }
    }
    // Under the old books the budget ran dry once three hedges had been sent, or grew with
    // every first copy never ended.
    assert!(dropped > 0, "some calls were dropped with copies out");
    assert!(
        late_hedges > 50,
        "{late_hedges} hedges in the last 100 calls"
    );
    assert_eq!(available(&retrier, Instant::now().elapsed()), idle);

    // 25 calls at once, never answered: 20 % of 25 first copies allows 5 hedges, and each
    // hedge sent counts as active too: the 6th fits (20 % of 30), the 7th not (of 31). All
    // dropped at 15 ms, the budget is idle again.
    let never = FakeServer::new(1, |_| (Duration::from_secs(3600), Ok(())));
    let sent = std::cell::Cell::new(0);
    let calls = (0..25).map(|_| {
        let call = retrier
            .call(|ctx| never.handle(ctx))
            .on_attempt(|e| sent.set(sent.get() + u32::from(e.copy == Some(CopyEvent::Sent))));
        timeout(ms(15), call)
    });
    let ended = join_all(calls.collect()).await;
    assert!(ended.iter().all(Result::is_err), "every call dropped");
    assert_eq!(sent.get(), 25 + 6);
    assert_eq!(never.dropped.load(Ordering::Relaxed), 25 + 6);
    assert_eq!(available(&retrier, Instant::now().elapsed()), idle);
}

/// Runs `futures` together to their ends: their outputs, in order.
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(&mut outputs) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

#[::tokio::test(start_paused = true)]
async fn a_ratio_budget_counting_successes_counts_a_hedged_success() {
    // Half a hedge per success, and a reserve of one (0.1/s over 10 s).
    let ratio = BudgetConfig::Ratio {
        percent: 50.0,
        min_per_sec: 0.1,
        window: Duration::from_secs(10),
        deposit: crate::policy::RatioDeposit::Success,
    };
    let retrier = hedging(ms(10), 2).budget(ratio).build_async().unwrap();
    // Every copy takes 15 ms: a hedge, when the budget allows it, leaves at 10 ms and loses.
    let server = FakeServer::new(1, |_| (ms(15), Ok(())));
    let mut sent = 0;
    for _ in 0..100 {
        let mut events = Vec::new();
        let answer = retrier
            .call(|ctx| server.handle(ctx))
            .on_attempt(|e| events.push(seen(e)))
            .await;
        assert_eq!(answer.unwrap(), 1);
        sent += hedges(&events);
    }
    // Call k may hedge when hedges + 1 <= (k - 1) / 2 + 1: 50 in 100 calls (1.5 s, inside
    // the window). Counting no success, only the reserve's one.
    assert_eq!(sent, 50);
}

#[::tokio::test(start_paused = true)]
async fn a_hedge_the_breaker_refuses_gives_its_token_back() {
    // One 503 opens the breaker; 503 is non-fatal, so the next copy is asked for at once,
    // granted by the bucket (its 5 tokens), then refused by the breaker.
    let bucket = BudgetConfig::TokenBucket {
        capacity: 5,
        retry_cost: 5,
        timeout_cost: 5,
        throttling_cost: 5,
        success_refund: 1,
    };
    let breaker = crate::policy::BreakerConfig {
        failure_ratio: 1.0,
        min_requests: 1,
        ..Default::default()
    };
    let non_fatal = RetryOn::none().with_status(503).unwrap();
    let retrier = hedging(ms(10), 3)
        .hedging(
            HedgingPolicy::fixed(ms(10))
                .max_attempts(3)
                .non_fatal(non_fatal),
        )
        .budget(bucket)
        .breaker(breaker)
        .build_async()
        .unwrap();
    let mut events = Vec::new();
    let result = retrier
        .call(|_| async {
            sleep(ms(5)).await;
            Err::<u32, _>(Outcome::Status(503))
        })
        .on_attempt(|e| events.push(seen(e)))
        .await;
    assert!(
        matches!(
            result,
            Err(RetryError::Stopped {
                reason: StopReason::BreakerOpen,
                attempts: 1,
                ..
            })
        ),
        "{result:?}"
    );
    assert_eq!(
        events.last().unwrap().5,
        Decision::Stop(StopReason::BreakerOpen)
    );
    assert_eq!(available(&retrier, ms(5)), 5.0, "the grant went back");
}

/// A 503 with a `Retry-After` header (copy 1's answer in [`first_answers`]).
#[derive(Debug, Clone, Copy)]
struct Pushback(&'static str);

impl crate::exec::Classify for Pushback {
    fn outcome(&self) -> Outcome {
        Outcome::Status(503)
    }
    fn retry_after(&self) -> Option<&str> {
        Some(self.0)
    }
}

#[::tokio::test(start_paused = true)]
async fn a_pushback_holds_the_next_copy_for_its_delay() {
    let non_fatal = RetryOn::none().with_status(503).unwrap();
    let retrier = Retrier::builder()
        .seed(1)
        .budget(None)
        .deadline(Duration::from_secs(2))
        .hedging(
            HedgingPolicy::fixed(Duration::from_secs(10))
                .max_attempts(2)
                .non_fatal(non_fatal),
        )
        .build_async()
        .unwrap();
    // `Retry-After: 1` after a zero backoff (`at_least`): copy 2 leaves 1 s after the 503,
    // not at once and not at the 10 s delay.
    let mut events = Vec::new();
    let mut hints = Vec::new();
    let result = retrier
        .call(first_answers(Pushback("1")))
        .on_attempt(|e| {
            events.push(seen(e));
            hints.push(e.retry_after);
        })
        .await;
    let held = Decision::Retry {
        sleep: Duration::from_secs(1),
    };
    let answered = (1, Some(CopyEvent::Answered), Some(Outcome::Status(503)));
    assert_eq!(
        (
            events[1].0,
            events[1].1,
            events[1].2,
            events[1].4,
            events[1].5
        ),
        (answered.0, answered.1, answered.2, ms(15), held)
    );
    assert_eq!(hints[1], Some(Duration::from_secs(1)));
    assert_eq!(events[2].1, Some(CopyEvent::Sent));
    assert_eq!(events[2].3, ms(1015), "{events:?}");
    // Copy 2 is cut off at the 2 s deadline.
    assert!(
        matches!(
            result,
            Err(RetryError::TimedOut {
                reason: StopReason::Deadline,
                attempts: 2,
                ..
            })
        ),
        "{result:?}"
    );

    // `Retry-After: 5` runs past the 2 s deadline: no copy 2, the call ends there.
    let mut events = Vec::new();
    let began = Instant::now();
    let result = retrier
        .call(first_answers(Pushback("5")))
        .on_attempt(|e| events.push(seen(e)))
        .await;
    assert_eq!(began.elapsed(), Duration::from_secs(2));
    assert_eq!(events[1].5, Decision::Retry { sleep: ms(1985) });
    assert_eq!(events.len(), 2, "no second copy: {events:?}");
    assert!(
        matches!(
            result,
            Err(RetryError::Stopped {
                reason: StopReason::Deadline,
                attempts: 1,
                ..
            })
        ),
        "{result:?}"
    );
}

#[::tokio::test(start_paused = true)]
async fn a_copy_cut_off_by_the_deadline_ends_the_call_on_its_deadline() {
    // A timeout is fatal by default: the copy cut off at the 25 ms deadline must still end
    // the call as out of time, not as a fatal answer; the breaker hears of it as a failure.
    let breaker = crate::policy::BreakerConfig {
        failure_ratio: 1.0,
        min_requests: 1,
        ..Default::default()
    };
    let retrier = hedging(ms(10), 3)
        .deadline(ms(25))
        .breaker(breaker)
        .build_async()
        .unwrap();
    let server = FakeServer::new(1, |_| (Duration::from_secs(3600), Ok(())));
    let mut events = Vec::new();
    let began = Instant::now();
    let result = retrier
        .call(|ctx| server.handle(ctx))
        .on_attempt(|e| events.push(seen(e)))
        .await;
    assert_eq!(began.elapsed(), ms(25));
    assert!(
        matches!(
            result,
            Err(RetryError::TimedOut {
                reason: StopReason::Deadline,
                attempts: 3,
                ..
            })
        ),
        "{result:?}"
    );
    let cancelled = Decision::Stop(StopReason::Cancelled);
    assert_eq!(
        events[3..],
        [
            (
                1,
                Some(CopyEvent::Answered),
                Some(Outcome::Timeout),
                ms(0),
                ms(25),
                Decision::Stop(StopReason::Deadline)
            ),
            (
                2,
                Some(CopyEvent::Cancelled),
                None,
                ms(10),
                ms(25),
                cancelled
            ),
            (
                3,
                Some(CopyEvent::Cancelled),
                None,
                ms(20),
                ms(25),
                cancelled
            ),
        ]
    );
    let open = retrier.retrier.breaker.as_ref().expect("a breaker");
    assert!(
        !crate::exec::lock(open).allow(ms(25)),
        "the cut-off copy was a failure"
    );

    // Timeouts non-fatal: the same ending, and no copy leaves at the deadline.
    let non_fatal = RetryOn::none().with_timeout(true);
    let retrier = hedging(ms(10), 5)
        .hedging(
            HedgingPolicy::fixed(ms(10))
                .max_attempts(5)
                .non_fatal(non_fatal),
        )
        .deadline(ms(25))
        .build_async()
        .unwrap();
    let mut events = Vec::new();
    let result = retrier
        .call(|ctx| server.handle(ctx))
        .on_attempt(|e| events.push(seen(e)))
        .await;
    assert!(
        matches!(
            result,
            Err(RetryError::TimedOut {
                reason: StopReason::Deadline,
                attempts: 3,
                ..
            })
        ),
        "{result:?}"
    );
    assert_eq!(
        events[3].5,
        Decision::Stop(StopReason::Deadline),
        "{events:?}"
    );

    // A non-fatal 503 at the very deadline: no copy leaves then, the 503 is the failure.
    let non_fatal = RetryOn::none().with_status(503).unwrap();
    let retrier = hedging(ms(100), 3)
        .hedging(
            HedgingPolicy::fixed(ms(100))
                .max_attempts(3)
                .non_fatal(non_fatal),
        )
        .deadline(ms(15))
        .build_async()
        .unwrap();
    let mut events = Vec::new();
    let result = retrier
        .call(first_answers(Outcome::Status(503)))
        .on_attempt(|e| events.push(seen(e)))
        .await;
    assert!(
        matches!(
            result,
            Err(RetryError::Stopped {
                reason: StopReason::Deadline,
                error: Outcome::Status(503),
                attempts: 1,
            })
        ),
        "{result:?}"
    );
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1].5, Decision::Stop(StopReason::Deadline));
}
