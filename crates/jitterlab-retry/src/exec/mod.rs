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
    RetryPolicy,
};

use crate::time::{Human, from_nanos, to_nanos};

/// The executor's jitter generator: small, fast, seedable.
type SimRng = rand_pcg::Pcg64Mcg;

/// A generator seeded from one word (the same seed, the same sleeps).
fn from_seed(seed: u64) -> SimRng {
    rand_core::SeedableRng::seed_from_u64(seed)
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
pub use classify::{ByClassify, Classifier, Classify, RetryIf, TimedOut};
mod metrics;
pub use metrics::{Metrics, Observer};
mod retry_error;
pub use retry_error::{RetryError, source_of};

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
    /// The attempt was in flight when the call was cancelled, and the async executor dropped
    /// its future (no outcome; `start` is when it was sent, `end` when it was dropped). A
    /// call without hedging only; a hedged call's copies say [`CopyEvent::Cancelled`].
    pub dropped: bool,
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
    /// `attempt 2: 503 after 120ms, retry in 1.2s`, `attempt 3: not sent, stop: cancelled`,
    /// or `attempt 3: dropped after 300ms, stop: cancelled` (the error itself is left to the
    /// caller).
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
        if self.dropped {
            return write!(
                f,
                "attempt {}: dropped after {}, {}",
                self.attempt,
                Human(self.took()),
                self.decision
            );
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
    counts: metrics::Counts,
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
            counts: metrics::Counts::default(),
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

    /// Shows `observer` every attempt's event of every call (a metrics exporter's hook:
    /// see [`Observer`]), after each call's own `on_attempt`.
    pub fn with_observer(mut self, observer: impl Observer + 'static) -> Retrier {
        self.counts.observer = Some(std::sync::Arc::new(observer));
        self
    }

    /// The counts so far, the budget's tokens and the breaker's state at `now` (on the
    /// clock the calls use; [`AsyncRetrier::metrics`](asynchronous::AsyncRetrier::metrics)
    /// reads its timer).
    pub fn metrics(&self, now: Duration) -> Metrics {
        let budget = self.budget.as_ref().map(|b| lock(b).available(now));
        let breaker = self.breaker.as_ref().map(|b| lock(b).state());
        self.counts.snapshot(budget, breaker)
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
        self.run(Call::new(self, on_attempt, ByClassify), clock, cancel, op)
    }

    /// This retrier with a closure that says whether an error is worth retrying, for any
    /// error type (`String`, `anyhow::Error`, another crate's; no [`Classify`] needed):
    /// `true` retries it (the breaker and the budget count a failure), `false` ends the call
    /// at once (they do not count it).
    ///
    /// ```
    /// use jitterlab_retry::prelude::*;
    ///
    /// let retrier = Retrier::builder().seed(1).build()?;
    /// let mut busy = 2;
    /// let answer = retrier
    ///     .retry_if(|e: &String| e.starts_with("busy"))
    ///     .retry(&VirtualClock::new(), &CancelToken::new(), |_| {
    ///         busy -= 1;
    ///         if busy >= 0 { Err("busy, try later".to_string()) } else { Ok(42) }
    ///     }, |_| {});
    /// assert_eq!(answer.ok(), Some(42));
    /// # Ok::<(), jitterlab_retry::Error>(())
    /// ```
    pub fn retry_if<E, P: Fn(&E) -> bool>(&self, retryable: P) -> RetrierWith<'_, RetryIf<P>> {
        RetrierWith {
            retrier: self,
            classifier: RetryIf(retryable),
        }
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
        let call = Call::new(self, on_attempt, ByClassify).idempotency(idempotency);
        self.run(call, clock, cancel, op)
    }

    /// The blocking retry loop.
    fn run<T, E, C, F, O, K>(
        &self,
        mut call: Call<'_, E, O, K>,
        clock: &C,
        cancel: &CancelToken,
        mut op: F,
    ) -> Result<T, RetryError<E>>
    where
        C: Clock + ?Sized,
        K: Classifier<E>,
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

/// A [`Retrier`] whose calls read their errors with the classifier `K` instead of
/// [`Classify`]: made by [`Retrier::retry_if`]. The same policy, budget and breaker.
#[derive(Debug, Clone, Copy)]
pub struct RetrierWith<'r, K> {
    retrier: &'r Retrier,
    classifier: K,
}

impl<K> RetrierWith<'_, K> {
    /// As [`Retrier::call`]: real time, no cancellation, no per-attempt reports.
    pub fn call<T, E, F>(&self, op: F) -> Result<T, RetryError<E>>
    where
        K: Classifier<E> + Clone,
        F: FnMut(AttemptCtx) -> Result<T, E>,
    {
        self.retry(&SystemClock::new(), &CancelToken::new(), op, |_| {})
    }

    /// As [`Retrier::retry`].
    pub fn retry<T, E, C, F, O>(
        &self,
        clock: &C,
        cancel: &CancelToken,
        op: F,
        on_attempt: O,
    ) -> Result<T, RetryError<E>>
    where
        K: Classifier<E> + Clone,
        C: Clock + ?Sized,
        F: FnMut(AttemptCtx) -> Result<T, E>,
        O: FnMut(&AttemptEvent<'_, E>),
    {
        let call = Call::new(self.retrier, on_attempt, self.classifier.clone());
        self.retrier.run(call, clock, cancel, op)
    }

    /// As [`Retrier::retry_as`].
    pub fn retry_as<T, E, C, F, O>(
        &self,
        idempotency: Idempotency,
        clock: &C,
        cancel: &CancelToken,
        op: F,
        on_attempt: O,
    ) -> Result<T, RetryError<E>>
    where
        K: Classifier<E> + Clone,
        C: Clock + ?Sized,
        F: FnMut(AttemptCtx) -> Result<T, E>,
        O: FnMut(&AttemptEvent<'_, E>),
    {
        let call = Call::new(self.retrier, on_attempt, self.classifier.clone());
        self.retrier
            .run(call.idempotency(idempotency), clock, cancel, op)
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
mod tests;
