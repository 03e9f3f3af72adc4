//! The back end every chart draws on: plotters' PNG or SVG back end, wrapped so that text is
//! laid out once ([`super::text`]): drawn by our layout on a bitmap, handed to the SVG as text,
//! measured the same way for both; and so that the chart check ([`super::check`]) sees every
//! text box and every data shape as it is drawn.

use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

use super::check;
use super::text;

/// A plotters back end with the charts' own text.
pub(crate) struct Canvas<DB> {
    inner: DB,
    /// True for a bitmap: text is rasterised here; false for SVG: the back end writes it.
    raster: bool,
}

impl<DB: DrawingBackend> Canvas<DB> {
    /// Wraps a bitmap back end (`raster`) or a vector one.
    pub(crate) fn new(inner: DB, raster: bool) -> Self {
        Canvas { inner, raster }
    }
}

/// The bounding box of a list of points.
fn hull(points: &[BackendCoord], pad: i32) -> Option<(i32, i32, i32, i32)> {
    let first = points.first()?;
    let mut b = (first.0, first.1, first.0, first.1);
    for p in points {
        b = (b.0.min(p.0), b.1.min(p.1), b.2.max(p.0), b.3.max(p.1));
    }
    Some((b.0 - pad, b.1 - pad, b.2 + pad, b.3 + pad))
}

/// Tells the chart check the colour of a line or outline.
fn stroke<S: BackendStyle>(style: &S) {
    let c = style.color();
    check::stroke([c.rgb.0, c.rgb.1, c.rgb.2], c.alpha);
}

impl<DB: DrawingBackend> DrawingBackend for Canvas<DB> {
    type ErrorType = DB::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        check::shape(hull(&[from, to], 0));
        check::line(&[from, to]);
        stroke(style);
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        check::shape(hull(&[upper_left, bottom_right], 0));
        if !fill {
            stroke(style);
        }
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let points: Vec<BackendCoord> = path.into_iter().collect();
        check::shape(hull(&points, 0));
        check::line(&points);
        stroke(style);
        self.inner.draw_path(points, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        check::shape(hull(&[center], radius as i32));
        if !fill {
            stroke(style);
        }
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let points: Vec<BackendCoord> = vert.into_iter().collect();
        check::shape(hull(&points, 0));
        self.inner.fill_polygon(points, style)
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 || text.trim().is_empty() {
            return Ok(());
        }
        let rotation = style.transform();
        let placed = text::place(text, style.size(), style.anchor(), rotation.clone(), pos);
        let rgb = [color.rgb.0, color.rgb.1, color.rgb.2];
        check::text(text, placed.line.em, placed.bounds, rgb);
        if !self.raster {
            return self.inner.draw_text(text, style, pos);
        }
        let (w, h) = self.inner.get_size();
        let mut result = Ok(());
        text::raster(&placed, rotation, pos, |x, y, coverage| {
            if result.is_ok() && x >= 0 && y >= 0 && x < w as i32 && y < h as i32 {
                let alpha = color.alpha * f64::from(coverage);
                if alpha > 0.0 {
                    result = self.inner.draw_pixel(
                        (x, y),
                        BackendColor {
                            alpha,
                            rgb: color.rgb,
                        },
                    );
                }
            }
        });
        result
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        Ok(text::size_of(text, style.size()))
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }
}
