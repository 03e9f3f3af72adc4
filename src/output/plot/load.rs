//! Load charts: without a sweep, amplification and success per candidate side by side (a
//! policy that sends fewer attempts by dropping requests shows it in the second panel); for a
//! one-key sweep, key metrics against the swept key: a line and 95 % band per strategy for a
//! numeric key, grouped bars for a categorical one. A point below the success target is a
//! hollow marker.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars::{Bar, BarChart, Panel, Series};
use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, Swatch};
use crate::metric::{Metric, Unit};
use crate::output::design::{Candidate, Design};
use crate::output::labels::{self, Kind};
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

fn bar(e: Estimate, hollow: bool) -> Bar {
    Bar {
        mean: e.mean,
        lo: e.lo,
        hi: e.hi,
        hollow,
    }
}

/// How a metric's value reads above a bar.
fn fmt_of(metric: Metric) -> fn(f64) -> String {
    match metric.unit() {
        Unit::Share => |v| format!("{:.1}", v * 100.0),
        Unit::Times => |v| format!("{}×", fmt_number(v)),
        Unit::Millis => crate::output::results::fmt_ms,
        Unit::Count => fmt_number,
    }
}

/// A bar panel of `metric` for `candidates` over `groups` (each a list of points, one per
/// candidate's place), with the metric's reference line.
fn metric_panel(
    f: &ResultFolder,
    design: &Design,
    metric: Metric,
    groups: Vec<String>,
    points: &[Vec<Option<&Candidate>>],
) -> Panel {
    let largest = (points.iter().flatten().flatten())
        .filter_map(|c| estimate(f, c.point, &c.strategy, metric))
        .map(|e| e.hi)
        .fold(0.0, f64::max);
    // The axis's unit (seconds for long times, % for a share) and the factor to it.
    let (div, y_desc) = style::axis_for(metric, largest);
    let scale = 1.0 / div;
    let line = match metric {
        Metric::Amplification => Some((1.0, "1 = no retries".to_string())),
        // Without retries a request is one call at each layer.
        Metric::ChainAmplification => f
            .info(0)
            .map(|i| i.layers.len())
            .map(|n| (n as f64, format!("{n} = no retries (one call a layer)"))),
        Metric::SuccessRate => Some((
            design.target,
            format!("success target {}", super::dist::pct(design.target)),
        )),
        _ => None,
    };
    let values = points
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| {
                    let c = (*c)?;
                    let e = estimate(f, c.point, &c.strategy, metric)?;
                    Some(bar(e, !design.meets_target(f, c)))
                })
                .collect()
        })
        .collect();
    Panel {
        caption: String::new(),
        groups,
        y_desc,
        values,
        fmt: fmt_of(metric),
        scale,
        line,
        y_top: (metric.unit() == Unit::Share).then_some(1.12),
    }
}

/// Without a sweep: amplification and success rate per candidate.
pub(crate) fn build_bars(f: &ResultFolder, design: &Design) -> Option<(String, String, BarChart)> {
    let candidates = design.candidates(0);
    if candidates.is_empty() {
        return None;
    }
    let series: Vec<Series> = (candidates.iter())
        .map(|c| Series {
            label: design.candidate_label(f, c),
            color: c.color,
            hollow: !design.meets_target(f, c),
        })
        .collect();
    let rows: Vec<Vec<Option<&Candidate>>> = candidates.iter().map(|c| vec![Some(c)]).collect();
    let panels: Vec<Panel> = [f.load_metric(), Metric::SuccessRate]
        .into_iter()
        .map(|m| {
            let mut p = metric_panel(f, design, m, vec![String::new()], &rows);
            p.caption = style::capitalize(m.label());
            p
        })
        .collect();
    let mut ranked: Vec<(String, f64, f64)> = (candidates.iter())
        .map(|c| {
            (
                design.candidate_label(f, c),
                Design::mean(f, c, f.load_metric()),
                Design::mean(f, c, Metric::SuccessRate),
            )
        })
        .filter(|r| r.1.is_finite())
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut guide = String::from(
        "Left: the mean number of attempts the server saw per request (1 = no retries), with its 95 % interval across replications; every attempt beyond the first is extra load. \
         Right: the share of requests that succeeded, against the success target. Read them together: a policy that sends fewer attempts by giving up on requests is cheap on the left and short on the right (hollow bars: below the target). ",
    );
    if let (Some(lo), Some(hi)) = (ranked.first(), ranked.last())
        && ranked.len() > 1
        && hi.1 > lo.1 * 1.02
    {
        guide.push_str(&format!(
            "{} sends the fewest ({}×, {} succeeded) and {} the most ({}×, {} succeeded).",
            lo.0,
            fmt_number(lo.1),
            crate::output::labels::percent_near(lo.2, design.target),
            hi.0,
            fmt_number(hi.1),
            crate::output::labels::percent_near(hi.2, design.target)
        ));
    }
    Some((
        "Load and success per strategy, with 95 % intervals".to_string(),
        guide.trim_end().to_string(),
        BarChart {
            subtitle: String::new(),
            x_desc: String::new(),
            series,
            panels,
        },
    ))
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

/// A chart against the one swept key: lines for a numeric key, bars for a categorical one.
pub(crate) enum Sweep {
    Lines(SweepPanels),
    Bars(BarChart),
}

impl Sweep {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        match self {
            Sweep::Lines(c) => c.draw(root, title),
            Sweep::Bars(c) => c.draw(root, title),
        }
    }
}

/// One metric of a one-key sweep: a line and band per strategy against the swept key.
pub(crate) struct SweepSeries {
    metric: Metric,
    lines: Vec<Line>,
}

/// One strategy's line: (name, colour index, [(x, estimate, below the target)]).
type Line = (String, usize, Vec<(f64, Estimate, bool)>);

/// One or more sweep panels sharing a numeric x axis.
pub(crate) struct SweepPanels {
    x_desc: String,
    /// Values are divided by this on the axis (ms to s, a share to %).
    x_scale: f64,
    panels: Vec<SweepSeries>,
    strategies: Vec<(String, usize)>,
    target: f64,
}

/// The axis of the swept key: its name with a unit, and the factor from values to the axis.
fn key_axis(f: &ResultFolder, key: &str, max: f64) -> (String, f64) {
    let reading = labels::Reading::of(f);
    let (name, kind) = reading.key(key);
    match kind {
        Kind::Duration => {
            let u = style::time_unit(max);
            (format!("{name} ({})", u.name), 1.0 / u.div)
        }
        Kind::Share => (format!("{name} (%)"), 100.0),
        Kind::Rate => {
            let capacity = f.info(0).and_then(|i| i.capacity_rps.clone());
            let note = capacity.map_or(String::new(), |(rps, _)| {
                format!("; capacity ≈ {}/s", fmt_number(rps))
            });
            // Each client's rate, drawn as the load of all of them (what the capacity faces).
            let factor = reading.factor(key);
            let clients = match reading {
                labels::Reading::PerClient(n) if factor != 1.0 => format!(", {n} clients"),
                _ => String::new(),
            };
            (format!("{name} (requests/s{clients}{note})"), factor)
        }
        Kind::Plain => (name, 1.0),
    }
}

/// The swept values as numbers (ms for durations), or `None` for a categorical key.
fn numbers(f: &ResultFolder) -> Option<Vec<f64>> {
    f.points
        .iter()
        .map(|p| sweep_value_number(&p.values[0]))
        .collect()
}

fn sweep_chart(f: &ResultFolder, design: &Design, metrics: &[Metric]) -> Option<Sweep> {
    let key = f.sweep_keys.first()?;
    let candidate = |p: u32, s: &str| Candidate {
        point: p,
        strategy: s.to_string(),
        color: 0,
    };
    let Some(xs) = numbers(f) else {
        // Categorical: grouped bars, one group per value, one bar per strategy.
        let groups: Vec<String> = f
            .points
            .iter()
            .map(|p| labels::Reading::of(f).value(key, &p.values[0]))
            .collect();
        let slots = crate::output::palette::slots(&f.strategies);
        let series: Vec<Series> = (f.strategies.iter().zip(slots))
            .map(|(s, i)| Series {
                label: s.clone(),
                color: i,
                hollow: false,
            })
            .collect();
        let cands: Vec<Vec<Candidate>> = (f.strategies.iter())
            .map(|s| f.points.iter().map(|p| candidate(p.index, s)).collect())
            .collect();
        let rows: Vec<Vec<Option<&Candidate>>> = cands
            .iter()
            .map(|row| row.iter().map(Some).collect())
            .collect();
        let panels: Vec<Panel> = (metrics.iter())
            .filter(|m| f.has(**m))
            .map(|m| {
                let mut p = metric_panel(f, design, *m, groups.clone(), &rows);
                p.caption = if metrics.len() > 1 {
                    style::capitalize(m.label())
                } else {
                    String::new()
                };
                p
            })
            .filter(|p| p.values.iter().flatten().any(Option::is_some))
            .collect();
        if panels.is_empty() {
            return None;
        }
        return Some(Sweep::Bars(BarChart {
            subtitle: String::new(),
            x_desc: labels::Reading::of(f).key(key).0,
            series,
            panels,
        }));
    };
    let strategies: Vec<(String, usize)> = (f.strategies.iter().cloned())
        .zip(crate::output::palette::slots(&f.strategies))
        .collect();
    let mut panels = Vec::new();
    for &metric in metrics {
        let lines: Vec<Line> = (strategies.iter())
            .map(|(s, c)| {
                let mut pts: Vec<(f64, Estimate, bool)> = (f.points.iter().zip(&xs))
                    .filter_map(|(p, x)| {
                        let e = estimate(f, p.index, s, metric)?;
                        let below = !design.meets_target(f, &candidate(p.index, s));
                        Some((*x, e, below))
                    })
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
    let max = xs.iter().copied().fold(0.0, f64::max);
    let (x_desc, x_scale) = key_axis(f, key, max);
    (!panels.is_empty()).then_some(Sweep::Lines(SweepPanels {
        x_desc,
        x_scale,
        panels,
        strategies,
        target: design.target,
    }))
}

/// The `load` chart of a one-key sweep.
pub(crate) fn build_sweep_panels(
    f: &ResultFolder,
    design: &Design,
) -> Option<(String, String, Sweep)> {
    let metrics: Vec<Metric> = PANEL_METRICS
        .iter()
        .filter_map(|alts| alts.iter().map(|&m| f.as_load(m)).find(|m| f.has(*m)))
        .collect();
    let chart = sweep_chart(f, design, &metrics)?;
    let key = labels::Reading::of(f).key(f.sweep_keys.first()?).0;
    let title = format!("Load, latency, completion and success as {key} changes");
    let guide = format!(
        "Each panel is one metric against {key}, one colour per strategy with its 95 % interval across replications. \
         Total calls (or amplification) is the work the server does for the same requests, completion time how long the slowest client waits, \
         and success how many requests were served at all: a strategy low on work but short on success drops requests. \
         Hollow markers are below the {} success target.",
        super::dist::pct(design.target)
    );
    Some((title, guide, chart))
}

/// The `sweep_<metric>` charts of a one-key sweep.
pub(crate) fn build_sweep_metrics(
    f: &ResultFolder,
    design: &Design,
) -> Vec<(Metric, String, String, Sweep)> {
    let Some(key) = f.sweep_keys.first() else {
        return Vec::new();
    };
    let key = labels::Reading::of(f).key(key).0;
    let mut out = Vec::new();
    for metric in SWEEP_METRICS.map(|m| f.as_load(m)) {
        if !f.has(metric) {
            continue;
        }
        // Success at or above the target everywhere, for every strategy, is a flat line the
        // `load` chart's success panel already shows.
        let all_meet = (design.all_candidates()).all(|(_, c)| design.meets_target(f, c));
        if metric == Metric::SuccessRate && all_meet {
            continue;
        }
        let Some(chart) = sweep_chart(f, design, &[metric]) else {
            continue;
        };
        let label = metric.label();
        let title = format!("{} against {key}", style::capitalize(label));
        let mut guide = format!(
            "The mean {label} per strategy as {key} changes, with 95 % intervals across replications. "
        );
        // The lowest and highest strategy at the last swept value, when they differ.
        let last: Vec<(String, f64)> = (f.strategies.iter())
            .filter_map(|s| {
                let p = f.points.last()?;
                Some((s.clone(), estimate(f, p.index, s, metric)?.mean))
            })
            .collect();
        let lo = last.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = last.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(lo), Some(hi), Some(p)) = (lo, hi, f.points.last())
            && hi.1 > lo.1 * 1.02
            && last.len() > 1
        {
            guide.push_str(&format!(
                "At {}, {} is lowest ({}) and {} highest ({}). ",
                labels::Reading::of(f).assignment(&f.sweep_keys[0], &p.values[0]),
                lo.0,
                style::fmt_metric(metric, lo.1),
                hi.0,
                style::fmt_metric(metric, hi.1)
            ));
        }
        guide.push_str("Intervals that do not overlap are differences the replications support.");
        out.push((metric, title, guide, chart));
    }
    out
}

impl SweepPanels {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let mut legend: Vec<LegendItem> = (self.strategies.iter())
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
        let any_below = (self.panels.iter())
            .flat_map(|p| p.lines.iter().flat_map(|l| l.2.iter()))
            .any(|x| x.2);
        if any_below {
            legend.push(LegendItem::new(
                Swatch::Hollow(INK),
                format!("below the {} success target", super::dist::pct(self.target)),
            ));
        }
        if (self.panels.iter()).any(|p| p.metric == Metric::SuccessRate) {
            legend.push(LegendItem::new(
                Swatch::Dashed(INK),
                format!("success target {}", super::dist::pct(self.target)),
            ));
        }
        let body = style::frame(root, title, None, &legend)?;
        let xs: Vec<f64> = (self.panels.iter())
            .flat_map(|p| {
                p.lines
                    .iter()
                    .flat_map(|l| l.2.iter().map(|x| x.0 * self.x_scale))
            })
            .collect();
        let (x_min, x_max) = (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let (x0, x1) = style::padded(x_min, x_max, 0.03);
        let (rows, cols) = match self.panels.len() {
            1 => (1, 1),
            2 => (1, 2),
            _ => (2, 2),
        };
        let areas = body.margin(0, 10, 10, 20).split_evenly((rows, cols));
        let single = self.panels.len() == 1;
        for (panel, area) in self.panels.iter().zip(areas.iter()) {
            self.draw_panel(area, panel, (x0, x1), single)?;
        }
        Ok(())
    }

    /// One metric's panel: a line per strategy, its 95 % band, and a marker per point (hollow
    /// below the success target).
    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &SweepSeries,
        (x0, x1): (f64, f64),
        single: bool,
    ) -> DrawResult {
        let hi = (panel.lines.iter())
            .flat_map(|l| l.2.iter().map(|p| p.1.hi))
            .fold(0.0, f64::max);
        let (y_div, y_desc) = style::axis_for(panel.metric, hi);
        let y_max = style::from_zero(hi / y_div, 0.08);
        let (w, _) = area.dim_in_pixel();
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .margin_right(24)
            .x_label_area_size(52)
            .y_label_area_size(if single { 92 } else { 86 })
            .build_cartesian_2d(x0..x1, 0.0..y_max)?;
        chart
            .configure_mesh()
            .house_style()
            .x_labels((w as usize / 80).clamp(3, 12))
            .y_labels(6)
            .x_label_formatter(&|v| style::tick(*v))
            .y_label_formatter(&|v| style::tick(*v))
            .x_desc(self.x_desc.clone())
            .y_desc(y_desc)
            .draw()?;
        style::declare(&chart, panel.metric.name(), false);
        let at = |x: f64, y: f64| (x * self.x_scale, y / y_div);
        // The success target, as the bar charts draw it: what a hollow marker falls short of.
        if panel.metric == Metric::SuccessRate {
            let y = self.target / y_div;
            chart.draw_series(DashedLineSeries::new(
                vec![(x0, y), (x1, y)],
                8,
                5,
                INK.mix(0.7).stroke_width(2),
            ))?;
        }
        for (_, c, pts) in &panel.lines {
            let color = style::color(*c);
            if pts.iter().any(|(_, e, _)| e.hi > e.lo) {
                let band: Vec<(f64, f64)> = (pts.iter().map(|(x, e, _)| at(*x, e.lo)))
                    .chain(pts.iter().rev().map(|(x, e, _)| at(*x, e.hi)))
                    .collect();
                chart.draw_series(std::iter::once(Polygon::new(
                    band,
                    color.mix(0.16).filled(),
                )))?;
            }
            let line: Vec<(f64, f64)> = pts.iter().map(|(x, e, _)| at(*x, e.mean)).collect();
            super::check::data(|| {
                chart.draw_series(LineSeries::new(line.clone(), color.stroke_width(3)))
            })?;
            if line.len() > 40 {
                continue; // markers would crowd the line
            }
            for ((_, _, below), p) in pts.iter().zip(&line) {
                if *below {
                    chart.draw_series(std::iter::once(Circle::new(*p, 5, WHITE.filled())))?;
                    chart.draw_series(std::iter::once(Circle::new(
                        *p,
                        5,
                        color.stroke_width(2),
                    )))?;
                } else {
                    chart.draw_series(std::iter::once(Circle::new(*p, 4, color.filled())))?;
                }
            }
        }
        Ok(())
    }
}
