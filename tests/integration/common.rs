//! Helpers shared by the integration tests: the binary, temporary folders, scenario plans run
//! through the library, and reading metrics back by their typed names.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

use jitterlab::cancel::CancelToken;
use jitterlab::metric::Metric;
use jitterlab::scenario::ScenarioDoc;
use jitterlab::stats::{Estimate, estimate};
use jitterlab::sweep::journal::UnitRecord;
use jitterlab::sweep::{self, Plan, Silent};

/// The repository root (where `sims/` lives).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files `dir/*.ext` of the repository, sorted.
pub fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
        .unwrap_or_else(|e| panic!("{dir}/: {e}"))
        .map(|e| e.expect("readable folder entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
}

/// Every `sims/*.toml`, sorted.
pub fn sims() -> Vec<PathBuf> {
    let files = files("sims", "toml");
    assert!(!files.is_empty(), "sims/ holds scenarios");
    files
}

/// Runs the built binary in `dir`, as a user would.
pub fn jitterlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jitterlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run jitterlab")
}

/// What a run printed on stdout.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a run printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty folder under the system temp dir, removed (with its contents) on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(label: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("jitterlab-it-{}-{label}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Parses scenario text and applies `--set`-style overrides; panics with the error otherwise.
pub fn doc(text: &str, sets: &[&str]) -> ScenarioDoc {
    let mut doc = ScenarioDoc::parse(text, "<test>", "test")
        .unwrap_or_else(|e| panic!("scenario does not parse: {e}\n{text}"));
    for s in sets {
        doc.set(s)
            .unwrap_or_else(|e| panic!("--set {s} refused: {e}"));
    }
    doc
}

/// Loads a file from sims/ with overrides.
pub fn sim_doc(path: &Path, sets: &[&str]) -> ScenarioDoc {
    let mut doc = ScenarioDoc::load(path).unwrap_or_else(|e| panic!("{e}"));
    for s in sets {
        doc.set(s)
            .unwrap_or_else(|e| panic!("--set {s} refused for {}: {e}", path.display()));
    }
    doc
}

/// The checked plan of a document.
pub fn plan(doc: &ScenarioDoc) -> Plan {
    let sweep = doc.sweep().unwrap_or_else(|e| panic!("{e}"));
    let points = doc.points().unwrap_or_else(|e| panic!("{e}"));
    Plan::new(sweep, points).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs every unit of a plan on one thread (the test harness already runs tests side by
/// side) and returns the records in unit order.
pub fn execute(plan: &Plan) -> Vec<UnitRecord> {
    let units = plan.units();
    sweep::execute(plan, &units, 1, &Silent, None, &CancelToken::new())
        .unwrap_or_else(|e| panic!("{e}"))
        .records
}

/// The per-replication values of a metric for (point, strategy name).
pub fn metric(
    plan: &Plan,
    records: &[UnitRecord],
    point: usize,
    strategy: &str,
    m: Metric,
) -> Vec<f64> {
    let s = plan.points[point]
        .scenario
        .strategies
        .iter()
        .position(|s| s.name == strategy)
        .unwrap_or_else(|| panic!("no strategy {strategy}"));
    let values: Vec<f64> = records
        .iter()
        .filter(|r| r.point == point && r.strategy == s)
        .map(|r| m.of(r))
        .collect();
    assert_eq!(values.len(), plan.replications as usize);
    values
}

/// Mean and 95 % interval of a metric across replications.
pub fn est(
    plan: &Plan,
    records: &[UnitRecord],
    point: usize,
    strategy: &str,
    m: Metric,
) -> Estimate {
    estimate(&metric(plan, records, point, strategy, m))
}

/// Half the width of an estimate's 95 % interval.
pub fn half_width(e: &Estimate) -> f64 {
    (e.ci95_high.expect("n >= 2") - e.ci95_low.expect("n >= 2")) / 2.0
}

/// The headless Chromium of this machine (Debian's package), if any.
pub fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
}

/// Chromium's flags for a headless, quiet, reproducible browser in a test.
pub const HEADLESS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
];

/// The DOM of the page `html` once headless Chromium (`browser`) has loaded it in a window
/// `width` px wide, its scripts run; a profile in `profile`. Panics after 90 s.
pub fn chromium_dom(browser: &Path, html: &Path, width: u32, profile: &Path) -> String {
    use std::time::{Duration, Instant};
    std::fs::create_dir_all(profile).unwrap();
    let mut child = Command::new(browser)
        .args(HEADLESS)
        .arg(format!("--window-size={width},900"))
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", html.canonicalize().unwrap().display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).map(|_| s)
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap().unwrap()
}
