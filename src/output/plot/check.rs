//! The chart check: what a chart drew, recorded as it was drawn ([`super::canvas`]), and the
//! rules a legible chart keeps.
//!
//! Drawing code says which shapes are data ([`data`]) and where its panels are ([`panel`]);
//! the canvas records every text with the box our own layout gives it ([`super::text`], the
//! same metrics the bitmap is drawn with) and every shape drawn as data. Nothing is recorded
//! unless a check runs ([`record`]), on the thread that draws.
//!
//! The rules ([`problems`]):
//! - no text reaches outside the canvas;
//! - no two text boxes overlap;
//! - no text is smaller than 10 pt (an em of 13.3 px at 96 px per inch);
//! - in every panel that is not a reference panel, the data reach at least a fifth of the
//!   value axis (up from its bottom), so that a scale set by something else (a capacity line
//!   far above the data) cannot leave them as a line on the floor;
//! - no data line crosses a text box (a label written over a curve);
//! - every text stands out from what it is drawn on, in the bitmap as drawn: a contrast ratio
//!   (WCAG's relative luminance) of at least [`MIN_CONTRAST`] against the commonest other
//!   colour of its box. Okabe–Ito yellow (#F0E442) on white is 1.3:1 and fails;
//! - every line and outline drawn as data stands out from white by the same ratio, in the
//!   colour it is drawn (blended with white by its opacity);
//! - a heat map's colour scale spans the value of every cell that has one, and its colour
//!   bar prints no tick label twice.

use std::cell::{Cell, RefCell};

/// A text as drawn: its content, em (px) and box on the canvas `(x0, y0, x1, y1)`.
#[derive(Debug, Clone)]
pub(crate) struct TextBox {
    pub text: String,
    pub em: f64,
    pub bounds: (f64, f64, f64, f64),
    /// Its colour.
    pub rgb: [u8; 3],
}

/// A panel: its name, its plotting area in pixels `(x0, y0, x1, y1)` (the value axis runs
/// from `y1` up to `y0`), and whether it is a reference panel the data rule skips.
#[derive(Debug, Clone)]
pub(crate) struct Panel {
    pub name: String,
    pub area: (i32, i32, i32, i32),
    pub reference: bool,
}

/// A heat map's colour scale: the range it spans, the values of its cells, its tick labels.
#[derive(Debug, Clone)]
pub(crate) struct Scale {
    pub name: String,
    pub range: (f64, f64),
    pub values: Vec<f64>,
    pub ticks: Vec<String>,
}

/// Everything one chart drew that the rules look at.
#[derive(Debug, Default, Clone)]
pub(crate) struct Recording {
    pub size: (u32, u32),
    pub texts: Vec<TextBox>,
    pub panels: Vec<Panel>,
    /// Bounding boxes of the shapes drawn as data.
    pub data: Vec<(i32, i32, i32, i32)>,
    /// The segments of the lines drawn as data, `(from, to)`.
    pub lines: Vec<((i32, i32), (i32, i32))>,
    /// The colours of the lines and outlines drawn as data, as they show on white.
    pub strokes: Vec<[u8; 3]>,
    /// The colour scales of heat maps.
    pub scales: Vec<Scale>,
}

thread_local! {
    static RECORDING: RefCell<Option<Recording>> = const { RefCell::new(None) };
    static DRAWING_DATA: Cell<bool> = const { Cell::new(false) };
}

/// Runs `draw` with recording on, on this thread, and returns its result with what it drew.
pub(crate) fn record<T>(size: (u32, u32), draw: impl FnOnce() -> T) -> (T, Recording) {
    RECORDING.with(|r| {
        *r.borrow_mut() = Some(Recording {
            size,
            ..Recording::default()
        })
    });
    let out = draw();
    let recording = RECORDING
        .with(|r| r.borrow_mut().take())
        .unwrap_or_default();
    (out, recording)
}

/// Draws `f`'s shapes as data (what the data rule measures).
pub(crate) fn data<T>(f: impl FnOnce() -> T) -> T {
    let before = DRAWING_DATA.with(|d| d.replace(true));
    let out = f();
    DRAWING_DATA.with(|d| d.set(before));
    out
}

/// Declares a panel whose plotting area spans the pixel ranges `(x, y)`.
pub(crate) fn panel(
    name: &str,
    (x, y): (std::ops::Range<i32>, std::ops::Range<i32>),
    reference: bool,
) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.panels.push(Panel {
                name: name.to_string(),
                area: (x.start, y.start, x.end, y.end),
                reference,
            });
        }
    });
}

/// Called by the canvas for every shape.
pub(crate) fn shape(bounds: Option<(i32, i32, i32, i32)>) {
    let Some(bounds) = bounds else { return };
    if !DRAWING_DATA.with(Cell::get) {
        return;
    }
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.data.push(bounds);
        }
    });
}

/// Called by the canvas for every line or path: its segments, when drawn as data.
pub(crate) fn line(points: &[(i32, i32)]) {
    if !DRAWING_DATA.with(Cell::get) {
        return;
    }
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.lines.extend(points.windows(2).map(|w| (w[0], w[1])));
        }
    });
}

/// Called by the canvas for every line, path or outline: its colour (`rgb` at opacity
/// `alpha`), when drawn as data.
pub(crate) fn stroke(rgb: [u8; 3], alpha: f64) {
    if !DRAWING_DATA.with(Cell::get) || alpha <= 0.0 {
        return;
    }
    let a = alpha.clamp(0.0, 1.0);
    let on_white = rgb.map(|c| (f64::from(c) * a + 255.0 * (1.0 - a)).round() as u8);
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut()
            && !rec.strokes.contains(&on_white)
        {
            rec.strokes.push(on_white);
        }
    });
}

/// Called by a heat map for its colour scale: the chart `name`, the `range` the colours
/// span, the `values` of its cells and the colour bar's tick labels.
pub(crate) fn scale(name: &str, range: (f64, f64), values: &[f64], ticks: &[(f64, String)]) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.scales.push(Scale {
                name: name.to_string(),
                range,
                values: values.to_vec(),
                ticks: ticks.iter().map(|t| t.1.clone()).collect(),
            });
        }
    });
}

/// Called by the canvas for every text.
pub(crate) fn text(text: &str, em: f64, bounds: (f64, f64, f64, f64), rgb: [u8; 3]) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.texts.push(TextBox {
                text: text.to_string(),
                em,
                bounds,
                rgb,
            });
        }
    });
}

/// The smallest text, in px of em: 10 pt at 96 px per inch.
pub(crate) const MIN_EM_PX: f64 = 10.0 * 96.0 / 72.0;
/// The least share of a panel's value axis its data must reach.
pub(crate) const MIN_REACH: f64 = 0.2;
/// Overlaps of at most this many px (anti-aliasing, rounding) are not counted.
const SLACK: f64 = 1.0;
/// The least contrast ratio of a text against what it is drawn on. WCAG asks 3:1 of
/// graphics; the colour-blind-safe palette's orange and sky blue reach 2.1:1 on white (their
/// captions always name what they colour), its yellow 1.3:1, which this rule refuses.
pub(crate) const MIN_CONTRAST: f64 = 2.0;

/// WCAG's relative luminance of an sRGB colour.
fn luminance(c: [u8; 3]) -> f64 {
    let lin = |v: u8| {
        let v = f64::from(v) / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])
}

/// The contrast ratio of two colours, 1 to 21.
pub(crate) fn contrast(a: [u8; 3], b: [u8; 3]) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// What a text is drawn on in `rgb` (the chart's pixels, `width` wide): the commonest colour
/// of its box that is not near its own.
fn background(rgb: &[u8], width: u32, t: &TextBox) -> Option<[u8; 3]> {
    let height = rgb.len() as u32 / 3 / width.max(1);
    let (x0, y0) = (t.bounds.0.max(0.0) as u32, t.bounds.1.max(0.0) as u32);
    let (x1, y1) = (
        (t.bounds.2.max(0.0) as u32).min(width),
        (t.bounds.3.max(0.0) as u32).min(height),
    );
    let mut counts: std::collections::HashMap<[u8; 3], u32> = std::collections::HashMap::new();
    for y in y0..y1 {
        for x in x0..x1 {
            let i = ((y * width + x) * 3) as usize;
            let c = [rgb[i], rgb[i + 1], rgb[i + 2]];
            let near = (0..3).all(|k| c[k].abs_diff(t.rgb[k]) < 40);
            if !near {
                *counts.entry(c).or_default() += 1;
            }
        }
    }
    counts
        .into_iter()
        .max_by_key(|(c, n)| (*n, *c))
        .map(|(c, _)| c)
}

/// Whether the segment `a`–`b` crosses the box `(x0, y0, x1, y1)` (Liang–Barsky clipping).
fn crosses((a, b): ((i32, i32), (i32, i32)), (x0, y0, x1, y1): (f64, f64, f64, f64)) -> bool {
    let (ax, ay) = (f64::from(a.0), f64::from(a.1));
    let (dx, dy) = (f64::from(b.0) - ax, f64::from(b.1) - ay);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let r = q / p;
            if p < 0.0 {
                lo = lo.max(r);
            } else {
                hi = hi.min(r);
            }
        }
    }
    lo <= hi
}

/// What breaks the rules that look at the pixels drawn (`rgb`, the chart's bitmap) and the
/// data lines: texts over data lines, texts that do not stand out.
pub(crate) fn drawn_problems(rec: &Recording, rgb: Option<&[u8]>) -> Vec<String> {
    let mut out = Vec::new();
    for t in &rec.texts {
        // The box less its anti-aliased edge.
        let b = t.bounds;
        let inner = (b.0 + 2.0, b.1 + 2.0, b.2 - 2.0, b.3 - 2.0);
        if inner.0 < inner.2 && inner.1 < inner.3 && rec.lines.iter().any(|l| crosses(*l, inner)) {
            out.push(format!("text {:?} lies over a data line", t.text));
        }
        if let Some(bg) = rgb.and_then(|px| background(px, rec.size.0, t)) {
            let ratio = contrast(t.rgb, bg);
            if ratio < MIN_CONTRAST {
                out.push(format!(
                    "text {:?} in {} on {}: contrast {ratio:.1}:1, below {MIN_CONTRAST}:1",
                    t.text,
                    crate::output::palette::hex(t.rgb),
                    crate::output::palette::hex(bg)
                ));
            }
        }
    }
    out
}

/// What breaks the rules in a recording, one sentence each.
pub(crate) fn problems(rec: &Recording) -> Vec<String> {
    let mut out = Vec::new();
    let (w, h) = (f64::from(rec.size.0), f64::from(rec.size.1));
    let show =
        |b: (f64, f64, f64, f64)| format!("({:.0}, {:.0})–({:.0}, {:.0})", b.0, b.1, b.2, b.3);
    for t in &rec.texts {
        let b = t.bounds;
        if b.0 < -SLACK || b.1 < -SLACK || b.2 > w + SLACK || b.3 > h + SLACK {
            out.push(format!(
                "text {:?} at {} reaches outside the {}×{} canvas",
                t.text,
                show(b),
                rec.size.0,
                rec.size.1
            ));
        }
        if t.em < MIN_EM_PX - 1e-6 {
            out.push(format!(
                "text {:?} is {:.1} pt, below 10 pt",
                t.text,
                t.em * 72.0 / 96.0
            ));
        }
    }
    for (i, a) in rec.texts.iter().enumerate() {
        for b in &rec.texts[i + 1..] {
            let (x, y) = (
                a.bounds.2.min(b.bounds.2) - a.bounds.0.max(b.bounds.0),
                a.bounds.3.min(b.bounds.3) - a.bounds.1.max(b.bounds.1),
            );
            if x > SLACK && y > SLACK {
                out.push(format!(
                    "texts {:?} at {} and {:?} at {} overlap",
                    a.text,
                    show(a.bounds),
                    b.text,
                    show(b.bounds)
                ));
            }
        }
    }
    for c in &rec.strokes {
        let ratio = contrast(*c, [255, 255, 255]);
        if ratio < MIN_CONTRAST {
            out.push(format!(
                "a data line in {} on white: contrast {ratio:.1}:1, below {MIN_CONTRAST}:1",
                crate::output::palette::hex(*c)
            ));
        }
    }
    for s in &rec.scales {
        out.extend(scale_problems(s));
    }
    for p in rec.panels.iter().filter(|p| !p.reference) {
        let (x0, y0, x1, y1) = p.area;
        let top = rec
            .data
            .iter()
            .filter(|d| d.0 <= x1 && d.2 >= x0 && d.1 <= y1 && d.3 >= y0)
            .map(|d| d.1.max(y0))
            .min();
        let axis = f64::from((y1 - y0).max(1));
        match top {
            None => out.push(format!("panel {:?} holds no data", p.name)),
            Some(top) => {
                let reach = f64::from(y1 - top) / axis;
                if reach < MIN_REACH {
                    out.push(format!(
                        "panel {:?}: the data reach {:.0} % of the value axis, less than a fifth",
                        p.name,
                        reach * 100.0
                    ));
                }
            }
        }
    }
    out
}

/// What breaks the heat-map scale rules: a valued cell outside the scale, a tick label twice.
fn scale_problems(s: &Scale) -> Vec<String> {
    let mut out = Vec::new();
    let (lo, hi) = s.range;
    let slack = (hi - lo).abs().max(lo.abs()).max(hi.abs()) * 1e-9;
    let outside: Vec<f64> = (s.values.iter().copied())
        .filter(|v| !(lo - slack..=hi + slack).contains(v))
        .collect();
    if let Some(v) = outside.first() {
        out.push(format!(
            "{:?}: {} cell(s) outside the colour scale {lo}–{hi} (e.g. {v})",
            s.name,
            outside.len()
        ));
    }
    let mut seen: Vec<&String> = Vec::new();
    for t in &s.ticks {
        if seen.contains(&t) {
            out.push(format!(
                "{:?}: the tick label {t:?} is printed twice",
                s.name
            ));
        }
        seen.push(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str, em: f64, bounds: (f64, f64, f64, f64)) -> TextBox {
        TextBox {
            text: t.into(),
            em,
            bounds,
            rgb: [0x33, 0x33, 0x33],
        }
    }

    /// A clean recording: two texts side by side, one panel whose data reach half its axis.
    fn clean() -> Recording {
        Recording {
            size: (400, 300),
            texts: vec![
                text("title", 20.0, (10.0, 5.0, 100.0, 25.0)),
                text("tick", 14.0, (110.0, 5.0, 150.0, 25.0)),
            ],
            panels: vec![Panel {
                name: "p".into(),
                area: (50, 50, 350, 250),
                reference: false,
            }],
            data: vec![(60, 150, 80, 250)],
            lines: vec![((60, 250), (80, 150))],
            strokes: vec![[0x00, 0x72, 0xB2]],
            scales: vec![Scale {
                name: "map".into(),
                range: (1.0, 3.4),
                values: vec![1.0, 2.0, 3.4],
                ticks: vec!["1.00×".into(), "2.20×".into(), "3.40×".into()],
            }],
        }
    }

    /// A white 400×300 bitmap with the texts of `r` drawn as solid boxes of their colour
    /// (their middle third), as text pixels sit among their background's.
    fn bitmap(r: &Recording) -> Vec<u8> {
        let mut px = vec![255u8; 400 * 300 * 3];
        for t in &r.texts {
            let (x0, x1) = (t.bounds.0 as usize, t.bounds.2 as usize);
            let (y0, y1) = (t.bounds.1 as usize, t.bounds.3 as usize);
            for y in y0 + (y1 - y0) / 3..y1 - (y1 - y0) / 3 {
                for x in x0..x1 {
                    px[(y * 400 + x) * 3..(y * 400 + x) * 3 + 3].copy_from_slice(&t.rgb);
                }
            }
        }
        px
    }

    #[test]
    fn text_over_a_data_line_and_faint_text_fail() {
        let r = clean();
        assert!(drawn_problems(&r, Some(&bitmap(&r))).is_empty());
        let mut r = clean();
        r.lines.push(((0, 15), (400, 15)));
        assert_eq!(
            drawn_problems(&r, None),
            [
                "text \"title\" lies over a data line",
                "text \"tick\" lies over a data line"
            ]
        );
        let mut r = clean();
        r.texts[1].rgb = [0xF0, 0xE4, 0x42];
        assert_eq!(
            drawn_problems(&r, Some(&bitmap(&r))),
            ["text \"tick\" in #f0e442 on #ffffff: contrast 1.3:1, below 2:1"]
        );
        // Text in a strategy's colour is legible for every colour of the palette.
        for (name, c) in crate::output::palette::COLORS {
            assert!(contrast(c, [255, 255, 255]) >= MIN_CONTRAST, "{name}");
        }
    }

    #[test]
    fn a_clean_chart_passes() {
        assert_eq!(problems(&clean()), Vec::<String>::new());
    }

    #[test]
    fn each_rule_fires_on_its_own() {
        let mut r = clean();
        r.texts[1].bounds = (380.0, 5.0, 420.0, 25.0);
        let p = problems(&r);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("\"tick\"") && p[0].contains("outside the 400×300 canvas"),
            "{p:?}"
        );

        let mut r = clean();
        r.texts[1].bounds = (90.0, 10.0, 130.0, 30.0);
        let p = problems(&r);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("\"title\"") && p[0].contains("overlap"),
            "{p:?}"
        );

        let mut r = clean();
        r.texts[1].em = 12.0;
        let p = problems(&r);
        assert_eq!(p, ["text \"tick\" is 9.0 pt, below 10 pt"]);

        let mut r = clean();
        r.data = vec![(60, 230, 80, 250)];
        let p = problems(&r);
        assert_eq!(
            p,
            ["panel \"p\": the data reach 10 % of the value axis, less than a fifth"]
        );
        r.panels[0].reference = true;
        assert!(problems(&r).is_empty(), "a reference panel is not measured");

        let mut r = clean();
        r.data.clear();
        assert_eq!(problems(&r), ["panel \"p\" holds no data"]);

        // A data line in Okabe–Ito yellow, or in grey at a fifth of its opacity, is faint.
        let mut r = clean();
        r.strokes.push([0xF0, 0xE4, 0x42]);
        assert_eq!(
            problems(&r),
            ["a data line in #f0e442 on white: contrast 1.3:1, below 2:1"]
        );

        // A heat map whose scale leaves out a cell (as when cells below the success target
        // were left out of it), and one that prints a tick twice.
        let mut r = clean();
        r.scales[0].range = (1.0, 1.03);
        assert_eq!(
            problems(&r),
            ["\"map\": 2 cell(s) outside the colour scale 1–1.03 (e.g. 2)"]
        );
        let mut r = clean();
        r.scales[0].ticks = vec!["1.00×".into(), "1.01×".into(), "1.01×".into()];
        assert_eq!(
            problems(&r),
            ["\"map\": the tick label \"1.01×\" is printed twice"]
        );
    }

    #[test]
    fn strokes_count_as_drawn_on_white_and_only_as_data() {
        let ((), rec) = record((10, 10), || {
            stroke([0, 0, 0], 1.0);
            data(|| {
                stroke([0x33, 0x33, 0x33], 0.2);
                stroke([0x00, 0x72, 0xB2], 1.0);
                stroke([0x00, 0x72, 0xB2], 1.0);
            });
        });
        assert_eq!(rec.strokes, vec![[0xD6, 0xD6, 0xD6], [0x00, 0x72, 0xB2]]);
        assert_eq!(problems(&rec).len(), 1, "{:?}", problems(&rec));
    }

    #[test]
    fn only_data_shapes_and_active_recordings_count() {
        shape(Some((0, 0, 1, 1)));
        let ((), rec) = record((10, 10), || {
            shape(Some((0, 0, 1, 1)));
            data(|| shape(Some((2, 2, 3, 3))));
            shape(None);
        });
        assert_eq!(rec.data, vec![(2, 2, 3, 3)]);
        assert!(RECORDING.with(|r| r.borrow().is_none()));
    }
}
