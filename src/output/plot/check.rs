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
//!   far above the data) cannot leave them as a line on the floor.

use std::cell::{Cell, RefCell};

/// A text as drawn: its content, em (px) and box on the canvas `(x0, y0, x1, y1)`.
#[derive(Debug, Clone)]
pub(crate) struct TextBox {
    pub text: String,
    pub em: f64,
    pub bounds: (f64, f64, f64, f64),
}

/// A panel: its name, its plotting area in pixels `(x0, y0, x1, y1)` (the value axis runs
/// from `y1` up to `y0`), and whether it is a reference panel the data rule skips.
#[derive(Debug, Clone)]
pub(crate) struct Panel {
    pub name: String,
    pub area: (i32, i32, i32, i32),
    pub reference: bool,
}

/// Everything one chart drew that the rules look at.
#[derive(Debug, Default, Clone)]
pub(crate) struct Recording {
    pub size: (u32, u32),
    pub texts: Vec<TextBox>,
    pub panels: Vec<Panel>,
    /// Bounding boxes of the shapes drawn as data.
    pub data: Vec<(i32, i32, i32, i32)>,
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

/// Called by the canvas for every text.
pub(crate) fn text(text: &str, em: f64, bounds: (f64, f64, f64, f64)) {
    RECORDING.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.texts.push(TextBox {
                text: text.to_string(),
                em,
                bounds,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str, em: f64, bounds: (f64, f64, f64, f64)) -> TextBox {
        TextBox {
            text: t.into(),
            em,
            bounds,
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
