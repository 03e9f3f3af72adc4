//! A hedged call ([`HedgingPolicy`], gRFC A6 `hedgingPolicy`): copies of the operation as
//! concurrent futures, one every `delay` while none has answered; the first success wins, a
//! fatal failure (not in `non_fatal`) ends the call with that answer, a non-fatal one sends the
//! next copy at once, or with a Retry-After hint when what the policy's `retry_after` makes of
//! it after a zero backoff has passed, never past the deadline (A6's pushback); the losers'
//! futures are dropped, which cancels them.
//!
//! The books are the simulator's (`sim::client`'s hedged path, what is simulated is what
//! ships): the call counts as begun and as a request as its first copy leaves; every copy
//! after the first asks the retry budget as a transient retry, then the circuit breaker, and
//! a refusal sends no more copies (a hedge the breaker refuses gives the budget its grant
//! back); every copy that leaves is sent to the budget (`on_send`) and abandoned
//! (`on_abandon`) when it ends, answered, cancelled or dropped, so a concurrency budget
//! counts exactly the copies in flight; each answer is the breaker's success or failure, and
//! the budget's success (`on_success_at`: a ratio budget counting successes counts it), or
//! its failure when it is non-fatal or [`Outcome::Fatal`]. The deadline bounds the whole
//! call: each copy is cut off at the policy's attempt timeout (shortened to the deadline),
//! which counts as [`Outcome::Timeout`]; a copy cut off at the deadline ends the call as out
//! of time ([`StopReason::Deadline`]) whether timeouts are fatal or not, cancelling the
//! others; no copy leaves once the deadline has passed.
//!
//! Every copy shows in the events ([`AttemptEvent::copy`]): [`CopyEvent::Sent`] as it leaves,
//! then [`CopyEvent::Answered`] (with its Retry-After hint) or [`CopyEvent::Cancelled`]; a
//! copy the deadline, the budget or the breaker refuses is an event of its own with no
//! outcome (`copy: None`), as in an unhedged call. Dropping the call's future drops every copy
//! in flight (a half-open breaker's probe among them goes back).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::super::call::{Failure, read, report};
use super::super::{AttemptCtx, AttemptEvent, Classifier, CopyEvent, RetryError, TimedOut, lock};
use super::{AsyncRetrier, Signal};
use crate::policy::{
    AttemptKind, AttemptTimeout, Decision, HedgingPolicy, Idempotency, Outcome, RetryClass,
    StopReason,
};

/// One copy in flight: its number, when it left, its future and its time limit.
struct InFlight<S, Fut> {
    n: u32,
    sent: Duration,
    attempt: Pin<Box<Fut>>,
    limit: Option<(Duration, Pin<Box<S>>)>,
    /// It is the half-open breaker's probe.
    probing: bool,
}

/// The state of one hedged call.
pub(super) struct Hedged<'r, T: super::Timer, E, F, Fut, O, C, K> {
    retrier: &'r AsyncRetrier<T>,
    policy: HedgingPolicy,
    delay: Duration,
    op: F,
    on_attempt: O,
    cancel: Signal<C>,
    /// The most copies this call sends (1 for a request that may not be repeated).
    max_copies: u32,
    /// When the first copy left (`None`: not yet).
    start: Option<Duration>,
    sent: u32,
    copies: Vec<InFlight<T::Sleep, Fut>>,
    /// No more copies leave: why.
    stopped: Option<StopReason>,
    /// The next copy's delay.
    next: Option<Pin<Box<T::Sleep>>>,
    deadline: Option<Pin<Box<T::Sleep>>>,
    /// The last non-fatal failure.
    last: Option<Failure<E>>,
    /// Reads the copies' errors.
    classifier: K,
}

/// A copy's answer as its event shows it: the outcome, the operation's error (`None` for a
/// success or a cut-off) and the Retry-After hint read from it.
type Answer<'a, E> = (Outcome, Option<&'a E>, Option<Duration>);

/// What a poll of the copies found.
enum Found<V, E> {
    /// The call is over.
    End(Result<V, RetryError<E>>),
    /// Something changed: look again.
    Progress,
    /// Nothing is ready.
    Nothing,
}

impl<'r, T, V, E, F, Fut, O, C, K> Hedged<'r, T, E, F, Fut, O, C, K>
where
    T: super::Timer,
    K: Classifier<E>,
    F: FnMut(AttemptCtx) -> Fut,
    Fut: std::future::Future<Output = Result<V, E>>,
    O: FnMut(&AttemptEvent<'_, E>),
    C: std::future::Future,
{
    /// A hedged call of `op` under `retrier`, whose policy hedges with `policy` (a fixed
    /// delay: [`AsyncRetrier`] refuses a percentile one).
    pub(super) fn new(
        retrier: &'r AsyncRetrier<T>,
        policy: HedgingPolicy,
        op: F,
        on_attempt: O,
        cancel: Signal<C>,
        idempotency: Idempotency,
        classifier: K,
    ) -> Self {
        Hedged {
            retrier,
            policy,
            delay: policy.fixed_delay().unwrap_or(Duration::MAX),
            op,
            on_attempt,
            cancel,
            max_copies: if idempotency.may_retry() {
                policy.max_attempts
            } else {
                1
            },
            start: None,
            sent: 0,
            copies: Vec::new(),
            stopped: None,
            next: None,
            deadline: None,
            last: None,
            classifier,
        }
    }

    /// Moves the call along as far as it can go without waiting.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Result<V, RetryError<E>>> {
        let now = self.retrier.timer.now();
        if self.start.is_none()
            && let Err(end) = self.begin(now, cx)
        {
            return Poll::Ready(Err(end));
        }
        loop {
            let now = self.retrier.timer.now();
            if self.cancel.poll(cx) {
                self.cancel_all(now);
                return Poll::Ready(Err(RetryError::Cancelled {
                    last: self.last.take().and_then(Failure::into_error),
                    attempts: self.sent,
                }));
            }
            // The copies first: one cut off at the deadline is answered as a timeout (the
            // breaker and the budget hear of it, as in the simulator) and ends the call.
            match self.poll_copies(now, cx) {
                Found::End(end) => return Poll::Ready(end),
                Found::Progress => continue,
                Found::Nothing => {}
            }
            if let Some(deadline) = &mut self.deadline
                && deadline.as_mut().poll(cx).is_ready()
            {
                self.cancel_all(now);
                return Poll::Ready(Err(self.past_deadline()));
            }
            if let Some(next) = &mut self.next
                && next.as_mut().poll(cx).is_ready()
            {
                self.next = None;
                self.hedge(now);
                continue;
            }
            return Poll::Pending;
        }
    }

    /// The first copy leaves at `now`, unless the call is cancelled or the breaker refuses it.
    fn begin(&mut self, now: Duration, cx: &mut Context<'_>) -> Result<(), RetryError<E>> {
        if self.cancel.poll(cx) {
            self.not_sent(now, StopReason::Cancelled);
            return Err(RetryError::Cancelled {
                last: None,
                attempts: 0,
            });
        }
        self.start = Some(now);
        let retrier = &self.retrier.retrier;
        if let Some(budget) = &retrier.budget {
            lock(budget).on_begin(now);
        }
        let Ok(probing) = self.admit(now, false) else {
            self.not_sent(now, StopReason::BreakerOpen);
            return Err(RetryError::BreakerOpen {
                last: None,
                attempts: 0,
            });
        };
        if let Some(budget) = &retrier.budget {
            // A hedged request is counted as it leaves: its first copy may never end.
            lock(budget).on_request(now);
        }
        if let Some(deadline) = retrier.policy.deadline {
            self.deadline = Some(Box::pin(self.retrier.timer.sleep(deadline)));
        }
        self.launch(now, probing);
        Ok(())
    }

    /// Whether a copy may leave at `now`: a hedge (`retry`) finds time left before the
    /// deadline and asks the budget as a transient retry, then every copy asks the breaker;
    /// a hedge the breaker refuses gives the budget its grant back, as a refused retry does.
    /// `Ok(probing)`: it may, and is the half-open breaker's probe; `Err`: why not.
    fn admit(&mut self, now: Duration, retry: bool) -> Result<bool, StopReason> {
        let retrier = &self.retrier.retrier;
        let start = self.start.unwrap_or(now);
        if retry && retrier.policy.attempt_timeout(start, now) == AttemptTimeout::Expired {
            return Err(StopReason::Deadline);
        }
        if retry
            && let Some(budget) = &retrier.budget
            && !lock(budget).try_retry(now, RetryClass::Transient)
        {
            return Err(StopReason::Budget);
        }
        let Some(breaker) = &retrier.breaker else {
            return Ok(false);
        };
        let mut breaker = lock(breaker);
        if breaker.allow(now) {
            return Ok(breaker.is_probing());
        }
        if retry && let Some(budget) = &retrier.budget {
            lock(budget).refund_retry(now, RetryClass::Transient);
        }
        Err(StopReason::BreakerOpen)
    }

    /// Sends the next copy at `now`, announces it and sets the delay to the one after.
    fn launch(&mut self, now: Duration, probing: bool) {
        let start = self.start.unwrap_or(now);
        self.sent += 1;
        let n = self.sent;
        if let Some(budget) = &self.retrier.retrier.budget {
            // A concurrency budget counts the copy in flight until it ends or is dropped.
            lock(budget).on_send();
        }
        let timeout = self.retrier.policy().attempt_timeout(start, now).limit();
        let attempt = Box::pin((self.op)(AttemptCtx {
            attempt: n,
            timeout,
        }));
        let timer = &self.retrier.timer;
        self.copies.push(InFlight {
            n,
            sent: now,
            attempt,
            limit: timeout.map(|after| (after, Box::pin(timer.sleep(after)))),
            probing,
        });
        let decision = if n < self.max_copies && self.stopped.is_none() {
            self.next = Some(Box::pin(timer.sleep(self.delay)));
            Decision::Retry { sleep: self.delay }
        } else {
            self.next = None;
            Decision::Stop(self.stopped.unwrap_or(StopReason::Attempts))
        };
        self.event(n, None, (now, now), decision, Some(CopyEvent::Sent));
    }

    /// The delay after the last copy has passed at `now`: the next copy, if it may leave.
    fn hedge(&mut self, now: Duration) {
        if self.sent >= self.max_copies || self.stopped.is_some() {
            return;
        }
        match self.admit(now, true) {
            Ok(probing) => self.launch(now, probing),
            Err(reason) => {
                self.stopped = Some(reason);
                self.not_sent(now, reason);
            }
        }
    }

    /// Polls every copy in flight; the first that has ended is dealt with.
    fn poll_copies(&mut self, now: Duration, cx: &mut Context<'_>) -> Found<V, E> {
        for i in 0..self.copies.len() {
            let copy = &mut self.copies[i];
            let result = match copy.attempt.as_mut().poll(cx) {
                Poll::Ready(result) => result.map_err(Failure::Error),
                Poll::Pending => {
                    let Some((after, sleep)) = &mut copy.limit else {
                        continue;
                    };
                    if sleep.as_mut().poll(cx).is_pending() {
                        continue;
                    }
                    Err(Failure::TimedOut(TimedOut { after: *after }))
                }
            };
            let copy = self.copies.remove(i);
            return self.answered(now, copy, result);
        }
        Found::Nothing
    }

    /// `copy` ended at `now` with `result`: the breaker and the budget hear of it, then the
    /// call ends, sends the next copy (at once, or after the server's pushback), or waits for
    /// the others.
    fn answered(
        &mut self,
        now: Duration,
        copy: InFlight<T::Sleep, Fut>,
        result: Result<V, Failure<E>>,
    ) -> Found<V, E> {
        let header = self.retrier.policy().retry_after.header;
        let (outcome, hint) = read(&self.classifier, &result, self.retrier.wall_at(now), header);
        let non_fatal = self.policy.non_fatal.retries(outcome);
        self.tell_breaker_and_budget(now, &copy, outcome, non_fatal);
        let span = (copy.sent, now);
        let failure = match result {
            Ok(value) => {
                let answer = Some((outcome, None, None));
                self.event(copy.n, answer, span, Decision::Done, answered());
                self.cancel_all(now);
                return Found::End(Ok(value));
            }
            Err(failure) => failure,
        };
        // A copy cut off by the deadline: the call is out of time, whatever copies are still
        // out (A6: "Once a deadline has passed, the operation fails regardless of in-flight
        // RPCs"), as a retried call is.
        let out_of_time = outcome == Outcome::Timeout
            && self
                .retrier
                .policy()
                .attempt_timeout(self.start.unwrap_or(now), now)
                == AttemptTimeout::Expired;
        if out_of_time || !non_fatal {
            let reason = if out_of_time {
                StopReason::Deadline
            } else {
                StopReason::NotRetryable
            };
            let answer = Some((outcome, failure.error(), hint));
            self.event(copy.n, answer, span, Decision::Stop(reason), answered());
            self.cancel_all(now);
            return Found::End(Err(failure.stopped(reason, self.sent)));
        }
        // A non-fatal failure: the next copy leaves at once, or when the pushback ends (it
        // then asks the budget and the breaker), if one may.
        let more = self.sent < self.max_copies && self.stopped.is_none();
        let hold = if more {
            self.pushback(now, hint)
        } else {
            Duration::ZERO
        };
        let admitted = if !more {
            Err(self.stopped.unwrap_or(StopReason::Attempts))
        } else if hold > Duration::ZERO {
            Ok(None)
        } else {
            self.admit(now, true)
                .map(Some)
                .inspect_err(|reason| self.stopped = Some(*reason))
        };
        let decision = match admitted {
            Ok(_) => Decision::Retry { sleep: hold },
            Err(reason) => Decision::Stop(reason),
        };
        let answer = Some((outcome, failure.error(), hint));
        self.event(copy.n, answer, span, decision, answered());
        match admitted {
            Ok(Some(probing)) => self.launch(now, probing),
            Ok(None) => self.next = Some(Box::pin(self.retrier.timer.sleep(hold))),
            Err(reason) if self.copies.is_empty() => {
                return Found::End(Err(failure.stopped(reason, self.sent)));
            }
            Err(_) => {}
        }
        self.last = Some(failure);
        Found::Progress
    }

    /// The breaker and the budget hear that `copy` ended at `now` with `outcome`: the
    /// breaker counts an answer that concerns the server (or frees a probe that did not), the
    /// budget closes the copy's books and credits a success or charges a failure that counts.
    fn tell_breaker_and_budget(
        &self,
        now: Duration,
        copy: &InFlight<T::Sleep, Fut>,
        outcome: Outcome,
        non_fatal: bool,
    ) {
        let retrier = &self.retrier.retrier;
        if let Some(breaker) = &retrier.breaker {
            let mut breaker = lock(breaker);
            if outcome.concerns_the_server() {
                breaker.record(now, !outcome.is_server_failure());
            } else if copy.probing {
                breaker.abandon_probe();
            }
        }
        if let Some(budget) = &retrier.budget {
            let mut budget = lock(budget);
            // The copy is no longer in flight (a concurrency budget's books).
            budget.on_abandon(copy.n);
            if outcome.is_success() {
                let kind = if copy.n == 1 {
                    AttemptKind::First
                } else {
                    AttemptKind::Retry(RetryClass::Transient)
                };
                budget.on_success_at(now, kind);
            } else if non_fatal || outcome.is_fatal() {
                budget.on_failure();
            }
        }
    }

    /// How long the next copy waits at `now` after a non-fatal answer with a Retry-After
    /// `hint` (A6's pushback): what the policy's `retry_after` makes of the hint after a zero
    /// backoff, never past the deadline; zero without a hint.
    fn pushback(&self, now: Duration, hint: Option<Duration>) -> Duration {
        let Some(hint) = hint else {
            return Duration::ZERO;
        };
        let policy = self.retrier.policy();
        let wait = {
            let mut rng = lock(&self.retrier.retrier.rng);
            policy
                .retry_after
                .sleep(Duration::ZERO, Some(hint), &mut *rng)
        };
        let start = self.start.unwrap_or(now);
        let left = policy
            .deadline
            .map(|d| start.saturating_add(d).saturating_sub(now));
        left.map_or(wait, |left| wait.min(left))
    }

    /// Drops every copy in flight at `now`, each announced as cancelled.
    fn cancel_all(&mut self, now: Duration) {
        self.next = None;
        for copy in std::mem::take(&mut self.copies) {
            self.abandon(&copy);
            let cancelled = Decision::Stop(StopReason::Cancelled);
            let span = (copy.sent, now);
            self.event(copy.n, None, span, cancelled, Some(CopyEvent::Cancelled));
        }
    }

    /// The call's error at its deadline: the last failure's, or the cut-off of the copies.
    fn past_deadline(&mut self) -> RetryError<E> {
        let reason = StopReason::Deadline;
        match self.last.take() {
            Some(failure) => failure.stopped(reason, self.sent),
            None => RetryError::TimedOut {
                reason,
                timed_out: TimedOut {
                    after: self.retrier.policy().deadline.unwrap_or_default(),
                },
                attempts: self.sent,
            },
        }
    }

    /// The event of copy `n + 1`, not sent at `now` for `reason`.
    fn not_sent(&mut self, now: Duration, reason: StopReason) {
        let n = self.sent + 1;
        self.event(n, None, (now, now), Decision::Stop(reason), None);
    }

    /// Shows the observer one event; `span` is (sent, ended) on the timer's clock.
    fn event(
        &mut self,
        attempt: u32,
        answer: Option<Answer<'_, E>>,
        span: (Duration, Duration),
        decision: Decision,
        copy: Option<CopyEvent>,
    ) {
        let start = self.start.unwrap_or(span.0);
        let (outcome, error, retry_after) = match answer {
            Some((outcome, error, hint)) => (Some(outcome), error, hint),
            None => (None, None, None),
        };
        let event = AttemptEvent {
            attempt,
            outcome,
            error,
            retry_after,
            start: span.0.saturating_sub(start),
            end: span.1.saturating_sub(start),
            decision,
            copy,
            dropped: false,
        };
        report(&self.retrier.retrier, &mut self.on_attempt, &event);
    }
}

/// The event kind of an answer.
fn answered() -> Option<CopyEvent> {
    Some(CopyEvent::Answered)
}

impl<T: super::Timer, E, F, Fut, O, C, K> Hedged<'_, T, E, F, Fut, O, C, K> {
    /// A copy dropped unanswered: a concurrency budget no longer counts it in flight, and a
    /// half-open breaker's probe goes back.
    fn abandon(&self, copy: &InFlight<T::Sleep, Fut>) {
        let retrier = &self.retrier.retrier;
        if let Some(budget) = &retrier.budget {
            lock(budget).on_abandon(copy.n);
        }
        if copy.probing
            && let Some(breaker) = &retrier.breaker
        {
            lock(breaker).abandon_probe();
        }
    }
}

impl<T: super::Timer, E, F, Fut, O, C, K> Drop for Hedged<'_, T, E, F, Fut, O, C, K> {
    /// A call dropped with copies in flight cancels them (their futures go with it): a
    /// concurrency budget no longer counts them, and a half-open breaker's probe among them
    /// goes back.
    fn drop(&mut self) {
        for copy in &self.copies {
            self.abandon(copy);
        }
    }
}

#[cfg(all(test, feature = "tokio"))]
mod tests;
