//! Heatmaps for a two-key sweep: one panel per strategy, the first key across, the second key
//! up, each cell coloured by a metric's mean on one shared (viridis) scale, with the value
//! printed in the cell. The phase maps ([`super::phase`]) are heatmaps too, with a fixed scale
//! and hatched "stuck" cells. The scale spans every cell with a value; a cell below the
//! success target keeps its colour and carries a ring.

use plotters::coord::Shift;
use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, DrawResult, INK};
use crate::metric::{Better, Metric};
use crate::output::design::{Candidate, Design};
use crate::output::labels;
use crate::output::results::{Point, ResultFolder, fmt_number};

/// The metrics drawn as heatmaps, when present (success only where some cell misses the
/// success target; the others mark those cells).
pub(crate) const HEATMAP_METRICS: [Metric; 3] = [
    Metric::LatencyP99Ms,
    Metric::Amplification,
    Metric::SuccessRate,
];

pub(crate) struct Heatmap {
    metric: Metric,
    keys: [String; 2],
    x_values: Vec<String>,
    y_values: Vec<String>,
    panels: Vec<Panel>,
    /// A fixed colour scale (a share: 0 to 1); `None`: the data's range over all panels.
    range: Option<(f64, f64)>,
    /// The success target, for the legend of the cells marked below it.
    target: f64,
    /// The server's useful capacity in requests per second, for an axis of offered load.
    pub(crate) capacity_rps: Option<f64>,
    /// How the sweep keys read: a `poisson_clients` workload's rate is shown in total.
    pub(crate) reading: labels::Reading,
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

/// One strategy's panel.
#[derive(Debug, Clone)]
pub(crate) struct Panel {
    pub name: String,
    pub color: usize,
    /// `cells[x][y]`.
    pub cells: Vec<Vec<Cell>>,
    /// `below[x][y]`: the strategy's success rate there is below the success target.
    pub below: Vec<Vec<bool>>,
    /// `marks[x][y]`: a phase map's verdict marks (none on other heat maps).
    pub marks: Vec<Vec<Marks>>,
}

/// What a phase map's cell carries besides its colour, as marks in its bottom corners.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Marks {
    /// Some run there oscillates between served and collapsed: a zigzag, top left.
    pub oscillating: bool,
    /// Most runs there did not serve the offered load before the trigger: a triangle,
    /// bottom left.
    pub degraded: bool,
}

/// The cell `(x, y)` of a point in the grid of `x_values` × `y_values`.
pub(crate) fn position(x_values: &[String], y_values: &[String], p: &Point) -> (usize, usize) {
    let at = |values: &[String], v: &String| values.iter().position(|w| w == v);
    (
        at(x_values, &p.values[0]).expect("x value listed"),
        at(y_values, &p.values[1]).expect("y value listed"),
    )
}

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
/// at the place of the point's two sweep values and marked where the strategy misses the
/// success target there.
pub(crate) fn panels(
    f: &ResultFolder,
    design: &Design,
    x_values: &[String],
    y_values: &[String],
    cell: impl Fn(u32, &str) -> Cell,
) -> Vec<Panel> {
    let mut panels = Vec::new();
    let slots = crate::output::palette::slots(&f.strategies);
    for (&i, s) in slots.iter().zip(&f.strategies) {
        let mut cells = vec![vec![Cell::Missing; y_values.len()]; x_values.len()];
        let mut below = vec![vec![false; y_values.len()]; x_values.len()];
        for p in &f.points {
            let (xi, yi) = position(x_values, y_values, p);
            cells[xi][yi] = cell(p.index, s);
            let c = Candidate {
                point: p.index,
                strategy: s.clone(),
                color: i,
            };
            below[xi][yi] =
                Design::mean(f, &c, Metric::SuccessRate).is_finite() && !design.meets_target(f, &c);
        }
        if cells.iter().flatten().any(|c| matches!(c, Cell::Value(_))) {
            panels.push(Panel {
                name: s.clone(),
                color: i,
                marks: vec![vec![Marks::default(); y_values.len()]; x_values.len()],
                cells,
                below,
            });
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
        target: f64,
    ) -> Heatmap {
        Heatmap {
            metric,
            keys,
            x_values,
            y_values,
            panels,
            range,
            target,
            capacity_rps: None,
            reading: labels::Reading::Plain,
        }
    }

    /// The cells of the strategy `name`, `[x][y]` (for tests).
    #[cfg(test)]
    pub(crate) fn cells(&self, name: &str) -> Option<&Vec<Vec<Cell>>> {
        self.panels
            .iter()
            .find(|p| p.name == name)
            .map(|p| &p.cells)
    }

    /// A cell's value as printed in it; a success rate with the digits that keep it on its
    /// side of the target.
    fn value_text(&self, v: f64) -> String {
        match self.metric {
            Metric::SuccessRate => crate::output::labels::percent_near(v, self.target),
            _ => style::fmt_metric(self.metric, v),
        }
    }

    /// True when lower values are better (latency, load): the colour scale is turned round
    /// so that better is the bright end in every heat map.
    fn lower_is_better(&self) -> bool {
        self.metric.better() == Better::Lower
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

pub(crate) fn build(f: &ResultFolder, design: &Design) -> Vec<(Metric, String, String, Heatmap)> {
    let Some(axes) = axes(f) else {
        return Vec::new();
    };
    let (keys, x_values, y_values) = axes.clone();
    let reading = labels::Reading::of(f);
    let [x, y] = [reading.key(&keys[0]).0, reading.key(&keys[1]).0];
    let mut out = Vec::new();
    for metric in HEATMAP_METRICS.map(|m| f.as_load(m)) {
        let panels = panels(f, design, &x_values, &y_values, |point, s| {
            f.aggregate_of(point, s, metric)
                .and_then(|r| r.mean)
                .map_or(Cell::Missing, Cell::Value)
        });
        if panels.is_empty() {
            continue;
        }
        let any_below = panels.iter().any(|p| p.below.iter().flatten().any(|b| *b));
        if metric == Metric::SuccessRate && !any_below {
            continue; // every cell meets the target: a map of 100 % says nothing
        }
        let label = metric.label();
        let title = format!("{} by {x} and {y}, per strategy", style::capitalize(label));
        let (better, worse) = if metric.better() == Better::Lower {
            ("low", "high")
        } else {
            ("high", "low")
        };
        let mut guide = format!(
            "Each panel is one strategy; {x} runs across and {y} up, and each cell shows the mean {label} at that point, \
             on one colour scale shared by all panels. In every heat map and phase map the bright (yellow) end is the better one: \
             here {better} {label} is yellow and {worse} is dark. A grey cell has no value (for latency: no request succeeded there). "
        );
        if any_below {
            guide.push_str(&format!(
                "A ring in a cell's corner marks a strategy below the {} success target there{}. ",
                super::dist::pct(design.target),
                if metric == Metric::SuccessRate {
                    ""
                } else {
                    "; such a cell keeps its colour on the shared scale, and the ring says that it may look cheap only by dropping requests"
                }
            ));
        }
        guide.push_str(&format!(
            "Compare panels cell by cell to see which strategy wins where, and look along a row or column for the setting beyond which {label} {}.",
            match metric.better() {
                crate::metric::Better::Higher => "falls away",
                _ => "takes off",
            }
        ));
        let range = (metric == Metric::SuccessRate).then_some((0.0, 1.0));
        let mut map = Heatmap::new(metric, axes.clone(), panels, range, design.target);
        map.capacity_rps = f.info(0).and_then(|i| i.capacity_rps.as_ref()).map(|c| c.0);
        map.reading = labels::Reading::of(f);
        out.push((metric, title, guide, map));
    }
    out
}

/// A heat map panel's chart: segmented integer axes, one segment per sweep value.
type Grid<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<
        plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordi32>,
        plotters::coord::ranged1d::SegmentedCoord<plotters::coord::types::RangedCoordi32>,
    >,
>;

/// How the cells of a panel are drawn: the colour scale (0 worse, 1 better), whether values
/// are printed, and the radius of the below-target ring.
struct CellLook<'a> {
    scale: &'a dyn Fn(f64) -> f64,
    print_values: bool,
    ring: i32,
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
        // The colour scale spans every cell that has a value; a cell below the success
        // target keeps its colour and carries a ring.
        let values = self.values();
        let (lo, hi) = self.range.unwrap_or_else(|| {
            (
                values.iter().copied().fold(f64::INFINITY, f64::min),
                values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        });
        let log = self.range.is_none() && lo > 0.0 && hi / lo > 20.0;
        let turned = self.lower_is_better();
        // 0 at the worse end, 1 at the better (bright) end.
        let scale = |v: f64| -> f64 {
            let t = if hi <= lo {
                0.5
            } else if log {
                (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
            } else {
                (v - lo) / (hi - lo)
            };
            if turned { 1.0 - t } else { t }
        };
        let (w, _) = body.dim_in_pixel();
        let (plots, bar) = body.split_horizontally(w as i32 - 150);
        let n_panels = self.panels.len();
        let grid = style::grid_wide(n_panels);
        let (y_desc, x_desc) = (self.axis_name(1), self.axis_name(0));
        let areas = style::panels_with(
            &plots.margin(0, 6, 6, 6),
            n_panels,
            grid,
            Some(&y_desc),
            Some(&x_desc),
        )?;
        let x_labels: Vec<String> = (self.x_values.iter())
            .map(|v| self.reading.value(&self.keys[0], v))
            .collect();
        let y_labels: Vec<String> = (self.y_values.iter())
            .map(|v| self.reading.value(&self.keys[1], v))
            .collect();
        let any_below = (self.panels.iter()).any(|p| p.below.iter().flatten().any(|b| *b));
        for (panel, (area, bottom, _)) in self.panels.iter().zip(areas) {
            self.draw_panel(&area, panel, bottom, (&x_labels, &y_labels), &scale)?;
        }
        let ticks = self.ticks((lo, hi), log);
        super::check::scale(title, (lo, hi), &values, &ticks);
        self.draw_colour_bar(&bar, &ticks, any_below, log)
    }

    /// The value of every cell that has one, in every panel.
    fn values(&self) -> Vec<f64> {
        (self.panels.iter())
            .flat_map(|p| p.cells.iter().flatten())
            .filter_map(|c| match c {
                Cell::Value(v) => Some(*v),
                _ => None,
            })
            .collect()
    }

    /// The colour bar's ticks `(height on the bar 0..1 from the worse end, label)`: five, or
    /// the most of four, three, two that print no label twice (a narrow range), or one.
    fn ticks(&self, (lo, hi): (f64, f64), log: bool) -> Vec<(f64, String)> {
        let turned = self.lower_is_better();
        // Times in one unit along the bar, the one its top calls for (never `500 ms` beside
        // `1.5 s`).
        let unit =
            (self.metric.unit() == crate::metric::Unit::Millis).then(|| style::time_unit(hi));
        let label = |v: f64| match unit {
            Some(u) => format!("{} {}", fmt_number(v / u.div), u.name),
            None => style::fmt_metric(self.metric, v),
        };
        let at = |t: f64| {
            // The value at the height t of the bar (t = 1: the better end).
            let u = if turned { 1.0 - t } else { t };
            let v = if log {
                (lo.ln() + u * (hi.ln() - lo.ln())).exp()
            } else {
                lo + u * (hi - lo)
            };
            (t, label(v))
        };
        if hi <= lo {
            return vec![(0.5, label(lo))];
        }
        for steps in [4u32, 3, 2, 1] {
            let ticks: Vec<(f64, String)> = (0..=steps)
                .map(|k| at(f64::from(k) / f64::from(steps)))
                .collect();
            let mut labels: Vec<&String> = ticks.iter().map(|t| &t.1).collect();
            labels.sort();
            labels.dedup();
            if labels.len() == ticks.len() {
                return ticks;
            }
        }
        vec![at(1.0)]
    }

    /// The name of sweep key `i` with its unit, for an axis.
    fn axis_name(&self, i: usize) -> String {
        let (name, kind) = self.reading.key(&self.keys[i]);
        // A poisson_clients rate is shown in total: the load the capacity faces.
        let per = match self.reading {
            labels::Reading::PerClient(n) if self.reading.factor(&self.keys[i]) != 1.0 => {
                format!(", {n} clients")
            }
            _ => String::new(),
        };
        match (kind, self.capacity_rps) {
            (labels::Kind::Rate, Some(rps)) => {
                format!("{name} (requests/s{per}; capacity ≈ {}/s)", fmt_number(rps))
            }
            (labels::Kind::Rate, None) => format!("{name} (requests/s{per})"),
            _ => name,
        }
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
        bottom: bool,
        (xv, yv): (&[String], &[String]),
        scale: &dyn Fn(f64) -> f64,
    ) -> DrawResult {
        let nx = self.x_values.len() as i32;
        let ny = self.y_values.len() as i32;
        let width = |t: &str, size: f64| super::text::size_of(t, size).0 as i32;
        let widest_y = yv
            .iter()
            .map(|v| width(v, style::TICK_SIZE))
            .max()
            .unwrap_or(0);
        let mut chart = ChartBuilder::on(area)
            .caption(
                &panel.name,
                style::text(style::CAPTION_SIZE, &style::text_color(panel.color)),
            )
            .margin(6)
            .margin_right(10)
            .x_label_area_size(if bottom { 30 } else { 28 })
            .y_label_area_size(widest_y + 16)
            // i32 ranges are inclusive once segmented: 0..n-1 gives exactly n cells.
            .build_cartesian_2d((0..nx - 1).into_segmented(), (0..ny - 1).into_segmented())?;
        // Narrow cells (many points, many panels): every k-th x label, and no values printed
        // where they would not fit.
        let (cell_w, cell_h) = {
            let at = |i, j| chart.backend_coord(&(SegmentValue::Exact(i), SegmentValue::Exact(j)));
            (
                (at(1, 0).0 - at(0, 0).0).max(1),
                (at(0, 0).1 - at(0, 1).1).max(1),
            )
        };
        let widest = xv
            .iter()
            .map(|v| width(v, style::TICK_SIZE))
            .max()
            .unwrap_or(0);
        // Labels 6 px apart at least: every column of the phase map keeps its load.
        let stride = ((widest + 6 + cell_w - 1) / cell_w).max(1);
        let y_stride = ((24 + cell_h - 1) / cell_h).max(1);
        let cell_text = style::MIN_SIZE;
        let print_values = cell_h >= 22
            && (self.panels.iter())
                .flat_map(|p| p.cells.iter().flatten())
                .all(|c| match c {
                    Cell::Value(v) => width(&self.value_text(*v), cell_text) <= cell_w - 6,
                    _ => width("no data", cell_text) <= cell_w - 6,
                });
        let seg = |v: &SegmentValue<i32>, labels: &[String], stride: i32| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) if i % stride == 0 => {
                labels.get(*i as usize).cloned().unwrap_or_default()
            }
            _ => String::new(),
        };
        let x_fmt = |v: &SegmentValue<i32>| seg(v, xv, stride);
        let y_fmt = |v: &SegmentValue<i32>| seg(v, yv, y_stride);
        let mut mesh = chart.configure_mesh();
        mesh.disable_mesh()
            .axis_style(INK.mix(0.6))
            .label_style(style::text(style::TICK_SIZE, &INK))
            .axis_desc_style(style::text(style::DESC_SIZE, &INK))
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt);
        mesh.draw()?;
        style::declare(&chart, &panel.name, false);
        let look = CellLook {
            scale,
            print_values,
            ring: (cell_w.min(cell_h) / 6).clamp(3, 7),
        };
        for (xi, column) in panel.cells.iter().enumerate() {
            for (yi, cell) in column.iter().enumerate() {
                let below = panel.below[xi][yi];
                self.draw_cell(&mut chart, (xi as i32, yi as i32), *cell, below, &look)?;
                self.draw_verdict_marks(
                    &chart,
                    (xi as i32, yi as i32),
                    panel.marks[xi][yi],
                    &look,
                )?;
            }
        }
        Ok(())
    }

    /// One cell: its colour (or grey, hatched when stuck), its value when values fit, a
    /// white border, and a ring in its top right corner when it is below the success target.
    fn draw_cell<DB: DrawingBackend>(
        &self,
        chart: &mut Grid<'_, DB>,
        (xi, yi): (i32, i32),
        cell: Cell,
        below: bool,
        look: &CellLook<'_>,
    ) -> DrawResult {
        let corners = [
            (SegmentValue::Exact(xi), SegmentValue::Exact(yi)),
            (SegmentValue::Exact(xi + 1), SegmentValue::Exact(yi + 1)),
        ];
        let centre = (SegmentValue::CenterOf(xi), SegmentValue::CenterOf(yi));
        let centred = Pos::new(HPos::Center, VPos::Center);
        let (fill, text) = match cell {
            Cell::Value(v) => {
                let t = (look.scale)(v);
                let ink = if t > 0.6 { BLACK } else { WHITE };
                let value = self.value_text(v);
                (viridis(t).to_rgba(), (value, ink))
            }
            Cell::Stuck => (INK.mix(0.18), ("stuck".to_string(), style::MUTED)),
            Cell::Missing => (INK.mix(0.08), ("no data".to_string(), style::MUTED)),
        };
        super::check::data(|| {
            chart.draw_series(std::iter::once(Rectangle::new(
                corners.clone(),
                fill.filled(),
            )))
        })?;
        let plot = chart.plotting_area().strip_coord_spec();
        let (bx, by) = plot.get_base_pixel();
        let (ax, ay) = chart.backend_coord(&corners[0]);
        let (cx, cy) = chart.backend_coord(&corners[1]);
        if cell == Cell::Stuck {
            // Hatching: stuck reads apart from "no data" without colour.
            let (top_left, bottom_right) = (
                (ax.min(cx) - bx, ay.min(cy) - by),
                (ax.max(cx) - bx, ay.max(cy) - by),
            );
            for line in hatch(top_left, bottom_right, 12) {
                plot.draw(&PathElement::new(
                    line.to_vec(),
                    INK.mix(0.45).stroke_width(1),
                ))?;
            }
        }
        if look.print_values {
            let style = style::text(style::MIN_SIZE, &text.1).pos(centred);
            chart.draw_series(std::iter::once(Text::new(text.0, centre, style)))?;
        }
        chart.draw_series(std::iter::once(Rectangle::new(
            corners,
            WHITE.stroke_width(2),
        )))?;
        if below {
            let r = look.ring;
            let at = (ax.max(cx) - bx - r - 4, ay.min(cy) - by + r + 4);
            plot.draw(&Circle::new(at, r as u32, WHITE.filled()))?;
            plot.draw(&Circle::new(at, r as u32, BLACK.stroke_width(2)))?;
        }
        Ok(())
    }

    /// A phase map cell's marks (see [`Marks`]), in its bottom corners.
    fn draw_verdict_marks<DB: DrawingBackend>(
        &self,
        chart: &Grid<'_, DB>,
        (xi, yi): (i32, i32),
        marks: Marks,
        look: &CellLook<'_>,
    ) -> DrawResult {
        if marks == Marks::default() {
            return Ok(());
        }
        let plot = chart.plotting_area().strip_coord_spec();
        let (bx, by) = plot.get_base_pixel();
        let (ax, ay) = chart.backend_coord(&(SegmentValue::Exact(xi), SegmentValue::Exact(yi)));
        let (cx, cy) =
            chart.backend_coord(&(SegmentValue::Exact(xi + 1), SegmentValue::Exact(yi + 1)));
        let r = look.ring;
        // Inside the cell's white border: the triangle at the bottom left, the zigzag at the
        // top left (the below-target ring holds the top right).
        let left = ax.min(cx) - bx + 4;
        if marks.degraded {
            degraded_mark(&plot, (left, ay.max(cy) - by - 4), r)?;
        }
        if marks.oscillating {
            oscillating_mark(&plot, (left + 2, ay.min(cy) - by + r + 8), r)?;
        }
        Ok(())
    }

    fn draw_colour_bar<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        ticks: &[(f64, String)],
        any_below: bool,
        log: bool,
    ) -> DrawResult {
        let (_, h) = area.dim_in_pixel();
        // Room below the bar for the marks' keys: 68 px for each verdict mark shown.
        let verdict_keys = [|m: &Marks| m.degraded, |m: &Marks| m.oscillating]
            .iter()
            .filter(|of| (self.panels.iter()).any(|p| p.marks.iter().flatten().any(of)))
            .count() as i32;
        let (top, bottom) = (70i32, h as i32 - 110 - 68 * verdict_keys);
        let (x0, x1) = (12i32, 36i32);
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
        let small = |t: &str, at: (i32, i32), pos: Pos| {
            Text::new(
                t.to_string(),
                at,
                style::text(style::MIN_SIZE, &INK).pos(pos),
            )
        };
        let name = self.metric.label();
        let name = name.split(" (").next().unwrap_or_default();
        area.draw(&small(
            name,
            (4, top - 30),
            Pos::new(HPos::Left, VPos::Bottom),
        ))?;
        area.draw(&small(
            "better ↑",
            (4, top - 8),
            Pos::new(HPos::Left, VPos::Bottom),
        ))?;
        for (t, label) in ticks {
            let y = bottom - ((bottom - top) as f64 * t) as i32;
            area.draw(&PathElement::new(
                vec![(x1, y), (x1 + 5, y)],
                INK.stroke_width(1),
            ))?;
            area.draw(&small(
                label,
                (x1 + 8, y),
                Pos::new(HPos::Left, VPos::Center),
            ))?;
        }
        self.draw_marks(area, (x0, x1), bottom + 16, log, any_below)
    }

    /// Under the colour bar: "log scale", and the keys of the hatched (stuck) and the ringed
    /// (below the success target) cells, each where this map has one.
    fn draw_marks<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        (x0, x1): (i32, i32),
        mut y: i32,
        log: bool,
        any_below: bool,
    ) -> DrawResult {
        let small = |t: &str, at: (i32, i32), pos: Pos| {
            Text::new(
                t.to_string(),
                at,
                style::text(style::MIN_SIZE, &INK).pos(pos),
            )
        };
        if log {
            area.draw(&small("log scale", (4, y), Pos::new(HPos::Left, VPos::Top)))?;
            y += 26;
        }
        let stuck =
            (self.panels.iter()).any(|p| p.cells.iter().flatten().any(|c| *c == Cell::Stuck));
        if stuck {
            let (y0, y1) = (y, y + 20);
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
            area.draw(&small(
                "stuck",
                (x1 + 8, (y0 + y1) / 2),
                Pos::new(HPos::Left, VPos::Center),
            ))?;
            y += 28;
        }
        let any =
            |of: fn(&Marks) -> bool| (self.panels.iter()).any(|p| p.marks.iter().flatten().any(of));
        for (shown, draw, lines) in [
            (
                any(|m| m.degraded),
                degraded_mark::<DB> as MarkFn<DB>,
                &["degraded", "before", "(most runs)"][..],
            ),
            (
                any(|m| m.oscillating),
                oscillating_mark::<DB> as MarkFn<DB>,
                &["oscillating", "(some runs)"][..],
            ),
        ] {
            if shown {
                draw(area, (x0 + 2, y + 18), 6)?;
                for (i, line) in lines.iter().enumerate() {
                    let at = (x1 + 8, y + 10 + 20 * i as i32);
                    area.draw(&small(line, at, Pos::new(HPos::Left, VPos::Center)))?;
                }
                y += 8 + 20 * lines.len() as i32;
            }
        }
        if any_below {
            let at = ((x0 + x1) / 2, y + 10);
            area.draw(&Circle::new(at, 6, WHITE.filled()))?;
            area.draw(&Circle::new(at, 6, BLACK.stroke_width(2)))?;
            area.draw(&small(
                &format!("< {}", super::dist::pct(self.target)),
                (x1 + 8, y + 10),
                Pos::new(HPos::Left, VPos::Center),
            ))?;
            area.draw(&small(
                "success",
                (x1 + 8, y + 32),
                Pos::new(HPos::Left, VPos::Center),
            ))?;
        }
        Ok(())
    }
}

/// Draws a verdict mark of size `r` with its bottom left corner at `at`.
type MarkFn<DB> = fn(&DrawingArea<DB, Shift>, (i32, i32), i32) -> DrawResult;

/// Degraded before the trigger: a downward triangle, white with a dark outline.
fn degraded_mark<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    r: i32,
) -> DrawResult {
    let w = 2 * r + 2;
    let points = vec![(x, y - w), (x + w, y - w), (x + w / 2, y)];
    area.draw(&Polygon::new(points.clone(), WHITE.filled()))?;
    let mut outline = points;
    outline.push(outline[0]);
    area.draw(&PathElement::new(outline, BLACK.stroke_width(2)))?;
    Ok(())
}

/// Oscillating: a zigzag on a white backing.
fn oscillating_mark<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    r: i32,
) -> DrawResult {
    let (w, h) = (3 * r, r + 2);
    area.draw(&Rectangle::new(
        [(x - 2, y - h - 3), (x + w + 2, y + 1)],
        WHITE.filled(),
    ))?;
    let zigzag: Vec<(i32, i32)> = (0..=6)
        .map(|i| (x + i * w / 6, if i % 2 == 0 { y - 1 } else { y - h }))
        .collect();
    area.draw(&PathElement::new(zigzag, BLACK.stroke_width(2)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colour_bar_of_times_keeps_one_unit() {
        let keys = [
            "workload.rate".to_string(),
            "workload.spike.length".to_string(),
        ];
        let map = Heatmap::new(
            Metric::RecoveryMs,
            (keys, Vec::new(), Vec::new()),
            Vec::new(),
            None,
            0.99,
        );
        let ticks = map.ticks((500.0, 30_000.0), false);
        assert!(ticks.len() > 2, "{ticks:?}");
        assert!(ticks.iter().all(|t| t.1.ends_with(" s")), "{ticks:?}");
        // Below 2 s the bar is in ms throughout.
        let ticks = map.ticks((100.0, 1500.0), false);
        assert!(ticks.iter().all(|t| t.1.ends_with(" ms")), "{ticks:?}");
    }
}
