//! The client-side rate limiter of the AWS SDKs' adaptive retry mode, as in botocore 1.44.8
//! `botocore/retries/adaptive.py` (`ClientRateLimiter`, `register_retry_handler`), with its
//! parts [`CubicRate`] (`throttling.py`), [`SendRate`] (`adaptive.py`'s `RateClocker`) and
//! [`RateBucket`] (`bucket.py`).
//!
//! Every attempt takes a token first ([`AdaptiveRateLimiter::try_acquire`]), once the limiter
//! is on: it turns on at the first throttling answer. Every answer
//! ([`AdaptiveRateLimiter::on_answer`]) is counted into the measured rate; a throttling answer
//! sets CUBIC's `W_max` to that rate (capped by the fill rate once on) and drops the rate to
//! `beta` times it; any other answer (a timeout or a connection error too, as in the SDK)
//! moves it along the cubic. The fill rate is then that, but never above twice the measured
//! rate. Pure state: `now` is an argument (time since the caller's origin), and the same
//! instants give the same floats, so the simulator stays deterministic.
//!
//! ```
//! use jitterlab_retry::policy::{AdaptiveRateConfig, AdaptiveRateLimiter};
//! use std::time::Duration;
//!
//! let mut limiter = AdaptiveRateLimiter::new(AdaptiveRateConfig::default(), Duration::ZERO);
//! assert_eq!(limiter.try_acquire(Duration::ZERO), Ok(()), "off until the first throttle");
//! limiter.on_answer(Duration::from_millis(600), true);
//! assert!(limiter.enabled());
//! ```

use std::time::Duration;

use crate::param::ParamError;
use crate::policy::cubic::CubicRate;
use crate::policy::rate_bucket::RateBucket;
use crate::policy::send_rate::SendRate;

/// The constants of the adaptive limiter; [`Default`] gives botocore's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveRateConfig {
    /// The share of `W_max` kept after a throttle (`_BETA`, 0.7).
    pub beta: f64,
    /// CUBIC's scale constant (`_SCALE_CONSTANT`, 0.4).
    pub scale: f64,
    /// The weight of the newest bucket in the measured rate (`_DEFAULT_SMOOTHING`, 0.8).
    pub smoothing: f64,
    /// The length of a measuring bucket (`_TIME_BUCKET_RANGE`, 0.5 s).
    pub bucket: Duration,
    /// The lowest fill rate, tokens per second (`TokenBucket._MIN_RATE`, 0.5).
    pub min_fill_rate: f64,
    /// The fill rate is at most this many times the measured rate
    /// (`_MAX_RATE_ADJUST_SCALE`, 2).
    pub max_rate_scale: f64,
}

impl Default for AdaptiveRateConfig {
    fn default() -> AdaptiveRateConfig {
        AdaptiveRateConfig {
            beta: 0.7,
            scale: 0.4,
            smoothing: 0.8,
            bucket: Duration::from_millis(500),
            min_fill_rate: 0.5,
            max_rate_scale: 2.0,
        }
    }
}

impl AdaptiveRateConfig {
    /// Checks every constant: `beta` and `smoothing` in (0, 1], `scale`, `min_fill_rate` and
    /// `max_rate_scale` finite and above 0, `bucket` at least 1 ms.
    pub fn validate(&self) -> Result<(), ParamError> {
        let unit = |field: &'static str, x: f64| {
            if x > 0.0 && x <= 1.0 {
                Ok(())
            } else {
                Err(ParamError::new(field, x, "a number above 0 and at most 1"))
            }
        };
        let positive = |field: &'static str, x: f64| {
            if x > 0.0 && x <= 1e9 {
                Ok(())
            } else {
                Err(ParamError::new(
                    field,
                    x,
                    "a number above 0 and at most 1e9",
                ))
            }
        };
        unit("beta", self.beta)?;
        positive("scale", self.scale)?;
        unit("smoothing", self.smoothing)?;
        positive("min_fill_rate", self.min_fill_rate)?;
        positive("max_rate_scale", self.max_rate_scale)?;
        if self.bucket < Duration::from_millis(1) {
            return Err(ParamError::new(
                "bucket",
                crate::time::Human(self.bucket),
                "a duration of at least 1ms",
            ));
        }
        Ok(())
    }
}

/// One client's adaptive rate limiter (shared by all its calls).
#[derive(Debug, Clone, PartialEq)]
pub struct AdaptiveRateLimiter {
    max_rate_scale: f64,
    cubic: CubicRate,
    measured: SendRate,
    bucket: RateBucket,
    enabled: bool,
}

impl AdaptiveRateLimiter {
    /// A limiter created at `now`, off, its bucket filling at 1 token per second, as
    /// botocore's `register_retry_handler` makes it. `config` must be valid
    /// ([`AdaptiveRateConfig::validate`]).
    pub fn new(config: AdaptiveRateConfig, now: Duration) -> AdaptiveRateLimiter {
        let t = now.as_secs_f64();
        AdaptiveRateLimiter {
            max_rate_scale: config.max_rate_scale,
            cubic: CubicRate::new(0.0, t, config.scale, config.beta),
            measured: SendRate::new(t, config.smoothing, config.bucket.as_secs_f64()),
            bucket: RateBucket::new(1.0, config.min_fill_rate, t),
            enabled: false,
        }
    }

    /// Takes a token for an attempt at `now` (always, while off), or says how long to wait;
    /// after the wait, ask again (the rate may have changed meanwhile).
    pub fn try_acquire(&mut self, now: Duration) -> Result<(), Duration> {
        if !self.enabled {
            return Ok(());
        }
        self.bucket.try_acquire(now.as_secs_f64())
    }

    /// An attempt's answer at `now`: `throttled` if it was a throttling answer.
    pub fn on_answer(&mut self, now: Duration, throttled: bool) {
        let t = now.as_secs_f64();
        let measured = self.measured.record(t);
        let rate = if throttled {
            let current = if self.enabled {
                measured.min(self.bucket.fill_rate())
            } else {
                measured
            };
            self.enabled = true;
            self.cubic.on_throttle(current, t)
        } else {
            self.cubic.on_success(t)
        };
        self.bucket
            .set_rate(rate.min(self.max_rate_scale * measured), t);
    }

    /// Whether a throttling answer has turned the limiter on.
    pub const fn enabled(&self) -> bool {
        self.enabled
    }

    /// Tokens per second now (`max_rate` in the SDK).
    pub const fn fill_rate(&self) -> f64 {
        self.bucket.fill_rate()
    }

    /// The most tokens the bucket holds.
    pub const fn max_capacity(&self) -> f64 {
        self.bucket.max_capacity()
    }

    /// The tokens in the bucket at its last refill.
    pub const fn capacity(&self) -> f64 {
        self.bucket.capacity()
    }

    /// The measured rate of answers per second.
    pub const fn measured_rate(&self) -> f64 {
        self.measured.rate()
    }

    /// CUBIC's `W_max` and `K`.
    pub const fn cubic(&self) -> (f64, f64) {
        (self.cubic.w_max(), self.cubic.k())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> Duration {
        Duration::from_secs_f64(x)
    }

    /// By hand, botocore's constants: ten answers in [0, 0.5), the eleventh (a 429) at 0.5:
    /// measured 0.8 * 11 / 0.5 = 17.6; W_max 17.6; fill rate 0.7 * 17.6 = 12.32 (below
    /// 2 * 17.6); capacity 12.32. A success at 1.0: bucket 1.0, 1 / 0.5 = 2, measured
    /// 0.8 * 2 + 0.2 * 17.6 = 5.12; cubic 0.4 * (0.5 - K)^3 + 17.6 with
    /// K = cbrt(17.6 * 0.3 / 0.4) = cbrt(13.2); capped at 2 * 5.12 = 10.24.
    #[test]
    fn hand_computed_throttle_and_recovery() {
        let mut l = AdaptiveRateLimiter::new(AdaptiveRateConfig::default(), Duration::ZERO);
        for i in 0..10 {
            l.on_answer(s(0.04 * i as f64), false);
            assert!(!l.enabled());
        }
        l.on_answer(s(0.5), true);
        assert!(l.enabled());
        assert!((l.measured_rate() - 17.6).abs() < 1e-9);
        assert!((l.cubic().0 - 17.6).abs() < 1e-9);
        assert!((l.fill_rate() - 12.32).abs() < 1e-9);
        assert!((l.max_capacity() - 12.32).abs() < 1e-9);
        let k = 13.2_f64.cbrt();
        assert!((l.cubic().1 - k).abs() < 1e-9);
        l.on_answer(s(1.0), false);
        assert!((l.measured_rate() - 5.12).abs() < 1e-9);
        let cubic = 0.4 * (0.5 - k).powi(3) + 17.6;
        assert!(cubic > 10.24, "{cubic}: the cap is what binds");
        assert!((l.fill_rate() - 10.24).abs() < 1e-9);
    }

    /// Off, nothing waits; on, the bucket spaces attempts at the fill rate.
    #[test]
    fn waits_only_once_throttled() {
        let mut l = AdaptiveRateLimiter::new(AdaptiveRateConfig::default(), Duration::ZERO);
        for _ in 0..100 {
            assert_eq!(l.try_acquire(Duration::ZERO), Ok(()));
        }
        // One answer, a throttle, in the first bucket: measured 0, so the fill rate is the
        // minimum 0.5 and the capacity 1; the bucket holds the 0.2 tokens its first rate (1
        // per second since 0) brought: 0.8 / 0.5 = 1.6 s to wait.
        l.on_answer(s(0.2), true);
        assert_eq!((l.fill_rate(), l.max_capacity()), (0.5, 1.0));
        assert!((l.capacity() - 0.2).abs() < 1e-12);
        assert_eq!(l.try_acquire(s(0.2)), Err(s(1.6)));
        assert_eq!(l.try_acquire(s(1.8)), Ok(()));
        assert_eq!(l.try_acquire(s(1.8)), Err(s(2.0)));
    }

    #[test]
    fn validate_names_the_constant() {
        let bad = AdaptiveRateConfig {
            beta: 1.5,
            ..AdaptiveRateConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "beta");
        let bad = AdaptiveRateConfig {
            bucket: Duration::ZERO,
            ..AdaptiveRateConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "bucket");
        assert!(AdaptiveRateConfig::default().validate().is_ok());
    }
}
