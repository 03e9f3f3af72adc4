//! One call's way through the policy, shared by the blocking and the async executor.
//!
//! Before an attempt, [`Call::begin`] asks the deadline, the cancel token and the breaker; after
//! it, [`Call::after`] tells the breaker, lets [`crate::policy::RetryPolicy::decide`] decide
//! (it keeps the budget's books) and shows the observer the [`AttemptEvent`]. An executor only
//! runs the operation and sleeps, each on its own clock, so the two cannot decide differently.

use std::time::{Duration, SystemTime};

use super::{AttemptCtx, AttemptEvent, Classify, Retrier, RetryError, lock};
use crate::backoff::BackoffState;
use crate::policy::{
    AttemptReport, AttemptTimeout, BreakerState, Decision, Outcome, StopReason, parse_retry_after,
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
    last: Option<E>,
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
            && let Some(error) = self.last.take()
        {
            return Err(RetryError::Stopped {
                reason: StopReason::Deadline,
                error,
                attempts: self.made,
            });
        }
        if cancelled {
            return Err(self.cancelled());
        }
        if let Some(breaker) = &self.retrier.breaker {
            let mut breaker = lock(breaker);
            if !breaker.allow(now) {
                return Err(RetryError::BreakerOpen {
                    last: self.last.take(),
                    attempts: self.made,
                });
            }
            // A half-open breaker lets exactly one attempt through: this one.
            self.probing = matches!(breaker.state(), BreakerState::HalfOpen { .. });
        }
        self.sent = now;
        Ok(AttemptCtx {
            attempt: self.made.saturating_add(1),
            timeout: timeout.limit(),
        })
    }

    /// After the attempt begun last, whose result is known at `now` (`wall`: the wall time
    /// then, for an HTTP-date Retry-After). `timed_out`: the executor cut it off at its
    /// timeout, so it counts as [`Outcome::Timeout`] whatever its error says.
    pub(crate) fn after<T, O>(
        &mut self,
        now: Duration,
        wall: SystemTime,
        result: Result<T, E>,
        timed_out: bool,
        on_attempt: &mut O,
    ) -> Next<T, E>
    where
        O: FnMut(&AttemptEvent<'_, E>),
    {
        let (outcome, retry_after) = match &result {
            Ok(_) => (Outcome::Success, None),
            Err(_) if timed_out => (Outcome::Timeout, None),
            Err(e) => (
                e.outcome(),
                e.retry_after().and_then(|v| parse_retry_after(v, wall)),
            ),
        };
        self.made = self.made.saturating_add(1);
        self.probing = false;
        let retrier = self.retrier;
        if let Some(breaker) = &retrier.breaker {
            lock(breaker).record(now, !outcome.is_server_failure());
        }
        let report = AttemptReport {
            attempt: self.made,
            start: self.start,
            now,
            outcome,
            retry_after,
            idempotency: retrier.idempotency,
            follows_timeout: self.follows_timeout,
        };
        let decision = {
            let mut rng = lock(&retrier.rng);
            let mut budget = retrier.budget.as_ref().map(lock);
            retrier
                .policy
                .decide(&report, &mut self.backoff, budget.as_deref_mut(), &mut *rng)
        };
        on_attempt(&AttemptEvent {
            attempt: self.made,
            outcome,
            error: result.as_ref().err(),
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
            Decision::Stop(reason) => reason,
            // An error that classifies itself as a success: nothing to retry.
            Decision::Done => StopReason::NotRetryable,
        };
        Next::Return(Err(RetryError::Stopped {
            reason,
            error,
            attempts: self.made,
        }))
    }

    /// The call was cancelled before an attempt or during a sleep.
    pub(crate) fn cancelled(&mut self) -> RetryError<E> {
        RetryError::Cancelled {
            last: self.last.take(),
            attempts: self.made,
        }
    }
}

impl<E> Drop for Call<'_, E> {
    /// A call dropped with the breaker's probe in flight (an async call's future dropped, an
    /// operation that panicked) gives the probe back, or the half-open breaker would wait
    /// for its result forever.
    fn drop(&mut self) {
        if self.probing
            && let Some(breaker) = &self.retrier.breaker
        {
            lock(breaker).abandon_probe();
        }
    }
}
