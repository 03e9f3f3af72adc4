//! `report.html`: one self-contained page (inline SVG and CSS, no script, nothing fetched) with
//! the scenario, a summary table of means and 95 % intervals per strategy, and every chart of
//! [`crate::output::plot`] with a short guide on what to look at.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::atomic::write_atomic;
use crate::error::Result;
use crate::metric::{Metric, Unit};
use crate::output::plot;
use crate::output::results::{LiveVsSimRow, ResultFolder, fmt_number};

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
th,td{padding:4px 10px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap}
th{background:#f2f2f2;position:sticky;top:0}td.s,th.s{text-align:left}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:-1px}
.ci{color:#777;font-size:0.9em}
.tablewrap{overflow-x:auto;max-height:560px;overflow-y:auto;border:1px solid #eee}
figure{margin:8px 0 0}figure svg{width:100%;height:auto;display:block;border:1px solid #eee}
.guide{background:#f5f8fb;border-left:4px solid #0072B2;padding:8px 12px;margin:6px 0 10px;color:#333}
pre{background:#f6f6f6;padding:12px;overflow-x:auto;font-size:0.85em;border:1px solid #e6e6e6}
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

/// Makes a plotters SVG document fit an HTML page: drops any XML prolog, lets CSS size it
/// (the viewBox keeps its proportions) and labels it for screen readers.
fn inline_svg(svg: &str, id: &str, title: &str) -> String {
    let start = svg.find("<svg").unwrap_or(0);
    let body = &svg[start..];
    let body = body.replacen(
        "<svg",
        &format!(
            "<svg id=\"svg-{}\" role=\"img\" aria-label=\"{}\"",
            esc(id),
            esc(title)
        ),
        1,
    );
    body.replacen(
        &format!("width=\"{}\" height=\"{}\"", plot::WIDTH, plot::HEIGHT),
        "",
        1,
    )
}

/// A metric's mean and interval as table text, in the metric's unit.
fn cell(folder: &ResultFolder, point: u32, strategy: &str, metric: Metric) -> String {
    let Some(row) = folder.aggregate_of(point, strategy, metric) else {
        return "–".to_string();
    };
    let Some(mean) = row.mean else {
        return "–".to_string();
    };
    let (scale, unit) = match metric.unit() {
        Unit::Millis if mean.abs() >= 2000.0 => (0.001, " s"),
        Unit::Millis => (1.0, " ms"),
        Unit::Share => (100.0, " %"),
        Unit::Times => (1.0, "×"),
        Unit::Count => (1.0, ""),
    };
    let main = format!("{}{unit}", fmt_number(mean * scale));
    match (row.ci95_low, row.ci95_high) {
        (Some(lo), Some(hi)) if hi > lo => {
            let half = (hi - lo) / 2.0 * scale;
            format!("{main} <span class=\"ci\">± {}</span>", fmt_number(half))
        }
        _ => main,
    }
}

fn summary_table(folder: &ResultFolder, out: &mut String) {
    let metrics: Vec<Metric> = TABLE_METRICS
        .into_iter()
        .filter(|m| folder.has(*m))
        .collect();
    let n = folder.aggregate.iter().map(|r| r.n).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "<p>Means across {n} replication{} with ± half the 95 % confidence interval (Student t).</p>",
        if n == 1 { "" } else { "s" }
    );
    out.push_str("<div class=\"tablewrap\"><table id=\"summary\"><thead><tr>");
    if !folder.sweep_keys.is_empty() {
        out.push_str("<th>point</th>");
        for k in &folder.sweep_keys {
            let _ = write!(out, "<th>{}</th>", esc(k));
        }
    }
    out.push_str("<th class=\"s\">strategy</th>");
    for m in &metrics {
        let _ = write!(out, "<th>{}</th>", esc(m.name()));
    }
    out.push_str("</tr></thead><tbody>\n");
    for p in &folder.points {
        for (i, s) in folder.strategies.iter().enumerate() {
            if !folder
                .aggregate
                .iter()
                .any(|r| r.point == p.index && &r.strategy == s)
            {
                continue;
            }
            out.push_str("<tr>");
            if !folder.sweep_keys.is_empty() {
                let _ = write!(out, "<td>{}</td>", p.index);
                for v in &p.values {
                    let _ = write!(out, "<td>{}</td>", esc(v));
                }
            }
            let c = plot::strategy_css_color(i);
            let _ = write!(
                out,
                "<td class=\"s\"><span class=\"swatch\" style=\"background:{c}\"></span>{}</td>",
                esc(s)
            );
            for m in &metrics {
                let _ = write!(out, "<td>{}</td>", cell(folder, p.index, s, *m));
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</tbody></table></div>\n");
}

fn compare_table(folder: &ResultFolder, out: &mut String) {
    let Some(rows) = &folder.compare else { return };
    if rows.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"compare\">Paired differences</h2>\n<p>Mean of (a − b) over replications that share their random numbers, with its 95 % interval; an interval that excludes 0 is a difference the runs support.</p>\n");
    out.push_str("<div class=\"tablewrap\"><table><thead><tr><th>point</th><th class=\"s\">metric</th><th class=\"s\">a</th><th class=\"s\">b</th><th>mean a − b</th><th>95 % interval</th></tr></thead><tbody>\n");
    for r in rows.iter().take(500) {
        let f = |v: Option<f64>| v.map_or_else(|| "–".to_string(), fmt_number);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"s\">{}</td><td class=\"s\">{}</td><td class=\"s\">{}</td><td>{}</td><td>[{}, {}]</td></tr>",
            r.point,
            esc(r.metric.name()),
            esc(&r.strategy_a),
            esc(&r.strategy_b),
            f(r.mean_diff),
            f(r.ci95_low),
            f(r.ci95_high)
        );
    }
    out.push_str("</tbody></table></div>\n");
}

/// Renders the report of a result folder as HTML text.
pub fn render_report(dir: &Path) -> Result<String> {
    let folder = ResultFolder::read(dir)?.for_display();
    let charts = plot::plan(&folder);
    let svgs: Vec<Result<String>> = {
        use rayon::prelude::*;
        charts
            .par_iter()
            .map(|c| c.svg(&dir.join(format!("{}.svg", c.stem))))
            .collect()
    };
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
    let mut facts = vec![
        format!(
            "{} strateg{}",
            folder.strategies.len(),
            if folder.strategies.len() == 1 {
                "y"
            } else {
                "ies"
            }
        ),
        format!(
            "{} point{}",
            folder.points.len(),
            if folder.points.len() == 1 { "" } else { "s" }
        ),
    ];
    if !folder.sweep_keys.is_empty() {
        facts.push(format!("sweep over {}", folder.sweep_keys.join(" × ")));
    }
    if let Ok(meta) = crate::input::read_text(&dir.join("meta.json"), crate::input::META)
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

    out.push_str("<nav><a href=\"#summary-section\">Summary</a>");
    for c in &charts {
        let _ = write!(
            out,
            "<a href=\"#chart-{}\">{}</a>",
            esc(&c.stem),
            esc(&c.stem)
        );
    }
    out.push_str("<a href=\"#scenario\">Scenario</a></nav>\n");

    out.push_str("<h2 id=\"summary-section\">Summary</h2>\n");
    summary_table(&folder, &mut out);
    live_table(&folder, dir, &mut out);

    let mut phase_read = false;
    for (chart, svg) in charts.iter().zip(svgs) {
        let svg = svg?;
        if chart.stem.starts_with("phase_") && !std::mem::replace(&mut phase_read, true) {
            let _ = writeln!(
                out,
                "<h2 id=\"phase-map\">Reading a phase map</h2>\n<p class=\"guide\">{}</p>",
                esc(plot::PHASE_READING)
            );
        }
        let _ = writeln!(
            out,
            "<section class=\"chart\" id=\"chart-{id}\">\n<h2>{title}</h2>\n<p class=\"guide\">{guide}</p>\n<figure>{svg}</figure>\n</section>",
            id = esc(&chart.stem),
            title = esc(&chart.title),
            guide = esc(&chart.guide),
            svg = inline_svg(&svg, &chart.stem, &chart.title),
        );
    }
    compare_table(&folder, &mut out);

    out.push_str("<h2 id=\"scenario\">Scenario</h2>\n");
    match scenario {
        Some(s) => {
            out.push_str("<p>The resolved scenario (every default written out), as in <code>scenario.toml</code>:</p>\n");
            let _ = writeln!(out, "<pre>{}</pre>", esc(&s.text));
        }
        None => out.push_str("<p>This folder has no <code>scenario.toml</code>.</p>\n"),
    }
    out.push_str("</main>\n</body>\n</html>\n");
    Ok(out)
}

/// A `jitterlab live` folder: the key metrics live and simulated side by side, and the
/// timers' resolution and lag from `meta.json`.
fn live_table(folder: &ResultFolder, dir: &Path, out: &mut String) {
    let Some(rows) = &folder.live_vs_sim else {
        return;
    };
    out.push_str("<h2 id=\"live\">Live against the simulation</h2>\n<p>Measured on a real HTTP server on 127.0.0.1 with real clients and timers (the charts above show real arrivals), beside the simulator's prediction for the same seed and streams (<code>live_vs_sim.csv</code> holds every metric).</p>\n");
    if let Ok(meta) = crate::input::read_text(&dir.join("meta.json"), crate::input::META)
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
    write_report_until(dir, &crate::cancel::CancelToken::new())
}

/// [`write_report`], stopped by `cancel` with [`Error::Interrupted`] before the report is
/// written (rendering it draws every chart again).
pub fn write_report_until(dir: &Path, cancel: &crate::cancel::CancelToken) -> Result<PathBuf> {
    let html = render_report(dir)?;
    if cancel.is_cancelled() {
        return Err(crate::error::Error::Interrupted);
    }
    let path = dir.join("report.html");
    crate::output::owned::guard(dir, ["report.html"])?;
    // Recorded before it is written: cut short, it is still proven jitterlab's.
    crate::output::owned::record(dir, std::slice::from_ref(&path), false)?;
    write_atomic(&path, html.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_inlines() {
        assert_eq!(esc("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        let svg = "<?xml version=\"1.0\"?>\n<svg width=\"1200\" height=\"700\" viewBox=\"0 0 1200 700\"></svg>";
        let s = inline_svg(svg, "herd", "T");
        assert!(s.starts_with("<svg id=\"svg-herd\""), "{s}");
        assert!(!s.contains("width=\"1200\""));
        assert!(s.contains("viewBox"));
    }
}
