//! The files of a result folder that jitterlab owns, and the guard that keeps a user's other
//! files safe.
//!
//! A folder is a **result folder** when it holds `units.jsonl` whose first line is a jitterlab
//! journal header: `run` and `merge` write it before anything else, so every folder they
//! wrote, finished, sharded or interrupted, has one. jitterlab **owns** only the files it
//! writes there, by name: `scenario.toml`, `units.jsonl`, `meta.json`, `palette.json`, the
//! CSVs of DESIGN §6,
//! `pareto.csv`, `report.html`, the live mode's `live_vs_sim.csv` and observed samples
//! ([`OBSERVED_SERVICE`], [`OBSERVED_LATENCY`]), and the charts (`herd`, `herd_log`,
//! `resync`, `load`, `latency`, `attempts`, `pareto`, `live_vs_sim`, `sweep_<metric>`,
//! `heatmap_<metric>`, `phase_<metric>`, each `.png` and `.svg`).
//!
//! [`claim`] decides whether `run --out DIR` or `merge --out DIR` may write into a folder:
//! a new or empty folder, or a result folder, yes; any other folder only with `--force`; the
//! root and the home folder never. A result folder keeps no stale file: [`remove_stale`]
//! deletes the owned files that the new run did not write, and never any other file.

use std::path::{Path, PathBuf};

use super::rows::{
    AggregateRow, AttemptsRow, CompareRow, LatencyRow, LayerTimeseriesRow, LayersRow, LiveVsSimRow,
    ParetoRow, Row, SummaryRow, TimeseriesRow,
};
use crate::error::{Error, Result};
use crate::metric::Metric;
use crate::sweep::journal::{self, JOURNAL};

/// The stems of the charts that are always planned (each `.png` and `.svg`), and the live
/// mode's.
const CHARTS: [&str; 9] = [
    "herd",
    "herd_log",
    "resync",
    "load",
    "latency",
    "attempts",
    "layers",
    "pareto",
    "live_vs_sim",
];

/// Service times a live run observed (milliseconds, one per line).
pub const OBSERVED_SERVICE: &str = "observed_service_ms.txt";
/// One-way latencies a live run observed (milliseconds, one per line).
pub const OBSERVED_LATENCY: &str = "observed_latency_ms.txt";

/// The chart stems made of a prefix and a metric name.
const CHART_PREFIXES: [&str; 3] = ["sweep_", "heatmap_", "phase_"];

/// True when a file of this name in a result folder is one that jitterlab writes.
pub fn is_owned(name: &str) -> bool {
    let files = [
        "scenario.toml",
        JOURNAL,
        "meta.json",
        super::palette::FILE,
        "report.html",
        SummaryRow::FILE,
        AggregateRow::FILE,
        CompareRow::FILE,
        TimeseriesRow::FILE,
        AttemptsRow::FILE,
        LatencyRow::FILE,
        LayersRow::FILE,
        LayerTimeseriesRow::FILE,
        ParetoRow::FILE,
        LiveVsSimRow::FILE,
        OBSERVED_SERVICE,
        OBSERVED_LATENCY,
    ];
    files.contains(&name) || is_chart(name)
}

/// True when a file of this name is one of jitterlab's charts.
pub fn is_chart(name: &str) -> bool {
    let Some(stem) = name
        .strip_suffix(".png")
        .or_else(|| name.strip_suffix(".svg"))
    else {
        return false;
    };
    CHARTS.contains(&stem)
        || stem
            .strip_prefix("herd_layer")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        || CHART_PREFIXES.iter().any(|prefix| {
            stem.strip_prefix(prefix)
                .is_some_and(|metric| Metric::ALL.iter().any(|m| m.name() == metric))
        })
}

/// A temporary file of an atomic write (`.NAME.tmpPID`) left by a killed process.
fn is_leftover(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|rest| rest.rsplit_once(".tmp"))
        .is_some_and(|(file, pid)| is_owned(file) && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Checks that `dir` may receive a result folder (the `--out` of `flag`): it is not a file,
/// not the root or the home folder, and it is new, empty, a result folder, or `force` is
/// given. Refusals are [`Error::Usage`] (exit code 2) that say what to do instead.
pub fn claim(dir: &Path, flag: &str, force: bool) -> Result<()> {
    let refuse = |message: String| Error::Usage {
        arg: format!("{flag} {}", dir.display()),
        message,
    };
    let meta = match dir.metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    if !meta.is_dir() {
        return Err(refuse(
            "is a file, not a folder; name a folder for the results".into(),
        ));
    }
    let real = dir.canonicalize().map_err(|e| Error::io(dir, e))?;
    let home = std::env::var_os("HOME").and_then(|h| Path::new(&h).canonicalize().ok());
    if real.parent().is_none() || Some(&real) == home.as_ref() {
        return Err(refuse(
            "is the root or the home folder, never a result folder (not even with --force); \
             name a folder of its own, e.g. out/NAME"
                .into(),
        ));
    }
    if force || journal::is_journal(dir) {
        return Ok(());
    }
    let foreign = foreign_files(dir)?;
    if foreign.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = foreign.iter().take(3).cloned().collect();
    Err(refuse(format!(
        "holds files and is not a jitterlab result folder (it has no jitterlab journal {JOURNAL}), \
         e.g. {}; name a new or empty folder, or add --force to replace only the files \
         jitterlab writes there (others are kept)",
        shown.join(", ")
    )))
}

/// The names in `dir`, sorted, apart from temporary leftovers of jitterlab's own writes.
fn foreign_files(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = entries(dir)?
        .into_iter()
        .filter(|n| !is_leftover(n))
        .collect();
    names.sort();
    Ok(names)
}

fn entries(dir: &Path) -> Result<Vec<String>> {
    std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .map(|entry| {
            entry
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .map_err(|e| Error::io(dir, e))
        })
        .collect()
}

/// Deletes the files of `dir` that `owned` accepts (jitterlab's, or its charts) and that are
/// not in `keep`; returns them. Folders and every other file are left alone.
pub fn remove_stale(dir: &Path, owned: fn(&str) -> bool, keep: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for name in entries(dir)? {
        let path = dir.join(&name);
        if !owned(&name) || keep.iter().any(|k| k.file_name() == path.file_name()) {
            continue;
        }
        if path.symlink_metadata().is_ok_and(|m| m.is_file()) {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            removed.push(path);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitterlab_owns_its_files_and_charts_by_name_only() {
        for name in [
            "summary.csv",
            "units.jsonl",
            "meta.json",
            "report.html",
            "pareto.csv",
            "herd_log.svg",
            "heatmap_latency_p99_ms.png",
            "sweep_amplification.svg",
        ] {
            assert!(is_owned(name), "{name}");
        }
        for name in [
            "notes.txt",
            "summary.csv.bak",
            "herd.jpg",
            "heatmap_mine.png",
            "sweep_.svg",
            "data",
        ] {
            assert!(!is_owned(name), "{name}");
        }
        assert!(is_leftover(".summary.csv.tmp1234"));
        assert!(!is_leftover(".notes.txt.tmp1234") && !is_leftover(".summary.csv.tmpx"));
    }
}
