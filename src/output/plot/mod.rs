//! Charts drawn from a result folder's CSVs with plotters, each as PNG (1200×700) and SVG.
//!
//! | file | drawn when | from |
//! |------|------------|------|
//! | `herd` | always | `timeseries.csv` (point 0 of a sweep) and `scenario.toml` |
//! | `resync` | some retries | `timeseries.csv` (point 0): `retry_dispersion` per strategy |
//! | `load` | always | `aggregate.csv` (bars per strategy, or panels against the swept key) |
//! | `sweep_<metric>` | one-key sweep | `aggregate.csv` |
//! | `latency` | always | `latency.csv` (point 0) |
//! | `attempts` | always | `attempts.csv` (point 0) |
//! | `layers` | a chain of services | `layers.csv` (point 0): amplification by layer |
//! | `herd_layer<N>` | a chain of services, layers 2 and up | `layer_timeseries.csv` (point 0), as `herd` |
//! | `heatmap_<metric>` | two-key sweep | `aggregate.csv` |
//! | `phase_<metric>` | two-key sweep with recovery measured | `aggregate.csv`: `recovered`, `recovery_ms` |
//! | `hedging` | some strategy hedges | `aggregate.csv` (p50, p99, amplification per point), `hedging.csv` (which strategies hedge) |
//! | `pareto` | always | `pareto.csv`, else the front computed from `aggregate.csv` |
//! | `live_vs_sim` | a `jitterlab live` folder | `live_vs_sim.csv` |
//!
//! Every strategy keeps one colour in every chart, from its name
//! ([`crate::output::palette`]). Text is drawn with an embedded DejaVu Sans, so
//! charts look the same on a machine without fonts. Files are written atomically, and a chart
//! an earlier draw left that this one does not draw is removed (jitterlab's chart names only).
//!
//! [`animate`] writes `herd.gif` (`run --animate`, `plot --animate`): the herd of point 0 drawn
//! bucket by bucket, a strategy without jitter above one with full jitter.
//!
//! [`draw_delays`] draws the picture of `jitterlab delays --plot`: the sleep before each retry
//! for each jitter kind.

mod animate;
mod bars;
mod canvas;
pub(crate) mod check;
mod delays;
mod dist;
mod goodput;
mod heatmap;
pub(crate) mod hedging;
mod herd;
mod layers;
mod live;
mod load;
mod pareto;
mod phase;
mod resync;
mod series;
mod style;
mod text;

/// Registers the embedded font (DejaVu Sans) with plotters as "sans-serif", once per
/// process, so that any plotters chart drawn in the process has text without system fonts
/// (the benches call it for criterion's own charts).
pub use style::ensure_fonts as register_fonts;

/// How to read a phase map (the report shows it before the `phase_<metric>` charts).
pub(crate) use phase::READING as PHASE_READING;

/// `herd.gif`, the herd animation, and the function that writes it.
pub use animate::{
    FILE as ANIMATION, Pending as PendingAnimation, check_frames as check_animation,
    preflight as animate_preflight, prepare as prepare_animation, write as animate,
};

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::atomic::write_atomic;
use crate::backoff::Jitter;
use crate::cancel::CancelToken;
use crate::error::{Error, Result, Setting};
use crate::output::design::Design;
use crate::output::results::ResultFolder;
use style::{DrawErr, DrawResult};

/// Width of every chart, px.
pub const WIDTH: u32 = 1200;
/// Height of every chart, px.
pub const HEIGHT: u32 = 700;

/// One chart planned from a result folder: its file stem, title, reading guide and data.
pub(crate) struct Chart {
    /// File stem: `herd`, `load`, `heatmap_latency_p99_ms`, ...
    pub stem: String,
    /// The title drawn on the chart.
    pub title: String,
    /// Two to four sentences that tell a reader what to look at (for the report).
    pub guide: String,
    /// The scenario's headline chart (the report opens with it).
    pub headline: bool,
    kind: Kind,
}

enum Kind {
    Herd(herd::Herd),
    Goodput(goodput::Goodput),
    Sweep(load::Sweep),
    Latency(dist::Latency),
    Bars(bars::BarChart),
    Heatmap(heatmap::Heatmap),
    Pareto(pareto::Pareto),
    Hedging(hedging::Hedging),
    Resync(resync::Resync),
    LiveVsSim(live::LiveVsSim),
}

impl Chart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        match &self.kind {
            Kind::Herd(c) => c.draw(root, &self.title),
            Kind::Goodput(c) => c.draw(root, &self.title),
            Kind::Sweep(c) => c.draw(root, &self.title),
            Kind::Latency(c) => c.draw(root, &self.title),
            Kind::Bars(c) => c.draw(root, &self.title),
            Kind::Heatmap(c) => c.draw(root, &self.title),
            Kind::Pareto(c) => c.draw(root, &self.title),
            Kind::Hedging(c) => c.draw(root, &self.title),
            Kind::Resync(c) => c.draw(root, &self.title),
            Kind::LiveVsSim(c) => c.draw(root, &self.title),
        }
    }

    /// The chart's height, px (its width is [`WIDTH`]): [`HEIGHT`], or more for a
    /// time-series chart with more rows of runs than that holds.
    pub(crate) fn height(&self) -> u32 {
        match &self.kind {
            Kind::Herd(c) => c.height(),
            Kind::Goodput(c) => c.height(),
            Kind::Resync(c) => c.height(),
            _ => HEIGHT,
        }
    }

    /// The chart as an SVG document.
    pub(crate) fn svg(&self, path: &Path) -> Result<String> {
        render_svg(path, (WIDTH, self.height()), |root| self.draw(root))
    }

    /// The chart as PNG bytes, and its pixels (RGB, row by row) for the chart check.
    pub(crate) fn png(&self, path: &Path) -> Result<(Vec<u8>, Vec<u8>)> {
        render_png_pixels(path, (WIDTH, self.height()), |root| self.draw(root))
    }
}

fn plot_error(path: &Path, e: DrawErr) -> Error {
    Error::Plot {
        path: path.to_path_buf(),
        message: e.0,
    }
}

/// The drawing area of a chart: plotters' back end under our text layout.
type Area<'a, DB> = DrawingArea<canvas::Canvas<DB>, Shift>;

fn render_svg(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&Area<SVGBackend>) -> DrawResult,
) -> Result<String> {
    style::ensure_fonts();
    let mut out = String::new();
    {
        let backend = SVGBackend::with_string(&mut out, size);
        let root = canvas::Canvas::new(backend, false).into_drawing_area();
        draw(&root).map_err(|e| plot_error(path, e))?;
        root.present().map_err(|e| plot_error(path, e.into()))?;
    }
    Ok(out)
}

fn render_png(
    path: &Path,
    size: (u32, u32),
    draw: impl FnOnce(&Area<BitMapBackend>) -> DrawResult,
) -> Result<Vec<u8>> {
    render_png_pixels(path, size, draw).map(|(png, _)| png)
}

/// The PNG bytes of a drawing and its pixels.
fn render_png_pixels(
    path: &Path,
    (width, height): (u32, u32),
    draw: impl FnOnce(&Area<BitMapBackend>) -> DrawResult,
) -> Result<(Vec<u8>, Vec<u8>)> {
    style::ensure_fonts();
    let mut rgb = vec![255u8; (width * height * 3) as usize];
    {
        let backend = BitMapBackend::with_buffer(&mut rgb, (width, height));
        let root = canvas::Canvas::new(backend, true).into_drawing_area();
        draw(&root).map_err(|e| plot_error(path, e))?;
        root.present().map_err(|e| plot_error(path, e.into()))?;
    }
    let png = encode_png(&rgb, width, height).map_err(|message| Error::Plot {
        path: path.to_path_buf(),
        message,
    })?;
    Ok((png, rgb))
}

/// An 8-bit RGB buffer (plotters' `BitMapBackend::with_buffer`) as PNG bytes, encoded as
/// every chart here is (public for charts drawn outside this crate: the peers benchmark).
pub fn encode_png(rgb: &[u8], width: u32, height: u32) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(rgb.len() / 8);
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Default);
        encoder.set_filter(png::FilterType::Paeth);
        encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(rgb).map_err(|e| e.to_string())?;
        writer.finish().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// The subtitle of a time-series chart: the world point it shows and which runs.
pub(crate) fn subtitle(f: &ResultFolder, design: &Design, traces: &series::Traces) -> String {
    let mut parts = Vec::new();
    let world = design.world_label(f, traces.world);
    if !world.is_empty() {
        parts.push(format!("with {world}"));
    }
    parts.push(if traces.paired {
        "a stuck and a recovered replication side by side where they differ".to_string()
    } else {
        "replication 0".to_string()
    });
    parts.join(" · ")
}

/// The headline chart of a folder's charts: the chain's layers, the phase map of a trigger ×
/// load sweep, goodput over time for a spike or outage the runs recover from (or not), the
/// heat map of another two-key grid, the hedging trade-off of a folder that hedges, the load panels of a sweep over a key of the world, the
/// herd of a burst, the load chart otherwise (a sweep over a choice, or a steady overload
/// without a sweep: how much load the retries add, and at what success); else the herd.
fn headline(f: &ResultFolder, design: &Design, charts: &[Chart]) -> Option<usize> {
    let has = |stem: &str| charts.iter().position(|c| c.stem == stem);
    let burst = f.info(0).is_some_and(|i| i.burst);
    let world_sweep = f.sweep_keys.len() == 1 && design.world_keys.len() == 1;
    has("layers")
        .or_else(|| has("phase_recovered"))
        .or_else(|| has("goodput"))
        .or_else(|| charts.iter().position(|c| c.stem.starts_with("heatmap_")))
        .or_else(|| has("hedging"))
        .or_else(|| world_sweep.then(|| has("load")).flatten())
        .or_else(|| burst.then(|| has("herd")).flatten())
        .or_else(|| has("load"))
        .or_else(|| has("herd"))
}

/// Plans every chart that the folder's data allow, in the order of the report: the headline
/// chart first ([`headline`]).
pub(crate) fn plan(folder: &ResultFolder, design: &Design) -> Vec<Chart> {
    let traces = series::select(folder, design);
    let mut charts = Vec::new();
    let mut push = |stem: String, (title, guide, kind): (String, String, Kind)| {
        charts.push(Chart {
            stem,
            title,
            guide,
            headline: false,
            kind,
        })
    };
    if let Some((t, g, c)) = live::build(folder) {
        push("live_vs_sim".into(), (t, g, Kind::LiveVsSim(c)));
    }
    if let Some(traces) = &traces {
        if let Some((t, g, c)) = goodput::build(folder, design, traces) {
            push("goodput".into(), (t, g, Kind::Goodput(c)));
        }
        if let Some((title, guide, c)) = herd::build(folder, design, traces, None) {
            let log = c.wants_log().then(|| c.log_scale());
            push("herd".into(), (title.clone(), guide, Kind::Herd(c)));
            if let Some(log) = log {
                let t = format!("{title}, log scale");
                push("herd_log".into(), (t, log.log_guide(), Kind::Herd(log)));
            }
        }
        for layer in herd::layers(traces) {
            if let Some((t, g, c)) = herd::build(folder, design, traces, Some(layer)) {
                push(format!("herd_layer{layer}"), (t, g, Kind::Herd(c)));
            }
        }
        if let Some((t, g, c)) = resync::build(folder, design, traces) {
            push("resync".into(), (t, g, Kind::Resync(c)));
        }
    }
    match folder.sweep_keys.len() {
        0 => {
            if let Some((t, g, c)) = load::build_bars(folder, design) {
                push("load".into(), (t, g, Kind::Bars(c)));
            }
        }
        1 => {
            if let Some((t, g, c)) = load::build_sweep_panels(folder, design) {
                push("load".into(), (t, g, Kind::Sweep(c)));
            }
        }
        _ => {}
    }
    if let Some((t, g, c)) = dist::build_latency(folder, design) {
        push("latency".into(), (t, g, Kind::Latency(c)));
    }
    if let Some((t, g, c)) = dist::build_attempts(folder, design) {
        push("attempts".into(), (t, g, Kind::Bars(c)));
    }
    if let Some((t, g, c)) = layers::build(folder, design) {
        push("layers".into(), (t, g, Kind::Bars(c)));
    }
    if folder.sweep_keys.len() == 1 {
        for (metric, t, g, c) in load::build_sweep_metrics(folder, design) {
            push(format!("sweep_{metric}"), (t, g, Kind::Sweep(c)));
        }
    }
    if folder.sweep_keys.len() == 2 {
        for (metric, t, g, c) in phase::build(folder, design) {
            push(format!("phase_{metric}"), (t, g, Kind::Heatmap(c)));
        }
        for (metric, t, g, c) in heatmap::build(folder, design) {
            push(format!("heatmap_{metric}"), (t, g, Kind::Heatmap(c)));
        }
    }
    if let Some((t, g, c)) = hedging::build(folder, design) {
        push("hedging".into(), (t, g, Kind::Hedging(c)));
    }
    if let Some((t, g, c)) = pareto::build(folder, design) {
        push("pareto".into(), (t, g, Kind::Pareto(c)));
    }
    if let Some(i) = headline(folder, design, &charts) {
        let mut first = charts.remove(i);
        first.headline = true;
        charts.insert(0, first);
    }
    charts
}

/// A chart rendered: its PNG, its SVG when asked for, and what in it breaks the rules of a
/// legible chart ([`check`]), as `"<rule>: <problem>"`.
pub(crate) struct Rendered {
    pub png: Vec<u8>,
    pub svg: Option<String>,
    pub problems: Vec<String>,
}

/// A result folder read and its charts planned, not yet rendered: what a draw records before
/// it renders (the files it will write) and then renders.
pub(crate) struct Plan {
    /// The folder as charts show it ([`ResultFolder::for_display`]).
    pub folder: ResultFolder,
    /// The strategies' names as written, for `palette.json`.
    pub strategies: Vec<String>,
    pub design: Design,
    /// The charts in the order of the report.
    pub charts: Vec<Chart>,
}

impl Plan {
    /// Reads the folder `dir` and plans its charts. Names are shown as
    /// [`ResultFolder::for_display`] makes them.
    pub(crate) fn of(dir: &Path) -> Result<Plan> {
        let read = ResultFolder::read(dir)?;
        let strategies = read.strategies.clone();
        let folder = read.for_display();
        let design = Design::of(&folder);
        let charts = plan(&folder, &design);
        Ok(Plan {
            folder,
            strategies,
            design,
            charts,
        })
    }

    /// The chart files a draw of this plan writes into `dir`, PNG then SVG per chart.
    fn paths(&self, dir: &Path) -> Vec<PathBuf> {
        (self.charts.iter())
            .flat_map(|c| ["png", "svg"].map(|ext| dir.join(format!("{}.{ext}", c.stem))))
            .collect()
    }

    /// Renders every chart on every core: the PNG (recording what it draws for the check)
    /// and, with `svg`, the SVG. Once `cancel` is cancelled, no further chart is rendered and
    /// the result is [`Error::Interrupted`].
    pub(crate) fn render(self, dir: &Path, svg: bool, cancel: &CancelToken) -> Result<Drawing> {
        use rayon::prelude::*;
        let rendered: Vec<Result<Rendered>> = (self.charts.par_iter())
            .map(|chart| {
                if cancel.is_cancelled() {
                    return Err(Error::Interrupted);
                }
                // Recording is per thread: the chart is drawn whole on this one.
                let png_path = dir.join(format!("{}.png", chart.stem));
                let size = (WIDTH, chart.height());
                let (drawn, recording) = check::record(size, || chart.png(&png_path));
                let (png, pixels) = drawn?;
                let mut problems = check::problems(&recording);
                problems.extend(check::drawn_problems(&recording, Some(&pixels)));
                let svg = match svg {
                    true => Some(chart.svg(&dir.join(format!("{}.svg", chart.stem)))?),
                    false => None,
                };
                Ok(Rendered { png, svg, problems })
            })
            .collect();
        let rendered: Vec<Rendered> = rendered.into_iter().collect::<Result<_>>()?;
        if cancel.is_cancelled() {
            return Err(Error::Interrupted);
        }
        Ok(Drawing {
            folder: self.folder,
            strategies: self.strategies,
            design: self.design,
            svg,
            charts: self.charts.into_iter().zip(rendered).collect(),
        })
    }
}

/// A result folder read, planned once and every chart rendered: what the chart files, the
/// check and the report are made of.
pub(crate) struct Drawing {
    /// The folder as charts show it ([`ResultFolder::for_display`]).
    pub folder: ResultFolder,
    /// The strategies' names as written, for `palette.json`.
    pub strategies: Vec<String>,
    pub design: Design,
    /// Whether each chart's SVG was rendered too (a draw to files; the report links them).
    pub svg: bool,
    /// The charts in the order of the report, each with its rendering.
    pub charts: Vec<(Chart, Rendered)>,
}

impl Drawing {
    /// [`Plan::of`] then [`Plan::render`].
    pub(crate) fn of(dir: &Path, svg: bool, cancel: &CancelToken) -> Result<Drawing> {
        Plan::of(dir)?.render(dir, svg, cancel)
    }

    /// Every problem of every chart, `"<chart>: <rule>: <problem>"`, in the order of the
    /// report.
    pub(crate) fn problems(&self) -> Vec<String> {
        (self.charts.iter())
            .flat_map(|(c, r)| r.problems.iter().map(move |p| format!("{}: {p}", c.stem)))
            .collect()
    }

    /// Writes every chart, PNG and SVG, into `dir` (atomically) and the folder's
    /// `palette.json`; returns the chart files written (`paths`, as [`claim`] recorded them).
    /// The charts of an earlier draw that this one does not draw (a heatmap of another
    /// sweep) are removed when `meta.json` proves them jitterlab's.
    fn write(&self, dir: &Path, paths: Vec<PathBuf>) -> Result<Vec<PathBuf>> {
        let contents = (self.charts.iter()).flat_map(|(_, r)| {
            std::iter::once(r.png.as_slice()).chain(r.svg.as_ref().map(|s| s.as_bytes()))
        });
        for (path, bytes) in paths.iter().zip(contents) {
            write_atomic(path, bytes)?;
        }
        crate::folder::owned::record(dir, &paths, true)?;
        // The palette the charts used, for what else draws from the folder (a folder written
        // before palette.json existed gets one here).
        crate::output::palette::write(dir, &self.strategies)?;
        Ok(paths)
    }
}

/// Before a draw renders into `dir`: the folder is locked, a commit cut short is finished and
/// killed processes' temporary files go; then the plan is made.
/// The folder comes back open: locked until the draw is written.
fn prepare(dir: &Path) -> Result<(crate::folder::Folder, Plan)> {
    let folder = crate::folder::Folder::open(dir)?;
    folder.remove_leftovers()?;
    Ok((folder, Plan::of(dir)?))
}

/// The files a draw of `plan` writes into `dir` (its charts, `palette.json`, and with `report`
/// `report.html`): refused when one is a file jitterlab did not write, else recorded in
/// `meta.json` before anything is rendered, so that a draw cut short leaves only files proven
/// jitterlab's. Returns the chart files.
fn claim(dir: &Path, plan: &Plan, report: bool) -> Result<Vec<PathBuf>> {
    let charts = plan.paths(dir);
    let mut others = vec![crate::output::palette::FILE];
    if report {
        others.push(crate::folder::names::REPORT);
    }
    let names = (charts.iter().filter_map(|p| p.file_name()?.to_str())).chain(others.clone());
    crate::folder::owned::guard(dir, names)?;
    let mut recorded = charts.clone();
    recorded.extend(others.iter().map(|n| dir.join(n)));
    crate::folder::owned::record(dir, &recorded, false)?;
    Ok(charts)
}

/// Draws every chart that the folder's CSVs allow, PNG and SVG each, into `dir`, and returns
/// the files written (PNG then SVG per chart, in the order of the report); writes the folder's
/// `palette.json` too.
///
/// The folder must hold the CSVs of docs/results.md ([`crate::output::results::REQUIRED`]); a
/// missing or malformed file is an [`Error::ResultFolder`] naming it. Heatmaps appear only for
/// a two-key sweep and `sweep_<metric>` charts only for a one-key sweep.
pub fn draw_all(dir: &Path) -> Result<Vec<PathBuf>> {
    draw_all_until(dir, &CancelToken::new())
}

/// [`draw_all`], stopped by `cancel` with [`Error::Interrupted`] before any chart is written
/// (the rendering takes seconds for a large sweep, the writing milliseconds): the folder then
/// holds no chart of this draw.
pub fn draw_all_until(dir: &Path, cancel: &CancelToken) -> Result<Vec<PathBuf>> {
    let (_folder, plan) = prepare(dir)?;
    let paths = claim(dir, &plan, false)?;
    plan.render(dir, true, cancel)?.write(dir, paths)
}

/// What [`draw_with_report`] wrote, and what in the charts breaks the rules of a legible
/// chart.
#[derive(Debug)]
pub struct Drawn {
    /// The chart files, PNG then SVG per chart, in the order of the report.
    pub files: Vec<PathBuf>,
    /// `report.html`.
    pub report: PathBuf,
    /// One sentence per problem, `"<chart>: <rule>: <problem>"` (as [`check_charts`]).
    pub problems: Vec<String>,
}

/// Draws every chart as [`draw_all`] does and writes the report from the same drawing (the
/// folder is read, the charts planned and rendered once); returns what [`check_charts`] would
/// find in them too, so that a normal draw can warn of a chart that breaks a rule.
pub fn draw_with_report(dir: &Path) -> Result<Drawn> {
    draw_with_report_until(dir, &CancelToken::new())
}

/// [`draw_with_report`], stopped by `cancel` with [`Error::Interrupted`] before any file is
/// written: charts and report are rendered first, then written.
pub fn draw_with_report_until(dir: &Path, cancel: &CancelToken) -> Result<Drawn> {
    let (_folder, plan) = prepare(dir)?;
    let paths = claim(dir, &plan, true)?;
    let drawing = plan.render(dir, true, cancel)?;
    let html = crate::output::report::html(dir, &drawing);
    if cancel.is_cancelled() {
        return Err(Error::Interrupted);
    }
    let files = drawing.write(dir, paths)?;
    let report = crate::output::report::write_html(dir, &html)?;
    Ok(Drawn {
        files,
        report,
        problems: drawing.problems(),
    })
}

/// Draws every chart of the result folder `dir` (in memory) and checks what each drew against
/// the rules of a legible chart ([`check`]): no text outside the canvas, no two texts
/// overlapping, no text below 10 pt, no text over data, text and thin lines that stand out
/// from their background, and in each panel that is not a reference panel, data that reach
/// at least a fifth of its value axis. Returns one sentence per problem,
/// `"<chart>: <rule>: <problem>"`, in the order of the report; none when every chart keeps
/// the rules.
pub fn check_charts(dir: &Path) -> Result<Vec<String>> {
    Ok(Drawing::of(dir, false, &CancelToken::new())?.problems())
}

/// The playground's charts of the result folder `dir` (`jitterlab serve`), as SVG documents
/// rendered exactly as [`draw_all`] renders them: the headline chart, then the herd chart when
/// it is another. Each is `(stem, title, svg)`. Once `cancel` is cancelled, no further chart is
/// rendered and the result is [`Error::Interrupted`].
#[cfg(feature = "serve")]
pub(crate) fn playground_svgs(
    dir: &Path,
    cancel: &CancelToken,
) -> Result<Vec<(String, String, String)>> {
    use rayon::prelude::*;
    let plan = Plan::of(dir)?;
    let wanted = |c: &Chart| c.headline || c.stem == "herd";
    let charts: Vec<&Chart> = plan.charts.iter().filter(|c| wanted(c)).collect();
    (charts.par_iter())
        .map(|chart| {
            if cancel.is_cancelled() {
                return Err(Error::Interrupted);
            }
            let svg = chart.svg(&dir.join(format!("{}.svg", chart.stem)))?;
            Ok((chart.stem.clone(), chart.title.clone(), svg))
        })
        .collect()
}

/// The playground's first answer (`jitterlab serve`): the herd chart of `dir`, a folder that
/// holds replication 0 of each strategy alone, when the folder of every replication draws
/// the same bytes: the herd is the playground's only chart (the headline) and is drawn from
/// replication 0 alone — one sweep point, at most [`series::MAX_PANELS`] strategies (none
/// picked by its means) and no recovery measured (no stuck and recovered pair; whether a
/// run measures recovery is the scenario's, never the seed's). `None` otherwise.
#[cfg(feature = "serve")]
pub(crate) fn playground_first_herd(
    dir: &Path,
    cancel: &CancelToken,
) -> Result<Option<(String, String, String)>> {
    let plan = Plan::of(dir)?;
    let f = &plan.folder;
    let from_replication_0 = f.points.len() == 1
        && plan.design.candidates(0).len() <= series::MAX_PANELS
        && (f.summary.iter())
            .all(|r| r.replication == 0 && r.metrics[crate::metric::Metric::Recovered].is_nan());
    let wanted: Vec<&Chart> = (plan.charts.iter())
        .filter(|c| c.headline || c.stem == "herd")
        .collect();
    match wanted.as_slice() {
        [chart] if chart.stem == "herd" && chart.headline && from_replication_0 => {
            if cancel.is_cancelled() {
                return Err(Error::Interrupted);
            }
            let svg = chart.svg(&dir.join("herd.svg"))?;
            Ok(Some((chart.stem.clone(), chart.title.clone(), svg)))
        }
        _ => Ok(None),
    }
}

/// Draws the distribution of sleeps per retry number for each jitter kind (one panel per kind,
/// shared axes): the samples as a strip, their 25–75 % box, 5–95 % whiskers and median. The
/// format follows the extension of `path` (`.png` or `.svg`); the file is written atomically.
///
/// `samples` holds `(jitter, retry, delay_ms)` with retry 1 the sleep before the second
/// attempt, as printed by `jitterlab delays`. An existing file is replaced (a link by the
/// chart, never what it points at); [`draw_delays_new`] never replaces one.
pub fn draw_delays(samples: &[(Jitter, u32, f64)], path: &Path) -> Result<()> {
    draw_delays_to(samples, path, true)
}

/// [`draw_delays`] into a new file: an existing `path` (a file, a link, even a dangling one)
/// is refused and left as it is (`jitterlab delays --plot` without `--force`).
pub fn draw_delays_new(samples: &[(Jitter, u32, f64)], path: &Path) -> Result<()> {
    draw_delays_to(samples, path, false)
}

fn draw_delays_to(samples: &[(Jitter, u32, f64)], path: &Path, replace: bool) -> Result<()> {
    let exists = || Error::Usage {
        arg: format!("{} {}", Setting::DelaysPlot, path.display()),
        message: format!(
            "exists; jitterlab never replaces a file it was not told to: name a new file, or add {} to replace it",
            Setting::ReplacePlot
        ),
    };
    if !replace && path.symlink_metadata().is_ok() && !path.is_dir() {
        return Err(exists());
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if path.is_dir() {
        return Err(Error::Usage {
            arg: path.display().to_string(),
            message: "is a folder; name the chart file to write (.png or .svg)".to_string(),
        });
    }
    let chart = delays::Delays::new(samples).map_err(|message| Error::Plot {
        path: path.to_path_buf(),
        message,
    })?;
    let bytes = match ext.as_deref() {
        Some("png") => render_png(path, (WIDTH, HEIGHT), |root| chart.draw(root))?,
        Some("svg") => render_svg(path, (WIDTH, HEIGHT), |root| chart.draw(root))?.into_bytes(),
        _ => {
            return Err(Error::Usage {
                arg: path.display().to_string(),
                message: "the plot file must end in .png or .svg".to_string(),
            });
        }
    };
    if replace {
        write_atomic(path, &bytes)
    } else {
        crate::atomic::create_atomic(path, &bytes).map_err(|e| match e {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists => {
                exists()
            }
            other => other,
        })
    }
}

/// The colour of the strategy at `index` (first-appearance order) as CSS `#rrggbb`, the same
/// as in the charts.
pub(crate) fn strategy_css_color(index: usize) -> String {
    crate::output::palette::hex(crate::output::palette::strategy_color(index))
}
