//! The table `live` prints: for each strategy and key metric, the live value, the simulated
//! one and their relative difference; and the timer line that says how far to trust it.

use jitterlab::live::compare::KEY_METRICS;
use jitterlab::live::measure::TimerReport;
use jitterlab::output::rows::LiveVsSimRow;
use jitterlab::text::pad;

/// `live  sim  diff` per key metric, one line per (strategy, metric).
pub fn render(rows: &[LiveVsSimRow]) -> String {
    let cell = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.4}"));
    let mut lines = vec![[
        "strategy".to_string(),
        "metric".into(),
        "live".into(),
        "simulated".into(),
        "difference".into(),
    ]];
    for metric in KEY_METRICS {
        for r in rows.iter().filter(|r| r.metric == metric) {
            lines.push([
                jitterlab::text::shown(&r.strategy),
                metric.name().into(),
                cell(r.live),
                cell(r.simulated),
                r.relative_difference
                    .map_or("-".into(), |d| format!("{:+.1} %", d * 100.0)),
            ]);
        }
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in lines {
        out.push_str(&pad(&l[0], widths[0], false));
        out.push_str("  ");
        out.push_str(&pad(&l[1], widths[1], false));
        for i in 2..5 {
            out.push_str("  ");
            out.push_str(&pad(&l[i], widths[i], true));
        }
        out.push('\n');
    }
    out
}

/// One line on timers: resolution and how late sleeps woke.
pub fn timers(t: &TimerReport) -> String {
    format!(
        "timers: resolution {:.3} ms; {} sleeps woke late by p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        t.timer_resolution_ms, t.sleeps, t.lag_p50_ms, t.lag_p99_ms, t.lag_max_ms
    )
}
