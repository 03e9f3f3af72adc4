//! The trade-off chart: amplification against p99 latency for every (point, strategy), the
//! Pareto front (lower is better on both) highlighted and the recommendation marked.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, MUTED, Swatch};
use crate::metric::Metric;
use crate::output::results::{ResultFolder, fmt_ms, fmt_number};
use crate::stats::pareto_front;

pub(crate) struct Dot {
    strategy: String,
    color: usize,
    label: String,
    amplification: f64,
    p99_ms: f64,
    on_front: bool,
    recommended: bool,
}

pub(crate) struct Pareto {
    dots: Vec<Dot>,
    strategies: Vec<(String, usize)>,
    any_recommended: bool,
}

pub(crate) fn build(f: &ResultFolder) -> Option<(String, String, Pareto)> {
    let color_of = |s: &str| f.strategies.iter().position(|x| x == s).unwrap_or(0);
    let label_of = |point: u32| {
        f.point(point)
            .map(|p| p.values.join(" / "))
            .filter(|l| !l.is_empty())
    };
    let mut dots = Vec::new();
    let from_file = f.pareto.is_some();
    if let Some(rows) = &f.pareto {
        for r in rows {
            dots.push(Dot {
                strategy: r.strategy.clone(),
                color: color_of(&r.strategy),
                label: label_of(r.point)
                    .map_or_else(|| r.strategy.clone(), |l| format!("{} @ {l}", r.strategy)),
                amplification: r.amplification.unwrap_or(f64::NAN),
                p99_ms: r.latency_p99_ms.unwrap_or(f64::NAN),
                on_front: r.on_front,
                recommended: r.recommended,
            });
        }
    } else {
        for p in &f.points {
            for s in &f.strategies {
                let a = f
                    .aggregate_of(p.index, s, Metric::Amplification)
                    .and_then(|r| r.mean);
                let l = f
                    .aggregate_of(p.index, s, Metric::LatencyP99Ms)
                    .and_then(|r| r.mean);
                if let (Some(a), Some(l)) = (a, l) {
                    dots.push(Dot {
                        strategy: s.clone(),
                        color: color_of(s),
                        label: label_of(p.index)
                            .map_or_else(|| s.clone(), |lab| format!("{s} @ {lab}")),
                        amplification: a,
                        p99_ms: l,
                        on_front: false,
                        recommended: false,
                    });
                }
            }
        }
        let coords: Vec<(f64, f64)> = dots.iter().map(|d| (d.amplification, d.p99_ms)).collect();
        for (d, on) in dots.iter_mut().zip(pareto_front(&coords)) {
            d.on_front = on;
        }
    }
    dots.retain(|d| d.amplification.is_finite() && d.p99_ms.is_finite());
    if dots.is_empty() {
        return None;
    }
    let strategies: Vec<(String, usize)> = f
        .strategies
        .iter()
        .enumerate()
        .filter(|(_, s)| dots.iter().any(|d| &d.strategy == *s))
        .map(|(i, s)| (s.clone(), i))
        .collect();
    let any_recommended = dots.iter().any(|d| d.recommended);
    let title = "Trade-off: load amplification against p99 latency".to_string();
    let mut guide = String::from(
        "Each dot is one strategy at one sweep point: right means more attempts per request (more load on the server), up means a slower tail. \
         Lower-left is better on both; the outlined dots joined by the dashed line form the Pareto front, the choices that nothing else beats on both at once. ",
    );
    if !from_file {
        guide.push_str("The front is computed here from the means in aggregate.csv. ");
    }
    if let Some(r) = dots.iter().find(|d| d.recommended) {
        guide.push_str(&format!(
            "The ring marks the recommendation: {} ({}×, p99 {}).",
            r.label,
            fmt_number(r.amplification),
            fmt_ms(r.p99_ms)
        ));
    } else {
        let n = dots.iter().filter(|d| d.on_front).count();
        guide.push_str(&format!("{n} of {} dots are on the front.", dots.len()));
    }
    Some((
        title,
        guide,
        Pareto {
            dots,
            strategies,
            any_recommended,
        },
    ))
}

impl Pareto {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let mut legend: Vec<LegendItem> = self
            .strategies
            .iter()
            .map(|(s, c)| LegendItem::new(Swatch::Dot(style::color(*c)), s.clone()))
            .collect();
        legend.push(LegendItem::new(
            Swatch::Dashed(INK),
            "Pareto front (outlined dots)",
        ));
        if self.any_recommended {
            legend.push(LegendItem::new(Swatch::Ring(INK), "recommended"));
        }
        let body = style::frame(root, title, None, &legend)?;
        let (a_lo, a_hi) = self
            .dots
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
                (lo.min(d.amplification), hi.max(d.amplification))
            });
        let (l_lo, l_hi) = self
            .dots
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
                (lo.min(d.p99_ms), hi.max(d.p99_ms))
            });
        let unit = style::time_unit(l_hi);
        let (x0, x1) = style::padded(a_lo, a_hi, 0.08);
        let (y0, y1) = style::padded(l_lo / unit.div, l_hi / unit.div, 0.10);
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .margin_right(40)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0.max(0.0)..y1)?;
        chart
            .configure_mesh()
            .house_style()
            .x_label_formatter(&|v| style::tick(*v))
            .y_label_formatter(&|v| style::tick(*v))
            .x_desc("amplification (attempts per request)  →  more load")
            .y_desc(format!("p99 latency ({})  →  slower tail", unit.name))
            .draw()?;

        let mut front: Vec<(f64, f64)> = self
            .dots
            .iter()
            .filter(|d| d.on_front)
            .map(|d| (d.amplification, d.p99_ms / unit.div))
            .collect();
        front.sort_by(|a, b| a.0.total_cmp(&b.0));
        if front.len() > 1 {
            let mut steps = Vec::with_capacity(front.len() * 2);
            for (i, p) in front.iter().enumerate() {
                if i > 0 {
                    steps.push((p.0, front[i - 1].1));
                }
                steps.push(*p);
            }
            chart.draw_series(DashedLineSeries::new(
                steps,
                8,
                5,
                INK.mix(0.8).stroke_width(2),
            ))?;
        }
        for d in self.dots.iter().filter(|d| !d.on_front) {
            let p = (d.amplification, d.p99_ms / unit.div);
            chart.draw_series(std::iter::once(Circle::new(
                p,
                5,
                style::color(d.color).mix(0.55).filled(),
            )))?;
        }
        for d in self.dots.iter().filter(|d| d.on_front) {
            let p = (d.amplification, d.p99_ms / unit.div);
            let c = style::color(d.color);
            chart.draw_series(std::iter::once(Circle::new(p, 8, c.filled())))?;
            chart.draw_series(std::iter::once(Circle::new(p, 8, INK.stroke_width(2))))?;
        }
        // Labels: the recommended dot first, then the front left to right, each only where it
        // does not overlap a label already placed (estimated from its length in pixels).
        let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
        let mut order: Vec<&Dot> = self
            .dots
            .iter()
            .filter(|d| d.on_front || d.recommended)
            .collect();
        order.sort_by(|a, b| {
            b.recommended
                .cmp(&a.recommended)
                .then(a.amplification.total_cmp(&b.amplification))
        });
        for d in order {
            let p = (d.amplification, d.p99_ms / unit.div);
            let (x, y) = chart.backend_coord(&p);
            let (w, h) = ((d.label.chars().count() as i32) * 7 + 4, 16);
            let rect = (x + 11, y - 9 - h, x + 11 + w, y - 9);
            let overlaps = placed
                .iter()
                .any(|r| rect.0 < r.2 && r.0 < rect.2 && rect.1 < r.3 && r.1 < rect.3);
            if overlaps {
                continue;
            }
            placed.push(rect);
            chart.draw_series(std::iter::once(
                EmptyElement::at(p)
                    + Text::new(
                        d.label.clone(),
                        (11, -9),
                        style::text(13.0, &MUTED).pos(Pos::new(HPos::Left, VPos::Bottom)),
                    ),
            ))?;
        }
        for d in self.dots.iter().filter(|d| d.recommended) {
            let p = (d.amplification, d.p99_ms / unit.div);
            chart.draw_series(std::iter::once(Circle::new(p, 15, INK.stroke_width(3))))?;
        }
        Ok(())
    }
}
