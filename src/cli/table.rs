//! The table `run` and `merge` print: per point and strategy, the means across replications
//! of the metrics a reader looks at first.

use jitterlab::metric::Metric;
use jitterlab::runner::PointSummary;
use jitterlab::scenario::describe;

/// The columns after the strategy: the metric and the decimals it is shown with.
const COLUMNS: [(Metric, usize); 6] = [
    (Metric::Amplification, 2),
    (Metric::LatencyP50Ms, 1),
    (Metric::LatencyP99Ms, 1),
    (Metric::PeakArrivals, 0),
    (Metric::PeakRetries, 0),
    (Metric::SuccessRate, 4),
];

/// The table, one line per strategy under a line naming each sweep point; `-` where a mean is
/// undefined (a latency where nothing succeeded).
pub fn render(points: &[PointSummary]) -> String {
    let mut rows: Vec<Vec<String>> = vec![
        std::iter::once("strategy".to_string())
            .chain(COLUMNS.iter().map(|(m, _)| m.short().to_string()))
            .collect(),
    ];
    for point in points {
        if !point.values.is_empty() {
            rows.push(vec![format!(
                "[{}] {}",
                point.index,
                describe(&point.values)
            )]);
        }
        for strategy in &point.strategies {
            let mut row = vec![strategy.name.clone()];
            for (metric, digits) in COLUMNS {
                let mean = strategy.estimates[metric].mean;
                row.push(if mean.is_finite() {
                    format!("{mean:.digits$}")
                } else {
                    "-".into()
                });
            }
            rows.push(row);
        }
    }
    let widths: Vec<usize> = (0..=COLUMNS.len())
        .map(|i| {
            rows.iter()
                .filter(|r| r.len() > 1)
                .map(|r| r[i].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        if row.len() == 1 {
            out.push_str(&row[0]);
        } else {
            for (i, cell) in row.iter().enumerate() {
                if i == 0 {
                    out.push_str(&format!("{cell:<w$}", w = widths[0]));
                } else {
                    out.push_str(&format!("  {cell:>w$}", w = widths[i]));
                }
            }
        }
        out.push('\n');
    }
    out
}
