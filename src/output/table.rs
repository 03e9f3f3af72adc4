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

/// The columns a chain's runs add after `amplification`, which there counts the clients'
/// own attempts only: the load on the whole chain, and on its deepest layer.
const CHAIN_COLUMNS: [(Metric, usize); 2] = [
    (Metric::ChainAmplification, 2),
    (Metric::DeepestAmplification, 2),
];

/// The columns of one table: [`COLUMNS`], with the chain's after `amplification` when the
/// runs have layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns {
    layered: bool,
}

impl Columns {
    /// The columns for runs whose estimates are `estimates`: layered when any run measured
    /// a chain.
    pub fn of<'a>(estimates: impl IntoIterator<Item = &'a PerMetric<Estimate>>) -> Columns {
        let layered = (estimates.into_iter()).any(|e| e[Metric::ChainAttempts].n > 0);
        Columns { layered }
    }

    /// Each column's metric and decimals, in order.
    fn list(self) -> Vec<(Metric, usize)> {
        let chain = CHAIN_COLUMNS.iter().filter(|_| self.layered);
        let (first, rest) = COLUMNS.split_at(1);
        first.iter().chain(chain).chain(rest).copied().collect()
    }

    /// The header: `strategy`, then each column's short name; in a chain the clients'
    /// `amplification` is named as the edge's.
    pub fn header(self) -> Vec<&'static str> {
        let name = |m: Metric| match (m, self.layered) {
            (Metric::Amplification, true) => "amplification_edge",
            _ => m.short(),
        };
        std::iter::once("strategy")
            .chain(self.list().into_iter().map(|(m, _)| name(m)))
            .collect()
    }

    /// A strategy's cells after its name, from its `estimates` over replications: each
    /// mean with its decimals, `-` where it is undefined (a latency where nothing
    /// succeeded).
    pub fn cells(self, estimates: &PerMetric<Estimate>) -> Vec<String> {
        self.list()
            .into_iter()
            .map(|(metric, digits)| {
                let mean = estimates[metric].mean;
                if mean.is_finite() {
                    format!("{mean:.digits$}")
                } else {
                    "-".into()
                }
            })
            .collect()
    }
}
