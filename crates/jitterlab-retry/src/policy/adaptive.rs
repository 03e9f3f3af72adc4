//! The two per-client retry limits of Marc Brooker's 2022 retry simulator ("Fixing retries
//! with token buckets and circuit breakers", brooker.co.za, 2022-02-28, and its
//! `retry_sim/retry_strategy.py`), reproduced exactly:
//!
//! - [`AdaptiveBucket`] — the *adaptive* strategy, a retry token bucket. It starts full at
//!   `size` (5); each new request deposits `fill` (0.1) tokens, never above `size`; a retry is
//!   allowed only while the bucket holds **more than** 1 token, and takes 1. It has no attempt
//!   limit of its own (the request's `max_attempts` still applies).
//! - [`RetryBreaker`] — the *retry circuit breaker*. It counts requests and failed attempts
//!   (first tries and retries alike) since the start of the run; a retry is refused while
//!   `failed attempts / requests` is **above** `ratio` (0.1), else allowed (up to the request's
//!   N retries, kept by `max_attempts`). First tries are never refused: only retries break.
//!
//! Call order, as in the reference: [`AdaptiveBucket::on_request`] /
//! [`RetryBreaker::on_request`] when a request starts (before its first attempt is sent); after
//! each failed attempt, [`RetryBreaker::on_failure`] (the failure counts before the decision
//! on it), then `try_retry`. Tokens are kept as integer thousandths so that 0.1 + 0.1 + ...
//! is exact and a bucket at exactly 1 token is never mistaken for one just above it.
//!
//! Pure state without a clock: both count since the start of the run, so no method needs
//! `now`; [`crate::policy::Budget`] drives them as two of its kinds.

use crate::param::ParamError;

/// Tokens are kept in thousandths (three decimals matter, as for the gRPC budget).
const MILLI: u64 = 1_000;

/// The largest bucket accepted (a million tokens: beyond it the bucket never runs dry).
const MAX_SIZE: f64 = 1e6;

/// Rounds a validated, non-negative token count to thousandths.
fn milli(x: f64) -> u64 {
    crate::time::f64_to_nanos(x * MILLI as f64)
}

/// Parameters of the adaptive retry bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveBucketConfig {
    /// Tokens when full, and at the start (default 5).
    pub size: f64,
    /// Tokens deposited by each new request (default 0.1).
    pub fill: f64,
}

impl Default for AdaptiveBucketConfig {
    fn default() -> Self {
        AdaptiveBucketConfig {
            size: 5.0,
            fill: 0.1,
        }
    }
}

impl AdaptiveBucketConfig {
    /// Checks the parameters: `size` above 1 (a retry needs more than 1 token) and at most
    /// 1 000 000; `fill` at least 0.001 and at most `size`. Three decimals matter.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.size.is_finite() && self.size <= MAX_SIZE && milli(self.size) > MILLI) {
            return Err(ParamError::new(
                "size",
                self.size,
                "a number above 1 (a retry needs more than 1 token) and at most 1000000",
            ));
        }
        if !(self.fill.is_finite() && milli(self.fill) > 0 && self.fill <= self.size) {
            return Err(ParamError::new(
                "fill",
                self.fill,
                format!(
                    "a number of at least 0.001 and at most size ({})",
                    self.size
                ),
            ));
        }
        Ok(())
    }
}

/// A per-client adaptive retry bucket (Brooker 2022).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdaptiveBucket {
    /// Tokens in thousandths.
    tokens: u64,
    size: u64,
    fill: u64,
}

impl AdaptiveBucket {
    /// A full bucket.
    pub fn new(config: AdaptiveBucketConfig) -> Result<AdaptiveBucket, ParamError> {
        config.validate()?;
        let size = milli(config.size);
        Ok(AdaptiveBucket {
            tokens: size,
            size,
            fill: milli(config.fill),
        })
    }

    /// A new request starts: deposit `fill`, never above `size`.
    #[inline]
    pub fn on_request(&mut self) {
        self.tokens = (self.tokens + self.fill).min(self.size);
    }

    /// Asks for one retry: allowed, taking 1 token, when more than 1 token is left; refused,
    /// changing nothing, otherwise.
    #[inline]
    pub fn try_retry(&mut self) -> bool {
        if self.tokens > MILLI {
            self.tokens -= MILLI;
            true
        } else {
            false
        }
    }

    /// Gives back the token of a retry [`AdaptiveBucket::try_retry`] allowed that was never
    /// sent (never above `size`).
    #[inline]
    pub fn refund(&mut self) {
        self.tokens = (self.tokens + MILLI).min(self.size);
    }

    /// Tokens in the bucket (for reports and tests).
    pub fn tokens(&self) -> f64 {
        self.tokens as f64 / MILLI as f64
    }
}

/// Parameters of the retry circuit breaker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryBreakerConfig {
    /// Retries stop while failed attempts per request are above this (default 0.1).
    pub ratio: f64,
}

impl Default for RetryBreakerConfig {
    fn default() -> Self {
        RetryBreakerConfig { ratio: 0.1 }
    }
}

impl RetryBreakerConfig {
    /// Checks the parameter: `ratio` finite and at least 0 (it may exceed 1: with retries a
    /// request can fail more than once).
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.ratio.is_finite() && self.ratio >= 0.0) {
            return Err(ParamError::new(
                "ratio",
                self.ratio,
                "a finite number of at least 0",
            ));
        }
        Ok(())
    }
}

/// A per-client retry circuit breaker (Brooker 2022): counts since the start of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryBreaker {
    ratio: f64,
    requests: u64,
    failures: u64,
}

impl RetryBreaker {
    /// A breaker that has seen nothing.
    pub fn new(config: RetryBreakerConfig) -> Result<RetryBreaker, ParamError> {
        config.validate()?;
        Ok(RetryBreaker {
            ratio: config.ratio,
            requests: 0,
            failures: 0,
        })
    }

    /// A new request starts.
    #[inline]
    pub fn on_request(&mut self) {
        self.requests += 1;
    }

    /// An attempt of a request (first try or retry) failed.
    #[inline]
    pub fn on_failure(&mut self) {
        self.failures += 1;
    }

    /// Asks for one retry: refused while `failures / requests > ratio` (the reference's
    /// division, compared as it does), allowed otherwise. Changes nothing.
    #[inline]
    pub fn try_retry(&self) -> bool {
        self.failure_ratio() <= self.ratio
    }

    /// Failed attempts per request so far (0 before the first request).
    pub fn failure_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.failures as f64 / self.requests as f64
        }
    }

    /// `(requests, failed attempts)` so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.requests, self.failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_starts_full_and_needs_more_than_one_token() {
        let mut b = AdaptiveBucket::new(AdaptiveBucketConfig::default()).unwrap();
        assert_eq!(b.tokens(), 5.0);
        // 5 -> 4 -> 3 -> 2 -> 1: four retries; at exactly 1 token the fifth is refused.
        let allowed: Vec<bool> = (0..6).map(|_| b.try_retry()).collect();
        assert_eq!(allowed, [true, true, true, true, false, false]);
        assert_eq!(b.tokens(), 1.0, "a refusal takes nothing");
        // One request deposits 0.1: 1.1 > 1, one retry, then 0.1 left.
        b.on_request();
        assert!(b.try_retry());
        assert_eq!(b.tokens(), 0.1);
        // Nine more requests: 0.1 + 9 * 0.1 = 1.0, not more than 1.
        for _ in 0..9 {
            b.on_request();
        }
        assert_eq!(b.tokens(), 1.0);
        assert!(!b.try_retry());
        // Ten more: 2.0 exactly, one retry, and back at exactly 1. (Summed in floats, 1.0 +
        // ten times 0.1 is 2.000000000000001 and would allow a second retry.)
        for _ in 0..10 {
            b.on_request();
        }
        assert_eq!(b.tokens(), 2.0);
        assert!(b.try_retry());
        assert!(!b.try_retry());
    }

    #[test]
    fn bucket_never_overfills() {
        let mut b = AdaptiveBucket::new(AdaptiveBucketConfig {
            size: 2.5,
            fill: 1.0,
        })
        .unwrap();
        b.on_request();
        assert_eq!(b.tokens(), 2.5);
        // 2.5 -> 1.5 -> 0.5, then refused.
        assert!(b.try_retry());
        assert!(b.try_retry());
        assert!(!b.try_retry());
        assert_eq!(b.tokens(), 0.5);
        for _ in 0..3 {
            b.on_request();
        }
        assert_eq!(b.tokens(), 2.5, "0.5 + 3 capped at 2.5");
    }

    #[test]
    fn bucket_long_run_allows_fill_retries_per_request() {
        // Every attempt fails and every request retries until refused: once the start-up
        // tokens are spent, each ten requests earn exactly one retry.
        let mut b = AdaptiveBucket::new(AdaptiveBucketConfig::default()).unwrap();
        let mut retries = 0;
        for _ in 0..1_000 {
            b.on_request();
            while b.try_retry() {
                retries += 1;
            }
        }
        // Request 1: the deposit is capped (5 stays 5), four retries leave exactly 1.
        // Request 2: 1.1, one retry, 0.1 left; then every tenth request (12, 22, ..., 992)
        // brings the bucket to 1.1 again: 4 + 100 retries in all.
        assert_eq!(retries, 104);
    }

    #[test]
    fn breaker_refuses_only_above_the_ratio() {
        let mut b = RetryBreaker::new(RetryBreakerConfig::default()).unwrap();
        assert!(b.try_retry(), "nothing seen yet");
        for _ in 0..10 {
            b.on_request();
        }
        b.on_failure();
        // 1 / 10 = 0.1, not above 0.1: retry.
        assert_eq!(b.failure_ratio(), 0.1);
        assert!(b.try_retry());
        b.on_failure();
        // 2 / 10 > 0.1: no retry; try_retry changes nothing.
        assert!(!b.try_retry());
        assert!(!b.try_retry());
        assert_eq!(b.counts(), (10, 2));
        // Ten more requests bring it back to 2 / 20 = 0.1.
        for _ in 0..10 {
            b.on_request();
        }
        assert!(b.try_retry());
    }

    #[test]
    fn breaker_counts_the_failure_before_deciding_on_it() {
        // The first request's first attempt fails: 1 / 1 > 0.1, so it is not retried,
        // exactly as in the reference (`failures += 1` happens inside `should_retry`).
        let mut b = RetryBreaker::new(RetryBreakerConfig::default()).unwrap();
        b.on_request();
        b.on_failure();
        assert!(!b.try_retry());
        // With ratio 0 a single failure anywhere stops every retry.
        let mut z = RetryBreaker::new(RetryBreakerConfig { ratio: 0.0 }).unwrap();
        z.on_request();
        assert!(z.try_retry());
        z.on_failure();
        assert!(!z.try_retry());
    }

    #[test]
    fn parameters_are_validated_naming_the_field() {
        let bucket = |size, fill| AdaptiveBucket::new(AdaptiveBucketConfig { size, fill });
        for (size, fill, field) in [
            (1.0, 0.1, "size"),
            (1.0004, 0.1, "size"),
            (f64::NAN, 0.1, "size"),
            (2e6, 0.1, "size"),
            (5.0, 0.0, "fill"),
            (5.0, 0.0004, "fill"),
            (5.0, 5.5, "fill"),
            (5.0, f64::INFINITY, "fill"),
            (5.0, -0.1, "fill"),
        ] {
            let err = bucket(size, fill).unwrap_err();
            assert_eq!(err.field, field, "size {size}, fill {fill}: {err}");
        }
        assert!(bucket(1.001, 0.001).is_ok());
        assert!(bucket(5.0, 5.0).is_ok());
        for ratio in [-0.1, f64::NAN, f64::INFINITY] {
            let err = RetryBreaker::new(RetryBreakerConfig { ratio }).unwrap_err();
            assert_eq!(err.field, "ratio");
        }
        assert!(RetryBreaker::new(RetryBreakerConfig { ratio: 3.0 }).is_ok());
    }
}
