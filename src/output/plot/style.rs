//! Shared look of every chart: the embedded font, the colour-blind-safe palette, the title and
//! legend strip above the plot, units for time axes, and the error type of drawing code.

use std::sync::Once;

use plotters::chart::{ChartContext, MeshStyle};
use plotters::coord::Shift;
use plotters::coord::ranged1d::Ranged;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::metric::{Metric, Unit};
use crate::output::results::fmt_number;

/// The family every text uses. The bitmap draws the embedded DejaVu Sans ([`super::text`]);
/// an SVG names it with fallbacks of about its width, for a browser that lacks it.
pub(crate) const FONT: &str = "DejaVu Sans, Verdana, sans-serif";
// Sizes are plotters' (an em of size / 1.24 px). The smallest, 17, is an em of 13.7 px: above
// 10 pt at 96 px per inch, the least the chart check allows.
/// Title size.
pub(crate) const TITLE_SIZE: f64 = 28.0;
/// Axis description size.
pub(crate) const DESC_SIZE: f64 = 18.0;
/// Tick label size.
pub(crate) const TICK_SIZE: f64 = 17.0;
/// Legend size.
pub(crate) const LEGEND_SIZE: f64 = 17.0;
/// Panel captions (a strategy's name above its panel).
pub(crate) const CAPTION_SIZE: f64 = 19.0;
/// Notes inside a plot (values on bars, labels of dots and lines).
pub(crate) const NOTE_SIZE: f64 = 17.0;

static REGISTER: Once = Once::new();

/// Registers the embedded DejaVu Sans with plotters for every style, as [`FONT`] and as
/// "sans-serif" (once per process), for plotters charts drawn without our canvas (criterion's
/// in the benches): text then draws the same on every machine, with no system font.
pub fn ensure_fonts() {
    REGISTER.call_once(|| {
        for name in [FONT, "sans-serif"] {
            for style in [
                FontStyle::Normal,
                FontStyle::Bold,
                FontStyle::Italic,
                FontStyle::Oblique,
            ] {
                // The bytes are a valid TrueType file checked by the tests; a failure here
                // would only leave text undrawn, never panic.
                let _ = plotters::style::register_font(name, style, super::text::FONT_BYTES);
            }
        }
    });
}

/// Okabe–Ito, reordered so that the first colours are the most distinct on white; yellow last.
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0xF0, 0xE4, 0x42), // yellow
];

/// The colour of the strategy at `index` in first-appearance order.
pub(crate) fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Dark grey for text and reference lines.
pub(crate) const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
/// Grey for secondary text.
pub(crate) const MUTED: RGBColor = RGBColor(0x66, 0x66, 0x66);
/// Light grey used for first attempts in the herd chart.
pub(crate) const FIRST_ATTEMPTS: RGBColor = RGBColor(0xB8, 0xB8, 0xB8);
/// Fault windows.
pub(crate) const FAULT: RGBColor = RGBColor(0xD5, 0x5E, 0x00);

/// A drawing failure, as text (plotters' error types are generic over the back end).
#[derive(Debug)]
pub(crate) struct DrawErr(pub String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawErr {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        DrawErr(e.to_string())
    }
}

/// Result of drawing code.
pub(crate) type DrawResult<T = ()> = std::result::Result<T, DrawErr>;

/// The marker drawn before a legend label.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    /// A filled square.
    Box(RGBAColor),
    /// A thick line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A filled dot.
    Dot(RGBColor),
    /// An open ring.
    Ring(RGBColor),
}

/// One legend entry.
#[derive(Debug, Clone)]
pub(crate) struct LegendItem {
    /// The marker.
    pub swatch: Swatch,
    /// The text.
    pub label: String,
}

impl LegendItem {
    pub(crate) fn new(swatch: Swatch, label: impl Into<String>) -> Self {
        LegendItem {
            swatch,
            label: label.into(),
        }
    }
}

/// A text style of `size` px in `color`.
pub(crate) fn text(size: f64, color: &RGBColor) -> TextStyle<'static> {
    (FONT, size).into_font().color(color)
}

/// The project's look for a chart's mesh: faint grid lines, a grey axis, the embedded font.
pub(crate) trait HouseStyle {
    /// Applies the house style and returns the mesh for further settings.
    fn house_style(&mut self) -> &mut Self;
}

impl<X: Ranged, Y: Ranged, DB: DrawingBackend> HouseStyle for MeshStyle<'_, '_, X, Y, DB> {
    fn house_style(&mut self) -> &mut Self {
        self.light_line_style(INK.mix(0.05))
            .bold_line_style(INK.mix(0.10))
            .axis_style(INK.mix(0.6))
            .label_style(text(TICK_SIZE, &INK))
            .axis_desc_style(text(DESC_SIZE, &INK))
    }
}

/// Draws the title, an optional subtitle and a legend strip (wrapped to as many rows as
/// needed) at the top of `root`, and returns the area below them for the plot. Legends
/// therefore never cover data.
pub(crate) fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: Option<&str>,
    legend: &[LegendItem],
) -> DrawResult<DrawingArea<DB, Shift>> {
    root.fill(&WHITE)?;
    let (width, _) = root.dim_in_pixel();
    let mut y = 12i32;
    let title_style = text(TITLE_SIZE, &INK).pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(
        title.to_string(),
        (width as i32 / 2, y),
        title_style,
    ))?;
    y += TITLE_SIZE as i32 + 8;
    if let Some(sub) = subtitle {
        let style = text(16.0, &MUTED).pos(Pos::new(HPos::Center, VPos::Top));
        root.draw(&Text::new(sub.to_string(), (width as i32 / 2, y), style))?;
        y += 24;
    }
    if !legend.is_empty() {
        let style = text(LEGEND_SIZE, &INK);
        let swatch_w = 26i32;
        let gap = 22i32;
        let mut widths = Vec::with_capacity(legend.len());
        for item in legend {
            let (w, _) = root.estimate_text_size(&item.label, &style)?;
            widths.push(swatch_w + 6 + w as i32);
        }
        // Greedy rows no wider than the canvas less a margin.
        let max_row = width as i32 - 60;
        let mut rows: Vec<Vec<usize>> = vec![Vec::new()];
        let mut row_w = 0;
        for (i, w) in widths.iter().enumerate() {
            let last = rows.last_mut().expect("rows is never empty");
            if !last.is_empty() && row_w + gap + w > max_row {
                rows.push(vec![i]);
                row_w = *w;
            } else {
                if !last.is_empty() {
                    row_w += gap;
                }
                last.push(i);
                row_w += w;
            }
        }
        y += 4;
        for row in rows {
            let total: i32 =
                row.iter().map(|&i| widths[i]).sum::<i32>() + gap * (row.len() as i32 - 1);
            let mut x = (width as i32 - total) / 2;
            let cy = y + 9;
            for i in row {
                draw_swatch(root, legend[i].swatch, x, cy)?;
                let label_style = style.pos(Pos::new(HPos::Left, VPos::Center));
                root.draw(&Text::new(
                    legend[i].label.clone(),
                    (x + swatch_w + 6, cy),
                    label_style,
                ))?;
                x += widths[i] + gap;
            }
            y += 24;
        }
    }
    y += 4;
    Ok(root.split_vertically(y).1)
}

fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: Swatch,
    x: i32,
    cy: i32,
) -> DrawResult {
    match swatch {
        Swatch::Box(c) => {
            area.draw(&Rectangle::new(
                [(x + 4, cy - 8), (x + 22, cy + 8)],
                c.filled(),
            ))?;
        }
        Swatch::Line(c) => {
            area.draw(&PathElement::new(
                vec![(x, cy), (x + 26, cy)],
                c.stroke_width(3),
            ))?;
        }
        Swatch::Dashed(c) => {
            for k in 0..3 {
                let x0 = x + k * 10;
                area.draw(&PathElement::new(
                    vec![(x0, cy), (x0 + 6, cy)],
                    c.stroke_width(2),
                ))?;
            }
        }
        Swatch::Dot(c) => {
            area.draw(&Circle::new((x + 13, cy), 6, c.filled()))?;
        }
        Swatch::Ring(c) => {
            area.draw(&Circle::new((x + 13, cy), 8, c.stroke_width(3)))?;
        }
    }
    Ok(())
}

/// A grid of `n` panels: (rows, columns), wide panels preferred for time series.
pub(crate) fn grid(n: usize) -> (usize, usize) {
    match n {
        0 | 1 => (1, 1),
        2 => (2, 1),
        3 => (3, 1),
        4 => (2, 2),
        5 | 6 => (3, 2),
        7 | 8 => (4, 2),
        _ => (n.div_ceil(3), 3),
    }
}

/// Small multiples: `n` panel areas laid out on a `(rows, cols)` grid of `area`, each with
/// whether it sits on the bottom row (draws the x axis) and in the left column (the y axis).
pub(crate) fn panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    n: usize,
    (rows, cols): (usize, usize),
) -> Vec<(DrawingArea<DB, Shift>, bool, bool)> {
    area.split_evenly((rows, cols))
        .into_iter()
        .take(n)
        .enumerate()
        .map(|(k, a)| (a, k / cols == rows - 1 || k + cols >= n, k % cols == 0))
        .collect()
}

/// The y axis of a [`time_panel`]: its range, number of ticks, tick text and description.
pub(crate) struct YAxis<'a> {
    pub range: std::ops::Range<f64>,
    pub labels: usize,
    pub tick: &'a dyn Fn(&f64) -> String,
    pub desc: &'a str,
}

/// One panel of a small-multiples time chart (`herd`, `resync`): the strategy's name as
/// caption in its colour, time from 0 to `x_max` in `unit` across and `y` up, in the house
/// style, with the axis descriptions on the bottom row and the left column only (`outer`).
pub(crate) fn time_panel<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    (name, color): (&str, RGBColor),
    (bottom, left): (bool, bool),
    (x_max, unit): (f64, TimeUnit),
    y: YAxis<'_>,
) -> DrawResult<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let mut chart = ChartBuilder::on(area)
        .caption(name, text(CAPTION_SIZE, &color))
        .margin(6)
        .x_label_area_size(if bottom { 44 } else { 26 })
        .y_label_area_size(if left { 78 } else { 62 })
        .build_cartesian_2d(0.0..x_max, y.range)?;
    let mut mesh = chart.configure_mesh();
    mesh.house_style()
        .x_labels(8)
        .y_labels(y.labels)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(y.tick);
    if bottom {
        mesh.x_desc(format!("time ({})", unit.name));
    }
    if left {
        mesh.y_desc(y.desc);
    }
    mesh.draw()?;
    declare(&chart, name, false);
    Ok(chart)
}

/// Declares the plotting area of `chart` a panel named `name` to the chart check
/// ([`super::check`]); a `reference` panel is not held to the rule on how far its data reach.
pub(crate) fn declare<DB: DrawingBackend, X: Ranged, Y: Ranged>(
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    name: &str,
    reference: bool,
) {
    super::check::panel(name, chart.plotting_area().get_pixel_range(), reference);
}

/// A grid for square-ish panels (heatmaps, distributions).
pub(crate) fn grid_wide(n: usize) -> (usize, usize) {
    match n {
        0 | 1 => (1, 1),
        2 => (1, 2),
        3 => (1, 3),
        4 => (2, 2),
        5 | 6 => (2, 3),
        7 | 8 => (2, 4),
        _ => (n.div_ceil(4), 4),
    }
}

/// A unit for a time axis: values are divided by `div` ms and the axis says `name`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimeUnit {
    /// Milliseconds per unit.
    pub div: f64,
    /// `ms` or `s`.
    pub name: &'static str,
}

/// Seconds when the range reaches 2 s, else milliseconds.
pub(crate) fn time_unit(max_ms: f64) -> TimeUnit {
    if max_ms >= 2000.0 {
        TimeUnit {
            div: 1000.0,
            name: "s",
        }
    } else {
        TimeUnit {
            div: 1.0,
            name: "ms",
        }
    }
}

/// How to show values of a metric on an axis whose data reach `max`: (divisor to apply to
/// raw values, axis description with unit).
pub(crate) fn axis_for(metric: Metric, max: f64) -> (f64, String) {
    let label = metric.label();
    match metric.unit() {
        Unit::Millis => {
            let u = time_unit(max);
            (u.div, format!("{label} ({})", u.name))
        }
        Unit::Share => (0.01, format!("{label} (%)")),
        Unit::Count | Unit::Times => (1.0, label.to_string()),
    }
}

/// A value of a metric as text with its unit (`412 ms`, `98.5 %`, `2.41×`, `17`).
pub(crate) fn fmt_metric(metric: Metric, v: f64) -> String {
    match metric.unit() {
        Unit::Millis => crate::output::results::fmt_ms(v),
        Unit::Share => format!("{} %", fmt_number(v * 100.0)),
        Unit::Times => format!("{}×", fmt_number(v)),
        Unit::Count => fmt_number(v),
    }
}

/// `s` with its first letter in upper case, for a label that starts a title.
pub(crate) fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Tick label for an axis value already divided by its unit.
pub(crate) fn tick(v: f64) -> String {
    if v.abs() < 1e-9 {
        "0".to_string()
    } else {
        fmt_number(v)
    }
}

/// A padded range that is never empty: `[lo, hi]` grown by `pad` of its width.
pub(crate) fn padded(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - d, hi + d);
    }
    let d = (hi - lo) * pad;
    (lo - d, hi + d)
}

/// `[0, hi × (1 + pad)]`, never empty.
pub(crate) fn from_zero(hi: f64, pad: f64) -> f64 {
    if hi.is_finite() && hi > 0.0 {
        hi * (1.0 + pad)
    } else {
        1.0
    }
}
