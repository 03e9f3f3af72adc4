//! The jitter picture of `jitterlab delays --plot`: for each jitter kind a panel, for each
//! retry number the sampled sleeps as a strip of dots with their 25–75 % box, 5–95 % whiskers
//! and median, on shared axes.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::category_label;
use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, Swatch};
use crate::backoff::Jitter;
use crate::output::results::fmt_number;

/// At most this many dots per (kind, retry) in the strip.
const MAX_DOTS: usize = 160;

struct Stats {
    p5: f64,
    p25: f64,
    p50: f64,
    p75: f64,
    p95: f64,
}

/// The `q` quantile of sorted values (linear interpolation).
fn q(sorted: &[f64], q: f64) -> f64 {
    let x = q * (sorted.len() - 1) as f64;
    let i = x.floor() as usize;
    let j = (i + 1).min(sorted.len() - 1);
    sorted[i] + (sorted[j] - sorted[i]) * (x - i as f64)
}

struct Column {
    retry: u32,
    stats: Stats,
    dots: Vec<f64>,
}

struct Panel {
    jitter: Jitter,
    color: usize,
    columns: Vec<Column>,
}

pub(crate) struct Delays {
    panels: Vec<Panel>,
    max_retry: u32,
    max_ms: f64,
    per_retry: usize,
}

/// A deterministic offset in -0.5..0.5 for dot `i` (golden-ratio sequence): the strip is the
/// same on every run.
fn spread(i: usize) -> f64 {
    ((i as f64 * 0.618_033_988_75) % 1.0) - 0.5
}

impl Delays {
    pub(crate) fn new(samples: &[(Jitter, u32, f64)]) -> std::result::Result<Delays, String> {
        let mut kinds: Vec<Jitter> = Vec::new();
        for (j, _, _) in samples {
            if !kinds.contains(j) {
                kinds.push(*j);
            }
        }
        if kinds.is_empty() {
            return Err("no samples to draw".to_string());
        }
        if let Some(bad) = samples.iter().find(|s| !s.2.is_finite() || s.2 < 0.0) {
            return Err(format!(
                "a delay must be a finite number of ms >= 0, found {} for {}",
                bad.2, bad.0
            ));
        }
        let mut panels = Vec::new();
        let mut max_retry = 1;
        let mut max_ms: f64 = 0.0;
        let mut per_retry = 0;
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        let slots = crate::output::palette::slots(&names);
        for (&ci, kind) in slots.iter().zip(&kinds) {
            let mut retries: Vec<u32> = samples
                .iter()
                .filter(|s| s.0 == *kind)
                .map(|s| s.1)
                .collect();
            retries.sort_unstable();
            retries.dedup();
            let mut columns = Vec::new();
            for r in retries {
                let mut v: Vec<f64> = samples
                    .iter()
                    .filter(|s| s.0 == *kind && s.1 == r)
                    .map(|s| s.2)
                    .collect();
                per_retry = per_retry.max(v.len());
                let step = v.len().div_ceil(MAX_DOTS).max(1);
                let dots: Vec<f64> = v.iter().step_by(step).copied().collect();
                v.sort_by(f64::total_cmp);
                max_ms = max_ms.max(*v.last().expect("at least one sample"));
                max_retry = max_retry.max(r);
                columns.push(Column {
                    retry: r,
                    stats: Stats {
                        p5: q(&v, 0.05),
                        p25: q(&v, 0.25),
                        p50: q(&v, 0.5),
                        p75: q(&v, 0.75),
                        p95: q(&v, 0.95),
                    },
                    dots,
                });
            }
            panels.push(Panel {
                jitter: *kind,
                color: ci,
                columns,
            });
        }
        Ok(Delays {
            panels,
            max_retry,
            max_ms,
            per_retry,
        })
    }

    pub(crate) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        let legend = vec![
            LegendItem::new(Swatch::Dot(style::MUTED), "samples"),
            LegendItem::new(
                Swatch::Box(style::color(0).mix(0.35)),
                "middle 50 % (p25–p75)",
            ),
            LegendItem::new(Swatch::Line(INK), "p5–p95 and median"),
        ];
        let title = format!(
            "Sleep before each retry, per jitter kind ({} samples per retry)",
            fmt_number(self.per_retry as f64)
        );
        let body = style::frame(root, &title, None, &legend)?;
        let unit = style::time_unit(self.max_ms);
        let y_max = style::from_zero(self.max_ms / unit.div, 0.06);
        let n = self.max_retry as usize;
        let labels: Vec<String> = (0..=n).map(|k| k.to_string()).collect();
        let n_panels = self.panels.len();
        let areas = style::panels(
            &body.margin(0, 10, 10, 20),
            n_panels,
            style::grid_wide(n_panels),
            None,
        )?;
        for (panel, (area, bottom, left)) in self.panels.iter().zip(areas) {
            let color = style::color(panel.color);
            let mut chart = ChartBuilder::on(&area)
                .caption(
                    panel.jitter.name(),
                    style::text(18.0, &style::text_color(panel.color)),
                )
                .margin(6)
                .x_label_area_size(if bottom { 44 } else { 26 })
                .y_label_area_size(if left { 78 } else { 62 })
                .build_cartesian_2d(0.5..(n as f64 + 0.5), 0.0..y_max)?;
            let x_fmt = |v: &f64| category_label(&labels, *v);
            let y_fmt = |v: &f64| style::tick(*v);
            let mut mesh = chart.configure_mesh();
            mesh.disable_x_mesh()
                .house_style()
                .x_labels(n.min(20))
                .y_labels(6)
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt);
            if bottom {
                mesh.x_desc("retry number");
            }
            if left {
                mesh.y_desc(format!("sleep ({})", unit.name));
            }
            mesh.draw()?;
            for col in &panel.columns {
                let x = col.retry as f64;
                let s = &col.stats;
                let d = |v: f64| v / unit.div;
                chart.draw_series(col.dots.iter().enumerate().map(|(i, v)| {
                    Circle::new((x + spread(i) * 0.5, d(*v)), 2, color.mix(0.35).filled())
                }))?;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.3, d(s.p25)), (x + 0.3, d(s.p75))],
                    color.mix(0.30).filled(),
                )))?;
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.3, d(s.p25)), (x + 0.3, d(s.p75))],
                    color.stroke_width(1),
                )))?;
                for (a, b) in [(s.p5, s.p25), (s.p75, s.p95)] {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(x, d(a)), (x, d(b))],
                        INK.stroke_width(2),
                    )))?;
                }
                for (v, half, w) in [(s.p5, 0.12, 2), (s.p95, 0.12, 2), (s.p50, 0.3, 3)] {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(x - half, d(v)), (x + half, d(v))],
                        INK.stroke_width(w),
                    )))?;
                }
            }
        }
        Ok(())
    }
}
