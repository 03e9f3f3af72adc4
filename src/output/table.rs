//! The headline table of a run: the metrics a reader looks at first, one row per point and
//! strategy, with the decimals each is shown with. `jitterlab run` prints it and the
//! playground (`jitterlab serve`) shows it, from the same cells, so the two agree to the digit.

use crate::metric::{Metric, PerMetric};
use crate::stats::Estimate;

/// The columns after the strategy: the metric and the decimals it is shown with.
pub const COLUMNS: [(Metric, usize); 6] = [
    (Metric::Amplification, 2),
    (Metric::LatencyP50Ms, 1),
    (Metric::LatencyP99Ms, 1),
    (Metric::PeakArrivals, 0),
    (Metric::PeakRetries, 0),
    (Metric::SuccessRate, 4),
];

/// The header: `strategy`, then each column's short name.
pub fn header() -> Vec<&'static str> {
    std::iter::once("strategy")
        .chain(COLUMNS.iter().map(|(m, _)| m.short()))
        .collect()
}

/// A strategy's cells after its name, from its `estimates` over replications: each mean with
/// its decimals, `-` where it is undefined (a latency where nothing succeeded).
pub fn cells(estimates: &PerMetric<Estimate>) -> Vec<String> {
    COLUMNS
        .iter()
        .map(|&(metric, digits)| {
            let mean = estimates[metric].mean;
            if mean.is_finite() {
                format!("{mean:.digits$}")
            } else {
                "-".into()
            }
        })
        .collect()
}
