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
//!   [`AttemptCtx`]) is enforced with `tokio::time::timeout`: a cut-off attempt's error is
//!   `E::from(`[`TimedOut`]`)` and it counts as [`Outcome::Timeout`], as a blocking operation
//!   that reports a timeout does (the budget's timeout cost, the breaker's failure);
//! - **the concurrency limit** ([`AsyncRetrier::with_concurrency_limit`]) bounds the attempts
//!   in flight across all calls of the retrier with a fair semaphore: a slot is taken before
//!   each attempt and given back when its outcome is known, never held during a sleep (the
//!   simulator's `client.concurrency`). The deadline counts from the first attempt's send,
//!   so a wait for the first slot does not eat into it;
//! - **cancellation**: the [`CancelToken`] is checked before each attempt and ends a sleep or
//!   a wait for a slot at once (an attempt in flight runs to its outcome or its timeout).
//!   Dropping the future is always safe and cancels at once: the slot is given back, a
//!   half-open breaker's probe in flight is given back, and the budget was only ever charged
//!   for what already happened.
//!
//! The retrier brings no runtime: call it from any tokio runtime with the time driver on.
//!
//! ```
//! use std::time::Duration;
//! use jitterlab_retry::exec::tokio::TimedOut;
//! use jitterlab_retry::prelude::*;
//!
//! /// What a real client's error might look like.
//! #[derive(Debug)]
//! enum HttpError {
//!     Status { code: u16, retry_after: Option<String> },
//!     Timeout,
//! }
//! impl Classify for HttpError {
//!     fn outcome(&self) -> Outcome {
//!         match self {
//!             HttpError::Status { code, .. } => Outcome::from_status(*code),
//!             HttpError::Timeout => Outcome::Timeout,
//!         }
//!     }
//!     fn retry_after(&self) -> Option<&str> {
//!         match self {
//!             HttpError::Status { retry_after, .. } => retry_after.as_deref(),
//!             HttpError::Timeout => None,
//!         }
//!     }
//! }
//! // What the executor gives an attempt it cut off at its timeout.
//! impl From<TimedOut> for HttpError {
//!     fn from(_: TimedOut) -> Self {
//!         HttpError::Timeout
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
//!         .retry(
//!             &CancelToken::new(),
//!             |ctx| async move {
//!                 match ctx.attempt {
//!                     1 | 2 => Err(HttpError::Status { code: 429, retry_after: Some("2".into()) }),
//!                     _ => Ok("hello"),
//!                 }
//!             },
//!             |event| log.push(event.to_string()),
//!         )
//!         .await;
//!     assert_eq!(body.ok(), Some("hello"));
//!     assert_eq!(log[0], "attempt 1: 429 after 0ns, retry in 2s");
//!     // Twice the 2 s the server asked for, in no real time.
//!     assert_eq!(began.elapsed(), Duration::from_secs(4));
//!     Ok::<(), jitterlab_retry::Error>(())
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, SystemTime};

use ::tokio::sync::Semaphore;
use ::tokio::time::Instant;

use super::call::{Call, Next};
use super::{AttemptCtx, AttemptEvent, CancelToken, Classify, Retrier, RetrierBuilder, RetryError};
use crate::error::Result;
use crate::param::ParamError;
use crate::policy::{Outcome, RetryPolicy};
use crate::time::Human;

/// The error of an attempt the async executor cut off at its timeout: the operation's error
/// type says `From<TimedOut>`, and the attempt counts as [`Outcome::Timeout`] whatever that
/// error classifies as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut {
    /// The attempt's time limit, which it reached.
    pub after: Duration,
}

impl fmt::Display for TimedOut {
    /// `attempt timed out after 1s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attempt timed out after {}", Human(self.after))
    }
}

impl std::error::Error for TimedOut {}

impl From<TimedOut> for Outcome {
    /// [`Outcome::Timeout`], so a bare `Outcome` can be an async operation's error.
    fn from(_: TimedOut) -> Outcome {
        Outcome::Timeout
    }
}

/// A [`Retrier`] for async operations on tokio. Share one across tasks (`Arc<AsyncRetrier>`)
/// to share its budget, breaker and concurrency limit.
#[derive(Debug)]
pub struct AsyncRetrier {
    retrier: Retrier,
    limit: Option<Limit>,
    /// Tokio time zero for the breaker, the budget and the deadlines.
    origin: Instant,
    /// The wall time at `origin`.
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

impl AsyncRetrier {
    /// Runs `retrier`'s policy, budget and breaker for async operations, with no concurrency
    /// limit. Its time starts now (tokio's clock, paused or not).
    pub fn new(retrier: Retrier) -> AsyncRetrier {
        AsyncRetrier {
            retrier,
            limit: None,
            origin: Instant::now(),
            epoch: SystemTime::now(),
        }
    }

    /// At most `limit` attempts in flight at once across all calls (at least 1); the others
    /// wait their turn, first come first served. The error names `concurrency`.
    pub fn with_concurrency_limit(mut self, limit: u32) -> Result<AsyncRetrier> {
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
        Instant::now().saturating_duration_since(self.origin)
    }

    fn wall_at(&self, now: Duration) -> SystemTime {
        self.epoch.checked_add(now).unwrap_or(self.epoch)
    }

    /// Runs `op` until it succeeds or the policy gives up, without cancellation or
    /// per-attempt reports: [`AsyncRetrier::retry`] has those.
    pub async fn call<T, E, F, Fut>(&self, op: F) -> Result<T, RetryError<E>>
    where
        E: Classify + From<TimedOut>,
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.retry(&CancelToken::new(), op, |_| {}).await
    }

    /// Runs `op` until it succeeds or the policy gives up, as [`Retrier::retry`] does: the
    /// same checks before each attempt, the same decision after it, the same events for
    /// `on_attempt`. Each attempt is cut off at [`AttemptCtx::timeout`]; sleeps, slot waits
    /// and `cancel` are described in the [module docs](self).
    pub async fn retry<T, E, F, Fut, O>(
        &self,
        cancel: &CancelToken,
        mut op: F,
        mut on_attempt: O,
    ) -> Result<T, RetryError<E>>
    where
        E: Classify + From<TimedOut>,
        F: FnMut(AttemptCtx) -> Fut,
        Fut: Future<Output = Result<T, E>>,
        O: FnMut(&AttemptEvent<'_, E>),
    {
        let mut call = Call::new(&self.retrier);
        loop {
            let slot = match &self.limit {
                None => None,
                Some(limit) => match until_cancelled(cancel, limit.slots.acquire()).await {
                    None => return Err(call.cancelled()),
                    // `acquire` fails only on a closed semaphore, and this one is never closed.
                    Some(permit) => permit.ok(),
                },
            };
            let ctx = call.begin(self.now(), cancel.is_cancelled())?;
            let attempt = op(ctx);
            let (result, timed_out) = match ctx.timeout {
                None => (attempt.await, false),
                Some(after) => match ::tokio::time::timeout(after, attempt).await {
                    Ok(result) => (result, false),
                    Err(_) => (Err(E::from(TimedOut { after })), true),
                },
            };
            drop(slot);
            let now = self.now();
            let wall = self.wall_at(now);
            match call.after(
                now,
                wall,
                result,
                timed_out,
                cancel.is_cancelled(),
                &mut on_attempt,
            ) {
                Next::Return(result) => return result,
                Next::Sleep(sleep) => {
                    let slept = ::tokio::time::sleep(sleep);
                    if until_cancelled(cancel, slept).await.is_none() {
                        return Err(call.cancelled());
                    }
                }
            }
        }
    }
}

/// `fut`'s output, or `None` (and `fut` dropped) if `cancel` is cancelled first.
async fn until_cancelled<F: Future>(cancel: &CancelToken, fut: F) -> Option<F::Output> {
    let mut fut = pin!(fut);
    let mut cancelled = pin!(cancel.cancelled());
    poll_fn(|cx| {
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        fut.as_mut().poll(cx).map(Some)
    })
    .await
}

#[cfg(test)]
mod tests;
