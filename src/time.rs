//! Virtual time: integer nanoseconds.
//!
//! The simulator's own time types. The engine (`jitterlab-retry`) takes [`std::time::Duration`]
//! at its edge and computes in the same integer nanoseconds inside; the simulator calls its
//! `_nanos` entry points with `.as_nanos()` of these, so the hot path converts nothing.
//!
//! [`SimTime`] is an instant on the virtual clock (nanoseconds since the run began) and
//! [`SimDuration`] a span. Both are `u64` newtypes, so event ordering is exact and the same on
//! every machine; floats appear only at the edges (CSV columns in milliseconds, charts).
//!
//! Durations are written with a unit, as in scenario files: `"250ms"`, `"2s"`, `"1.5s"`,
//! `"1m"`, `"100us"`, `"1h"` (read with `str::parse`). [`parse_limit`] also accepts `"off"` for a
//! disabled limit.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::str::FromStr;

use crate::error::Error;
use crate::param::ValueError;

/// Nanoseconds in one millisecond.
pub const NANOS_PER_MS: u64 = 1_000_000;
/// Nanoseconds in one second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A span of virtual time in whole nanoseconds (serialized as the number of nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct SimDuration(pub u64);

/// An instant of virtual time: nanoseconds since the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

impl SimDuration {
    /// Zero length.
    pub const ZERO: SimDuration = SimDuration(0);
    /// The longest representable span (about 584 years).
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// From whole nanoseconds.
    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns)
    }
    /// From whole microseconds (saturating).
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us.saturating_mul(1_000))
    }
    /// From whole milliseconds (saturating).
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms.saturating_mul(NANOS_PER_MS))
    }
    /// From whole seconds (saturating).
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s.saturating_mul(NANOS_PER_SEC))
    }
    /// From fractional seconds, rounded to the nearest nanosecond and saturating; negative and
    /// NaN give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        SimDuration(f64_to_nanos(s * NANOS_PER_SEC as f64))
    }
    /// Whole nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Milliseconds as a float (for output).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_MS as f64
    }
    /// Seconds as a float (for output).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// Exact milliseconds as a decimal string for CSV output: `28.68`, `50`, `0.000001`.
    pub fn millis_string(self) -> String {
        millis_string(self.0)
    }
    /// Saturating addition.
    pub const fn saturating_add(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(other.0))
    }
    /// Saturating subtraction.
    pub const fn saturating_sub(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(other.0))
    }
    /// Multiplies by a non-negative float, rounding and saturating.
    pub fn mul_f64(self, factor: f64) -> SimDuration {
        SimDuration(f64_to_nanos(self.0 as f64 * factor))
    }
    /// As a [`std::time::Duration`].
    pub const fn to_std(self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.0)
    }
    /// From a [`std::time::Duration`], saturating.
    pub fn from_std(d: std::time::Duration) -> Self {
        SimDuration(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}

impl From<std::time::Duration> for SimDuration {
    /// Saturating: a span beyond ~584 years becomes [`SimDuration::MAX`].
    fn from(d: std::time::Duration) -> Self {
        SimDuration::from_std(d)
    }
}

impl From<SimDuration> for std::time::Duration {
    /// Exact: every `SimDuration` fits.
    fn from(d: SimDuration) -> Self {
        d.to_std()
    }
}

impl From<SimTime> for std::time::Duration {
    /// The time since the run's start: the engine's instants are `Duration`s since its
    /// clock's origin.
    fn from(t: SimTime) -> Self {
        std::time::Duration::from_nanos(t.0)
    }
}

pub use jitterlab_retry::time::Human;

impl SimDuration {
    /// This span for people: see [`Human`].
    pub fn human(self) -> Human {
        Human(self.to_std())
    }
}

/// Exact milliseconds of `ns` nanoseconds as a decimal without trailing zeros.
pub fn millis_string(ns: u64) -> String {
    let whole = ns / NANOS_PER_MS;
    let frac = ns % NANOS_PER_MS;
    if frac == 0 {
        whole.to_string()
    } else {
        let digits = format!("{frac:06}");
        format!("{whole}.{}", digits.trim_end_matches('0'))
    }
}

/// Rounds a float count of nanoseconds into `u64`, saturating: the engine's rounding.
pub(crate) use jitterlab_retry::time::f64_to_nanos;

impl SimTime {
    /// The start of the run.
    pub const ZERO: SimTime = SimTime(0);
    /// Never: later than any reachable instant.
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// Nanoseconds since the start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Milliseconds since the start, as a float (for output).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_MS as f64
    }
    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub const fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at [`SimTime::NEVER`].
    pub const fn saturating_add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        self.saturating_add(d)
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        *self = self.saturating_add(d);
    }
}

impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.saturating_since(earlier)
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, other: SimDuration) -> SimDuration {
        self.saturating_add(other)
    }
}

impl fmt::Display for SimDuration {
    /// The shortest exact form with a unit: `250ms`, `2s`, `1m`, `1500us`, `7ns`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        const UNITS: [(u64, &str); 6] = [
            (3_600 * NANOS_PER_SEC, "h"),
            (60 * NANOS_PER_SEC, "m"),
            (NANOS_PER_SEC, "s"),
            (NANOS_PER_MS, "ms"),
            (1_000, "us"),
            (1, "ns"),
        ];
        if ns == 0 {
            return f.write_str("0ms");
        }
        for (scale, unit) in UNITS {
            if ns.is_multiple_of(scale) {
                return write!(f, "{}{unit}", ns / scale);
            }
        }
        unreachable!("every u64 is a whole number of nanoseconds")
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        SimDuration(self.0).fmt(f)
    }
}

const ALLOWED_DURATION: &str =
    "a non-negative number with a unit: ns, us, ms, s, m or h (for example \"250ms\", \"2s\")";

impl FromStr for SimDuration {
    type Err = ValueError;

    /// Parses a duration such as `"250ms"`, `"1.5s"` or `"1m"`. Negative numbers, missing
    /// units, NaN and values beyond ~584 years are refused.
    fn from_str(text: &str) -> Result<SimDuration, ValueError> {
        let bad = |allowed: &str| ValueError::new(format!("{text:?}"), allowed);
        let s = text.trim();
        let split = s
            .find(|c: char| c.is_ascii_alphabetic())
            .ok_or_else(|| bad(ALLOWED_DURATION))?;
        let (number, unit) = s.split_at(split);
        let scale: u64 = match unit.trim() {
            "ns" => 1,
            "us" | "µs" => 1_000,
            "ms" => NANOS_PER_MS,
            "s" => NANOS_PER_SEC,
            "m" | "min" => 60 * NANOS_PER_SEC,
            "h" => 3_600 * NANOS_PER_SEC,
            _ => return Err(bad(ALLOWED_DURATION)),
        };
        let number = number.trim();
        if number.is_empty() || number.starts_with('-') || number.starts_with('+') {
            return Err(bad(ALLOWED_DURATION));
        }
        let too_long = "a duration below 584 years";
        // Integers are parsed exactly; decimals through f64 and rounded to the nanosecond.
        if let Ok(whole) = number.parse::<u64>() {
            return whole
                .checked_mul(scale)
                .map(SimDuration)
                .ok_or_else(|| bad(too_long));
        }
        let value: f64 = number.parse().map_err(|_| bad(ALLOWED_DURATION))?;
        if !value.is_finite() || value < 0.0 {
            return Err(bad(ALLOWED_DURATION));
        }
        let ns = value * scale as f64;
        if ns >= u64::MAX as f64 {
            return Err(bad(too_long));
        }
        Ok(SimDuration(ns.round() as u64))
    }
}

/// Parses a duration as [`SimDuration`]'s `FromStr` does, naming `key` (a flag such as
/// `--p99`, or a column) in the error.
pub fn parse_duration(key: &str, text: &str) -> crate::Result<SimDuration> {
    text.parse().map_err(|e| Error::for_key(key, e))
}

/// Parses a limit that may be disabled: `"off"` (also `"none"`, `"unlimited"`) gives `None`,
/// anything else is a duration.
pub fn parse_limit(text: &str) -> Result<Option<SimDuration>, ValueError> {
    match text.trim() {
        "off" | "none" | "unlimited" => Ok(None),
        _ => text.parse().map(Some).map_err(|_| {
            ValueError::new(
                format!("{text:?}"),
                format!("\"off\" or {ALLOWED_DURATION}"),
            )
        }),
    }
}

/// Writes an optional limit the way [`parse_limit`] reads it.
pub fn format_limit(limit: Option<SimDuration>) -> String {
    limit.map_or_else(|| "off".to_string(), |d| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;

    fn parse(text: &str) -> Result<SimDuration, ValueError> {
        text.parse()
    }

    #[test]
    fn parses_units() -> Result<(), ValueError> {
        assert_eq!(parse("250ms")?, SimDuration::from_millis(250));
        assert_eq!(parse("2s")?, SimDuration::from_secs(2));
        assert_eq!(parse("1m")?, SimDuration::from_secs(60));
        assert_eq!(parse("1.5s")?, SimDuration::from_millis(1500));
        assert_eq!(parse("100us")?, SimDuration::from_micros(100));
        assert_eq!(parse(" 7 ns ")?, SimDuration(7));
        assert_eq!(parse_limit("off")?, None);
        assert_eq!(parse_limit("5s")?, Some(SimDuration::from_secs(5)));
        Ok(())
    }

    #[test]
    fn refuses_bad_input_quoting_it() -> Result<()> {
        for bad in [
            "-1s",
            "banana",
            "10",
            "1.5",
            "s",
            "NaNs",
            "infs",
            "1 parsec",
            "99999999999h",
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.value, format!("{bad:?}"));
            assert!(err.allowed.starts_with("a "), "{bad}: {err}");
            // A caller that knows the value by a flag names it.
            let named = parse_duration("--p99", bad).unwrap_err().to_string();
            assert!(named.starts_with("invalid value for `--p99`"), "{named}");
        }
        assert!(
            parse_limit("maybe")
                .unwrap_err()
                .allowed
                .starts_with("\"off\" or")
        );
        Ok(())
    }

    #[test]
    fn millis_strings_are_exact() -> Result<()> {
        assert_eq!(millis_string(0), "0");
        assert_eq!(millis_string(50 * NANOS_PER_MS), "50");
        assert_eq!(millis_string(28_680_123), "28.680123");
        assert_eq!(millis_string(1), "0.000001");
        assert_eq!(millis_string(1_500_000), "1.5");
        Ok(())
    }

    #[test]
    fn human_and_exact_forms_are_the_engines() {
        // The engine's `Human` (tested there) and its `Exact` agree with our Display.
        assert_eq!(SimDuration(2_413_499_544).human().to_string(), "2.41s");
        for ns in [
            0,
            7,
            1_500_000,
            250 * NANOS_PER_MS,
            90 * NANOS_PER_SEC,
            u64::MAX,
        ] {
            let exact = jitterlab_retry::time::Exact(SimDuration(ns).to_std());
            assert_eq!(exact.to_string(), SimDuration(ns).to_string());
        }
        // The conversions with std: exact one way, saturating the other.
        let d = std::time::Duration::from_millis(1_500);
        assert_eq!(std::time::Duration::from(SimDuration::from(d)), d);
        assert_eq!(
            SimDuration::from(std::time::Duration::MAX),
            SimDuration::MAX
        );
    }

    #[test]
    fn display_round_trips() -> Result<(), ValueError> {
        for ns in [
            0,
            1,
            999,
            1_000,
            1_500_000,
            250 * NANOS_PER_MS,
            2 * NANOS_PER_SEC,
            90 * NANOS_PER_SEC,
            3_600 * NANOS_PER_SEC,
        ] {
            let d = SimDuration(ns);
            assert_eq!(parse(&d.to_string())?, d, "{d}");
        }
        Ok(())
    }
}
