//! `report.html`: one self-contained page (CSS inline, each chart's PNG as a data URI, no
//! script, nothing fetched): the scenario's headline chart first, a summary table of means and
//! 95 % intervals, every other chart of [`crate::output::plot`] with a short guide computed
//! from its numbers, the paired differences the replications support, and the resolved
//! scenario at the end. Tables that would run long show their top rows and link the CSV file
//! that holds every row.
//!
//! The charts are shown as their PNGs, drawn with the embedded DejaVu Sans: the rendering
//! the chart check measured, the same on every reader's machine (an SVG's text falls back to
//! whatever font the browser has, and its widths with it). Each links its SVG file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::atomic::write_atomic;
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::folder::names;
use crate::metric::{Metric, Unit};
use crate::output::design::{Candidate, Design};
use crate::output::labels;
use crate::output::plot;
use crate::output::results::{LiveVsSimRow, ResultFolder, ScenarioInfo, fmt_number};
use crate::sim::hedge::Cancel;

/// Tables longer than this show their top rows and link their CSV file.
const MAX_ROWS: usize = 24;
/// Paired differences shown at most.
const MAX_DIFFERENCES: usize = 15;

/// The metrics of the summary table, in column order.
const TABLE_METRICS: [Metric; 7] = [
    Metric::Amplification,
    Metric::SuccessRate,
    Metric::LatencyP50Ms,
    Metric::LatencyP99Ms,
    Metric::MakespanMs,
    Metric::PeakRetries,
    Metric::WastedWorkShare,
];

const CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI','DejaVu Sans',sans-serif;color:#222;margin:0;background:#fafafa;line-height:1.45}
main{max-width:1240px;margin:0 auto;padding:24px 28px 60px;background:#fff}
h1{font-size:1.8em;margin:0.2em 0 0.1em}h2{font-size:1.3em;margin:1.6em 0 0.3em;border-bottom:1px solid #ddd;padding-bottom:4px}
.lead{font-size:1.1em;color:#444;margin-top:0}
.meta{color:#666;font-size:0.9em}
nav{font-size:0.92em;margin:10px 0}nav a{margin-right:14px;color:#0072B2;text-decoration:none}
table{border-collapse:collapse;font-size:0.88em;margin:8px 0;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th{background:#f2f2f2;position:sticky;top:0;white-space:normal;vertical-align:bottom;max-width:9em;font-weight:600}
th .u{font-weight:normal;color:#666}td .ci{display:inline-block;margin-top:1px}td.s,th.s{text-align:left}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:-1px}
.ci{color:#777;font-size:0.9em}
.tablewrap{overflow-x:auto;max-height:560px;overflow-y:auto;border:1px solid #eee}
figure{margin:8px 0 0}figure img{width:100%;height:auto;display:block;border:1px solid #eee}figcaption{font-size:0.85em;color:#666;text-align:right}
.guide{background:#f5f8fb;border-left:4px solid #0072B2;padding:8px 12px;margin:6px 0 10px;color:#333}
td.below{background:#fbeee6}td.wrap{white-space:normal;min-width:8em}
section.headline h2{border-bottom:2px solid #0072B2}
pre{background:#f6f6f6;padding:12px;overflow-x:auto;font-size:0.85em;border:1px solid #e6e6e6}
pre.answer{white-space:pre-wrap}
";

/// Escapes text for HTML element content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A chart's picture for the page: its PNG as a data URI (drawn with the embedded font, the
/// rendering the chart check measured, so the page shows what was checked whatever fonts the
/// reader's machine has), labelled for screen readers, with a link to the SVG file beside the
/// report when it is there.
fn picture(dir: &Path, chart: &plot::Chart, png: &[u8], svg_drawn: bool) -> String {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    let svg = format!("{}.svg", chart.stem);
    // A draw writes the SVG beside the report; a report alone links one already there.
    let link = if svg_drawn || dir.join(&svg).is_file() {
        format!(
            "<figcaption><a href=\"{0}\">{0}</a> (vector)</figcaption>",
            esc(&svg)
        )
    } else {
        String::new()
    };
    format!(
        "<img id=\"img-{id}\" alt=\"{alt}\" width=\"{w}\" height=\"{h}\" src=\"data:image/png;base64,{data}\">{link}",
        id = esc(&chart.stem),
        alt = esc(&chart.title),
        w = plot::WIDTH,
        h = chart.height(),
    )
}

/// How a column of a metric is written: values times `scale`, in `unit` (named once, in the
/// column's header): seconds for times that reach 2 s in the column, else ms.
#[derive(Clone, Copy)]
struct ColumnUnit {
    scale: f64,
    unit: &'static str,
}

impl ColumnUnit {
    /// The unit of `metric` for a column whose values (in the metric's own unit) reach
    /// `largest` in absolute value.
    fn of(metric: Metric, largest: f64) -> ColumnUnit {
        let (scale, unit) = match metric.unit() {
            Unit::Millis if largest >= 2000.0 => (0.001, "s"),
            Unit::Millis => (1.0, "ms"),
            Unit::Share => (100.0, "%"),
            Unit::Times => (1.0, "×"),
            Unit::Count => (1.0, ""),
        };
        ColumnUnit { scale, unit }
    }

    /// A column header: the metric's label, its unit on a line of its own, the column's name
    /// in `summary.csv` as a tooltip.
    fn header(self, metric: Metric, say: Say) -> String {
        let unit = match self.unit {
            "" => String::new(),
            u => format!("<br><span class=\"u\">({u})</span>"),
        };
        format!(
            "<th title=\"{}\">{}{unit}</th>",
            esc(metric.name()),
            esc(&say(metric.label()))
        )
    }
}

/// A metric's mean (and ± half its 95 % interval on a second line) in its column's unit; a
/// success rate with the digits that keep it on its side of the target.
fn cell(
    folder: &ResultFolder,
    c: &Candidate,
    metric: Metric,
    col: ColumnUnit,
    target: f64,
) -> String {
    let Some(row) = folder.aggregate_of(c.point, &c.strategy, metric) else {
        return "–".to_string();
    };
    let Some(mean) = row.mean else {
        return "–".to_string();
    };
    let main = match metric {
        Metric::SuccessRate => labels::percent_near(mean, target)
            .trim_end_matches(" %")
            .to_string(),
        _ => fmt_number(mean * col.scale),
    };
    match (row.ci95_low, row.ci95_high) {
        (Some(lo), Some(hi)) if hi > lo => {
            let half = (hi - lo) / 2.0 * col.scale;
            format!("{main}<br><span class=\"ci\">± {}</span>", fmt_number(half))
        }
        _ => main,
    }
}

/// A link to a file of the result folder, by its name (the report sits beside it).
fn file_link(name: &str) -> String {
    format!("<a href=\"{0}\"><code>{0}</code></a>", esc(name))
}

/// The summary table: every (point, strategy) when they are few, else those of the world
/// point the charts show, with a link to `aggregate.csv`. Success below the target is tinted.
/// The columns of the recovery table, each shown where some run defines it (the oscillating
/// and degraded shares only where some run was).
const STORM_METRICS: [Metric; 5] = [
    Metric::Recovered,
    Metric::Oscillating,
    Metric::DegradedBefore,
    Metric::TimeToCollapseMs,
    Metric::TimeToHealthyMs,
];

/// The (point, strategy) pairs the tables show: all of them, or those of the world point the
/// charts show when there are too many.
fn table_rows(design: &Design) -> (Vec<&Candidate>, usize) {
    let all: Vec<&Candidate> = design.all_candidates().map(|(_, c)| c).collect();
    let total = all.len();
    if total <= MAX_ROWS {
        (all, total)
    } else {
        (design.candidates(design.showcase()).iter().collect(), total)
    }
}

fn summary_table(folder: &ResultFolder, design: &Design, say: Say, out: &mut String) {
    // A chain's load on every layer leads; the clients' own attempts follow, named as the
    // edge's (the deepest layer's is the layers chart's, beside).
    let chain = [Metric::ChainAmplification];
    let metrics: Vec<Metric> = (chain.into_iter().filter(|_| folder.layered()))
        .chain(TABLE_METRICS)
        .filter(|m| folder.has(*m))
        .collect();
    let edge = |text: &str| match folder.layered() {
        true => say(&text.replace(
            Metric::Amplification.label(),
            "attempts per request at the edge",
        )),
        false => say(text),
    };
    let say: Say = &edge;
    let n = folder.aggregate.iter().map(|r| r.n).max().unwrap_or(0);
    let (rows, all) = table_rows(design);
    let _ = write!(
        out,
        "<p>Means across {n} replication{} with ± half the 95 % confidence interval (Student t). \
         A success rate below the target ({}) is tinted.",
        if n == 1 { "" } else { "s" },
        pct(design.target)
    );
    if rows.len() < all {
        let _ = write!(
            out,
            " Shown: the {} candidates at {} (the world point the charts show); {} holds all {all} (point, strategy) pairs.",
            rows.len(),
            esc(&design.world_label(folder, design.showcase())),
            file_link(names::AGGREGATE),
        );
    }
    out.push_str("</p>\n");
    metric_table(folder, design, say, &metrics, &rows, "summary", out);
}

/// After the summary, for runs with a trigger: the verdicts and the first passages.
fn recovery_table(folder: &ResultFolder, design: &Design, say: Say, out: &mut String) {
    let defined = |m: Metric, nonzero: bool| {
        (folder.aggregate.iter())
            .any(|r| r.metric == m && r.mean.is_some_and(|v| !nonzero || v > 0.0))
    };
    let metrics: Vec<Metric> = (STORM_METRICS.into_iter())
        .filter(|&m| defined(m, matches!(m, Metric::Oscillating | Metric::DegradedBefore)))
        .collect();
    if metrics.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"recovery-section\">Recovery after the trigger</h2>\n<p>");
    if metrics.contains(&Metric::Recovered) {
        out.push_str(
            "Recovered: the share of runs that serve their offered load again after the trigger, to the end of the run; \
             oscillating: the share swinging between served and collapsed; degraded before: the share already short of \
             the offered load before the trigger (recovery is judged against the offered load all the same). \
             Recovery is judged in windows after the trigger, on the requests begun in each, so a run can recover \
             while its success rate, which also counts the requests the trigger itself failed, stays below the target.",
        );
    }
    if metrics
        .iter()
        .any(|m| matches!(m, Metric::TimeToCollapseMs | Metric::TimeToHealthyMs))
    {
        let _ = write!(
            out,
            " Times to collapse (from the start) and back to healthy (from the trigger's end) are Kaplan–Meier means \
             restricted to the horizon, the runs that never got there counted as censored; {} has the medians and \
             how many got there.",
            file_link(names::PASSAGE)
        );
    }
    shedders_before(folder, out);
    out.push_str("</p>\n");
    let (rows, _) = table_rows(design);
    metric_table(folder, design, say, &metrics, &rows, "recovery", out);
}

/// Says which strategies fall short of the offered load before the trigger more often than
/// every strategy without a client that turns requests away (as a scenario's comments explain
/// a throttle's cold start): the reason for a surprising `degraded before`, from the scenario.
fn shedders_before(folder: &ResultFolder, out: &mut String) {
    // The strategies' shedders, as at the first point (a sweep of the client is rare, and
    // the sentence is about the policy).
    let Some(strategies) = folder.info(0).map(|p| &p.strategies) else {
        return;
    };
    // The share of a strategy's runs degraded before the trigger, over every point.
    let share = |strategy: &str| {
        let runs: Vec<f64> = (folder.summary.iter())
            .filter(|r| r.strategy == crate::text::shown(strategy))
            .map(|r| r.metrics[Metric::DegradedBefore])
            .filter(|v| v.is_finite())
            .collect();
        (!runs.is_empty()).then(|| runs.iter().sum::<f64>() / runs.len() as f64)
    };
    // What the load alone does: the most any strategy without a shedder is degraded.
    let plain = (strategies.iter())
        .filter(|s| s.shedders.is_empty())
        .filter_map(|s| share(&s.name))
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    let why: Vec<String> = (strategies.iter())
        .filter(|s| !s.shedders.is_empty())
        .map(|s| (&s.name, &s.shedders))
        .filter_map(|(name, shedders)| {
            let s = share(name)?;
            (s > plain.unwrap_or(0.25) + 1e-9).then(|| {
                let what: Vec<&str> = shedders.iter().map(|s| s.what_it_does()).collect();
                format!(
                    "{} in {} of its runs: it has {}",
                    crate::text::shown(name),
                    pct(s),
                    what.join(", and ")
                )
            })
        })
        .collect();
    if why.is_empty() {
        return;
    }
    let baseline = match plain {
        Some(p) => format!(" (every strategy without one: at most {})", pct(p)),
        None => String::new(),
    };
    let _ = write!(
        out,
        " Short of the offered load before the trigger by their own client{baseline}: {}. \
         A policy that turns requests away on a healthy server is judged against the offered load all the same, \
         never against its own lower goodput.",
        esc(&why.join("; "))
    );
}

/// A table of `metrics` (columns) for the pairs `rows`, its sweep values first.
fn metric_table(
    folder: &ResultFolder,
    design: &Design,
    say: Say,
    metrics: &[Metric],
    rows: &[&Candidate],
    id: &str,
    out: &mut String,
) {
    let _ = write!(
        out,
        "<div class=\"tablewrap\"><table id=\"{id}\"><thead><tr>"
    );
    for k in &folder.sweep_keys {
        let (name, kind) = labels::Reading::of(folder).key(k);
        let unit = match kind {
            labels::Kind::Rate => "<br><span class=\"u\">(requests/s)</span>",
            _ => "",
        };
        let _ = write!(out, "<th title=\"{}\">{}{unit}</th>", esc(k), esc(&name));
    }
    out.push_str("<th class=\"s\">strategy</th>");
    let columns: Vec<ColumnUnit> = (metrics.iter())
        .map(|&m| {
            let largest = (rows.iter())
                .filter_map(|c| folder.aggregate_of(c.point, &c.strategy, m)?.mean)
                .fold(0.0, |a: f64, v| a.max(v.abs()));
            ColumnUnit::of(m, largest)
        })
        .collect();
    for (m, col) in metrics.iter().zip(&columns) {
        out.push_str(&col.header(*m, say));
    }
    out.push_str("</tr></thead><tbody>\n");
    for c in rows {
        out.push_str("<tr>");
        if let Some(p) = folder.point(c.point) {
            for (k, v) in folder.sweep_keys.iter().zip(&p.values) {
                let _ = write!(
                    out,
                    "<td title=\"{}\">{}</td>",
                    esc(v),
                    esc(&labels::Reading::of(folder).value(k, v))
                );
            }
        }
        let color = plot::strategy_css_color(c.color);
        let _ = write!(
            out,
            "<td class=\"s\"><span class=\"swatch\" style=\"background:{color}\"></span>{}</td>",
            esc(&c.strategy)
        );
        for (m, col) in metrics.iter().zip(&columns) {
            let below = *m == Metric::SuccessRate && !design.meets_target(folder, c);
            let class = if below { " class=\"below\"" } else { "" };
            let text = cell(folder, c, *m, *col, design.target);
            let _ = write!(out, "<td{class}>{text}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// A share as `99.9 %`.
fn pct(share: f64) -> String {
    format!("{} %", fmt_number(share * 100.0))
}

/// The metrics whose paired differences the report lists.
const DIFFERENCE_METRICS: [Metric; 6] = [
    Metric::SuccessRate,
    Metric::Amplification,
    Metric::LatencyP99Ms,
    Metric::MakespanMs,
    Metric::PeakRetries,
    Metric::Recovered,
];

/// The paired differences the replications support (the interval excludes 0), for the key
/// metrics at the world point the charts show, largest relative difference first; nothing
/// when there is none.
fn compare_table(folder: &ResultFolder, design: &Design, say: Say, out: &mut String) {
    let Some(rows) = &folder.compare else { return };
    let world = design.showcase();
    let points = design
        .worlds
        .get(world)
        .map(|w| w.points.clone())
        .unwrap_or_default();
    let size = |r: &&crate::output::rows::CompareRow| {
        let a = folder
            .aggregate_of(r.point, &r.strategy_b, r.metric)
            .and_then(|x| x.mean)
            .unwrap_or(0.0)
            .abs();
        r.mean_diff.unwrap_or(0.0).abs() / a.max(1e-9)
    };
    let mut supported: Vec<&crate::output::rows::CompareRow> = rows
        .iter()
        .filter(|r| {
            points.contains(&r.point)
                && DIFFERENCE_METRICS
                    .map(|m| folder.as_load(m))
                    .contains(&r.metric)
        })
        .filter(|r| match (r.ci95_low, r.ci95_high) {
            (Some(lo), Some(hi)) => lo > 0.0 || hi < 0.0,
            _ => false,
        })
        .collect();
    if supported.is_empty() {
        return;
    }
    supported.sort_by(|a, b| size(b).total_cmp(&size(a)));
    let total = supported.len();
    out.push_str("<h2 id=\"compare\">Paired differences</h2>\n");
    let _ = write!(
        out,
        "<p>Mean of (a − b) over replications that share their random numbers, with its 95 % interval, for the key metrics{}: only differences whose interval excludes 0 (those the runs support), largest first relative to b.",
        match design.world_label(folder, world) {
            w if w.is_empty() => String::new(),
            w => format!(" at {}", esc(&w)),
        }
    );
    if total > MAX_DIFFERENCES {
        let _ = write!(
            out,
            " The top {MAX_DIFFERENCES} of {total}; {} holds every pair, metric and point.",
            file_link(names::COMPARE)
        );
    }
    out.push_str("</p>\n");
    out.push_str("<div class=\"tablewrap\"><table><thead><tr><th class=\"s\">metric</th><th class=\"s\">a</th><th class=\"s\">b</th><th>mean a − b</th><th>95 % interval</th></tr></thead><tbody>\n");
    for r in supported.iter().take(MAX_DIFFERENCES) {
        let largest = [r.mean_diff, r.ci95_low, r.ci95_high]
            .into_iter()
            .flatten()
            .fold(0.0, |a: f64, v| a.max(v.abs()));
        let col = ColumnUnit::of(r.metric, largest);
        let unit = match (r.metric.unit(), col.unit) {
            (Unit::Share, _) => " (percentage points)".to_string(),
            (_, "") => String::new(),
            (_, u) => format!(" ({u})"),
        };
        let f = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| fmt_number(v * col.scale));
        let pair = |s: &str| {
            let c = Candidate {
                point: r.point,
                strategy: s.to_string(),
                color: 0,
            };
            esc(&design.candidate_label(folder, &c))
        };
        let _ = writeln!(
            out,
            "<tr><td class=\"s wrap\">{}</td><td class=\"s wrap\">{}</td><td class=\"s wrap\">{}</td><td>{}</td><td>[{}, {}]</td></tr>",
            esc(&say(&format!("{}{unit}", r.metric.label()))),
            pair(&r.strategy_a),
            pair(&r.strategy_b),
            f(r.mean_diff),
            f(r.ci95_low),
            f(r.ci95_high)
        );
    }
    out.push_str("</tbody></table></div>\n");
}

/// How the report words a text of the simulator's (a chart's title or guide, a metric's
/// label): as it is, or [`hedge_words`].
type Say<'a> = &'a dyn Fn(&str) -> String;

/// True when every extra copy of the folder is a hedge: some strategy hedges
/// (`hedging.csv`) and every other sends one attempt per request at every point.
fn hedging_only(folder: &ResultFolder, design: &Design) -> bool {
    folder.hedging.is_some()
        && design.all_candidates().all(|(_, c)| {
            folder.hedges(&c.strategy) || Design::mean(folder, c, Metric::Amplification) <= 1.0
        })
}

/// Sentences of the charts' guides that say what retries do, and what hedging does instead:
/// a rejected copy ends its request unless its answer is non-fatal (A6), so the words alone
/// ([`hedge_words`]) would say something false.
const HEDGE_SENTENCES: [(&str, &str); 2] = [
    (
        "rejected attempts come back as more retries",
        "a rejected copy ends its request, or sends the next copy at once where its answer is \
         non-fatal (hedging.non_fatal)",
    ),
    (
        "the load it sheds turned into retries and work for clients who have given up",
        "the load it sheds is requests that failed, and work on copies nobody waits for",
    ),
];

/// `text` in the words of hedging: the sentences of [`HEDGE_SENTENCES`] replaced, then an
/// attempt is a copy, a retry a hedge (whole words, their capitals kept).
fn hedge_words(text: &str) -> String {
    let text = &HEDGE_SENTENCES
        .iter()
        .fold(text.to_string(), |t, (retries, hedges)| {
            t.replace(retries, hedges)
        });
    let word = |w: &str| -> Option<&'static str> {
        Some(match w {
            "attempt" => "copy",
            "attempts" => "copies",
            "Attempt" => "Copy",
            "Attempts" => "Copies",
            "retry" => "hedge",
            "retries" => "hedges",
            "retried" => "hedged",
            "Retry" => "Hedge",
            "Retries" => "Hedges",
            _ => return None,
        })
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(c) = rest.chars().next() {
        let end = match rest.find(|c: char| !c.is_alphabetic()) {
            Some(0) => c.len_utf8(),
            Some(end) => end,
            None => rest.len(),
        };
        let (w, tail) = rest.split_at(end);
        out.push_str(word(w).unwrap_or(w));
        rest = tail;
    }
    out
}

/// One chart's section: title, guide and the picture.
fn chart_section(
    dir: &Path,
    chart: &plot::Chart,
    png: &[u8],
    svg: bool,
    say: Say,
    out: &mut String,
) {
    let _ = writeln!(
        out,
        "<section class=\"chart{class}\" id=\"chart-{id}\">\n<h2>{title}</h2>\n<p class=\"guide\">{guide}</p>\n<figure>{picture}</figure>\n</section>",
        class = if chart.headline { " headline" } else { "" },
        id = esc(&chart.stem),
        title = esc(&say(&chart.title)),
        guide = esc(&say(&chart.guide)),
        picture = picture(dir, chart, png, svg),
    );
}

/// Renders the report of a result folder as HTML text (its charts drawn in memory).
pub fn render_report(dir: &Path) -> Result<String> {
    Ok(html(
        dir,
        &plot::Drawing::of(dir, false, &CancelToken::new())?,
    ))
}

/// The report of a folder already drawn.
pub(crate) fn html(dir: &Path, drawing: &plot::Drawing) -> String {
    let (folder, design) = (&drawing.folder, &drawing.design);
    let scenario = folder.scenario.as_ref();
    let name = scenario
        .map(|s| s.name.clone())
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "jitterlab run".to_string());

    let mut out = String::with_capacity(256 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(out, "<title>{} – jitterlab report</title>", esc(&name));
    let _ = writeln!(out, "<style>{CSS}</style>\n</head>\n<body>\n<main>");
    let _ = writeln!(out, "<h1 id=\"title\">{}</h1>", esc(&name));
    if let Some(d) = scenario.map(|s| s.description.as_str()) {
        let _ = writeln!(out, "<p class=\"lead\">{}</p>", esc(d));
    }
    facts(folder, design, dir, &mut out);
    let hedged = hedging_only(folder, design);
    let say: Say = if hedged {
        &hedge_words
    } else {
        &|t: &str| t.to_string()
    };
    hedging_lead(folder, design, hedged, &mut out);

    let (headline, rest): (Vec<_>, Vec<_>) = (drawing.charts.iter())
        .map(|(c, r)| (c, r.png.as_slice()))
        .partition(|(c, _)| c.headline);
    nav(&headline, &rest, &mut out);

    let mut phase_read = false;
    let mut section = |chart: &plot::Chart, png: &[u8], out: &mut String| {
        if chart.stem.starts_with("phase_") && !std::mem::replace(&mut phase_read, true) {
            let _ = writeln!(
                out,
                "<h2 id=\"phase-map\">Reading a phase map</h2>\n<p class=\"guide\">{}</p>",
                esc(plot::PHASE_READING)
            );
        }
        chart_section(dir, chart, png, drawing.svg, say, out);
    };
    for (c, png) in &headline {
        section(c, png, &mut out);
    }
    out.push_str("<h2 id=\"summary-section\">Summary</h2>\n");
    recommendation(folder, dir, &mut out);
    summary_table(folder, design, say, &mut out);
    recovery_table(folder, design, say, &mut out);
    live_table(folder, dir, &mut out);
    for (c, png) in &rest {
        section(c, png, &mut out);
    }
    compare_table(folder, design, say, &mut out);

    scenario_section(scenario, &mut out);
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// The most of `recommendation.txt` the report shows.
const MAX_RECOMMENDATION: usize = 16 * 1024;

/// The answer `jitterlab recommend` printed last on this folder, as it printed it (its
/// objective and constraints, the choice, and what makes it less sure), when the folder
/// holds one that jitterlab wrote.
fn recommendation(folder: &ResultFolder, dir: &Path, out: &mut String) {
    let ownership = crate::folder::owned::Ownership::of(dir);
    if !ownership.holds(names::RECOMMENDATION) {
        return;
    }
    let Ok(text) = std::fs::read_to_string(dir.join(names::RECOMMENDATION)) else {
        return;
    };
    let cut = match text.char_indices().nth(MAX_RECOMMENDATION) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    };
    // What the charts do with the answer, as far as there is one to show.
    let shown = match (folder.pareto.iter().flatten()).any(|r| r.recommended) {
        true => {
            " The charts of single runs show the chosen strategy at the values chosen, and the Pareto chart \
             marks the choice with a sight where recommend was asked for the success target alone."
        }
        false => " Nothing met the constraints, so no chart marks a choice.",
    };
    let _ = writeln!(
        out,
        "<p id=\"recommendation\">What <code>jitterlab recommend</code> answered last on this folder, \
         for the objective and the constraints it was asked (the first two lines): the pair it recommends \
         is the best among those that meet them, and the lines after it say what makes that less sure.{shown}</p>\n\
         <pre class=\"answer\">{}</pre>",
        esc(cut.trim_end())
    );
}

/// The hedging lead under the facts: the answer to "does hedging pay here" when the folder
/// has one, and, when every extra copy is a hedge, what the report's words mean.
fn hedging_lead(folder: &ResultFolder, design: &Design, hedged: bool, out: &mut String) {
    if let Some(answer) = plot::hedging::answer(folder, design) {
        let storm = answer
            .storm_sentence()
            .map(|s| format!("; {s}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<p class=\"lead\" id=\"hedging-answer\">{}{}.</p>",
            esc(&answer.title()),
            esc(&storm)
        );
    }
    if hedged {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&hedge_note(folder)));
    }
}

/// What the report's words mean when every extra copy is a hedge, and what becomes of the
/// copies that lose, as the folder's strategies have it.
fn hedge_note(folder: &ResultFolder) -> String {
    format!(
        "Every extra copy in this folder is a hedge: a copy of a request sent when none has answered \
         within the hedge delay (not a retry after a failure); the first answer wins{}. \
         The charts' own labels keep the simulator's words (an attempt is a copy, a retry a hedge).",
        cancel_clause(&hedge_cancels(folder))
    )
}

/// Each strategy of the folder that hedges, with what the server does with its copies once
/// one has answered at each point (`None`: the folder has no scenario to tell).
fn hedge_cancels(folder: &ResultFolder) -> Vec<(String, Vec<Option<Cancel>>)> {
    (folder.strategies.iter())
        .filter(|s| folder.hedges(s))
        .map(|s| {
            let mut modes: Vec<Option<Cancel>> = (folder.points.iter())
                .map(|p| {
                    folder
                        .strategy_info(p.index, s)
                        .and_then(|i| i.hedge_cancel)
                })
                .collect();
            modes.dedup();
            (s.clone(), modes)
        })
        .collect()
}

/// What becomes of the copies that lose, for the hedging strategies `cancels` (as
/// [`hedge_cancels`]): `, and the others are cancelled: ...` when every one cancels, `; the
/// others are not cancelled: ...` when none does, each group named when they differ, nothing
/// when the folder does not tell.
fn cancel_clause(cancels: &[(String, Vec<Option<Cancel>>)]) -> String {
    const CANCELLED: &str =
        "the server drops those still waiting in its queue (hedging.cancel = \"waiting\")";
    const SERVED: &str = "the server still serves them, though nobody waits for their answers (hedging.cancel = \"never\")";
    let with = |mode: Cancel| -> Vec<&str> {
        (cancels.iter())
            .filter(|(_, modes)| modes.as_slice() == [Some(mode)])
            .map(|(s, _)| s.as_str())
            .collect()
    };
    let (cancel, never) = (with(Cancel::Waiting), with(Cancel::Never));
    let varies: Vec<&str> = (cancels.iter())
        .filter(|(_, modes)| modes.len() > 1 && modes.iter().all(Option::is_some))
        .map(|(s, _)| s.as_str())
        .collect();
    // A strategy the folder says nothing of: no sentence can be true of all of them.
    if cancels.is_empty() || cancel.len() + never.len() + varies.len() < cancels.len() {
        return String::new();
    }
    if cancel.len() == cancels.len() {
        return format!(", and the others are cancelled: {CANCELLED}");
    }
    if never.len() == cancels.len() {
        return format!("; the others are not cancelled: {SERVED}");
    }
    let mut parts = Vec::new();
    if !cancel.is_empty() {
        parts.push(format!(
            "with {} the others are cancelled: {CANCELLED}",
            cancel.join(", ")
        ));
    }
    if !never.is_empty() {
        parts.push(format!("with {} they are not: {SERVED}", never.join(", ")));
    }
    if !varies.is_empty() {
        parts.push(format!(
            "with {} it depends on the sweep point",
            varies.join(", ")
        ));
    }
    format!("; {}", parts.join("; "))
}

/// The links to every section: the headline charts, the summary, the other charts, the
/// scenario.
fn nav(headline: &[(&plot::Chart, &[u8])], rest: &[(&plot::Chart, &[u8])], out: &mut String) {
    out.push_str("<nav>");
    for (c, _) in headline {
        let _ = writeln!(out, "<a href=\"#chart-{0}\">{0}</a>", esc(&c.stem));
    }
    out.push_str("<a href=\"#summary-section\">Summary</a>\n");
    for (c, _) in rest {
        let _ = writeln!(out, "<a href=\"#chart-{0}\">{0}</a>", esc(&c.stem));
    }
    out.push_str("<a href=\"#scenario\">Scenario</a></nav>\n");
}

/// The scenario section: the resolved scenario as written to the folder, or that it has none.
fn scenario_section(scenario: Option<&ScenarioInfo>, out: &mut String) {
    out.push_str("<h2 id=\"scenario\">Scenario</h2>\n");
    match scenario {
        Some(s) => {
            let _ = writeln!(
                out,
                "<p>The resolved scenario (every default written out), as in {}:</p>",
                file_link(names::SCENARIO)
            );
            let _ = writeln!(out, "<pre>{}</pre>", esc(&s.text));
        }
        None => out.push_str("<p>This folder has no <code>scenario.toml</code>.</p>\n"),
    }
}

/// The line of facts under the title: strategies, points, what is swept and its roles, the
/// success target, the invocation.
fn facts(folder: &ResultFolder, design: &Design, dir: &Path, out: &mut String) {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut facts = vec![
        plural(folder.strategies.len(), "strategy", "strategies"),
        plural(folder.points.len(), "point", "points"),
    ];
    let names = |keys: &[usize]| {
        keys.iter()
            .map(|&k| labels::Reading::of(folder).key(&folder.sweep_keys[k]).0)
            .collect::<Vec<_>>()
            .join(" × ")
    };
    if !design.world_keys.is_empty() {
        facts.push(format!("the world: {}", names(&design.world_keys)));
    }
    if !design.choice_keys.is_empty() {
        facts.push(format!("your choice: {}", names(&design.choice_keys)));
    }
    facts.push(format!("success target {}", pct(design.target)));
    if let Ok(meta) = crate::input::read_text(&dir.join(names::META), crate::input::META)
        && let Ok(meta) = serde_json::from_str::<serde_json::Value>(&meta)
    {
        if let Some(v) = meta.get("version").and_then(|v| v.as_str()) {
            facts.push(format!("jitterlab {v}"));
        }
        if let Some(v) = meta.get("command").and_then(|v| v.as_str()) {
            facts.push(format!("command: {v}"));
        }
        if let Some(v) = meta.get("wall_seconds").and_then(|v| v.as_f64()) {
            facts.push(format!("{} s wall time", fmt_number(v)));
        }
    }
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&facts.join(" · ")));
}

/// A `jitterlab live` folder: the key metrics live and simulated side by side, and the
/// timers' resolution and lag from `meta.json`.
fn live_table(folder: &ResultFolder, dir: &Path, out: &mut String) {
    let Some(rows) = &folder.live_vs_sim else {
        return;
    };
    out.push_str("<h2 id=\"live\">Live against the simulation</h2>\n<p>Measured on a real HTTP server on 127.0.0.1 with real clients and timers (the charts above show real arrivals), beside the simulator's prediction for the same seed and streams (<code>live_vs_sim.csv</code> holds every metric).</p>\n");
    if let Ok(meta) = crate::input::read_text(&dir.join(names::META), crate::input::META)
        && let Ok(meta) = serde_json::from_str::<serde_json::Value>(&meta)
        && let Some(t) = meta.get("timers")
    {
        let f = |k: &str| t.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        let _ = writeln!(
            out,
            "<p>Timers: resolution {} ms; {} sleeps woke late by p50 {} ms, p99 {} ms, max {} ms. Differences at or below that scale are the clock's, not the model's.</p>",
            fmt_number(f("timer_resolution_ms")),
            fmt_number(f("sleeps")),
            fmt_number(f("lag_p50_ms")),
            fmt_number(f("lag_p99_ms")),
            fmt_number(f("lag_max_ms")),
        );
    }
    out.push_str("<table>\n<tr><th>strategy</th><th>metric</th><th>live</th><th>simulated</th><th>difference</th></tr>\n");
    let cell = |x: Option<f64>| x.map_or("–".to_string(), fmt_number);
    for metric in LiveVsSimRow::KEY_METRICS {
        for r in rows.iter().filter(|r| r.metric == metric) {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.strategy),
                esc(metric.name()),
                cell(r.live),
                cell(r.simulated),
                r.relative_difference
                    .map_or("–".to_string(), |d| format!("{:+.1} %", d * 100.0)),
            );
        }
    }
    out.push_str("</table>\n");
}

/// Writes `dir/report.html` (atomically) from the folder's CSVs and returns its path. The
/// charts are drawn again in memory, so the report does not depend on the chart files.
pub fn write_report(dir: &Path) -> Result<PathBuf> {
    let html = html(dir, &plot::Drawing::of(dir, false, &CancelToken::new())?);
    write_html(dir, &html)
}

/// Writes `dir/report.html` (atomically): never over a file jitterlab did not write, and
/// recorded in `meta.json` before it is written (cut short, it is still proven jitterlab's).
pub(crate) fn write_html(dir: &Path, html: &str) -> Result<PathBuf> {
    let path = dir.join(names::REPORT);
    crate::folder::owned::guard(dir, [names::REPORT])?;
    crate::folder::owned::record(dir, std::slice::from_ref(&path), false)?;
    write_atomic(&path, html.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(esc("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
    }

    #[test]
    fn hedging_words_say_what_hedging_does() {
        let guide = "Spikes queue or are rejected, and rejected attempts come back as more retries. \
                     Retry 2 of 3 attempts.";
        assert_eq!(
            hedge_words(guide),
            "Spikes queue or are rejected, and a rejected copy ends its request, or sends the \
             next copy at once where its answer is non-fatal (hedging.non_fatal). Hedge 2 of 3 \
             copies."
        );
        // Each sentence replaced is one the charts still write (else the table has rotted).
        let guides = [
            include_str!("plot/herd.rs"),
            include_str!("plot/goodput.rs"),
        ]
        .concat();
        let guides = guides.split_whitespace().collect::<Vec<_>>().join(" ");
        for (retries, _) in HEDGE_SENTENCES {
            assert!(guides.contains(retries), "no chart writes {retries:?}");
        }
    }

    /// A folder of one point whose strategies are those of `strategies` (TOML), every one
    /// but the first hedging.
    fn hedged_folder(strategies: &str) -> ResultFolder {
        let text = format!(
            "name = \"h\"\n[server]\nkind = \"queue\"\nworkers = 2\nservice = {{ dist = \"exponential\", mean = \"10ms\" }}\n[backoff]\nstrategies = {strategies}\n"
        );
        let scenario = ScenarioInfo::parse(Path::new("scenario.toml"), &text).unwrap();
        let mut f = ResultFolder::empty("h");
        f.strategies = (scenario.points[0].strategies.iter())
            .map(|s| s.name.clone())
            .collect();
        f.points = vec![crate::output::results::Point {
            index: 0,
            values: Vec::new(),
        }];
        f.hedging = Some(
            (f.strategies.iter().skip(1))
                .map(|s| crate::output::rows::HedgingRow {
                    point: 0,
                    strategy: s.clone(),
                    replication: 0,
                    sweep: Vec::new(),
                    hedges_per_request: 0.5,
                    won_by_hedge_share: 0.1,
                    unread_served_per_request: 0.1,
                    wasted_work_share: 0.1,
                })
                .collect(),
        );
        f.scenario = Some(scenario);
        f
    }

    #[test]
    fn the_hedging_note_says_whether_copies_are_cancelled() {
        let never = hedged_folder(
            r#"[{ name = "none", jitter = "full" }, { name = "no_cancel", jitter = "full", hedging = { delay = "7ms", max_attempts = 2, cancel = "never" } }]"#,
        );
        let note = hedge_note(&never);
        assert!(!note.contains("are cancelled"), "{note}");
        assert!(
            note.contains(
                "the first answer wins; the others are not cancelled: the server still serves them"
            ),
            "{note}"
        );
        let waiting = hedged_folder(
            r#"[{ name = "none", jitter = "full" }, { name = "p90", jitter = "full", hedging = { delay = "23ms", max_attempts = 2, cancel = "waiting" } }]"#,
        );
        let note = hedge_note(&waiting);
        assert!(
            note.contains("the first answer wins, and the others are cancelled: the server drops those still waiting"),
            "{note}"
        );
        let mixed = hedged_folder(
            r#"[{ name = "none", jitter = "full" }, { name = "p90", jitter = "full", hedging = { delay = "23ms", max_attempts = 2 } }, { name = "p50_nc", jitter = "full", hedging = { delay = "7ms", max_attempts = 2, cancel = "never" } }, { name = "p99_nc", jitter = "full", hedging = { delay = "46ms", max_attempts = 2, cancel = "never" } }]"#,
        );
        let note = hedge_note(&mixed);
        assert!(
            note.contains("; with p90 the others are cancelled: the server drops")
                && note.contains("; with p50_nc, p99_nc they are not: the server still serves"),
            "{note}"
        );
        // Without the scenario, nothing is said of cancelling.
        let mut unknown = mixed;
        unknown.scenario = None;
        let note = hedge_note(&unknown);
        assert!(note.contains("the first answer wins. "), "{note}");
    }
}
