//! The files of a result folder that jitterlab owns, and the guard that keeps a user's other
//! files safe.
//!
//! A folder is a **result folder** when it holds `units.jsonl` whose first line is a jitterlab
//! journal header, or the staging folder ([`STAGE`](names::STAGE)) of a run in progress or interrupted: `run`
//! and `merge` write the journal before anything else, so every folder they wrote, finished,
//! sharded or interrupted, has one. jitterlab **owns** only the files it writes there, by
//! name: `scenario.toml`, `units.jsonl`, `meta.json`, `palette.json`, the CSVs of
//! `docs/results.md`, `pareto.csv`, `report.html`, the live mode's `live_vs_sim.csv` and
//! observed samples
//! ([`OBSERVED_SERVICE`](names::OBSERVED_SERVICE), [`OBSERVED_LATENCY`](names::OBSERVED_LATENCY)), and the charts (`herd`, `herd_log`,
//! `resync`, `load`, `latency`, `attempts`, `pareto`, `hedging`, `live_vs_sim`, `sweep_<metric>`,
//! `heatmap_<metric>`, `phase_<metric>`, each `.png` and `.svg`), and the herd animation
//! (`herd.gif`, `--animate`).
//!
//! A name is not proof: jitterlab deletes or replaces a file only when it can prove it wrote
//! it ([`Ownership`]), because `meta.json` lists it (`files`: every command that writes into
//! a folder records there what it wrote). A folder of a jitterlab from before that list is
//! proven by its journal and its `meta.json`, and its files by name.
//!
//! [`claim`] decides whether `run --out DIR` or `merge --out DIR` may write into a folder:
//! a new or empty folder, or a result folder, yes; any other folder only with `--force`; the
//! root and the home folder never; a folder holding a file of a name jitterlab writes that it
//! cannot prove it wrote, never. [`remove_stale`] deletes the proven files that new results no
//! longer hold, and never any other file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::names::{self, JOURNAL, META, OBSERVED_LATENCY, OBSERVED_SERVICE, STAGE};
use crate::error::{Error, Result, Setting};
use crate::metric::Metric;
use crate::sweep::journal;

/// The stems of the charts that are always planned (each `.png` and `.svg`), and the live
/// mode's.
const CHARTS: [&str; 10] = [
    "herd",
    "herd_log",
    "resync",
    "load",
    "latency",
    "attempts",
    "layers",
    "pareto",
    "hedging",
    "live_vs_sim",
];

/// The chart stems made of a prefix and a metric name.
const CHART_PREFIXES: [&str; 3] = ["sweep_", "heatmap_", "phase_"];

/// True when a file of this name in a result folder is one that jitterlab writes.
pub fn is_owned(name: &str) -> bool {
    let files = [
        names::SCENARIO,
        JOURNAL,
        META,
        names::PALETTE,
        names::REPORT,
        names::SUMMARY,
        names::AGGREGATE,
        names::COMPARE,
        names::TIMESERIES,
        names::ATTEMPTS,
        names::LATENCY,
        names::LAYERS,
        names::LAYER_TIMESERIES,
        names::HEDGING,
        names::PASSAGE,
        names::PARETO,
        names::RECOMMENDATION,
        names::LIVE_VS_SIM,
        OBSERVED_SERVICE,
        OBSERVED_LATENCY,
        names::ANIMATION,
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

/// A temporary file of an atomic write of one of jitterlab's files: its writer.
#[derive(Debug, PartialEq, Eq)]
enum Leftover {
    /// Process `pid` of this host and PID namespace wrote it (`.NAME.tmp-HOST-NS-PID`), or
    /// a jitterlab from before temporary names had a host (`.NAME.tmpPID`).
    Here(u64),
    /// A process of another host or PID namespace wrote it: its id says nothing here.
    Elsewhere,
}

/// The writer of `name` when it is a temporary file of one of jitterlab's files.
fn leftover(name: &str) -> Option<Leftover> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let number = |t: &str| t.parse().unwrap_or(u64::MAX);
    let rest = name.strip_prefix('.')?;
    if let Some((file, mark)) = rest.rsplit_once(".tmp-") {
        let mut fields = mark.rsplitn(3, '-');
        let (pid, namespace, host) = (fields.next()?, fields.next()?, fields.next()?);
        if !(is_owned(file) && digits(pid) && digits(namespace) && !host.is_empty()) {
            return None;
        }
        let (this_host, this_namespace) = crate::atomic::host_and_namespace();
        return Some(
            if host == this_host && number(namespace) == this_namespace {
                Leftover::Here(number(pid))
            } else {
                Leftover::Elsewhere
            },
        );
    }
    let (file, pid) = rest.rsplit_once(".tmp")?;
    (is_owned(file) && digits(pid)).then(|| Leftover::Here(number(pid)))
}

/// A temporary file of an atomic write, of this or another process.
fn is_leftover(name: &str) -> bool {
    leftover(name).is_some()
}

/// True when process `pid` may still be running (it then may still write its temporary
/// file). Without a way to ask (not Unix), every process is taken to be running.
fn is_alive(pid: u64) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return false;
        }
        // Signal 0 checks that the process exists; EPERM: it does, as another user's.
        // SAFETY: kill with signal 0 sends nothing; it only checks the pid.
        let found = unsafe { libc::kill(pid, 0) } == 0;
        found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Removes the temporary files that killed jitterlab processes left in `dir` (of jitterlab's
/// own names, written on this host in this PID namespace by a process that is gone; up to
/// hundreds of megabytes each). Returns them.
pub fn remove_leftovers(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let names = match entries(dir) {
        Ok(names) => names,
        Err(_) if !dir.is_dir() => return Ok(removed),
        Err(e) => return Err(e),
    };
    for name in names {
        let Some(Leftover::Here(pid)) = leftover(&name) else {
            continue;
        };
        let path = dir.join(&name);
        if pid != u64::from(std::process::id())
            && !is_alive(pid)
            && path.symlink_metadata().is_ok_and(|m| m.is_file())
        {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            removed.push(path);
        }
    }
    Ok(removed)
}

/// What jitterlab can prove it wrote in a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ownership {
    /// The files `meta.json` lists (`files`): jitterlab's record of what it wrote there.
    Listed(BTreeSet<String>),
    /// A result folder of a jitterlab from before the list: its journal and its `meta.json`
    /// are jitterlab's, and its files are known by their names ([`is_owned`]).
    ByName,
    /// A folder of a jitterlab from before the list, with a journal and no `meta.json`: a run
    /// of that release cut off before its results, which wrote `scenario.toml` and the
    /// journal only. Any other file of a name jitterlab writes is not proven its.
    Journal,
    /// Nothing: no `meta.json` of jitterlab's.
    Nothing,
}

impl Ownership {
    /// What `dir`'s `meta.json` proves: its list; without one, a folder with a jitterlab
    /// journal is one of an earlier jitterlab (finished, or interrupted before its meta.json).
    pub fn of(dir: &Path) -> Ownership {
        let Some(meta) = read_meta(dir) else {
            return if journal::is_journal(dir) {
                Ownership::Journal
            } else {
                Ownership::Nothing
            };
        };
        match meta.get("files").and_then(|f| f.as_array()) {
            Some(files) => {
                let names: BTreeSet<String> = files
                    .iter()
                    .filter_map(|f| f.as_str())
                    // Plain names only: nothing outside the folder is ever jitterlab's.
                    .filter(|n| is_plain_name(n))
                    .map(str::to_string)
                    .collect();
                if names.contains(META) {
                    Ownership::Listed(names)
                } else {
                    Ownership::Nothing
                }
            }
            None if journal::is_journal(dir) => Ownership::ByName,
            None => Ownership::Nothing,
        }
    }

    /// True when jitterlab can prove it wrote the file `name` of the folder.
    pub fn holds(&self, name: &str) -> bool {
        match self {
            Ownership::Listed(names) => names.contains(name),
            Ownership::ByName => is_owned(name),
            Ownership::Journal => name == JOURNAL || name == names::SCENARIO,
            Ownership::Nothing => false,
        }
    }
}

/// A file name with no folder in it (`summary.csv`, not `../x` or `a/b`).
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

/// `dir`'s `meta.json` as a JSON object, when it is jitterlab's: an object with the
/// `version` and `command` every `meta.json` of jitterlab's has, or only a `files` list that
/// holds itself (the record `plot` starts in a folder without one).
pub(crate) fn read_meta(dir: &Path) -> Option<serde_json::Map<String, serde_json::Value>> {
    let text = crate::input::read_text(&dir.join(META), crate::input::META).ok()?;
    let serde_json::Value::Object(meta) = serde_json::from_str(&text).ok()? else {
        return None;
    };
    let is_text = |key: &str| meta.get(key).is_some_and(|v| v.is_string());
    let lists_itself = meta
        .get("files")
        .and_then(|f| f.as_array())
        .is_some_and(|f| f.iter().any(|n| n == META));
    ((is_text("version") && is_text("command")) || lists_itself).then_some(meta)
}

/// Refuses unless every one of `names` that exists in `dir` (as anything: a file, a link, a
/// folder) is a file jitterlab can prove it wrote there ([`Ownership`]): jitterlab never
/// replaces or deletes a file it did not write.
pub fn guard<'a>(dir: &Path, names: impl IntoIterator<Item = &'a str>) -> Result<()> {
    let ownership = Ownership::of(dir);
    for name in names {
        let path = dir.join(name);
        if path.symlink_metadata().is_ok() && !ownership.holds(name) {
            return Err(not_ours(&path));
        }
    }
    Ok(())
}

/// The refusal to replace `path`, a file jitterlab cannot prove it wrote.
pub(crate) fn not_ours(path: &Path) -> Error {
    Error::ResultFolder {
        path: path.to_path_buf(),
        message: "exists, and jitterlab did not write it (its folder's meta.json does not list it): jitterlab never replaces or deletes a file it did not write; move it away, or write elsewhere".into(),
    }
}

/// Records in `dir`'s `meta.json` (`files`) the files `added` that a command wrote there (the
/// charts, `report.html`, `pareto.csv`); with `charts`, `added` is a complete draw, and the
/// charts listed before that it does not hold are removed and unlisted (a heatmap of another
/// sweep). A folder without `meta.json` gets one holding the list alone; a `meta.json` that is
/// not jitterlab's is never changed (nothing is recorded, nothing removed). Returns the files
/// removed.
pub fn record(dir: &Path, added: &[PathBuf], charts: bool) -> Result<Vec<PathBuf>> {
    let path = dir.join(META);
    let (mut meta, mut files) = match (read_meta(dir), Ownership::of(dir)) {
        (Some(meta), Ownership::Listed(files)) => (meta, files),
        // A folder of an earlier jitterlab: its files, known by name, start the list.
        (Some(meta), Ownership::ByName) => {
            let files = entries(dir)?.into_iter().filter(|n| is_owned(n)).collect();
            (meta, files)
        }
        (None, _) if path.symlink_metadata().is_err() => (serde_json::Map::new(), BTreeSet::new()),
        _ => return Ok(Vec::new()),
    };
    let added: BTreeSet<String> = added
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
        .collect();
    let mut removed = Vec::new();
    if charts {
        let stale: Vec<String> = files
            .iter()
            .filter(|n| is_chart(n) && !added.contains(*n))
            .cloned()
            .collect();
        for name in stale {
            let file = dir.join(&name);
            if file.symlink_metadata().is_ok_and(|m| m.is_file()) {
                std::fs::remove_file(&file).map_err(|e| Error::io(&file, e))?;
                removed.push(file);
            }
            files.remove(&name);
        }
    }
    files.extend(added);
    files.insert(META.into());
    meta.insert(
        "files".into(),
        serde_json::Value::Array(files.into_iter().map(Into::into).collect()),
    );
    let text = serde_json::to_string_pretty(&meta).map_err(|e| Error::io(&path, e.into()))?;
    crate::atomic::write_atomic(&path, text.as_bytes())?;
    Ok(removed)
}

/// The home folders of the user: `$HOME`, and the one the password database gives (which
/// stands when `HOME` is unset or points elsewhere).
fn home_folders() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .collect();
    #[cfg(unix)]
    homes.extend(passwd_home());
    #[cfg(not(unix))]
    homes.extend(std::env::home_dir());
    homes.iter().filter_map(|h| h.canonicalize().ok()).collect()
}

/// The current user's home folder in the password database.
#[cfg(unix)]
fn passwd_home() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: an all-zero passwd is a valid value for getpwuid_r to fill.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffers live across the call and their lengths are given; `found` is null
    // or points at `entry`, whose strings point into `buf`.
    let status = unsafe {
        libc::getpwuid_r(
            libc::getuid(),
            &mut entry,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    if status != 0 || found.is_null() || entry.pw_dir.is_null() {
        return None;
    }
    // SAFETY: pw_dir is a NUL-terminated string in `buf`, which is still alive.
    let dir = unsafe { CStr::from_ptr(entry.pw_dir) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())))
}

/// True when `dir` is a result folder: its journal, or its staging folder's (a run in progress
/// or interrupted before its first commit), starts with a jitterlab journal header.
pub fn is_result_folder(dir: &Path) -> bool {
    journal::is_journal(dir) || journal::is_journal(&dir.join(STAGE))
}

/// Checks that `dir` may receive a result folder (the [`Setting::Out`]): it is not a file,
/// not the root or the home folder, and it is new, empty, a result folder, or `force` is
/// given. Refusals are [`Error::Usage`] (exit code 2) that say what to do instead.
pub fn claim(dir: &Path, force: bool) -> Result<()> {
    let refuse = |message: String| Error::Usage {
        arg: format!("{} {}", Setting::Out, dir.display()),
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
    if real.parent().is_none() || home_folders().contains(&real) {
        return Err(refuse(format!(
            "is the root or the home folder, never a result folder (not even with {}); \
             name a folder of its own, e.g. out/NAME",
            Setting::Force
        )));
    }
    let foreign = foreign_files(dir)?;
    if !(force || foreign.is_empty() || is_result_folder(dir)) {
        return Err(not_a_result_folder(dir, &foreign, refuse));
    }
    // A commit cut short is finished first: its new files are proven once it is.
    super::stage::recover(dir)?;
    // A file of a name jitterlab writes, which it cannot prove it wrote: never replaced.
    let ownership = Ownership::of(dir);
    if let Some(name) = entries(dir)?
        .into_iter()
        .find(|n| is_owned(n) && !ownership.holds(n))
    {
        // A journal that is not jitterlab's says why.
        let why = match journal::read(dir) {
            Err(e) if name == JOURNAL => format!(" ({e})"),
            _ => String::new(),
        };
        return Err(refuse(format!(
            "holds {name}, a file of a name jitterlab writes that it did not write there{why}; \
             jitterlab never replaces a file it did not write (meta.json lists those it wrote), not even with {}: \
             move it away, or name another folder",
            Setting::Force
        )));
    }
    // What would stop the commit half-way (a folder where a result file goes, a file that
    // cannot be replaced) is refused before the work, as the commit refuses it.
    let names = entries(dir)?;
    super::commit::obstacles(
        dir,
        names.iter().map(String::as_str).filter(|n| is_owned(n)),
        &ownership,
    )?;
    super::commit::writable_folder(dir)
}

/// The refusal of a folder that holds `foreign` files and is not a result folder.
fn not_a_result_folder(dir: &Path, foreign: &[String], refuse: impl Fn(String) -> Error) -> Error {
    let shown: Vec<String> = foreign.iter().take(3).cloned().collect();
    let path = dir.join(JOURNAL);
    let journal = match crate::input::regular(&path) {
        Err(_) if path.symlink_metadata().is_err() => {
            format!("it has no jitterlab journal {JOURNAL}")
        }
        Ok(_) => format!("its {JOURNAL} does not start with a jitterlab journal header"),
        Err(Error::Io { source, .. }) => format!(
            "its {JOURNAL} {}",
            source.to_string().split(';').next().unwrap_or_default()
        ),
        Err(e) => e.to_string(),
    };
    refuse(format!(
        "holds files and is not a jitterlab result folder ({journal}), \
         e.g. {}; name a new or empty folder, or add {} to write beside them \
         (jitterlab replaces only files it wrote)",
        shown.join(", "),
        Setting::Force
    ))
}

/// The names in `dir`, sorted, apart from temporary leftovers of jitterlab's own writes and
/// its staging folder.
fn foreign_files(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = entries(dir)?
        .into_iter()
        .filter(|n| !is_leftover(n) && n != STAGE)
        .collect();
    names.sort();
    Ok(names)
}

pub(super) fn entries(dir: &Path) -> Result<Vec<String>> {
    std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .map(|entry| {
            entry
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .map_err(|e| Error::io(dir, e))
        })
        .collect()
}

/// Deletes the files of `dir` that jitterlab can prove it wrote ([`Ownership`], as `owned`)
/// and that are not in `keep`; returns them. Folders, links and every other file are left
/// alone.
pub fn remove_stale(
    dir: &Path,
    owned: &Ownership,
    keep: &BTreeSet<String>,
) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for name in entries(dir)? {
        let path = dir.join(&name);
        if !owned.holds(&name) || keep.contains(&name) {
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
            "hedging.csv",
            "herd_log.svg",
            "heatmap_latency_p99_ms.png",
            "sweep_amplification.svg",
            "herd.gif",
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
        assert_eq!(
            leftover(&format!(".summary.csv{}", crate::atomic::temp_suffix())),
            Some(Leftover::Here(u64::from(std::process::id())))
        );
        assert_eq!(
            leftover(".summary.csv.tmp-other-host-1-1234"),
            Some(Leftover::Elsewhere)
        );
        assert_eq!(leftover(".summary.csv.tmp-host-x-1234"), None);
    }

    fn scratch(label: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("jitterlab-owned-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn only_what_meta_json_lists_is_proven_and_record_keeps_the_list() {
        let dir = scratch("proof");
        std::fs::write(dir.join("herd.png"), "mine").unwrap();
        assert_eq!(Ownership::of(&dir), Ownership::Nothing);
        assert!(
            guard(&dir, ["herd.png"]).is_err(),
            "a chart of the user's own"
        );
        assert!(guard(&dir, ["load.png"]).is_ok(), "a chart not there yet");
        // A draw records its charts; the next one removes those it does not draw again.
        let drawn = [dir.join("load.png"), dir.join("load.svg")];
        for f in &drawn {
            std::fs::write(f, "chart").unwrap();
        }
        record(&dir, &drawn, true).unwrap();
        assert!(Ownership::of(&dir).holds("load.png") && !Ownership::of(&dir).holds("herd.png"));
        let removed = record(&dir, &drawn[..1], true).unwrap();
        assert_eq!(removed, [dir.join("load.svg")]);
        assert!(
            dir.join("herd.png").exists(),
            "never a file it did not draw"
        );
        // A meta.json that is not jitterlab's is never changed, and proves nothing.
        std::fs::write(dir.join("meta.json"), "{\"mine\": true}").unwrap();
        assert_eq!(Ownership::of(&dir), Ownership::Nothing);
        assert!(record(&dir, &drawn, true).unwrap().is_empty());
        assert_eq!(
            std::fs::read_to_string(dir.join("meta.json")).unwrap(),
            "{\"mine\": true}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_with_a_journal_and_no_meta_json_owns_its_journal_only() {
        let dir = scratch("journal-only");
        let header = "{\"jitterlab_journal\":1,\"fingerprint\":\"8e35ac5feb1c418c\",\"units\":6}\n";
        std::fs::write(dir.join(JOURNAL), header).unwrap();
        std::fs::write(dir.join("summary.csv"), "mine").unwrap();
        let ownership = Ownership::of(&dir);
        assert_eq!(ownership, Ownership::Journal);
        assert!(ownership.holds(JOURNAL) && ownership.holds("scenario.toml"));
        assert!(!ownership.holds("summary.csv") && !ownership.holds("herd.png"));
        assert!(guard(&dir, ["summary.csv"]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_killed_processs_temporary_files_go_and_a_live_ones_stay() {
        let dir = scratch("leftovers");
        // A process id no process has: above Linux's largest (PID_MAX_LIMIT, 2^22) and every
        // other Unix's. (Spawning a process that ends would race the lock tests of
        // `folder::stage`: a child holds the parent's descriptors, flocks included, until it
        // execs.)
        let pid = (1u32 << 22) + 1;
        let own = std::process::id();
        let (host, namespace) = crate::atomic::host_and_namespace();
        let here = format!(".aggregate.csv.tmp-{host}-{namespace}-{pid}");
        for name in [
            format!(".summary.csv.tmp{pid}"),
            format!(".summary.csv.tmp{own}"),
            format!(".notes.txt.tmp{pid}"),
            ".meta.json.tmp1".to_string(), // init: alive
            here.clone(),
            // The same process id on another host, or in another PID namespace: not ours.
            format!(".aggregate.csv.tmp-{host}x-{namespace}-{pid}"),
            format!(".aggregate.csv.tmp-{host}-{}-{pid}", namespace + 1),
        ] {
            std::fs::write(dir.join(name), "x").unwrap();
        }
        let mut removed = remove_leftovers(&dir).unwrap();
        removed.sort();
        assert_eq!(
            removed,
            [dir.join(here), dir.join(format!(".summary.csv.tmp{pid}"))]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_home_folder_is_also_the_password_databases() {
        use std::os::unix::fs::MetadataExt;
        let uid = std::fs::metadata("/proc/self").map(|m| m.uid());
        let passwd = std::fs::read_to_string("/etc/passwd");
        let (Ok(uid), Ok(passwd)) = (uid, passwd) else {
            return;
        };
        let home = passwd
            .lines()
            .map(|l| l.split(':').collect::<Vec<_>>())
            .find(|f| f.len() > 5 && f[2] == uid.to_string())
            .map(|f| PathBuf::from(f[5]));
        if let Some(home) = home {
            assert_eq!(passwd_home(), Some(home.clone()));
            if let Ok(real) = home.canonicalize() {
                assert!(home_folders().contains(&real));
                let e = claim(&home, true).unwrap_err();
                assert!(e.to_string().contains("the root or the home folder"), "{e}");
            }
        }
    }
}
