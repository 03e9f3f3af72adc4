//! State and first-passage measures of one run: how many attempts the server held on average,
//! how long it was full, and when the attempts at the server first reached a collapse level
//! (from the run's start) or came back down to a healthy level (from the trigger's end).
//!
//! The server's count is a step function of time, known exactly at each event: the count the
//! engine reports at an event held since the event before. A passage is the start of the first
//! stretch at or beyond its level. A run that never gets there by the horizon is *censored*: it
//! says only that the passage takes longer than the time observed. [`kaplan_meier`] summarises
//! a set of runs with their censored ones, so that the runs that never collapsed are not left
//! out of the time to collapse (which would make it look short) nor counted as collapsing at
//! the horizon.

use crate::time::{SimDuration, SimTime};

/// Whether the server's count is watched, and the levels of attempts at the server that the
/// passages are measured to (`[passage]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassageConfig {
    /// Watched at all (the scenario has a `[passage]` table): the mean count and the share
    /// of time full are measured then, and only then, so that the journal of a scenario
    /// without the table is the one earlier releases wrote.
    pub watched: bool,
    /// Collapse: the first time the server holds at least this many attempts.
    pub collapse: Option<u32>,
    /// Healthy: the first time after the trigger's end it holds at most this many.
    pub healthy: Option<u32>,
}

/// A time that was observed, or is only known to exceed what was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Censored {
    /// The passage time when reached; else the time observed without it (to the horizon), ns.
    pub time_ns: u64,
    /// Whether the level was reached.
    pub reached: bool,
}

/// What one run measured of its server's count.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Passage {
    /// Time-average of the attempts at the server, from the start to the end of the run.
    pub in_system_mean: f64,
    /// Share of the run's time the server was full (every worker and waiting place taken);
    /// `None` for a server without a limit.
    pub full_share: Option<f64>,
    /// From the start to the collapse level (`None` without `passage.collapse`).
    pub to_collapse: Option<Censored>,
    /// From the trigger's end to the healthy level (`None` without `passage.healthy` or a
    /// trigger).
    pub to_healthy: Option<Censored>,
}

/// The running measurement, fed at every event.
#[derive(Debug, Clone)]
pub(crate) struct Watch {
    config: PassageConfig,
    /// Attempts at which the server is full.
    full_at: Option<u32>,
    /// Where the healthy passage is measured from.
    trigger_end: Option<SimTime>,
    last: SimTime,
    area: u128,
    full_ns: u64,
    collapse_at: Option<SimTime>,
    healthy_at: Option<SimTime>,
}

impl Watch {
    /// A watch over a server full at `full_at` attempts, the healthy passage counted from
    /// `trigger_end`.
    pub fn new(config: PassageConfig, full_at: Option<u32>, trigger_end: Option<SimTime>) -> Watch {
        Watch {
            config,
            full_at,
            trigger_end,
            last: SimTime::ZERO,
            area: 0,
            full_ns: 0,
            collapse_at: None,
            healthy_at: None,
        }
    }

    /// The server held `in_system` attempts from the previous event until `now`.
    #[inline]
    pub fn observe(&mut self, now: SimTime, in_system: u32) {
        if now <= self.last {
            return;
        }
        let held = now.as_nanos() - self.last.as_nanos();
        self.area += u128::from(in_system) * u128::from(held);
        if self.full_at.is_some_and(|full| in_system >= full) {
            self.full_ns += held;
        }
        if self.collapse_at.is_none() && self.config.collapse.is_some_and(|c| in_system >= c) {
            self.collapse_at = Some(self.last);
        }
        if let (None, Some(level), Some(from)) =
            (self.healthy_at, self.config.healthy, self.trigger_end)
            && now > from
            && in_system <= level
        {
            self.healthy_at = Some(self.last.max(from));
        }
        self.last = now;
    }

    /// The measures of a run that ended at `end`, observed to `horizon`.
    pub fn finish(self, end: SimTime, horizon: SimDuration) -> Passage {
        let span = end.as_nanos().max(1);
        let horizon = SimTime(horizon.as_nanos());
        let passage = |at: Option<SimTime>, from: SimTime| Censored {
            time_ns: at
                .unwrap_or(horizon)
                .as_nanos()
                .saturating_sub(from.as_nanos()),
            reached: at.is_some(),
        };
        Passage {
            in_system_mean: self.area as f64 / span as f64,
            full_share: self.full_at.map(|_| self.full_ns as f64 / span as f64),
            to_collapse: self
                .config
                .collapse
                .map(|_| passage(self.collapse_at, SimTime::ZERO)),
            to_healthy: (self.config.healthy.zip(self.trigger_end))
                .map(|(_, from)| passage(self.healthy_at, from)),
        }
    }
}

/// A Kaplan–Meier summary of passage times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KaplanMeier {
    /// Runs summarised.
    pub runs: usize,
    /// Runs that reached the level.
    pub reached: usize,
    /// The median passage time, ns: the first time the share not yet there is 1/2 or less;
    /// `None` when it stays above 1/2 (most runs never got there).
    pub median_ns: Option<f64>,
    /// The mean passage time restricted to `tau_ns` (the area under the curve of the share
    /// not yet there, up to `tau_ns`), ns.
    pub restricted_mean_ns: f64,
    /// Its 95 % interval (Greenwood's variance, normal approximation), ns.
    pub restricted_mean_ci_ns: (f64, f64),
    /// The restriction: the longest time observed.
    pub tau_ns: u64,
}

/// The Kaplan–Meier estimate of `times` (reached or censored), restricted to the longest time
/// observed; `None` for no runs.
pub fn kaplan_meier(times: &[Censored]) -> Option<KaplanMeier> {
    let tau = times.iter().map(|t| t.time_ns).max()?;
    let mut sorted = times.to_vec();
    // At a tie, passages count before censorings (the usual convention).
    sorted.sort_by_key(|t| (t.time_ns, !t.reached));
    // (time, runs at risk, passages) at each time a run got there, and the share not yet
    // there after it.
    let mut steps: Vec<(u64, usize, usize, f64)> = Vec::new();
    let (mut at_risk, mut survival, mut i) = (sorted.len(), 1.0, 0);
    while i < sorted.len() {
        let t = sorted[i].time_ns;
        let tied = sorted[i..].iter().take_while(|x| x.time_ns == t).count();
        let d = sorted[i..i + tied].iter().filter(|x| x.reached).count();
        if d > 0 {
            survival *= 1.0 - d as f64 / at_risk as f64;
            steps.push((t, at_risk, d, survival));
        }
        at_risk -= tied;
        i += tied;
    }
    let median_ns = steps.iter().find(|s| s.3 <= 0.5).map(|s| s.0 as f64);
    // Area under the step curve from time t to tau.
    let area_from = |t: u64| -> f64 {
        let mut area = 0.0;
        let mut level = steps
            .iter()
            .take_while(|s| s.0 <= t)
            .last()
            .map_or(1.0, |s| s.3);
        let mut from = t;
        for s in steps.iter().filter(|s| s.0 > t) {
            area += level * (s.0 - from) as f64;
            (level, from) = (s.3, s.0);
        }
        area + level * (tau - from) as f64
    };
    let mean = area_from(0);
    let variance: f64 = (steps.iter())
        .filter(|s| s.1 > s.2)
        .map(|&(t, n, d, _)| area_from(t).powi(2) * d as f64 / (n as f64 * (n - d) as f64))
        .sum();
    let half = 1.959_963_984_540_054 * variance.sqrt();
    Some(KaplanMeier {
        runs: times.len(),
        reached: times.iter().filter(|t| t.reached).count(),
        median_ns,
        restricted_mean_ns: mean,
        restricted_mean_ci_ns: ((mean - half).max(0.0), (mean + half).min(tau as f64)),
        tau_ns: tau,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn at(s: u64) -> SimTime {
        SimTime(s * S)
    }

    #[test]
    fn the_mean_is_the_time_average_and_passages_start_their_stretch() {
        // Full at 10; collapse at 8; healthy at 2 after a trigger ending at 5 s.
        let config = PassageConfig {
            watched: true,
            collapse: Some(8),
            healthy: Some(2),
        };
        let mut w = Watch::new(config, Some(10), Some(at(5)));
        // 0-2 s: 4 held; 2-3 s: 10 (full, collapsed from 2 s); 3-6 s: 6; 6-8 s: 1 (healthy
        // from 6 s); then the run ends at 8 s.
        for (now, n) in [(2, 4), (3, 10), (6, 6), (8, 1)] {
            w.observe(at(now), n);
        }
        let p = w.finish(at(8), SimDuration::from_secs(20));
        assert_eq!(p.in_system_mean, (4.0 * 2.0 + 10.0 + 6.0 * 3.0 + 2.0) / 8.0);
        assert_eq!(p.full_share, Some(1.0 / 8.0));
        let reached = |s: u64| {
            Some(Censored {
                time_ns: s * S,
                reached: true,
            })
        };
        assert_eq!(p.to_collapse, reached(2));
        assert_eq!(p.to_healthy, reached(1));
    }

    #[test]
    fn a_level_never_reached_is_censored_at_the_horizon_and_a_healthy_trigger_end_is_zero() {
        let config = PassageConfig {
            watched: true,
            collapse: Some(100),
            healthy: Some(5),
        };
        let mut w = Watch::new(config, None, Some(at(4)));
        for (now, n) in [(3, 50), (6, 3), (9, 3)] {
            w.observe(at(now), n);
        }
        let p = w.finish(at(9), SimDuration::from_secs(30));
        assert_eq!(p.full_share, None);
        let censored = Censored {
            time_ns: 30 * S,
            reached: false,
        };
        assert_eq!(p.to_collapse, Some(censored));
        // 3 held over [3 s, 6 s), the trigger ends at 4 s: healthy at once.
        assert_eq!(
            p.to_healthy,
            Some(Censored {
                time_ns: 0,
                reached: true
            })
        );
        // Without levels (or a trigger) nothing is measured.
        let w = Watch::new(
            PassageConfig {
                watched: true,
                collapse: None,
                healthy: Some(5),
            },
            None,
            None,
        );
        let p = w.finish(at(1), SimDuration::from_secs(30));
        assert_eq!((p.to_collapse, p.to_healthy), (None, None));
    }

    #[test]
    fn kaplan_meier_matches_a_hand_computation() {
        // Passages at 1, 2, 2, 4; censored at 3 and 5 (tau = 5).
        let t = |s: u64, reached| Censored {
            time_ns: s,
            reached,
        };
        let km = kaplan_meier(&[
            t(2, true),
            t(1, true),
            t(3, false),
            t(2, true),
            t(4, true),
            t(5, false),
        ])
        .unwrap();
        // S: 5/6 after 1; 5/6 × 3/5 = 1/2 after 2; at 4, 1 of 2 at risk: 1/4.
        assert_eq!((km.runs, km.reached, km.tau_ns), (6, 4, 5));
        assert_eq!(km.median_ns, Some(2.0));
        // Area: 1 + 5/6 + 2 × 1/2 + 1 × 1/4.
        let mean = 1.0 + 5.0 / 6.0 + 1.0 + 0.25;
        assert!((km.restricted_mean_ns - mean).abs() < 1e-12, "{km:?}");
        // Greenwood: A(1)² × 1/(6·5) + A(2)² × 2/(5·3) + A(4)² × 1/(2·1).
        let (a1, a2, a4): (f64, f64, f64) = (5.0 / 6.0 + 1.0 + 0.25, 1.25, 0.25);
        let var = a1 * a1 / 30.0 + a2 * a2 * 2.0 / 15.0 + a4 * a4 / 2.0;
        let half = 1.959_963_984_540_054 * var.sqrt();
        assert!((km.restricted_mean_ci_ns.0 - (mean - half)).abs() < 1e-12);
        assert!((km.restricted_mean_ci_ns.1 - (mean + half).min(5.0)).abs() < 1e-12);
        // Most never reached: no median, and the mean is the horizon's share.
        let km = kaplan_meier(&[t(10, false), t(10, false), t(4, true)]).unwrap();
        assert_eq!(km.median_ns, None);
        assert!((km.restricted_mean_ns - (4.0 + 6.0 * 2.0 / 3.0)).abs() < 1e-12);
        assert_eq!(kaplan_meier(&[]), None);
    }
}
