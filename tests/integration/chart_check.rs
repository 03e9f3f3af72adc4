//! Every chart of every built-in scenario, held to the legibility rules (`plot --check`: no
//! text outside the canvas or overlapping another, none below 10 pt, data reaching a fifth of
//! each panel's value axis), each report opening with its scenario's headline chart, and the
//! truths the charts and `recommend` must tell on the scenarios that tempted them to lie.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use jitterlab::output::{plot, report};
use jitterlab::scenario::library::SCENARIOS;

use crate::common::{TempDir, chromium, chromium_dom, jitterlab, stderr, stdout};

/// The headline chart each built-in scenario's report opens with.
const HEADLINES: [(&str, &str); 15] = [
    ("aws-2026", "goodput"),
    ("brooker-2015", "herd"),
    ("brooker-2015-sweep", "load"),
    ("brooker-2022-budgets", "load"),
    ("choose-base-and-cap", "heatmap_latency_p99_ms"),
    ("collapse-spike", "goodput"),
    ("hedging", "hedging"),
    ("hedging-storm", "goodput"),
    ("layered-retries", "layers"),
    ("live-herd", "herd"),
    ("metastable-phase-map", "phase_recovered"),
    ("poisson-overload", "load"),
    ("retry-after-herd", "herd"),
    ("sdk-defaults", "goodput"),
    ("thundering-herd", "herd"),
];

/// Fewer replications where the full count only adds CI time: the 2015 sweep's 100 per point
/// are for its 95 % bands, not for its charts' layout.
fn options(name: &str) -> &'static [&'static str] {
    match name {
        "brooker-2015-sweep" => &["--replications", "20"],
        _ => &[],
    }
}

/// The result folder of a built-in scenario, run once for the whole test binary (`--no-plots`:
/// the checks draw the charts themselves).
fn folder(name: &str) -> PathBuf {
    static TMP: OnceLock<TempDir> = OnceLock::new();
    static RUNS: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let tmp = TMP.get_or_init(|| TempDir::new("chart-check"));
    let runs = RUNS.get_or_init(|| Mutex::new(HashMap::new()));
    // One run at a time, each on every core.
    let mut runs = runs.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(dir) = runs.get(name) {
        return dir.clone();
    }
    let dir = tmp.join(name);
    let out = dir.display().to_string();
    let mut args = vec!["run", name, "--no-plots", "--quiet", "--out", &out];
    args.extend(options(name));
    let o = jitterlab(tmp.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
    runs.insert(name.to_string(), dir.clone());
    dir
}

/// The stem of the first chart section of a report.
fn first_chart(html: &str) -> &str {
    let at = html
        .find("<section class=\"chart headline\" id=\"chart-")
        .expect("a headline chart section");
    let rest = &html[at..];
    let start = rest.find("id=\"chart-").unwrap() + "id=\"chart-".len();
    let end = start + rest[start..].find('"').unwrap();
    &rest[start..end]
}

#[test]
fn every_builtin_chart_is_legible_and_every_report_opens_with_its_headline() {
    assert_eq!(
        SCENARIOS.len(),
        HEADLINES.len(),
        "a new built-in: name its headline"
    );
    let mut problems = Vec::new();
    for b in SCENARIOS {
        let dir = folder(b.name);
        problems.extend(
            plot::check_charts(&dir)
                .unwrap()
                .into_iter()
                .map(|p| format!("{}: {p}", b.name)),
        );
        let html = report::render_report(&dir).unwrap();
        let expected = HEADLINES.iter().find(|h| h.0 == b.name).unwrap().1;
        assert_eq!(first_chart(&html), expected, "{}'s headline", b.name);
        let headline = html.find("class=\"chart headline\"").unwrap();
        assert!(
            headline < html.find("id=\"summary-section\"").unwrap()
                && html.rfind("<section class=\"chart").unwrap()
                    < html.find("id=\"scenario\"").unwrap(),
            "{}: headline first, the scenario last",
            b.name
        );
    }
    assert!(
        problems.is_empty(),
        "charts that break the legibility rules:\n{}",
        problems.join("\n")
    );
}

#[test]
fn plot_check_lists_nothing_on_a_legible_folder_and_exits_zero() {
    let dir = folder("collapse-spike");
    let o = jitterlab(
        dir.parent().unwrap(),
        &["plot", &dir.display().to_string(), "--check"],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("is legible"), "{}", stderr(&o));
}

/// The texts of an SVG written by plotters.
fn texts(svg: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(svg).unwrap();
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let start = t.find('>')? + 1;
            let end = t.find("</text>")?;
            Some(t[start..end].trim().to_string())
        })
        .collect()
}

/// `immediate: 60.5 % succeeded, ...` → 60.5.
fn succeeded(legend: &[String], strategy: &str) -> f64 {
    let line = legend
        .iter()
        .find(|t| t.starts_with(&format!("{strategy}: ")))
        .unwrap_or_else(|| panic!("no legend entry for {strategy} in {legend:?}"));
    line[strategy.len() + 2..]
        .split(" %")
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no success share in {line:?}"))
}

#[test]
fn collapse_spike_shows_immediate_retries_worse_and_a_stuck_run() {
    let dir = folder("collapse-spike");
    plot::draw_all(&dir).unwrap();
    // Latency over all requests: the curves top out at the success rates, immediate's far
    // below backoff's, and the legend says so.
    let latency = texts(&dir.join("latency.svg"));
    let (immediate, backoff) = (
        succeeded(&latency, "immediate"),
        succeeded(&latency, "backoff"),
    );
    assert!(immediate < 70.0 && backoff > 95.0, "{immediate} {backoff}");
    assert!(
        latency.iter().any(|t| t == &format!("{immediate} %")),
        "the curve's top is labelled: {latency:?}"
    );
    // Load and success side by side: immediate is hollow (below the target) in the legend.
    let load = std::fs::read_to_string(dir.join("load.svg")).unwrap();
    assert!(load.contains("Success rate"), "no success panel");
    // Goodput: a stuck replication of immediate beside a recovered one, named.
    let goodput = texts(&dir.join("goodput.svg"));
    let captions: Vec<&String> = goodput
        .iter()
        .filter(|t| t.starts_with("immediate: replication"))
        .collect();
    assert!(
        captions.iter().any(|t| t.contains("stuck"))
            && captions.iter().any(|t| t.contains("recovered")),
        "{goodput:?}"
    );
    assert!(!goodput.iter().any(|t| t.contains("Thundering herd")));
    let herd = texts(&dir.join("herd.svg"));
    assert!(
        herd.iter().any(|t| t.starts_with("Attempts reaching")),
        "a spike is no thundering herd: {herd:?}"
    );
}

/// Appended to a copy of a report: lists what is wider than its box once laid out (the page,
/// or a table's scrolling box) in an element `#width-check`, `OVERFLOW[...]`.
const WIDTH_PROBE: &str = "<script>(function(){var bad=[];var de=document.documentElement;\
if(de.scrollWidth>de.clientWidth+1)bad.push('page '+de.scrollWidth+' > '+de.clientWidth);\
document.querySelectorAll('.tablewrap').forEach(function(t){if(t.scrollWidth>t.clientWidth+1)\
bad.push((t.previousElementSibling||t).textContent.slice(0,50)+': table '+t.scrollWidth+' > '+t.clientWidth);});\
var d=document.createElement('pre');d.id='width-check';d.textContent='OVERFLOW['+bad.join(' | ')+']';\
document.body.appendChild(d);})();</script>";

/// What of the report of `dir` overflows its box in headless Chromium `width` px wide.
fn overflow(browser: &Path, dir: &Path, width: u32) -> String {
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let probe = dir.join("width-probe.html");
    std::fs::write(&probe, format!("{html}{WIDTH_PROBE}")).unwrap();
    let dom = chromium_dom(browser, &probe, width, &dir.join("chromium-profile"));
    let mark = "id=\"width-check\">OVERFLOW[";
    let at = dom.find(mark).expect("the probe ran") + mark.len();
    let end = dom[at..].find("]</pre>").expect("the probe's end");
    dom[at..at + end].to_string()
}

#[test]
fn reports_fit_a_1024_px_window_in_chromium() {
    let Some(browser) = chromium() else {
        eprintln!(
            "NOTICE: chromium not found (apt-get install -y chromium); skipping the width check"
        );
        return;
    };
    let names = [
        "metastable-phase-map",
        "layered-retries",
        "brooker-2022-budgets",
        "collapse-spike",
        "thundering-herd",
    ];
    for name in names {
        let dir = tmp_copy(name, &format!("width-{name}"));
        report::write_report(&dir).unwrap();
        let wide = overflow(&browser, &dir, 1024);
        assert_eq!(wide, "", "{name}: wider than a 1024 px window");
        // The probe sees an overflow where there is one: a window too narrow for the table.
        if name == "metastable-phase-map" {
            assert_ne!(overflow(&browser, &dir, 480), "", "the probe saw nothing");
        }
    }
}

/// The captions of the goodput panels of `immediate` in `dir`, drawn again.
fn immediate_captions(dir: &Path) -> Vec<String> {
    plot::draw_all(dir).unwrap();
    (texts(&dir.join("goodput.svg")).into_iter())
        .filter(|t| t.starts_with("immediate: replication"))
        .collect()
}

#[test]
fn a_replication_is_shown_only_when_its_rerun_gives_its_whole_summary_row() {
    let tmp = TempDir::new("rerun");
    let dir = tmp.join("collapse-spike");
    std::fs::create_dir(&dir).unwrap();
    for e in std::fs::read_dir(folder("collapse-spike")).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    assert_eq!(
        immediate_captions(&dir).len(),
        2,
        "a stuck and a recovered run"
    );
    // The other run's p99 latency, a number no count gives, one millisecond off: the run
    // again no longer matches its row, so replication 0 stands alone (still named).
    let path = dir.join("summary.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (strategy, rep, recovered, p99) = (
        col("strategy"),
        col("replication"),
        col("recovered"),
        col("latency_p99_ms"),
    );
    let rows: Vec<Vec<String>> = (text.lines().skip(1))
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let immediate = |r: &&Vec<String>| r[strategy] == "immediate";
    let kind0 = &rows.iter().find(|r| immediate(r) && r[rep] == "0").unwrap()[recovered];
    let other = rows
        .iter()
        .position(|r| immediate(&r) && &r[recovered] != kind0)
        .unwrap();
    let mut rows = rows;
    let v: f64 = rows[other][p99].parse().unwrap();
    rows[other][p99] = (v + 1.0).to_string();
    let body: Vec<String> = rows.iter().map(|r| r.join(",")).collect();
    std::fs::write(
        &path,
        format!("{}\n{}\n", header.join(","), body.join("\n")),
    )
    .unwrap();
    let captions = immediate_captions(&dir);
    assert_eq!(captions.len(), 1, "{captions:?}");
    assert!(
        captions[0].starts_with("immediate: replication 0, "),
        "{captions:?}"
    );
}

/// The rows of `pareto.csv` as (world values, on_front, recommended, eligible, success,
/// strategy).
type ParetoLine = (String, bool, bool, bool, f64, String);

fn pareto_rows(dir: &Path) -> Vec<ParetoLine> {
    let text = std::fs::read_to_string(dir.join("pareto.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (rate, spike) = (col("workload.rate"), col("workload.spike.length"));
    let (front, rec, ok, success, strategy) = (
        col("on_front"),
        col("recommended"),
        col("eligible"),
        col("success_rate"),
        col("strategy"),
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                format!("{}/{}", f[rate], f[spike]),
                f[front] == "true",
                f[rec] == "true",
                f[ok] == "true",
                f[success].parse().unwrap(),
                f[strategy].to_string(),
            )
        })
        .collect()
}

#[test]
fn metastable_fronts_and_recommendations_stay_within_a_load_and_above_the_floor() {
    let dir = folder("metastable-phase-map");
    let out = dir.display().to_string();
    let o = jitterlab(dir.parent().unwrap(), &["recommend", &out, "--no-plots"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("success >= 0.98 (the scenario's recommend.min_success)"),
        "{text}"
    );
    assert!(text.contains("35 world points, one answer each"), "{text}");
    assert!(
        !text.contains("\nrecommended: "),
        "no one answer across loads: {text}"
    );
    let rows = pareto_rows(&dir);
    assert_eq!(rows.len(), 35 * 7);
    let mut worlds: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    worlds.dedup();
    assert_eq!(worlds.len(), 35);
    for w in worlds {
        let mine: Vec<_> = rows.iter().filter(|r| r.0 == w).collect();
        // Fronts and recommendations hold only pairs at or above the floor, at most one
        // recommendation per world point (load and spike length).
        for r in &mine {
            assert_eq!(r.3, r.4 >= 0.98, "{w}: eligible means success >= 0.98");
            assert!(!r.1 || r.3, "{w}: a front member below the floor");
            assert!(!r.2 || r.3, "{w}: a recommendation below the floor");
        }
        assert!(mine.iter().filter(|r| r.2).count() <= 1, "{w}");
        assert_eq!(
            mine.iter().any(|r| r.2),
            mine.iter().any(|r| r.3),
            "{w}: a recommendation exactly where a pair meets the floor"
        );
    }
    // The throttle sends fewer attempts than requests by dropping 3-4 % of them: it is never
    // recommended at this floor, nor on a front.
    assert!(
        rows.iter()
            .filter(|r| r.5 == "throttle")
            .all(|r| !r.1 && !r.2),
        "{text}"
    );
    // --at names one world point and ranks it in full.
    let o = jitterlab(
        dir.parent().unwrap(),
        &[
            "recommend",
            &out,
            "--no-plots",
            "--at",
            "workload.rate=27",
            "--at",
            "workload.spike.length=1s",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("\nrecommended: "), "{}", stdout(&o));
    // The hint of the summary is a command a shell runs as printed.
    assert!(
        text.contains("--at workload.rate=27.0 --at workload.spike.length=1s\n"),
        "{text}"
    );
    // Two values of one key name no world point: said so, not "no rows".
    let o = jitterlab(
        dir.parent().unwrap(),
        &[
            "recommend",
            &out,
            "--no-plots",
            "--at",
            "workload.rate=27",
            "--at",
            "workload.rate=63",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("one value per key: workload.rate is already given as 27"),
        "{}",
        stderr(&o)
    );
    // The Pareto chart draws one panel per world point it shows, never one front across.
    plot::draw_all(&dir).unwrap();
    let pareto = texts(&dir.join("pareto.svg"));
    let panels = pareto
        .iter()
        .filter(|t| t.starts_with("offered load ") && t.contains(", spike length "))
        .count();
    assert_eq!(panels, 9, "3 loads x 3 spike lengths: {pareto:?}");
}

/// The colour `palette.json` of `dir` gives the strategy `name`.
fn palette_color(dir: &Path, name: &str) -> String {
    let text = std::fs::read_to_string(dir.join("palette.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let strategies = v["strategies"].as_array().unwrap();
    let s = strategies.iter().find(|s| s["name"] == name).unwrap();
    s["color"].as_str().unwrap().to_string()
}

#[test]
fn a_strategy_keeps_its_colour_when_the_other_strategies_of_a_run_change() {
    let tmp = TempDir::new("colour-by-name");
    let runs = [
        r#"backoff.strategies=["no_jitter", "full", "equal", "decorrelated"]"#,
        r#"backoff.strategies=["full"]"#,
        r#"backoff.strategies=["decorrelated", {name = "mine", jitter = "equal"}, "full"]"#,
        r#"backoff.strategies=[{preset = "aws-standard"}, "equal", "full"]"#,
    ];
    let mut seen = Vec::new();
    for (i, set) in runs.iter().enumerate() {
        let dir = tmp.join(&format!("run{i}"));
        let out = dir.display().to_string();
        let args = [
            "run",
            "--set",
            set,
            "--set",
            "workload.clients=200",
            "--replications",
            "1",
            "--no-plots",
            "--quiet",
            "--out",
            &out,
        ];
        let o = jitterlab(tmp.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{set}: {}", stderr(&o));
        seen.push(palette_color(&dir, "full"));
    }
    assert!(seen.iter().all(|c| c == "#d55e00"), "{seen:?}");
}

/// The phase map's throttle is short of its load before any trigger more often than the
/// policies without a client that sheds (its cold start, as the scenario's comments say): the
/// report says so and why, from the scenario; the breaker, degraded no more than the others
/// (by the load alone), is not named.
#[test]
fn the_report_says_which_policy_sheds_load_before_the_trigger_and_why() {
    let dir = tmp_copy("metastable-phase-map", "sheds");
    let html = std::fs::read_to_string(report::write_report(&dir).unwrap()).unwrap();
    let at = html
        .find("Short of the offered load before the trigger by their own client")
        .unwrap_or_else(|| panic!("no sentence in the recovery section"));
    let sentence = &html[at..at + html[at..].find("</p>").unwrap()];
    assert!(sentence.contains("throttle in "), "{sentence}");
    assert!(
        sentence.contains("it has an adaptive throttle"),
        "{sentence}"
    );
    assert!(!sentence.contains("breaker"), "{sentence}");
}

/// A copy of the folder of built-in scenario `name` in a new folder `tag`, for a test that
/// writes into it.
fn tmp_copy(name: &str, tag: &str) -> PathBuf {
    static TMP: OnceLock<TempDir> = OnceLock::new();
    let tmp = TMP.get_or_init(|| TempDir::new("chart-check-copies"));
    let dir = tmp.join(tag);
    std::fs::create_dir(&dir).unwrap();
    for e in std::fs::read_dir(folder(name)).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    dir
}
