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
//! back. Every stop is seen: one that comes before an attempt is an event of its own, for the
//! attempt not sent (no outcome, the decision saying why).

use std::time::{Duration, SystemTime};

use super::{
    AttemptCtx, AttemptEvent, ByClassify, Classifier, Retrier, RetryError, TimedOut, lock,
};
use crate::backoff::BackoffState;
use crate::policy::{
    AttemptReport, AttemptTimeout, Decision, Idempotency, Outcome, RetryAfterHeader, RetryClass,
    StopReason,
};

/// What follows an attempt.
pub(crate) enum Next<T, E> {
    /// The call is over.
    Return(Result<T, RetryError<E>>),
    /// Sleep this long, then [`Call::begin`] the next attempt.
    Sleep(Duration),
}

/// One call's state between attempts, its observer `O` and the classifier `K` of its errors.
/// Times are on the executor's clock.
pub(crate) struct Call<'r, E, O, K = ByClassify> {
    retrier: &'r Retrier,
    /// When the first attempt was sent: the deadline and the events count from it.
    start: Duration,
    /// When the attempt in flight was sent.
    sent: Duration,
    backoff: BackoffState,
    /// Attempts whose outcome is known.
    made: u32,
    /// The class of the failure the next attempt retries (a token bucket's cost).
    follows: RetryClass,
    /// The attempt in flight is the half-open breaker's probe.
    probing: bool,
    /// Whether this call's request may be repeated (the retrier's, unless the call says).
    idempotency: Idempotency,
    /// The retry the budget granted and not yet sent: when it was granted, and the class of
    /// the failure (what [`crate::policy::Budget::refund_retry`] needs to give it back).
    granted: Option<(Duration, RetryClass)>,
    /// An attempt was sent and its result is not yet known (a concurrency budget counts it).
    sending: bool,
    last: Option<Failure<E>>,
    on_attempt: O,
    classifier: K,
}

/// How an attempt failed: its operation's error, or the async executor's cut-off.
pub(crate) enum Failure<E> {
    Error(E),
    #[cfg_attr(not(feature = "async"), allow(dead_code))]
    TimedOut(TimedOut),
}

impl<E> Failure<E> {
    /// The operation's error (`None`: the attempt was cut off).
    #[cfg_attr(not(feature = "async"), allow(dead_code))]
    pub(crate) fn error(&self) -> Option<&E> {
        match self {
            Failure::Error(e) => Some(e),
            Failure::TimedOut(_) => None,
        }
    }

    /// The call's error when the policy stops after this failure.
    pub(crate) fn stopped(self, reason: StopReason, attempts: u32) -> RetryError<E> {
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

    pub(crate) fn into_error(self) -> Option<E> {
        match self {
            Failure::Error(e) => Some(e),
            Failure::TimedOut(_) => None,
        }
    }
}

impl<'r, E, O, K> Call<'r, E, O, K>
where
    K: Classifier<E>,
    O: FnMut(&AttemptEvent<'_, E>),
{
    /// A call of `retrier` that has made no attempt yet, reporting to `on_attempt`, its
    /// errors read by `classifier`.
    pub(crate) fn new(retrier: &'r Retrier, on_attempt: O, classifier: K) -> Self {
        Call {
            retrier,
            start: Duration::ZERO,
            sent: Duration::ZERO,
            backoff: BackoffState::new(),
            made: 0,
            follows: RetryClass::Transient,
            probing: false,
            idempotency: retrier.idempotency,
            granted: None,
            sending: false,
            last: None,
            on_attempt,
            classifier,
        }
    }

    /// This call's request is `idempotency`, whatever the retrier's default.
    pub(crate) fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = idempotency;
        self
    }

    /// Before anything else about the next attempt at `now`: the rate limiter's token, or how
    /// long to wait for it (then ask again; a token taken for an attempt that is then not sent
    /// stays spent, as in the SDK, whose token goes before the send). A retry waits at most
    /// until its deadline, and takes no token there: [`Call::begin`] finds it expired.
    pub(crate) fn token_wait(&self, now: Duration) -> Option<Duration> {
        let rate = self.retrier.rate.as_ref()?;
        let left = self.time_left(now);
        if left == Some(Duration::ZERO) {
            return None;
        }
        let wait = lock(rate).at(now).try_acquire(now).err()?;
        Some(left.map_or(wait, |left| wait.min(left)))
    }

    /// Before the next attempt, sent at `now`: the deadline (a real clock may oversleep what
    /// `decide` allowed), then the cancel token (before anything counts the call, for the
    /// first), then the breaker, asked last as the attempt leaves. `Ok`: send it with this
    /// context.
    pub(crate) fn begin(
        &mut self,
        now: Duration,
        cancelled: bool,
    ) -> Result<AttemptCtx, RetryError<E>> {
        if self.made == 0 {
            // A call cancelled before its first attempt never began: nothing counts it.
            if cancelled {
                return Err(self.cancelled(now));
            }
            self.start = now;
            if let Some(budget) = &self.retrier.budget {
                // Brooker's adaptive bucket and retry breaker count a request as it begins.
                lock(budget).on_begin(now);
            }
        }
        // The first attempt is sent at the start, so only a later one can find it expired.
        let timeout = self.retrier.policy.attempt_timeout(self.start, now);
        if timeout == AttemptTimeout::Expired
            && let Some(expired) = self.expired(now)
        {
            return Err(expired);
        }
        if cancelled {
            return Err(self.cancelled(now));
        }
        if let Some(breaker) = &self.retrier.breaker {
            let mut breaker = lock(breaker);
            if !breaker.allow(now) {
                drop(breaker);
                return Err(self.refused(now));
            }
            // A half-open breaker lets exactly one attempt through: this one.
            self.probing = breaker.is_probing();
        }
        // The granted retry goes out: its token is spent for good.
        self.granted = None;
        if let Some(budget) = &self.retrier.budget {
            lock(budget).on_send();
        }
        self.sending = true;
        self.sent = now;
        Ok(AttemptCtx {
            attempt: self.made.saturating_add(1),
            timeout: timeout.limit(),
        })
    }

    /// After the attempt begun last, whose result is known at `now` (`wall`: the wall time
    /// then, for an HTTP-date Retry-After). A [`Failure::TimedOut`] counts as
    /// [`Outcome::Timeout`]. `cancelled`: the call's cancel signal, as it is now.
    pub(crate) fn after<T>(
        &mut self,
        now: Duration,
        wall: SystemTime,
        result: Result<T, Failure<E>>,
        cancelled: bool,
    ) -> Next<T, E> {
        let header = self.retrier.policy.retry_after.header;
        let (outcome, retry_after) = read(&self.classifier, &result, wall, header);
        // `decide` hears of the attempt's end.
        self.sending = false;
        self.made = self.made.saturating_add(1);
        self.probing = false;
        self.tell_breaker(now, outcome);
        if let Some(rate) = &self.retrier.rate {
            // Every answer is measured, a timeout or a connection error too (botocore's
            // `needs-retry` hook sees them all); only a throttling one lowers the rate.
            let throttled = self.retrier.policy.class_of(outcome) == RetryClass::Throttling;
            lock(rate).at(now).on_answer(now, throttled);
        }
        let decision = self.decide(now, outcome, retry_after, cancelled);
        let error = match &result {
            Err(Failure::Error(e)) => Some(e),
            _ => None,
        };
        let event = AttemptEvent {
            attempt: self.made,
            outcome: Some(outcome),
            error,
            retry_after,
            // Saturating: a clock of the caller's that steps back must not panic here.
            start: self.sent.saturating_sub(self.start),
            end: now.saturating_sub(self.start),
            decision,
            copy: None,
            dropped: false,
        };
        report(self.retrier, &mut self.on_attempt, &event);
        self.next(result, outcome, decision)
    }

    /// The breaker (if any) learns the attempt's outcome; one that says nothing about the
    /// server ([`Outcome::Invalid`]) gives a half-open breaker's probe back instead.
    fn tell_breaker(&self, now: Duration, outcome: Outcome) {
        if let Some(breaker) = &self.retrier.breaker {
            let mut breaker = lock(breaker);
            if outcome.concerns_the_server() {
                breaker.record(now, !outcome.is_server_failure());
            } else {
                breaker.abandon_probe();
            }
        }
    }

    /// The policy's decision (which keeps the budget's books), unless the retry it grants
    /// cannot happen: the call is cancelled, or the breaker as it stands would refuse an
    /// attempt when the sleep ends. Then the call stops and the token goes back.
    fn decide(
        &mut self,
        now: Duration,
        outcome: Outcome,
        retry_after: Option<Duration>,
        cancelled: bool,
    ) -> Decision {
        let retrier = self.retrier;
        let report = AttemptReport {
            attempt: self.made,
            start: self.start,
            now,
            outcome,
            retry_after,
            idempotency: self.idempotency,
            follows: self.follows,
        };
        let decision = {
            let mut rng = lock(&retrier.rng);
            let mut budget = retrier.budget.as_ref().map(lock);
            retrier
                .policy
                .decide(&report, &mut self.backoff, budget.as_deref_mut(), &mut *rng)
        };
        let Decision::Retry { sleep } = decision else {
            return decision;
        };
        self.granted = Some((now, retrier.policy.class_of(outcome)));
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
        match refused {
            Some(reason) => {
                self.refund();
                Decision::Stop(reason)
            }
            None => decision,
        }
    }

    /// What the executor does after an attempt that ended in `result` and `decision`.
    fn next<T>(
        &mut self,
        result: Result<T, Failure<E>>,
        outcome: Outcome,
        decision: Decision,
    ) -> Next<T, E> {
        let error = match result {
            Ok(value) => return Next::Return(Ok(value)),
            Err(e) => e,
        };
        let attempts = self.made;
        let reason = match decision {
            Decision::Retry { sleep } => {
                self.follows = self.retrier.policy.class_of(outcome);
                self.last = Some(error);
                return Next::Sleep(sleep);
            }
            Decision::Stop(StopReason::Cancelled) => {
                return Next::Return(Err(RetryError::Cancelled {
                    last: error.into_error(),
                    attempts,
                }));
            }
            Decision::Stop(StopReason::BreakerOpen) => {
                return Next::Return(Err(RetryError::BreakerOpen {
                    last: error.into_error(),
                    attempts,
                }));
            }
            Decision::Stop(reason) => reason,
            // An error that classifies itself as a success: nothing to retry.
            Decision::Done => StopReason::NotRetryable,
        };
        Next::Return(Err(error.stopped(reason, attempts)))
    }

    /// How long the next attempt may wait, from `now`, for a concurrency slot: the time left
    /// before the deadline (`None`: no deadline, or no attempt sent yet, since the deadline
    /// counts from the first send).
    #[cfg_attr(not(feature = "async"), allow(dead_code))]
    pub(crate) fn time_left(&self, now: Duration) -> Option<Duration> {
        if self.made == 0 {
            return None;
        }
        let deadline = self.retrier.policy.deadline?;
        Some(self.start.saturating_add(deadline).saturating_sub(now))
    }

    /// The call reached its deadline at `now`, before its next attempt was sent. `None`
    /// before the first attempt, which has no deadline yet.
    pub(crate) fn expired(&mut self, now: Duration) -> Option<RetryError<E>> {
        let last = self.last.take()?;
        self.stop_before(now, StopReason::Deadline);
        Some(last.stopped(StopReason::Deadline, self.made))
    }

    /// The call was cancelled at `now`, before an attempt or during a sleep.
    pub(crate) fn cancelled(&mut self, now: Duration) -> RetryError<E> {
        self.stop_before(now, StopReason::Cancelled);
        RetryError::Cancelled {
            last: self.last.take().and_then(Failure::into_error),
            attempts: self.made,
        }
    }

    /// The call was cancelled at `now` with an attempt in flight, whose future the async
    /// executor drops: the attempt ends without an outcome (a concurrency budget hears that
    /// it ended, a half-open breaker's probe goes back), and the observer sees it dropped.
    #[cfg_attr(not(feature = "async"), allow(dead_code))]
    pub(crate) fn dropped(&mut self, now: Duration) -> RetryError<E> {
        let attempt = self.made.saturating_add(1);
        if std::mem::take(&mut self.sending)
            && let Some(budget) = &self.retrier.budget
        {
            lock(budget).on_abandon(attempt);
        }
        if std::mem::take(&mut self.probing)
            && let Some(breaker) = &self.retrier.breaker
        {
            lock(breaker).abandon_probe();
        }
        let event = AttemptEvent {
            attempt,
            outcome: None,
            error: None,
            retry_after: None,
            start: self.sent.saturating_sub(self.start),
            end: now.saturating_sub(self.start),
            decision: Decision::Stop(StopReason::Cancelled),
            copy: None,
            dropped: true,
        };
        report(self.retrier, &mut self.on_attempt, &event);
        RetryError::Cancelled {
            last: self.last.take().and_then(Failure::into_error),
            attempts: attempt,
        }
    }

    /// The breaker refused the next attempt at `now`.
    fn refused(&mut self, now: Duration) -> RetryError<E> {
        self.stop_before(now, StopReason::BreakerOpen);
        RetryError::BreakerOpen {
            last: self.last.take().and_then(Failure::into_error),
            attempts: self.made,
        }
    }

    /// The call stops at `now`, before its next attempt, for `reason`: the retry granted for
    /// it goes back to the budget, and the observer sees the attempt not sent.
    fn stop_before(&mut self, now: Duration, reason: StopReason) {
        self.refund();
        let at = if self.made == 0 {
            Duration::ZERO
        } else {
            now.saturating_sub(self.start)
        };
        let event = AttemptEvent {
            attempt: self.made.saturating_add(1),
            outcome: None,
            error: None,
            retry_after: None,
            start: at,
            end: at,
            decision: Decision::Stop(reason),
            copy: None,
            dropped: false,
        };
        report(self.retrier, &mut self.on_attempt, &event);
    }
}

/// How an attempt's result reads: its outcome, and the hint of the policy's `header`, parsed
/// at `wall`.
pub(crate) fn read<T, E, K: Classifier<E>>(
    classifier: &K,
    result: &Result<T, Failure<E>>,
    wall: SystemTime,
    header: RetryAfterHeader,
) -> (Outcome, Option<Duration>) {
    match result {
        Ok(_) => (Outcome::Success, None),
        Err(Failure::TimedOut(_)) => (Outcome::Timeout, None),
        Err(Failure::Error(e)) => {
            let raw = match header {
                RetryAfterHeader::RetryAfter => classifier.retry_after(e),
                RetryAfterHeader::AmzMillis => classifier.retry_after_millis(e),
            };
            (
                classifier.outcome(e),
                raw.and_then(|v| header.parse(v, wall)),
            )
        }
    }
}

/// Shows `event` to the observer, and with the `tracing` feature emits it, inside the call's
/// span: attempt, outcome (`not sent` for a stop before an attempt), duration, sleep, stop.
pub(crate) fn report<E, O: FnMut(&AttemptEvent<'_, E>)>(
    retrier: &Retrier,
    on_attempt: &mut O,
    event: &AttemptEvent<'_, E>,
) {
    #[cfg(feature = "tracing")]
    {
        let (sleep, stop) = match event.decision {
            Decision::Retry { sleep } => (Some(sleep), None),
            Decision::Stop(reason) => (None, Some(reason.name())),
            Decision::Done => (None, None),
        };
        tracing::debug!(
            attempt = event.attempt,
            outcome = %super::NotSent(event.outcome),
            took = ?event.took(),
            sleep = ?sleep,
            stop = stop,
            "retry attempt"
        );
    }
    on_attempt(event);
    retrier.counts.count(event);
}

/// The `tracing` feature's span of one call.
#[cfg(feature = "tracing")]
pub(crate) fn call_span() -> tracing::Span {
    tracing::debug_span!("retry call")
}

impl<E, O, K> Call<'_, E, O, K> {
    /// Gives the budget back the retry it granted, if that retry was not sent.
    fn refund(&mut self) {
        if let Some((at, class)) = self.granted.take()
            && let Some(budget) = &self.retrier.budget
        {
            lock(budget).refund_retry(at, class);
        }
    }
}

impl<E, O, K> Drop for Call<'_, E, O, K> {
    /// A call dropped with the breaker's probe in flight (an async call's future dropped, an
    /// operation that panicked) gives the probe back, or the half-open breaker would wait
    /// for its result forever; a concurrency budget hears that its attempt ended.
    fn drop(&mut self) {
        // A future dropped during its sleep: the retry will never be sent.
        self.refund();
        if self.sending
            && let Some(budget) = &self.retrier.budget
        {
            lock(budget).on_abandon(self.made.saturating_add(1));
        }
        if self.probing
            && let Some(breaker) = &self.retrier.breaker
        {
            lock(breaker).abandon_probe();
        }
    }
}
