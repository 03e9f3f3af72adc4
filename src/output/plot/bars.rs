//! Grouped bars in small multiples: the charts of categories (`attempts`, `layers`, `load`
//! without a numeric sweep, `sweep_<metric>` of a categorical key). Each panel has groups
//! across (attempt numbers, layers, values of a key), one bar per series (a candidate) in its
//! strategy's colour, a 95 % interval where there is one, and a bar drawn hollow when its
//! candidate misses the success target.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, MUTED, Swatch};

/// One bar: a mean and its interval (equal to the mean without one); `hollow` for a
/// candidate below the success target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bar {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    pub hollow: bool,
}

impl Bar {
    /// A bar without an interval.
    pub(crate) fn exact(v: f64) -> Bar {
        Bar {
            mean: v,
            lo: v,
            hi: v,
            hollow: false,
        }
    }
}

/// A series: a legend entry and the colour of its bars; `hollow` draws its bars as outlines
/// (a candidate below the success target).
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub label: String,
    pub color: usize,
    pub hollow: bool,
}

/// One panel: its caption, the groups across, and per series one bar per group.
#[derive(Debug, Clone)]
pub(crate) struct Panel {
    pub caption: String,
    pub groups: Vec<String>,
    pub y_desc: String,
    /// `values[series][group]`.
    pub values: Vec<Vec<Option<Bar>>>,
    /// How a value reads above its bar (`12.1×`, `98 %`).
    pub fmt: fn(f64) -> String,
    /// Values are multiplied by this on the axis (100 for a share in %).
    pub scale: f64,
    /// A dashed horizontal line and its legend text (`1 = no retries`, the target).
    pub line: Option<(f64, String)>,
    /// A fixed top of the axis (a share stops at 100 %).
    pub y_top: Option<f64>,
}

pub(crate) struct BarChart {
    pub subtitle: String,
    pub x_desc: String,
    pub series: Vec<Series>,
    pub panels: Vec<Panel>,
}

impl BarChart {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let mut legend: Vec<LegendItem> = (self.series.iter())
            .map(|s| {
                let c = style::color(s.color);
                let swatch = if s.hollow {
                    Swatch::Hollow(c)
                } else {
                    Swatch::Box(c.to_rgba())
                };
                LegendItem::new(swatch, s.label.clone())
            })
            .collect();
        let mut lines: Vec<&str> = self
            .panels
            .iter()
            .filter_map(|p| p.line.as_ref().map(|l| l.1.as_str()))
            .collect();
        lines.dedup();
        legend.extend(
            lines
                .iter()
                .map(|l| LegendItem::new(Swatch::Dashed(MUTED), *l)),
        );
        if self.any_interval() {
            legend.push(LegendItem::new(Swatch::Line(INK), "95 % interval"));
        }
        let hollow_bars =
            (self.panels.iter()).any(|p| p.values.iter().flatten().flatten().any(|b| b.hollow));
        if hollow_bars && !self.series.iter().any(|s| s.hollow) {
            legend.push(LegendItem::new(
                Swatch::Hollow(INK),
                "below the success target",
            ));
        }
        let body = style::frame(root, title, Some(&self.subtitle), &legend)?;
        let n = self.panels.len();
        let grid = style::grid_wide(n);
        let areas = style::panels(&body.margin(0, 10, 6, 10), n, grid, None)?;
        for (panel, (area, bottom, _)) in self.panels.iter().zip(areas) {
            self.draw_panel(&area, panel, bottom)?;
        }
        Ok(())
    }

    fn any_interval(&self) -> bool {
        (self.panels.iter())
            .flat_map(|p| p.values.iter().flatten().flatten())
            .any(|b| b.hi > b.lo)
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
        bottom: bool,
    ) -> DrawResult {
        let n = panel.groups.len();
        let k = self.series.len().max(1);
        let hi = (panel.values.iter().flatten().flatten())
            .map(|b| b.hi.max(b.mean))
            .fold(0.0, f64::max);
        let line = panel.line.as_ref().map_or(0.0, |l| l.0);
        let y_max = match panel.y_top {
            Some(top) => top * panel.scale,
            None => style::from_zero(hi.max(line) * panel.scale, 0.15),
        };
        let groups = panel.groups.clone();
        let (w, _) = area.dim_in_pixel();
        let mut builder = ChartBuilder::on(area);
        if !panel.caption.is_empty() {
            builder.caption(&panel.caption, style::text(style::CAPTION_SIZE, &INK));
        }
        let mut chart = builder
            .margin(8)
            .margin_right(16)
            .x_label_area_size(if bottom { 52 } else { 36 })
            .y_label_area_size(84)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..y_max)?;
        // Group labels: every one when they fit, else every k-th.
        let widest = groups
            .iter()
            .map(|g| super::text::size_of(g, style::TICK_SIZE).0 as f64)
            .fold(0.0, f64::max);
        let per_group = (f64::from(w) - 110.0) / n as f64;
        let stride = ((widest + 14.0) / per_group).ceil().max(1.0) as usize;
        let label = |v: &f64| {
            let r = v.round();
            if (v - r).abs() > 1e-6 || r < 0.0 || !(r as usize).is_multiple_of(stride) {
                return String::new();
            }
            groups.get(r as usize).cloned().unwrap_or_default()
        };
        let scale = panel.scale;
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh()
            .house_style()
            .x_labels(n.min(40))
            .x_label_formatter(&label)
            .y_labels(6)
            .y_label_formatter(&|v| style::tick(*v))
            .y_desc(panel.y_desc.clone());
        if bottom {
            mesh.x_desc(self.x_desc.clone());
        }
        mesh.draw()?;
        style::declare(&chart, &panel.caption, false);
        if let Some((v, _)) = &panel.line {
            chart.draw_series(DashedLineSeries::new(
                vec![(-0.5, v * scale), (n as f64 - 0.5, v * scale)],
                8,
                5,
                MUTED.stroke_width(2),
            ))?;
        }
        let group = 0.84;
        let bw = group / k as f64;
        // Values above the bars only where each fits over its bar.
        let px_per_unit = chart.backend_coord(&(1.0, 0.0)).0 - chart.backend_coord(&(0.0, 0.0)).0;
        let bar_px = bw * f64::from(px_per_unit);
        let widest_value = (panel.values.iter().flatten().flatten())
            .map(|b| super::text::size_of(&(panel.fmt)(b.mean), style::NOTE_SIZE).0 as f64)
            .fold(0.0, f64::max);
        let show_values = widest_value + 6.0 <= bar_px;
        for (si, s) in self.series.iter().enumerate() {
            for (gi, bar) in panel.values.get(si).into_iter().flatten().enumerate() {
                let Some(b) = bar else { continue };
                let x0 = gi as f64 - group / 2.0 + si as f64 * bw + bw * 0.06;
                let value = show_values.then(|| (panel.fmt)(b.mean));
                let bar = Bar {
                    mean: b.mean * scale,
                    lo: b.lo * scale,
                    hi: b.hi * scale,
                    hollow: s.hollow || b.hollow,
                };
                draw_bar(&mut chart, (x0, x0 + bw * 0.88), bar, s.color, value)?;
            }
        }
        Ok(())
    }
}

/// One bar from `x0` to `x1` in the colour of strategy `color` (hollow: an outline over a
/// light fill), its interval as a whisker, and `value` above it.
fn draw_bar<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    (x0, x1): (f64, f64),
    b: Bar,
    color: usize,
    value: Option<String>,
) -> DrawResult {
    let color = style::color(color);
    let xm = (x0 + x1) / 2.0;
    let corners = [(x0, 0.0), (x1, b.mean)];
    super::check::data(|| {
        if b.hollow {
            // A light fill keeps the colour readable, the outline its name.
            chart.draw_series(std::iter::once(Rectangle::new(
                corners,
                color.mix(0.15).filled(),
            )))?;
            chart.draw_series(std::iter::once(Rectangle::new(
                corners,
                color.stroke_width(2),
            )))
        } else {
            chart.draw_series(std::iter::once(Rectangle::new(
                corners,
                color.mix(0.9).filled(),
            )))
        }
    })?;
    if b.hi > b.lo {
        let cap = (x1 - x0) * 0.2;
        let whisker = [
            vec![(xm, b.lo), (xm, b.hi)],
            vec![(xm - cap, b.lo), (xm + cap, b.lo)],
            vec![(xm - cap, b.hi), (xm + cap, b.hi)],
        ];
        for line in whisker {
            chart.draw_series(std::iter::once(PathElement::new(line, INK.stroke_width(2))))?;
        }
    }
    if let Some(value) = value.filter(|_| b.mean > 0.0) {
        chart.draw_series(std::iter::once(Text::new(
            value,
            (xm, b.hi.max(b.mean)),
            style::text(style::NOTE_SIZE, &INK).pos(Pos::new(HPos::Center, VPos::Bottom)),
        )))?;
    }
    Ok(())
}
