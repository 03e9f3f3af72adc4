//! Retry decisions around the backoff core: which outcomes are retried, Retry-After, the
//! request deadline, retry budgets, the circuit breaker and the concurrency limiter.
//!
//! Everything here is a pure state machine: "now" is an argument, nothing reads a clock, does
//! I/O or touches a global RNG. [`RetryPolicy::decide`] is *the* retry decision, called
//! unchanged by the simulator and by the blocking executor ([`crate::exec`]).
//!
//! ```
//! use jitterlab_retry::backoff::{Backoff, BackoffParams, BackoffState};
//! use jitterlab_retry::policy::{AttemptReport, Decision, Idempotency, Outcome, RetryClass, RetryPolicy, StopReason};
//! use std::time::Duration;
//!
//! let policy = RetryPolicy::new(Backoff::from_params(BackoffParams::default())?);
//! let mut state = BackoffState::new();
//! let mut rng = <rand_pcg::Pcg64Mcg as rand::SeedableRng>::seed_from_u64(1);
//! // The first attempt got a 503 with "Retry-After: 3" one second after it was sent.
//! let report = AttemptReport {
//!     attempt: 1,
//!     start: Duration::ZERO,
//!     now: Duration::from_secs(1),
//!     outcome: Outcome::Status(503),
//!     retry_after: Some(Duration::from_secs(3)),
//!     idempotency: Idempotency::Idempotent,
//!     follows: RetryClass::Transient,
//! };
//! // The backoff (at most 50 ms now) is shorter than the hint, so the hint wins.
//! assert_eq!(policy.decide(&report, &mut state, None, &mut rng), Decision::Retry { sleep: Duration::from_secs(3) });
//! // A 404 is never retried.
//! let report = AttemptReport { outcome: Outcome::Status(404), ..report };
//! assert_eq!(policy.decide(&report, &mut state, None, &mut rng), Decision::Stop(StopReason::NotRetryable));
//! # Ok::<(), jitterlab_retry::Error>(())
//! ```

mod breaker;
mod budget;
mod class;
mod cubic;
mod deadline;
mod hedging;
mod limiter;
mod outcome;
mod rate_bucket;
mod rate_limiter;
mod retry_after;
mod send_rate;
mod window;

pub mod adaptive;
pub mod throttle;

pub use breaker::{Breaker, BreakerConfig, BreakerState};
pub use budget::{AttemptKind, Budget, BudgetConfig, RatioDeposit};
pub use class::{RetryClass, Throttling};
pub use cubic::CubicRate;
pub use deadline::AttemptTimeout;
use deadline::Deadline;
pub use hedging::{HedgeDelay, HedgingPolicy, MAX_HEDGED_ATTEMPTS};
pub use limiter::ConcurrencyLimiter;
pub use outcome::{Idempotency, Outcome, RetryOn, RetryOnItem};
pub use rate_bucket::RateBucket;
pub use rate_limiter::{AdaptiveRateConfig, AdaptiveRateLimiter};
pub use retry_after::{
    RetryAfterHeader, RetryAfterMode, RetryAfterPolicy, parse_retry_after, parse_retry_after_millis,
};
pub use send_rate::SendRate;

use std::fmt;

use rand_core::Rng;

use crate::backoff::{Backoff, BackoffState};
use crate::param::ParamError;
use std::time::Duration;

use crate::time::{Human, from_nanos, to_nanos};

/// A client's retry policy: the backoff, what is retried and the limits.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// The sleep between attempts.
    pub backoff: Backoff,
    /// Which outcomes are retried.
    pub retry_on: RetryOn,
    /// Attempts per request, the first included (`None`: unlimited).
    pub max_attempts: Option<u32>,
    /// Per-attempt timeout (`None`: none).
    pub timeout: Option<Duration>,
    /// Overall deadline of a request from its first send, sleeps included (`None`: none).
    pub deadline: Option<Duration>,
    /// How Retry-After hints are honoured.
    pub retry_after: RetryAfterPolicy,
    /// When the drawn sleep would end at or past the deadline: `None` stops the request
    /// ([`StopReason::SleepPastDeadline`]); `Some(last)` shortens the sleep so that `last`
    /// is left for one more attempt, if the time left and a Retry-After hint allow a sleep
    /// above zero (never shorter than an honoured hint).
    pub fit_last_attempt: Option<Duration>,
    /// Throttling answers and their own backoff (`None`: every failure is transient or a
    /// timeout, and uses `backoff`).
    pub throttling: Option<Throttling>,
    /// Hedged requests in place of retries (`None`: none): see [`HedgingPolicy`]. Only the
    /// async executor and the simulator run it; [`RetryPolicy::decide`] ignores it.
    pub hedging: Option<HedgingPolicy>,
}

/// What happened to one attempt, as [`RetryPolicy::decide`] needs it. Instants are
/// [`Duration`]s since the caller's clock origin (`D = u64`: integer nanoseconds, for
/// [`NanosPolicy::decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptReport<D = Duration> {
    /// Attempts made for this request so far, this one included (1 = the first attempt).
    pub attempt: u32,
    /// When the request's first attempt was sent.
    pub start: D,
    /// When this attempt's outcome became known.
    pub now: D,
    /// How this attempt ended.
    pub outcome: Outcome,
    /// The server's Retry-After, already parsed (see [`parse_retry_after`]).
    pub retry_after: Option<D>,
    /// Whether the request may be repeated.
    pub idempotency: Idempotency,
    /// The class of the failure this attempt retries (ignored on a first attempt): a token
    /// bucket charged that class's cost for it and refunds that if it succeeds.
    pub follows: RetryClass,
}

/// Why a request stopped without success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// The outcome is not retried, or the request is not idempotent.
    NotRetryable,
    /// `max_attempts` attempts were made.
    Attempts,
    /// The deadline has passed: no time is left for another attempt.
    Deadline,
    /// The next sleep would end at or past the deadline (some time may be left, but not
    /// enough to sleep and try again; [`RetryPolicy::fit_last_attempt`] shortens that sleep
    /// instead).
    SleepPastDeadline,
    /// The retry budget denied the retry.
    Budget,
    /// The circuit breaker would refuse the next attempt (an executor's decision; the pure
    /// [`RetryPolicy::decide`] does not know the breaker).
    BreakerOpen,
    /// The call was cancelled (an executor's decision).
    Cancelled,
}

impl StopReason {
    /// A short snake_case name: `not_retryable`, `attempts`, `deadline`,
    /// `sleep_past_deadline`, `budget`, `breaker_open`, `cancelled`.
    pub const fn name(self) -> &'static str {
        match self {
            StopReason::NotRetryable => "not_retryable",
            StopReason::Attempts => "attempts",
            StopReason::Deadline => "deadline",
            StopReason::SleepPastDeadline => "sleep_past_deadline",
            StopReason::Budget => "budget",
            StopReason::BreakerOpen => "breaker_open",
            StopReason::Cancelled => "cancelled",
        }
    }

    /// The reason in words: `not retryable`, `attempts exhausted`, `deadline reached`, `the
    /// next sleep would pass the deadline`, `retry budget exhausted`, `circuit breaker open`,
    /// `cancelled`.
    pub const fn describe(self) -> &'static str {
        match self {
            StopReason::NotRetryable => "not retryable",
            StopReason::Attempts => "attempts exhausted",
            StopReason::Deadline => "deadline reached",
            StopReason::SleepPastDeadline => "the next sleep would pass the deadline",
            StopReason::Budget => "retry budget exhausted",
            StopReason::BreakerOpen => "circuit breaker open",
            StopReason::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The decision after an attempt (`D = u64`: the sleep in integer nanoseconds, from
/// [`NanosPolicy::decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision<D = Duration> {
    /// The attempt succeeded: the request is done.
    Done,
    /// Sleep this long, then send the next attempt.
    Retry {
        /// The sleep before the next attempt (backoff combined with Retry-After).
        sleep: D,
    },
    /// Give up: the request failed.
    Stop(StopReason),
}

impl<D: Copy> Decision<D> {
    /// The sleep of a [`Decision::Retry`].
    pub const fn sleep(self) -> Option<D> {
        match self {
            Decision::Retry { sleep } => Some(sleep),
            _ => None,
        }
    }
}

impl Decision<u64> {
    /// The same decision with the sleep as a [`Duration`].
    pub const fn to_duration(self) -> Decision {
        match self {
            Decision::Done => Decision::Done,
            Decision::Retry { sleep } => Decision::Retry {
                sleep: from_nanos(sleep),
            },
            Decision::Stop(reason) => Decision::Stop(reason),
        }
    }
}

impl fmt::Display for Decision {
    /// For logs: `done`, `retry in 1.2s` (see [`crate::time::Human`]), `stop: deadline
    /// reached`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Done => f.write_str("done"),
            Decision::Retry { sleep } => write!(f, "retry in {}", Human(*sleep)),
            Decision::Stop(reason) => write!(f, "stop: {}", reason.describe()),
        }
    }
}

impl RetryPolicy {
    /// `backoff` with the scenario defaults: retry on the [`RetryOn::default`] set, 5
    /// attempts, a 1 s attempt timeout, no deadline, Retry-After honoured `at_least` with no
    /// maximum, no sleep shortened to fit the deadline.
    pub fn new(backoff: Backoff) -> RetryPolicy {
        RetryPolicy {
            backoff,
            retry_on: RetryOn::default(),
            max_attempts: Some(5),
            timeout: Some(Duration::from_secs(1)),
            deadline: None,
            retry_after: RetryAfterPolicy::default(),
            fit_last_attempt: None,
            throttling: None,
            hedging: None,
        }
    }

    /// The class of a failed attempt that ended in `outcome`: throttling when `outcome` is in
    /// [`RetryPolicy::throttling`]'s set, else a timeout or transient.
    #[inline]
    pub fn class_of(&self, outcome: Outcome) -> RetryClass {
        match (&self.throttling, outcome) {
            (Some(t), _) if t.on.retries(outcome) => RetryClass::Throttling,
            (_, Outcome::Timeout) => RetryClass::Timeout,
            _ => RetryClass::Transient,
        }
    }

    /// The backoff a retry after a failure of `class` draws from.
    #[inline]
    pub fn backoff_for(&self, class: RetryClass) -> &Backoff {
        match (&self.throttling, class) {
            (
                Some(Throttling {
                    backoff: Some(b), ..
                }),
                RetryClass::Throttling,
            ) => b,
            _ => &self.backoff,
        }
    }

    /// Checks the limits: `max_attempts` at least 1; `timeout`, `deadline` and
    /// `fit_last_attempt` above zero; the hedging policy's ([`HedgingPolicy::validate`]).
    pub fn validate(&self) -> Result<(), ParamError> {
        if let Some(hedging) = &self.hedging {
            hedging.validate()?;
        }
        if self.max_attempts == Some(0) {
            return Err(ParamError::new(
                "max_attempts",
                0,
                "an integer of at least 1, or unlimited_attempts() (None) for no limit",
            ));
        }
        if self.timeout.is_some_and(|t| to_nanos(t) == 0) {
            return Err(ParamError::new(
                "timeout",
                "0ms",
                "a duration greater than 0, or None for none",
            ));
        }
        if self.deadline.is_some_and(|t| to_nanos(t) == 0) {
            return Err(ParamError::new(
                "deadline",
                "0ms",
                "a duration greater than 0, or None for none",
            ));
        }
        if self.fit_last_attempt.is_some_and(|t| to_nanos(t) == 0) {
            return Err(ParamError::new(
                "fit_last_attempt",
                "0ms",
                "a duration greater than 0",
            ));
        }
        Ok(())
    }

    /// The timeout of an attempt of a request first sent at `start`, sent at `now`:
    /// `min(timeout, time left before the deadline)`.
    #[inline]
    pub fn attempt_timeout(
        &self,
        start: impl Into<Duration>,
        now: impl Into<Duration>,
    ) -> AttemptTimeout {
        Limits::of(self)
            .attempt_timeout(to_nanos(start.into()), to_nanos(now.into()))
            .to_duration()
    }

    /// Decides what follows an attempt, in this order:
    ///
    /// 1. success → [`Decision::Done`];
    /// 2. an outcome not in `retry_on` (a [`Outcome::Fatal`] or [`Outcome::Invalid`] one
    ///    never is), or a non-idempotent request → `Stop(NotRetryable)`;
    /// 3. `max_attempts` reached → `Stop(Attempts)`;
    /// 4. the sleep is drawn (exactly one [`Backoff::next_delay`] per retry) and combined with
    ///    Retry-After; if it would end at or past the deadline, it is shortened to leave
    ///    [`RetryPolicy::fit_last_attempt`] for one more attempt, or else →
    ///    `Stop(SleepPastDeadline)` (`Stop(Deadline)` when no time is left at all);
    /// 5. the budget is asked only now (no tokens spent on retries that would not happen) →
    ///    `Stop(Budget)` if denied;
    /// 6. otherwise [`Decision::Retry`].
    ///
    /// It also keeps the budget's books, so callers make no other budget calls: the first
    /// attempt's report counts a request (`on_request`, at the report's `now`), a success is
    /// `on_success`, and an outcome in `retry_on` or [`Outcome::Fatal`] is `on_failure`
    /// (whether or not a retry follows; an [`Outcome::Invalid`] one is not counted). No allocation, no clock, no I/O.
    #[inline]
    pub fn decide<R: Rng + ?Sized>(
        &self,
        a: &AttemptReport,
        state: &mut BackoffState,
        budget: Option<&mut Budget>,
        rng: &mut R,
    ) -> Decision {
        let report = AttemptReport {
            attempt: a.attempt,
            start: to_nanos(a.start),
            now: to_nanos(a.now),
            outcome: a.outcome,
            retry_after: a.retry_after.map(to_nanos),
            idempotency: a.idempotency,
            follows: a.follows,
        };
        let backoff = self.backoff_for(self.class_of(a.outcome));
        let draw = |rng: &mut R| Some(backoff.next_delay_nanos(state, rng));
        self.decide_in(&Limits::of(self), &report, budget, rng, draw)
            .to_duration()
    }

    /// This policy for a simulator's hot path: its limits converted to integer nanoseconds
    /// once (see [`NanosPolicy`]).
    pub fn nanos(self) -> NanosPolicy {
        NanosPolicy {
            limits: Limits::of(&self),
            policy: self,
        }
    }

    /// [`RetryPolicy::decide`] in integer nanoseconds, `limits` being this policy's, the
    /// backoff's sleep drawn by `draw` (`None`: no more retries).
    #[inline]
    fn decide_in<R: Rng + ?Sized, D: FnOnce(&mut R) -> Option<u64>>(
        &self,
        limits: &Limits,
        a: &AttemptReport<u64>,
        mut budget: Option<&mut Budget>,
        rng: &mut R,
        draw: D,
    ) -> Decision<u64> {
        if let Some(b) = budget.as_deref_mut() {
            b.on_attempt_end(a.attempt);
            if a.attempt <= 1 {
                b.on_request_nanos(a.now);
            }
        }
        if a.outcome.is_success() {
            if let Some(b) = budget {
                b.on_success_nanos(a.now, AttemptKind::of(a.attempt, a.follows));
            }
            return Decision::Done;
        }
        if a.outcome.is_fatal() {
            if let Some(b) = budget {
                b.on_failure();
            }
            return Decision::Stop(StopReason::NotRetryable);
        }
        if !self.retry_on.retries(a.outcome) {
            return Decision::Stop(StopReason::NotRetryable);
        }
        if let Some(b) = budget.as_deref_mut() {
            b.on_failure();
        }
        if !a.idempotency.may_retry() {
            return Decision::Stop(StopReason::NotRetryable);
        }
        if self.max_attempts.is_some_and(|max| a.attempt >= max) {
            return Decision::Stop(StopReason::Attempts);
        }
        let Some(backoff) = draw(rng) else {
            return Decision::Stop(StopReason::Attempts);
        };
        let ra = &self.retry_after;
        let clamp = limits.retry_after_clamp(backoff);
        let mut sleep = ra.sleep_nanos(backoff, a.retry_after, clamp, rng);
        let deadline = Deadline::new(a.start, limits.deadline);
        if !deadline.allows_sleep(a.now, sleep) {
            if deadline.remaining(a.now) == Some(0) {
                return Decision::Stop(StopReason::Deadline);
            }
            let floor = ra.floor_nanos(a.retry_after, clamp);
            match limits
                .fit_last_attempt
                .and_then(|last| deadline.shortened_sleep(a.now, last, floor))
            {
                Some(shorter) => sleep = shorter,
                None => return Decision::Stop(StopReason::SleepPastDeadline),
            }
        }
        if let Some(b) = budget
            && !b.try_retry_nanos(a.now, self.class_of(a.outcome))
        {
            return Decision::Stop(StopReason::Budget);
        }
        Decision::Retry { sleep }
    }
}

/// A [`RetryPolicy`] with its limits in integer nanoseconds, for a simulator that decides
/// millions of times a second: [`NanosPolicy::decide`] and [`NanosPolicy::attempt_timeout`]
/// take and give integer nanoseconds since the clock's origin and convert nothing. They are
/// the same code as the `Duration` methods and give the same values (tested). Immutable, so
/// its limits always match its policy.
#[derive(Debug, Clone)]
pub struct NanosPolicy {
    policy: RetryPolicy,
    limits: Limits,
}

impl NanosPolicy {
    /// The policy.
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// [`RetryPolicy::decide`], in integer nanoseconds.
    #[inline]
    pub fn decide<R: Rng + ?Sized>(
        &self,
        a: &AttemptReport<u64>,
        state: &mut BackoffState,
        budget: Option<&mut Budget>,
        rng: &mut R,
    ) -> Decision<u64> {
        let backoff = self.policy.backoff_for(self.policy.class_of(a.outcome));
        let draw = |rng: &mut R| Some(backoff.next_delay_nanos(state, rng));
        self.policy.decide_in(&self.limits, a, budget, rng, draw)
    }

    /// [`NanosPolicy::decide`] with the backoff's sleep drawn by `draw` instead of the
    /// policy's [`Backoff`] (a simulator running someone else's backoff code): `draw` is
    /// called once, where `decide` would draw, with the generator; it returns the sleep in
    /// nanoseconds, or `None` when the backoff gives up (then `Stop(Attempts)`, as a retry
    /// limit). Every other step is `decide`'s.
    #[inline]
    pub fn decide_with<R: Rng + ?Sized>(
        &self,
        a: &AttemptReport<u64>,
        budget: Option<&mut Budget>,
        rng: &mut R,
        draw: impl FnOnce(&mut R) -> Option<u64>,
    ) -> Decision<u64> {
        self.policy.decide_in(&self.limits, a, budget, rng, draw)
    }

    /// [`RetryPolicy::attempt_timeout`], in integer nanoseconds.
    #[inline]
    pub fn attempt_timeout(&self, start: u64, now: u64) -> AttemptTimeout<u64> {
        self.limits.attempt_timeout(start, now)
    }
}

/// A policy's durations in integer nanoseconds.
#[derive(Debug, Clone, Copy)]
struct Limits {
    timeout: Option<u64>,
    deadline: Option<u64>,
    retry_after_max: Option<u64>,
    retry_after_max_extra: Option<u64>,
    fit_last_attempt: Option<u64>,
}

impl Limits {
    #[inline]
    fn of(p: &RetryPolicy) -> Limits {
        Limits {
            timeout: p.timeout.map(to_nanos),
            deadline: p.deadline.map(to_nanos),
            retry_after_max: p.retry_after.max.map(to_nanos),
            retry_after_max_extra: p.retry_after.max_extra.map(to_nanos),
            fit_last_attempt: p.fit_last_attempt.map(to_nanos),
        }
    }

    /// The largest hint honoured after a backoff sleep of `backoff`: `max`, and no more
    /// than `max_extra` above the backoff (AWS: 5 s).
    #[inline]
    fn retry_after_clamp(&self, backoff: u64) -> Option<u64> {
        retry_after::hint_clamp(self.retry_after_max, self.retry_after_max_extra, backoff)
    }

    #[inline]
    fn attempt_timeout(&self, start: u64, now: u64) -> AttemptTimeout<u64> {
        Deadline::new(start, self.deadline).attempt_timeout(now, self.timeout)
    }
}

#[cfg(test)]
mod tests;
