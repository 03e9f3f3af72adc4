//! Text on the charts: one layout of the embedded DejaVu Sans that the bitmap is drawn with,
//! that every size estimate uses, and that the chart check measures.
//!
//! Why not plotters' own: its `ab_glyph` text (plotters 0.3.7, `style/font/ab_glyph.rs`)
//! places each glyph on a baseline of its own, `(size / 2 + px_bounds.min.y) as i32`, and
//! `as i32` truncates towards zero, so a glyph whose top lies above the half-size line is
//! rounded down and one below it (a full stop, a comma) is rounded up: the decimal point sits
//! one pixel above the digits ("27·0"). It also draws each glyph from its truncated pen
//! position and drops the pixel of the left side bearing that `px_bounds` holds, so glyphs
//! with a bearing of a pixel or more shift left and gaps differ by a pixel ("p 99"). Here every
//! glyph of a string shares one integer baseline, is positioned at its exact (fractional) pen
//! position with its bearing, and is rasterised there by `ab_glyph`.
//!
//! Sizes follow plotters' convention, the one its SVG output writes: a font of size `s` has an
//! em of `s / 1.24` px. Anchors follow the SVG output too (`dy` of 0.76 em at the top, half an
//! x-height at the centre), so a PNG and its SVG place text alike.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, GlyphId, PxScale, point};
use plotters::style::FontTransform;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The embedded font file.
pub(crate) static FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Plotters' size → em ratio (its SVG writes `font-size = size / 1.24`).
const SIZE_PER_EM: f64 = 1.24;
/// Height of the ascenders (`b`, `d`, `l`, parentheses) above the baseline, in em: DejaVu
/// Sans' 1556 / 2048. SVG's `dy = 0.76em` for a top anchor puts them on the anchor.
const ASCENT_EM: f64 = 0.76;
/// Depth of the descenders below the baseline, in em (DejaVu Sans' hhea descender, 483/2048).
const DESCENT_EM: f64 = 0.236;
/// Half DejaVu Sans' x-height (1120 / 2048 em): SVG's `0.5ex` for a centred anchor.
const HALF_X_HEIGHT_EM: f64 = 0.2734;

fn font() -> &'static FontRef<'static> {
    static FONT: OnceLock<FontRef<'static>> = OnceLock::new();
    // The embedded bytes are a valid TrueType file (a unit test parses them).
    FONT.get_or_init(|| FontRef::try_from_slice(FONT_BYTES).expect("embedded DejaVu Sans"))
}

/// The em of a plotters font size, in px.
pub(crate) fn em(size: f64) -> f64 {
    size / SIZE_PER_EM
}

/// A string laid out on one baseline: each glyph and its pen position (px, from the string's
/// start), and the advance width of the whole.
pub(crate) struct Line {
    glyphs: Vec<(GlyphId, f64)>,
    /// Sum of advances and kerning, px.
    pub width: f64,
    /// The em, px.
    pub em: f64,
}

/// Lays out `text` at plotters size `size`: advances and kerning of the font, no rounding.
pub(crate) fn line(text: &str, size: f64) -> Line {
    let f = font();
    let em = em(size);
    let per_unit = em / f64::from(f.units_per_em().unwrap_or(2048.0));
    let mut pen = 0.0;
    let mut prev: Option<GlyphId> = None;
    let mut glyphs = Vec::with_capacity(text.len());
    for c in text.chars() {
        let id = f.glyph_id(c);
        if let Some(p) = prev {
            pen += f64::from(f.kern_unscaled(p, id)) * per_unit;
        }
        glyphs.push((id, pen));
        pen += f64::from(f.h_advance_unscaled(id)) * per_unit;
        prev = Some(id);
    }
    Line {
        glyphs,
        width: pen,
        em,
    }
}

/// The size a text takes, as plotters asks for it (`estimate_text_size`): its advance width
/// and one em of height, rounded up.
pub(crate) fn size_of(text: &str, size: f64) -> (u32, u32) {
    let l = line(text, size);
    (l.width.ceil() as u32, l.em.ceil() as u32)
}

/// A text placed on the canvas: where its baseline starts in the text's own (unrotated)
/// frame, relative to the anchor, and the box it occupies on the canvas.
pub(crate) struct Placed {
    pub line: Line,
    /// The baseline's start relative to the anchor, before rotation: x fractional, y whole.
    pub origin: (f64, i32),
    /// The box on the canvas, `(x0, y0, x1, y1)` px: advance width × ascender to descender.
    pub bounds: (f64, f64, f64, f64),
}

/// Places `text` of plotters size `size` at `anchor` (a pixel) with `pos` and `rotation`, as
/// the SVG output places it.
pub(crate) fn place(
    text: &str,
    size: f64,
    pos: Pos,
    rotation: FontTransform,
    anchor: (i32, i32),
) -> Placed {
    let line = line(text, size);
    let em = line.em;
    let x = match pos.h_pos {
        HPos::Left => 0.0,
        HPos::Center => -line.width / 2.0,
        HPos::Right => -line.width,
    };
    let baseline = match pos.v_pos {
        VPos::Top => ASCENT_EM * em,
        VPos::Center => HALF_X_HEIGHT_EM * em,
        VPos::Bottom => -HALF_X_HEIGHT_EM * em,
    }
    .round() as i32;
    let (top, bottom) = (
        f64::from(baseline) - ASCENT_EM * em,
        f64::from(baseline) + DESCENT_EM * em,
    );
    let corners = [(x, top), (x + line.width, bottom)].map(|(cx, cy)| turn(&rotation, cx, cy));
    let (ax, ay) = (f64::from(anchor.0), f64::from(anchor.1));
    let bounds = (
        ax + corners[0].0.min(corners[1].0),
        ay + corners[0].1.min(corners[1].1),
        ax + corners[0].0.max(corners[1].0),
        ay + corners[0].1.max(corners[1].1),
    );
    Placed {
        line,
        origin: (x, baseline),
        bounds,
    }
}

/// A point of the text's frame on the canvas, relative to the anchor (plotters' rotations).
fn turn(rotation: &FontTransform, x: f64, y: f64) -> (f64, f64) {
    match rotation {
        FontTransform::Rotate90 => (-y, x),
        FontTransform::Rotate180 => (-x, -y),
        FontTransform::Rotate270 => (y, -x),
        _ => (x, y),
    }
}

/// Rasterises a placed text: calls `pixel(x, y, coverage)` for every pixel of every glyph, in
/// canvas coordinates (coverage 0 to 1).
pub(crate) fn raster(
    placed: &Placed,
    rotation: FontTransform,
    anchor: (i32, i32),
    mut pixel: impl FnMut(i32, i32, f32),
) {
    let f = font();
    let upem = f.units_per_em().unwrap_or(2048.0);
    // ab_glyph scales by ascent − descent; this is the scale whose em is `line.em`.
    let scale = PxScale::from((placed.line.em * f64::from(f.height_unscaled() / upem)) as f32);
    let (x0, baseline) = placed.origin;
    for &(id, pen) in &placed.line.glyphs {
        let glyph = id.with_scale_and_position(scale, point((x0 + pen) as f32, baseline as f32));
        let Some(outline) = f.outline_glyph(glyph) else {
            continue; // a space
        };
        let b = outline.px_bounds();
        let (bx, by) = (b.min.x as i32, b.min.y as i32);
        outline.draw(|gx, gy, c| {
            let (tx, ty) = turn(
                &rotation,
                f64::from(bx + gx as i32),
                f64::from(by + gy as i32),
            );
            pixel(anchor.0 + tx as i32, anchor.1 + ty as i32, c.min(1.0));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lowest row a text's ink covers (coverage at least a half), drawn with a top anchor
    /// at the origin, at `size`.
    fn ink_bottom(text: &str, size: f64) -> i32 {
        let pos = Pos::new(HPos::Left, VPos::Top);
        let placed = place(text, size, pos, FontTransform::None, (0, 0));
        let mut bottom = i32::MIN;
        raster(&placed, FontTransform::None, (0, 0), |_, y, c| {
            if c >= 0.5 {
                bottom = bottom.max(y);
            }
        });
        bottom
    }

    #[test]
    fn every_glyph_sits_on_one_baseline() {
        // A full stop and a flat-bottomed digit end on the same row, the baseline, at every
        // size the charts use (plotters' own layout put the stop a row higher at 13, 15, 17).
        for size in [13.0, 15.0, 17.0, 18.0, 19.0, 28.0] {
            assert_eq!(ink_bottom(".", size), ink_bottom("2", size), "size {size}");
            assert_eq!(
                ink_bottom("27.0", size),
                ink_bottom("2", size),
                "size {size}"
            );
        }
    }

    #[test]
    fn glyphs_keep_their_side_bearings() {
        // The ink of "p99" starts at each glyph's pen position plus its left side bearing:
        // the gaps between the glyphs' ink are the font's, to the pixel.
        let f = font();
        let placed = place(
            "p99",
            17.0,
            Pos::new(HPos::Left, VPos::Top),
            FontTransform::None,
            (0, 0),
        );
        let mut first_column = Vec::new();
        for &(id, pen) in &placed.line.glyphs {
            let lsb = f64::from(f.h_side_bearing_unscaled(id)) * placed.line.em / 2048.0;
            let mut min_x = i32::MAX;
            let upem = f.units_per_em().unwrap();
            let scale =
                PxScale::from((placed.line.em * f64::from(f.height_unscaled() / upem)) as f32);
            let g = id.with_scale_and_position(scale, point(pen as f32, 0.0));
            let o = f.outline_glyph(g).unwrap();
            let b = o.px_bounds();
            o.draw(|x, _, c| {
                if c > 0.5 {
                    min_x = min_x.min(b.min.x as i32 + x as i32);
                }
            });
            first_column.push((pen + lsb, min_x));
        }
        for (expected, got) in first_column {
            assert!(
                (expected - f64::from(got)).abs() <= 1.0,
                "{expected} vs {got}"
            );
        }
    }

    #[test]
    fn boxes_follow_the_anchor_and_the_rotation() {
        let at = |h, v, r| place("Tick 10", 17.0, Pos::new(h, v), r, (100, 200)).bounds;
        let (x0, y0, x1, y1) = at(HPos::Left, VPos::Top, FontTransform::None);
        assert_eq!(
            (x0, y0),
            (100.0, 200.0 + (0.76 * em(17.0)).round() - 0.76 * em(17.0))
        );
        assert!(x1 > x0 + 40.0 && y1 > y0 + 12.0, "{x1} {y1}");
        let (cx0, _, cx1, _) = at(HPos::Center, VPos::Center, FontTransform::None);
        assert!(((cx0 + cx1) / 2.0 - 100.0).abs() < 1e-9);
        // Rotated a quarter turn (a y-axis title): tall and narrow.
        let (rx0, ry0, rx1, ry1) = at(HPos::Center, VPos::Top, FontTransform::Rotate270);
        assert!(ry1 - ry0 > rx1 - rx0, "{rx0} {ry0} {rx1} {ry1}");
        assert!(((ry0 + ry1) / 2.0 - 200.0).abs() < 1e-9);
        assert_eq!(size_of("", 17.0).0, 0);
    }
}
