//! The re-synchronisation chart: the index of dispersion of retries over the trailing second
//! (`retry_dispersion` of `timeseries.csv`, see [`crate::sim::resync`]), one panel per
//! strategy on shared log axes, the level of independent random retries (1) dashed.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::herd::{MAX_POINTS, decimate_peaks};
use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, Swatch};
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
}

/// The median of `xs` (sorted in place), or `None` when empty.
fn median(xs: &mut [f64]) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    (!xs.is_empty()).then(|| xs[xs.len() / 2])
}

pub(crate) fn build(f: &ResultFolder) -> Option<(String, String, Resync)> {
    let point = f.first_point();
    let mut panels = Vec::new();
    let mut medians: Vec<(String, f64)> = Vec::new();
    for (i, s) in f.strategies.iter().enumerate() {
        let mut rows: Vec<(f64, Option<f64>)> = f
            .timeseries
            .iter()
            .filter(|r| r.point == point.index && &r.strategy == s)
            .map(|r| (r.t_ms, r.retry_dispersion))
            .collect();
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut defined: Vec<f64> = rows.iter().filter_map(|r| r.1).collect();
        let Some(m) = median(&mut defined) else {
            continue;
        };
        medians.push((s.clone(), m));
        // Thin each run of defined buckets, keeping its peaks.
        let runs = rows
            .split(|r| r.1.is_none())
            .filter(|run| !run.is_empty())
            .map(|run| {
                let pts: Vec<(f64, f64, f64)> =
                    run.iter().map(|r| (r.0, 0.0, r.1.unwrap_or(0.0))).collect();
                decimate_peaks(&pts, MAX_POINTS)
                    .into_iter()
                    .map(|p| (p.0, p.2))
                    .collect()
            })
            .collect();
        panels.push(Panel {
            name: s.clone(),
            color: i,
            runs,
        });
    }
    if panels.is_empty() {
        return None;
    }
    let mut title =
        "Re-synchronisation: how clumped retries arrive (dispersion over 1 s)".to_string();
    if !f.sweep_keys.is_empty() {
        title.push_str(&format!(
            " (point {}: {})",
            point.index,
            point.label(&f.sweep_keys)
        ));
    }
    let mut guide = String::from(
        "Each panel is one strategy: the index of dispersion (variance / mean) of the retries reaching the server per bucket, \
         over the trailing second, on a log axis (replication 0). Around 1 (dashed) retries arrive like independent random \
         clients; a value of D means they come in clumps of about D, a herd that has re-formed. \
         Gaps are seconds without any retry.",
    );
    if medians.len() > 1 {
        let mut sorted = medians.clone();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
        let (hi, lo) = (&sorted[0], &sorted[sorted.len() - 1]);
        guide.push_str(&format!(
            " Here the median is {} ({}) against {} ({}).",
            fmt_number(hi.1),
            hi.0,
            fmt_number(lo.1),
            lo.0
        ));
    }
    Some((title, guide, Resync { panels }))
}

impl Resync {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let legend = vec![LegendItem::new(
            Swatch::Dashed(INK),
            "1 = independent random retries",
        )];
        let body = style::frame(root, title, None, &legend)?;
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
        let areas = style::panels(&body.margin(0, 10, 10, 20), n, style::grid(n));
        for (panel, (area, bottom, left)) in self.panels.iter().zip(areas) {
            let color = style::color(panel.color);
            let mut chart = ChartBuilder::on(&area)
                .caption(&panel.name, style::text(18.0, &color))
                .margin(6)
                .x_label_area_size(if bottom { 44 } else { 26 })
                .y_label_area_size(if left { 78 } else { 62 })
                .build_cartesian_2d(0.0..x_max, y_min..y_max)?;
            let mut mesh = chart.configure_mesh();
            mesh.house_style()
                .x_labels(8)
                .y_labels((y_max - y_min) as usize + 1)
                .x_label_formatter(&|v| style::tick(*v))
                .y_label_formatter(&y_tick);
            if bottom {
                mesh.x_desc(format!("time ({})", unit.name));
            }
            if left {
                mesh.y_desc("retry dispersion (log)");
            }
            mesh.draw()?;
            chart.draw_series(DashedLineSeries::new(
                vec![(0.0, 0.0), (x_max, 0.0)],
                8,
                5,
                INK.stroke_width(2),
            ))?;
            for run in &panel.runs {
                chart.draw_series(LineSeries::new(
                    run.iter().map(|p| (p.0 / unit.div, ty(p.1))),
                    color.stroke_width(2),
                ))?;
            }
        }
        Ok(())
    }
}
