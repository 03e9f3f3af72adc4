//! The async executor (the `async` feature): [`AsyncRetrier`] runs an `async` operation under
//! the same [`Retrier`] (built by the same [`RetrierBuilder`]) as the blocking executor, and
//! decides after each attempt with the same code.
//!
//! It is tied to no runtime: it waits on a [`Timer`] ([`super::timer`]), tokio's with the
//! `tokio` feature ([`TokioTimer`](super::timer::TokioTimer), the default there), any other
//! runtime's through the trait, or [`ThreadTimer`](super::timer::ThreadTimer) where there is
//! none; its concurrency limit is a fair semaphore of its own (`slots`), so it needs no tokio. A call is
//! a plain future ([`CallFuture`], no boxing): it is `Send` exactly when the operation's
//! future, its closures and the timer's sleeps are, so an operation holding an `Rc` runs on a
//! single-threaded executor. What differs from the blocking executor is only how it waits:
//!
//! - **sleeps** are the timer's; the deadline, the breaker and the budget see the timer's time
//!   since the retrier was made, and an HTTP-date `Retry-After` is read against the wall time
//!   then plus the timer's time since ([`AsyncRetrier::wall`]), so under tokio's paused time
//!   (`#[tokio::test(start_paused = true)]`) hours of backoff take milliseconds;
//! - **the attempt timeout** (`min(timeout, time left before the deadline)`, also passed in
//!   [`AttemptCtx`]) is enforced by racing the attempt against a sleep: a cut-off attempt
//!   counts as [`Outcome::Timeout`](crate::policy::Outcome::Timeout), as a blocking operation
//!   that reports a timeout does (the budget's timeout cost, the breaker's failure); its event
//!   has no error, and a call that stops after it ends in [`RetryError::TimedOut`]. The error
//!   type needs no `From<TimedOut>`;
//! - **the concurrency limit** ([`AsyncRetrier::with_concurrency_limit`]) bounds the attempts
//!   in flight across all calls of the retrier with a fair semaphore: a slot is taken before
//!   each attempt and given back when its outcome is known, never held during a sleep (the
//!   simulator's `client.concurrency`). The deadline counts from the first attempt's send,
//!   so a wait for the first slot does not eat into it; a retry waits for its slot at most
//!   until the deadline, where the call stops ([`StopReason::Deadline`](crate::policy::StopReason::Deadline))
//!   and the retry's budget token goes back;
//! - **cancellation**: the cancel signal (any future, [`AsyncCall::cancel_on`]; a
//!   [`CancelToken`] for [`AsyncRetrier::retry`]) ends the call at once: a sleep, a wait
//!   for a slot, or an attempt in flight, whose future is dropped
//!   ([`AsyncCall::let_attempt_finish`] lets it run to its outcome instead); a retry the
//!   call will not make is not announced and costs no budget token.
//!   Dropping the future is always safe and cancels at once: the slot is given back, a
//!   half-open breaker's probe in flight is given back, and the budget was only ever charged
//!   for what already happened.
//!
//! A policy with [`hedging`](crate::policy::RetryPolicy::hedging) (set by
//! [`RetrierBuilder::hedging`]) makes every call a hedged one instead: copies of the operation
//! as concurrent futures, the first success winning, the others dropped, by the rules of
//! [`HedgingPolicy`](crate::policy::HedgingPolicy), which are the simulator's. Each copy shows
//! in the events ([`AttemptEvent::copy`](super::AttemptEvent::copy)): sent, then answered or
//! cancelled; a copy the budget or the breaker refuses is an event with no outcome. Hedging needs a fixed delay and no concurrency limit.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use super::call::{Call, Failure, Next};
use super::timer::Timer;
use super::{
    AttemptCtx, AttemptEvent, ByClassify, CancelToken, Classifier, Classify, Retrier,
    RetrierBuilder, RetryError, RetryIf, TimedOut,
};
use crate::error::Result;
use crate::param::ParamError;
use crate::policy::{HedgeDelay, Idempotency, RetryPolicy};
use hedged::Hedged;
use slots::{Slot, Slots};

mod hedged;
mod slots;

/// The struct, once with the `tokio` feature's default timer and once without a default: a
/// default that changed with a feature would break code written without it.
macro_rules! async_retrier {
    ($($default:tt)*) => {
        /// A [`Retrier`] for async operations, waiting on the timer `T`. Share one across tasks
        /// (`Arc<AsyncRetrier>`) to share its budget, breaker and concurrency limit.
        ///
        /// With the `tokio` feature `T` defaults to [`TokioTimer`](super::timer::TokioTimer)
        /// and [`RetrierBuilder::build_async`](super::RetrierBuilder::build_async) makes one;
        /// on any timer, [`AsyncRetrier::with_timer`].
        #[derive(Debug)]
        pub struct AsyncRetrier<T $($default)*> {
            retrier: Retrier,
            limit: Option<Limit>,
            /// The clock and the sleeps: time zero for the breaker, the budget and the
            /// deadlines is the timer's origin.
            timer: T,
            /// The wall time at the timer's origin.
            epoch: SystemTime,
        }
    };
}

#[cfg(feature = "tokio")]
async_retrier!(= super::timer::TokioTimer);
#[cfg(not(feature = "tokio"))]
async_retrier!();

impl RetrierBuilder {
    /// The retrier for async code on `timer` (any runtime's, see [`Timer`]), or the first
    /// setting not allowed. With the `tokio` feature,
    /// [`build_async`](RetrierBuilder::build_async) is this on tokio's timer.
    /// A [`hedging`](RetrierBuilder::hedging) policy needs a fixed delay (the error names
    /// `hedging.delay`).
    pub fn build_async_on<T: Timer>(&self, timer: T) -> Result<AsyncRetrier<T>> {
        if let Some(HedgeDelay::Percentile(p)) = self.policy()?.hedging.map(|h| h.delay) {
            return Err(ParamError::new(
                "hedging.delay",
                format!("p{p}"),
                "a fixed duration: a percentile delay is the simulator's alone",
            )
            .into());
        }
        self.build_for_async()
            .map(|retrier| AsyncRetrier::with_timer(retrier, timer))
    }
}

/// The concurrency limit: a fair semaphore of `size` permits.
#[derive(Debug)]
struct Limit {
    slots: Slots,
    size: u32,
}

impl<T: Timer> AsyncRetrier<T> {
    /// Runs `retrier`'s policy, budget and breaker for async operations, sleeping and telling
    /// time with `timer` (another runtime's, or a
    /// [`ThreadTimer`](super::timer::ThreadTimer) where there is none), with no concurrency
    /// limit. Its time starts at the timer's origin.
    pub fn with_timer(retrier: Retrier, timer: T) -> AsyncRetrier<T> {
        let epoch = SystemTime::now();
        let epoch = epoch.checked_sub(timer.now()).unwrap_or(epoch);
        AsyncRetrier {
            retrier,
            limit: None,
            timer,
            epoch,
        }
    }

    /// At most `limit` attempts in flight at once across all calls (at least 1); the others
    /// wait their turn, first come first served. The error names `concurrency` (also for a
    /// hedging retrier: each copy would need a slot of its own).
    pub fn with_concurrency_limit(mut self, limit: u32) -> Result<AsyncRetrier<T>> {
        if limit == 0 {
            return Err(ParamError::new("concurrency", limit, "an integer of at least 1").into());
        }
        if self.policy().hedging.is_some() {
            return Err(ParamError::new(
                "concurrency",
                limit,
                "no limit with a hedging policy: each copy would need a slot of its own",
            )
            .into());
        }
        self.limit = Some(Limit {
            slots: Slots::new(limit as usize),
            size: limit,
        });
        Ok(self)
    }

    /// The blocking retrier inside: its policy, budget and breaker.
    pub fn retrier(&self) -> &Retrier {
        &self.retrier
    }

    /// The policy.
    pub fn policy(&self) -> &RetryPolicy {
        self.retrier.policy()
    }

    /// The counts so far, the budget's tokens and the breaker's state now, on the timer.
    pub fn metrics(&self) -> super::Metrics {
        self.retrier.metrics(self.timer.now())
    }

    /// The timer the retrier sleeps and tells time with.
    pub fn timer(&self) -> &T {
        &self.timer
    }

    /// The concurrency limit, if any.
    pub fn concurrency_limit(&self) -> Option<u32> {
        self.limit.as_ref().map(|l| l.size)
    }

    /// Attempts holding a concurrency slot now (`None`: no limit).
    pub fn in_flight(&self) -> Option<u32> {
        let limit = self.limit.as_ref()?;
        let free = u32::try_from(limit.slots.free()).unwrap_or(limit.size);
        Some(limit.size.saturating_sub(free))
    }

    /// The wall time `Retry-After` dates are read against: the wall time at the timer's
    /// origin plus the timer's time since (so it moves with tokio's paused time too).
    pub fn wall(&self) -> SystemTime {
        self.wall_at(self.timer.now())
    }

    fn wall_at(&self, now: Duration) -> SystemTime {
        self.epoch.checked_add(now).unwrap_or(self.epoch)
    }

    /// A call of `op` under this retrier: `.await` it, or first set what this call alone
    /// needs ([`AsyncCall::cancel_on`], [`AsyncCall::on_attempt`],
    /// [`AsyncCall::idempotency`], [`AsyncCall::retry_if`]).
    ///
    /// `op` is a closure returning a future of `Result<V, E>`. Any `E` works with
    /// [`AsyncCall::retry_if`] (a closure that says whether an error is worth retrying);
    /// without it, `E` says how the attempt ended itself ([`Classify`]: implemented for
    /// [`Outcome`](crate::policy::Outcome), `std::io::Error`, `Box<dyn Error + Send + Sync>`
    /// and, with the `http` feature, [`crate::http::Error`]).
    pub fn call<V, E, F, Fut>(&self, op: F) -> AsyncCall<'_, T, F, NoObserver<E>, NoCancel>
    where
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = std::result::Result<V, E>>,
    {
        AsyncCall {
            retrier: self,
            op,
            on_attempt: |_| {},
            cancel: std::future::pending(),
            idempotency: None,
            finish: false,
            classifier: ByClassify,
        }
    }

    /// Runs `op` until it succeeds or the policy gives up, as [`Retrier::retry`] does: the
    /// same checks before each attempt, the same decision after it, the same events for
    /// `on_attempt`. Each attempt is cut off at [`AttemptCtx::timeout`]; sleeps, slot waits
    /// and `cancel` are described in the [module docs](self). [`AsyncRetrier::call`] is the
    /// same with any future as the cancel signal.
    pub async fn retry<V, E, F, Fut, O>(
        &self,
        cancel: &CancelToken,
        op: F,
        on_attempt: O,
    ) -> std::result::Result<V, RetryError<E>>
    where
        E: Classify,
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = std::result::Result<V, E>>,
        O: FnMut(&AttemptEvent<'_, E>),
    {
        self.call(op)
            .cancel_on(cancel.cancelled())
            .on_attempt(on_attempt)
            .await
    }
}

/// The observer of a call that has none.
pub type NoObserver<E> = fn(&AttemptEvent<'_, E>);

/// The cancel signal of a call that has none: it never fires.
pub type NoCancel = std::future::Pending<()>;

/// One call of an [`AsyncRetrier`], made by [`AsyncRetrier::call`]: set its own options,
/// then `.await` it for the operation's value or the [`RetryError`] that ended it.
///
/// ```
/// # #[cfg(not(feature = "tokio"))] fn main() {}
/// # #[cfg(feature = "tokio")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use std::time::Duration;
/// # use jitterlab_retry::prelude::*;
/// # let runtime = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build()?;
/// # runtime.block_on(async {
/// let retrier = Retrier::builder().seed(1).build_async()?;
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let mut log = Vec::new();
/// let answer = retrier
///     .call(|ctx| async move { if ctx.attempt < 3 { Err(Outcome::Status(503)) } else { Ok(ctx.attempt) } })
///     .idempotency(Idempotency::WithKey)
///     .cancel_on(async { let _ = stopped.await; })
///     .on_attempt(|event| log.push(event.to_string()))
///     .await;
/// assert_eq!(answer.ok(), Some(3));
/// assert_eq!(log.len(), 3);
/// drop(stop);
/// # Ok::<(), jitterlab_retry::Error>(())
/// # })?;
/// # Ok(())
/// # }
/// ```
#[must_use = "a call does nothing until it is awaited"]
pub struct AsyncCall<'r, T, F, O, C, K = ByClassify> {
    retrier: &'r AsyncRetrier<T>,
    op: F,
    on_attempt: O,
    cancel: C,
    idempotency: Option<Idempotency>,
    finish: bool,
    classifier: K,
}

impl<'r, T: Timer, F, O, C, K> AsyncCall<'r, T, F, O, C, K> {
    /// Whether this call's request may be repeated, whatever the retrier's default (a
    /// non-idempotent request is never retried).
    pub fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = Some(idempotency);
        self
    }

    /// Cancels the call when `signal` completes: any future (a `CancelToken::cancelled()`,
    /// tokio-util's `CancellationToken::cancelled_owned()`, a `oneshot` receiver, a timer). It
    /// ends the call at once, whatever it is doing: a sleep, a wait for a slot, or an attempt
    /// in flight, whose future is dropped (as dropping the call's future would; its event
    /// says `dropped`, and the call returns [`RetryError::Cancelled`]).
    /// [`let_attempt_finish`](Self::let_attempt_finish) lets an attempt in flight run to its
    /// outcome or its timeout instead.
    pub fn cancel_on<S: Future>(self, signal: S) -> AsyncCall<'r, T, F, O, S, K> {
        AsyncCall {
            retrier: self.retrier,
            op: self.op,
            on_attempt: self.on_attempt,
            cancel: signal,
            idempotency: self.idempotency,
            finish: self.finish,
            classifier: self.classifier,
        }
    }

    /// Says with a closure whether an error is worth retrying, for any error type (`String`,
    /// `anyhow::Error`, another crate's error; no [`Classify`] needed): `true` retries it
    /// (the breaker and the budget count a failure), `false` ends the call at once (they do
    /// not count it). See [`RetryIf`].
    pub fn retry_if<V, E, Fut, P>(self, retryable: P) -> AsyncCall<'r, T, F, O, C, RetryIf<P>>
    where
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = std::result::Result<V, E>>,
        P: Fn(&E) -> bool,
    {
        AsyncCall {
            retrier: self.retrier,
            op: self.op,
            on_attempt: self.on_attempt,
            cancel: self.cancel,
            idempotency: self.idempotency,
            finish: self.finish,
            classifier: RetryIf(retryable),
        }
    }

    /// On a cancel, lets the attempt in flight run to its outcome or its timeout (its result
    /// is then seen and counted) instead of dropping it: for an operation that must not be
    /// cut half-way. The call still sends no further attempt. A hedged call drops its copies
    /// in flight on a cancel whatever this says.
    pub fn let_attempt_finish(mut self) -> Self {
        self.finish = true;
        self
    }

    /// Shows `observer` every attempt's [`AttemptEvent`] (its `Display` is one log line).
    pub fn on_attempt<V, E, Fut, P>(self, observer: P) -> AsyncCall<'r, T, F, P, C, K>
    where
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = std::result::Result<V, E>>,
        P: FnMut(&AttemptEvent<'_, E>),
    {
        AsyncCall {
            retrier: self.retrier,
            op: self.op,
            on_attempt: observer,
            cancel: self.cancel,
            idempotency: self.idempotency,
            finish: self.finish,
            classifier: self.classifier,
        }
    }
}

impl<'r, T, V, E, F, Fut, O, C, K> IntoFuture for AsyncCall<'r, T, F, O, C, K>
where
    T: Timer,
    K: Classifier<E>,
    F: FnMut(AttemptCtx) -> Fut,
    Fut: Future<Output = std::result::Result<V, E>>,
    O: FnMut(&AttemptEvent<'_, E>),
    C: Future,
{
    type Output = std::result::Result<V, RetryError<E>>;
    type IntoFuture = CallFuture<'r, T, E, F, Fut, O, C, K>;

    fn into_future(self) -> Self::IntoFuture {
        let cancel = Signal {
            future: Box::pin(self.cancel),
            fired: false,
        };
        let retrier = self.retrier;
        let run = match retrier.policy().hedging {
            Some(policy) => {
                let idempotency = self.idempotency.unwrap_or(retrier.retrier.idempotency);
                let hedged = Hedged::new(
                    retrier,
                    policy,
                    self.op,
                    self.on_attempt,
                    cancel,
                    idempotency,
                    self.classifier,
                );
                Mode::Hedged(Box::new(hedged))
            }
            None => {
                let mut call = Call::new(&retrier.retrier, self.on_attempt, self.classifier);
                if let Some(idempotency) = self.idempotency {
                    call = call.idempotency(idempotency);
                }
                Mode::Retry(Run {
                    retrier,
                    call,
                    op: self.op,
                    cancel,
                    finish: self.finish,
                    step: Step::Next,
                })
            }
        };
        CallFuture {
            #[cfg(feature = "tracing")]
            span: super::call::call_span(),
            run,
        }
    }
}

/// The future of an [`AsyncCall`]: `Send` when the operation's future, the closures, the
/// cancel signal and the timer's sleeps are.
#[must_use = "a call does nothing until it is awaited"]
pub struct CallFuture<'r, T: Timer, E, F, Fut, O, C, K = ByClassify> {
    /// The `tracing` feature's span of the call, entered at each poll.
    #[cfg(feature = "tracing")]
    span: tracing::Span,
    run: Mode<'r, T, E, F, Fut, O, C, K>,
}

/// A call retried after failures, or hedged (its policy's
/// [`hedging`](crate::policy::RetryPolicy::hedging)).
enum Mode<'r, T: Timer, E, F, Fut, O, C, K> {
    Retry(Run<'r, T, E, F, Fut, O, C, K>),
    Hedged(Box<Hedged<'r, T, E, F, Fut, O, C, K>>),
}

// No field is pinned in place: the futures inside are boxed (`Pin<Box<_>>`).
impl<T: Timer, E, F, Fut, O, C, K> Unpin for CallFuture<'_, T, E, F, Fut, O, C, K> {}

impl<T, V, E, F, Fut, O, C, K> Future for CallFuture<'_, T, E, F, Fut, O, C, K>
where
    T: Timer,
    K: Classifier<E>,
    F: FnMut(AttemptCtx) -> Fut,
    Fut: Future<Output = std::result::Result<V, E>>,
    O: FnMut(&AttemptEvent<'_, E>),
    C: Future,
{
    type Output = std::result::Result<V, RetryError<E>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        #[cfg(feature = "tracing")]
        let _span = this.span.enter();
        match &mut this.run {
            Mode::Retry(run) => run.poll(cx),
            Mode::Hedged(hedged) => hedged.poll(cx),
        }
    }
}

/// The retry loop of one call, as a state machine: `step` says where it stands.
struct Run<'r, T: Timer, E, F, Fut, O, C, K> {
    retrier: &'r AsyncRetrier<T>,
    call: Call<'r, E, O, K>,
    op: F,
    cancel: Signal<C>,
    /// A cancel waits for the attempt in flight ([`AsyncCall::let_attempt_finish`]).
    finish: bool,
    step: Step<'r, T, Fut>,
}

/// Where a call stands.
enum Step<'r, T: Timer, Fut> {
    /// About to send the next attempt (first a rate limiter's token, then a slot, if the
    /// retrier has them).
    Next,
    /// Waiting for the rate limiter's next token (then asking again).
    Token(Pin<Box<T::Sleep>>),
    /// Waiting for a concurrency slot; a retry waits at most until its deadline.
    Slot {
        acquire: slots::Take<'r>,
        deadline: Option<Pin<Box<T::Sleep>>>,
    },
    /// An attempt in flight: its future, its time limit and its sleep, the slot it holds.
    Attempt {
        attempt: Pin<Box<Fut>>,
        limit: Option<(Duration, Pin<Box<T::Sleep>>)>,
        _slot: Option<Slot<'r>>,
    },
    /// The sleep before the next attempt.
    Sleep(Pin<Box<T::Sleep>>),
    /// The call has returned.
    Done,
}

impl<'r, T, V, E, F, Fut, O, C, K> Run<'r, T, E, F, Fut, O, C, K>
where
    T: Timer,
    K: Classifier<E>,
    F: FnMut(AttemptCtx) -> Fut,
    Fut: Future<Output = std::result::Result<V, E>>,
    O: FnMut(&AttemptEvent<'_, E>),
    C: Future,
{
    /// Moves the call along as far as it can go without waiting.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<V, RetryError<E>>> {
        let retrier = self.retrier;
        loop {
            let next = match &mut self.step {
                Step::Next => match (self.call.token_wait(retrier.timer.now()), &retrier.limit) {
                    (Some(wait), _) => Ok(Step::Token(Box::pin(retrier.timer.sleep(wait)))),
                    (None, None) => self.begin(None, cx),
                    (None, Some(limit)) => match limit.slots.try_take() {
                        Some(slot) => self.begin(Some(slot), cx),
                        None => {
                            let left = self.call.time_left(retrier.timer.now());
                            Ok(Step::Slot {
                                acquire: limit.slots.take(),
                                deadline: left.map(|left| Box::pin(retrier.timer.sleep(left))),
                            })
                        }
                    },
                },
                Step::Slot { acquire, deadline } => {
                    if self.cancel.poll(cx) {
                        Err(Err(self.call.cancelled(retrier.timer.now())))
                    } else if let Poll::Ready(slot) = Pin::new(&mut *acquire).poll(cx) {
                        self.begin(Some(slot), cx)
                    } else if deadline
                        .as_mut()
                        .is_some_and(|deadline| deadline.as_mut().poll(cx).is_ready())
                        && let Some(expired) = self.call.expired(retrier.timer.now())
                    {
                        Err(Err(expired))
                    } else {
                        return Poll::Pending;
                    }
                }
                // A cancel drops the attempt in flight, unless the call lets it finish.
                Step::Attempt { .. } if !self.finish && self.cancel.poll(cx) => {
                    self.step = Step::Done;
                    Err(Err(self.call.dropped(retrier.timer.now())))
                }
                Step::Attempt { attempt, limit, .. } => {
                    let result = match attempt.as_mut().poll(cx) {
                        Poll::Ready(result) => result.map_err(Failure::Error),
                        Poll::Pending => {
                            let Some((after, sleep)) = limit else {
                                return Poll::Pending;
                            };
                            if sleep.as_mut().poll(cx).is_pending() {
                                return Poll::Pending;
                            }
                            Err(Failure::TimedOut(TimedOut { after: *after }))
                        }
                    };
                    // The slot goes back as the outcome is known.
                    self.step = Step::Done;
                    self.after(result, cx)
                }
                Step::Sleep(sleep) | Step::Token(sleep) => {
                    if self.cancel.poll(cx) {
                        Err(Err(self.call.cancelled(retrier.timer.now())))
                    } else if sleep.as_mut().poll(cx).is_ready() {
                        Ok(Step::Next)
                    } else {
                        return Poll::Pending;
                    }
                }
                Step::Done => panic!("a retry call polled after it returned"),
            };
            match next {
                Ok(step) => self.step = step,
                Err(end) => {
                    self.step = Step::Done;
                    return Poll::Ready(end);
                }
            }
        }
    }

    /// Sends the next attempt, holding `slot`, unless the call stops before it.
    fn begin(
        &mut self,
        slot: Option<Slot<'r>>,
        cx: &mut Context<'_>,
    ) -> std::result::Result<Step<'r, T, Fut>, std::result::Result<V, RetryError<E>>> {
        let cancelled = self.cancel.poll(cx);
        let ctx = self
            .call
            .begin(self.retrier.timer.now(), cancelled)
            .map_err(Err)?;
        Ok(Step::Attempt {
            attempt: Box::pin((self.op)(ctx)),
            limit: ctx
                .timeout
                .map(|after| (after, Box::pin(self.retrier.timer.sleep(after)))),
            _slot: slot,
        })
    }

    /// After an attempt: the shared decision, then a sleep or the end of the call.
    fn after(
        &mut self,
        result: std::result::Result<V, Failure<E>>,
        cx: &mut Context<'_>,
    ) -> std::result::Result<Step<'r, T, Fut>, std::result::Result<V, RetryError<E>>> {
        let now = self.retrier.timer.now();
        let wall = self.retrier.wall_at(now);
        let cancelled = self.cancel.poll(cx);
        match self.call.after(now, wall, result, cancelled) {
            Next::Return(result) => Err(result),
            Next::Sleep(sleep) => Ok(Step::Sleep(Box::pin(self.retrier.timer.sleep(sleep)))),
        }
    }
}

/// A cancel signal: a future polled until it completes, then remembered as fired.
struct Signal<C> {
    future: Pin<Box<C>>,
    fired: bool,
}

impl<C: Future> Signal<C> {
    /// Polls the signal (it may have completed since the last look); true once it has.
    fn poll(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.fired {
            self.fired = self.future.as_mut().poll(cx).is_ready();
        }
        self.fired
    }
}

#[cfg(all(test, feature = "tokio"))]
mod tests;
