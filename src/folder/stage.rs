//! A result folder replaced whole: a run's files are written into the folder's staging folder
//! ([`STAGE`](super::names::STAGE), `DIR/.jitterlab-partial/`) and moved into the folder only once every one of
//! them is written, so that the old results stay as they were until the new ones are
//! complete, and a full disk or a kill never leaves a folder of old and new files.
//!
//! The staging folder holds, while a run goes on, its `scenario.toml` and its journal
//! (`units.jsonl`, appended as units finish): an interrupted run is resumed from there
//! (`--resume`). When the work is done, the result files are written there too, `meta.json`
//! last, listing them (`files`). Its `meta.json` marks a complete stage: [`Stage::commit`] then
//! renames each file into the folder (`meta.json` last), deletes the files of the old results
//! that the new ones do not have (the proven ones only, [`Ownership`]), and removes the
//! staging folder. Renames need no space and each is atomic; a commit cut short (a kill
//! between two renames) is finished by the next command that writes the folder ([`recover`]),
//! from the stage's `meta.json`, which is still there.
//!
//! One process at a time writes a folder: the staging folder is locked (an advisory lock on
//! the folder itself, `flock`, released when the process ends however it ends) from
//! [`Stage::open`] to the end of the commit, and a second run into the same folder is refused.
//! A commit replaces only files the folder's `meta.json` proves jitterlab wrote, checked
//! again at the commit (a run takes hours; the folder may have changed since it began). A run
//! that fails leaves the stage as it found it ([`Stage::abandon`]): its journal when it holds
//! finished units (for `--resume`), else nothing.

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::names::{JOURNAL, SCENARIO, STAGE};
use super::owned::{self, Ownership};
use crate::error::{Error, Result};

/// The staging folder of one run in `dir`, locked while the value lives.
#[derive(Debug)]
pub struct Stage {
    dir: PathBuf,
    path: PathBuf,
    /// The staging folder opened and locked: the lock goes with it.
    _lock: File,
}

impl Stage {
    /// The staging folder of `dir`, created if needed. An interrupted run's files there are
    /// kept when `resume`, else deleted (jitterlab's names only); killed processes'
    /// temporary files are removed from both.
    pub fn open(dir: &Path, resume: bool) -> Result<Stage> {
        let path = dir.join(STAGE);
        let lock = lock(&path)?.ok_or_else(|| Error::ResultFolder {
            path: dir.to_path_buf(),
            message: format!(
                "another jitterlab process is writing this folder (its staging folder {STAGE} is locked): wait until it ends, or name another folder"
            ),
        })?;
        owned::remove_leftovers(dir)?;
        owned::remove_leftovers(&path)?;
        let stage = Stage {
            dir: dir.to_path_buf(),
            path,
            _lock: lock,
        };
        if !resume {
            stage.clear()?;
        }
        Ok(stage)
    }

    /// The staging folder, where the run writes its files.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the stage holds a journal (a run in progress or interrupted).
    pub fn has_journal(&self) -> bool {
        self.path.join(JOURNAL).symlink_metadata().is_ok()
    }

    /// Deletes jitterlab's files in the stage (an earlier run's).
    fn clear(&self) -> Result<()> {
        let all: BTreeSet<String> = BTreeSet::new();
        super::commit::remove_replaced(&self.path);
        owned::remove_stale(&self.path, &Ownership::ByName, &all).map(drop)
    }

    /// Moves the staged files into the folder (see the module's notes); the stage's
    /// `meta.json`, written last, lists them. Returns their paths in the folder.
    /// Refused with nothing changed when a file cannot be replaced ([`super::commit`]); the
    /// stage then stays, for the next command to commit once the obstacle is gone.
    pub fn commit(self) -> Result<Vec<PathBuf>> {
        // The lock is held until the last rename.
        super::commit::commit(&self.dir)
    }

    /// Leaves the stage of a run that failed before its commit: with `keep_journal`, a journal
    /// that holds finished units stays with its `scenario.toml` (a run resumes from them);
    /// every other file of jitterlab's goes, and so does the staging folder once empty.
    pub fn abandon(self, keep_journal: bool) {
        let keep: BTreeSet<String> = if keep_journal && holds_units(&self.path) {
            [JOURNAL.to_string(), SCENARIO.to_string()].into()
        } else {
            BTreeSet::new()
        };
        // Best effort: the run's own error is the one to report.
        let _ = owned::remove_stale(&self.path, &Ownership::ByName, &keep);
        let _ = owned::remove_leftovers(&self.path);
        if keep.is_empty() {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// True when the journal in `stage` holds a unit's record after its header.
fn holds_units(stage: &Path) -> bool {
    crate::input::read_text(&stage.join(JOURNAL), crate::input::JOURNAL).is_ok_and(|text| {
        text.split_once('\n')
            .is_some_and(|(_, rest)| !rest.trim().is_empty())
    })
}

/// Creates the staging folder `path` if needed and locks it; `None` when another process
/// holds the lock. The lock is on the folder itself, checked to be still the one at `path`
/// once locked (a commit removes it when it ends).
fn lock(path: &Path) -> Result<Option<File>> {
    loop {
        match path.symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(Error::ResultFolder {
                    path: path.to_path_buf(),
                    message: "is not a folder (a link or a file); jitterlab stages a run's files in a folder of this name and never writes through a link: remove it".into(),
                });
            }
            Err(_) => match std::fs::create_dir(path) {
                Ok(()) => {}
                // Created by another process since: lock that one.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(path, e)),
            },
        }
        let folder = match File::open(path) {
            Ok(folder) => folder,
            // Removed by a commit since it was looked at: again.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(path, e)),
        };
        if !try_lock(&folder).map_err(|e| Error::io(path, e))? {
            return Ok(None);
        }
        if same_file(&folder, path) {
            return Ok(Some(folder));
        }
    }
}

/// Takes the exclusive advisory lock of `file` without waiting; false when another process
/// holds it. (`File::try_lock` is newer than the crate's minimum Rust.)
fn try_lock(file: &File) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock on a descriptor that `file` keeps open; the lock goes with it.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(false)
        } else {
            Err(e)
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(true)
    }
}

/// True when `file` is the file or folder at `path` (not one removed and created again).
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), path.symlink_metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.is_dir()
    }
}

/// Finishes a commit of `dir` that was cut short: when the staging folder holds a
/// `meta.json` (its files were all written), they are moved in as [`Stage::commit`] does.
/// Nothing to do otherwise (no stage, or a run in progress or interrupted).
pub fn recover(dir: &Path) -> Result<()> {
    if super::commit::pending(dir) {
        // A stage locked by a running process is its to commit.
        let Some(_lock) = lock(&dir.join(STAGE))? else {
            return Ok(());
        };
        recover_locked(dir)?;
    }
    Ok(())
}

/// [`recover`] by the holder of the folder's lock.
fn recover_locked(dir: &Path) -> Result<()> {
    if super::commit::pending(dir) {
        super::commit::commit(dir)?;
    }
    Ok(())
}

/// The lock of a result folder that a command adds files to (`plot`, `recommend`), held
/// while the value lives: the lock a run's [`Stage`] holds, so that no two commands write
/// the folder at once (a run's `meta.json` would forget a `pareto.csv` written meanwhile).
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    _file: File,
}

impl Lock {
    /// Locks `dir` (refused while another process writes it) and finishes a commit there
    /// that was cut short.
    pub fn take(dir: &Path) -> Result<Lock> {
        let path = dir.join(STAGE);
        let file = lock(&path)?.ok_or_else(|| Error::ResultFolder {
            path: dir.to_path_buf(),
            message: format!(
                "another jitterlab process is writing this folder (its staging folder {STAGE} is locked): wait until it ends, then try again"
            ),
        })?;
        let lock = Lock { path, _file: file };
        recover_locked(dir)?;
        Ok(lock)
    }
}

impl Drop for Lock {
    /// The staging folder goes when empty (it holds an interrupted run's journal otherwise).
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
    }

    /// Stages `files` (name, text) and a meta.json listing them.
    fn staged(dir: &Path, files: &[(&str, &str)]) -> Stage {
        let stage = Stage::open(dir, false).unwrap();
        let mut names: Vec<&str> = files.iter().map(|f| f.0).collect();
        for (name, text) in files {
            write(&stage.path().join(name), text);
        }
        names.push("meta.json");
        let meta = serde_json::json!({ "version": "t", "command": "t", "files": names });
        write(&stage.path().join("meta.json"), &meta.to_string());
        stage
    }

    #[test]
    fn a_commit_replaces_the_old_results_whole_and_a_cut_short_one_is_finished() {
        let dir = std::env::temp_dir().join(format!("jitterlab-stage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        staged(&dir, &[("summary.csv", "old"), ("layers.csv", "old")])
            .commit()
            .unwrap();
        write(&dir.join("notes.txt"), "mine");
        // The new results have no layers.csv: it goes at the commit, the user's file stays.
        let stage = staged(&dir, &[("summary.csv", "new")]);
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.csv")).unwrap(),
            "old"
        );
        stage.commit().unwrap();
        let names = |d: &Path| {
            let mut n: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        assert_eq!(names(&dir), ["meta.json", "notes.txt", "summary.csv"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.csv")).unwrap(),
            "new"
        );
        // A commit killed after its first rename: the next command finishes it.
        // (A killed process's lock is gone with it.)
        drop(staged(
            &dir,
            &[("summary.csv", "newer"), ("aggregate.csv", "newer")],
        ));
        std::fs::rename(
            dir.join(STAGE).join("aggregate.csv"),
            dir.join("aggregate.csv"),
        )
        .unwrap();
        recover(&dir).unwrap();
        assert_eq!(
            names(&dir),
            ["aggregate.csv", "meta.json", "notes.txt", "summary.csv"]
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.csv")).unwrap(),
            "newer"
        );
        assert!(Ownership::of(&dir).holds("aggregate.csv"));
        // An interrupted run's stage (no meta.json yet) is left for --resume.
        let stage = Stage::open(&dir, false).unwrap();
        write(&stage.path().join(JOURNAL), "{}\n");
        drop(stage);
        recover(&dir).unwrap();
        assert!(Stage::open(&dir, true).unwrap().has_journal());
        assert!(
            !Stage::open(&dir, false).unwrap().has_journal(),
            "a new run starts afresh"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_commit_never_replaces_a_file_put_there_since_the_run_began() {
        let dir = std::env::temp_dir().join(format!("jitterlab-stage-own-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let stage = staged(&dir, &[("summary.csv", "new")]);
        // The user's, written while the run went on: no meta.json proves it jitterlab's.
        write(&dir.join("summary.csv"), "mine");
        let e = stage.commit().unwrap_err();
        assert!(e.to_string().contains("jitterlab did not write it"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.csv")).unwrap(),
            "mine"
        );
        assert!(
            dir.join(STAGE).join("summary.csv").exists(),
            "nothing moved"
        );
        // And a meta.json of the user's is not replaced either.
        std::fs::remove_file(dir.join("summary.csv")).unwrap();
        write(&dir.join("meta.json"), "{\"mine\": 1}");
        assert!(recover(&dir).is_err());
        assert_eq!(
            std::fs::read_to_string(dir.join("meta.json")).unwrap(),
            "{\"mine\": 1}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_second_stage_of_the_same_folder_is_refused_while_the_first_lives() {
        let dir = std::env::temp_dir().join(format!("jitterlab-stage-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let first = Stage::open(&dir, false).unwrap();
        let e = Stage::open(&dir, true).unwrap_err();
        assert!(e.to_string().contains("another jitterlab process"), "{e}");
        drop(first);
        Stage::open(&dir, true).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
