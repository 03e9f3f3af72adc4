//! One call's way through the policy, shared by the blocking and the async executor.
//!
//! Before an attempt, [`Call::begin`] asks the deadline, the cancel token and the breaker; after
//! it, [`Call::after`] tells the breaker, lets [`crate::policy::RetryPolicy::decide`] decide
//! (it keeps the budget's books) and shows the observer the [`AttemptEvent`]. An executor only
//! runs the operation and sleeps, each on its own clock, so the two cannot decide differently.
//!
//! The books are exact: a retry is announced only if it can still happen (the call is not
//! cancelled, and the breaker as it stands would let it through when its sleep ends), and a
//! retry that then never goes out (cancelled during its sleep, refused by a breaker that
//! opened meanwhile, or past the deadline on a clock that overslept) gives its budget token
//! back.

use std::time::{Duration, SystemTime};

use super::{AttemptCtx, AttemptEvent, Classify, Retrier, RetryError, TimedOut, lock};
use crate::backoff::BackoffState;
use crate::policy::{
    AttemptReport, AttemptTimeout, Decision, Idempotency, Outcome, StopReason, parse_retry_after,
};

/// What follows an attempt.
pub(crate) enum Next<T, E> {
    /// The call is over.
    Return(Result<T, RetryError<E>>),
    /// Sleep this long, then [`Call::begin`] the next attempt.
    Sleep(Duration),
}

/// One call's state between attempts. Times are on the executor's clock.
pub(crate) struct Call<'r, E> {
    retrier: &'r Retrier,
    /// When the first attempt was sent: the deadline and the events count from it.
    start: Duration,
    /// When the attempt in flight was sent.
    sent: Duration,
    backoff: BackoffState,
    /// Attempts whose outcome is known.
    made: u32,
    /// The next attempt follows a timed-out one (the token bucket's `timeout_cost`).
    follows_timeout: bool,
    /// The attempt in flight is the half-open breaker's probe.
    probing: bool,
    /// Whether this call's request may be repeated (the retrier's, unless the call says).
    idempotency: Idempotency,
    /// The retry the budget granted and not yet sent: when it was granted, and whether after
    /// a timeout (what [`crate::policy::Budget::refund_retry`] needs to give it back).
    granted: Option<(Duration, bool)>,
    last: Option<Failure<E>>,
}

/// How an attempt failed: its operation's error, or the async executor's cut-off.
pub(crate) enum Failure<E> {
    Error(E),
    #[cfg_attr(not(feature = "async"), allow(dead_code))]
    TimedOut(TimedOut),
}

impl<E> Failure<E> {
    /// The call's error when the policy stops after this failure.
    fn stopped(self, reason: StopReason, attempts: u32) -> RetryError<E> {
        match self {
            Failure::Error(error) => RetryError::Stopped {
                reason,
                error,
                attempts,
            },
            Failure::TimedOut(timed_out) => RetryError::TimedOut {
                reason,
                timed_out,
                attempts,
            },
        }
    }

    fn into_error(self) -> Option<E> {
        match self {
            Failure::Error(e) => Some(e),
            Failure::TimedOut(_) => None,
        }
    }
}

impl<'r, E: Classify> Call<'r, E> {
    /// A call of `retrier` that has made no attempt yet.
    pub(crate) fn new(retrier: &'r Retrier) -> Self {
        Call {
            retrier,
            start: Duration::ZERO,
            sent: Duration::ZERO,
            backoff: BackoffState::new(),
            made: 0,
            follows_timeout: false,
            probing: false,
            idempotency: retrier.idempotency,
            granted: None,
            last: None,
        }
    }

    /// Before the next attempt, sent at `now`: the deadline (a real clock may oversleep what
    /// `decide` allowed), then the cancel token, then the breaker, asked last as the attempt
    /// leaves. `Ok`: send it with this context.
    pub(crate) fn begin(
        &mut self,
        now: Duration,
        cancelled: bool,
    ) -> Result<AttemptCtx, RetryError<E>> {
        if self.made == 0 {
            self.start = now;
            if let Some(budget) = &self.retrier.budget {
                // Brooker's adaptive bucket and retry breaker count a request as it begins.
                lock(budget).on_begin(now);
            }
        }
        // The first attempt is sent at the start, so only a later one can find it expired,
        // and a later one always has the last error.
        let timeout = self.retrier.policy.attempt_timeout(self.start, now);
        if timeout == AttemptTimeout::Expired
            && let Some(expired) = self.expired()
        {
            return Err(expired);
        }
        if cancelled {
            return Err(self.cancelled());
        }
        if let Some(breaker) = &self.retrier.breaker {
            let mut breaker = lock(breaker);
            if !breaker.allow(now) {
                drop(breaker);
                self.refund();
                return Err(RetryError::BreakerOpen {
                    last: self.last.take().and_then(Failure::into_error),
                    attempts: self.made,
                });
            }
            // A half-open breaker lets exactly one attempt through: this one.
            self.probing = breaker.is_probing();
        }
        // The granted retry goes out: its token is spent for good.
        self.granted = None;
        self.sent = now;
        Ok(AttemptCtx {
            attempt: self.made.saturating_add(1),
            timeout: timeout.limit(),
        })
    }

    /// After the attempt begun last, whose result is known at `now` (`wall`: the wall time
    /// then, for an HTTP-date Retry-After). A [`Failure::TimedOut`] counts as
    /// [`Outcome::Timeout`]. `cancelled`: the call's cancel signal, as it is now.
    pub(crate) fn after<T, O>(
        &mut self,
        now: Duration,
        wall: SystemTime,
        result: Result<T, Failure<E>>,
        cancelled: bool,
        on_attempt: &mut O,
    ) -> Next<T, E>
    where
        O: FnMut(&AttemptEvent<'_, E>),
    {
        let (outcome, retry_after) = match &result {
            Ok(_) => (Outcome::Success, None),
            Err(Failure::TimedOut(_)) => (Outcome::Timeout, None),
            Err(Failure::Error(e)) => (
                e.outcome(),
                e.retry_after().and_then(|v| parse_retry_after(v, wall)),
            ),
        };
        self.made = self.made.saturating_add(1);
        self.probing = false;
        let retrier = self.retrier;
        if let Some(breaker) = &retrier.breaker {
            let mut breaker = lock(breaker);
            if outcome.concerns_the_server() {
                breaker.record(now, !outcome.is_server_failure());
            } else {
                // Nothing learnt: a half-open breaker lets the next attempt probe instead.
                breaker.abandon_probe();
            }
        }
        let report = AttemptReport {
            attempt: self.made,
            start: self.start,
            now,
            outcome,
            retry_after,
            idempotency: self.idempotency,
            follows_timeout: self.follows_timeout,
        };
        let mut decision = {
            let mut rng = lock(&retrier.rng);
            let mut budget = retrier.budget.as_ref().map(lock);
            retrier
                .policy
                .decide(&report, &mut self.backoff, budget.as_deref_mut(), &mut *rng)
        };
        if let Decision::Retry { sleep } = decision {
            self.granted = Some((now, outcome == Outcome::Timeout));
            // A retry that cannot happen is not announced, and its token goes back.
            let refused = if cancelled {
                Some(StopReason::Cancelled)
            } else if retrier
                .breaker
                .as_ref()
                .is_some_and(|b| !lock(b).would_allow(now.saturating_add(sleep)))
            {
                Some(StopReason::BreakerOpen)
            } else {
                None
            };
            if let Some(reason) = refused {
                self.refund();
                decision = Decision::Stop(reason);
            }
        }
        #[cfg(feature = "tracing")]
        trace_attempt(self.made, outcome, now.saturating_sub(self.sent), decision);
        on_attempt(&AttemptEvent {
            attempt: self.made,
            outcome,
            error: match &result {
                Err(Failure::Error(e)) => Some(e),
                _ => None,
            },
            retry_after,
            // Saturating: a clock of the caller's that steps back must not panic here.
            start: self.sent.saturating_sub(self.start),
            end: now.saturating_sub(self.start),
            decision,
        });
        let error = match result {
            Ok(value) => return Next::Return(Ok(value)),
            Err(e) => e,
        };
        let reason = match decision {
            Decision::Retry { sleep } => {
                self.follows_timeout = outcome == Outcome::Timeout;
                self.last = Some(error);
                return Next::Sleep(sleep);
            }
            Decision::Stop(StopReason::Cancelled) => {
                self.last = Some(error);
                return Next::Return(Err(self.cancelled()));
            }
            Decision::Stop(StopReason::BreakerOpen) => {
                return Next::Return(Err(RetryError::BreakerOpen {
                    last: error.into_error(),
                    attempts: self.made,
                }));
            }
            Decision::Stop(reason) => reason,
            // An error that classifies itself as a success: nothing to retry.
            Decision::Done => StopReason::NotRetryable,
        };
        Next::Return(Err(error.stopped(reason, self.made)))
    }

    /// How long the next attempt may wait, from `now`, for a concurrency slot: the time left
    /// before the deadline (`None`: no deadline, or no attempt sent yet, since the deadline
    /// counts from the first send).
    pub(crate) fn time_left(&self, now: Duration) -> Option<Duration> {
        if self.made == 0 {
            return None;
        }
        let deadline = self.retrier.policy.deadline?;
        Some(self.start.saturating_add(deadline).saturating_sub(now))
    }

    /// The call reached its deadline before its next attempt was sent: the retry granted goes
    /// back to the budget. `None` before the first attempt, which has no deadline yet.
    pub(crate) fn expired(&mut self) -> Option<RetryError<E>> {
        let last = self.last.take()?;
        self.refund();
        Some(last.stopped(StopReason::Deadline, self.made))
    }

    /// This call's request is `idempotency`, whatever the retrier's default.
    pub(crate) fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = idempotency;
        self
    }

    /// The call was cancelled before an attempt or during a sleep.
    pub(crate) fn cancelled(&mut self) -> RetryError<E> {
        self.refund();
        RetryError::Cancelled {
            last: self.last.take().and_then(Failure::into_error),
            attempts: self.made,
        }
    }
}

/// The `tracing` feature's event for one attempt, inside the call's span.
#[cfg(feature = "tracing")]
fn trace_attempt(attempt: u32, outcome: Outcome, took: Duration, decision: Decision) {
    let (sleep, stop) = match decision {
        Decision::Retry { sleep } => (Some(sleep), None),
        Decision::Stop(reason) => (None, Some(reason.name())),
        Decision::Done => (None, None),
    };
    tracing::debug!(
        attempt,
        outcome = %outcome,
        took = ?took,
        sleep = ?sleep,
        stop = stop,
        "retry attempt"
    );
}

/// The `tracing` feature's span of one call.
#[cfg(feature = "tracing")]
pub(crate) fn call_span() -> tracing::Span {
    tracing::debug_span!("retry call")
}

impl<E> Call<'_, E> {
    /// Gives the budget back the retry it granted, if that retry was not sent.
    fn refund(&mut self) {
        if let Some((at, after_timeout)) = self.granted.take()
            && let Some(budget) = &self.retrier.budget
        {
            lock(budget).refund_retry(at, after_timeout);
        }
    }
}

impl<E> Drop for Call<'_, E> {
    /// A call dropped with the breaker's probe in flight (an async call's future dropped, an
    /// operation that panicked) gives the probe back, or the half-open breaker would wait
    /// for its result forever.
    fn drop(&mut self) {
        // A future dropped during its sleep: the retry will never be sent.
        self.refund();
        if self.probing
            && let Some(breaker) = &self.retrier.breaker
        {
            lock(breaker).abandon_probe();
        }
    }
}
