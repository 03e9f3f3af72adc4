//! Recovery after a trigger: is the system serving its offered load again once the trigger
//! ended, does it stay so to the horizon, and how fast did it come back?
//!
//! A *trigger* is a span `[T0, T1)` of the run: the fault windows, or else the spans where a
//! rate profile is above its base (the scenario checker decides, see docs/results.md).
//!
//! Recovery is judged on the *served share by start*: of the requests begun in a stretch of
//! time, the share that succeeded (whenever their success came). Its reference is what a
//! fault-free system gives the offered load, every request served, so a policy that sheds load
//! on a healthy server does not set itself a low bar, and a backlog drained after the trigger
//! does not pass for new requests served. Buckets are the run's output buckets of width `B`;
//! a window is `k = max(1, floor(window / B))` buckets; `b0 = floor(T0 / B)`,
//! `b1 = ceil(T1 / B)`, `n = floor(horizon / B)`. The last window before the horizon is not
//! judged (its requests may still be in flight): windows end at `m = n - k` at the latest, and
//! earlier where the workload stops beginning requests (after its last bucket with one).
//!
//! A window *holds* when at least `(1 - tolerance)` of the requests begun in it succeeded and
//! at least one was begun. Then:
//!
//! - `degraded_before`: the window before `b0` does not hold (the policy was below the
//!   reference before any trigger);
//! - the *tiles* are the whole windows `b1 + j·k .. b1 + (j+1)·k` up to `m`; a *relapse* is a
//!   tile that fails after one that held; with two relapses or more the run is *oscillating*,
//!   its period the mean distance between relapses, unless it ends held for two periods;
//! - otherwise *recovered* when the last window (`m - k .. m`) holds, at `recovery` = the start
//!   of the final stretch of windows that all hold, less `T1`; else *stuck*, or *relapsed*
//!   when some window after the trigger held before the end.
//!
//! `goodput_before` and `goodput_after` are successes per second by the time they came: over
//! the `k` buckets before `b0`, and from `b1` to `n`.
//!
//! Nothing is measured (the columns stay empty) when `b0 = 0` (the trigger starts in the run's
//! first bucket: there is no before) or `b1 + k > m` (no whole judged window between the
//! trigger's end and the end of judging).

use crate::time::{SimDuration, SimTime};

/// How recovery is judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecoveryConfig {
    /// Length of the judged windows (before the trigger, and those that must hold after).
    pub window: SimDuration,
    /// Largest share of a window's requests that may fail in a window that holds (0.05).
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

/// How a run ended up after its trigger (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Serving the offered load again, and to the end.
    Recovered,
    /// Never served it again after the trigger.
    Stuck,
    /// Served it again for a while after the trigger, then collapsed again to the end.
    Relapsed,
    /// Swings between served and collapsed (two relapses or more, not settled at the end).
    Oscillating,
}

/// What one run's recovery measurement found.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Recovery {
    /// Successes per second in the window before the trigger.
    pub goodput_before: f64,
    /// Successes per second from the trigger's end to the horizon.
    pub goodput_after: f64,
    /// From the trigger's end to the start of the final stretch that serves the offered load
    /// to the end, ns; `None` unless recovered.
    pub recovery_ns: Option<u64>,
    /// The verdict.
    pub verdict: Verdict,
    /// The swing's period when oscillating, ns.
    pub period_ns: Option<u64>,
    /// The window before the trigger did not serve the offered load.
    pub degraded_before: bool,
}

impl Recovery {
    /// Whether the run serves its offered load again, to the end.
    pub fn recovered(&self) -> bool {
        self.verdict == Verdict::Recovered
    }
}

/// A run's per-bucket counts that recovery reads (missing buckets count 0).
#[derive(Debug, Clone, Copy)]
pub struct Counts<'a> {
    /// Successful answers received by clients, in the bucket they came.
    pub successes: &'a [u32],
    /// Requests begun.
    pub begun: &'a [u32],
    /// Requests begun in the bucket that succeeded, whenever they did.
    pub served: &'a [u32],
}

/// The buckets of a measurement as the module docs name them.
struct Span {
    b: u64,
    k: usize,
    n: usize,
    m: usize,
    b0: usize,
    b1: usize,
}

fn span(
    bucket: SimDuration,
    horizon: SimDuration,
    (t0, t1): (SimTime, SimTime),
    window: SimDuration,
    last_begun: usize,
) -> Option<Span> {
    let b = bucket.as_nanos().max(1);
    let k = (window.as_nanos() / b).max(1) as usize;
    let n = (horizon.as_nanos() / b) as usize;
    let m = n.saturating_sub(k).min(last_begun.saturating_add(1));
    let b0 = (t0.as_nanos() / b) as usize;
    let b1 = t1.as_nanos().div_ceil(b) as usize;
    (b0 > 0 && b1.saturating_add(k) <= m).then_some(Span { b, k, n, m, b0, b1 })
}

/// True when a run of `horizon` in buckets of `bucket` whose workload begins requests to the
/// end can measure recovery from `trigger` with windows of `window` (else its recovery
/// columns stay empty).
pub fn measurable(
    bucket: SimDuration,
    horizon: SimDuration,
    trigger: (SimTime, SimTime),
    window: SimDuration,
) -> bool {
    span(bucket, horizon, trigger, window, usize::MAX).is_some()
}

/// Measures recovery from the trigger `[t0, t1)` in the per-bucket `counts` (buckets of
/// `bucket`) of a run that stopped at `horizon`; see the module docs.
pub fn measure(
    counts: Counts<'_>,
    bucket: SimDuration,
    horizon: SimDuration,
    trigger: (SimTime, SimTime),
    config: RecoveryConfig,
) -> Option<Recovery> {
    let last_begun = counts.begun.iter().rposition(|&n| n > 0)?;
    let Span { b, k, n, m, b0, b1 } = span(bucket, horizon, trigger, config.window, last_begun)?;
    let sum = |v: &[u32], from: usize, to: usize| -> u64 {
        (from..to)
            .map(|i| u64::from(v.get(i).copied().unwrap_or(0)))
            .sum()
    };
    let holds_over = |from: usize, to: usize| {
        let begun = sum(counts.begun, from, to);
        let served = sum(counts.served, from, to);
        // Compared in counts with a hair of slack, so that 0.95 × 20 = 19 holds at 19.
        begun > 0 && served as f64 >= (1.0 - config.tolerance) * begun as f64 - 1e-9
    };
    let per_sec = |count: u64, buckets: usize| count as f64 / (buckets as f64 * b as f64 / 1e9);
    let first = b0.saturating_sub(k);
    let goodput_before = per_sec(sum(counts.successes, first, b0), b0 - first);
    let goodput_after = per_sec(sum(counts.successes, b1, n), n - b1);
    let degraded_before = !holds_over(first, b0);
    let holds = |from: usize| holds_over(from, from + k);

    let windows: Vec<bool> = (b1..=m - k).map(holds).collect();
    let held_to_end = windows.iter().rev().take_while(|&&h| h).count();
    let final_start = b1 + windows.len() - held_to_end;
    let relapses: Vec<usize> = (1..)
        .map(|j| b1 + j * k)
        .take_while(|&t| t + k <= m)
        .filter(|&t| windows[t - b1 - k] && !windows[t - b1])
        .collect();
    let period = (relapses.len() >= 2).then(|| {
        let (first, last) = (relapses[0], relapses[relapses.len() - 1]);
        (last - first) as u64 * b / (relapses.len() as u64 - 1)
    });
    let settled = |period: u64| held_to_end > 0 && (m - final_start) as u64 * b >= 2 * period;
    let verdict = match period {
        Some(p) if !settled(p) => Verdict::Oscillating,
        _ if held_to_end > 0 => Verdict::Recovered,
        _ if windows.contains(&true) => Verdict::Relapsed,
        _ => Verdict::Stuck,
    };
    Some(Recovery {
        goodput_before,
        goodput_after,
        recovery_ns: (verdict == Verdict::Recovered)
            .then(|| final_start as u64 * b - trigger.1.as_nanos()),
        verdict,
        period_ns: period.filter(|_| verdict == Verdict::Oscillating),
        degraded_before,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    /// One-second buckets, a 2 s window, a trigger over [4 s, 6 s), 100 requests begun per
    /// second to `horizon` (s), of which `served[i]` succeeded (also their success count).
    fn judge(served: &[u32], horizon: u64) -> Option<Recovery> {
        let begun = vec![100; horizon as usize];
        judge_begun(&begun, served, horizon, (4, 6))
    }

    fn judge_begun(
        begun: &[u32],
        served: &[u32],
        horizon: u64,
        trigger: (u64, u64),
    ) -> Option<Recovery> {
        let counts = Counts {
            successes: served,
            begun,
            served,
        };
        measure(
            counts,
            SimDuration::from_secs(1),
            SimDuration::from_secs(horizon),
            (SimTime(trigger.0 * S), SimTime(trigger.1 * S)),
            RecoveryConfig {
                window: SimDuration::from_secs(2),
                tolerance: 0.05,
            },
        )
    }

    /// 100 served per second, none in `[from, to)` of each gap.
    fn served_with_gaps(horizon: usize, gaps: &[(usize, usize)]) -> Vec<u32> {
        let mut s = vec![100; horizon];
        for &(from, to) in gaps {
            s[from..to].fill(0);
        }
        s
    }

    #[test]
    fn serving_again_to_the_end_recovers_at_the_final_stretchs_start() {
        let mut s = served_with_gaps(20, &[(4, 8)]);
        s[8] = 90;
        s[9] = 96;
        let r = judge(&s, 20).unwrap();
        assert_eq!(r.goodput_before, 100.0);
        // [6, 20): 0 + 0 + 90 + 96 + 10 × 100 over 14 s.
        assert_eq!(r.goodput_after, 1186.0 / 14.0);
        // Windows from 6 s: 0, 90, 186 (< 190), then 196 and up from 9 s to the end.
        assert_eq!(
            (r.verdict, r.recovery_ns),
            (Verdict::Recovered, Some(3 * S))
        );
        assert!(r.recovered() && !r.degraded_before && r.period_ns.is_none());
    }

    #[test]
    fn a_collapse_after_a_healthy_stretch_is_a_relapse_not_a_recovery() {
        // Healthy for 6 s after the trigger, then nothing served to the horizon: the first
        // good window after the trigger (the old rule) would have called this recovered at 0.
        let r = judge(&served_with_gaps(20, &[(4, 6), (12, 20)]), 20).unwrap();
        assert_eq!((r.verdict, r.recovery_ns), (Verdict::Relapsed, None));
        assert!(!r.recovered());
        // Never served after the trigger: stuck.
        let r = judge(&served_with_gaps(20, &[(4, 20)]), 20).unwrap();
        assert_eq!(r.verdict, Verdict::Stuck);
    }

    #[test]
    fn a_swing_between_served_and_collapsed_is_oscillating_with_its_period() {
        // Tiles from 6 s: held, held, failed, held, held, failed: two relapses 6 s apart.
        let s = served_with_gaps(20, &[(4, 6), (10, 12), (16, 20)]);
        let r = judge(&s, 20).unwrap();
        assert_eq!(r.verdict, Verdict::Oscillating);
        assert_eq!((r.period_ns, r.recovery_ns), (Some(6 * S), None));
        // The same swing ending held but for less than two periods: still oscillating.
        let s = served_with_gaps(30, &[(4, 6), (10, 12), (16, 18)]);
        let r = judge(&s, 28).unwrap();
        assert_eq!(r.verdict, Verdict::Oscillating);
        // Held for two periods (12 s) to the end of judging: it settled, recovered at 18 s.
        let r = judge(&s, 32).unwrap();
        assert_eq!(
            (r.verdict, r.recovery_ns),
            (Verdict::Recovered, Some(12 * S))
        );
    }

    #[test]
    fn the_reference_is_the_offered_load_not_the_policys_own_goodput_before() {
        // Serving 72 % before and after: the old rule (95 % of its own goodput before)
        // called this recovered; it never serves the offered load, degraded before and stuck.
        let mut s = vec![72; 20];
        s[4..6].fill(0);
        let r = judge(&s, 20).unwrap();
        assert!(r.degraded_before);
        assert_eq!(r.verdict, Verdict::Stuck);
        // Degraded before, but serving everything after: recovered, still flagged.
        let mut s = vec![80; 20];
        s[4..6].fill(0);
        s[6..].fill(100);
        let r = judge(&s, 20).unwrap();
        assert!(r.degraded_before && r.recovered());
    }

    #[test]
    fn a_backlog_drained_after_the_trigger_is_not_new_requests_served() {
        // Successes keep coming (the backlog) but nothing begun after the trigger succeeds.
        let begun = vec![100; 20];
        let successes = vec![100; 20];
        let mut served = vec![100; 20];
        served[4..].fill(0);
        let counts = Counts {
            successes: &successes,
            begun: &begun,
            served: &served,
        };
        let r = measure(
            counts,
            SimDuration::from_secs(1),
            SimDuration::from_secs(20),
            (SimTime(4 * S), SimTime(6 * S)),
            RecoveryConfig {
                window: SimDuration::from_secs(2),
                tolerance: 0.05,
            },
        )
        .unwrap();
        assert_eq!((r.goodput_after, r.verdict), (100.0, Verdict::Stuck));
    }

    #[test]
    fn the_tolerance_is_a_share_of_the_requests_begun() {
        // 20 begun per window: 19 served holds, 18 does not.
        for (per_bucket, verdict) in [(19, Verdict::Recovered), (18, Verdict::Stuck)] {
            let begun = vec![10; 20];
            let mut served = vec![10; 20];
            served[4..6].fill(0);
            for i in (6..20).step_by(2) {
                served[i] = per_bucket - 10;
            }
            let r = judge_begun(&begun, &served, 20, (4, 6)).unwrap();
            assert_eq!(r.verdict, verdict, "{per_bucket}");
        }
    }

    #[test]
    fn edges_measure_nothing_and_judging_ends_with_the_workload() {
        let full = vec![100; 20];
        // A trigger in the first bucket has no before; one ending within two windows of the
        // horizon (the last is not judged) leaves no judged window after.
        assert_eq!(judge_begun(&full, &full, 20, (0, 6)), None);
        assert_eq!(judge_begun(&full, &full, 20, (4, 17)), None);
        assert!(judge_begun(&full, &full, 20, (4, 16)).unwrap().recovered());
        // Nothing ever begun: nothing to judge.
        assert_eq!(judge_begun(&[0; 20], &[0; 20], 20, (4, 6)), None);
        // The workload stops beginning requests at 14 s: windows end there, so its quiet end
        // is no collapse; stopping at 8 s leaves one window, at 7 s none.
        let mut begun = vec![100; 20];
        begun[14..].fill(0);
        assert!(judge_begun(&begun, &begun, 20, (4, 6)).unwrap().recovered());
        begun[8..].fill(0);
        assert!(judge_begun(&begun, &begun, 20, (4, 6)).unwrap().recovered());
        begun[7..].fill(0);
        assert_eq!(judge_begun(&begun, &begun, 20, (4, 6)), None);
        // A window in which nobody began a request (closed clients all waiting) fails.
        let mut begun = vec![100; 20];
        begun[16..18].fill(0);
        let r = judge_begun(&begun, &begun, 20, (4, 6)).unwrap();
        assert_eq!(r.verdict, Verdict::Relapsed);
    }

    #[test]
    fn a_trigger_end_inside_a_bucket_starts_at_the_next_bucket() {
        let full = vec![10; 20];
        let counts = Counts {
            successes: &full,
            begun: &full,
            served: &full,
        };
        let r = measure(
            counts,
            SimDuration::from_secs(1),
            SimDuration::from_secs(20),
            (SimTime(4 * S), SimTime(6 * S + S / 2)),
            RecoveryConfig {
                window: SimDuration::from_secs(2),
                tolerance: 0.05,
            },
        )
        .unwrap();
        assert_eq!(r.recovery_ns, Some(S / 2));
    }
}
