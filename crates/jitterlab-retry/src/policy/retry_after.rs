//! Retry-After: parsing the header and combining it with the backoff sleep.
//!
//! A server may say how long to wait (`Retry-After: 120` or an HTTP-date, RFC 9110 §10.2.3).
//! [`parse_retry_after`] reads either form relative to a given wall-clock time; a date in the
//! past means "now" (zero) and an unparseable value is ignored (`None`), never an error.
//!
//! [`RetryAfterPolicy`] decides what the client does with the hint ([`RetryAfterMode`]):
//! `ignore` it, sleep `at_least` as long (`max(backoff, RA)`), or `spread` the herd over
//! `max(backoff, U[RA, 1.5 RA])`. Honouring the hint never sleeps less than the server asked:
//! the jittered backoff can only lengthen the sleep, never shorten it.
//!
//! The AWS SDKs read another header, `x-amz-retry-after`, in integer milliseconds
//! ([`parse_retry_after_millis`], [`RetryAfterHeader::AmzMillis`]), and honour it no more than
//! 5 s above the computed backoff ([`RetryAfterPolicy::max_extra`]; botocore
//! `retries/standard.py`, `ExponentialBackoff.delay_amount`:
//! `max(t_i, min(retry_after, t_i + 5))`).

use std::fmt;
use std::time::{Duration, SystemTime};

use rand_core::Rng;

use crate::draw::u64_inclusive;

use crate::param::ValueError;
use crate::time::{from_nanos, to_nanos};

/// Parses a `Retry-After` value: delta-seconds (`"120"`) or an HTTP-date (`"Wed, 21 Oct 2015
/// 07:28:00 GMT"`), relative to `now`. A date at or before `now` gives zero; a value that is
/// neither form (including negative or fractional seconds) gives `None`. Delta-seconds too
/// large for a `u64` saturate.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        let secs = value.parse::<u64>().unwrap_or(u64::MAX);
        // Kept to u64 nanoseconds (about 584 years), as every duration inside the engine.
        return Some(from_nanos(to_nanos(Duration::from_secs(secs))));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(match date.duration_since(now) {
        Ok(ahead) => from_nanos(to_nanos(ahead)),
        Err(_) => Duration::ZERO,
    })
}

/// Parses an `x-amz-retry-after` value: a non-negative integer of milliseconds (`"1500"`).
/// Anything else (negative, fractional, a date) gives `None`, as botocore ignores it.
pub fn parse_retry_after_millis(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ms = value.parse::<u64>().unwrap_or(u64::MAX);
    Some(from_nanos(to_nanos(Duration::from_millis(ms))))
}

/// The largest hint honoured after a backoff of `backoff`: at most `max`, and at most
/// `max_extra` above the backoff (all in nanoseconds; `None`: no limit).
#[inline]
pub(crate) fn hint_clamp(max: Option<u64>, max_extra: Option<u64>, backoff: u64) -> Option<u64> {
    let above = max_extra.map(|extra| backoff.saturating_add(extra));
    match (max, above) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Which header carries the hint a client reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RetryAfterHeader {
    /// `Retry-After`: delta-seconds or an HTTP-date (RFC 9110).
    #[default]
    RetryAfter,
    /// `x-amz-retry-after`: integer milliseconds (the AWS SDKs' header; they ignore
    /// `Retry-After`).
    AmzMillis,
}

impl RetryAfterHeader {
    /// Both headers.
    pub const ALL: [RetryAfterHeader; 2] =
        [RetryAfterHeader::RetryAfter, RetryAfterHeader::AmzMillis];

    /// The header's name in lower case: `retry-after` or `x-amz-retry-after`.
    pub const fn name(self) -> &'static str {
        match self {
            RetryAfterHeader::RetryAfter => "retry-after",
            RetryAfterHeader::AmzMillis => "x-amz-retry-after",
        }
    }

    /// Parses a raw header value of this header (`now` for an HTTP-date).
    pub fn parse(self, value: &str, now: SystemTime) -> Option<Duration> {
        match self {
            RetryAfterHeader::RetryAfter => parse_retry_after(value, now),
            RetryAfterHeader::AmzMillis => parse_retry_after_millis(value),
        }
    }
}

impl std::str::FromStr for RetryAfterHeader {
    type Err = ValueError;

    /// Parses a header name (any case); the error lists the two.
    fn from_str(text: &str) -> Result<RetryAfterHeader, ValueError> {
        RetryAfterHeader::ALL
            .into_iter()
            .find(|h| h.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                ValueError::new(
                    format!("{text:?}"),
                    "one of \"retry-after\", \"x-amz-retry-after\"",
                )
            })
    }
}

impl fmt::Display for RetryAfterHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the client does with a Retry-After hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RetryAfterMode {
    /// Sleep the backoff delay; the hint is not used.
    Ignore,
    /// Sleep `max(backoff, RA)`.
    #[default]
    AtLeast,
    /// Sleep `max(backoff, U[RA, 1.5 RA])`: clients told the same RA do not all return at once.
    Spread,
    /// Sleep exactly the hint, shorter or longer than the backoff (Polly's `DelayGenerator`
    /// in Microsoft.Extensions.Http.Resilience: `Retry-After` replaces the delay).
    Exact,
}

impl RetryAfterMode {
    /// Every mode.
    pub const ALL: [RetryAfterMode; 4] = [
        RetryAfterMode::Ignore,
        RetryAfterMode::AtLeast,
        RetryAfterMode::Spread,
        RetryAfterMode::Exact,
    ];

    /// The name used in scenario files: `ignore`, `at_least`, `spread` or `exact`.
    pub const fn name(self) -> &'static str {
        match self {
            RetryAfterMode::Ignore => "ignore",
            RetryAfterMode::AtLeast => "at_least",
            RetryAfterMode::Spread => "spread",
            RetryAfterMode::Exact => "exact",
        }
    }
}

impl std::str::FromStr for RetryAfterMode {
    type Err = ValueError;

    /// Parses a name; the error lists the allowed names.
    fn from_str(text: &str) -> Result<RetryAfterMode, ValueError> {
        RetryAfterMode::ALL
            .into_iter()
            .find(|m| m.name() == text.trim())
            .ok_or_else(|| {
                ValueError::new(
                    format!("{text:?}"),
                    "one of ignore, at_least, spread, exact",
                )
            })
    }
}

impl fmt::Display for RetryAfterMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a client honours Retry-After.
///
/// `max` is the largest hint honoured: a larger hint is clamped to `max` (not ignored), so a
/// server asking for an hour still gets the longest pause the client is willing to make. In
/// `spread` mode the clamped hint is then spread, so the sleep may reach `1.5 * max`.
/// `None` honours any hint; a request deadline still refuses sleeps that end past it. A `max`
/// of zero cuts every hint to nothing, which is [`RetryAfterMode::Ignore`] by another name (the
/// scenario key `client.retry_after_max` allows it; [`crate::exec::RetrierBuilder`] refuses
/// it as a likely mistake).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RetryAfterPolicy {
    /// What to do with a hint (default `at_least`).
    pub mode: RetryAfterMode,
    /// Largest hint honoured (default `None`: no limit).
    pub max: Option<Duration>,
    /// Largest amount a hint may add to the backoff sleep: the hint is honoured up to
    /// `backoff + max_extra` (default `None`: no such limit; AWS: 5 s).
    pub max_extra: Option<Duration>,
    /// The header the client reads (default `Retry-After`).
    pub header: RetryAfterHeader,
}

impl RetryAfterPolicy {
    /// The sleep before the next retry, given the jittered `backoff` sleep and the server's
    /// `hint`. Never less than the (clamped) hint unless the mode is `ignore`. `spread` draws
    /// one number from `rng` only when a hint is present, so runs without hints consume the
    /// same random numbers in every mode.
    #[inline]
    pub fn sleep<R: Rng + ?Sized>(
        &self,
        backoff: Duration,
        hint: Option<Duration>,
        rng: &mut R,
    ) -> Duration {
        let backoff = to_nanos(backoff);
        let max = self.clamp_nanos(backoff);
        from_nanos(self.sleep_nanos(backoff, hint.map(to_nanos), max, rng))
    }

    /// The largest hint honoured after a backoff of `backoff` nanoseconds: `max`, and
    /// `backoff + max_extra`.
    pub(crate) fn clamp_nanos(&self, backoff: u64) -> Option<u64> {
        hint_clamp(
            self.max.map(to_nanos),
            self.max_extra.map(to_nanos),
            backoff,
        )
    }

    /// The shortest sleep that still honours `hint` (zero without one, or when ignored): the
    /// hint clamped to `max` (the policy's clamp for this backoff).
    #[inline]
    pub(crate) fn floor_nanos(&self, hint: Option<u64>, max: Option<u64>) -> u64 {
        match (self.mode, hint) {
            (RetryAfterMode::Ignore, _) | (_, None) => 0,
            (_, Some(hint)) => max.map_or(hint, |max| hint.min(max)),
        }
    }

    /// [`RetryAfterPolicy::sleep`] in integer nanoseconds, `max` being
    /// [`RetryAfterPolicy::clamp_nanos`] of `backoff`.
    #[inline]
    pub(crate) fn sleep_nanos<R: Rng + ?Sized>(
        &self,
        backoff: u64,
        hint: Option<u64>,
        max: Option<u64>,
        rng: &mut R,
    ) -> u64 {
        let Some(hint) = hint else {
            return backoff;
        };
        let ra = match max {
            Some(max) => hint.min(max),
            None => hint,
        };
        match self.mode {
            RetryAfterMode::Ignore => backoff,
            RetryAfterMode::AtLeast => backoff.max(ra),
            RetryAfterMode::Exact => ra,
            RetryAfterMode::Spread => {
                let high = ra.saturating_add(ra / 2);
                backoff.max(u64_inclusive(rng, ra, high))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng;
    use std::time::UNIX_EPOCH;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// 2015-10-21T07:28:00Z, the RFC's example date.
    fn rfc_now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_445_412_480)
    }

    #[test]
    fn delta_seconds() {
        let now = rfc_now();
        assert_eq!(parse_retry_after("120", now), Some(secs(120)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("99999999999999999999999", now),
            Some(Duration::from_nanos(u64::MAX)),
            "saturates at the engine's longest duration"
        );
    }

    #[test]
    fn http_date_relative_to_now() {
        let now = rfc_now();
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:30:05 GMT", now),
            Some(secs(125))
        );
        // The same date from a later "now" is shorter, and in the past it is zero.
        let later = now + Duration::from_secs(100);
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:30:05 GMT", later),
            Some(secs(25))
        );
        assert_eq!(
            parse_retry_after("Tue, 20 Oct 2015 07:28:00 GMT", now),
            Some(Duration::ZERO)
        );
        // A sub-second "now" is honoured exactly.
        let now_half = now + Duration::from_millis(500);
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:01 GMT", now_half),
            Some(Duration::from_millis(500))
        );
    }

    #[test]
    fn garbage_is_ignored() {
        for bad in [
            "",
            "  ",
            "soon",
            "-5",
            "1.5",
            "+3",
            "12s",
            "Wed, 32 Oct 2015 07:28:00 GMT",
        ] {
            assert_eq!(parse_retry_after(bad, rfc_now()), None, "{bad:?}");
        }
    }

    #[test]
    fn modes_parse_and_name() {
        for m in RetryAfterMode::ALL {
            assert_eq!(m.name().parse::<RetryAfterMode>().unwrap(), m);
        }
        let err = "always".parse::<RetryAfterMode>().unwrap_err();
        assert_eq!(err.value, "\"always\"");
        assert!(err.allowed.contains("at_least"), "{err}");
    }

    #[test]
    fn at_least_and_ignore_and_clamp() {
        let mut rng = test_rng(1);
        let at_least = RetryAfterPolicy {
            mode: RetryAfterMode::AtLeast,
            max: None,
            ..RetryAfterPolicy::default()
        };
        assert_eq!(at_least.sleep(secs(1), Some(secs(3)), &mut rng), secs(3));
        assert_eq!(at_least.sleep(secs(5), Some(secs(3)), &mut rng), secs(5));
        assert_eq!(at_least.sleep(secs(1), None, &mut rng), secs(1));
        let ignore = RetryAfterPolicy {
            mode: RetryAfterMode::Ignore,
            max: None,
            ..RetryAfterPolicy::default()
        };
        assert_eq!(ignore.sleep(secs(1), Some(secs(3)), &mut rng), secs(1));
        let clamped = RetryAfterPolicy {
            mode: RetryAfterMode::AtLeast,
            max: Some(secs(10)),
            ..RetryAfterPolicy::default()
        };
        assert_eq!(clamped.sleep(secs(1), Some(secs(3600)), &mut rng), secs(10));
        assert_eq!(
            clamped.sleep(secs(20), Some(secs(3600)), &mut rng),
            secs(20)
        );
        let spread = RetryAfterPolicy {
            mode: RetryAfterMode::Spread,
            max: Some(secs(10)),
            ..RetryAfterPolicy::default()
        };
        for _ in 0..100 {
            let s = spread.sleep(Duration::ZERO, Some(secs(3600)), &mut rng);
            assert!(s >= secs(10) && s <= secs(15), "{s:?}");
        }
    }

    #[test]
    fn spread_draws_only_with_a_hint() {
        use rand::Rng;
        let spread = RetryAfterPolicy {
            mode: RetryAfterMode::Spread,
            max: None,
            ..RetryAfterPolicy::default()
        };
        let mut a = test_rng(9);
        let mut b = test_rng(9);
        spread.sleep(secs(1), None, &mut a);
        assert_eq!(a.next_u64(), b.next_u64());
        spread.sleep(secs(1), Some(secs(2)), &mut a);
        assert_ne!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn spread_covers_the_range() {
        let spread = RetryAfterPolicy {
            mode: RetryAfterMode::Spread,
            max: None,
            ..RetryAfterPolicy::default()
        };
        let mut rng = test_rng(3);
        let draws: Vec<Duration> = (0..2_000)
            .map(|_| spread.sleep(Duration::ZERO, Some(secs(2)), &mut rng))
            .collect();
        let lo = draws.iter().min().copied().unwrap_or_default();
        let hi = draws.iter().max().copied().unwrap_or_default();
        assert!(lo >= secs(2) && lo < Duration::from_millis(2_010), "{lo:?}");
        assert!(hi <= secs(3) && hi > Duration::from_millis(2_990), "{hi:?}");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn spread_never_below_ra_nor_above_one_and_a_half(backoff in 0u64..10_000_000_000, ra in 0u64..100_000_000_000, seed in any::<u64>()) {
                let spread = RetryAfterPolicy { mode: RetryAfterMode::Spread, max: None, ..RetryAfterPolicy::default() };
                let mut rng = test_rng(seed);
                let s = spread.sleep(Duration::from_nanos(backoff), Some(Duration::from_nanos(ra)), &mut rng).as_nanos() as u64;
                prop_assert!(s >= ra && s >= backoff);
                prop_assert!(s <= backoff.max(ra + ra / 2));
                if backoff <= ra {
                    prop_assert!(s <= ra + ra / 2);
                }
            }

            #[test]
            fn honouring_never_sleeps_less_than_asked(backoff in any::<u64>(), ra in any::<u64>(), max in any::<u64>(), seed in any::<u64>()) {
                let mut rng = test_rng(seed);
                for mode in [RetryAfterMode::AtLeast, RetryAfterMode::Spread] {
                    let p = RetryAfterPolicy { mode, max: Some(Duration::from_nanos(max)), ..RetryAfterPolicy::default() };
                    let s = p.sleep(Duration::from_nanos(backoff), Some(Duration::from_nanos(ra)), &mut rng).as_nanos() as u64;
                    prop_assert!(s >= backoff && s >= ra.min(max));
                }
            }
        }
    }
}
