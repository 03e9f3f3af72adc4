//! The re-synchronisation chart: the index of dispersion of retries over the trailing second
//! (`retry_dispersion` of `timeseries.csv`, see [`crate::sim::resync`]), one panel per
//! strategy on shared log axes, the level of independent random retries (1) dashed.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::herd::{MAX_DRAWN_POINTS, decimate_peaks};
use super::series::Traces;
use super::style::{self, DrawResult, INK, LegendItem, Swatch};
use crate::output::design::Design;
use crate::output::results::{ResultFolder, fmt_number};

/// Values below this sit on the bottom of the log axis.
const FLOOR: f64 = 0.1;

struct Panel {
    name: String,
    color: usize,
    /// Runs of consecutive defined buckets: (t_ms, dispersion).
    runs: Vec<Vec<(f64, f64)>>,
}

pub(crate) struct Resync {
    panels: Vec<Panel>,
    paired: bool,
    subtitle: String,
}

/// The median of `xs` (sorted in place), or `None` when empty.
fn median(xs: &mut [f64]) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    (!xs.is_empty()).then(|| xs[xs.len() / 2])
}

pub(crate) fn build(
    f: &ResultFolder,
    design: &Design,
    traces: &Traces,
) -> Option<(String, String, Resync)> {
    let mut panels = Vec::new();
    let mut medians: Vec<(String, f64)> = Vec::new();
    for t in &traces.traces {
        let rows: Vec<(f64, Option<f64>)> = t
            .t_ms
            .iter()
            .copied()
            .zip(t.dispersion.iter().copied())
            .collect();
        let mut defined: Vec<f64> = rows.iter().filter_map(|r| r.1).collect();
        // A run of a pair keeps its (empty) panel, so that the pair stays on its row.
        let in_pair = traces.paired
            && (traces.traces.iter())
                .filter(|u| u.candidate == t.candidate)
                .count()
                == 2;
        match median(&mut defined) {
            Some(m) => medians.push((t.label.clone(), m)),
            None if in_pair => {}
            None => continue,
        }
        // Thin each run of defined buckets, keeping its peaks.
        let runs = rows
            .split(|r| r.1.is_none())
            .filter(|run| !run.is_empty())
            .map(|run| {
                let pts: Vec<(f64, f64, f64)> =
                    run.iter().map(|r| (r.0, 0.0, r.1.unwrap_or(0.0))).collect();
                decimate_peaks(&pts, MAX_DRAWN_POINTS)
                    .into_iter()
                    .map(|p| (p.0, p.2))
                    .collect()
            })
            .collect();
        panels.push(Panel {
            name: t.label.clone(),
            color: t.candidate.color,
            runs,
        });
    }
    if medians.is_empty() {
        return None;
    }
    let paired = traces.paired;
    let title = "Re-synchronisation: how clumped retries arrive (dispersion over 1 s)".to_string();
    let mut guide = String::from(
        "Each panel is one run: the index of dispersion (variance / mean) of the retries reaching the server per bucket, \
         over the trailing second, on a log axis. Around 1 (dashed) retries arrive like independent random \
         clients; a value of D means they come in clumps of about D, a herd that has re-formed. \
         Gaps are seconds without any retry.",
    );
    if medians.len() > 1 {
        let mut sorted = medians.clone();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
        let (hi, lo) = (&sorted[0], &sorted[sorted.len() - 1]);
        if hi.1 > lo.1 * 1.5 {
            guide.push_str(&format!(
                " Here the median is {} ({}) against {} ({}).",
                fmt_number(hi.1),
                hi.0,
                fmt_number(lo.1),
                lo.0
            ));
        }
    }
    Some((
        title,
        guide,
        Resync {
            panels,
            paired,
            subtitle: super::subtitle(f, design, traces),
        },
    ))
}

impl Resync {
    /// The chart's height, px ([`style::run_chart_height`]).
    pub(crate) fn height(&self) -> u32 {
        style::run_chart_height(self.panels.len(), self.paired)
    }

    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let legend = vec![LegendItem::new(
            Swatch::Dashed(INK),
            "1 = independent random retries",
        )];
        let body = style::frame(root, title, Some(&self.subtitle), &legend)?;
        let points = || self.panels.iter().flat_map(|p| p.runs.iter().flatten());
        let t_max = points().map(|p| p.0).fold(0.0, f64::max).max(1.0);
        let unit = style::time_unit(t_max);
        let ty = |d: f64| d.max(FLOOR).log10();
        let y_min = FLOOR.log10();
        let y_max = ty(points().map(|p| p.1).fold(10.0, f64::max) * 1.5).ceil();
        let x_max = (t_max / unit.div).max(1e-9);
        let y_tick = |v: &f64| {
            if (v - v.round()).abs() < 1e-6 {
                style::tick(10f64.powi(v.round() as i32))
            } else {
                String::new()
            }
        };
        let n = self.panels.len();
        let areas = style::run_panels(&body, n, self.paired, "retry dispersion (log)")?;
        for (panel, (area, bottom, _)) in self.panels.iter().zip(areas) {
            let color = style::color(panel.color);
            let (_, h) = area.dim_in_pixel();
            // Every decade when they fit, else every other one.
            let decades = (y_max - y_min) as usize + 1;
            let labels = if decades <= style::y_labels_for(h) {
                decades
            } else {
                decades.div_ceil(2)
            };
            let mut chart = style::time_panel(
                &area,
                (&panel.name, style::text_color(panel.color)),
                bottom,
                (x_max, unit),
                style::YAxis {
                    range: y_min..y_max,
                    labels,
                    tick: &y_tick,
                },
            )?;
            chart.draw_series(DashedLineSeries::new(
                vec![(0.0, 0.0), (x_max, 0.0)],
                8,
                5,
                INK.stroke_width(2),
            ))?;
            for run in &panel.runs {
                super::check::data(|| {
                    chart.draw_series(LineSeries::new(
                        run.iter().map(|p| (p.0 / unit.div, ty(p.1))),
                        color.stroke_width(2),
                    ))
                })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Metric;
    use crate::output::results::Point;
    use crate::output::rows::{AggregateRow, TimeseriesRow};

    /// A folder without a sweep whose time series gives each strategy these dispersions, one
    /// per 100 ms bucket (`None`: no retry in the trailing second).
    fn folder(series: &[(&str, &[Option<f64>])]) -> ResultFolder {
        let timeseries = series
            .iter()
            .flat_map(|(name, values)| {
                values.iter().enumerate().map(|(i, d)| TimeseriesRow {
                    point: 0,
                    strategy: name.to_string(),
                    sweep: Vec::new(),
                    t_ms: i as f64 * 100.0,
                    arrivals: 0,
                    first_attempts: 0,
                    retries: 0,
                    successes: 0,
                    rejections: 0,
                    timeouts: 0,
                    in_system: 0,
                    retry_dispersion: *d,
                })
            })
            .collect();
        ResultFolder {
            sweep_keys: Vec::new(),
            strategies: series.iter().map(|(n, _)| n.to_string()).collect(),
            points: vec![Point {
                index: 0,
                values: Vec::new(),
            }],
            aggregate: series
                .iter()
                .map(|(name, _)| AggregateRow {
                    point: 0,
                    strategy: name.to_string(),
                    sweep: Vec::new(),
                    metric: Metric::Requests,
                    mean: Some(1.0),
                    sd: None,
                    ci95_low: None,
                    ci95_high: None,
                    n: 1,
                })
                .collect(),
            timeseries,
            ..ResultFolder::empty("resync-test")
        }
    }

    fn chart_of(f: &ResultFolder) -> Option<(String, String, Resync)> {
        let design = Design::of(f);
        let traces = super::super::series::select(f, &design)?;
        build(f, &design, &traces)
    }

    #[test]
    fn panels_split_at_gaps_and_the_guide_quotes_the_medians() {
        let f = folder(&[
            ("quiet", &[None, None]),
            ("herd", &[Some(500.0), Some(800.0), None, Some(600.0)]),
            ("calm", &[Some(1.0), Some(1.25), Some(0.5)]),
        ]);
        let (title, guide, chart) = chart_of(&f).unwrap();
        assert!(title.starts_with("Re-synchronisation"), "{title}");
        let names: Vec<&str> = chart.panels.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["herd", "calm"],
            "a strategy without retries has no panel"
        );
        // Colours follow the strategy's place, the panel's runs the gaps in its series.
        assert_eq!(chart.panels[0].color, 1);
        assert_eq!(
            chart.panels[0].runs,
            vec![vec![(0.0, 500.0), (100.0, 800.0)], vec![(300.0, 600.0)]]
        );
        assert!(
            guide.contains("the median is 600 (herd) against 1 (calm)"),
            "{guide}"
        );
        super::style::ensure_fonts();
        let mut svg = String::new();
        {
            let backend = SVGBackend::with_string(&mut svg, (1200, 700));
            let root = super::super::canvas::Canvas::new(backend, false).into_drawing_area();
            chart.draw(&root, &title).unwrap();
            root.present().unwrap();
        }
        for name in ["herd", "calm"] {
            assert!(
                svg.contains(&format!("\n{name}\n</text>")),
                "{name} not drawn"
            );
        }
        assert!(chart_of(&folder(&[("quiet", &[None])])).is_none());
    }
}
