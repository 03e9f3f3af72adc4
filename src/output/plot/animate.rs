//! The herd as an animation (`herd.gif`, written by `run --animate` and `plot --animate`): the
//! attempts reaching the server per output bucket, drawn bucket by bucket as the clients
//! return, a strategy without jitter above one with full jitter, the server's capacity and the
//! fault windows behind, and how many requests have been served so far. Every frame is drawn
//! with the charts' own back end and text; the GIF's quantiser and LZW coder are deterministic,
//! so the same folder gives the same bytes.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::Canvas;
use super::style::{self, DrawResult, FIRST_ATTEMPTS, INK, MUTED};
use crate::atomic::write_atomic;
use crate::backoff::Jitter;
use crate::error::{Error, Result};
use crate::metric::Metric;
use crate::output::results::{Capacity, FaultWindow, ResultFolder, fmt_ms, fmt_number};
use crate::scenario::{Point, ScenarioDoc};
use crate::sim::Strategy;

/// The animation's file name in a result folder.
pub const FILE: &str = crate::folder::names::ANIMATION;

/// Frame size, px: smaller than a chart, since a GIF holds dozens of them.
const SIZE: (u32, u32) = (1040, 700);
/// Frames from the first bucket to the last busy one.
const FRAMES: u32 = 90;
/// Each frame's time on screen, in hundredths of a second (GIF's unit) ...
const FRAME_CS: u16 = 12;
/// ... and the last one's, so the dissolved herd can be read before the loop starts again.
const HOLD_CS: u16 = 400;
/// Columns of the time axis: buckets are merged (their busiest kept) down to about this many.
const COLUMNS: f64 = 300.0;
/// NeuQuant's sampling step (1 best, 30 fastest): 10 keeps the palette's eight colours exact.
const QUANT_SPEED: i32 = 10;

/// One strategy's run as the animation draws it.
struct Run {
    name: String,
    color: RGBColor,
    /// Per bucket: (start ms, first attempts, all attempts, successes).
    buckets: Vec<(f64, f64, f64, f64)>,
}

/// What every frame shares.
pub(crate) struct Animation {
    runs: [Run; 2],
    bucket_ms: f64,
    requests: f64,
    capacity: Option<Capacity>,
    faults: Vec<FaultWindow>,
    /// The end of the time axis, ms: a little after the last busy bucket.
    t_end: f64,
    /// Decades of the log count axis.
    decades: f64,
}

/// The first strategy of `strategies` whose sleeps use `jitter`.
fn strategy_with(strategies: &[Strategy], jitter: Jitter) -> Option<String> {
    (strategies.iter())
        .find(|s| s.source.is_none() && s.backoff.jitter() == jitter)
        .map(|s| s.name.clone())
}

/// The two strategies the animation sets side by side, from point 0's `strategies`: one
/// without jitter and one with full jitter, or the refusal naming what is missing.
fn pair(dir: &Path, strategies: &[Strategy]) -> Result<[String; 2]> {
    let pick = |jitter: Jitter, word: &str| {
        strategy_with(strategies, jitter).ok_or_else(|| {
            let names: Vec<&str> = strategies.iter().map(|s| s.name.as_str()).collect();
            refused(
                dir,
                format!(
                    "the herd animation sets a strategy without jitter beside one with full jitter, and this run has no {word} strategy (its strategies: {}); add one, e.g. backoff.strategies=[\"no_jitter\", \"full\"]",
                    names.join(", ")
                ),
            )
        })
    };
    Ok([
        pick(Jitter::NoJitter, "`no_jitter`")?,
        pick(Jitter::Full, "`full` jitter")?,
    ])
}

/// What `run --animate` checks before it runs anything: point 0 has the two strategies the
/// animation needs, and a `herd.gif` already in `dir` is jitterlab's, so that a refusal writes
/// nothing (not the run, not its charts).
pub fn preflight(points: &[Point], dir: &Path) -> Result<()> {
    let strategies = points
        .first()
        .map_or(&[][..], |p| &p.scenario.strategies[..]);
    pair(dir, strategies)?;
    crate::folder::owned::guard(dir, [FILE])
}

fn refused(dir: &Path, message: String) -> Error {
    Error::Usage {
        arg: format!("--animate ({})", dir.display()),
        message,
    }
}

impl Animation {
    /// The animation of a result folder's point 0 (replication 0, `timeseries.csv`): a
    /// strategy with `no_jitter` and one with `full` jitter are required.
    pub(crate) fn of(folder: &ResultFolder) -> Result<Animation> {
        let dir = &folder.dir;
        let info = folder.scenario.as_ref().ok_or_else(|| {
            refused(
                dir,
                "the folder has no scenario.toml to tell the strategies' jitter".into(),
            )
        })?;
        let doc = ScenarioDoc::parse(&info.text, crate::folder::names::SCENARIO, "animate")?;
        let points = doc.points()?;
        let strategies = points
            .first()
            .map_or(&[][..], |p| &p.scenario.strategies[..]);
        let names = pair(dir, strategies)?;
        let runs = names.map(|name| run_of(folder, &name));
        let bucket_ms = info.bucket_ms;
        let point = folder.info(0);
        let busiest = (runs.iter())
            .flat_map(|r| r.buckets.iter().map(|b| b.2))
            .fold(1.0, f64::max);
        let last_busy = (runs.iter())
            .flat_map(|r| r.buckets.iter().filter(|b| b.2 > 0.0).map(|b| b.0))
            .fold(0.0, f64::max);
        let faults: Vec<FaultWindow> = (point.iter())
            .flat_map(|p| p.faults.iter().filter(|w| w.effective).cloned())
            .collect();
        let fault_end = faults.iter().map(|w| w.end_ms).fold(0.0, f64::max);
        let capacity = point.and_then(|p| p.capacity.clone());
        let top = busiest.max(capacity.as_ref().map_or(0.0, |c| c.per_bucket));
        let requests = (folder.summary.iter())
            .find(|r| r.point == 0 && r.replication == 0 && r.strategy == runs[0].name)
            .map_or(0.0, |r| r.metrics[Metric::Requests]);
        Ok(Animation {
            runs,
            bucket_ms,
            requests,
            capacity,
            faults,
            t_end: ((last_busy + bucket_ms) * 1.05)
                .max(fault_end)
                .max(bucket_ms),
            decades: (top * 1.5).log10().ceil().max(1.0),
        })
    }

    /// The time shown by frame `i` of [`FRAMES`] (1-based), ms.
    fn now(&self, frame: u32) -> f64 {
        self.t_end * f64::from(frame) / f64::from(FRAMES)
    }

    /// Frame `frame`: every bucket that started before its time.
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        frame: u32,
    ) -> DrawResult {
        let now = self.now(frame);
        root.fill(&WHITE)?;
        let (width, _) = root.dim_in_pixel();
        let title = format!(
            "Attempts reaching the server per {} bucket, t = {:.1} s",
            fmt_ms(self.bucket_ms),
            now / 1000.0
        );
        root.draw(&Text::new(
            title,
            (width as i32 / 2, 14),
            style::text(style::TITLE_SIZE, &INK).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        let mut legend = String::from("log scale · grey: first attempts · colour: retries");
        if let Some(c) = &self.capacity {
            let per = fmt_number(c.per_bucket);
            legend.push_str(&format!(" · dashed: capacity, {per} per bucket"));
        }
        if !self.faults.is_empty() {
            legend.push_str(" · shaded: fault");
        }
        root.draw(&Text::new(
            legend,
            (width as i32 / 2, 50),
            style::text(style::SUBTITLE_SIZE, &MUTED).pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        let body = root.margin(84, 6, 10, 20);
        for (area, run) in body.split_evenly((2, 1)).iter().zip(&self.runs) {
            self.panel(area, run, now)?;
        }
        Ok(())
    }

    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        run: &Run,
        now: f64,
    ) -> DrawResult {
        let shown: Vec<&(f64, f64, f64, f64)> = run.buckets.iter().filter(|b| b.0 < now).collect();
        let served: f64 = shown.iter().map(|b| b.3).sum();
        let caption = format!(
            "{}: {} of {} requests served",
            run.name,
            fmt_number(served),
            fmt_number(self.requests)
        );
        let x_max = self.t_end / 1000.0;
        let mut chart = ChartBuilder::on(area)
            .caption(caption, style::text(style::CAPTION_SIZE, &run.color))
            .margin(4)
            .margin_right(16)
            .x_label_area_size(48)
            .y_label_area_size(84)
            .build_cartesian_2d(0.0..x_max, 0.0..self.decades)?;
        chart
            .configure_mesh()
            .light_line_style(INK.mix(0.05))
            .bold_line_style(INK.mix(0.12))
            .axis_style(INK.mix(0.6))
            .label_style(style::text(style::TICK_SIZE, &INK))
            .axis_desc_style(style::text(style::DESC_SIZE, &INK))
            .y_labels(self.decades as usize + 1)
            .y_label_formatter(&|v| match (v - v.round()).abs() < 1e-6 {
                true => style::tick(10f64.powi(v.round() as i32)),
                false => String::new(),
            })
            .x_label_formatter(&|v| style::tick(*v))
            .x_desc("time (s)")
            .y_desc("attempts per bucket")
            .draw()?;
        for w in &self.faults {
            let (x0, x1) = (w.start_ms / 1000.0, (w.end_ms / 1000.0).min(x_max));
            if x1 > x0 {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, self.decades)],
                    style::FAULT.mix(0.15).filled(),
                )))?;
            }
        }
        let log = |c: f64| c.max(1.0).log10();
        // The groups are fixed from the time axis, not from the frame, so that a frame only
        // adds to the one before it.
        let group = (self.t_end / self.bucket_ms / COLUMNS).ceil().max(1.0) as usize;
        let kept = merged(&shown, group);
        let width = self.bucket_ms * group as f64;
        let step = |value: fn(&(f64, f64, f64)) -> f64| {
            let mut points = vec![(0.0, 0.0)];
            for b in &kept {
                points.push((b.0 / 1000.0, log(value(b))));
                points.push(((b.0 + width) / 1000.0, log(value(b))));
            }
            points
        };
        chart.draw_series(AreaSeries::new(step(|b| b.2), 0.0, run.color.filled()))?;
        chart.draw_series(AreaSeries::new(step(|b| b.1), 0.0, FIRST_ATTEMPTS.filled()))?;
        if let Some(c) = &self.capacity {
            chart.draw_series(DashedLineSeries::new(
                vec![(0.0, log(c.per_bucket)), (x_max, log(c.per_bucket))],
                8,
                5,
                INK.stroke_width(2),
            ))?;
        }
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(now / 1000.0, 0.0), (now / 1000.0, self.decades)],
            INK.stroke_width(1),
        )))?;
        Ok(())
    }

    /// Every frame, rendered and encoded: each frame after the first only as the rectangle
    /// that changed, over the frame before it.
    pub(crate) fn gif(&self, path: &Path) -> Result<Vec<u8>> {
        style::ensure_fonts();
        let (w, h) = SIZE;
        let fail = |message: String| Error::Plot {
            path: path.to_path_buf(),
            message,
        };
        let mut out = Vec::new();
        {
            let mut encoder = gif::Encoder::new(&mut out, w as u16, h as u16, &[])
                .map_err(|e| fail(e.to_string()))?;
            encoder
                .set_repeat(gif::Repeat::Infinite)
                .map_err(|e| fail(e.to_string()))?;
            let mut previous: Option<Vec<u8>> = None;
            for frame in 1..=FRAMES {
                let rgb = self.pixels(frame).map_err(|e| fail(e.0))?;
                let (left, top, fw, fh) = match &previous {
                    None => (0, 0, w, h),
                    Some(before) => changed(before, &rgb, w, h).unwrap_or((0, 0, 1, 1)),
                };
                let mut part = Vec::with_capacity((fw * fh * 3) as usize);
                for y in top..top + fh {
                    let row = ((y * w + left) * 3) as usize;
                    part.extend_from_slice(&rgb[row..row + (fw * 3) as usize]);
                }
                let mut f = gif::Frame::from_rgb_speed(fw as u16, fh as u16, &part, QUANT_SPEED);
                f.left = left as u16;
                f.top = top as u16;
                f.dispose = gif::DisposalMethod::Keep;
                f.delay = if frame == FRAMES { HOLD_CS } else { FRAME_CS };
                encoder.write_frame(&f).map_err(|e| fail(e.to_string()))?;
                previous = Some(rgb);
            }
        }
        Ok(out)
    }

    /// Frame `frame` as RGB pixels, row by row.
    pub(crate) fn pixels(&self, frame: u32) -> std::result::Result<Vec<u8>, style::DrawErr> {
        let (w, h) = SIZE;
        let mut rgb = vec![255u8; (w * h * 3) as usize];
        {
            let root =
                Canvas::new(BitMapBackend::with_buffer(&mut rgb, SIZE), true).into_drawing_area();
            self.draw(&root, frame)?;
            root.present()?;
        }
        Ok(rgb)
    }
}

/// A strategy's buckets at point 0 from `timeseries.csv`, in time order.
fn run_of(folder: &ResultFolder, name: &str) -> Run {
    let mut buckets: Vec<(f64, f64, f64, f64)> = (folder.timeseries.iter())
        .filter(|r| r.point == 0 && r.strategy == name)
        .map(|r| {
            (
                r.t_ms,
                f64::from(r.first_attempts),
                f64::from(r.arrivals),
                f64::from(r.successes),
            )
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    Run {
        name: name.to_string(),
        color: style::rgb_of(crate::output::palette::color_of(&folder.strategies, name)),
        buckets,
    }
}

/// Buckets far narrower than a pixel, merged `group` at a time: each group is drawn as its
/// busiest bucket (the most attempts; of equals, the most retries, then the earliest),
/// `(start of the group, its first attempts, its attempts)`, both counts of that one bucket,
/// so that a one-bucket spike stays visible and a wave of retries is never painted as another
/// bucket's first attempts (no_jitter's first retries come 50 ms after its first attempts).
fn merged(buckets: &[&(f64, f64, f64, f64)], group: usize) -> Vec<(f64, f64, f64)> {
    let busier = |a: &(f64, f64, f64, f64), b: &(f64, f64, f64, f64)| {
        a.2 > b.2 || (a.2 == b.2 && a.2 - a.1 > b.2 - b.1)
    };
    (buckets.chunks(group))
        .map(|c| {
            let busiest = (c.iter()).fold(c[0], |top, b| if busier(b, top) { b } else { top });
            (c[0].0, busiest.1, busiest.2)
        })
        .collect()
}

/// The smallest rectangle `(left, top, width, height)` holding every pixel that differs
/// between two frames; `None` when none does.
fn changed(a: &[u8], b: &[u8], w: u32, h: u32) -> Option<(u32, u32, u32, u32)> {
    let mut bounds: Option<(u32, u32, u32, u32)> = None;
    for y in 0..h {
        for x in 0..w {
            let i = ((y * w + x) * 3) as usize;
            if a[i..i + 3] != b[i..i + 3] {
                let r = bounds.get_or_insert((x, y, x, y));
                *r = (r.0.min(x), r.1.min(y), r.2.max(x), r.3.max(y));
            }
        }
    }
    bounds.map(|(x0, y0, x1, y1)| (x0, y0, x1 - x0 + 1, y1 - y0 + 1))
}

/// A result folder's animation, read and checked, not yet written: [`prepare`] refuses before
/// anything is drawn or written, [`Pending::write`] writes.
pub struct Pending {
    animation: Animation,
    dir: PathBuf,
}

/// Reads the result folder `dir` and checks that its `herd.gif` can be written: the run has
/// the two strategies, and a `herd.gif` there is jitterlab's. Writes nothing.
pub fn prepare(dir: &Path) -> Result<Pending> {
    let folder = ResultFolder::read(dir)?;
    let animation = Animation::of(&folder)?;
    crate::folder::owned::guard(dir, [FILE])?;
    Ok(Pending {
        animation,
        dir: dir.to_path_buf(),
    })
}

impl Pending {
    /// Writes `herd.gif` into the result folder (atomically), recorded in its `meta.json` as
    /// jitterlab's. Returns its path.
    pub fn write(self) -> Result<PathBuf> {
        let path = self.dir.join(FILE);
        let _folder = crate::folder::Folder::open(&self.dir)?;
        crate::folder::owned::guard(&self.dir, [FILE])?;
        crate::folder::owned::record(&self.dir, std::slice::from_ref(&path), false)?;
        let bytes = self.animation.gif(&path)?;
        write_atomic(&path, &bytes)?;
        Ok(path)
    }
}

/// Writes `herd.gif` into the result folder `dir` (atomically), recorded in its `meta.json`
/// as jitterlab's; refused when a `herd.gif` there is not jitterlab's. Returns its path.
pub fn write(dir: &Path) -> Result<PathBuf> {
    prepare(dir)?.write()
}

/// The frames of the folder's animation that [`check_frames`] holds to the chart rules: the
/// first, the one in the middle and the last.
const CHECKED: [u32; 3] = [1, FRAMES / 2, FRAMES];

/// Draws the first, middle and last frame of `dir`'s herd animation in memory and checks each
/// against the rules of a legible chart (as `plot --check` does the charts): one sentence per
/// problem, `"herd.gif frame <n>: <rule>: <problem>"`.
pub fn check_frames(dir: &Path) -> Result<Vec<String>> {
    let animation = Animation::of(&ResultFolder::read(dir)?)?;
    let mut out = Vec::new();
    for frame in CHECKED {
        let (drawn, recording) = super::check::record(SIZE, || animation.pixels(frame));
        let pixels = drawn.map_err(|e| Error::Plot {
            path: dir.join(FILE),
            message: e.0,
        })?;
        let mut problems = super::check::problems(&recording);
        problems.extend(super::check::drawn_problems(&recording, Some(&pixels)));
        out.extend(
            problems
                .into_iter()
                .map(|p| format!("{FILE} frame {frame}: {p}")),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merged_group_draws_one_bucket_both_counts() {
        // no_jitter's start: every first attempt at 0 ms, the wave of their retries at 50 ms
        // (as many), a smaller bucket of both at 100 ms.
        let buckets = [
            (0.0, 1000.0, 1000.0, 0.0),
            (10.0, 0.0, 0.0, 0.0),
            (50.0, 0.0, 1000.0, 0.0),
            (60.0, 0.0, 0.0, 0.0),
            (100.0, 300.0, 400.0, 0.0),
            (110.0, 5.0, 390.0, 0.0),
        ];
        let refs: Vec<_> = buckets.iter().collect();
        assert_eq!(merged(&refs, 1).len(), 6);
        // The wave is drawn as retries, not under the first attempts of 0 ms; each group's
        // counts come from one bucket (300 first attempts of 400, not 300 of 390 + ...).
        assert_eq!(
            merged(&refs, 4),
            vec![(0.0, 0.0, 1000.0), (100.0, 300.0, 400.0)]
        );
        assert_eq!(
            merged(&refs, 2),
            vec![
                (0.0, 1000.0, 1000.0),
                (50.0, 0.0, 1000.0),
                (100.0, 300.0, 400.0)
            ]
        );
        // Equal in attempts and retries: the earlier bucket.
        let twins = [&(0.0, 1.0, 9.0, 0.0), &(10.0, 1.0, 9.0, 7.0)];
        assert_eq!(merged(&twins, 2), vec![(0.0, 1.0, 9.0)]);
    }

    #[test]
    fn the_changed_rectangle_holds_every_difference() {
        let (w, h) = (5, 4);
        let a = vec![255u8; (w * h * 3) as usize];
        assert_eq!(changed(&a, &a, w, h), None);
        let mut b = a.clone();
        b[((w + 3) * 3) as usize] = 0; // (3, 1)
        b[((2 * w + 1) * 3 + 2) as usize] = 0; // (1, 2)
        assert_eq!(changed(&a, &b, w, h), Some((1, 1, 3, 2)));
    }
}
