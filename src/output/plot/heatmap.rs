//! Heatmaps for a two-key sweep: one panel per strategy, the first key across, the second key
//! up, each cell coloured by a metric's mean on one shared (viridis) scale, with the value
//! printed in the cell. The phase maps ([`super::phase`]) are heatmaps too, with a fixed scale
//! and hatched "stuck" cells.

use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, DrawResult, INK};
use crate::metric::Metric;
use crate::output::results::ResultFolder;

/// The metrics drawn as heatmaps, when present.
pub(crate) const HEATMAP_METRICS: [Metric; 2] = [Metric::LatencyP99Ms, Metric::Amplification];

pub(crate) struct Heatmap {
    metric: Metric,
    keys: [String; 2],
    x_values: Vec<String>,
    y_values: Vec<String>,
    panels: Vec<Panel>,
    /// A fixed colour scale (a share: 0 to 1); `None`: the data's range over all panels.
    range: Option<(f64, f64)>,
}

/// One cell of a panel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cell {
    /// The metric's mean there.
    Value(f64),
    /// No value (for latency: no request succeeded there).
    Missing,
    /// No value because no run there recovered (a phase map's time to recover): hatched.
    Stuck,
}

/// One strategy: (name, colour index, cells[x][y]).
pub(crate) type Panel = (String, usize, Vec<Vec<Cell>>);

/// The two sweep keys and their values in order of appearance, or `None` unless the sweep
/// has exactly two keys.
pub(crate) fn axes(f: &ResultFolder) -> Option<([String; 2], Vec<String>, Vec<String>)> {
    if f.sweep_keys.len() != 2 {
        return None;
    }
    let x_values = distinct(f.points.iter().map(|p| p.values[0].clone()));
    let y_values = distinct(f.points.iter().map(|p| p.values[1].clone()));
    let keys = [f.sweep_keys[0].clone(), f.sweep_keys[1].clone()];
    Some((keys, x_values, y_values))
}

/// One panel per strategy with at least one value, each cell filled by `cell(point, strategy)`
/// at the place of the point's two sweep values.
pub(crate) fn panels(
    f: &ResultFolder,
    x_values: &[String],
    y_values: &[String],
    cell: impl Fn(u32, &str) -> Cell,
) -> Vec<Panel> {
    let mut panels = Vec::new();
    for (i, s) in f.strategies.iter().enumerate() {
        let mut cells = vec![vec![Cell::Missing; y_values.len()]; x_values.len()];
        for p in &f.points {
            let xi = x_values
                .iter()
                .position(|v| *v == p.values[0])
                .expect("x value listed");
            let yi = y_values
                .iter()
                .position(|v| *v == p.values[1])
                .expect("y value listed");
            cells[xi][yi] = cell(p.index, s);
        }
        if cells.iter().flatten().any(|c| matches!(c, Cell::Value(_))) {
            panels.push((s.clone(), i, cells));
        }
    }
    panels
}

impl Heatmap {
    /// A heatmap of `metric` over the sweep `axes`, on a fixed colour scale `range` or else
    /// on the data's.
    pub(crate) fn new(
        metric: Metric,
        (keys, x_values, y_values): ([String; 2], Vec<String>, Vec<String>),
        panels: Vec<Panel>,
        range: Option<(f64, f64)>,
    ) -> Heatmap {
        Heatmap {
            metric,
            keys,
            x_values,
            y_values,
            panels,
            range,
        }
    }

    /// The cells of the strategy `name`, `[x][y]` (for tests).
    #[cfg(test)]
    pub(crate) fn cells(&self, name: &str) -> Option<&Vec<Vec<Cell>>> {
        self.panels.iter().find(|p| p.0 == name).map(|p| &p.2)
    }
}

fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

pub(crate) fn build(f: &ResultFolder) -> Vec<(Metric, String, String, Heatmap)> {
    let Some(axes) = axes(f) else {
        return Vec::new();
    };
    let (keys, x_values, y_values) = axes.clone();
    let mut out = Vec::new();
    for metric in HEATMAP_METRICS {
        let panels = panels(f, &x_values, &y_values, |point, s| {
            f.aggregate_of(point, s, metric)
                .and_then(|r| r.mean)
                .map_or(Cell::Missing, Cell::Value)
        });
        if panels.is_empty() {
            continue;
        }
        let label = metric.label();
        let title = format!(
            "{} by {} and {}, per strategy",
            style::capitalize(label),
            keys[0],
            keys[1]
        );
        let guide = format!(
            "Each panel is one strategy; {} runs across and {} up, and each cell shows the mean {label} at that point, \
             on one colour scale shared by all panels (dark = low, yellow = high); \
             a grey cell has no value (for latency: no request succeeded there). \
             Compare panels cell by cell to see which strategy wins where, and look along a row or column for the setting \
             beyond which {label} takes off.",
            keys[0], keys[1]
        );
        out.push((
            metric,
            title,
            guide,
            Heatmap::new(metric, axes.clone(), panels, None),
        ));
    }
    out
}

/// Viridis at `t` in 0..1 (interpolated between 9 anchors): perceptually uniform and
/// colour-blind safe.
pub(crate) fn viridis(t: f64) -> RGBColor {
    const ANCHORS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 45, 123),
        (59, 82, 139),
        (44, 114, 142),
        (33, 145, 140),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (ANCHORS.len() - 1) as f64;
    let i = (x.floor() as usize).min(ANCHORS.len() - 2);
    let u = x - i as f64;
    let (a, b) = (ANCHORS[i], ANCHORS[i + 1]);
    let mix = |p: u8, q: u8| (p as f64 + (q as f64 - p as f64) * u).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// 45° hatching lines (bottom-left to top-right) every `step` px, clipped to the pixel
/// rectangle from `(x0, y0)` (top left) to `(x1, y1)` (bottom right).
fn hatch((x0, y0): (i32, i32), (x1, y1): (i32, i32), step: usize) -> Vec<[(i32, i32); 2]> {
    let (w, h) = (x1 - x0, y1 - y0);
    // Line d runs through (x0 + d, y1) upwards to the right: x - x0 - d = y1 - y.
    (-h..w)
        .step_by(step)
        .skip(1)
        .map(|d| {
            let start = if d < 0 { (x0, y1 + d) } else { (x0 + d, y1) };
            let end = if d + h > w {
                (x1, y1 - (w - d))
            } else {
                (x0 + d + h, y0)
            };
            [start, end]
        })
        .collect()
}

impl Heatmap {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let body = style::frame(root, title, None, &[])?;
        let values: Vec<f64> = self
            .panels
            .iter()
            .flat_map(|p| p.2.iter().flatten())
            .filter_map(|c| match c {
                Cell::Value(v) => Some(*v),
                _ => None,
            })
            .collect();
        let (lo, hi) = self.range.unwrap_or_else(|| {
            (
                values.iter().copied().fold(f64::INFINITY, f64::min),
                values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        });
        let log = self.range.is_none() && lo > 0.0 && hi / lo > 20.0;
        let scale = |v: f64| -> f64 {
            if hi <= lo {
                0.5
            } else if log {
                (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
            } else {
                (v - lo) / (hi - lo)
            }
        };
        let (w, _) = body.dim_in_pixel();
        let (plots, bar) = body.split_horizontally(w as i32 - 120);
        let n_panels = self.panels.len();
        let areas = style::panels(
            &plots.margin(0, 10, 10, 10),
            n_panels,
            style::grid_wide(n_panels),
        );
        let nx = self.x_values.len() as i32;
        let ny = self.y_values.len() as i32;
        let cell_text =
            (if self.panels.len() > 4 { 13.0 } else { 15.0 }) - (nx.max(ny) as f64 / 4.0).min(3.0);
        for ((name, c, cells), (area, bottom, left)) in self.panels.iter().zip(areas) {
            let xv = self.x_values.clone();
            let yv = self.y_values.clone();
            let mut chart = ChartBuilder::on(&area)
                .caption(name, style::text(18.0, &style::color(*c)))
                .margin(6)
                .x_label_area_size(if bottom { 46 } else { 26 })
                .y_label_area_size(if left { 84 } else { 60 })
                // i32 ranges are inclusive once segmented: 0..n-1 gives exactly n cells.
                .build_cartesian_2d((0..nx - 1).into_segmented(), (0..ny - 1).into_segmented())?;
            // Narrow cells (many points, many panels): every k-th x label, and no values
            // printed where they would not fit.
            let cell_w = {
                let at = |i| chart.backend_coord(&(SegmentValue::Exact(i), SegmentValue::Exact(0)));
                (at(1).0 - at(0).0).max(1)
            };
            let width = |t: &str, size: f64| {
                area.estimate_text_size(t, &style::text(size, &INK))
                    .map_or(i32::MAX, |(w, _)| w as i32)
            };
            let widest = xv
                .iter()
                .map(|v| width(v, style::TICK_SIZE))
                .max()
                .unwrap_or(0);
            let stride = ((widest + 8 + cell_w - 1) / cell_w).max(1);
            let print_values =
                self.panels
                    .iter()
                    .flat_map(|p| p.2.iter().flatten())
                    .all(|c| match c {
                        Cell::Value(v) => {
                            width(&style::fmt_metric(self.metric, *v), cell_text) <= cell_w - 4
                        }
                        _ => width("no data", cell_text) <= cell_w - 4,
                    });
            let seg = |v: &SegmentValue<i32>, labels: &[String], stride: i32| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) if i % stride == 0 => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                _ => String::new(),
            };
            let x_fmt = |v: &SegmentValue<i32>| seg(v, &xv, stride);
            let y_fmt = |v: &SegmentValue<i32>| seg(v, &yv, 1);
            let mut mesh = chart.configure_mesh();
            mesh.disable_mesh()
                .axis_style(INK.mix(0.6))
                .label_style(style::text(style::TICK_SIZE, &INK))
                .axis_desc_style(style::text(style::DESC_SIZE, &INK))
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt);
            if bottom {
                mesh.x_desc(self.keys[0].clone());
            }
            if left {
                mesh.y_desc(self.keys[1].clone());
            }
            mesh.draw()?;
            for (xi, column) in cells.iter().enumerate() {
                for (yi, cell) in column.iter().enumerate() {
                    let (xi, yi) = (xi as i32, yi as i32);
                    let corners = || {
                        [
                            (SegmentValue::Exact(xi), SegmentValue::Exact(yi)),
                            (SegmentValue::Exact(xi + 1), SegmentValue::Exact(yi + 1)),
                        ]
                    };
                    match cell {
                        Cell::Value(v) => {
                            let t = scale(*v);
                            let fill = viridis(t);
                            chart.draw_series(std::iter::once(Rectangle::new(
                                corners(),
                                fill.filled(),
                            )))?;
                            let ink = if t > 0.6 { BLACK } else { WHITE };
                            if print_values {
                                chart.draw_series(std::iter::once(Text::new(
                                    style::fmt_metric(self.metric, *v),
                                    (SegmentValue::CenterOf(xi), SegmentValue::CenterOf(yi)),
                                    style::text(cell_text, &ink)
                                        .pos(Pos::new(HPos::Center, VPos::Center)),
                                )))?;
                            }
                        }
                        Cell::Missing | Cell::Stuck => {
                            let stuck = *cell == Cell::Stuck;
                            chart.draw_series(std::iter::once(Rectangle::new(
                                corners(),
                                INK.mix(if stuck { 0.18 } else { 0.08 }).filled(),
                            )))?;
                            if stuck {
                                // Hatching: stuck reads apart from "no data" without colour.
                                let area = chart.plotting_area().strip_coord_spec();
                                let (bx, by) = area.get_base_pixel();
                                let (ax, ay) = chart.backend_coord(&corners()[0]);
                                let (cx, cy) = chart.backend_coord(&corners()[1]);
                                for line in hatch(
                                    (ax.min(cx) - bx, ay.min(cy) - by),
                                    (ax.max(cx) - bx, ay.max(cy) - by),
                                    12,
                                ) {
                                    area.draw(&PathElement::new(
                                        line.to_vec(),
                                        INK.mix(0.45).stroke_width(1),
                                    ))?;
                                }
                            }
                            let label = match (stuck, print_values) {
                                (_, false) => "",
                                (true, true) => "stuck",
                                (false, true) => "no data",
                            };
                            chart.draw_series(std::iter::once(Text::new(
                                label,
                                (SegmentValue::CenterOf(xi), SegmentValue::CenterOf(yi)),
                                style::text(cell_text, &style::MUTED)
                                    .pos(Pos::new(HPos::Center, VPos::Center)),
                            )))?;
                        }
                    }
                    chart.draw_series(std::iter::once(Rectangle::new(
                        corners(),
                        WHITE.stroke_width(2),
                    )))?;
                }
            }
        }
        self.draw_colour_bar(&bar, lo, hi, log)
    }

    fn draw_colour_bar<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        lo: f64,
        hi: f64,
        log: bool,
    ) -> DrawResult {
        let (_, h) = area.dim_in_pixel();
        let (top, bottom) = (50i32, h as i32 - 70);
        let (x0, x1) = (14i32, 38i32);
        let steps = 64;
        for s in 0..steps {
            let t0 = s as f64 / steps as f64;
            let y_a = bottom - ((bottom - top) as f64 * t0) as i32;
            let y_b = bottom - ((bottom - top) as f64 * (s + 1) as f64 / steps as f64) as i32;
            area.draw(&Rectangle::new(
                [(x0, y_b), (x1, y_a)],
                viridis(t0 + 0.5 / steps as f64).filled(),
            ))?;
        }
        let label = self.metric.label();
        area.draw(&Text::new(
            label.split(" (").next().unwrap_or_default().to_string(),
            (4, top - 30),
            style::text(14.0, &INK).pos(Pos::new(HPos::Left, VPos::Bottom)),
        ))?;
        for k in 0..=4 {
            let t = k as f64 / 4.0;
            let v = if hi <= lo {
                lo
            } else if log {
                (lo.ln() + t * (hi.ln() - lo.ln())).exp()
            } else {
                lo + t * (hi - lo)
            };
            let y = bottom - ((bottom - top) as f64 * t) as i32;
            area.draw(&PathElement::new(
                vec![(x1, y), (x1 + 5, y)],
                INK.stroke_width(1),
            ))?;
            area.draw(&Text::new(
                style::fmt_metric(self.metric, v),
                (x1 + 8, y),
                style::text(13.0, &INK).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        if log {
            area.draw(&Text::new(
                "log scale",
                (4, bottom + 22),
                style::text(13.0, &style::MUTED).pos(Pos::new(HPos::Left, VPos::Top)),
            ))?;
        }
        let stuck = self
            .panels
            .iter()
            .any(|p| p.2.iter().flatten().any(|c| *c == Cell::Stuck));
        if stuck {
            let (y0, y1) = (bottom + 22, bottom + 46);
            area.draw(&Rectangle::new(
                [(x0, y0), (x1, y1)],
                INK.mix(0.18).filled(),
            ))?;
            for line in hatch((x0, y0), (x1, y1), 8) {
                area.draw(&PathElement::new(
                    line.to_vec(),
                    INK.mix(0.45).stroke_width(1),
                ))?;
            }
            area.draw(&Text::new(
                "stuck",
                (x1 + 8, (y0 + y1) / 2),
                style::text(13.0, &INK).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        Ok(())
    }
}
