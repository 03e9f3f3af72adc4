//! Distributions at one point: the latency CDF per strategy on a log time axis with p50, p95
//! and p99 marked, and success by attempt number as grouped bars.

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::load::category_label;
use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, MUTED, Swatch};
use crate::output::results::{ResultFolder, fmt_ms, fmt_number};

/// At most this many points per CDF curve.
const MAX_CDF_POINTS: usize = 800;
/// The quantiles marked on the CDF.
const QUANTILES: [(f64, &str); 3] = [(0.5, "p50"), (0.95, "p95"), (0.99, "p99")];

pub(crate) struct Curve {
    name: String,
    color: usize,
    points: Vec<(f64, f64)>,
    quantiles: Vec<f64>,
}

pub(crate) struct Latency {
    curves: Vec<Curve>,
}

/// The smallest latency whose CDF reaches `q`.
fn quantile(points: &[(f64, f64)], q: f64) -> Option<f64> {
    points
        .iter()
        .find(|p| p.1 >= q - 1e-12)
        .or(points.last())
        .map(|p| p.0)
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

fn point_suffix(f: &ResultFolder) -> String {
    if f.sweep_keys.is_empty() {
        String::new()
    } else {
        f.first_point().title_suffix(&f.sweep_keys)
    }
}

pub(crate) fn build_latency(f: &ResultFolder) -> Option<(String, String, Latency)> {
    let point = f.first_point().index;
    let mut curves = Vec::new();
    for (i, s) in f.strategies.iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = f
            .latency
            .iter()
            .filter(|r| {
                r.point == point
                    && &r.strategy == s
                    && r.latency_ms > 0.0
                    && r.latency_ms.is_finite()
            })
            .map(|r| (r.latency_ms, r.cdf.clamp(0.0, 1.0)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let quantiles = QUANTILES
            .iter()
            .filter_map(|(q, _)| quantile(&pts, *q))
            .collect();
        curves.push(Curve {
            name: s.clone(),
            color: i,
            points: thin(&pts, MAX_CDF_POINTS),
            quantiles,
        });
    }
    if curves.is_empty() {
        return None;
    }
    let title = format!(
        "Latency of succeeded requests: CDF per strategy{}",
        point_suffix(f)
    );
    let mut guide = String::from(
        "Each curve shows the share of succeeded requests (up) that finished within a time (right; the axis is logarithmic when latencies span decades). \
         A curve further left is faster; the dots mark p50, p95 and p99 on each curve, and the gap between them is the tail. ",
    );
    let mut by_p99: Vec<(&str, f64)> = curves
        .iter()
        .filter_map(|c| c.quantiles.get(2).map(|q| (c.name.as_str(), *q)))
        .collect();
    by_p99.sort_by(|a, b| a.1.total_cmp(&b.1));
    if by_p99.len() > 1 {
        let (lo, hi) = (by_p99[0], by_p99[by_p99.len() - 1]);
        guide.push_str(&format!(
            "Here p99 ranges from {} ({}) to {} ({}). ",
            fmt_ms(lo.1),
            lo.0,
            fmt_ms(hi.1),
            hi.0
        ));
    }
    guide
        .push_str("Latency counts only requests that succeeded: read it next to the success rate.");
    Some((title, guide, Latency { curves }))
}

impl Latency {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let legend: Vec<LegendItem> = self
            .curves
            .iter()
            .map(|c| {
                let qs: Vec<String> = QUANTILES
                    .iter()
                    .zip(&c.quantiles)
                    .map(|((_, n), v)| format!("{n} {}", fmt_ms(*v)))
                    .collect();
                LegendItem::new(
                    Swatch::Line(style::color(c.color)),
                    format!("{} ({})", c.name, qs.join(", ")),
                )
            })
            .collect();
        let body = style::frame(root, title, None, &legend)?;
        let lo = self
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.0))
            .fold(f64::INFINITY, f64::min);
        let hi = self
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.0))
            .fold(0.0, f64::max);
        // A log axis when latencies span more than ~1.5 decades, else a linear one from 0
        // (a log axis over a narrow range has almost no ticks).
        if hi / lo >= 30.0 {
            let (x0, x1) = (lo / 1.25, hi * 1.25);
            let mut chart = ChartBuilder::on(&body)
                .margin(12)
                .margin_right(40)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d((x0..x1).log_scale(), 0.0..100.0)?;
            self.draw_cdf(
                &mut chart,
                x0,
                x1,
                "latency from first send to success (log scale)",
            )
        } else {
            let x1 = hi * 1.05;
            let mut chart = ChartBuilder::on(&body)
                .margin(12)
                .margin_right(40)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..x1, 0.0..100.0)?;
            self.draw_cdf(&mut chart, 0.0, x1, "latency from first send to success")
        }
    }

    fn draw_cdf<DB, X>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, RangedCoordf64>>,
        x0: f64,
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
            .x_labels(12)
            .y_labels(11)
            .x_label_formatter(&|v| {
                if *v == 0.0 {
                    "0".to_string()
                } else {
                    fmt_ms(*v)
                }
            })
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_desc(x_desc)
            .y_desc("requests finished (%)")
            .draw()?;
        let label_x = if x0 > 0.0 { x0 * 1.02 } else { x1 * 0.005 };
        for (q, name) in QUANTILES {
            let y = q * 100.0;
            chart.draw_series(DashedLineSeries::new(
                vec![(x0, y), (x1, y)],
                6,
                6,
                MUTED.mix(0.7).stroke_width(1),
            ))?;
            chart.draw_series(std::iter::once(Text::new(
                name.to_string(),
                (label_x, y),
                style::text(13.0, &MUTED).pos(Pos::new(HPos::Left, VPos::Bottom)),
            )))?;
        }
        for c in &self.curves {
            let color = style::color(c.color);
            // A step function: the CDF jumps at each latency.
            let mut line: Vec<(f64, f64)> = Vec::with_capacity(c.points.len() * 2);
            let mut prev = 0.0;
            for (x, y) in &c.points {
                line.push((*x, prev * 100.0));
                line.push((*x, y * 100.0));
                prev = *y;
            }
            chart.draw_series(LineSeries::new(line, color.stroke_width(3)))?;
            for ((q, _), v) in QUANTILES.iter().zip(&c.quantiles) {
                chart.draw_series(std::iter::once(Circle::new(
                    (*v, q * 100.0),
                    6,
                    color.filled(),
                )))?;
                chart.draw_series(std::iter::once(Circle::new(
                    (*v, q * 100.0),
                    6,
                    WHITE.stroke_width(1),
                )))?;
            }
        }
        Ok(())
    }
}

pub(crate) struct Bars {
    /// group labels: attempt numbers "1", "2", ..., or "20+"; layer names
    pub labels: Vec<String>,
    /// per strategy: (name, colour, value per label)
    pub bars: Vec<(String, usize, Vec<f64>)>,
    /// axis descriptions, x then y
    pub axes: (&'static str, &'static str),
    /// values are shares in % (the legend gives each strategy's total; the axis stops at
    /// 110 %)
    pub percent: bool,
}

/// Attempt numbers beyond this are merged into one `N+` group.
const MAX_ATTEMPT_GROUPS: u32 = 20;

pub(crate) fn build_attempts(f: &ResultFolder) -> Option<(String, String, Bars)> {
    let point = f.first_point().index;
    let rows: Vec<_> = f
        .attempts
        .iter()
        .filter(|r| r.point == point && r.attempt >= 1)
        .collect();
    let max_attempt = rows.iter().map(|r| r.attempt).max()?;
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
    let mut bars = Vec::new();
    for (i, s) in f.strategies.iter().enumerate() {
        let mut shares = vec![0.0; groups as usize];
        let mut any = false;
        for r in rows.iter().filter(|r| &r.strategy == s) {
            shares[(r.attempt.min(groups) - 1) as usize] += r.share * 100.0;
            any = true;
        }
        if any {
            bars.push((s.clone(), i, shares));
        }
    }
    if bars.is_empty() {
        return None;
    }
    let title = format!("Success by attempt number{}", point_suffix(f));
    let mut guide = String::from(
        "Bars show the share of all requests that succeeded on each attempt, grouped by attempt number, one colour per strategy. \
         Mass on attempt 1 means the server had room; mass on later attempts is work the retries recovered, each retry an extra load on the server. \
         What is missing from 100 % gave up or failed. ",
    );
    let first: Vec<String> = bars
        .iter()
        .map(|(s, _, v)| format!("{s} {} %", fmt_number(v[0])))
        .collect();
    guide.push_str(&format!(
        "First-attempt success here: {}.",
        first.join(", ")
    ));
    let axes = ("attempt on which the request succeeded", "requests (%)");
    let percent = true;
    Some((
        title,
        guide,
        Bars {
            labels,
            bars,
            axes,
            percent,
        },
    ))
}

impl Bars {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let legend: Vec<LegendItem> = self
            .bars
            .iter()
            .map(|(s, c, v)| {
                let total: f64 = v.iter().sum();
                let text = if self.percent {
                    format!("{s} ({} % succeeded)", fmt_number(total))
                } else {
                    s.clone()
                };
                LegendItem::new(Swatch::Box(style::color(*c).to_rgba()), text)
            })
            .collect();
        let body = style::frame(root, title, None, &legend)?;
        let n = self.labels.len();
        let y_hi = self
            .bars
            .iter()
            .flat_map(|b| b.2.iter().copied())
            .fold(0.0, f64::max);
        let y_max = style::from_zero(y_hi, 0.12);
        let y_max = if self.percent {
            y_max.min(110.0)
        } else {
            y_max
        };
        let labels = self.labels.clone();
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .margin_right(30)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..y_max)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .house_style()
            .x_labels(n.min(30))
            .x_label_formatter(&|v| category_label(&labels, *v))
            .y_label_formatter(&|v| style::tick(*v))
            .x_desc(self.axes.0)
            .y_desc(self.axes.1)
            .draw()?;
        let k = self.bars.len();
        let group = 0.84;
        let w = group / k as f64;
        let show_values = n * k <= 40;
        for (si, (_, c, shares)) in self.bars.iter().enumerate() {
            let color = style::color(*c);
            for (ai, v) in shares.iter().enumerate() {
                let x0 = ai as f64 - group / 2.0 + si as f64 * w + w * 0.06;
                let x1 = x0 + w * 0.88;
                if *v > 0.0 {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, 0.0), (x1, *v)],
                        color.mix(0.9).filled(),
                    )))?;
                }
                if show_values && *v >= 0.05 {
                    let label = if self.percent {
                        format!("{v:.0}")
                    } else {
                        fmt_number(*v)
                    };
                    chart.draw_series(std::iter::once(Text::new(
                        label,
                        ((x0 + x1) / 2.0, *v),
                        style::text(style::NOTE_SIZE, &INK)
                            .pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )))?;
                }
            }
        }
        Ok(())
    }
}
