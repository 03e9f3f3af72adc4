//! Load charts: amplification per strategy with its 95 % interval, and for a one-key sweep each
//! key metric against the swept key, one line and confidence band per strategy.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, Swatch};
use crate::metric::Metric;
use crate::output::results::{ResultFolder, fmt_number, sweep_value_number};

/// Mean and 95 % interval (the interval collapses to the mean when n = 1).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Estimate {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
}

pub(crate) fn estimate(
    f: &ResultFolder,
    point: u32,
    strategy: &str,
    metric: Metric,
) -> Option<Estimate> {
    let row = f.aggregate_of(point, strategy, metric)?;
    let mean = row.mean?;
    Some(Estimate {
        mean,
        lo: row.ci95_low.unwrap_or(mean).min(mean),
        hi: row.ci95_high.unwrap_or(mean).max(mean),
    })
}

/// Grouped bars: categories (points) × strategies.
pub(crate) struct Load {
    metric: Metric,
    categories: Vec<String>,
    strategies: Vec<(String, usize)>,
    /// values[category][strategy]
    values: Vec<Vec<Option<Estimate>>>,
}

pub(crate) fn build_bars(f: &ResultFolder) -> Option<(String, String, Load)> {
    let metric = Metric::Amplification;
    let strategies: Vec<(String, usize)> = f
        .strategies
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, s)| (s, i))
        .collect();
    let categories: Vec<String> = f
        .points
        .iter()
        .map(|p| {
            if f.sweep_keys.is_empty() {
                String::new()
            } else {
                p.values.join(" / ")
            }
        })
        .collect();
    let values: Vec<Vec<Option<Estimate>>> = f
        .points
        .iter()
        .map(|p| {
            strategies
                .iter()
                .map(|(s, _)| estimate(f, p.index, s, metric))
                .collect()
        })
        .collect();
    if values.iter().flatten().all(Option::is_none) {
        return None;
    }
    let title = if f.points.len() > 1 {
        format!(
            "Load amplification per strategy and point ({})",
            f.sweep_keys.join(" / ")
        )
    } else {
        "Load amplification: attempts per request, with 95 % intervals".to_string()
    };
    let mut ranked: Vec<(String, f64)> = strategies
        .iter()
        .enumerate()
        .filter_map(|(k, (s, _))| values[0][k].map(|e| (s.clone(), e.mean)))
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut guide = String::from(
        "Each bar is the mean number of attempts the server saw per request (1 = no retries), with its 95 % confidence interval across replications. \
         Every attempt beyond the first is extra load on a server that is already struggling, so taller bars mean a heavier herd. ",
    );
    if let (Some(lo), Some(hi)) = (ranked.first(), ranked.last())
        && ranked.len() > 1
    {
        guide.push_str(&format!(
            "{}{} sends the fewest ({}×) and {} the most ({}×).",
            if f.points.len() > 1 {
                "At the first point, "
            } else {
                ""
            },
            lo.0,
            fmt_number(lo.1),
            hi.0,
            fmt_number(hi.1)
        ));
    }
    Some((
        title,
        guide,
        Load {
            metric,
            categories,
            strategies,
            values,
        },
    ))
}

impl Load {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let mut legend: Vec<LegendItem> = self
            .strategies
            .iter()
            .map(|(s, c)| LegendItem::new(Swatch::Box(style::color(*c).to_rgba()), s.clone()))
            .collect();
        legend.push(LegendItem::new(Swatch::Line(INK), "95 % interval"));
        legend.push(LegendItem::new(
            Swatch::Dashed(style::MUTED),
            "1 = no retries",
        ));
        let body = style::frame(root, title, None, &legend)?;
        let y_hi = self
            .values
            .iter()
            .flatten()
            .flatten()
            .map(|e| e.hi)
            .fold(1.0, f64::max);
        let y_max = style::from_zero(y_hi, 0.12);
        let n_cat = self.categories.len();
        let n_s = self.strategies.len().max(1);
        let cats = self.categories.clone();
        let axis_label = self.metric.label();
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .margin_right(30)
            .x_label_area_size(if n_cat > 1 { 50 } else { 20 })
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..(n_cat as f64 - 0.5), 0.0..y_max)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .house_style()
            .x_labels(n_cat.min(30))
            .x_label_formatter(&|v| category_label(&cats, *v))
            .y_label_formatter(&|v| style::tick(*v))
            .y_desc(axis_label)
            .draw()?;
        chart.draw_series(DashedLineSeries::new(
            vec![(-0.5, 1.0), (n_cat as f64 - 0.5, 1.0)],
            8,
            5,
            style::MUTED.stroke_width(1),
        ))?;
        let group = 0.8;
        let w = group / n_s as f64;
        let show_values = n_cat * n_s <= 20;
        for (ci, row) in self.values.iter().enumerate() {
            for (si, est) in row.iter().enumerate() {
                let Some(e) = est else { continue };
                let color = style::color(self.strategies[si].1);
                let x0 = ci as f64 - group / 2.0 + si as f64 * w + w * 0.08;
                let x1 = x0 + w * 0.84;
                let xm = (x0 + x1) / 2.0;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, e.mean)],
                    color.mix(0.9).filled(),
                )))?;
                if e.hi > e.lo {
                    let cap = w * 0.18;
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(xm, e.lo), (xm, e.hi)],
                        INK.stroke_width(2),
                    )))?;
                    for y in [e.lo, e.hi] {
                        chart.draw_series(std::iter::once(PathElement::new(
                            vec![(xm - cap, y), (xm + cap, y)],
                            INK.stroke_width(2),
                        )))?;
                    }
                }
                if show_values {
                    chart.draw_series(std::iter::once(Text::new(
                        format!("{}×", fmt_number(e.mean)),
                        (xm, e.hi.max(e.mean)),
                        style::text(14.0, &INK).pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )))?;
                }
            }
        }
        Ok(())
    }
}

/// The label of the category at an integral axis position, or `""` between categories.
pub(crate) fn category_label(cats: &[String], v: f64) -> String {
    let r = v.round();
    if (v - r).abs() > 1e-6 || r < 0.0 {
        return String::new();
    }
    cats.get(r as usize).cloned().unwrap_or_default()
}

/// One metric of a one-key sweep: a line and band per strategy against the swept key.
pub(crate) struct SweepSeries {
    metric: Metric,
    lines: Vec<Line>,
}

/// One strategy's line: (name, colour index, [(x, estimate)]).
type Line = (String, usize, Vec<(f64, Estimate)>);

/// One or more sweep panels sharing the x axis.
pub(crate) struct SweepPanels {
    key: String,
    /// numeric x axis (values in ms for durations) or categorical (labels at 0, 1, ...)
    x_labels: Option<Vec<String>>,
    x_is_duration: bool,
    panels: Vec<SweepSeries>,
    strategies: Vec<(String, usize)>,
}

/// The metrics of the `load` panels for a one-key sweep, in order; `attempts` stands in for
/// amplification (total calls, as in Brooker's chart) when present.
const PANEL_METRICS: [&[Metric]; 4] = [
    &[Metric::Attempts, Metric::Amplification],
    &[Metric::LatencyP99Ms],
    &[Metric::MakespanMs],
    &[Metric::SuccessRate],
];

/// The metrics that get their own `sweep_<metric>` chart for a one-key sweep.
pub(crate) const SWEEP_METRICS: [Metric; 6] = [
    Metric::Attempts,
    Metric::Amplification,
    Metric::MakespanMs,
    Metric::LatencyP99Ms,
    Metric::SuccessRate,
    Metric::PeakRetries,
];

fn sweep_panels(f: &ResultFolder, metrics: &[Metric]) -> Option<SweepPanels> {
    let key = f.sweep_keys.first()?.clone();
    let numbers: Option<Vec<f64>> = f
        .points
        .iter()
        .map(|p| sweep_value_number(&p.values[0]))
        .collect();
    let x_is_duration = f
        .points
        .iter()
        .any(|p| p.values[0].chars().any(|c| c.is_ascii_alphabetic()));
    let (xs, x_labels) = match numbers {
        Some(n) => (n, None),
        None => (
            (0..f.points.len()).map(|i| i as f64).collect(),
            Some(f.points.iter().map(|p| p.values[0].clone()).collect()),
        ),
    };
    let strategies: Vec<(String, usize)> = f
        .strategies
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, s)| (s, i))
        .collect();
    let mut panels = Vec::new();
    for &metric in metrics {
        let lines: Vec<Line> = strategies
            .iter()
            .map(|(s, c)| {
                let mut pts: Vec<(f64, Estimate)> = f
                    .points
                    .iter()
                    .zip(&xs)
                    .filter_map(|(p, x)| estimate(f, p.index, s, metric).map(|e| (*x, e)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                (s.clone(), *c, pts)
            })
            .filter(|l| !l.2.is_empty())
            .collect();
        if !lines.is_empty() {
            panels.push(SweepSeries { metric, lines });
        }
    }
    (!panels.is_empty()).then_some(SweepPanels {
        key,
        x_labels,
        x_is_duration,
        panels,
        strategies,
    })
}

pub(crate) fn build_sweep_panels(f: &ResultFolder) -> Option<(String, String, SweepPanels)> {
    let metrics: Vec<Metric> = PANEL_METRICS
        .iter()
        .filter_map(|alts| alts.iter().copied().find(|m| f.has(*m)))
        .collect();
    let panels = sweep_panels(f, &metrics)?;
    let key = &panels.key;
    let title = format!("Load as {key} grows: one line and 95 % band per strategy");
    let guide = format!(
        "Each panel is one metric against {key}, a line per strategy with its 95 % confidence band. \
         Total calls shows the work the server does for the same requests, completion time how long the slowest client waits. \
         Lines that bend upward mean contention feeds on itself; a strategy whose line stays low and flat scales. \
         With no backoff or no jitter, calls grow fastest; full jitter keeps the work lowest, at some cost in completion time."
    );
    Some((title, guide, panels))
}

pub(crate) fn build_sweep_metrics(f: &ResultFolder) -> Vec<(Metric, String, String, SweepPanels)> {
    let mut out = Vec::new();
    for metric in SWEEP_METRICS {
        if !f.has(metric) {
            continue;
        }
        let Some(panels) = sweep_panels(f, &[metric]) else {
            continue;
        };
        let label = metric.label();
        let key = panels.key.clone();
        let title = format!("{} against {key}", style::capitalize(label));
        let mut guide = format!(
            "The mean {label} per strategy as {key} changes, with 95 % confidence bands across replications. "
        );
        // Name the best and worst strategy at the largest swept value.
        let mut last: Vec<(String, f64)> = panels.panels[0]
            .lines
            .iter()
            .filter_map(|(s, _, pts)| pts.last().map(|p| (s.clone(), p.1.mean)))
            .collect();
        last.sort_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(lo), Some(hi)) = (last.first(), last.last())
            && last.len() > 1
        {
            guide.push_str(&format!(
                "At the largest {key}, {} is lowest ({}) and {} highest ({}). ",
                lo.0,
                style::fmt_metric(metric, lo.1),
                hi.0,
                style::fmt_metric(metric, hi.1)
            ));
        }
        guide.push_str("Bands that do not overlap are differences the replications support.");
        out.push((metric, title, guide, panels));
    }
    out
}

impl SweepPanels {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let mut legend: Vec<LegendItem> = self
            .strategies
            .iter()
            .filter(|(s, _)| {
                self.panels
                    .iter()
                    .any(|p| p.lines.iter().any(|l| &l.0 == s))
            })
            .map(|(s, c)| LegendItem::new(Swatch::Line(style::color(*c)), s.clone()))
            .collect();
        legend.push(LegendItem::new(
            Swatch::Box(INK.mix(0.15)),
            "95 % confidence band",
        ));
        let body = style::frame(root, title, None, &legend)?;

        let xs: Vec<f64> = self
            .panels
            .iter()
            .flat_map(|p| p.lines.iter().flat_map(|l| l.2.iter().map(|x| x.0)))
            .collect();
        let (x_min, x_max) = (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let (x_div, x_desc) = if self.x_is_duration && self.x_labels.is_none() {
            let u = style::time_unit(x_max);
            (u.div, format!("{} ({})", self.key, u.name))
        } else {
            (1.0, self.key.clone())
        };
        let (x0, x1) = style::padded(x_min / x_div, x_max / x_div, 0.03);
        let (rows, cols) = match self.panels.len() {
            1 => (1, 1),
            2 => (1, 2),
            _ => (2, 2),
        };
        let areas = body.margin(0, 10, 10, 20).split_evenly((rows, cols));
        for (panel, area) in self.panels.iter().zip(areas.iter()) {
            let hi = panel
                .lines
                .iter()
                .flat_map(|l| l.2.iter().map(|p| p.1.hi))
                .fold(0.0, f64::max);
            let (y_div, y_desc) = style::axis_for(panel.metric, hi);
            let y_max = style::from_zero(hi / y_div, 0.08);
            let single = self.panels.len() == 1;
            let mut chart = ChartBuilder::on(area)
                .margin(8)
                .margin_right(24)
                .x_label_area_size(if single { 50 } else { 44 })
                .y_label_area_size(if single { 90 } else { 84 })
                .build_cartesian_2d(x0..x1, 0.0..y_max)?;
            let labels = self.x_labels.clone();
            let formatter = move |v: &f64| match &labels {
                Some(l) => category_label(l, *v),
                None => style::tick(*v),
            };
            chart
                .configure_mesh()
                .house_style()
                .x_labels(if single { 12 } else { 8 })
                .y_labels(6)
                .x_label_formatter(&formatter)
                .y_label_formatter(&|v| style::tick(*v))
                .x_desc(x_desc.clone())
                .y_desc(y_desc)
                .draw()?;
            for (_, c, pts) in &panel.lines {
                let color = style::color(*c);
                let band: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|(x, e)| (x / x_div, e.lo / y_div))
                    .chain(pts.iter().rev().map(|(x, e)| (x / x_div, e.hi / y_div)))
                    .collect();
                if pts.iter().any(|(_, e)| e.hi > e.lo) {
                    chart.draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(0.16).filled(),
                    )))?;
                }
                let line: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|(x, e)| (x / x_div, e.mean / y_div))
                    .collect();
                chart.draw_series(LineSeries::new(line.clone(), color.stroke_width(3)))?;
                if line.len() <= 40 {
                    chart.draw_series(line.iter().map(|p| Circle::new(*p, 4, color.filled())))?;
                }
            }
        }
        Ok(())
    }
}
