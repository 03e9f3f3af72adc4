//! The hedging trade-off, drawn for a folder where some strategy hedges (`hedging.csv`): p50
//! and p99 latency against the copies sent per request (load amplification), one line per
//! strategy through the world points of the sweep (the loads), so that the tail falls as the
//! copies rise and turns into a storm past capacity. A point below the success target is
//! hollow. The title states the answer ([`answer`]), which the report's headline repeats.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, MUTED, Swatch};
use super::text;
use crate::metric::Metric;
use crate::output::design::{Candidate, Design};
use crate::output::labels::{self, Kind};
use crate::output::results::{ResultFolder, fmt_ms, fmt_number};

/// One candidate at one world point.
struct Mark {
    copies: f64,
    p50_ms: f64,
    p99_ms: f64,
    eligible: bool,
    /// The world point's value (`300/s`), empty without world keys.
    tag: String,
}

/// One candidate label (a strategy and its choice values) across the world points.
struct Line {
    color: usize,
    marks: Vec<Mark>,
}

pub(crate) struct Hedging {
    lines: Vec<Line>,
    legend: Vec<(String, usize)>,
    floor: String,
    subtitle: String,
    /// The marks of a line are world points of one key, joined in their order.
    joined: bool,
}

/// What a hedging folder answers, at the first world point (the lowest load of a load sweep):
/// the hedge with the lowest p99 among those that meet the success target, against the first
/// strategy that does not hedge; and the first later world point where that hedge turns into
/// a storm (misses the target, or its p99 rises above the unhedged one's).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    /// The first world point (`offered load 300/s`), empty without world keys.
    pub world: String,
    /// The first strategy that does not hedge and its p99 there (ms).
    pub baseline: Option<(String, f64)>,
    /// The best hedge there: its label, p99 (ms) and copies sent per request.
    pub best: Option<(String, f64, f64)>,
    /// Where the best hedge becomes a storm: the world point and why.
    pub storm: Option<(String, String)>,
    /// `success ≥ 99 %`.
    pub floor: String,
}

impl Answer {
    /// The headline in one line (the chart's title).
    pub(crate) fn title(&self) -> String {
        let at = if self.world.is_empty() {
            String::new()
        } else {
            format!(" at {}", self.world)
        };
        // The two p99s as far apart as they are: a cut shown only where it shows.
        let cut = match (&self.best, &self.baseline) {
            (Some((_, p99, _)), Some((_, base_p99))) if p99 < base_p99 => {
                labels::apart(*base_p99, *p99, labels::ms_extra)
            }
            _ => None,
        };
        let same = match (&self.best, &self.baseline) {
            (Some((_, p99, _)), Some((_, base_p99))) => {
                labels::apart(*base_p99, *p99, labels::ms_extra).is_none()
            }
            _ => false,
        };
        match (&self.best, &self.baseline) {
            (Some((hedge, _, copies)), Some(_)) if let Some((from, to)) = cut => format!(
                "Hedging{at}: {hedge} cuts p99 from {from} to {to} for {} copies a request",
                fmt_number(*copies)
            ),
            (Some((hedge, _, copies)), Some((base, base_p99))) if same => format!(
                "Hedging{at}: {hedge}'s p99 is about the same as {base}'s, {}, for {} copies a request",
                fmt_ms(*base_p99),
                fmt_number(*copies)
            ),
            (Some(_), Some((base, base_p99))) => format!(
                "Hedging{at}: no hedge cuts p99 below {base}'s {}",
                fmt_ms(*base_p99)
            ),
            (Some((hedge, p99, copies)), None) => format!(
                "Hedging{at}: {hedge} has the lowest p99, {}, for {} copies a request",
                fmt_ms(*p99),
                fmt_number(*copies)
            ),
            (None, _) => format!("Hedging{at}: no hedge meets {}", self.floor),
        }
    }

    /// Where hedging became a storm, or that it did not, at the world points shown.
    pub(crate) fn storm_sentence(&self) -> Option<String> {
        let (hedge, ..) = self.best.as_ref()?;
        Some(match &self.storm {
            Some((world, why)) => format!("at {world} {hedge} becomes a storm: {why}"),
            None if self.world.is_empty() => return None,
            None => format!("{hedge} stays ahead at every load of the sweep"),
        })
    }
}

/// The success rate of a candidate as a percent.
fn pct(x: f64) -> String {
    super::dist::pct(x)
}

/// Why a hedge that misses the success target is a storm: `success 98.96 % < 99 %`, the
/// success with the digits that keep it below the target as shown.
fn short_of(success: f64, target: f64) -> String {
    format!(
        "success {} < {}",
        labels::percent_near(success, target),
        pct(target)
    )
}

/// Why a hedge is a storm when its p99 is above the unhedged `base`'s: `p99 99.04 ms above
/// no_hedging's 99 ms`, as far apart as they are; `None` unless it is above as shown.
fn above(p99: f64, base_p99: f64, base: &str) -> Option<String> {
    let (hedged, unhedged) =
        (p99 > base_p99).then(|| labels::apart(p99, base_p99, labels::ms_extra))??;
    Some(format!("p99 {hedged} above {base}'s {unhedged}"))
}

/// [`Answer`] for a folder where some strategy hedges; `None` otherwise.
pub(crate) fn answer(f: &ResultFolder, design: &Design) -> Option<Answer> {
    f.hedging.as_ref()?;
    let floor = format!("success ≥ {}", pct(design.target));
    let p99 = |c: &Candidate| Design::mean(f, c, Metric::LatencyP99Ms);
    let first = design.candidates(0);
    let baseline_at = |w: usize| {
        (design.candidates(w).iter()).find(|c| !f.hedges(&c.strategy) && p99(c).is_finite())
    };
    let baseline = baseline_at(0).map(|c| (design.candidate_label(f, c), p99(c)));
    let best = (first.iter())
        .filter(|c| f.hedges(&c.strategy) && design.meets_target(f, c) && p99(c).is_finite())
        .min_by(|a, b| p99(a).total_cmp(&p99(b)));
    let storm = best.and_then(|best| {
        (1..design.worlds.len()).find_map(|w| {
            let same = (design.candidates(w).iter()).find(|c| c.strategy == best.strategy)?;
            let success = Design::mean(f, same, Metric::SuccessRate);
            let why = if !design.meets_target(f, same) {
                short_of(success, design.target)
            } else {
                let base = baseline_at(w)?;
                above(p99(same), p99(base), &design.candidate_label(f, base))?
            };
            Some((design.world_label(f, w), why))
        })
    });
    let best = best.map(|c| {
        let copies = Design::mean(f, c, Metric::Amplification);
        (design.candidate_label(f, c), p99(c), copies)
    });
    Some(Answer {
        world: design.world_label(f, 0),
        baseline,
        best,
        storm,
        floor,
    })
}

/// The short tag of world point `w`: its values (`300/s` for a rate), empty without world
/// keys.
fn tag(f: &ResultFolder, design: &Design, w: usize) -> String {
    let Some(world) = design.worlds.get(w) else {
        return String::new();
    };
    (design.world_keys.iter().zip(&world.values))
        .map(|(&k, raw)| {
            let key = &f.sweep_keys[k];
            let v = labels::Reading::of(f).value(key, raw);
            match labels::key(key).1 {
                Kind::Rate if raw.trim().parse::<f64>().is_ok() => format!("{v}/s"),
                _ => v,
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn build(f: &ResultFolder, design: &Design) -> Option<(String, String, Hedging)> {
    let answer = answer(f, design)?;
    let mut lines: Vec<(String, Line)> = Vec::new();
    for (w, c) in design.all_candidates() {
        let mean = |m: Metric| Design::mean(f, c, m);
        let mark = Mark {
            copies: mean(Metric::Amplification),
            p50_ms: mean(Metric::LatencyP50Ms),
            p99_ms: mean(Metric::LatencyP99Ms),
            eligible: design.meets_target(f, c),
            tag: tag(f, design, w),
        };
        if !(mark.copies.is_finite() && mark.p50_ms.is_finite() && mark.p99_ms.is_finite()) {
            continue;
        }
        let label = design.candidate_label(f, c);
        match lines.iter_mut().find(|(l, _)| *l == label) {
            Some((_, line)) => line.marks.push(mark),
            None => lines.push((
                label,
                Line {
                    color: c.color,
                    marks: vec![mark],
                },
            )),
        }
    }
    if lines.is_empty() {
        return None;
    }
    let joined = design.world_keys.len() == 1 && design.worlds.len() > 1;
    let floor = answer.floor.clone();
    let title = answer.title();
    let subtitle = answer.storm_sentence().unwrap_or_default();
    let guide = guide(f, design, &answer, joined);
    let legend = lines
        .iter()
        .map(|(l, line)| (l.clone(), line.color))
        .collect();
    let chart = Hedging {
        lines: lines.into_iter().map(|(_, line)| line).collect(),
        legend,
        floor,
        subtitle,
        joined,
    };
    Some((title, guide, chart))
}

/// The reading guide: the axes, the lines, the hollow points and the answer.
fn guide(f: &ResultFolder, design: &Design, answer: &Answer, joined: bool) -> String {
    let mut guide = String::from(
        "Each point is one strategy at one load: right means more copies sent per request (hedges add load on the server), \
         up means a slower answer; the left panel shows the median, the right the p99. A strategy that does not hedge sends one copy. ",
    );
    if joined {
        let key = labels::Reading::of(f)
            .key(&f.sweep_keys[design.world_keys[0]])
            .0;
        guide.push_str(&format!(
            "Each line joins one strategy's points in the order of the sweep ({key}, first and last labelled): \
             at light load a hedge moves left-up to right-down (a shorter tail for more copies); near and past capacity \
             the copies queue and the line turns up. "
        ));
    }
    guide.push_str(&format!(
        "Hollow points miss {}: a hedge that sheds requests is a storm, not a cure. ",
        answer.floor
    ));
    guide.push_str(&format!(
        "{}.",
        answer.title().replacen("Hedging", "Here", 1)
    ));
    if let Some(storm) = answer.storm_sentence() {
        guide.push_str(&format!(" {}.", style::capitalize(&storm)));
    }
    guide
}

impl Hedging {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let marks = || self.lines.iter().flat_map(|l| l.marks.iter());
        let mut legend: Vec<LegendItem> = (self.legend.iter())
            .map(|(s, c)| LegendItem::new(Swatch::Dot(style::color(*c)), s.clone()))
            .collect();
        if marks().any(|m| !m.eligible) {
            legend.push(LegendItem::new(
                Swatch::Hollow(INK),
                format!("misses {}", self.floor),
            ));
        }
        let subtitle = (!self.subtitle.is_empty()).then_some(self.subtitle.as_str());
        let body = style::frame(root, title, subtitle, &legend)?;
        let areas = style::panels(&body.margin(0, 10, 6, 10), 2, (1, 2), None)?;
        let (x0, x1) = {
            let (lo, hi) = (marks()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), m| {
                (lo.min(m.copies), hi.max(m.copies))
            });
            style::padded(lo, hi.max(lo + 0.05), 0.08)
        };
        let metrics: [(&str, Measure); 2] = [
            ("median (p50) latency", |m| m.p50_ms),
            ("p99 latency", |m| m.p99_ms),
        ];
        for ((name, y), (area, _, _)) in metrics.into_iter().zip(areas) {
            self.draw_panel(&area, name, y, (x0, x1))?;
        }
        Ok(())
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        name: &str,
        y: Measure,
        (x0, x1): (f64, f64),
    ) -> DrawResult {
        let marks = || self.lines.iter().flat_map(|l| l.marks.iter());
        let hi = marks().map(y).fold(0.0, f64::max);
        let unit = style::time_unit(hi);
        let y1 = style::from_zero(hi / unit.div, 0.12);
        let mut builder = ChartBuilder::on(area);
        builder.caption(name, style::text(style::MIN_SIZE, &INK));
        let mut chart = builder
            .margin(8)
            .margin_right(18)
            .x_label_area_size(52)
            .y_label_area_size(84)
            .build_cartesian_2d(x0..x1, 0.0..y1)?;
        let (w, h) = area.dim_in_pixel();
        let x_tick = style::ticks_for(x0, x1);
        let y_tick = style::ticks_for(0.0, y1);
        chart
            .configure_mesh()
            .house_style()
            .x_labels((w as usize / 90).clamp(2, 10))
            .y_labels((h as usize / 50).clamp(2, 10))
            .x_label_formatter(&x_tick)
            .y_label_formatter(&y_tick)
            .x_desc("copies sent per request")
            .y_desc(format!("{name} ({})", unit.name))
            .draw()?;
        style::declare(&chart, name, false);
        let at = |m: &Mark| (m.copies, y(m) / unit.div);
        super::check::data(|| -> DrawResult {
            for line in self.lines.iter().filter(|_| self.joined) {
                let c = style::color(line.color);
                chart.draw_series(LineSeries::new(
                    line.marks.iter().map(at),
                    // Full colour: a lighter line would fall below the line contrast.
                    c.stroke_width(2),
                ))?;
            }
            for line in &self.lines {
                let c = style::color(line.color);
                for m in &line.marks {
                    if m.eligible {
                        chart.draw_series(std::iter::once(Circle::new(at(m), 6, c.filled())))?;
                    } else {
                        chart.draw_series(std::iter::once(Circle::new(
                            at(m),
                            6,
                            WHITE.filled(),
                        )))?;
                        chart.draw_series(std::iter::once(Circle::new(
                            at(m),
                            6,
                            c.stroke_width(2),
                        )))?;
                    }
                }
            }
            Ok(())
        })?;
        if self.joined {
            self.label_ends(&mut chart, &at)?;
        }
        Ok(())
    }

    /// Labels each line's first and last point with its load: above or below the point, to
    /// its right or left, at the first place inside the panel that covers no line, point or
    /// label already placed; a point with no such place goes unlabelled.
    fn label_ends<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
        at: &dyn Fn(&Mark) -> (f64, f64),
    ) -> DrawResult {
        let plot = chart.plotting_area().get_pixel_range();
        let px = |m: &Mark| chart.backend_coord(&at(m));
        let lines: Vec<Vec<(i32, i32)>> = (self.lines.iter())
            .map(|l| l.marks.iter().map(px).collect())
            .collect();
        let dots: Vec<(i32, i32)> = lines.iter().flatten().copied().collect();
        let mut placed: Vec<Rect> = Vec::new();
        let mut labels = Vec::new();
        let ends = (self.lines.iter()).flat_map(|l| {
            l.marks
                .first()
                .into_iter()
                .chain(l.marks.last().filter(|_| l.marks.len() > 1))
        });
        for m in ends {
            let (x, y) = px(m);
            let (tw, th) = text::size_of(&m.tag, style::NOTE_SIZE);
            let (tw, th) = (tw as i32, th as i32);
            let spots = [(10, -8 - th), (-10 - tw, -8 - th), (10, 8), (-10 - tw, 8)];
            let free = spots
                .into_iter()
                .map(|(dx, dy)| (x + dx, y + dy, x + dx + tw, y + dy + th))
                .find(|r| {
                    let inside = r.0 >= plot.0.start
                        && r.2 <= plot.0.end
                        && r.1 >= plot.1.start
                        && r.3 <= plot.1.end;
                    inside
                        && !placed.iter().any(|p| overlap(r, p))
                        && !dots
                            .iter()
                            .any(|&(dx, dy)| overlap(r, &(dx - 8, dy - 8, dx + 8, dy + 8)))
                        && !lines
                            .iter()
                            .any(|l| l.windows(2).any(|s| crosses(r, s[0], s[1])))
                });
            if let Some(r) = free {
                placed.push(r);
                labels.push((m.tag.clone(), at(m), (r.0 - x, r.1 - y)));
            }
        }
        for (tag, point, offset) in labels {
            let style = style::text(style::NOTE_SIZE, &MUTED).pos(Pos::new(HPos::Left, VPos::Top));
            chart.draw_series(std::iter::once(
                EmptyElement::at(point) + Text::new(tag, offset, style),
            ))?;
        }
        Ok(())
    }
}

/// What a panel's value axis shows of a mark.
type Measure = fn(&Mark) -> f64;

/// A pixel rectangle: left, top, right, bottom.
type Rect = (i32, i32, i32, i32);

fn overlap(a: &Rect, b: &Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// True when the segment from `a` to `b` passes through `r` grown by 3 px (sampled every
/// 2 px: labels are tens of pixels wide).
fn crosses(r: &Rect, a: (i32, i32), b: (i32, i32)) -> bool {
    let grown = (r.0 - 3, r.1 - 3, r.2 + 3, r.3 + 3);
    let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
    let steps = (dx.abs().max(dy.abs()) / 2.0).ceil().max(1.0) as i32;
    (0..=steps).any(|i| {
        let t = i as f64 / steps as f64;
        let (x, y) = (a.0 as f64 + t * dx, a.1 as f64 + t * dy);
        x >= grown.0 as f64 && x <= grown.2 as f64 && y >= grown.1 as f64 && y <= grown.3 as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hedging_comparisons_show_the_digits_that_tell_them_apart() {
        // 98.96 % is `99 %` as charts write it: never `success 99 % < 99 %`.
        assert_eq!(short_of(0.9896, 0.99), "success 98.96 % < 99 %");
        assert_eq!(
            above(99.04, 99.0, "no_hedging").as_deref(),
            Some("p99 99.04 ms above no_hedging's 99 ms")
        );
        assert_eq!(above(99.0, 99.0, "no_hedging"), None);
        assert_eq!(above(98.0, 99.0, "no_hedging"), None);
        let answer = |p99: f64| Answer {
            world: String::new(),
            baseline: Some(("no_hedging".into(), 99.04)),
            best: Some(("hedge_p90".into(), p99, 1.2)),
            storm: None,
            floor: "success ≥ 99 %".into(),
        };
        assert_eq!(
            answer(99.0).title(),
            "Hedging: hedge_p90 cuts p99 from 99.04 ms to 99 ms for 1.2 copies a request"
        );
        assert_eq!(
            answer(99.04 - 1e-12).title(),
            "Hedging: hedge_p90's p99 is about the same as no_hedging's, 99 ms, for 1.2 copies a request"
        );
        assert_eq!(
            answer(120.0).title(),
            "Hedging: no hedge cuts p99 below no_hedging's 99 ms"
        );
    }
}
