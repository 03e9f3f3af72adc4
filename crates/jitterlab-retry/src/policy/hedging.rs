//! Hedged requests (gRFC A6 `hedgingPolicy`): copies of a request sent while none has
//! answered, the first success winning, the others cancelled.
//!
//! [`HedgingPolicy`] (its rules are there) is what jitterlab's simulator and the async
//! executor both run.

use std::time::Duration;

use super::RetryOn;
use crate::param::ParamError;
use crate::time::to_nanos;

/// The most copies of one request, the first included (A6: "maxAttempts ... values greater
/// than 5 are treated as 5").
pub const MAX_HEDGED_ATTEMPTS: u32 = 5;

/// When the next copy leaves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HedgeDelay {
    /// A fixed time after the last copy (A6's `hedgingDelay`).
    Fixed(Duration),
    /// This percentile (0 < p < 100) of the successful copies' latency so far ("The Tail at
    /// Scale"). The simulator's alone: the async executor refuses it.
    Percentile(f64),
}

/// A hedging policy: A6's `hedgingPolicy`, run by jitterlab's simulator (its `sim::hedge`)
/// and by the async executor (`exec::asynchronous`, the `async` feature) by the same rules:
/// A6's `hedgingDelay` ([`HedgingPolicy::delay`]), `maxAttempts`
/// ([`HedgingPolicy::max_attempts`], 2 to [`MAX_HEDGED_ATTEMPTS`]) and `nonFatalStatusCodes`
/// ([`HedgingPolicy::non_fatal`]). A policy with hedging replaces retries (A6: a method has a
/// retry or a hedging policy, never both): the backoff, `retry_on` and `max_attempts` of the
/// [`RetryPolicy`](super::RetryPolicy) are not used, its `timeout` and `deadline` are.
///
/// The rules:
///
/// - the first copy leaves at once; while no copy has succeeded and fewer than
///   `max_attempts` were sent, another leaves `delay` after the last one;
/// - a copy that fails with an outcome in `non_fatal` sends the next copy at once (A6:
///   "the next hedged request is sent immediately"); any other failure ends the request with
///   that answer and cancels the rest;
/// - the first success ends the request and cancels the rest;
/// - every copy after the first asks the retry budget as a transient retry would, then the
///   circuit breaker; a refusal sends no more copies (A6: hedges count against retry
///   throttling). Each failed copy is a budget failure, each success a success.
///
/// ```
/// use std::time::Duration;
/// use jitterlab_retry::policy::{HedgingPolicy, RetryOn};
///
/// let hedging = HedgingPolicy::fixed(Duration::from_millis(10))
///     .max_attempts(3)
///     .non_fatal(RetryOn::none().with_status(503)?);
/// hedging.validate()?;
/// assert_eq!(hedging.max_attempts, 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HedgingPolicy {
    /// Between copies.
    pub delay: HedgeDelay,
    /// Copies including the first, 2 to [`MAX_HEDGED_ATTEMPTS`].
    pub max_attempts: u32,
    /// Failures after which the next copy leaves at once; any other failure ends the request.
    pub non_fatal: RetryOn,
}

impl HedgingPolicy {
    /// A copy every `delay`, A6's defaults otherwise: 2 copies, no failure non-fatal.
    pub const fn fixed(delay: Duration) -> HedgingPolicy {
        HedgingPolicy::new(HedgeDelay::Fixed(delay))
    }

    /// A copy every `delay`, 2 copies, no failure non-fatal.
    pub const fn new(delay: HedgeDelay) -> HedgingPolicy {
        HedgingPolicy {
            delay,
            max_attempts: 2,
            non_fatal: RetryOn::none(),
        }
    }

    /// Copies including the first (2 to [`MAX_HEDGED_ATTEMPTS`]).
    pub const fn max_attempts(mut self, max_attempts: u32) -> HedgingPolicy {
        self.max_attempts = max_attempts;
        self
    }

    /// The failures after which the next copy leaves at once.
    pub const fn non_fatal(mut self, non_fatal: RetryOn) -> HedgingPolicy {
        self.non_fatal = non_fatal;
        self
    }

    /// The fixed delay, if it is one.
    pub const fn fixed_delay(&self) -> Option<Duration> {
        match self.delay {
            HedgeDelay::Fixed(d) => Some(d),
            HedgeDelay::Percentile(_) => None,
        }
    }

    /// Checks the policy; errors name `hedging.delay` or `hedging.max_attempts`.
    pub fn validate(&self) -> Result<(), ParamError> {
        match self.delay {
            HedgeDelay::Fixed(d) if to_nanos(d) == 0 => {
                return Err(ParamError::new(
                    "hedging.delay",
                    "0ms",
                    "a duration above 0 (a copy sent at once is a duplicate, not a hedge)",
                ));
            }
            HedgeDelay::Percentile(p) if !(p > 0.0 && p < 100.0) => {
                return Err(ParamError::new(
                    "hedging.delay",
                    format!("p{p}"),
                    "a percentile above 0 and below 100",
                ));
            }
            _ => {}
        }
        if !(2..=MAX_HEDGED_ATTEMPTS).contains(&self.max_attempts) {
            return Err(ParamError::new(
                "hedging.max_attempts",
                self.max_attempts,
                format!("an integer from 2 to {MAX_HEDGED_ATTEMPTS} (gRPC's cap)"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_field() {
        let zero = HedgingPolicy::fixed(Duration::ZERO).validate().unwrap_err();
        assert_eq!(zero.field, "hedging.delay");
        for n in [0, 1, 6] {
            let e = HedgingPolicy::fixed(Duration::from_millis(1))
                .max_attempts(n)
                .validate()
                .unwrap_err();
            assert_eq!(
                (e.field.as_ref(), e.value),
                ("hedging.max_attempts", n.to_string())
            );
        }
        for n in 2..=5 {
            assert!(
                HedgingPolicy::fixed(Duration::from_millis(1))
                    .max_attempts(n)
                    .validate()
                    .is_ok()
            );
        }
        let p = HedgingPolicy::new(HedgeDelay::Percentile(100.0))
            .validate()
            .unwrap_err();
        assert_eq!(p.field, "hedging.delay");
    }
}
