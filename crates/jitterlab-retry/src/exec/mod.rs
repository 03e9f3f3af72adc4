//! A small blocking retry executor for real code, over a [`Clock`].
//!
//! [`Retrier::retry`] runs an operation until it succeeds or [`RetryPolicy::decide`] (the same
//! function the simulator calls) says stop. Between attempts it sleeps on a [`Clock`]: the
//! [`SystemClock`] for real work, or a [`VirtualClock`] whose sleeps advance virtual time
//! instantly, for tests. A [`CancelToken`] is checked before every attempt and every sleep,
//! and wakes a [`SystemClock`] sleep early. [`Retrier::call`] is the short form: real time,
//! no cancellation, no per-attempt hook.
//!
//! The operation's error says how the attempt ended through [`Classify`]: its [`Outcome`] and
//! an optional `Retry-After` header value, parsed against the clock's wall time (so an
//! HTTP-date works on a virtual clock too). An error that must never be retried (a body that
//! does not parse, a 401 from a proxy) says [`Outcome::Fatal`]: the call stops at once, and
//! the breaker and the budget count it as the failure it is.
//!
//! Make a retrier with [`Retrier::builder`] (defaults for real code, listed there). Its jitter
//! is seeded from the operating system's entropy, so a fleet of processes draws different
//! sleeps; [`RetrierBuilder::seed`] fixes the seed for tests. (The simulator never uses this
//! executor's entropy: its streams are seeded from the scenario.) Durations at this boundary are
//! [`std::time::Duration`].
//!
//! ```
//! use std::time::Duration;
//! use jitterlab_retry::prelude::*;
//!
//! /// What a real client's error might look like.
//! #[derive(Debug)]
//! struct HttpError {
//!     status: u16,
//!     retry_after: Option<String>,
//! }
//! impl Classify for HttpError {
//!     fn outcome(&self) -> Outcome {
//!         Outcome::from_status(self.status)
//!     }
//!     fn retry_after(&self) -> Option<&str> {
//!         self.retry_after.as_deref()
//!     }
//! }
//!
//! // A fixed seed and a virtual clock: a test that runs in no real time.
//! let retrier = Retrier::builder().seed(42).build()?;
//! let clock = VirtualClock::new();
//! let mut log = Vec::new();
//! let body = retrier.retry(
//!     &clock,
//!     &CancelToken::new(),
//!     |ctx| match ctx.attempt {
//!         1 | 2 => Err(HttpError { status: 503, retry_after: Some("1".into()) }),
//!         _ => Ok("hello"),
//!     },
//!     |event| log.push(event.to_string()),
//! );
//! assert_eq!(body.ok(), Some("hello"));
//! // Two waits of the 1 s the server asked for (the backoff is shorter), in no real time.
//! assert_eq!(log[0], "attempt 1: 503 after 0ns, retry in 1s");
//! assert_eq!(log[2], "attempt 3: success after 0ns, done");
//! assert_eq!(clock.now().as_nanos(), 2_000_000_000);
//! # Ok::<(), jitterlab_retry::Error>(())
//! ```

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::policy::{
    AdaptiveRateConfig, AdaptiveRateLimiter, Breaker, Budget, Decision, Idempotency, Outcome,
    RetryPolicy, StopReason,
};

use crate::time::{Human, from_nanos, to_nanos};

/// The executor's jitter generator: small, fast, seedable.
type SimRng = rand_pcg::Pcg64Mcg;

/// A generator seeded from one word (the same seed, the same sleeps).
fn from_seed(seed: u64) -> SimRng {
    rand::SeedableRng::seed_from_u64(seed)
}

#[cfg(feature = "async")]
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
pub mod asynchronous;
mod builder;
mod call;
mod classify;
#[cfg(feature = "async")]
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
pub mod timer;
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub mod tokio;
pub use builder::RetrierBuilder;
use call::{Call, Failure, Next};
pub use classify::{Classify, TimedOut};

/// Locks a mutex, recovering the data if another thread panicked while holding it (the data
/// here is counters that stay consistent between statements).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A source of time that can also sleep.
pub trait Clock: Send + Sync {
    /// Monotonic time since the clock's origin.
    fn now(&self) -> Duration;
    /// Wall-clock time, for HTTP-date `Retry-After` values.
    fn wall(&self) -> SystemTime;
    /// Sleeps `d`. Returns `Err(Error::Cancelled)` if `cancel` is cancelled before or during
    /// the sleep (and then returns early); that is the only error.
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> Result<()>;
}

/// Real time: sleeps really wait, and `now` is the time since one origin shared by every
/// `SystemClock` of the process (the first one made), so clocks made at different times tell
/// the same time. A retrier's breaker and budget keep instants across calls: a clock made
/// per call (`&SystemClock::new()`) is as good as one kept.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// The process's real-time clock.
    pub fn new() -> SystemClock {
        SystemClock {
            origin: process_origin(),
        }
    }
}

/// The origin of every [`SystemClock`] (and `ThreadTimer`): the first time one was asked for.
pub(crate) fn process_origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }
    /// Waits on the token's condition variable with a timeout, so a cancel wakes it at once.
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> Result<()> {
        if cancel.is_cancelled() || cancel.wait(d) {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// Virtual time for tests: sleeps advance the clock instantly.
#[derive(Debug)]
pub struct VirtualClock {
    now: AtomicU64,
    epoch: SystemTime,
}

/// 2025-01-01T00:00:00Z: the default wall time of a [`VirtualClock`] at virtual zero.
const DEFAULT_EPOCH_SECS: u64 = 1_735_689_600;

impl VirtualClock {
    /// A clock at virtual zero whose wall time starts at 2025-01-01T00:00:00Z.
    pub fn new() -> VirtualClock {
        VirtualClock::with_epoch(UNIX_EPOCH + Duration::from_secs(DEFAULT_EPOCH_SECS))
    }

    /// A clock at virtual zero whose wall time starts at `epoch`.
    pub fn with_epoch(epoch: SystemTime) -> VirtualClock {
        VirtualClock {
            now: AtomicU64::new(0),
            epoch,
        }
    }

    /// Moves virtual time forward by `d` (saturating at `u64::MAX` nanoseconds).
    pub fn advance(&self, d: impl Into<Duration>) {
        let d = to_nanos(d.into());
        // fetch_update with a closure that always returns Some cannot fail.
        let _ = self
            .now
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                Some(t.saturating_add(d))
            });
    }
}

impl Default for VirtualClock {
    fn default() -> Self {
        VirtualClock::new()
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        from_nanos(self.now.load(Ordering::Acquire))
    }
    /// The epoch plus virtual now (the epoch itself if that would overflow).
    fn wall(&self) -> SystemTime {
        self.epoch.checked_add(self.now()).unwrap_or(self.epoch)
    }
    /// Checks the token, then advances virtual time by `d` at once.
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> Result<()> {
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        self.advance(d);
        Ok(())
    }
}

/// What the operation is told about the attempt it is making.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptCtx {
    /// Attempt number, 1 for the first.
    pub attempt: u32,
    /// How long this attempt may take: `min(timeout, time left before the deadline)`
    /// (`None`: no limit). The operation enforces it (for example as its HTTP client's
    /// timeout).
    pub timeout: Option<Duration>,
}

/// Reported after every attempt, for metrics and logs, and once more when a call stops before
/// an attempt (cancelled, its deadline passed, the breaker refused): an event for the attempt
/// not sent, with no outcome, whose decision says why. So a call's last event always says how
/// it ended. Its `Display` is one log line: `attempt 2: 503 after 120ms, retry in 1.2s`,
/// `attempt 3: not sent, stop: cancelled`.
///
/// Times are measured on the retrier's [`Clock`] from the start of the call (the first
/// attempt's send), so the first attempt starts at zero.
#[derive(Debug)]
pub struct AttemptEvent<'a, E> {
    /// Attempt number, 1 for the first.
    pub attempt: u32,
    /// How it ended (`None`: it was not sent, the call stopped before it).
    pub outcome: Option<Outcome>,
    /// The attempt's error (`None` when it succeeded or was not sent).
    pub error: Option<&'a E>,
    /// The parsed Retry-After hint, if any.
    pub retry_after: Option<Duration>,
    /// When the attempt was sent (or, not sent, when the call stopped).
    pub start: Duration,
    /// When its outcome was known (or, not sent, when the call stopped).
    pub end: Duration,
    /// What the policy decided (for a retry, the sleep chosen). For a hedged call's copy
    /// (see [`AttemptEvent::copy`]) whose event does not end the call, the decision is about
    /// the next copy: `Retry { sleep }`, it leaves after `sleep` unless an answer comes first
    /// (zero: at once); `Stop(reason)`, no more copies leave (the call waits for those in
    /// flight). A cancelled copy says `Stop(Cancelled)`.
    pub decision: Decision,
    /// What this event says of a copy of a hedged call (`None`: a call without hedging, whose
    /// events come one per attempt as it ends).
    pub copy: Option<CopyEvent>,
}

/// The event of one copy of a hedged call ([`crate::policy::HedgingPolicy`]): each copy is
/// `Sent`, then either `Answered` or `Cancelled`, so the copies, the winner (the `Answered`
/// event whose decision is [`Decision::Done`]) and the cancellations can all be read off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyEvent {
    /// The copy left (no outcome; `start` = `end` = when).
    Sent,
    /// The copy's answer came, or its attempt timeout cut it off (the outcome).
    Answered,
    /// The copy was dropped unanswered: another copy won, one failed fatally, the call was
    /// cancelled or reached its deadline (no outcome; `end` = when).
    Cancelled,
}

impl<E> AttemptEvent<'_, E> {
    /// The sleep before the next attempt, if the policy retries.
    pub fn sleep(&self) -> Option<Duration> {
        self.decision.sleep()
    }

    /// How long the attempt took.
    pub fn took(&self) -> Duration {
        self.end.saturating_sub(self.start)
    }
}

// By hand: derived impls would require `E: Clone`, but only a reference is held.
impl<E> Clone for AttemptEvent<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E> Copy for AttemptEvent<'_, E> {}

impl<E> fmt::Display for AttemptEvent<'_, E> {
    /// `attempt 2: 503 after 120ms, retry in 1.2s`, or `attempt 3: not sent, stop: cancelled`
    /// (the error itself is left to the caller).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.copy, self.decision) {
            (Some(CopyEvent::Sent), decision) => {
                write!(f, "copy {}: sent at {}, ", self.attempt, Human(self.start))?;
                return match decision {
                    Decision::Retry { sleep } => write!(f, "next copy in {}", Human(sleep)),
                    _ => f.write_str("no more copies"),
                };
            }
            (Some(CopyEvent::Cancelled), _) => {
                return write!(
                    f,
                    "copy {}: cancelled after {}",
                    self.attempt,
                    Human(self.took())
                );
            }
            (Some(CopyEvent::Answered), Decision::Retry { sleep }) => {
                let outcome = NotSent(self.outcome);
                let took = Human(self.took());
                return write!(
                    f,
                    "copy {}: {outcome} after {took}, next copy in {}",
                    self.attempt,
                    Human(sleep)
                );
            }
            (Some(CopyEvent::Answered), _) => {
                let outcome = NotSent(self.outcome);
                let took = Human(self.took());
                return write!(
                    f,
                    "copy {}: {outcome} after {took}, {}",
                    self.attempt, self.decision
                );
            }
            (None, _) => {}
        }
        match self.outcome {
            Some(outcome) => write!(
                f,
                "attempt {}: {outcome} after {}, {}",
                self.attempt,
                Human(self.took()),
                self.decision
            ),
            None => write!(f, "attempt {}: not sent, {}", self.attempt, self.decision),
        }
    }
}

/// An event's outcome for logs: the outcome, or `not sent`.
pub(crate) struct NotSent(pub(crate) Option<Outcome>);

impl fmt::Display for NotSent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(outcome) => outcome.fmt(f),
            None => f.write_str("not sent"),
        }
    }
}

/// Why [`Retrier::retry`] gave up.
///
/// Its `Display` says why and after how many attempts; the last attempt's error is its
/// [`source`](std::error::Error::source), so an error chain shows each cause once.
#[derive(Debug)]
pub enum RetryError<E> {
    /// The policy stopped: the last attempt's error and why no retry followed.
    Stopped {
        /// Why the policy stopped.
        reason: StopReason,
        /// The last attempt's error.
        error: E,
        /// Attempts made.
        attempts: u32,
    },
    /// The cancel token was cancelled before an attempt or during a sleep.
    Cancelled {
        /// The last attempt's error, if an attempt was made.
        last: Option<E>,
        /// Attempts made.
        attempts: u32,
    },
    /// The circuit breaker refused the next attempt.
    BreakerOpen {
        /// The last attempt's error, if an attempt was made.
        last: Option<E>,
        /// Attempts made.
        attempts: u32,
    },
    /// The policy stopped after an attempt the async executor cut off at its timeout (so
    /// there is no error of the operation's to return).
    TimedOut {
        /// Why the policy stopped.
        reason: StopReason,
        /// The last attempt's time limit.
        timed_out: TimedOut,
        /// Attempts made.
        attempts: u32,
    },
}

impl<E> RetryError<E> {
    /// Attempts made before giving up.
    pub fn attempts(&self) -> u32 {
        match self {
            RetryError::Stopped { attempts, .. }
            | RetryError::Cancelled { attempts, .. }
            | RetryError::BreakerOpen { attempts, .. }
            | RetryError::TimedOut { attempts, .. } => *attempts,
        }
    }

    /// The last attempt's error, if an attempt was made and returned one (`None` too when the
    /// async executor cut it off).
    pub fn last_error(&self) -> Option<&E> {
        match self {
            RetryError::Stopped { error, .. } => Some(error),
            RetryError::Cancelled { last, .. } | RetryError::BreakerOpen { last, .. } => {
                last.as_ref()
            }
            RetryError::TimedOut { .. } => None,
        }
    }

    /// Consumes `self`, returning the last attempt's error as [`RetryError::last_error`] does.
    pub fn into_last_error(self) -> Option<E> {
        match self {
            RetryError::Stopped { error, .. } => Some(error),
            RetryError::Cancelled { last, .. } | RetryError::BreakerOpen { last, .. } => last,
            RetryError::TimedOut { .. } => None,
        }
    }

    /// Why the call gave up.
    pub fn reason(&self) -> StopReason {
        match self {
            RetryError::Stopped { reason, .. } | RetryError::TimedOut { reason, .. } => *reason,
            RetryError::Cancelled { .. } => StopReason::Cancelled,
            RetryError::BreakerOpen { .. } => StopReason::BreakerOpen,
        }
    }
}

impl<E> fmt::Display for RetryError<E> {
    /// `attempts exhausted after 5 attempts`: the cause is the error's `source()`, not
    /// repeated here.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, attempts) = (self.reason().describe(), self.attempts());
        write!(
            f,
            "{what} after {attempts} attempt{}",
            if attempts == 1 { "" } else { "s" }
        )
    }
}

impl<E: std::error::Error + 'static> std::error::Error for RetryError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RetryError::TimedOut { timed_out, .. } => Some(timed_out),
            _ => self
                .last_error()
                .map(|e| e as &(dyn std::error::Error + 'static)),
        }
    }
}

/// Runs operations with retries. Share one across threads (`&Retrier` or `Arc<Retrier>`) to
/// share its budget and breaker; the jitter generator is shared too, behind a mutex.
#[derive(Debug)]
pub struct Retrier {
    policy: RetryPolicy,
    idempotency: Idempotency,
    budget: Option<Mutex<Budget>>,
    breaker: Option<Mutex<Breaker>>,
    rate: Option<Mutex<RateLimit>>,
    rng: Mutex<SimRng>,
}

/// The AWS adaptive mode's rate limiter, made at the first instant a call asks it (so it
/// measures from the executor's clock, whatever its origin).
#[derive(Debug)]
struct RateLimit {
    config: AdaptiveRateConfig,
    limiter: Option<AdaptiveRateLimiter>,
}

impl RateLimit {
    fn at(&mut self, now: Duration) -> &mut AdaptiveRateLimiter {
        let config = self.config;
        self.limiter
            .get_or_insert_with(|| AdaptiveRateLimiter::new(config, now))
    }
}

impl Retrier {
    /// A builder with defaults fit for real code (listed at [`RetrierBuilder`]).
    pub fn builder() -> RetrierBuilder {
        RetrierBuilder::default()
    }

    /// A retrier running `policy` for idempotent requests, without budget or breaker, its
    /// jitter seeded from the operating system's entropy (so processes differ). The policy is
    /// checked with [`RetryPolicy::validate`]; its errors name the policy's field
    /// (`max_attempts`).
    pub fn new(policy: RetryPolicy) -> Result<Retrier> {
        Retrier::with_rng(policy, entropy_rng())
    }

    /// As [`Retrier::new`], with the jitter seeded by `seed`: the same seed gives the same
    /// sleeps, for tests and reproducible runs.
    pub fn seeded(policy: RetryPolicy, seed: u64) -> Result<Retrier> {
        Retrier::with_rng(policy, from_seed(seed))
    }

    /// As [`Retrier::new`], with the jitter drawn from `rng`: for a caller that hands every
    /// client a stream of its own (jitterlab's live mode gives each the simulator's stream).
    ///
    /// A policy with [`RetryPolicy::hedging`] is refused (the error names `hedging`): the
    /// blocking executor runs one attempt at a time, and a copy sent while another waits needs
    /// a thread of its own. [`RetrierBuilder::build_async`] makes a hedging retrier.
    pub fn with_rng(policy: RetryPolicy, rng: rand_pcg::Pcg64Mcg) -> Result<Retrier> {
        if policy.hedging.is_some() {
            return Err(crate::param::ParamError::new(
                "hedging",
                "a hedging policy",
                "none for the blocking executor, which cannot send a copy while an attempt \
                 waits: build_async or build_async_on (the async executor) hedges",
            )
            .into());
        }
        Retrier::hedging_with_rng(policy, rng)
    }

    /// As [`Retrier::with_rng`], a hedging policy allowed: for the async executor only.
    fn hedging_with_rng(policy: RetryPolicy, rng: rand_pcg::Pcg64Mcg) -> Result<Retrier> {
        policy.validate()?;
        Ok(Retrier {
            policy,
            idempotency: Idempotency::Idempotent,
            budget: None,
            breaker: None,
            rate: None,
            rng: Mutex::new(rng),
        })
    }

    /// Sets whether the requests may be repeated (non-idempotent ones are never retried).
    pub fn with_idempotency(mut self, idempotency: Idempotency) -> Retrier {
        self.idempotency = idempotency;
        self
    }

    /// Adds a retry budget shared by every call.
    pub fn with_budget(mut self, budget: Budget) -> Retrier {
        self.budget = Some(Mutex::new(budget));
        self
    }

    /// Adds a circuit breaker shared by every call.
    pub fn with_breaker(mut self, breaker: Breaker) -> Retrier {
        self.breaker = Some(Mutex::new(breaker));
        self
    }

    /// Adds the AWS adaptive mode's client-side rate limiter, shared by every call: each
    /// attempt waits for its token (once a throttling answer has turned it on). The error
    /// names the constant not allowed.
    pub fn with_rate_limiter(mut self, config: AdaptiveRateConfig) -> Result<Retrier> {
        config.validate()?;
        self.rate = Some(Mutex::new(RateLimit {
            config,
            limiter: None,
        }));
        Ok(self)
    }

    /// The rate limiter's state (`None`: none, or no call has asked it yet).
    pub fn rate_limiter(&self) -> Option<AdaptiveRateLimiter> {
        self.rate.as_ref().and_then(|r| lock(r).limiter.clone())
    }

    /// The policy.
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// Runs `op` in real time (a [`SystemClock`]) until it succeeds or the policy gives up, without cancellation or per-attempt
    /// reports: [`Retrier::retry`] has those.
    pub fn call<T, E, F>(&self, op: F) -> Result<T, RetryError<E>>
    where
        E: Classify,
        F: FnMut(AttemptCtx) -> Result<T, E>,
    {
        self.retry(&SystemClock::new(), &CancelToken::new(), op, |_| {})
    }

    /// Runs `op` until it succeeds or the policy gives up, sleeping on `clock` between
    /// attempts. `on_attempt` sees every attempt's outcome, error and decision.
    ///
    /// The breaker (if any) is asked before each attempt and told each result (a failure is
    /// [`Outcome::is_server_failure`], which includes [`Outcome::Fatal`]; an
    /// [`Outcome::Invalid`] one is not told); the budget (if any) is kept by
    /// [`RetryPolicy::decide`]. Both keep `clock`'s instants from call to call, so every call
    /// of a retrier needs a clock on the same timeline: any [`SystemClock`] (they share one
    /// origin), or the same [`VirtualClock`].
    pub fn retry<T, E, C, F, O>(
        &self,
        clock: &C,
        cancel: &CancelToken,
        op: F,
        on_attempt: O,
    ) -> Result<T, RetryError<E>>
    where
        C: Clock + ?Sized,
        E: Classify,
        F: FnMut(AttemptCtx) -> Result<T, E>,
        O: FnMut(&AttemptEvent<'_, E>),
    {
        self.run(Call::new(self, on_attempt), clock, cancel, op)
    }

    /// As [`Retrier::retry`], for a request that is `idempotency` whatever the retrier's
    /// default (a `POST` with an idempotency key through a retrier made for `GET`s).
    pub fn retry_as<T, E, C, F, O>(
        &self,
        idempotency: Idempotency,
        clock: &C,
        cancel: &CancelToken,
        op: F,
        on_attempt: O,
    ) -> Result<T, RetryError<E>>
    where
        C: Clock + ?Sized,
        E: Classify,
        F: FnMut(AttemptCtx) -> Result<T, E>,
        O: FnMut(&AttemptEvent<'_, E>),
    {
        let call = Call::new(self, on_attempt).idempotency(idempotency);
        self.run(call, clock, cancel, op)
    }

    /// The blocking retry loop.
    fn run<T, E, C, F, O>(
        &self,
        mut call: Call<'_, E, O>,
        clock: &C,
        cancel: &CancelToken,
        mut op: F,
    ) -> Result<T, RetryError<E>>
    where
        C: Clock + ?Sized,
        E: Classify,
        F: FnMut(AttemptCtx) -> Result<T, E>,
        O: FnMut(&AttemptEvent<'_, E>),
    {
        #[cfg(feature = "tracing")]
        let _span = call::call_span().entered();
        if self.policy.hedging.is_some() {
            // Only an async retrier's has hedging (`AsyncRetrier::retrier`): its blocking
            // calls send no copy and so no retry either, the policy's backoff being unused.
            call = call.idempotency(Idempotency::NonIdempotent);
        }
        loop {
            while let Some(wait) = call.token_wait(clock.now()) {
                if clock.sleep(wait, cancel).is_err() {
                    return Err(call.cancelled(clock.now()));
                }
            }
            let ctx = call.begin(clock.now(), cancel.is_cancelled())?;
            let result = op(ctx);
            let (now, wall, result) = (clock.now(), clock.wall(), result.map_err(Failure::Error));
            match call.after(now, wall, result, cancel.is_cancelled()) {
                Next::Return(result) => return result,
                Next::Sleep(sleep) => {
                    if clock.sleep(sleep, cancel).is_err() {
                        return Err(call.cancelled(clock.now()));
                    }
                }
            }
        }
    }
}

/// A jitter generator seeded from the operating system's randomness (never used by the
/// simulator), without a dependency of its own: std's `RandomState` draws its SipHash keys
/// from the operating system once per thread, so hashing a counter, the process id and the
/// time with two fresh states gives 128 bits that differ in every process and every call (a
/// fleet must not draw the same jitter; nothing here needs to be secret).
fn entropy_rng() -> SimRng {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let (process, since_epoch) = process_and_time();
    let word = |salt: u64| {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(salt);
        h.write_u64(call);
        h.write_u32(process);
        h.write_u128(since_epoch);
        h.finish()
    };
    SimRng::new(u128::from(word(1)) << 64 | u128::from(word(2)))
}

/// The process id and the wall time in nanoseconds, which tell processes apart.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
fn process_and_time() -> (u32, u128) {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    (std::process::id(), since_epoch)
}

/// On wasm32-unknown-unknown std has neither (both would panic), nor any randomness for
/// `RandomState`: every instance draws the same jitter unless seeded (`.seed(n)` with
/// randomness of the host's, such as `crypto.getRandomValues`).
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
fn process_and_time() -> (u32, u128) {
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::{Backoff, Jitter};
    use crate::policy::{BreakerConfig, BudgetConfig, RatioDeposit, RetryAfterMode};
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
    pub(super) fn server(
        script: Vec<Reply>,
    ) -> impl FnMut(AttemptCtx) -> Result<&'static str, Reply> {
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
            let call = |script: Vec<Reply>| match r.retry(
                &clock,
                &CancelToken::new(),
                server(script),
                |_| {},
            ) {
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

    #[test]
    fn errors_chain_each_cause_once() {
        let e = RetryError::Stopped {
            reason: StopReason::Attempts,
            error: ReadError(std::io::Error::other("connection reset")),
            attempts: 5,
        };
        let mut chain = Vec::new();
        let mut next: Option<&dyn std::error::Error> = Some(&e);
        while let Some(cause) = next {
            chain.push(cause.to_string());
            next = cause.source();
        }
        assert_eq!(
            chain,
            [
                "attempts exhausted after 5 attempts",
                "reading the answer",
                "connection reset"
            ]
        );
        let e: RetryError<Outcome> = RetryError::Cancelled {
            last: None,
            attempts: 1,
        };
        assert_eq!(e.to_string(), "cancelled after 1 attempt");
        assert_eq!(e.into_last_error(), None);
    }
}
