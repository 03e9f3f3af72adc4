//! Live against simulated: every metric of every strategy as the live run measured it and as
//! the simulator predicts it for the same unit (same seed, replication 0, same streams), with
//! their relative difference; the rows of `live_vs_sim.csv`.

use crate::metric::{Metric, PerMetric};
use crate::output::rows::LiveVsSimRow;

/// The metrics a reader looks at first, in the order of the tables.
pub const KEY_METRICS: [Metric; 7] = LiveVsSimRow::KEY_METRICS;

/// `(live - simulated) / |simulated|`: 0 when both are 0; `None` when only the simulated
/// value is 0 or either is undefined.
pub fn relative_difference(live: f64, simulated: f64) -> Option<f64> {
    if !(live.is_finite() && simulated.is_finite()) {
        None
    } else if simulated == 0.0 {
        (live == 0.0).then_some(0.0)
    } else {
        Some((live - simulated) / simulated.abs())
    }
}

/// One row per (strategy, metric), strategies in order, metrics in column order; `events`
/// is left out (a live run counts lock-taking steps, not simulation events).
pub fn rows(
    strategies: &[String],
    live: &[PerMetric<f64>],
    simulated: &[PerMetric<f64>],
) -> Vec<LiveVsSimRow> {
    let defined = |x: f64| x.is_finite().then_some(x);
    let mut out = Vec::new();
    for ((strategy, l), s) in strategies.iter().zip(live).zip(simulated) {
        for metric in Metric::ALL {
            if metric == Metric::Events {
                continue;
            }
            out.push(LiveVsSimRow {
                metric,
                strategy: strategy.clone(),
                sweep: Vec::new(),
                live: defined(l[metric]),
                simulated: defined(s[metric]),
                relative_difference: relative_difference(l[metric], s[metric]),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_differences_are_signed_and_defined_only_where_they_mean_something() {
        assert_eq!(relative_difference(1.1, 1.0), Some(0.10000000000000009));
        assert_eq!(relative_difference(90.0, 100.0), Some(-0.1));
        assert_eq!(relative_difference(0.0, 0.0), Some(0.0));
        assert_eq!(relative_difference(3.0, 0.0), None);
        assert_eq!(relative_difference(f64::NAN, 1.0), None);
        assert_eq!(relative_difference(1.0, -2.0), Some(1.5));
    }

    #[test]
    fn one_row_per_strategy_and_metric_without_events() {
        let live = vec![PerMetric::from_fn(|_| 2.0); 2];
        let sim = vec![PerMetric::from_fn(|_| 1.0); 2];
        let rows = rows(&["a".into(), "b".into()], &live, &sim);
        assert_eq!(rows.len(), 2 * (Metric::COUNT - 1));
        assert!(rows.iter().all(|r| r.metric != Metric::Events));
        assert_eq!(rows[0].relative_difference, Some(1.0));
        assert_eq!(rows.last().unwrap().strategy, "b");
    }
}
