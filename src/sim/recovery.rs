//! Recovery after a trigger: did goodput come back once the trigger ended, and how fast?
//!
//! A *trigger* is a span `[T0, T1)` of the run: the fault windows, or else the spans where a
//! rate profile is above its base (the scenario checker decides, see docs/results.md). Goodput
//! is successes (successful answers received by clients) per second, counted in the run's
//! output buckets of width `B`; the measurement `window` is `k = max(1, floor(window / B))`
//! buckets. With `b0 = floor(T0 / B)`, `b1 = ceil(T1 / B)` and `n = floor(horizon / B)`:
//!
//! - `goodput_before`: over the `k` buckets before `b0` (fewer when the trigger starts
//!   earlier than one window into the run);
//! - `goodput_after`: over the buckets `b1 .. n` (from the trigger's end to the horizon);
//! - *recovered* at the first bucket `s` in `b1 ..= n - k` whose window `s .. s + k` has a
//!   goodput of at least `(1 - tolerance)` × `goodput_before` (more counts: a backlog served
//!   faster than before is no collapse), and at least one success; `recovery` is then
//!   `s × B - T1`. No such window before the horizon: *stuck*. The one success matters only
//!   when nothing succeeded before the trigger (`goodput_before` = 0, where any window holds
//!   "at least 0"): a run that serves nothing after its trigger either is stuck, not
//!   recovered; one that serves again recovers at its first window with a success.
//!
//! Nothing is measured (the columns stay empty) when `b0 = 0` (the trigger starts in the
//! run's first bucket: there is no before) or `b1 + k > n` (no whole window between the
//! trigger's end and the horizon).

use crate::time::{SimDuration, SimTime};

/// How recovery is judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecoveryConfig {
    /// Length of the goodput windows (before the trigger, and the one that must hold after).
    pub window: SimDuration,
    /// Largest shortfall from the pre-trigger goodput that still counts as recovered (0.05).
    pub tolerance: f64,
}

impl Default for RecoveryConfig {
    fn default() -> Self {
        RecoveryConfig {
            window: SimDuration::from_secs(10),
            tolerance: 0.05,
        }
    }
}

/// What one run's recovery measurement found.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recovery {
    /// Successes per second in the window before the trigger.
    pub goodput_before: f64,
    /// Successes per second from the trigger's end to the horizon.
    pub goodput_after: f64,
    /// From the trigger's end to the start of the first window back at the pre-trigger
    /// goodput, ns; `None` when stuck.
    pub recovery_ns: Option<u64>,
}

impl Recovery {
    /// Whether goodput came back.
    pub fn recovered(&self) -> bool {
        self.recovery_ns.is_some()
    }
}

/// The buckets of a measurement: `(b, k, n, b0, b1)` as the module docs name them, `None`
/// when nothing can be measured (the trigger starts in the first bucket, or no whole window
/// fits between its end and the horizon).
fn buckets(
    bucket: SimDuration,
    horizon: SimDuration,
    (t0, t1): (SimTime, SimTime),
    window: SimDuration,
) -> Option<(u64, usize, usize, usize, usize)> {
    let b = bucket.as_nanos().max(1);
    let k = (window.as_nanos() / b).max(1) as usize;
    let n = (horizon.as_nanos() / b) as usize;
    let b0 = (t0.as_nanos() / b) as usize;
    let b1 = t1.as_nanos().div_ceil(b) as usize;
    (b0 > 0 && b1.saturating_add(k) <= n).then_some((b, k, n, b0, b1))
}

/// True when a run of `horizon` in buckets of `bucket` can measure recovery from `trigger`
/// with windows of `window` (else its recovery columns stay empty).
pub fn measurable(
    bucket: SimDuration,
    horizon: SimDuration,
    trigger: (SimTime, SimTime),
    window: SimDuration,
) -> bool {
    buckets(bucket, horizon, trigger, window).is_some()
}

/// Measures recovery from the trigger `[t0, t1)` in the per-bucket `successes` (buckets of
/// `bucket`, missing ones count 0) of a run that stopped at `horizon`; see the module docs.
pub fn measure(
    successes: &[u32],
    bucket: SimDuration,
    horizon: SimDuration,
    trigger: (SimTime, SimTime),
    config: RecoveryConfig,
) -> Option<Recovery> {
    let (b, k, n, b0, b1) = buckets(bucket, horizon, trigger, config.window)?;
    let sum = |from: usize, to: usize| -> u64 {
        (from..to)
            .map(|i| u64::from(successes.get(i).copied().unwrap_or(0)))
            .sum()
    };
    let per_sec = |count: u64, buckets: usize| count as f64 / (buckets as f64 * b as f64 / 1e9);
    let first = b0.saturating_sub(k);
    let before = per_sec(sum(first, b0), b0 - first);
    let after = per_sec(sum(b1, n), n - b1);
    // Successes a window needs, compared as counts so that no rounding decides; at least one
    // (a count of 0.3 needs 1 anyway: only a zero goodput before changes).
    let need = ((1.0 - config.tolerance) * before * (k as f64 * b as f64 / 1e9)).max(1.0);
    let mut window = sum(b1, b1 + k);
    let mut recovery_ns = None;
    for s in b1..=n - k {
        if s > b1 {
            window = window + u64::from(successes.get(s + k - 1).copied().unwrap_or(0))
                - u64::from(successes.get(s - 1).copied().unwrap_or(0));
        }
        if window as f64 >= need {
            recovery_ns = Some(s as u64 * b - trigger.1.as_nanos());
            break;
        }
    }
    Some(Recovery {
        goodput_before: before,
        goodput_after: after,
        recovery_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn secs(n: u64) -> SimTime {
        SimTime(n * S)
    }

    /// One-second buckets, a 2 s window, a 20 s horizon.
    fn run(successes: &[u32], trigger: (u64, u64)) -> Option<Recovery> {
        measure(
            successes,
            SimDuration::from_secs(1),
            SimDuration::from_secs(20),
            (secs(trigger.0), secs(trigger.1)),
            RecoveryConfig {
                window: SimDuration::from_secs(2),
                tolerance: 0.05,
            },
        )
    }

    #[test]
    fn goodput_back_within_tolerance_recovers_at_the_first_whole_window() {
        // 100/s, a trigger over [4 s, 6 s) with nothing served, 90 then 96 per second after.
        let mut s = vec![100; 20];
        s[4..8].fill(0);
        s[8] = 90;
        s[9] = 96;
        let r = run(&s, (4, 6)).unwrap();
        assert_eq!(r.goodput_before, 100.0);
        // [6, 20): 0 + 0 + 90 + 96 + 10 × 100 over 14 s.
        assert_eq!(r.goodput_after, 1186.0 / 14.0);
        // Windows from 6 s: 0, 90, 186 (< 190), 196 (>= 190) starting at 9 s.
        assert_eq!(r.recovery_ns, Some(3 * S));
        assert!(r.recovered());
    }

    #[test]
    fn goodput_that_stays_low_is_stuck() {
        let mut s = vec![100; 20];
        s[6..].fill(94); // 188 per window, one short of 95 %.
        let r = run(&s, (4, 6)).unwrap();
        assert_eq!((r.recovery_ns, r.recovered()), (None, false));
        assert_eq!(r.goodput_after, 94.0);
    }

    #[test]
    fn missing_buckets_count_zero_and_edges_measure_nothing() {
        // The run ended early (the queue emptied): the buckets after count 0, so it is stuck.
        let r = run(&[100; 7], (4, 6)).unwrap();
        assert_eq!((r.goodput_after, r.recovered()), (100.0 / 14.0, false));
        // A trigger in the first bucket has no before; one ending within a window of the
        // horizon leaves no window after.
        assert_eq!(run(&[100; 20], (0, 6)), None);
        assert_eq!(run(&[100; 20], (4, 19)), None);
        assert!(run(&[100; 20], (4, 18)).unwrap().recovered());
        // A short run-in: the window before is what there is (one bucket).
        assert_eq!(run(&[50; 20], (1, 2)).unwrap().goodput_before, 50.0);
    }

    #[test]
    fn nothing_served_before_the_trigger_recovers_only_when_something_is_served_after() {
        // No success before the trigger and none after: stuck, not recovered (any window
        // holds "at least 95 % of nothing").
        let r = run(&[0; 20], (4, 6)).unwrap();
        assert_eq!((r.goodput_before, r.goodput_after), (0.0, 0.0));
        assert_eq!((r.recovery_ns, r.recovered()), (None, false));
        // Nothing before, successes from 12 s: recovered at the first window holding one
        // (11 s, whose window [11, 13) holds the 12 s bucket), 5 s after the trigger's end.
        let mut s = vec![0; 20];
        s[12..].fill(3);
        let r = run(&s, (4, 6)).unwrap();
        assert_eq!((r.recovery_ns, r.recovered()), (Some(5 * S), true));
    }

    #[test]
    fn a_trigger_end_inside_a_bucket_starts_at_the_next_bucket() {
        let s = vec![10; 20];
        let r = measure(
            &s,
            SimDuration::from_secs(1),
            SimDuration::from_secs(20),
            (secs(4), SimTime(6 * S + S / 2)),
            RecoveryConfig {
                window: SimDuration::from_secs(2),
                tolerance: 0.05,
            },
        )
        .unwrap();
        assert_eq!(r.recovery_ns, Some(S / 2));
    }
}
