//! Retry budgets: a limit on retries shared by many requests, so that a failing server is not
//! hit by ever more retries (retry amplification).
//!
//! Five kinds, each after the system it copies:
//!
//! - `token_bucket` — AWS SDK standard retry mode: a bucket of `capacity` tokens (500); a
//!   retry costs `retry_cost` (5), or `timeout_cost` (10) after a timeout, or
//!   `throttling_cost` (5) after a throttling answer ([`RetryClass`]), and is denied when
//!   fewer tokens are left; a success returns the cost of the retry it came from, or
//!   `success_refund` (1) when it came from a first attempt; never above capacity. (The
//!   SDKs' 2026 behaviour: 14, 14, 5 and 1.)
//! - `ratio` — Finagle's `RetryBudget` (also Linkerd): over a sliding `window`, retries may
//!   reach `percent` % of the requests in the window plus a floor of `min_per_sec` per second
//!   of window. A request counts when it is sent, or, with [`RatioDeposit::Success`], when it
//!   succeeds (Finagle's default client stack, whose `RequeueFilter` deposits only then).
//! - `grpc` — gRPC retry throttling: `max_tokens` tokens, starting full; each failed attempt
//!   takes 1, each success gives back `token_ratio`; retries are allowed only while more than
//!   half the tokens are left.
//! - `adaptive` and `retry_breaker` — the two per-client limits of Brooker's 2022 retry
//!   simulator ([`crate::policy::adaptive`]): a bucket of `size` tokens that each new request
//!   refills by `fill`, a retry needing more than 1 token; and a breaker that stops retries
//!   while failed attempts per request since the start exceed `ratio`. Both count a request
//!   when it *begins* ([`Budget::on_begin`]), before its first attempt, as the reference does.
//! - `concurrency` — Envoy's cluster `RetryBudget`: a retry may start only while the retries
//!   in flight are fewer than `max(min_concurrency, ⌊percent % × active requests⌋)`. Active
//!   requests are attempts sent and not yet ended ([`Budget::on_send`]; Envoy's
//!   `requests + pending_requests` of the cluster: a request sleeping between attempts holds
//!   no upstream stream). A retry is in flight from its grant, through its sleep, until its
//!   attempt ends (Envoy's `RetryStateImpl::resetRetry` at the next `shouldRetry`) or it is
//!   given back ([`Budget::refund_retry`]) or abandoned ([`Budget::on_abandon`]).
//!
//! [`BudgetConfig`] is the validated configuration, [`Budget`] the state. The state is pure:
//! every method takes `now`. [`crate::policy::RetryPolicy::decide`] makes all the calls a
//! request needs (`on_request`, `on_success_at`, `on_failure`, `try_retry`); call them yourself
//! only when driving a budget without `decide` (`on_success_at`, not `on_success`: a ratio
//! budget with [`RatioDeposit::Success`] counts the request then).

use std::fmt;

use crate::param::ParamError;
use crate::policy::RetryClass;
use crate::policy::adaptive::{
    AdaptiveBucket, AdaptiveBucketConfig, RetryBreaker, RetryBreakerConfig,
};
use crate::policy::window::SlidingWindow;
use std::time::Duration;

use crate::time::{Exact, f64_to_nanos, to_nanos};

/// Scale of gRPC tokens: the spec allows three decimals in `token_ratio`, so tokens are kept
/// as integer thousandths (exact, and identical on every machine).
const MILLI: u64 = 1_000;

/// A retry budget's parameters, one variant per kind. Start from a kind's constructor
/// ([`BudgetConfig::token_bucket`], [`BudgetConfig::ratio`], ...);
/// [`BudgetConfig::validate`] checks them and [`Budget::new`] refuses invalid ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetConfig {
    /// AWS SDK standard retry mode.
    TokenBucket {
        /// Tokens when full (default 500).
        capacity: u32,
        /// Cost of a retry (default 5).
        retry_cost: u32,
        /// Cost of a retry after a timeout (default 10).
        timeout_cost: u32,
        /// Cost of a retry after a throttling answer (default 5).
        throttling_cost: u32,
        /// Tokens returned by a success on a first attempt (default 1).
        success_refund: u32,
    },
    /// Finagle/Envoy/Linkerd ratio budget.
    Ratio {
        /// Retries allowed per 100 requests in the window (default 20).
        percent: f64,
        /// Retries always allowed per second of window, whatever the traffic (default 10).
        min_per_sec: f64,
        /// Length of the sliding window (default 10 s).
        window: Duration,
        /// When a request counts (default: when it is sent).
        deposit: RatioDeposit,
    },
    /// gRPC retry throttling.
    Grpc {
        /// Tokens when full (default 10).
        max_tokens: f64,
        /// Tokens returned per success (default 0.1).
        token_ratio: f64,
    },
    /// Brooker 2022's adaptive retry bucket.
    Adaptive(AdaptiveBucketConfig),
    /// Brooker 2022's retry circuit breaker.
    RetryBreaker(RetryBreakerConfig),
    /// Envoy's retry budget: a limit on retries in flight.
    Concurrency {
        /// Retries in flight allowed per 100 active requests (default 20).
        percent: f64,
        /// Retries in flight always allowed, whatever the traffic (default 3).
        min_concurrency: u32,
    },
}

impl Default for BudgetConfig {
    /// [`BudgetConfig::token_bucket`]: the AWS SDK's standard mode.
    fn default() -> Self {
        BudgetConfig::token_bucket()
    }
}

impl BudgetConfig {
    /// The kind names, as [`BudgetConfig::kind`] gives them.
    pub const KINDS: [&'static str; 6] = [
        "token_bucket",
        "ratio",
        "grpc",
        "adaptive",
        "retry_breaker",
        "concurrency",
    ];

    /// The AWS SDK's standard retry mode before 2026: capacity 500, a retry costs 5 (10
    /// after a timeout, 5 after a throttling answer), a first-attempt success refunds 1.
    pub const fn token_bucket() -> BudgetConfig {
        BudgetConfig::TokenBucket {
            capacity: 500,
            retry_cost: 5,
            timeout_cost: 10,
            throttling_cost: 5,
            success_refund: 1,
        }
    }

    /// The cost of a retry of `class` in a token bucket (0 for the other kinds).
    pub const fn cost_of(&self, class: RetryClass) -> u32 {
        match *self {
            BudgetConfig::TokenBucket {
                retry_cost,
                timeout_cost,
                throttling_cost,
                ..
            } => match class {
                RetryClass::Transient => retry_cost,
                RetryClass::Timeout => timeout_cost,
                RetryClass::Throttling => throttling_cost,
            },
            _ => 0,
        }
    }

    /// Finagle's default `RetryBudget`: 20 % of the requests of the last 10 s, plus 10 per
    /// second.
    pub const fn ratio() -> BudgetConfig {
        BudgetConfig::Ratio {
            percent: 20.0,
            min_per_sec: 10.0,
            window: Duration::from_secs(10),
            deposit: RatioDeposit::Request,
        }
    }

    /// gRPC's retry throttling with the example values of its design (gRFC A6): 10 tokens, 0.1
    /// back per success.
    pub const fn grpc() -> BudgetConfig {
        BudgetConfig::Grpc {
            max_tokens: 10.0,
            token_ratio: 0.1,
        }
    }

    /// Brooker's adaptive retry bucket with its defaults ([`AdaptiveBucketConfig::default`]).
    pub fn adaptive() -> BudgetConfig {
        BudgetConfig::Adaptive(AdaptiveBucketConfig::default())
    }

    /// Brooker's retry circuit breaker with its defaults ([`RetryBreakerConfig::default`]).
    pub fn retry_breaker() -> BudgetConfig {
        BudgetConfig::RetryBreaker(RetryBreakerConfig::default())
    }

    /// Envoy's cluster `RetryBudget` defaults: 20 % of active requests, at least 3.
    pub const fn concurrency() -> BudgetConfig {
        BudgetConfig::Concurrency {
            percent: 20.0,
            min_concurrency: 3,
        }
    }

    /// The kind's name.
    pub const fn kind(&self) -> &'static str {
        match self {
            BudgetConfig::TokenBucket { .. } => "token_bucket",
            BudgetConfig::Ratio { .. } => "ratio",
            BudgetConfig::Grpc { .. } => "grpc",
            BudgetConfig::Adaptive(_) => "adaptive",
            BudgetConfig::RetryBreaker(_) => "retry_breaker",
            BudgetConfig::Concurrency { .. } => "concurrency",
        }
    }

    /// True for the kinds kept per client unless a scope says otherwise (Brooker's two).
    pub const fn per_client_by_default(&self) -> bool {
        matches!(
            self,
            BudgetConfig::Adaptive(_) | BudgetConfig::RetryBreaker(_)
        )
    }

    /// Checks the parameters; errors name the field (`capacity`).
    ///
    /// `token_bucket`: capacity >= 1, costs and refund at most the capacity. `ratio`: percent
    /// from 0 to 1000 (Finagle's range), min_per_sec finite and >= 0, window >= 1 ms.
    /// `grpc`: max_tokens in (0, 1000] and token_ratio in (0, max_tokens], both with at most
    /// three decimals mattering (the gRPC spec's precision).
    pub fn validate(&self) -> Result<(), ParamError> {
        match *self {
            BudgetConfig::TokenBucket {
                capacity,
                retry_cost,
                timeout_cost,
                throttling_cost,
                success_refund,
            } => validate_token_bucket(
                capacity,
                [
                    ("retry_cost", retry_cost),
                    ("timeout_cost", timeout_cost),
                    ("throttling_cost", throttling_cost),
                    ("success_refund", success_refund),
                ],
            ),
            BudgetConfig::Ratio {
                percent,
                min_per_sec,
                window,
                ..
            } => validate_ratio(percent, min_per_sec, window),
            BudgetConfig::Grpc {
                max_tokens,
                token_ratio,
            } => validate_grpc(max_tokens, token_ratio),
            BudgetConfig::Adaptive(c) => c.validate(),
            BudgetConfig::RetryBreaker(c) => c.validate(),
            BudgetConfig::Concurrency { percent, .. } => {
                // Envoy's `budget_percent` is a `type.v3.Percent`: 0 to 100.
                if !(percent.is_finite() && (0.0..=100.0).contains(&percent)) {
                    return Err(ParamError::new(
                        "percent",
                        percent,
                        "a number from 0 to 100",
                    ));
                }
                Ok(())
            }
        }
    }
}

/// A token bucket holds at least one token, and no cost or refund (named) is above it.
fn validate_token_bucket(
    capacity: u32,
    amounts: [(&'static str, u32); 4],
) -> Result<(), ParamError> {
    if capacity == 0 {
        return Err(ParamError::new(
            "capacity",
            capacity,
            "an integer of at least 1",
        ));
    }
    for (name, value) in amounts {
        if value > capacity {
            return Err(ParamError::new(
                name,
                value,
                format!("an integer from 0 to the capacity ({capacity})"),
            ));
        }
    }
    Ok(())
}

/// A ratio budget's percent is in Finagle's range 0 to 1000, its floor finite and >= 0, its
/// window at least 1 ms.
fn validate_ratio(percent: f64, min_per_sec: f64, window: Duration) -> Result<(), ParamError> {
    if !(percent.is_finite() && (0.0..=1000.0).contains(&percent)) {
        return Err(ParamError::new(
            "percent",
            percent,
            "a number from 0 to 1000",
        ));
    }
    if !(min_per_sec.is_finite() && min_per_sec >= 0.0) {
        return Err(ParamError::new(
            "min_per_sec",
            min_per_sec,
            "a finite number >= 0",
        ));
    }
    if window < Duration::from_millis(1) {
        return Err(ParamError::new(
            "window",
            Exact(window),
            "a duration of at least 1ms",
        ));
    }
    Ok(())
}

/// gRPC's throttle: max_tokens in (0, 1000] and token_ratio in (0, max_tokens], each nonzero
/// at the spec's three decimals.
fn validate_grpc(max_tokens: f64, token_ratio: f64) -> Result<(), ParamError> {
    if !(max_tokens.is_finite()
        && max_tokens > 0.0
        && max_tokens <= 1000.0
        && milli(max_tokens) > 0)
    {
        return Err(ParamError::new(
            "max_tokens",
            max_tokens,
            "a number above 0 and at most 1000",
        ));
    }
    if !(token_ratio.is_finite() && milli(token_ratio) > 0 && token_ratio <= max_tokens) {
        return Err(ParamError::new(
            "token_ratio",
            token_ratio,
            format!("a number of at least 0.001 and at most max_tokens ({max_tokens})"),
        ));
    }
    Ok(())
}

impl fmt::Display for BudgetConfig {
    /// The scenario form: `{ kind = "token_bucket", capacity = 500, ... }` (a token bucket's
    /// `throttling_cost` only when it differs from `retry_cost`, its default).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetConfig::TokenBucket {
                capacity,
                retry_cost,
                timeout_cost,
                throttling_cost,
                success_refund,
            } => {
                write!(
                    f,
                    "{{ kind = \"token_bucket\", capacity = {capacity}, retry_cost = {retry_cost}, timeout_cost = {timeout_cost}, "
                )?;
                if throttling_cost != retry_cost {
                    write!(f, "throttling_cost = {throttling_cost}, ")?;
                }
                write!(f, "success_refund = {success_refund} }}")
            }
            BudgetConfig::Ratio {
                percent,
                min_per_sec,
                window,
                deposit,
            } => {
                write!(
                    f,
                    "{{ kind = \"ratio\", percent = {percent:?}, min_per_sec = {min_per_sec:?}, window = \"{}\"",
                    Exact(*window)
                )?;
                if *deposit != RatioDeposit::Request {
                    write!(f, ", deposit = \"{}\"", deposit.name())?;
                }
                f.write_str(" }")
            }
            BudgetConfig::Grpc {
                max_tokens,
                token_ratio,
            } => write!(
                f,
                "{{ kind = \"grpc\", max_tokens = {max_tokens:?}, token_ratio = {token_ratio:?} }}"
            ),
            BudgetConfig::Adaptive(c) => write!(
                f,
                "{{ kind = \"adaptive\", size = {:?}, fill = {:?} }}",
                c.size, c.fill
            ),
            BudgetConfig::RetryBreaker(c) => {
                write!(f, "{{ kind = \"retry_breaker\", ratio = {:?} }}", c.ratio)
            }
            BudgetConfig::Concurrency {
                percent,
                min_concurrency,
            } => write!(
                f,
                "{{ kind = \"concurrency\", percent = {percent:?}, min_concurrency = {min_concurrency} }}"
            ),
        }
    }
}

/// When a ratio budget counts a request: the requests in its window are what its retries are
/// a share of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RatioDeposit {
    /// When its first attempt is sent, whatever its end (Finagle's `RetryFilter`).
    #[default]
    Request,
    /// When it succeeds, on whichever attempt (Finagle's `RequeueFilter`, the default client
    /// stack: "only deposit on success"); a failing service earns no retries, only the floor.
    Success,
}

impl RatioDeposit {
    /// Every mode, in [`RatioDeposit::name`] form: `request`, `success`.
    pub const ALL: [RatioDeposit; 2] = [RatioDeposit::Request, RatioDeposit::Success];

    /// The name in scenario files.
    pub const fn name(self) -> &'static str {
        match self {
            RatioDeposit::Request => "request",
            RatioDeposit::Success => "success",
        }
    }

    /// The mode called `name`, if any.
    pub fn from_name(name: &str) -> Option<RatioDeposit> {
        RatioDeposit::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// Rounds to thousandths (callers validate the range).
fn milli(x: f64) -> u64 {
    f64_to_nanos(x * MILLI as f64)
}

/// Which attempt a success came from: a token bucket refunds what that attempt's retry cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptKind {
    /// The request's first attempt.
    First,
    /// A retry sent after a failure of this class (it cost that class's price).
    Retry(RetryClass),
}

impl AttemptKind {
    /// The kind of attempt number `attempt` (1 = first) that retries a failure of class
    /// `follows`.
    pub const fn of(attempt: u32, follows: RetryClass) -> AttemptKind {
        if attempt <= 1 {
            AttemptKind::First
        } else {
            AttemptKind::Retry(follows)
        }
    }
}

/// The state of a retry budget.
#[derive(Debug, Clone)]
pub struct Budget {
    config: BudgetConfig,
    state: State,
}

// The ratio ring is inline on purpose: no heap, no pointer chase on the hot path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum State {
    TokenBucket {
        tokens: u32,
    },
    /// Counts requests (`a`) and retries (`b`).
    Ratio {
        window: SlidingWindow,
        reserve: f64,
    },
    /// Tokens in thousandths.
    Grpc {
        tokens: u64,
        max: u64,
        ratio: u64,
    },
    Adaptive(AdaptiveBucket),
    RetryBreaker(RetryBreaker),
    /// Attempts in flight and retries in flight.
    Concurrency {
        active: u64,
        retries: u64,
    },
}

impl Budget {
    /// A full budget, once `config` is validated.
    pub fn new(config: BudgetConfig) -> Result<Budget, ParamError> {
        config.validate()?;
        let state = match config {
            BudgetConfig::TokenBucket { capacity, .. } => State::TokenBucket { tokens: capacity },
            BudgetConfig::Ratio {
                min_per_sec,
                window,
                ..
            } => State::Ratio {
                window: SlidingWindow::new(to_nanos(window)),
                reserve: min_per_sec * window.as_secs_f64(),
            },
            BudgetConfig::Grpc {
                max_tokens,
                token_ratio,
            } => State::Grpc {
                tokens: milli(max_tokens),
                max: milli(max_tokens),
                ratio: milli(token_ratio),
            },
            BudgetConfig::Adaptive(c) => State::Adaptive(AdaptiveBucket::new(c)?),
            BudgetConfig::RetryBreaker(c) => State::RetryBreaker(RetryBreaker::new(c)?),
            BudgetConfig::Concurrency { .. } => State::Concurrency {
                active: 0,
                retries: 0,
            },
        };
        Ok(Budget { config, state })
    }

    /// The configuration.
    pub fn config(&self) -> &BudgetConfig {
        &self.config
    }

    /// A new request is sent: called with its first attempt's report (a ratio budget counts
    /// it, unless it counts successes, [`RatioDeposit::Success`]; the others ignore it).
    #[inline]
    pub fn on_request(&mut self, now: impl Into<Duration>) {
        self.on_request_nanos(to_nanos(now.into()));
    }

    #[inline]
    pub(crate) fn on_request_nanos(&mut self, now: u64) {
        if let (State::Ratio { window, .. }, BudgetConfig::Ratio { deposit, .. }) =
            (&mut self.state, &self.config)
            && *deposit == RatioDeposit::Request
        {
            window.add(now, 1, 0);
        }
    }

    /// A new request begins, before its first attempt is sent: Brooker's adaptive bucket
    /// deposits `fill`, his retry breaker counts the request (the reference's `start()`); the
    /// other kinds ignore it. Callers make this call themselves ([`RetryPolicy::decide`]
    /// cannot: it first hears of a request when its first attempt has ended).
    ///
    /// [`RetryPolicy::decide`]: crate::policy::RetryPolicy::decide
    #[inline]
    pub fn on_begin(&mut self, now: impl Into<Duration>) {
        self.on_begin_nanos(to_nanos(now.into()));
    }

    /// [`Budget::on_begin`] with `now` in integer nanoseconds.
    #[inline]
    pub fn on_begin_nanos(&mut self, _now: u64) {
        match &mut self.state {
            State::Adaptive(b) => b.on_request(),
            State::RetryBreaker(b) => b.on_request(),
            _ => {}
        }
    }

    /// An attempt is sent (first or retry): a concurrency budget counts it active until
    /// [`RetryPolicy::decide`] hears its end, or [`Budget::on_abandon`]; the other kinds
    /// ignore it.
    ///
    /// [`RetryPolicy::decide`]: crate::policy::RetryPolicy::decide
    #[inline]
    pub fn on_send(&mut self) {
        if let State::Concurrency { active, .. } = &mut self.state {
            *active += 1;
        }
    }

    /// Attempt number `attempt` (1 = the first) ended: it is no longer active, and a retry's
    /// place among the retries in flight is free (Envoy's `resetRetry`). Called by `decide`
    /// with every report; the other kinds ignore it.
    #[inline]
    pub(crate) fn on_attempt_end(&mut self, attempt: u32) {
        if let State::Concurrency { active, retries } = &mut self.state {
            *active = active.saturating_sub(1);
            if attempt > 1 {
                *retries = retries.saturating_sub(1);
            }
        }
    }

    /// Attempt number `attempt`, sent, will never be reported to `decide` (the call was
    /// cancelled or panicked while it was out): as if it had ended. The other kinds ignore it.
    #[inline]
    pub fn on_abandon(&mut self, attempt: u32) {
        self.on_attempt_end(attempt);
    }

    /// Retries a concurrency budget allows in flight now: `max(min_concurrency, ⌊percent % ×
    /// active⌋)`, truncated as Envoy's `std::max<uint64_t>(budget_percent / 100.0 *
    /// current_active, min_retry_concurrency)`. `None` for the other kinds.
    pub fn max_concurrent_retries(&self) -> Option<u64> {
        match (&self.state, &self.config) {
            (
                State::Concurrency { active, .. },
                BudgetConfig::Concurrency {
                    percent,
                    min_concurrency,
                },
            ) => Some(((percent / 100.0 * *active as f64) as u64).max(u64::from(*min_concurrency))),
            _ => None,
        }
    }

    /// Asks for one retry after an attempt that failed with a failure of `class`; withdraws
    /// its cost and returns true when allowed, returns false and changes nothing when denied.
    #[inline]
    pub fn try_retry(&mut self, now: impl Into<Duration>, class: RetryClass) -> bool {
        self.try_retry_nanos(to_nanos(now.into()), class)
    }

    #[inline]
    pub(crate) fn try_retry_nanos(&mut self, now: u64, class: RetryClass) -> bool {
        let cost = self.config.cost_of(class);
        let max_retries = self.max_concurrent_retries();
        match (&mut self.state, &self.config) {
            (State::TokenBucket { tokens }, _) => {
                if *tokens < cost {
                    return false;
                }
                *tokens -= cost;
                true
            }
            (State::Ratio { window, reserve }, BudgetConfig::Ratio { percent, .. }) => {
                let (requests, retries) = window.sums(now);
                // retries + 1 <= percent/100 * requests + reserve, without dividing.
                let allowed =
                    (retries as f64 + 1.0) * 100.0 <= percent * requests as f64 + *reserve * 100.0;
                if allowed {
                    window.add(now, 0, 1);
                }
                allowed
            }
            (State::Grpc { tokens, max, .. }, _) => *tokens * 2 > *max,
            (State::Adaptive(b), _) => b.try_retry(),
            (State::RetryBreaker(b), _) => b.try_retry(),
            (State::Concurrency { retries, .. }, _) => {
                let allowed = max_retries.is_some_and(|max| *retries < max);
                if allowed {
                    *retries += 1;
                }
                allowed
            }
            // The state is built from the config, so the kinds always match.
            _ => false,
        }
    }

    /// Gives back a retry that [`Budget::try_retry`] allowed at `at` but that was never sent
    /// (the breaker refused it, the call was cancelled, the deadline passed): the budget is
    /// as if the retry had been denied. `class` as given to `try_retry`.
    pub fn refund_retry(&mut self, at: impl Into<Duration>, class: RetryClass) {
        self.refund_retry_nanos(to_nanos(at.into()), class);
    }

    /// [`Budget::refund_retry`] with `at` in integer nanoseconds.
    #[inline]
    pub fn refund_retry_nanos(&mut self, at: u64, class: RetryClass) {
        let cost = self.config.cost_of(class);
        match (&mut self.state, &self.config) {
            (State::TokenBucket { tokens }, BudgetConfig::TokenBucket { capacity, .. }) => {
                *tokens = tokens.saturating_add(cost).min(*capacity);
            }
            (State::Ratio { window, .. }, _) => window.remove(at, 0, 1),
            (State::Adaptive(b), _) => b.refund(),
            (State::Concurrency { retries, .. }, _) => *retries = retries.saturating_sub(1),
            // gRPC's and the retry breaker's permission costs nothing.
            _ => {}
        }
    }

    /// An attempt succeeded at `now`: [`Budget::on_success`], and a ratio budget with
    /// [`RatioDeposit::Success`] counts the request.
    #[inline]
    pub fn on_success_at(&mut self, now: impl Into<Duration>, kind: AttemptKind) {
        self.on_success_nanos(to_nanos(now.into()), kind);
    }

    #[inline]
    pub(crate) fn on_success_nanos(&mut self, now: u64, kind: AttemptKind) {
        if let (State::Ratio { window, .. }, BudgetConfig::Ratio { deposit, .. }) =
            (&mut self.state, &self.config)
            && *deposit == RatioDeposit::Success
        {
            window.add(now, 1, 0);
        }
        self.on_success(kind);
    }

    /// An attempt succeeded (`kind` says which: a token bucket refunds that retry's cost, or
    /// `success_refund` for a first attempt; gRPC adds `token_ratio`). Never above capacity.
    /// A ratio budget that counts successes needs the time: [`Budget::on_success_at`].
    #[inline]
    pub fn on_success(&mut self, kind: AttemptKind) {
        match (&mut self.state, &self.config) {
            (
                State::TokenBucket { tokens },
                config @ BudgetConfig::TokenBucket {
                    capacity,
                    success_refund,
                    ..
                },
            ) => {
                let refund = match kind {
                    AttemptKind::First => *success_refund,
                    AttemptKind::Retry(class) => config.cost_of(class),
                };
                *tokens = tokens.saturating_add(refund).min(*capacity);
            }
            (State::Grpc { tokens, max, ratio }, _) => *tokens = (*tokens + *ratio).min(*max),
            _ => {}
        }
    }

    /// An attempt failed with a retryable outcome (gRPC takes one token, the retry breaker
    /// counts it; the others ignore it).
    #[inline]
    pub fn on_failure(&mut self) {
        match &mut self.state {
            State::Grpc { tokens, .. } => *tokens = tokens.saturating_sub(MILLI),
            State::RetryBreaker(b) => b.on_failure(),
            _ => {}
        }
    }

    /// Tokens left (token bucket, gRPC, adaptive), retries still allowed in the window at `now`
    /// (ratio) or in flight now (concurrency), or how far failed attempts per request are below `ratio` (retry breaker). For
    /// reports and tests.
    pub fn available(&self, now: impl Into<Duration>) -> f64 {
        let now = now.into();
        match (&self.state, &self.config) {
            (State::TokenBucket { tokens }, _) => f64::from(*tokens),
            (State::Ratio { window, reserve }, BudgetConfig::Ratio { percent, .. }) => {
                let (requests, retries) = window.sums(to_nanos(now));
                (percent / 100.0 * requests as f64 + reserve - retries as f64).max(0.0)
            }
            (State::Grpc { tokens, .. }, _) => *tokens as f64 / MILLI as f64,
            (State::Adaptive(b), _) => b.tokens(),
            (State::RetryBreaker(b), BudgetConfig::RetryBreaker(c)) => {
                (c.ratio - b.failure_ratio()).max(0.0)
            }
            (State::Concurrency { retries, .. }, _) => self
                .max_concurrent_retries()
                .map_or(0.0, |max| max.saturating_sub(*retries) as f64),
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    fn aws() -> Budget {
        Budget::new(BudgetConfig::token_bucket()).unwrap()
    }

    #[test]
    fn token_bucket_timeouts_drain_fifty_retries() {
        let mut b = aws();
        let now = at_ms(0);
        // 100 timeouts in a row: 500 / 10 = 50 retries, then denials that cost nothing.
        let allowed = (0..100)
            .filter(|_| b.try_retry(now, RetryClass::Timeout))
            .count();
        assert_eq!(allowed, 50);
        assert_eq!(b.available(now), 0.0);
        // A success on a retry that followed a timeout refunds 10: one more timeout retry.
        b.on_success(AttemptKind::Retry(RetryClass::Timeout));
        assert_eq!(b.available(now), 10.0);
        assert!(b.try_retry(now, RetryClass::Timeout));
        assert!(!b.try_retry(now, RetryClass::Timeout));
        // Five first-attempt successes refund 1 each: one plain retry (cost 5), not two.
        for _ in 0..5 {
            b.on_success(AttemptKind::First);
        }
        assert!(b.try_retry(now, RetryClass::Transient));
        assert!(!b.try_retry(now, RetryClass::Transient));
    }

    #[test]
    fn token_bucket_errors_cost_five_and_never_overfill() {
        let mut b = aws();
        let now = at_ms(0);
        assert_eq!(
            (0..1000)
                .filter(|_| b.try_retry(now, RetryClass::Transient))
                .count(),
            100
        );
        for _ in 0..99 {
            b.on_success(AttemptKind::Retry(RetryClass::Transient));
        }
        assert_eq!(b.available(now), 495.0);
        for _ in 0..10 {
            b.on_success(AttemptKind::Retry(RetryClass::Transient));
        }
        assert_eq!(b.available(now), 500.0);
        b.on_failure();
        b.on_request(now);
        assert_eq!(
            b.available(now),
            500.0,
            "token bucket ignores failures and requests"
        );
    }

    #[test]
    fn ratio_allows_percent_plus_floor_and_recovers() {
        // 20 % of requests plus 10/s over 10 s: a reserve of 100.
        let mut b = Budget::new(BudgetConfig::ratio()).unwrap();
        for i in 0..1000 {
            b.on_request(at_ms(i));
        }
        let now = at_ms(1_000);
        assert_eq!(b.available(now), 300.0);
        let allowed = (0..1000)
            .filter(|_| b.try_retry(now, RetryClass::Transient))
            .count();
        assert_eq!(allowed, 200 + 100);
        assert!(!b.try_retry(at_ms(5_000), RetryClass::Transient));
        // Requests and retries leave the window together: after it only the floor remains.
        let later = at_ms(12_000);
        assert_eq!(b.available(later), 100.0);
        assert_eq!(
            (0..1000)
                .filter(|_| b.try_retry(later, RetryClass::Timeout))
                .count(),
            100
        );
        // New traffic earns new retries: 50 requests -> 10 more.
        for _ in 0..50 {
            b.on_request(later);
        }
        assert_eq!(
            (0..1000)
                .filter(|_| b.try_retry(later, RetryClass::Transient))
                .count(),
            10
        );
    }

    /// One budget of each kind, at its defaults.
    fn every_kind() -> [BudgetConfig; 6] {
        [
            BudgetConfig::token_bucket(),
            BudgetConfig::ratio(),
            BudgetConfig::grpc(),
            BudgetConfig::adaptive(),
            BudgetConfig::retry_breaker(),
            BudgetConfig::concurrency(),
        ]
    }

    #[test]
    fn a_refunded_retry_is_as_if_denied() {
        let now = at_ms(0);
        for config in every_kind() {
            for class in [
                RetryClass::Transient,
                RetryClass::Timeout,
                RetryClass::Throttling,
            ] {
                let mut b = Budget::new(config).unwrap();
                b.on_begin(now);
                b.on_request(now);
                let before = b.available(now);
                assert!(b.try_retry(now, class), "{config}");
                b.refund_retry(now, class);
                assert_eq!(
                    b.available(now),
                    before,
                    "{config}, after a failure of class {class}"
                );
            }
        }
        // Never above capacity, even refunded twice.
        let mut b = aws();
        b.refund_retry(now, RetryClass::Timeout);
        assert_eq!(b.available(now), 500.0);
    }

    #[test]
    fn ratio_without_floor_is_exactly_the_percentage() {
        let config = BudgetConfig::Ratio {
            percent: 10.0,
            min_per_sec: 0.0,
            window: Duration::from_secs(1),
            deposit: RatioDeposit::Request,
        };
        let mut b = Budget::new(config).unwrap();
        assert!(
            !b.try_retry(at_ms(0), RetryClass::Transient),
            "no requests, no floor: no retry"
        );
        for _ in 0..95 {
            b.on_request(at_ms(0));
        }
        assert_eq!(
            (0..100)
                .filter(|_| b.try_retry(at_ms(10), RetryClass::Transient))
                .count(),
            9
        );
    }

    #[test]
    fn grpc_stops_at_half_and_recovers_with_successes() {
        let mut b = Budget::new(BudgetConfig::grpc()).unwrap();
        let now = at_ms(0);
        let mut allowed = Vec::new();
        for _ in 0..6 {
            b.on_failure();
            allowed.push(b.try_retry(now, RetryClass::Transient));
        }
        // 9, 8, 7, 6 > 5 allowed; 5 and 4 are not above half.
        assert_eq!(allowed, [true, true, true, true, false, false]);
        assert_eq!(b.available(now), 4.0);
        // try_retry itself costs nothing.
        assert_eq!(b.available(now), 4.0);
        for _ in 0..30 {
            b.on_success(AttemptKind::Retry(RetryClass::Transient));
        }
        assert_eq!(b.available(now), 7.0);
        b.on_failure();
        assert!(b.try_retry(now, RetryClass::Transient));
        for _ in 0..1000 {
            b.on_success(AttemptKind::First);
        }
        assert_eq!(b.available(now), 10.0, "capped at max_tokens");
        for _ in 0..20 {
            b.on_failure();
        }
        assert_eq!(b.available(now), 0.0, "never below zero");
    }

    fn envoy_with_active(n: u32) -> Budget {
        let mut b = Budget::new(BudgetConfig::concurrency()).unwrap();
        for _ in 0..n {
            b.on_send();
        }
        b
    }

    #[test]
    fn concurrency_allows_a_fifth_of_active_requests_at_least_three() {
        // max(3, ⌊0.2 × N⌋): 5 → max(3, 1) = 3; 20 → 4; 100 → 20; 19 → max(3, 3) = 3 (3.8
        // truncated, as Envoy's cast to uint64_t).
        for (n, want) in [
            (0, 3),
            (5, 3),
            (19, 3),
            (20, 4),
            (24, 4),
            (25, 5),
            (100, 20),
        ] {
            let mut b = envoy_with_active(n);
            assert_eq!(b.max_concurrent_retries(), Some(want), "{n} active");
            let granted = (0..1000)
                .filter(|_| b.try_retry(at_ms(0), RetryClass::Transient))
                .count();
            assert_eq!(granted as u64, want, "{n} active");
            assert_eq!(b.available(at_ms(0)), 0.0);
        }
    }

    #[test]
    fn concurrency_frees_a_retry_when_its_attempt_ends_or_it_is_given_back() {
        let now = at_ms(0);
        // 20 requests' first attempts out: 4 retries may be in flight.
        let mut b = envoy_with_active(20);
        // Four first attempts fail: each ends (19, 18, 17, 16 active) and asks for a retry.
        // At 16 active the limit is max(3, 3) = 3, so the fourth is refused.
        let mut granted = Vec::new();
        for _ in 0..4 {
            b.on_attempt_end(1);
            granted.push(b.try_retry(now, RetryClass::Transient));
        }
        assert_eq!(granted, [true, true, true, false]);
        assert_eq!(b.available(now), 0.0);
        // A granted retry is given back (never sent): one place free.
        b.refund_retry(now, RetryClass::Transient);
        assert_eq!(b.available(now), 1.0);
        assert!(b.try_retry(now, RetryClass::Transient));
        // Retries 2 and 3 are sent (18 active) and end: their places and their activity go.
        b.on_send();
        b.on_send();
        assert_eq!(b.max_concurrent_retries(), Some(3));
        b.on_attempt_end(2);
        b.on_attempt_end(2);
        assert_eq!(b.available(now), 2.0, "16 active, 1 retry in flight");
        // A retry abandoned while out (a cancelled call) frees its place too.
        b.on_send();
        b.on_abandon(2);
        assert_eq!(b.available(now), 3.0, "16 active, none in flight");
        // Never below zero, whatever the caller reports.
        for _ in 0..100 {
            b.on_attempt_end(3);
        }
        assert_eq!(b.max_concurrent_retries(), Some(3));
        assert_eq!(b.available(now), 3.0);
    }

    #[test]
    fn other_kinds_ignore_sends_and_attempt_ends() {
        let now = at_ms(0);
        let kinds = every_kind().into_iter();
        for config in kinds.filter(|c| !matches!(c, BudgetConfig::Concurrency { .. })) {
            let mut b = Budget::new(config).unwrap();
            b.on_begin(now);
            let before = b.available(now);
            b.on_send();
            b.on_attempt_end(2);
            b.on_abandon(1);
            assert_eq!(b.available(now), before, "{config}");
            assert_eq!(b.max_concurrent_retries(), None);
        }
    }

    #[test]
    fn configs_are_validated_naming_the_field() {
        let cases: [(BudgetConfig, &str); 10] = [
            (
                BudgetConfig::Concurrency {
                    percent: 100.5,
                    min_concurrency: 3,
                },
                "percent",
            ),
            (
                BudgetConfig::Concurrency {
                    percent: f64::NAN,
                    min_concurrency: 3,
                },
                "percent",
            ),
            (
                BudgetConfig::TokenBucket {
                    capacity: 0,
                    retry_cost: 0,
                    timeout_cost: 0,
                    throttling_cost: 0,
                    success_refund: 0,
                },
                "capacity",
            ),
            (
                BudgetConfig::TokenBucket {
                    capacity: 5,
                    retry_cost: 6,
                    timeout_cost: 1,
                    throttling_cost: 6,
                    success_refund: 1,
                },
                "retry_cost",
            ),
            (
                BudgetConfig::Ratio {
                    percent: -1.0,
                    min_per_sec: 1.0,
                    window: Duration::from_secs(1),
                    deposit: RatioDeposit::Request,
                },
                "percent",
            ),
            (
                BudgetConfig::Ratio {
                    percent: f64::NAN,
                    min_per_sec: 1.0,
                    window: Duration::from_secs(1),
                    deposit: RatioDeposit::Request,
                },
                "percent",
            ),
            (
                BudgetConfig::Ratio {
                    percent: 20.0,
                    min_per_sec: f64::INFINITY,
                    window: Duration::from_secs(1),
                    deposit: RatioDeposit::Request,
                },
                "min_per_sec",
            ),
            (
                BudgetConfig::Ratio {
                    percent: 20.0,
                    min_per_sec: 1.0,
                    window: Duration::ZERO,
                    deposit: RatioDeposit::Request,
                },
                "window",
            ),
            (
                BudgetConfig::Grpc {
                    max_tokens: 0.0,
                    token_ratio: 0.1,
                },
                "max_tokens",
            ),
            (
                BudgetConfig::Grpc {
                    max_tokens: 10.0,
                    token_ratio: 0.0001,
                },
                "token_ratio",
            ),
        ];
        for (config, field) in cases {
            let err = Budget::new(config).unwrap_err();
            assert_eq!(err.field, field, "{config}: {err}");
        }
        assert_eq!(every_kind().len(), BudgetConfig::KINDS.len());
        for (config, kind) in every_kind().into_iter().zip(BudgetConfig::KINDS) {
            assert_eq!(config.kind(), kind);
            assert!(config.to_string().contains(kind));
            assert!(Budget::new(config).is_ok(), "{config}");
        }
    }
}
