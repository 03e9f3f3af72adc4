//! Time at the engine's edge and inside it.
//!
//! Every public signature takes and returns [`std::time::Duration`]. An *instant* (the `now`
//! of a breaker or a budget, the `start` of a call) is a `Duration` since the origin of the
//! caller's clock ([`crate::exec::Clock::now`]); only differences between instants matter.
//!
//! Inside, the engine computes in whole nanoseconds (`u64`, about 584 years; a longer
//! `Duration` saturates there): sums and comparisons are exact and the same on every machine.
//! A simulator driving millions of requests calls the same code without converting anything,
//! through a few explicit entry points in integer nanoseconds since its clock's origin:
//!
//! - [`NanosPolicy`](crate::policy::NanosPolicy) (from [`RetryPolicy::nanos`](crate::policy::RetryPolicy::nanos)):
//!   `decide` and `attempt_timeout`, with [`AttemptReport<u64>`](crate::policy::AttemptReport)
//!   and [`Decision<u64>`](crate::policy::Decision);
//! - [`Backoff::next_delay_nanos`](crate::backoff::Backoff::next_delay_nanos);
//! - [`Breaker::allow_nanos`](crate::policy::Breaker::allow_nanos),
//!   [`record_nanos`](crate::policy::Breaker::record_nanos) and
//!   [`would_allow_nanos`](crate::policy::Breaker::would_allow_nanos);
//! - [`Throttle::admit_nanos`](crate::policy::throttle::Throttle::admit_nanos) and
//!   [`on_accept_nanos`](crate::policy::throttle::Throttle::on_accept_nanos);
//! - [`Budget::on_begin_nanos`](crate::policy::Budget::on_begin_nanos) and
//!   [`refund_retry_nanos`](crate::policy::Budget::refund_retry_nanos).
//!
//! Each gives exactly the values of its `Duration` twin, random draws included (a property
//! test in `tests/nanos.rs` checks every one).
//!
//! [`Human`] and [`Exact`] print durations for people and for configuration files.

use std::fmt;
use std::time::Duration;

/// Nanoseconds in one millisecond.
pub(crate) const NANOS_PER_MS: u64 = 1_000_000;
/// Nanoseconds in one second.
pub(crate) const NANOS_PER_SEC: u64 = 1_000_000_000;

/// `d` in whole nanoseconds, saturating at `u64::MAX` (about 584 years).
#[inline]
pub(crate) const fn to_nanos(d: Duration) -> u64 {
    // In u64 arithmetic: `as_nanos` would multiply in u128, on the simulator's hot path.
    match d.as_secs().checked_mul(NANOS_PER_SEC) {
        Some(secs) => secs.saturating_add(d.subsec_nanos() as u64),
        None => u64::MAX,
    }
}

/// `ns` nanoseconds as a `Duration` (exact).
#[inline]
pub(crate) const fn from_nanos(ns: u64) -> Duration {
    Duration::from_nanos(ns)
}

/// Rounds a float count of nanoseconds into `u64` (half up), saturating; negative and NaN give
/// zero. The one rounding of the engine and of a simulator calling it, so that the two never
/// round differently.
#[inline]
pub fn f64_to_nanos(ns: f64) -> u64 {
    if ns.is_nan() || ns <= 0.0 {
        0
    } else if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        // Round half up by hand: `f64::round` is a libm call on x86-64 without SSE4.1, several
        // times the cost of the whole backoff step that uses it.
        (ns + 0.5) as u64
    }
}

/// A duration for people, in logs and messages: about three significant digits in the largest
/// unit that fits (`2.41s`, `250ms`, `1.5ms`, `17µs`, `7ns`), and from a minute on whole
/// seconds or minutes (`1m30s`, `2h5m`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Human(pub Duration);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MINUTE: u128 = 60 * NANOS_PER_SEC as u128;
        let ns = self.0.as_nanos();
        if ns >= 60 * MINUTE {
            let minutes = (ns + MINUTE / 2) / MINUTE;
            return match minutes % 60 {
                0 => write!(f, "{}h", minutes / 60),
                m => write!(f, "{}h{m}m", minutes / 60),
            };
        }
        if ns >= MINUTE {
            let secs = (ns + u128::from(NANOS_PER_SEC) / 2) / u128::from(NANOS_PER_SEC);
            return match secs % 60 {
                0 => write!(f, "{}m", secs / 60),
                s => write!(f, "{}m{s}s", secs / 60),
            };
        }
        let (scale, unit) = [(NANOS_PER_SEC, "s"), (NANOS_PER_MS, "ms"), (1_000, "µs")]
            .into_iter()
            .find(|&(scale, _)| ns >= u128::from(scale))
            .unwrap_or((1, "ns"));
        let value = ns as f64 / scale as f64;
        let decimals = match value {
            v if v >= 100.0 => 0,
            v if v >= 10.0 => 1,
            _ => 2,
        };
        let text = format!("{value:.decimals$}");
        let text = if decimals > 0 {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        write!(f, "{text}{unit}")
    }
}

/// A duration exactly, in the largest unit that divides it: `250ms`, `2s`, `1m`, `1500us`,
/// `7ns` (`0ms` for zero). The form configuration files and error messages use; a span beyond
/// `u64` nanoseconds prints as that maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exact(pub Duration);

impl fmt::Display for Exact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 6] = [
            (3_600 * NANOS_PER_SEC, "h"),
            (60 * NANOS_PER_SEC, "m"),
            (NANOS_PER_SEC, "s"),
            (NANOS_PER_MS, "ms"),
            (1_000, "us"),
            (1, "ns"),
        ];
        let ns = to_nanos(self.0);
        if ns == 0 {
            return f.write_str("0ms");
        }
        let (scale, unit) = UNITS
            .into_iter()
            .find(|&(scale, _)| ns.is_multiple_of(scale))
            .unwrap_or((1, "ns"));
        write!(f, "{}{unit}", ns / scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_are_short() {
        let human = |ns: u64| Human(Duration::from_nanos(ns)).to_string();
        assert_eq!(human(2_413_499_544), "2.41s");
        assert_eq!(human(250 * NANOS_PER_MS), "250ms");
        assert_eq!(human(1_500_000), "1.5ms");
        assert_eq!(human(17_000), "17µs");
        assert_eq!(human(7), "7ns");
        assert_eq!(human(0), "0ns");
        assert_eq!(human(12_345 * NANOS_PER_MS), "12.3s");
        assert_eq!(human(90 * NANOS_PER_SEC), "1m30s");
        assert_eq!(human(120 * NANOS_PER_SEC), "2m");
        assert_eq!(human(7_500 * NANOS_PER_SEC), "2h5m");
        assert_eq!(human(u64::MAX), "5124095h35m");
    }

    #[test]
    fn exact_durations_use_the_largest_unit_that_divides() {
        let exact = |ns: u64| Exact(Duration::from_nanos(ns)).to_string();
        assert_eq!(exact(0), "0ms");
        assert_eq!(exact(250 * NANOS_PER_MS), "250ms");
        assert_eq!(exact(1_500_000), "1500us");
        assert_eq!(exact(60 * NANOS_PER_SEC), "1m");
        assert_eq!(exact(7), "7ns");
        assert_eq!(Exact(Duration::MAX).to_string(), format!("{}ns", u64::MAX));
    }

    #[test]
    fn nanos_round_trip_and_saturate() {
        for ns in [0, 1, 999_999_999, 1_000_000_000, u64::MAX] {
            assert_eq!(to_nanos(from_nanos(ns)), ns);
        }
        assert_eq!(to_nanos(Duration::MAX), u64::MAX);
        assert_eq!(f64_to_nanos(-1.0), 0);
        assert_eq!(f64_to_nanos(f64::NAN), 0);
        assert_eq!(f64_to_nanos(1.5), 2);
        assert_eq!(f64_to_nanos(1e30), u64::MAX);
    }
}
