//! Distributions at one world point: the latency CDF over all requests (a curve tops out at
//! its success share: failed and unfinished requests never arrive), and success by attempt
//! number as grouped bars.

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::bars::{Bar, BarChart, Panel, Series};
use super::style::{self, DrawResult, HouseStyle, LegendItem, MUTED, Swatch};
use crate::metric::Metric;
use crate::output::design::{Candidate, Design};
use crate::output::results::{ResultFolder, fmt_ms, fmt_number};

/// At most this many points per CDF curve.
const MAX_CDF_POINTS: usize = 800;
/// The percentiles marked on each curve: those of the summary table.
const MARKED: [(Metric, &str); 3] = [
    (Metric::LatencyP50Ms, "p50"),
    (Metric::LatencyP95Ms, "p95"),
    (Metric::LatencyP99Ms, "p99"),
];
/// At most this many candidates in one distribution chart.
const MAX_CURVES: usize = 8;

pub(crate) struct Curve {
    name: String,
    color: usize,
    /// A candidate of the same strategy drawn before this one: dashed.
    dashed: bool,
    /// (latency ms, share of all requests succeeded within it, 0 to 1)
    points: Vec<(f64, f64)>,
    /// The success rate (the curve's top).
    success: f64,
    below_target: bool,
    /// The table's p50, p95 and p99 (means over replications), ms.
    marks: Vec<f64>,
}

pub(crate) struct Latency {
    curves: Vec<Curve>,
    subtitle: String,
    target: f64,
}

/// Keeps at most `max` points of a CDF, evenly spaced in index, always the first and last.
fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points.to_vec();
    }
    let step = points.len() as f64 / (max - 1) as f64;
    let mut out: Vec<(f64, f64)> = (0..max - 1)
        .map(|i| points[(i as f64 * step) as usize])
        .collect();
    out.push(*points.last().expect("len > max"));
    out
}

/// The curve's height at latency `x` (the step at or before it).
fn height_at(points: &[(f64, f64)], x: f64) -> f64 {
    points
        .iter()
        .take_while(|p| p.0 <= x)
        .last()
        .map_or(0.0, |p| p.1)
}

/// The subtitle of a chart at world point `world`: its world values, if any.
pub(crate) fn world_subtitle(f: &ResultFolder, design: &Design, world: usize) -> String {
    let label = design.world_label(f, world);
    if label.is_empty() {
        String::new()
    } else {
        format!("with {label}")
    }
}

/// A candidate drawn after another of the same strategy (a second choice value) is dashed.
fn repeats(candidates: &[Candidate]) -> Vec<bool> {
    candidates
        .iter()
        .enumerate()
        .map(|(i, c)| candidates[..i].iter().any(|d| d.strategy == c.strategy))
        .collect()
}

pub(crate) fn build_latency(
    f: &ResultFolder,
    design: &Design,
) -> Option<(String, String, Latency)> {
    let world = design.showcase();
    let shown = design.shown(f, world, MAX_CURVES);
    let dashed = repeats(&shown);
    let mut curves = Vec::new();
    for (c, dashed) in shown.iter().zip(dashed) {
        let success = Design::mean(f, c, Metric::SuccessRate);
        let mut pts: Vec<(f64, f64)> = (f.latency.iter())
            .filter(|r| {
                r.point == c.point
                    && r.strategy == c.strategy
                    && r.latency_ms > 0.0
                    && r.latency_ms.is_finite()
            })
            .map(|r| (r.latency_ms, r.cdf.clamp(0.0, 1.0) * success))
            .collect();
        if pts.is_empty() || success.is_nan() || success <= 0.0 {
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        curves.push(Curve {
            name: design.candidate_label(f, c),
            color: c.color,
            dashed,
            points: thin(&pts, MAX_CDF_POINTS),
            success,
            below_target: !design.meets_target(f, c),
            marks: MARKED.iter().map(|(m, _)| Design::mean(f, c, *m)).collect(),
        });
    }
    if curves.is_empty() {
        return None;
    }
    let title = "Latency over all requests: share succeeded within each time".to_string();
    let mut guide = String::from(
        "Each curve is one run set's requests, all of them: the share (up) that had succeeded within a time (right; logarithmic when latencies span decades). \
         A curve stops rising at its success rate: the rest failed, gave up or were still going at the horizon, and sit beyond the right edge. \
         Further left is faster, higher is more requests served. The dots are the p50, p95 and p99 of the summary table (of the requests that succeeded, each a mean over replications). ",
    );
    let mut by_success: Vec<&Curve> = curves.iter().collect();
    by_success.sort_by(|a, b| a.success.total_cmp(&b.success));
    if let (Some(lo), Some(hi)) = (by_success.first(), by_success.last())
        && hi.success - lo.success > 0.005
    {
        guide.push_str(&format!(
            "{} succeeded for {} of requests, {} for {}. ",
            hi.name,
            crate::output::labels::percent_near(hi.success, design.target),
            lo.name,
            crate::output::labels::percent_near(lo.success, design.target)
        ));
    }
    let below: Vec<&str> = (curves.iter())
        .filter(|c| c.below_target)
        .map(|c| c.name.as_str())
        .collect();
    if !below.is_empty() && below.len() < curves.len() {
        guide.push_str(&format!(
            "Below the {} success target: {} (legend marked): a faster tail there is bought by dropping requests.",
            pct(design.target),
            below.join(", ")
        ));
    }
    Some((
        title,
        guide.trim_end().to_string(),
        Latency {
            curves,
            subtitle: world_subtitle(f, design, world),
            target: design.target,
        },
    ))
}

/// Shares of all requests that succeeded on each attempt, pooled over the replications
/// (`attempts.csv`), scaled to add up to `success`, the mean success rate over replications
/// (the one aggregation of the success rate in a report): the pooled split of a success rate
/// that is the table's. Unscaled when `success` is not known.
fn mean_split(pooled: Vec<f64>, success: f64) -> Vec<f64> {
    let total: f64 = pooled.iter().sum();
    if !(success.is_finite() && total > 0.0) {
        return pooled;
    }
    pooled.into_iter().map(|s| s / total * success).collect()
}

/// A share as `98.2 %`.
pub(crate) fn pct(share: f64) -> String {
    format!("{} %", fmt_number(share * 100.0))
}

impl Latency {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let mut legend: Vec<LegendItem> = self
            .curves
            .iter()
            .map(|c| {
                let marks: Vec<String> = (MARKED.iter().zip(&c.marks))
                    .filter(|(_, v)| v.is_finite())
                    .map(|((_, n), v)| format!("{n} {}", fmt_ms(*v)))
                    .collect();
                let below = if c.below_target { ", below target" } else { "" };
                let color = style::color(c.color);
                let swatch = if c.dashed {
                    Swatch::Dashed(color)
                } else {
                    Swatch::Line(color)
                };
                LegendItem::new(
                    swatch,
                    format!(
                        "{}: {} succeeded{below}; {}",
                        c.name,
                        crate::output::labels::percent_near(c.success, self.target),
                        marks.join(", ")
                    ),
                )
            })
            .collect();
        legend.push(LegendItem::new(
            Swatch::Dashed(MUTED),
            format!("success target {}", pct(self.target)),
        ));
        let body = style::frame(root, title, Some(&self.subtitle), &legend)?;
        let xs = || {
            self.curves
                .iter()
                .flat_map(|c| c.points.iter().map(|p| p.0))
        };
        let lo = xs().fold(f64::INFINITY, f64::min);
        let hi = xs().fold(0.0, f64::max);
        // A log axis when latencies span more than ~1.5 decades, else a linear one from 0
        // (a log axis over a narrow range has almost no ticks).
        if hi / lo >= 30.0 {
            let (x0, x1) = (lo / 1.25, hi * 1.25);
            // Ticks at 1, 2 and 5 of each decade (plotters' own log ticks repeat a decade's
            // first value).
            let ticks: Vec<f64> = (x0.log10().floor() as i32..=x1.log10().ceil() as i32)
                .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
                .filter(|v| (x0..=x1).contains(v))
                .collect();
            let mut chart = ChartBuilder::on(&body)
                .margin(12)
                .margin_right(80)
                .x_label_area_size(52)
                .y_label_area_size(84)
                .build_cartesian_2d((x0..x1).log_scale().with_key_points(ticks), 0.0..105.0)?;
            self.draw_cdf(
                &mut chart,
                x1,
                "latency from first send to success (log scale)",
            )
        } else {
            let x1 = hi * 1.05;
            let mut chart = ChartBuilder::on(&body)
                .margin(12)
                .margin_right(80)
                .x_label_area_size(52)
                .y_label_area_size(84)
                .build_cartesian_2d(0.0..x1, 0.0..105.0)?;
            self.draw_cdf(&mut chart, x1, "latency from first send to success")
        }
    }

    fn draw_cdf<DB, X>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, RangedCoordf64>>,
        x1: f64,
        x_desc: &str,
    ) -> DrawResult
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        chart
            .configure_mesh()
            .house_style()
            .x_labels(10)
            .y_labels(11)
            .x_label_formatter(&|v| if *v == 0.0 { "0".into() } else { fmt_ms(*v) })
            .y_label_formatter(&|v| {
                if *v <= 100.0 {
                    format!("{v:.0}")
                } else {
                    String::new()
                }
            })
            .x_desc(x_desc)
            .y_desc("succeeded within the time (% of all requests)")
            .draw()?;
        style::declare(chart, "latency", false);
        let target = self.target * 100.0;
        chart.draw_series(DashedLineSeries::new(
            vec![(chart.x_range().start, target), (x1, target)],
            6,
            6,
            MUTED.mix(0.7).stroke_width(1),
        ))?;
        for c in &self.curves {
            let color = style::color(c.color);
            // A step function: the CDF jumps at each latency; after the last, it stays at the
            // success rate to the right edge.
            let mut line: Vec<(f64, f64)> = Vec::with_capacity(c.points.len() * 2 + 1);
            let mut prev = 0.0;
            for (x, y) in &c.points {
                line.push((*x, prev * 100.0));
                line.push((*x, y * 100.0));
                prev = *y;
            }
            line.push((x1, prev * 100.0));
            super::check::data(|| {
                if c.dashed {
                    chart.draw_series(DashedLineSeries::new(line, 10, 6, color.stroke_width(3)))
                } else {
                    chart.draw_series(LineSeries::new(line, color.stroke_width(3)))
                }
            })?;
            for v in c.marks.iter().filter(|v| v.is_finite()) {
                let p = (*v, height_at(&c.points, *v) * 100.0);
                chart.draw_series(std::iter::once(Circle::new(p, 6, color.filled())))?;
                chart.draw_series(std::iter::once(Circle::new(p, 6, WHITE.stroke_width(1))))?;
            }
        }
        // The success share at the right edge of each curve, where no other label is closer
        // than a line.
        let mut placed: Vec<i32> = Vec::new();
        let mut order: Vec<&Curve> = self.curves.iter().collect();
        order.sort_by(|a, b| b.success.total_cmp(&a.success));
        for c in order {
            let (_, y) = chart.backend_coord(&(x1, c.success * 100.0));
            if placed.iter().any(|p| (p - y).abs() < 20) {
                continue;
            }
            placed.push(y);
            chart.draw_series(std::iter::once(
                EmptyElement::at((x1, c.success * 100.0))
                    + Text::new(
                        crate::output::labels::percent_near(c.success, self.target),
                        (6, 0),
                        style::text(style::NOTE_SIZE, &style::text_color(c.color))
                            .pos(Pos::new(HPos::Left, VPos::Center)),
                    ),
            ))?;
        }
        Ok(())
    }
}

/// Attempt numbers beyond this are merged into one `N+` group.
const MAX_ATTEMPT_GROUPS: u32 = 20;

pub(crate) fn build_attempts(
    f: &ResultFolder,
    design: &Design,
) -> Option<(String, String, BarChart)> {
    let world = design.showcase();
    let shown = design.shown(f, world, MAX_CURVES);
    let rows = |c: &Candidate| -> Vec<&crate::output::results::AttemptsRow> {
        (f.attempts.iter())
            .filter(|r| r.point == c.point && r.strategy == c.strategy && r.attempt >= 1)
            .collect()
    };
    let max_attempt = shown
        .iter()
        .flat_map(|c| rows(c).into_iter().map(|r| r.attempt))
        .max()?;
    let groups = max_attempt.min(MAX_ATTEMPT_GROUPS);
    let labels: Vec<String> = (1..=groups)
        .map(|a| {
            if a == MAX_ATTEMPT_GROUPS && max_attempt > MAX_ATTEMPT_GROUPS {
                format!("{a}+")
            } else {
                a.to_string()
            }
        })
        .collect();
    let mut series = Vec::new();
    let mut values = Vec::new();
    let mut first = Vec::new();
    for c in &shown {
        let mut shares = vec![0.0; groups as usize];
        for r in rows(c) {
            shares[(r.attempt.min(groups) - 1) as usize] += r.share;
        }
        let pooled: f64 = shares.iter().sum();
        if pooled <= 0.0 {
            continue;
        }
        let shares = mean_split(shares, Design::mean(f, c, Metric::SuccessRate));
        let total: f64 = shares.iter().sum();
        let name = design.candidate_label(f, c);
        first.push(format!("{name} {}", pct(shares[0])));
        series.push(Series {
            label: format!(
                "{name} ({} succeeded)",
                crate::output::labels::percent_near(total, design.target)
            ),
            color: c.color,
            hollow: !design.meets_target(f, c),
        });
        values.push(
            shares
                .into_iter()
                .map(|v| (v > 0.0).then(|| Bar::exact(v)))
                .collect(),
        );
    }
    if series.is_empty() {
        return None;
    }
    let title = "Success by attempt number".to_string();
    let guide = format!(
        "Bars show the share of all requests that succeeded on each attempt, grouped by attempt number. \
         Each strategy's bars add up to its success rate in the summary table (the mean over replications), \
         split among the attempts as the replications' successes are, all together. \
         Mass on attempt 1 means the server had room; mass on later attempts is work the retries recovered, each retry an extra load on the server. \
         What is missing from 100 % gave up, failed or was unfinished (hollow bars: below the success target). \
         First-attempt success here: {}.",
        first.join(", ")
    );
    Some((
        title,
        guide,
        BarChart {
            subtitle: world_subtitle(f, design, world),
            x_desc: "attempt on which the request succeeded".into(),
            series,
            panels: vec![Panel {
                caption: String::new(),
                groups: labels,
                y_desc: "requests (%)".into(),
                values,
                fmt: |v| format!("{:.0}", v * 100.0),
                scale: 100.0,
                line: None,
                y_top: None,
            }],
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::results::{AggregateRow, AttemptsRow, Point};

    #[test]
    fn success_by_attempt_adds_up_to_the_tables_mean() {
        // Replications of unequal size: pooled, 568 of 1 000 requests succeeded (56.8 %); the
        // mean of the replications' success rates, the table's, is 57.1 %.
        let mut f = ResultFolder::empty("attempts");
        f.strategies = vec!["full".into()];
        f.points = vec![Point {
            index: 0,
            values: Vec::new(),
        }];
        let mean = |metric: Metric, mean: f64| AggregateRow {
            point: 0,
            strategy: "full".into(),
            sweep: Vec::new(),
            metric,
            mean: Some(mean),
            sd: None,
            ci95_low: None,
            ci95_high: None,
            n: 2,
        };
        f.aggregate = vec![
            mean(Metric::Requests, 500.0),
            mean(Metric::SuccessRate, 0.571),
        ];
        let row = |attempt: u32, succeeded: u64| AttemptsRow {
            point: 0,
            strategy: "full".into(),
            sweep: Vec::new(),
            attempt,
            succeeded,
            share: succeeded as f64 / 1000.0,
        };
        f.attempts = vec![row(1, 500), row(2, 68)];
        let design = Design::of(&f);
        let (_, guide, chart) = build_attempts(&f, &design).unwrap();
        assert_eq!(chart.series[0].label, "full (57.1 % succeeded)");
        let bars: f64 = (chart.panels[0].values[0].iter().flatten())
            .map(|b| b.mean)
            .sum();
        assert!((bars - 0.571).abs() < 1e-12, "{bars}");
        // 500 / 568 of 57.1 %.
        assert!(
            guide.contains("First-attempt success here: full 50.3 %."),
            "{guide}"
        );
        assert!(guide.contains("the mean over replications"), "{guide}");
    }
}
