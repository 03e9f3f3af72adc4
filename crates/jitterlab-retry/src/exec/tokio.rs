//! The async executor on tokio (the `tokio` feature): [`AsyncRetrier`] runs an `async`
//! operation under the same [`Retrier`] (built by the same [`RetrierBuilder`]) as the blocking
//! executor, and decides after each attempt with the same code.
//!
//! What differs is only how it waits, on tokio's clock, so a test under
//! `tokio::time::pause` (`#[tokio::test(start_paused = true)]`) runs hours of backoff in
//! milliseconds:
//!
//! - **sleeps** are `tokio::time::sleep`; the deadline, the breaker and the budget see
//!   `tokio::time::Instant` time since the retrier was made, and an HTTP-date `Retry-After`
//!   is read against the wall time then plus tokio time since ([`AsyncRetrier::wall`]);
//! - **the attempt timeout** (`min(timeout, time left before the deadline)`, also passed in
//!   [`AttemptCtx`]) is enforced with `tokio::time::timeout`: a cut-off attempt counts as
//!   [`Outcome::Timeout`](crate::policy::Outcome::Timeout), as a blocking operation that
//!   reports a timeout does (the budget's timeout cost, the breaker's failure); its event has
//!   no error, and a call that stops after it ends in [`RetryError::TimedOut`]. The error
//!   type needs no `From<TimedOut>`;
//! - **the concurrency limit** ([`AsyncRetrier::with_concurrency_limit`]) bounds the attempts
//!   in flight across all calls of the retrier with a fair semaphore: a slot is taken before
//!   each attempt and given back when its outcome is known, never held during a sleep (the
//!   simulator's `client.concurrency`). The deadline counts from the first attempt's send,
//!   so a wait for the first slot does not eat into it;
//! - **cancellation**: the cancel signal (any future, [`AsyncCall::cancel_on`]; a
//!   [`CancelToken`] for [`AsyncRetrier::retry`]) is checked before each attempt and ends a
//!   sleep or a wait for a slot at once (an attempt in flight runs to its outcome or its
//!   timeout); a retry the call will not make is not announced and costs no budget token.
//!   Dropping the future is always safe and cancels at once: the slot is given back, a
//!   half-open breaker's probe in flight is given back, and the budget was only ever charged
//!   for what already happened.
//!
//! The retrier brings no runtime: call it from any tokio runtime with the time driver on.
//!
//! ```
//! use std::time::Duration;
//! use jitterlab_retry::prelude::*;
//!
//! /// What a real client's error might look like: no `From<TimedOut>` needed.
//! #[derive(Debug)]
//! struct Status {
//!     code: u16,
//!     retry_after: Option<String>,
//! }
//! impl Classify for Status {
//!     fn outcome(&self) -> Outcome {
//!         Outcome::from_status(self.code)
//!     }
//!     fn retry_after(&self) -> Option<&str> {
//!         self.retry_after.as_deref()
//!     }
//! }
//!
//! // Paused time: sleeps advance tokio's clock at once.
//! let runtime = tokio::runtime::Builder::new_current_thread()
//!     .enable_time()
//!     .start_paused(true)
//!     .build()?;
//! runtime.block_on(async {
//!     let retrier = Retrier::builder().seed(42).build_async()?;
//!     let began = tokio::time::Instant::now();
//!     let mut log = Vec::new();
//!     let body = retrier
//!         .call(|ctx| async move {
//!             match ctx.attempt {
//!                 1 | 2 => Err(Status { code: 429, retry_after: Some("2".into()) }),
//!                 _ => Ok("hello"),
//!             }
//!         })
//!         .on_attempt(|event| log.push(event.to_string()))
//!         .await;
//!     assert_eq!(body.ok(), Some("hello"));
//!     assert_eq!(log[0], "attempt 1: 429 after 0ns, retry in 2s");
//!     // Twice the 2 s the server asked for, in no real time.
//!     assert_eq!(began.elapsed(), Duration::from_secs(4));
//!     Ok::<(), jitterlab_retry::Error>(())
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::future::{Future, IntoFuture, Pending, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::{Duration, SystemTime};

use ::tokio::sync::Semaphore;

use super::call::{Call, Failure, Next};
pub use super::timer::{ThreadTimer, Timer, TokioTimer};
use super::{AttemptCtx, AttemptEvent, CancelToken, Classify, Retrier, RetrierBuilder, RetryError};
use crate::error::Result;
use crate::param::ParamError;
use crate::policy::{Idempotency, RetryPolicy};

pub use super::TimedOut;

/// A [`Retrier`] for async operations on tokio. Share one across tasks (`Arc<AsyncRetrier>`)
/// to share its budget, breaker and concurrency limit.
#[derive(Debug)]
pub struct AsyncRetrier<T: Timer = TokioTimer> {
    retrier: Retrier,
    limit: Option<Limit>,
    /// Tokio time zero for the breaker, the budget and the deadlines.
    /// The clock and the sleeps.
    timer: T,
    /// The wall time at the timer's origin.
    epoch: SystemTime,
}

/// The concurrency limit: a fair semaphore of `size` permits.
#[derive(Debug)]
struct Limit {
    slots: Semaphore,
    size: u32,
}

impl From<Retrier> for AsyncRetrier {
    fn from(retrier: Retrier) -> Self {
        AsyncRetrier::new(retrier)
    }
}

impl RetrierBuilder {
    /// The retrier for async code ([`AsyncRetrier`]), or the first setting not allowed.
    pub fn build_async(&self) -> Result<AsyncRetrier> {
        self.build().map(AsyncRetrier::new)
    }
}

impl AsyncRetrier<TokioTimer> {
    /// Runs `retrier`'s policy, budget and breaker for async operations, with no concurrency
    /// limit. Its time starts now (tokio's clock, paused or not).
    pub fn new(retrier: Retrier) -> AsyncRetrier {
        AsyncRetrier {
            retrier,
            limit: None,
            timer: TokioTimer::new(),
            epoch: SystemTime::now(),
        }
    }
}

impl<T: Timer> AsyncRetrier<T> {
    /// As [`AsyncRetrier::new`], sleeping and telling time with `timer`: another runtime's
    /// timer, or a [`ThreadTimer`] where there is none (see [`super::timer`]).
    pub fn with_timer(retrier: Retrier, timer: T) -> AsyncRetrier<T> {
        AsyncRetrier {
            retrier,
            limit: None,
            timer,
            epoch: SystemTime::now(),
        }
    }

    /// At most `limit` attempts in flight at once across all calls (at least 1); the others
    /// wait their turn, first come first served. The error names `concurrency`.
    pub fn with_concurrency_limit(mut self, limit: u32) -> Result<AsyncRetrier<T>> {
        if limit == 0 {
            return Err(ParamError::new("concurrency", limit, "an integer of at least 1").into());
        }
        self.limit = Some(Limit {
            slots: Semaphore::new(limit as usize),
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

    /// The concurrency limit, if any.
    pub fn concurrency_limit(&self) -> Option<u32> {
        self.limit.as_ref().map(|l| l.size)
    }

    /// Attempts holding a concurrency slot now (`None`: no limit).
    pub fn in_flight(&self) -> Option<u32> {
        let limit = self.limit.as_ref()?;
        let free = u32::try_from(limit.slots.available_permits()).unwrap_or(limit.size);
        Some(limit.size.saturating_sub(free))
    }

    /// The wall time `Retry-After` dates are read against: the wall time when the retrier was
    /// made plus tokio time since (so it moves with paused time too).
    pub fn wall(&self) -> SystemTime {
        self.wall_at(self.now())
    }

    /// Tokio time since the retrier was made.
    fn now(&self) -> Duration {
        self.timer.now()
    }

    fn wall_at(&self, now: Duration) -> SystemTime {
        self.epoch.checked_add(now).unwrap_or(self.epoch)
    }

    /// A call of `op` under this retrier: `.await` it, or first set what this call alone
    /// needs ([`AsyncCall::cancel_on`], [`AsyncCall::on_attempt`],
    /// [`AsyncCall::idempotency`]).
    ///
    /// `op` is a closure returning a future of `Result<T, E>`, where `E` says how the attempt
    /// ended ([`Classify`]: implemented for [`Outcome`](crate::policy::Outcome), `std::io::Error`, `Box<dyn Error +
    /// Send + Sync>` and, with the `http` feature, [`crate::http::Error`]).
    pub fn call<V, E, F, Fut>(&self, op: F) -> AsyncCall<'_, T, F, NoObserver<E>, Pending<()>>
    where
        E: Classify,
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = Result<V, E>>,
    {
        AsyncCall {
            retrier: self,
            op,
            on_attempt: |_| {},
            cancel: std::future::pending(),
            idempotency: None,
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
    ) -> Result<V, RetryError<E>>
    where
        E: Classify,
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = Result<V, E>>,
        O: FnMut(&AttemptEvent<'_, E>),
    {
        let run = self.run(Call::new(&self.retrier), op, on_attempt, cancel.cancelled());
        #[cfg(feature = "tracing")]
        let run = tracing::Instrument::instrument(run, super::call::call_span());
        run.await
    }

    /// The retry loop: `call`'s attempts of `op` until the policy says stop or `cancel`
    /// completes.
    async fn run<V, E, F, Fut, O, C>(
        &self,
        mut call: Call<'_, E>,
        mut op: F,
        mut on_attempt: O,
        cancel: C,
    ) -> Result<V, RetryError<E>>
    where
        E: Classify,
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = Result<V, E>>,
        O: FnMut(&AttemptEvent<'_, E>),
        C: Future,
    {
        let mut cancel = Signal::new(cancel);
        loop {
            let slot = match &self.limit {
                None => None,
                Some(limit) => match cancel.unless(limit.slots.acquire()).await {
                    None => return Err(call.cancelled()),
                    // `acquire` fails only on a closed semaphore, and this one is never closed.
                    Some(permit) => permit.ok(),
                },
            };
            let ctx = call.begin(self.now(), cancel.fired().await)?;
            let attempt = op(ctx);
            let result = match ctx.timeout {
                None => attempt.await.map_err(Failure::Error),
                Some(after) => match first(attempt, self.timer.sleep(after)).await {
                    Some(result) => result.map_err(Failure::Error),
                    None => Err(Failure::TimedOut(TimedOut { after })),
                },
            };
            drop(slot);
            let now = self.now();
            let wall = self.wall_at(now);
            let cancelled = cancel.fired().await;
            match call.after(now, wall, result, cancelled, &mut on_attempt) {
                Next::Return(result) => return result,
                Next::Sleep(sleep) => {
                    if cancel.unless(self.timer.sleep(sleep)).await.is_none() {
                        return Err(call.cancelled());
                    }
                }
            }
        }
    }
}

/// The observer of a call that has none.
pub type NoObserver<E> = fn(&AttemptEvent<'_, E>);

/// One call of an [`AsyncRetrier`], made by [`AsyncRetrier::call`]: set its own options,
/// then `.await` it for the operation's value or the [`RetryError`] that ended it.
///
/// ```
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
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use = "a call does nothing until it is awaited"]
pub struct AsyncCall<'r, T: Timer, F, O, C> {
    retrier: &'r AsyncRetrier<T>,
    op: F,
    on_attempt: O,
    cancel: C,
    idempotency: Option<Idempotency>,
}

impl<'r, T: Timer, F, O, C> AsyncCall<'r, T, F, O, C> {
    /// Whether this call's request may be repeated, whatever the retrier's default (a
    /// non-idempotent request is never retried).
    pub fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = Some(idempotency);
        self
    }

    /// Cancels the call when `signal` completes: any future (a `CancelToken::cancelled()`,
    /// tokio-util's `CancellationToken::cancelled_owned()`, a `oneshot` receiver, a timer). It
    /// is checked before each attempt and ends a sleep or a wait for a slot at once; an
    /// attempt in flight runs to its outcome or its timeout.
    pub fn cancel_on<S: Future>(self, signal: S) -> AsyncCall<'r, T, F, O, S> {
        AsyncCall {
            retrier: self.retrier,
            op: self.op,
            on_attempt: self.on_attempt,
            cancel: signal,
            idempotency: self.idempotency,
        }
    }

    /// Shows `observer` every attempt's [`AttemptEvent`] (its `Display` is one log line).
    pub fn on_attempt<V, E, Fut, P>(self, observer: P) -> AsyncCall<'r, T, F, P, C>
    where
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = Result<V, E>>,
        P: FnMut(&AttemptEvent<'_, E>),
    {
        AsyncCall {
            retrier: self.retrier,
            op: self.op,
            on_attempt: observer,
            cancel: self.cancel,
            idempotency: self.idempotency,
        }
    }
}

impl<'r, Tm, V, E, F, Fut, O, C> IntoFuture for AsyncCall<'r, Tm, F, O, C>
where
    Tm: Timer,
    Tm::Sleep: 'r,
    V: Send + 'r,
    E: Classify + Send + 'r,
    F: FnMut(AttemptCtx) -> Fut + Send + 'r,
    Fut: Future<Output = Result<V, E>> + Send + 'r,
    O: FnMut(&AttemptEvent<'_, E>) + Send + 'r,
    C: Future + Send + 'r,
{
    type Output = Result<V, RetryError<E>>;
    /// Boxed, so that a call can be stored, spawned and returned by name.
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send + 'r>>;

    fn into_future(self) -> Self::IntoFuture {
        let mut call = Call::new(&self.retrier.retrier);
        if let Some(idempotency) = self.idempotency {
            call = call.idempotency(idempotency);
        }
        let run = self
            .retrier
            .run(call, self.op, self.on_attempt, self.cancel);
        #[cfg(feature = "tracing")]
        let run = tracing::Instrument::instrument(run, super::call::call_span());
        Box::pin(run)
    }
}

/// `fut`'s output, or `None` (and `fut` dropped) if `limit` completes first: a timeout on any
/// runtime's timer.
async fn first<F: Future, L: Future>(fut: F, limit: L) -> Option<F::Output> {
    let (mut fut, mut limit) = (pin!(fut), pin!(limit));
    poll_fn(|cx| {
        if let Poll::Ready(out) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        limit.as_mut().poll(cx).map(|_| None)
    })
    .await
}

/// A cancel signal: a future polled until it completes, then remembered as fired.
struct Signal<C> {
    future: Pin<Box<C>>,
    fired: bool,
}

impl<C: Future> Signal<C> {
    fn new(future: C) -> Self {
        Signal {
            future: Box::pin(future),
            fired: false,
        }
    }

    /// Polls the signal once (it may have completed since the last look).
    async fn fired(&mut self) -> bool {
        poll_fn(|cx| Poll::Ready(self.poll(cx))).await
    }

    fn poll(&mut self, cx: &mut std::task::Context<'_>) -> bool {
        if !self.fired {
            self.fired = self.future.as_mut().poll(cx).is_ready();
        }
        self.fired
    }

    /// `fut`'s output, or `None` (and `fut` dropped) if the signal fires first.
    async fn unless<F: Future>(&mut self, fut: F) -> Option<F::Output> {
        let mut fut = pin!(fut);
        poll_fn(|cx| {
            if self.poll(cx) {
                return Poll::Ready(None);
            }
            fut.as_mut().poll(cx).map(Some)
        })
        .await
    }
}

#[cfg(test)]
mod tests;
