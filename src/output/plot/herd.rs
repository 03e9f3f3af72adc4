//! The herd chart: attempts reaching the server (or a layer of a chain) per output bucket, one
//! panel per run of [`super::series`], first attempts and retries stacked, the server's
//! capacity and the point's fault windows behind, and a Poisson workload's offered rate in a
//! strip below.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::series::Traces;
use super::style::{self, DrawResult, FIRST_ATTEMPTS, HouseStyle, INK, LegendItem, Swatch};
use crate::backoff::Jitter;
use crate::metric::Metric;
use crate::output::design::Design;
use crate::output::results::{Capacity, FaultWindow, ResultFolder, fmt_ms, fmt_number};
use crate::policy::RetryAfterMode;

/// At most this many points per series; merged buckets keep their busiest bucket.
pub(crate) const MAX_DRAWN_POINTS: usize = 600;

/// The share of the time axis left before time 0.
const LEAD: f64 = 0.015;
/// The outline of first attempts: a darker grey than their fill.
const FIRST_ATTEMPTS_EDGE: RGBColor = RGBColor(0x66, 0x66, 0x66);

/// A reference line more than this many times the largest count is left off a linear axis.
const FAR_ABOVE: f64 = 1.5;
/// ... and off a logarithmic one.
const FAR_ABOVE_LOG: f64 = 1000.0;

#[derive(Clone)]
pub(crate) struct Panel {
    name: String,
    color: usize,
    /// (t_ms, first attempts, first attempts + retries)
    points: Vec<(f64, f64, f64)>,
}

#[derive(Clone)]
pub(crate) struct Herd {
    panels: Vec<Panel>,
    paired: bool,
    subtitle: String,
    bucket_ms: Option<f64>,
    capacity: Option<Capacity>,
    faults: Vec<FaultWindow>,
    /// The offered rate over time `(ms, requests/s)` of a Poisson workload, drawn in a strip
    /// under the panels so that a load trigger (a spike, a ramp) is visible.
    offered: Option<Vec<(f64, f64)>>,
    /// A logarithmic count axis (decades), where a low band under the capacity line stays
    /// visible beside spikes a hundred times higher.
    log: bool,
    /// What paces each panel's retries, for the guides (empty for a layer of a chain, whose
    /// callers keep their own backoff).
    paces: Vec<Pace>,
    /// A `burst` workload: every client sends once, around the same instant.
    burst: bool,
}

/// The share of a run's error answers that carried a Retry-After hint from which the hint,
/// not the backoff, is taken to set when its retries return (where the client honours it).
pub(crate) const HINTED: f64 = 0.5;

/// What sets when one panel's retries come back: its strategy's jitter (`None`: a delay
/// source, not known), and the Retry-After hint where the client honours it and most error
/// answers carried one (the mode and the share of error answers with a hint).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pace {
    pub name: String,
    pub jitter: Option<Jitter>,
    pub hint: Option<(RetryAfterMode, f64)>,
}

impl Pace {
    /// The pace of the run `t`, from the scenario and the run's `retry_after_share`.
    fn of(f: &ResultFolder, t: &super::series::Trace) -> Option<Pace> {
        let c = &t.candidate;
        let info = f.strategy_info(c.point, &c.strategy)?;
        let share = (f.summary.iter())
            .find(|r| {
                r.point == c.point && r.strategy == c.strategy && r.replication == t.replication
            })
            .map(|r| r.metrics[Metric::RetryAfterShare])
            .filter(|v| v.is_finite())
            .unwrap_or_else(|| Design::mean(f, c, Metric::RetryAfterShare));
        Some(Pace {
            name: t.label.clone(),
            jitter: info.jitter,
            hint: Pace::hint(info.retry_after, share),
        })
    }

    /// The hint that paces a run whose client handles hints by `mode` and whose error
    /// answers carried one in `share` of cases: only an honoured hint on most of them.
    fn hint(mode: RetryAfterMode, share: f64) -> Option<(RetryAfterMode, f64)> {
        (mode != RetryAfterMode::Ignore && share >= HINTED).then_some((mode, share))
    }

    /// Unhinted and without jitter: retries at the same backoff steps.
    fn synchronized(&self) -> bool {
        self.hint.is_none() && self.jitter == Some(Jitter::NoJitter)
    }

    /// Unhinted and jittered.
    fn jittered(&self) -> bool {
        self.hint.is_none() && self.jitter.is_some_and(|j| j != Jitter::NoJitter)
    }
}

/// The sentences on what paces the retries, each only where the panels give it a meaning:
/// jitter where some unhinted strategy has none (and, beside it, where another has some);
/// Retry-After where most error answers carried a hint the clients honour, by how they
/// honour it, naming the panels of a group that is not all of them. The jitter sentence is
/// for a `burst` workload, whose clients fail together: it is their retries that a backoff
/// without jitter keeps together.
pub(crate) fn pace_sentences(paces: &[Pace], burst: bool) -> String {
    let mut out = String::new();
    if burst && paces.iter().any(Pace::synchronized) {
        out.push_str(
            "Without jitter, retries arrive in synchronized spikes at the same backoff steps",
        );
        if paces.iter().any(Pace::jittered) {
            out.push_str("; jitter spreads them into a low band");
        }
        out.push_str(". ");
    }
    let groups: [(&[RetryAfterMode], &str); 3] = [
        (
            &[RetryAfterMode::AtLeast],
            "sleep at least as long as it asks (retry_after = \"at_least\"): clients turned away together come back together \
             wherever the hint is longer than their backoff, jittered or not",
        ),
        (
            &[RetryAfterMode::Exact],
            "sleep exactly as long as it asks (retry_after = \"exact\"): clients turned away together come back together, \
             jittered or not",
        ),
        (
            &[RetryAfterMode::Spread],
            "honour it with spread (retry_after = \"spread\"), each sleeping a random time from the hint to 1.5 times it \
             (or its backoff, if longer), so clients turned away together come back spread out",
        ),
    ];
    for (modes, how) in groups {
        let group: Vec<&Pace> = (paces.iter())
            .filter(|p| p.hint.is_some_and(|(m, _)| modes.contains(&m)))
            .collect();
        if group.is_empty() {
            continue;
        }
        let shares: Vec<f64> = group.iter().filter_map(|p| p.hint.map(|h| h.1)).collect();
        let lo = shares.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = shares.iter().copied().fold(0.0, f64::max);
        let share = match (
            crate::output::plot::dist::pct(lo),
            crate::output::plot::dist::pct(hi),
        ) {
            (a, b) if a == b => a,
            (a, b) => format!("{a} to {b}"),
        };
        let whose = if group.len() == paces.len() {
            "In every panel".to_string()
        } else {
            let names: Vec<&str> = group.iter().map(|p| p.name.as_str()).collect();
            format!("In {}", names.join(", "))
        };
        out.push_str(&format!(
            "{whose}, {share} of the error answers carried a Retry-After hint, and the clients {how}. "
        ));
    }
    out
}

/// Keeps at most `max` points: each run of `ceil(n / max)` buckets is replaced by its bucket
/// with the most attempts, so peaks survive (never averaged away).
pub(crate) fn decimate_peaks(points: &[(f64, f64, f64)], max: usize) -> Vec<(f64, f64, f64)> {
    if points.len() <= max || max == 0 {
        return points.to_vec();
    }
    let group = points.len().div_ceil(max);
    points
        .chunks(group)
        .map(|chunk| {
            *chunk
                .iter()
                .max_by(|a, b| a.2.total_cmp(&b.2))
                .expect("chunks are never empty")
        })
        .collect()
}

/// A step outline for an area: each count holds from its bucket's start to the next kept
/// bucket (the last one for one bucket), so counts are not interpolated into slopes.
fn steps(
    points: &[(f64, f64, f64)],
    bucket_ms: f64,
    div: f64,
    value: impl Fn(&(f64, f64, f64)) -> f64,
) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, p) in points.iter().enumerate() {
        let end = points.get(i + 1).map_or(p.0 + bucket_ms, |next| next.0);
        out.push((p.0 / div, value(p)));
        out.push((end / div, value(p)));
    }
    out
}

/// The layers (from 2) of a chain whose herd can be drawn.
pub(crate) fn layers(traces: &Traces) -> Vec<u32> {
    let mut layers: Vec<u32> = (traces.traces.iter())
        .flat_map(|t| t.layers.iter().map(|l| l.0))
        .collect();
    layers.sort_unstable();
    layers.dedup();
    layers
}

/// The herd at the server (`layer` `None`) or at layer 2 and up of a chain, for `traces`.
pub(crate) fn build(
    f: &ResultFolder,
    design: &Design,
    traces: &Traces,
    layer: Option<u32>,
) -> Option<(String, String, Herd)> {
    let mut panels = Vec::new();
    let mut peaks: Vec<(String, f64)> = Vec::new();
    for t in &traces.traces {
        let (first, retries) = match layer {
            None => (&t.first_attempts, &t.retries),
            Some(l) => {
                let found = t.layers.iter().find(|x| x.0 == l)?;
                (&found.1, &found.2)
            }
        };
        let rows: Vec<(f64, f64, f64)> = (t.t_ms.iter().zip(first).zip(retries))
            .map(|((&ms, &a), &r)| (ms, a, a + r))
            .collect();
        // A run of a pair is named by its replication; the panel says stuck or recovered.
        let name = match traces.paired && t.label.contains(": replication ") {
            true => format!(
                "{}, replication {}",
                design.candidate_label(f, &t.candidate),
                t.replication
            ),
            false => t.label.clone(),
        };
        peaks.push((name, retries.iter().copied().fold(0.0, f64::max)));
        panels.push(Panel {
            name: t.label.clone(),
            color: t.candidate.color,
            points: decimate_peaks(&rows, MAX_DRAWN_POINTS),
        });
    }
    if panels.iter().all(|p| p.points.iter().all(|x| x.2 <= 0.0)) {
        return None; // nothing reached it
    }
    let bucket_ms = f.bucket_ms();
    let bucket = bucket_ms.map_or_else(|| "output".to_string(), fmt_ms);
    let info = traces
        .traces
        .first()
        .and_then(|t| f.info(t.candidate.point));
    let at = layer.and_then(|l| info?.layers.get(l as usize - 1));
    let place = match (layer, at) {
        (Some(l), Some(a)) => format!("layer {l} ({})", a.name),
        (Some(l), None) => format!("layer {l}"),
        (None, _) => "the server".to_string(),
    };
    let burst = info.is_some_and(|i| i.burst);
    let title = format!(
        "{}ttempts reaching {place} per {bucket} bucket",
        if burst { "Thundering herd: a" } else { "A" }
    );
    let (capacity, faults) = match (layer, at) {
        (None, _) => (
            info.and_then(|i| i.capacity.clone()),
            info.map(|i| i.faults.clone()).unwrap_or_default(),
        ),
        (Some(_), Some(a)) => (a.capacity.clone(), a.faults.clone()),
        (Some(_), None) => (None, Vec::new()),
    };
    let faults: Vec<FaultWindow> = faults.into_iter().filter(|w| w.effective).collect();
    let paces = match layer {
        Some(_) => Vec::new(),
        None => (traces.traces.iter())
            .map(|t| Pace::of(f, t))
            .collect::<Option<Vec<Pace>>>()
            .unwrap_or_default(),
    };
    let herd = Herd {
        panels,
        paired: traces.paired,
        subtitle: super::subtitle(f, design, traces),
        bucket_ms,
        capacity,
        faults,
        offered: info.and_then(|i| i.offered.clone()),
        log: false,
        paces,
        burst,
    };
    let guide = herd.guide(layer.is_some(), peaks);
    Some((title, guide, herd))
}

impl Herd {
    /// The reading guide: what the panels hold, and only the sentences this chart's numbers
    /// give a meaning (a capacity, faults, a spread of peaks).
    fn guide(&self, layer: bool, peaks: Vec<(String, f64)>) -> String {
        let mut guide = String::from(
            "Each panel is one run on the same axes: grey is first attempts, colour is retries, stacked, per output bucket. ",
        );
        if layer {
            guide.push_str(
                "Here the callers are the workers of the layer above: a first attempt is the first of one of their outbound requests, so retries at every layer above multiply what arrives here. ",
            );
        }
        if !self.faults.is_empty() {
            guide.push_str("Shaded bands are fault windows; watch what happens when one ends. ");
        }
        let data_max = self.data_max();
        if let Some(c) = &self.capacity {
            if c.per_bucket <= data_max * FAR_ABOVE {
                guide.push_str(
                    "The dashed line is what the server can complete per bucket: spikes above it queue or are rejected, and rejected attempts come back as more retries. ",
                );
            } else {
                guide.push_str(&format!(
                    "The server could complete {} attempts per bucket, far above the {} that ever arrive: it is never the bottleneck here. ",
                    fmt_number(c.per_bucket),
                    fmt_number(data_max)
                ));
            }
        }
        guide.push_str(&pace_sentences(&self.paces, self.burst));
        if self.offered.is_some() {
            guide.push_str(
                "The strip below is the offered rate (new requests per second) on the same time axis. ",
            );
        }
        guide.push_str(&peak_sentence(peaks));
        guide.trim_end().to_string()
    }

    /// The reading guide of the same chart on a log scale: the band of jittered retries
    /// beside the spikes without jitter only where the panels have both.
    pub(crate) fn log_guide(&self) -> String {
        let band = match self.burst
            && self.paces.iter().any(Pace::synchronized)
            && self.paces.iter().any(Pace::jittered)
        {
            true => {
                "the spread-out band of jittered retries is as visible as the spikes without jitter"
            }
            false => "a low band of retries is as visible as the tallest spike",
        };
        format!(
            "The same counts on a logarithmic axis (1, 10, 100, ...; empty buckets sit on the bottom line). \
             A linear axis is dominated by the tallest spike; here {band}, and so is where each sits against the capacity line: \
             a band below it is served as it comes, spikes above it are turned away and come back."
        )
    }

    /// The largest count of any bucket of any panel.
    fn data_max(&self) -> f64 {
        (self.panels.iter())
            .flat_map(|p| p.points.iter().map(|x| x.2))
            .fold(0.0, f64::max)
    }

    /// The chart's height, px ([`style::run_chart_height`]).
    pub(crate) fn height(&self) -> u32 {
        style::run_chart_height(self.panels.len(), self.paired)
    }

    /// The same chart with a logarithmic count axis.
    pub(crate) fn log_scale(&self) -> Herd {
        Herd {
            log: true,
            ..self.clone()
        }
    }

    /// True when a logarithmic axis shows what a linear one hides: counts that span more
    /// than a factor of 20 (a spike beside a low band).
    pub(crate) fn wants_log(&self) -> bool {
        let counts: Vec<f64> = (self.panels.iter())
            .flat_map(|p| p.points.iter().map(|x| x.2))
            .filter(|c| *c > 0.0)
            .collect();
        let max = counts.iter().copied().fold(0.0, f64::max);
        let mut sorted = counts.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(max);
        max > 20.0 * median
    }

    /// The capacity line when it is drawn: not when it is far above the counts (it would set
    /// the axis and leave them on the floor).
    fn capacity_drawn(&self) -> Option<f64> {
        let far = if self.log { FAR_ABOVE_LOG } else { FAR_ABOVE };
        let cap = self.capacity.as_ref().map(|c| c.per_bucket);
        cap.filter(|c| *c <= self.data_max() * far)
    }

    fn legend(&self) -> Vec<LegendItem> {
        let mut legend = vec![
            LegendItem::new(Swatch::Box(FIRST_ATTEMPTS.to_rgba()), "first attempts"),
            LegendItem::new(
                Swatch::Box(style::color(self.panels[0].color).mix(0.85)),
                "retries (the run's colour)",
            ),
        ];
        if let Some(c) = &self.capacity {
            legend.push(match self.capacity_drawn() {
                Some(_) => LegendItem::new(Swatch::Dashed(INK), c.label.clone()),
                None => LegendItem::new(
                    Swatch::Dashed(style::MUTED),
                    format!(
                        "capacity {} attempts per bucket, off the scale",
                        fmt_number(c.per_bucket)
                    ),
                ),
            });
        }
        if !self.faults.is_empty() {
            let mut kinds: Vec<&str> = self.faults.iter().map(|f| f.kind.as_str()).collect();
            kinds.dedup();
            legend.push(LegendItem::new(
                Swatch::Box(style::FAULT.mix(0.18)),
                format!("fault window ({})", kinds.join(", ")),
            ));
        }
        legend
    }

    /// The end of the time axis, ms: shortly after the last attempt (or the last fault
    /// window), since the quiet tail up to the horizon says nothing.
    fn t_max(&self) -> f64 {
        let bucket = self.bucket_ms.unwrap_or(0.0);
        let last = |active: bool| {
            (self.panels.iter())
                .flat_map(|p| p.points.iter().filter(move |x| !active || x.2 > 0.0))
                .map(|x| x.0)
                .fold(0.0, f64::max)
                + bucket
        };
        let fault_end = self.faults.iter().map(|f| f.end_ms).fold(0.0, f64::max);
        (last(true).max(fault_end) * 1.1)
            .min(last(false).max(fault_end))
            .max(1.0)
    }

    /// A count on the y axis: itself, or on the log axis log10(max(count, 1)), from 0 (one
    /// attempt, or none) to a whole number of decades, so the ticks fall on 1, 10, 100, ...
    fn ty(&self, y: f64) -> f64 {
        if self.log { y.max(1.0).log10() } else { y }
    }

    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let body = style::frame(root, title, Some(&self.subtitle), &self.legend())?;
        // With an offered rate, a strip at the bottom holds it; the panels take the rest.
        let (body, strip) = match &self.offered {
            Some(_) => {
                let (_, h) = body.dim_in_pixel();
                let (top, bottom) = body.split_vertically(h as i32 - (h as i32 / 5).max(100));
                (top, Some(bottom))
            }
            None => (body, None),
        };
        let t_max = self.t_max();
        let unit = style::time_unit(t_max);
        let top = self.data_max().max(self.capacity_drawn().unwrap_or(0.0));
        let y_max = if self.log {
            self.ty(top * 1.5).ceil().max(1.0)
        } else {
            style::from_zero(top, 0.08)
        };
        let x_max = (t_max / unit.div).max(1e-9);
        let desc = if self.log {
            "attempts per bucket (log)"
        } else {
            "attempts per bucket"
        };
        let areas = style::run_panels(&body, self.panels.len(), self.paired, desc)?;
        for (panel, (area, bottom, _)) in self.panels.iter().zip(areas) {
            self.draw_panel(&area, panel, bottom, (x_max, unit), y_max)?;
        }
        if let (Some(strip), Some(line)) = (strip, &self.offered) {
            // One strip under each column of panels, on the panels' own time axis: the same
            // margins, y-description gutter and label areas, so a time lines up across them.
            let cols = style::run_grid(self.panels.len(), self.paired).1;
            let (_, strip) = strip.margin(0, 10, 6, 10).split_horizontally(30);
            for column in strip.split_evenly((1, cols)) {
                offered_strip(&column, line, x_max, unit)?;
            }
        }
        Ok(())
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
        bottom: bool,
        (x_max, unit): (f64, style::TimeUnit),
        y_max: f64,
    ) -> DrawResult {
        let log = self.log;
        let y_tick = move |v: &f64| {
            if !log {
                style::tick(*v)
            } else if (v - v.round()).abs() < 1e-6 {
                style::tick(10f64.powi(v.round() as i32))
            } else {
                String::new()
            }
        };
        let color = style::color(panel.color);
        let (_, h) = area.dim_in_pixel();
        let labels = if log {
            y_max as usize + 1
        } else {
            style::y_labels_for(h)
        };
        let axis = style::YAxis {
            range: 0.0..y_max,
            labels,
            tick: &y_tick,
        };
        // Time 0 a little inside the panel: a burst of first attempts in the first bucket
        // stands clear of the value axis.
        let mut chart = style::time_panel_from(
            area,
            (&panel.name, style::text_color(panel.color)),
            bottom,
            (-x_max * LEAD, x_max, unit),
            axis,
        )?;
        for fault in &self.faults {
            let x0 = (fault.start_ms / unit.div).clamp(0.0, x_max);
            let x1 = (fault.end_ms / unit.div).clamp(0.0, x_max);
            if x1 > x0 {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, y_max)],
                    style::FAULT.mix(0.12).filled(),
                )))?;
            }
        }
        // The capacity line goes behind the data, and again faintly over it: it never hides
        // the band it crosses, and stays traceable through it.
        let capacity = self.capacity_drawn().map(|cap| {
            let y = self.ty(cap);
            move |c: RGBAColor, w: u32| {
                DashedLineSeries::new(vec![(0.0, y), (x_max, y)], 8, 5, c.stroke_width(w))
            }
        });
        if let Some(line) = &capacity {
            chart.draw_series(line(INK.to_rgba(), 2))?;
        }
        let bucket = self.bucket_ms.unwrap_or(0.0);
        let total = steps(&panel.points, bucket, unit.div, |p| self.ty(p.2));
        let first = steps(&panel.points, bucket, unit.div, |p| self.ty(p.1));
        super::check::data(|| {
            chart.draw_series(AreaSeries::new(
                total.clone(),
                0.0,
                color.mix(0.85).filled(),
            ))?;
            chart.draw_series(AreaSeries::new(first.clone(), 0.0, FIRST_ATTEMPTS.filled()))?;
            // Outlines: a count in a bucket narrower than a pixel (a burst of first
            // attempts, one spike of retries) is drawn as a line of its height at any scale.
            chart.draw_series(LineSeries::new(total, color.stroke_width(2)))?;
            chart.draw_series(LineSeries::new(first, FIRST_ATTEMPTS_EDGE.stroke_width(2)))
        })?;
        if let Some(line) = &capacity {
            chart.draw_series(line(INK.mix(0.45), 1))?;
        }
        Ok(())
    }
}

/// The offered rate (requests per second) over time, in a strip under a column of panels.
pub(crate) fn offered_strip<DB: DrawingBackend>(
    strip: &DrawingArea<DB, Shift>,
    line: &[(f64, f64)],
    x_max: f64,
    unit: style::TimeUnit,
) -> DrawResult {
    let r_max = style::from_zero(line.iter().map(|p| p.1).fold(0.0, f64::max), 0.15);
    let (w, _) = strip.dim_in_pixel();
    // The margins and label areas of a run panel ([`style::time_panel`]), so the axes align.
    let mut chart = ChartBuilder::on(strip)
        .caption(
            "offered load: new requests per second",
            style::text(style::NOTE_SIZE, &style::MUTED),
        )
        .margin(6)
        .margin_right(14)
        .x_label_area_size(46)
        .y_label_area_size(66)
        .build_cartesian_2d(0.0..x_max, 0.0..r_max.max(1.0))?;
    chart
        .configure_mesh()
        .house_style()
        .x_labels((w as usize / 90).clamp(3, 10))
        .y_labels(2)
        .x_label_formatter(&|v| style::tick(*v))
        // No "0" up the side: in a strip this short it would touch the time axis's "0".
        .y_label_formatter(&|v| match *v {
            0.0 => String::new(),
            v => style::tick(v),
        })
        .x_desc(format!("time ({})", unit.name))
        .draw()?;
    style::declare(&chart, "offered rate", false);
    let points = line
        .iter()
        .map(|&(t, r)| ((t / unit.div).min(x_max), r))
        .collect::<Vec<_>>();
    super::check::data(|| {
        chart.draw_series(AreaSeries::new(
            points.clone(),
            0.0,
            FIRST_ATTEMPTS.mix(0.5).filled(),
        ))?;
        chart.draw_series(LineSeries::new(points, INK.stroke_width(2)))
    })?;
    Ok(())
}

/// The sentence on retry spikes: the largest (every run that reaches it named) against the
/// smallest, or the runs that send no retry at all; empty when the runs do not differ by a
/// tenth or there is one run.
fn peak_sentence(mut peaks: Vec<(String, f64)>) -> String {
    peaks.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (Some(hi), Some(lo)) = (peaks.first().map(|p| p.1), peaks.last().map(|p| p.1)) else {
        return String::new();
    };
    if peaks.len() < 2 || hi <= 0.0 || hi <= lo * 1.1 {
        return String::new();
    }
    let names = |v: f64| -> String {
        let of: Vec<&str> = (peaks.iter().filter(|p| p.1 == v))
            .map(|p| p.0.as_str())
            .collect();
        match of.as_slice() {
            [one] => one.to_string(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
            [] => String::new(),
        }
    };
    if lo == 0.0 {
        let none = peaks.iter().filter(|p| p.1 == 0.0).count();
        format!(
            "The largest retry spike is {} per bucket ({}); {} {} none.",
            fmt_number(hi),
            names(hi),
            names(0.0),
            if none == 1 { "has" } else { "have" }
        )
    } else {
        format!(
            "The largest retry spike is {} per bucket ({}), against {} ({}).",
            fmt_number(hi),
            names(hi),
            fmt_number(lo),
            names(lo)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A herd chart of one panel per `paces`, for its guides.
    fn herd_of(paces: Vec<Pace>, burst: bool) -> Herd {
        Herd {
            panels: Vec::new(),
            paired: false,
            subtitle: String::new(),
            bucket_ms: Some(20.0),
            capacity: None,
            faults: Vec::new(),
            offered: None,
            log: false,
            paces,
            burst,
        }
    }

    fn pace(name: &str, jitter: Jitter, hint: Option<(RetryAfterMode, f64)>) -> Pace {
        Pace {
            name: name.into(),
            jitter: Some(jitter),
            hint,
        }
    }

    #[test]
    fn jitter_is_blamed_only_where_strategies_lack_it_and_no_hint_paces_them() {
        let guide = |paces: Vec<Pace>, burst: bool| {
            let h = herd_of(paces, burst);
            (h.guide(false, Vec::new()), h.log_guide())
        };
        // A herd without jitter beside one with it: the spikes and the band.
        let (g, log) = guide(
            vec![
                pace("no_jitter", Jitter::NoJitter, None),
                pace("full", Jitter::Full, None),
            ],
            true,
        );
        assert!(g.contains("Without jitter, retries arrive in synchronized spikes at the same backoff steps; jitter spreads them into a low band."), "{g}");
        assert!(
            log.contains("band of jittered retries is as visible as the spikes without jitter"),
            "{log}"
        );
        assert!(!g.contains("Retry-After"), "{g}");
        // retry-after-herd: every strategy jittered, every error answer hinted and honoured.
        let at_least = Some((RetryAfterMode::AtLeast, 1.0));
        let spread = Some((RetryAfterMode::Spread, 0.96));
        let (g, log) = guide(
            vec![
                pace("full at_least", Jitter::Full, at_least),
                pace("decorrelated at_least", Jitter::Decorrelated, at_least),
                pace("full spread", Jitter::Full, spread),
            ],
            true,
        );
        assert!(
            !g.contains("Without jitter") && !g.contains("jitter spreads"),
            "{g}"
        );
        assert!(!log.contains("jittered retries"), "{log}");
        assert!(g.contains("In full at_least, decorrelated at_least, 100 % of the error answers carried a Retry-After hint, and the clients sleep at least as long as it asks"), "{g}");
        assert!(g.contains("In full spread, 96 % of the error answers carried a Retry-After hint, and the clients honour it with spread"), "{g}");
        // No strategy without jitter: nothing on jitter; a hint that paces a run without
        // jitter keeps it out of the jitter sentence.
        let (g, _) = guide(vec![pace("full", Jitter::Full, None)], true);
        assert!(!g.contains("jitter"), "{g}");
        let (g, _) = guide(
            vec![pace(
                "no_jitter",
                Jitter::NoJitter,
                Some((RetryAfterMode::Exact, 0.8)),
            )],
            true,
        );
        assert!(!g.contains("Without jitter"), "{g}");
        assert!(g.contains("In every panel, 80 % of the error answers carried a Retry-After hint, and the clients sleep exactly as long as it asks"), "{g}");
        // A hint paces a run only where the client honours it and most answers carry one.
        assert_eq!(Pace::hint(RetryAfterMode::Ignore, 1.0), None);
        assert_eq!(Pace::hint(RetryAfterMode::Spread, 0.2), None);
        assert_eq!(
            Pace::hint(RetryAfterMode::AtLeast, 0.7),
            Some((RetryAfterMode::AtLeast, 0.7))
        );
        // Outside a burst, retries are not said to come in synchronized spikes.
        let (g, _) = guide(vec![pace("no_jitter", Jitter::NoJitter, None)], false);
        assert!(!g.contains("jitter"), "{g}");
    }

    #[test]
    fn decimation_keeps_peaks() {
        let points: Vec<(f64, f64, f64)> = (0..2000)
            .map(|i| {
                (
                    i as f64 * 10.0,
                    1.0,
                    if i == 1234 {
                        500.0
                    } else {
                        1.0 + (i % 7) as f64
                    },
                )
            })
            .collect();
        let d = decimate_peaks(&points, 600);
        assert!(d.len() <= 600);
        assert!(d.iter().any(|p| p.2 == 500.0 && p.0 == 12340.0));
        assert_eq!(decimate_peaks(&points[..10], 600).len(), 10);
    }

    #[test]
    fn the_spike_sentence_names_ties_and_runs_without_retries() {
        let p = |v: &[(&str, f64)]| v.iter().map(|(n, x)| (n.to_string(), *x)).collect();
        assert_eq!(
            peak_sentence(p(&[("a", 9.0), ("b", 0.0)])),
            "The largest retry spike is 9 per bucket (a); b has none."
        );
        assert_eq!(
            peak_sentence(p(&[("a", 9.0), ("b", 9.0), ("c", 3.0), ("d", 3.0)])),
            "The largest retry spike is 9 per bucket (a and b), against 3 (c and d)."
        );
        assert_eq!(peak_sentence(p(&[("a", 0.0), ("b", 0.0)])), "");
        assert_eq!(peak_sentence(p(&[("a", 9.0), ("b", 8.5)])), "");
        assert_eq!(peak_sentence(p(&[("a", 9.0)])), "");
    }
}
