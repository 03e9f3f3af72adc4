//! The trade-off chart: amplification against p99 latency for every candidate, one panel per
//! world point (never one front across loads or faults). Candidates below the success floor
//! are hollow and never on the front; the front joins the others that nothing beats on both;
//! `recommend`'s choice is ringed.

use std::collections::HashMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use plotters::coord::types::RangedCoordf64;

use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, MUTED, Swatch};
use super::text;
use crate::metric::Metric;
use crate::output::design::{Candidate, Design};
use crate::output::labels;
use crate::output::results::{ParetoRow, ResultFolder, fmt_ms, fmt_number};
use crate::stats::pareto_fronts;

/// At most this many world points get a panel.
const MAX_PANELS: usize = 9;

pub(crate) struct Dot {
    color: usize,
    label: String,
    amplification: f64,
    p99_ms: f64,
    eligible: bool,
    on_front: bool,
    recommended: bool,
}

struct Panel {
    caption: String,
    dots: Vec<Dot>,
}

pub(crate) struct Pareto {
    panels: Vec<Panel>,
    strategies: Vec<(String, usize)>,
    floor: String,
    subtitle: String,
    /// The load per request on the x axis: `amplification`, a chain's whole-chain figure.
    load: Metric,
}

/// The world points that get a panel: all when they fit, else for each world key with more
/// than three values its first, middle and last, in grid order.
fn panel_worlds(f: &ResultFolder, design: &Design) -> Vec<usize> {
    let n = design.worlds.len();
    if n <= MAX_PANELS {
        return (0..n).collect();
    }
    let keep: Vec<Vec<String>> = (0..design.world_keys.len())
        .map(|k| {
            let mut values: Vec<String> = Vec::new();
            for w in &design.worlds {
                if !values.contains(&w.values[k]) {
                    values.push(w.values[k].clone());
                }
            }
            if values.len() <= 3 {
                values
            } else {
                let last = values.len() - 1;
                vec![
                    values[0].clone(),
                    values[last / 2].clone(),
                    values[last].clone(),
                ]
            }
        })
        .collect();
    let _ = f;
    (0..n)
        .filter(|&w| (design.worlds[w].values.iter().enumerate()).all(|(k, v)| keep[k].contains(v)))
        .take(MAX_PANELS)
        .collect()
}

/// The panels of the world points `worlds`: every candidate a dot, eligible and on the front
/// as `recommend` wrote them in `pareto.csv` (when it wrote the `eligible` column), else by
/// the success target. Fronts are computed per world point, over every world point.
fn panels(f: &ResultFolder, design: &Design, worlds: &[usize], from_file: bool) -> Vec<Panel> {
    let all: Vec<(usize, &Candidate)> = design.all_candidates().collect();
    let coords: Vec<(f64, f64)> = (all.iter())
        .map(|(_, c)| {
            (
                Design::mean(f, c, f.load_metric()),
                Design::mean(f, c, Metric::LatencyP99Ms),
            )
        })
        .collect();
    let rows: HashMap<(u32, &str), &ParetoRow> = (f.pareto.iter().flatten())
        .filter(|_| from_file)
        .map(|r| ((r.point, r.strategy.as_str()), r))
        .collect();
    let row = |c: &Candidate| rows.get(&(c.point, c.strategy.as_str())).copied();
    let eligible: Vec<bool> = (all.iter())
        .map(|(_, c)| match row(c) {
            Some(r) => r.eligible == Some(true),
            None => design.meets_target(f, c),
        })
        .collect();
    let spans: Vec<[(f64, f64); 2]> = (all.iter())
        .map(|(_, c)| {
            [f.load_metric(), Metric::LatencyP99Ms].map(|m| {
                let r = f.aggregate_of(c.point, &c.strategy, m);
                let end = |e: Option<f64>| e.unwrap_or(f64::NAN);
                r.map_or((f64::NAN, f64::NAN), |r| {
                    (end(r.ci95_low), end(r.ci95_high))
                })
            })
        })
        .collect();
    let groups: Vec<usize> = all.iter().map(|(w, _)| *w).collect();
    let fronts = pareto_fronts(&coords, &spans, &groups, &eligible);
    let mut panels = Vec::new();
    for &w in worlds {
        let dots: Vec<Dot> = (all.iter().enumerate())
            .filter(|(_, (cw, _))| *cw == w)
            .filter(|(i, _)| coords[*i].0.is_finite() && coords[*i].1.is_finite())
            .map(|(i, (_, c))| Dot {
                color: c.color,
                label: design.candidate_label(f, c),
                amplification: coords[i].0,
                p99_ms: coords[i].1,
                eligible: eligible[i],
                on_front: row(c).map_or(fronts[i], |r| r.on_front),
                recommended: row(c).is_some_and(|r| r.recommended),
            })
            .collect();
        if !dots.is_empty() {
            panels.push(Panel {
                caption: design.world_label(f, w),
                dots,
            });
        }
    }
    panels
}

pub(crate) fn build(f: &ResultFolder, design: &Design) -> Option<(String, String, Pareto)> {
    let worlds = panel_worlds(f, design);
    // One success definition for every chart: the success target. pareto.csv's front and
    // recommendation are drawn when `recommend` wrote them under that same rule (its
    // eligibility is the target's everywhere), else the chart computes its own fronts and
    // says that the file answers other constraints.
    let written = (f.pareto.as_ref()).filter(|rows| rows.iter().all(|r| r.eligible.is_some()));
    let same_rule = written.is_some_and(|rows| {
        rows.iter().all(|r| {
            let c = Candidate {
                point: r.point,
                strategy: r.strategy.clone(),
                color: 0,
            };
            r.eligible == Some(design.meets_target(f, &c))
        })
    });
    let from_file = written.is_some() && same_rule;
    let panels = panels(f, design, &worlds, from_file);
    if panels.is_empty() {
        return None;
    }
    let strategies: Vec<(String, usize)> = (f.strategies.iter().cloned())
        .zip(crate::output::palette::slots(&f.strategies))
        .collect();
    let floor = format!("success ≥ {}", super::dist::pct(design.target));
    let shown = (worlds.len(), design.worlds.len());
    let mut guide = guide(f, design, &panels, &floor, shown);
    if written.is_some() && !same_rule {
        guide.push_str(&format!(
            " pareto.csv holds the answer of jitterlab recommend under other constraints (a success floor other than the target, \
             or a limit on latency or amplification); this chart keeps to the {floor} target of every other chart and \
             computes its fronts itself: run recommend without constraints to draw its answer here."
        ));
    }
    let subtitle = if panels.len() == 1 {
        panels[0].caption.clone()
    } else {
        String::new()
    };
    let title = "Trade-off: load amplification against p99 latency".to_string();
    let chart = Pareto {
        panels,
        strategies,
        floor,
        subtitle,
        load: f.load_metric(),
    };
    Some((title, guide, chart))
}

/// The reading guide: the front's rule, the world points, and the recommendation (or where
/// nothing meets the floor).
fn guide(
    f: &ResultFolder,
    design: &Design,
    panels: &[Panel],
    floor: &str,
    (shown, worlds): (usize, usize),
) -> String {
    let mut guide = format!(
        "Each dot is one candidate (a strategy and the choice values of the sweep): right means more attempts per request (more load on the server), up means a slower tail. \
         Lower-left is better on both. The outlined dots joined by the dashed line form the Pareto front: among the candidates that meet {floor}, \
         those nothing beats on both at once, nor on one beyond the replications' 95 % intervals while matching the other within them \
         (a lower p99 inside the noise is no trade-off for more load). Hollow dots miss it and are never on the front: a policy that drops requests is not cheap, it fails. "
    );
    if worlds > 1 {
        let keys: Vec<String> = (design.world_keys.iter())
            .map(|&k| labels::Reading::of(f).key(&f.sweep_keys[k]).0)
            .collect();
        let some = if shown < worlds {
            let all = match f.pareto.is_some() {
                true => "pareto.csv holds every one",
                false => "jitterlab recommend writes every one to pareto.csv",
            };
            format!("; {shown} of the {worlds} world points are shown, {all}")
        } else {
            String::new()
        };
        guide.push_str(&format!(
            "Fronts are drawn for one point of the world keys at a time ({}), never across them{some}. ",
            keys.join(", ")
        ));
    }
    let recommended: Vec<&Dot> = (panels.iter())
        .flat_map(|p| p.dots.iter())
        .filter(|d| d.recommended)
        .collect();
    if let [r] = recommended[..] {
        guide.push_str(&format!(
            "The sight (a ring with four ticks) marks the recommendation: {} ({}×, p99 {}).",
            r.label,
            fmt_number(r.amplification),
            fmt_ms(r.p99_ms)
        ));
    } else if !recommended.is_empty() {
        guide.push_str(
            "Sights (a ring with four ticks) mark recommend's choice at each world point.",
        );
    } else {
        let missing = (panels.iter())
            .filter(|p| !p.dots.iter().any(|d| d.eligible))
            .count();
        if missing > 0 {
            guide.push_str(&format!(
                "In {missing} of the {} panels no candidate meets {floor}.",
                panels.len()
            ));
        }
    }
    guide.trim_end().to_string()
}

impl Pareto {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let dots = || self.panels.iter().flat_map(|p| p.dots.iter());
        let mut legend: Vec<LegendItem> = (self.strategies.iter())
            .filter(|(_, c)| dots().any(|d| d.color == *c))
            .map(|(s, c)| LegendItem::new(Swatch::Dot(style::color(*c)), s.clone()))
            .collect();
        legend.push(LegendItem::new(Swatch::Dashed(INK), "Pareto front"));
        if dots().any(|d| !d.eligible) {
            legend.push(LegendItem::new(
                Swatch::Hollow(INK),
                format!("misses {}", self.floor),
            ));
        }
        if dots().any(|d| d.recommended) {
            legend.push(LegendItem::new(Swatch::Target(INK), "recommended"));
        }
        let subtitle = (!self.subtitle.is_empty()).then_some(format!("with {}", self.subtitle));
        let body = style::frame(root, title, subtitle.as_deref(), &legend)?;
        let n = self.panels.len();
        let grid = style::grid_wide(n);
        let single = n == 1;
        let areas = style::panels(&body.margin(0, 10, 6, 10), n, grid, None)?;
        for (panel, (area, bottom, left)) in self.panels.iter().zip(areas) {
            draw_panel(&area, panel, (bottom, left), single, self.load)?;
        }
        Ok(())
    }
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    (bottom, left): (bool, bool),
    single: bool,
    load: Metric,
) -> DrawResult {
    let fold = |f: fn(&Dot) -> f64| {
        (panel.dots.iter()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
            (lo.min(f(d)), hi.max(f(d)))
        })
    };
    let (a_lo, a_hi) = fold(|d| d.amplification);
    let (l_lo, l_hi) = fold(|d| d.p99_ms);
    let unit = style::time_unit(l_hi);
    let (x0, x1) = style::padded(a_lo, a_hi, 0.08);
    let (y0, y1) = style::padded(l_lo / unit.div, l_hi / unit.div, 0.12);
    let mut builder = ChartBuilder::on(area);
    if !single {
        builder.caption(&panel.caption, style::text(style::MIN_SIZE, &INK));
    }
    let mut chart = builder
        .margin(8)
        .margin_right(if single { 40 } else { 14 })
        .x_label_area_size(if bottom { 52 } else { 28 })
        .y_label_area_size(if left { 84 } else { 56 })
        .build_cartesian_2d(x0..x1, y0.max(0.0)..y1)?;
    let (w, h) = area.dim_in_pixel();
    let x_tick = style::ticks_for(x0, x1);
    let y_tick = style::ticks_for(y0.max(0.0), y1);
    let mut mesh = chart.configure_mesh();
    mesh.house_style()
        .x_labels((w as usize / 90).clamp(2, 10))
        .y_labels((h as usize / 50).clamp(2, 10))
        .x_label_formatter(&x_tick)
        .y_label_formatter(&y_tick);
    if bottom {
        mesh.x_desc(match (single, load) {
            (true, load) | (false, load @ Metric::ChainAmplification) => load.label(),
            (false, _) => "attempts per request",
        });
    }
    if left {
        mesh.y_desc(format!("p99 latency ({})", unit.name));
    }
    mesh.draw()?;
    style::declare(&chart, &panel.caption, false);

    let at = |d: &Dot| (d.amplification, d.p99_ms / unit.div);
    let mut front: Vec<(f64, f64)> = panel.dots.iter().filter(|d| d.on_front).map(at).collect();
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
    super::check::data(|| -> DrawResult {
        for d in &panel.dots {
            let c = style::color(d.color);
            if !d.eligible {
                chart.draw_series(std::iter::once(Circle::new(at(d), 6, WHITE.filled())))?;
                chart.draw_series(std::iter::once(Circle::new(at(d), 6, c.stroke_width(2))))?;
            } else if d.on_front {
                chart.draw_series(std::iter::once(Circle::new(at(d), 8, c.filled())))?;
                chart.draw_series(std::iter::once(Circle::new(at(d), 8, INK.stroke_width(2))))?;
            } else {
                chart.draw_series(std::iter::once(Circle::new(at(d), 5, c.mix(0.6).filled())))?;
            }
        }
        Ok(())
    })?;
    label_front(&mut chart, panel, unit)?;
    // The recommendation: a sight around the dot, like no other mark of the chart.
    let area = chart.plotting_area().strip_coord_spec();
    let (ox, oy) = area.get_base_pixel();
    for d in panel.dots.iter().filter(|d| d.recommended) {
        // Its own dot again, on top: another at the same place must not lend it its colour.
        let c = style::color(d.color);
        chart.draw_series(std::iter::once(Circle::new(at(d), 8, c.filled())))?;
        chart.draw_series(std::iter::once(Circle::new(at(d), 8, INK.stroke_width(2))))?;
        let (px, py) = chart.backend_coord(&at(d));
        style::target(&area, (px - ox, py - oy), 14, 8, INK)?;
    }
    Ok(())
}

/// Labels the recommended dot first, then the front left to right, each only where it fits in
/// the panel and does not overlap a label already placed.
fn label_front<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    panel: &Panel,
    unit: style::TimeUnit,
) -> DrawResult {
    let at = |d: &Dot| (d.amplification, d.p99_ms / unit.div);
    let plot = chart.plotting_area().get_pixel_range();
    let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
    let mut order: Vec<&Dot> = (panel.dots.iter())
        .filter(|d| d.on_front || d.recommended)
        .collect();
    order.sort_by(|a, b| {
        b.recommended
            .cmp(&a.recommended)
            .then(a.amplification.total_cmp(&b.amplification))
    });
    for d in order {
        let (x, y) = chart.backend_coord(&at(d));
        let (tw, th) = text::size_of(&d.label, style::NOTE_SIZE);
        let (tw, th) = (tw as i32, th as i32 + 4);
        // Right of the dot, or left of it when that runs past the panel.
        let right = x + 12 + tw <= plot.0.end;
        let x0 = if right { x + 12 } else { x - 12 - tw };
        let rect = (x0, y - 10 - th, x0 + tw, y - 10);
        let inside = rect.0 >= plot.0.start && rect.1 >= plot.1.start;
        let overlaps = placed
            .iter()
            .any(|r| rect.0 < r.2 && r.0 < rect.2 && rect.1 < r.3 && r.1 < rect.3);
        if overlaps || !inside {
            continue;
        }
        placed.push(rect);
        let pos = if right { HPos::Left } else { HPos::Right };
        chart.draw_series(std::iter::once(
            EmptyElement::at(at(d))
                + Text::new(
                    d.label.clone(),
                    (if right { 12 } else { -12 }, -10),
                    style::text(style::NOTE_SIZE, &MUTED).pos(Pos::new(pos, VPos::Bottom)),
                ),
        ))?;
    }
    Ok(())
}
