//! [`RetrierBuilder`]: a [`Retrier`] with defaults for real code, set field by field.
//!
//! The simulator's defaults (`RetryPolicy::new`: a 1 s attempt timeout, no deadline, five
//! attempts, no budget) describe a scenario's clients; a program calling a real service wants
//! a bounded total time, a budget against retry storms and jitter that differs between
//! processes. The builder's methods are named after the fields they set, and so are its
//! errors (`invalid value for `max_attempts`: 0: ...`).

use std::time::Duration;

use super::{Retrier, entropy_rng, from_seed};
use crate::backoff::{Backoff, BackoffParams, Jitter};
use crate::error::Result;
use crate::param::ParamError;
use crate::policy::{
    AdaptiveRateConfig, Breaker, BreakerConfig, Budget, BudgetConfig, HedgingPolicy, Idempotency,
    RetryAfterHeader, RetryAfterMode, RetryAfterPolicy, RetryOn, RetryPolicy, Throttling,
};

/// Builds a [`Retrier`]. Defaults, each with the method that changes it:
///
/// | method | default | why |
/// | --- | --- | --- |
/// | [`jitter`](Self::jitter) | [`Jitter::Full`] | spreads a burst of clients the most |
/// | [`base`](Self::base) | 100 ms | the first sleep is at most this |
/// | [`multiplier`](Self::multiplier) | 2.0 | the nominal sleep doubles per retry |
/// | [`cap`](Self::cap) | 10 s | no sleep is longer |
/// | [`factor`](Self::factor) | 0.2 | the spread of `proportional` and `additive` jitter |
/// | [`max_attempts`](Self::max_attempts) | 4 (the first and 3 retries) | |
/// | [`timeout`](Self::timeout) | none | per attempt, passed to the operation in [`super::AttemptCtx`] |
/// | [`deadline`](Self::deadline) | 30 s | the whole call, sleeps included; shortens the last attempt's timeout |
/// | [`fit_last_attempt`](Self::fit_last_attempt) | off: a sleep past the deadline ends the call | shortens that sleep to leave time for one more attempt |
/// | [`retry_on`](Self::retry_on) | [`RetryOn::recommended`]: 409, 429, 500, 502, 503, 504, timeouts, connection errors (500 as botocore and google-api-core do) | other 4xx unless opted in ([`RetryOn::with_status`]); [`crate::policy::Outcome::Fatal`] never |
/// | [`retry_after`](Self::retry_after) | honoured as a minimum sleep, hints above 60 s clamped to 60 s | a server's pause, within reason |
/// | [`retry_after_max_extra`](Self::retry_after_max_extra) | none | honour a hint only so far above the backoff (AWS: 5 s) |
/// | [`retry_after_header`](Self::retry_after_header) | `Retry-After` | AWS: `x-amz-retry-after`, in milliseconds |
/// | [`throttling`](Self::throttling) | none: every failure uses the backoff above | throttling answers (429) with a backoff and a budget cost of their own |
/// | [`budget`](Self::budget) | token bucket: capacity 500, retry 5, retry after a timeout 10 (after a throttling answer 5), refund 1 | the AWS SDK's standard mode: retries stop when most calls fail |
/// | [`breaker`](Self::breaker) | none | |
/// | [`rate_limiter`](Self::rate_limiter) | none | the AWS SDKs' adaptive mode: attempts wait for tokens whose rate falls at throttling answers |
/// | [`hedging`](Self::hedging) | none | copies of a slow call (gRPC's `hedgingPolicy`), in place of retries: the async executor only |
/// | [`idempotency`](Self::idempotency) | [`Idempotency::Idempotent`] | say `NonIdempotent` for a POST without a key |
/// | [`seed`](Self::seed) | entropy from the operating system | a fleet must not draw the same jitter |
///
/// ```
/// use std::time::Duration;
/// use jitterlab_retry::prelude::*;
///
/// let retrier = Retrier::builder()
///     .base(Duration::from_millis(50))
///     .max_attempts(6)
///     .deadline(Duration::from_secs(5))
///     .build()?;
/// assert_eq!(retrier.policy().max_attempts, Some(6));
///
/// // Errors name the builder's field.
/// let err = Retrier::builder().max_attempts(0).build().unwrap_err();
/// assert!(err.to_string().starts_with("invalid value for `max_attempts`: 0"), "{err}");
/// # Ok::<(), jitterlab_retry::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct RetrierBuilder {
    jitter: Jitter,
    base: Duration,
    multiplier: f64,
    cap: Duration,
    factor: f64,
    max_attempts: Option<u32>,
    timeout: Option<Duration>,
    deadline: Option<Duration>,
    fit_last_attempt: Option<Duration>,
    retry_on: RetryOn,
    retry_after: RetryAfterPolicy,
    throttling: Option<(RetryOn, Option<BackoffParams>)>,
    budget: Option<BudgetConfig>,
    breaker: Option<BreakerConfig>,
    rate_limiter: Option<AdaptiveRateConfig>,
    hedging: Option<HedgingPolicy>,
    idempotency: Idempotency,
    seed: Option<u64>,
}

impl Default for RetrierBuilder {
    /// The defaults in the table above.
    fn default() -> Self {
        RetrierBuilder {
            jitter: Jitter::Full,
            base: Duration::from_millis(100),
            multiplier: 2.0,
            cap: Duration::from_secs(10),
            factor: crate::backoff::DEFAULT_FACTOR,
            max_attempts: Some(4),
            timeout: None,
            deadline: Some(Duration::from_secs(30)),
            fit_last_attempt: None,
            retry_on: RetryOn::recommended(),
            retry_after: RetryAfterPolicy {
                mode: RetryAfterMode::AtLeast,
                max: Some(Duration::from_secs(60)),
                ..RetryAfterPolicy::default()
            },
            throttling: None,
            budget: Some(BudgetConfig::token_bucket()),
            breaker: None,
            rate_limiter: None,
            hedging: None,
            idempotency: Idempotency::Idempotent,
            seed: None,
        }
    }
}

impl RetrierBuilder {
    /// How the sleep is drawn below its nominal value.
    pub fn jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }
    /// The nominal first sleep.
    pub fn base(mut self, base: Duration) -> Self {
        self.base = base;
        self
    }
    /// Growth of the nominal sleep per retry (at least 1).
    pub fn multiplier(mut self, multiplier: f64) -> Self {
        self.multiplier = multiplier;
        self
    }
    /// The longest sleep (at least `base`).
    pub fn cap(mut self, cap: Duration) -> Self {
        self.cap = cap;
        self
    }
    /// The spread `f` of `proportional` (`U[1-f, 1+f]`) and `additive` (`U[0, f]` above)
    /// jitter, 0 to 1.
    pub fn factor(mut self, factor: f64) -> Self {
        self.factor = factor;
        self
    }
    /// Attempts per call, the first included (at least 1).
    pub fn max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = Some(max_attempts);
        self
    }
    /// No limit on attempts: the deadline (or the budget) ends the call.
    pub fn unlimited_attempts(mut self) -> Self {
        self.max_attempts = None;
        self
    }
    /// The timeout of one attempt (`None`: none), above zero.
    pub fn timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = timeout.into();
        self
    }
    /// The time limit of a whole call, sleeps included (`None`: none), above zero.
    pub fn deadline(mut self, deadline: impl Into<Option<Duration>>) -> Self {
        self.deadline = deadline.into();
        self
    }
    /// When the drawn sleep would end past the deadline, shorten it so that `last` is left for
    /// one more attempt (above zero; `None`: stop the call instead, the default). A sleep is
    /// never shortened below an honoured `Retry-After`.
    pub fn fit_last_attempt(mut self, last: impl Into<Option<Duration>>) -> Self {
        self.fit_last_attempt = last.into();
        self
    }
    /// Which outcomes are retried.
    pub fn retry_on(mut self, retry_on: RetryOn) -> Self {
        self.retry_on = retry_on;
        self
    }
    /// How `Retry-After` is honoured: `mode`, and the largest hint honoured (`None`: any;
    /// above zero: a largest hint of zero would cut every hint to nothing, which
    /// [`RetryAfterMode::Ignore`] says plainly).
    pub fn retry_after(mut self, mode: RetryAfterMode, max: impl Into<Option<Duration>>) -> Self {
        self.retry_after.mode = mode;
        self.retry_after.max = max.into();
        self
    }
    /// Honour a hint only up to `max_extra` above the backoff sleep (`None`: no such
    /// limit). The AWS SDKs: 5 s.
    pub fn retry_after_max_extra(mut self, max_extra: impl Into<Option<Duration>>) -> Self {
        self.retry_after.max_extra = max_extra.into();
        self
    }
    /// Which header the hint is read from: `Retry-After` (the default) or the AWS SDKs'
    /// `x-amz-retry-after` in milliseconds.
    pub fn retry_after_header(mut self, header: RetryAfterHeader) -> Self {
        self.retry_after.header = header;
        self
    }
    /// The outcomes in `on` are throttling answers: a retry after one draws its sleep from
    /// `backoff` (`None`: the retrier's own backoff) and costs a token bucket its
    /// `throttling_cost` (see [`crate::policy::Throttling`]).
    pub fn throttling(mut self, on: RetryOn, backoff: Option<BackoffParams>) -> Self {
        self.throttling = Some((on, backoff));
        self
    }
    /// The retry budget shared by every call of the retrier (`None`: none).
    pub fn budget(mut self, budget: impl Into<Option<BudgetConfig>>) -> Self {
        self.budget = budget.into();
        self
    }
    /// The AWS adaptive mode's client-side rate limiter, shared by every call of the retrier
    /// (`None`: none).
    pub fn rate_limiter(mut self, config: impl Into<Option<AdaptiveRateConfig>>) -> Self {
        self.rate_limiter = config.into();
        self
    }

    /// The circuit breaker shared by every call of the retrier (`None`: none).
    pub fn breaker(mut self, breaker: impl Into<Option<BreakerConfig>>) -> Self {
        self.breaker = breaker.into();
        self
    }
    /// Hedged calls in place of retries (`None`: none): copies every `delay` while none has
    /// answered, the first success winning (see [`HedgingPolicy`]). Only the async executor
    /// runs them: [`build`](Self::build) makes a retrier that the blocking executor refuses to
    /// run. Not with a [`rate_limiter`](Self::rate_limiter), whose token wait holds one
    /// attempt per call; errors name `hedging.delay`, `hedging.max_attempts` or `hedging`.
    pub fn hedging(mut self, hedging: impl Into<Option<HedgingPolicy>>) -> Self {
        self.hedging = hedging.into();
        self
    }
    /// Whether the calls may be repeated (non-idempotent ones are never retried).
    pub fn idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = idempotency;
        self
    }
    /// Seeds the jitter with `seed` instead of entropy: the same seed, the same sleeps.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The policy these settings describe, checked; errors name the field (`cap`, `timeout`,
    /// `retry_after_max`).
    pub fn policy(&self) -> Result<RetryPolicy> {
        if self.retry_after.max == Some(Duration::ZERO) {
            return Err(ParamError::new(
                "retry_after_max",
                "0ms",
                "a duration greater than 0, or None for no limit \
                 (RetryAfterMode::Ignore ignores every hint)",
            )
            .into());
        }
        let backoff = Backoff::from_params(BackoffParams {
            jitter: self.jitter,
            base: self.base,
            multiplier: self.multiplier,
            cap: self.cap,
            factor: self.factor,
            ..BackoffParams::default()
        })?;
        let policy = RetryPolicy {
            backoff,
            retry_on: self.retry_on,
            max_attempts: self.max_attempts,
            timeout: self.timeout,
            deadline: self.deadline,
            retry_after: self.retry_after,
            fit_last_attempt: self.fit_last_attempt,
            throttling: self
                .throttling
                .map(|(on, params)| {
                    let backoff = params.map(Backoff::from_params).transpose()?;
                    Ok::<_, ParamError>(Throttling { on, backoff })
                })
                .transpose()?,
            hedging: self.hedging,
        };
        policy.validate()?;
        if self.hedging.is_some() && self.rate_limiter.is_some() {
            return Err(ParamError::new(
                "hedging",
                "a hedging policy",
                "no hedging with a rate_limiter: its token wait holds one attempt per call, \
                 and a copy would need a token of its own",
            )
            .into());
        }
        Ok(policy)
    }

    /// The retrier for the blocking executor, or the first setting that is not allowed (a
    /// [`hedging`](Self::hedging) policy is not: the async executor's
    /// [`build_async`](Self::build_async) runs it).
    pub fn build(&self) -> Result<Retrier> {
        let rng = self.rng();
        self.with_guards(Retrier::with_rng(self.policy()?, rng)?)
    }

    /// The retrier for the async executor, a hedging policy allowed.
    #[cfg(feature = "async")]
    pub(crate) fn build_for_async(&self) -> Result<Retrier> {
        let rng = self.rng();
        self.with_guards(Retrier::hedging_with_rng(self.policy()?, rng)?)
    }

    /// The jitter's generator: the seed's, or entropy's.
    fn rng(&self) -> rand_pcg::Pcg64Mcg {
        match self.seed {
            Some(seed) => from_seed(seed),
            None => entropy_rng(),
        }
    }

    /// `retrier` with the idempotency, budget, breaker and rate limiter set here.
    fn with_guards(&self, retrier: Retrier) -> Result<Retrier> {
        let mut retrier = retrier.with_idempotency(self.idempotency);
        if let Some(config) = self.budget {
            retrier = retrier.with_budget(Budget::new(config)?);
        }
        if let Some(config) = self.breaker {
            retrier = retrier.with_breaker(Breaker::new(config)?);
        }
        if let Some(config) = self.rate_limiter {
            retrier = retrier.with_rate_limiter(config)?;
        }
        Ok(retrier)
    }
}
