//! Shared look of every chart: the embedded font, the colour-blind-safe palette, the title and
//! legend strip above the plot, units for time axes, and the error type of drawing code.

use std::sync::Once;

use plotters::chart::{ChartContext, MeshStyle};
use plotters::coord::Shift;
use plotters::coord::ranged1d::Ranged;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, FontTransform};

use crate::metric::{Metric, Unit};
use crate::output::palette;
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
/// Subtitle size (the world point a chart shows).
pub(crate) const SUBTITLE_SIZE: f64 = 18.0;
/// Panel captions (a strategy's name above its panel).
pub(crate) const CAPTION_SIZE: f64 = 19.0;
/// Notes inside a plot (values on bars, labels of dots and lines).
pub(crate) const NOTE_SIZE: f64 = 17.0;

static REGISTER: Once = Once::new();

/// Registers the embedded DejaVu Sans with plotters for every style, as `FONT` and as
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

const fn rgb(c: [u8; 3]) -> RGBColor {
    RGBColor(c[0], c[1], c[2])
}

/// A palette colour as plotters' colour.
pub(crate) const fn rgb_of(c: [u8; 3]) -> RGBColor {
    rgb(c)
}

/// The colour of a strategy by its palette slot ([`palette::slots`]: from its name).
pub(crate) fn color(slot: usize) -> RGBColor {
    rgb(palette::strategy_color(slot))
}

/// The colour of a strategy's titles and labels: its own, every palette colour being legible
/// on white.
pub(crate) fn text_color(slot: usize) -> RGBColor {
    color(slot)
}

/// Dark grey for text and reference lines.
pub(crate) const INK: RGBColor = rgb(palette::INK);
/// Grey for secondary text.
pub(crate) const MUTED: RGBColor = RGBColor(0x66, 0x66, 0x66);
/// Light grey used for first attempts in the herd chart.
pub(crate) const FIRST_ATTEMPTS: RGBColor = rgb(palette::FIRST_ATTEMPTS);
/// Fault windows.
pub(crate) const FAULT: RGBColor = rgb(palette::FAULT);

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
    /// A ring with four ticks outside it, a sight: the recommendation, unlike any dot.
    Target(RGBColor),
    /// A hollow dot (a candidate below the success target).
    Hollow(RGBColor),
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

/// `text` drawn centred at `(x, y)` (top anchor) at `size`, made smaller (down to the least
/// legible size) and then cut with "…" until it fits `max_w` px: a title never leaves the
/// canvas.
fn fitted<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text_: &str,
    (x, y): (i32, i32),
    size: f64,
    color: &RGBColor,
    max_w: i32,
) -> DrawResult {
    let mut size = size;
    let fits = |t: &str, size: f64| {
        root.estimate_text_size(t, &text(size, color))
            .is_ok_and(|(w, _)| (w as i32) <= max_w)
    };
    while size > MIN_SIZE && !fits(text_, size) {
        size -= 1.0;
    }
    let mut t = text_.to_string();
    while !fits(&t, size) && t.chars().count() > 1 {
        let keep = t.chars().count() - 2;
        t = t
            .chars()
            .take(keep)
            .collect::<String>()
            .trim_end()
            .to_string()
            + "…";
    }
    let style = text(size, color).pos(Pos::new(HPos::Center, VPos::Top));
    root.draw(&Text::new(t, (x, y), style))?;
    Ok(())
}

/// The least size any text is drawn at (an em of 13.7 px, above 10 pt).
pub(crate) const MIN_SIZE: f64 = 17.0;

/// Draws the title, an optional subtitle and a legend strip (wrapped to as many rows as
/// needed) at the top of `root`, and returns the area below them for the plot. Legends
/// therefore never cover data; a title or subtitle too wide for the canvas is drawn smaller,
/// then cut.
pub(crate) fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: Option<&str>,
    legend: &[LegendItem],
) -> DrawResult<DrawingArea<DB, Shift>> {
    root.fill(&WHITE)?;
    let (width, _) = root.dim_in_pixel();
    let (width, max_w) = (width as i32, width as i32 - 40);
    let mut y = 10i32;
    fitted(root, title, (width / 2, y), TITLE_SIZE, &INK, max_w)?;
    y += TITLE_SIZE as i32 + 6;
    if let Some(sub) = subtitle.filter(|s| !s.is_empty()) {
        fitted(root, sub, (width / 2, y), SUBTITLE_SIZE, &MUTED, max_w)?;
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
        let max_row = max_w;
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
        y += 2;
        for row in rows {
            let total: i32 =
                row.iter().map(|&i| widths[i]).sum::<i32>() + gap * (row.len() as i32 - 1);
            let mut x = ((width - total) / 2).max(20);
            let cy = y + 10;
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
    y += 6;
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
        Swatch::Hollow(c) => {
            area.draw(&Circle::new((x + 13, cy), 6, WHITE.filled()))?;
            area.draw(&Circle::new((x + 13, cy), 6, c.stroke_width(2)))?;
        }
        Swatch::Target(c) => target(area, (x + 13, cy), 6, 5, c)?,
    }
    Ok(())
}

/// Draws a sight on `area` at pixel `at`: a ring of `radius` and four ticks of `tick`
/// outside it, north, east, south and west. Unlike every dot and ring of a chart, it marks
/// one chosen point.
pub(crate) fn target<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    radius: i32,
    tick: i32,
    c: RGBColor,
) -> DrawResult {
    let (x, y) = at;
    area.draw(&Circle::new(at, radius, c.stroke_width(3)))?;
    let (r0, r1) = (radius + 1, radius + tick);
    for (dx, dy) in [(0, -1), (1, 0), (0, 1), (-1, 0)] {
        area.draw(&PathElement::new(
            vec![(x + dx * r0, y + dy * r0), (x + dx * r1, y + dy * r1)],
            c.stroke_width(3),
        ))?;
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

/// A panel of small multiples: its area, whether it sits on the bottom row (draws the x axis)
/// and whether in the left column (the y axis).
pub(crate) type Cell<DB> = (DrawingArea<DB, Shift>, bool, bool);

/// Small multiples: `n` panel areas laid out on a `(rows, cols)` grid of `area`, each with
/// whether it sits on the bottom row (draws the x axis) and in the left column (the y axis).
/// The axis descriptions, when given, are drawn once for the whole grid: y at its left, x
/// under it (a long name fits the grid, not a panel).
pub(crate) fn panels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    n: usize,
    (rows, cols): (usize, usize),
    y_desc: Option<&str>,
) -> DrawResult<Vec<Cell<DB>>> {
    panels_with(area, n, (rows, cols), y_desc, None)
}

/// [`panels`] with a shared x axis description too.
pub(crate) fn panels_with<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    n: usize,
    (rows, cols): (usize, usize),
    y_desc: Option<&str>,
    x_desc: Option<&str>,
) -> DrawResult<Vec<Cell<DB>>> {
    let area = match x_desc {
        Some(desc) => {
            let (_, h) = area.dim_in_pixel();
            let (rest, below) = area.split_vertically(h as i32 - 28);
            let (w, _) = below.dim_in_pixel();
            let style = text(DESC_SIZE, &INK).pos(Pos::new(HPos::Center, VPos::Top));
            below.draw(&Text::new(desc.to_string(), (w as i32 / 2, 4), style))?;
            rest
        }
        None => area.clone(),
    };
    let area = match y_desc {
        Some(desc) => {
            let (left, rest) = area.split_horizontally(30);
            let (_, h) = left.dim_in_pixel();
            let style = text(DESC_SIZE, &INK)
                .pos(Pos::new(HPos::Center, VPos::Top))
                .transform(FontTransform::Rotate270);
            left.draw(&Text::new(desc.to_string(), (4, h as i32 / 2), style))?;
            rest
        }
        None => area.clone(),
    };
    Ok(area
        .split_evenly((rows, cols))
        .into_iter()
        .take(n)
        .enumerate()
        .map(|(k, a)| (a, k / cols == rows - 1 || k + cols >= n, k % cols == 0))
        .collect())
}

/// The grid of a time-series chart's `n` run panels: two to a row when runs come in pairs (a
/// stuck and a recovered replication side by side, pairs first), else [`grid`].
pub(crate) fn run_grid(n: usize, paired: bool) -> (usize, usize) {
    if paired { (n.div_ceil(2), 2) } else { grid(n) }
}

/// Rows of run panels the default chart height holds; each row beyond adds [`RUN_ROW`] px.
const RUN_ROWS: usize = 4;
/// The height a row of run panels takes, px.
const RUN_ROW: u32 = 140;

/// The height of a time-series chart of `n` run panels, px: the default, grown by a row's
/// height for every row beyond [`RUN_ROWS`], so that no pair has to be left out.
pub(crate) fn run_chart_height(n: usize, paired: bool) -> u32 {
    let rows = run_grid(n, paired).0;
    super::HEIGHT + RUN_ROW * rows.saturating_sub(RUN_ROWS) as u32
}

/// The panels of a time-series chart, one per run of [`super::series`], on [`run_grid`]; the
/// y description shared at the left.
pub(crate) fn run_panels<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    n: usize,
    paired: bool,
    y_desc: &str,
) -> DrawResult<Vec<Cell<DB>>> {
    panels(
        &body.margin(0, 10, 6, 10),
        n,
        run_grid(n, paired),
        Some(y_desc),
    )
}

/// How many y labels a panel `height` px tall holds (one every 45 px, 2 to 6).
pub(crate) fn y_labels_for(height: u32) -> usize {
    (height as usize / 45).clamp(2, 6)
}

/// The y axis of a [`time_panel`]: its range, number of ticks and tick text.
pub(crate) struct YAxis<'a> {
    pub range: std::ops::Range<f64>,
    pub labels: usize,
    pub tick: &'a dyn Fn(&f64) -> String,
}

/// One panel of a small-multiples time chart (`herd`, `goodput`, `resync`): the name as
/// caption in its colour, time from 0 to `x_max` in `unit` across and `y` up, in the house
/// style, with the time axis description on the bottom row only (the y description is the
/// grid's, [`panels`]).
pub(crate) fn time_panel<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: (&str, RGBColor),
    bottom: bool,
    (x_max, unit): (f64, TimeUnit),
    y: YAxis<'_>,
) -> DrawResult<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    time_panel_from(area, caption, bottom, (0.0, x_max, unit), y)
}

/// [`time_panel`] with a time axis from `x_min` (below 0: a margin that keeps what happens
/// at time 0 clear of the value axis; no tick is printed below 0).
pub(crate) fn time_panel_from<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    (name, color): (&str, RGBColor),
    bottom: bool,
    (x_min, x_max, unit): (f64, f64, TimeUnit),
    y: YAxis<'_>,
) -> DrawResult<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>> {
    let (w, _) = area.dim_in_pixel();
    let mut chart = ChartBuilder::on(area)
        .caption(name, text(CAPTION_SIZE, &color))
        .margin(6)
        .margin_right(14)
        .x_label_area_size(if bottom { 46 } else { 28 })
        .y_label_area_size(66)
        .build_cartesian_2d(x_min..x_max, y.range)?;
    let mut mesh = chart.configure_mesh();
    mesh.house_style()
        .x_labels((w as usize / 90).clamp(3, 10))
        .y_labels(y.labels)
        .x_label_formatter(&|v| if *v < 0.0 { String::new() } else { tick(*v) })
        .y_label_formatter(y.tick);
    if bottom {
        mesh.x_desc(format!("time ({})", unit.name));
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
        9 => (3, 3),
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

/// `s` with its first letter in upper case, for a label that starts a title; a name such as
/// `p99 latency` stays as it is.
pub(crate) fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        _ if s.chars().nth(1).is_some_and(|d| d.is_ascii_digit()) => s.to_string(),
        Some(first) => first.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
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

/// Tick label for an axis value already divided by its unit.
pub(crate) fn tick(v: f64) -> String {
    if v.abs() < 1e-9 {
        "0".to_string()
    } else {
        fmt_number(v)
    }
}

/// The largest magnitude an axis reaches: far beyond any value a run produces, and small
/// enough that an axis's width, padding and tick steps stay finite (an infinite range makes
/// plotters' search for key points spin for ever).
pub(crate) const AXIS_MAX: f64 = 1e300;

/// `v` within [`AXIS_MAX`] either side of zero (a value beyond it is drawn at the edge).
pub(crate) fn on_axis(v: f64) -> f64 {
    v.clamp(-AXIS_MAX, AXIS_MAX)
}

/// A padded range that is never empty: `[lo, hi]` grown by `pad` of its width, and at least
/// 4 % of its magnitude wide (so that ticks of nearly equal values read apart); bounded by
/// [`AXIS_MAX`] for any finite value.
pub(crate) fn padded(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let (lo, hi) = (on_axis(lo), on_axis(hi));
    let least = 0.04 * lo.abs().max(hi.abs());
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) || hi - lo < least {
        let half = if lo == 0.0 && hi == 0.0 {
            1.0
        } else {
            least.max(hi - lo) / 2.0 * (1.0 + pad)
        };
        let mid = (lo + hi) / 2.0;
        return (mid - half, mid + half);
    }
    let d = (hi - lo) * pad;
    (lo - d, hi + d)
}

/// A tick formatter for an axis spanning `lo` to `hi`: as many decimals as its steps need
/// (about six ticks), so that no two ticks read the same.
pub(crate) fn ticks_for(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let step = ((hi - lo).abs() / 6.0).max(1e-12);
    let decimals = (-step.log10()).ceil().clamp(0.0, 6.0) as usize;
    move |v: &f64| {
        if v.abs() < step * 1e-6 {
            "0".to_string()
        } else if v.abs() >= 1000.0 || decimals == 0 {
            fmt_number(v.round())
        } else {
            let s = format!("{v:.decimals$}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    }
}

/// `[0, hi × (1 + pad)]`, never empty, bounded by [`AXIS_MAX`].
pub(crate) fn from_zero(hi: f64, pad: f64) -> f64 {
    if hi.is_finite() && hi > 0.0 {
        on_axis(hi) * (1.0 + pad)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_ranges_stay_finite_for_any_finite_value() {
        // Issue 42 (4): an amplification near f64::MAX padded to an infinite range.
        let extremes = [f64::MAX, -f64::MAX, 1e308, f64::MIN_POSITIVE, 0.0, 1.0];
        for &lo in &extremes {
            for &hi in &extremes {
                let (a, b) = padded(lo.min(hi), lo.max(hi), 0.12);
                assert!(a.is_finite() && b.is_finite() && (b - a).is_finite() && b > a);
                assert!(((b - a) / 6.0).log10().is_finite(), "{lo} {hi}");
            }
            let top = from_zero(lo, 0.12);
            assert!(top.is_finite() && top > 0.0, "{lo}");
        }
    }
}
