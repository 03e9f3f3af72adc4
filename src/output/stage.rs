//! A result folder replaced whole: a run's files are written into the folder's staging folder
//! ([`STAGE`], `DIR/.jitterlab-partial/`) and moved into the folder only once every one of
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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::owned::{self, Ownership, STAGE};
use crate::error::{Error, Result};
use crate::sweep::journal::JOURNAL;

/// The staging folder of one run in `dir`.
#[derive(Debug)]
pub struct Stage {
    dir: PathBuf,
    path: PathBuf,
}

impl Stage {
    /// The staging folder of `dir`, created if needed. An interrupted run's files there are
    /// kept when `resume`, else deleted (jitterlab's names only); killed processes'
    /// temporary files are removed from both.
    pub fn open(dir: &Path, resume: bool) -> Result<Stage> {
        let path = dir.join(STAGE);
        match path.symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(Error::ResultFolder {
                    path,
                    message: "is not a folder (a link or a file); jitterlab stages a run's files in a folder of this name and never writes through a link: remove it".into(),
                });
            }
            Err(_) => std::fs::create_dir(&path).map_err(|e| Error::io(&path, e))?,
        }
        owned::remove_leftovers(dir)?;
        owned::remove_leftovers(&path)?;
        let stage = Stage {
            dir: dir.to_path_buf(),
            path,
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
        owned::remove_stale(&self.path, &Ownership::ByName, &all).map(drop)
    }

    /// Moves the staged files into the folder (see the module's notes); the stage's
    /// `meta.json`, written last, lists them. Returns their paths in the folder.
    pub fn commit(self) -> Result<Vec<PathBuf>> {
        commit(&self.dir)
    }
}

/// Finishes a commit of `dir` that was cut short: when the staging folder holds a
/// `meta.json` (its files were all written), they are moved in as [`Stage::commit`] does.
/// Nothing to do otherwise (no stage, or a run in progress or interrupted).
pub fn recover(dir: &Path) -> Result<()> {
    let stage = dir.join(STAGE);
    let staged_meta = stage.join("meta.json");
    if stage.symlink_metadata().is_ok_and(|m| m.is_dir())
        && staged_meta.symlink_metadata().is_ok_and(|m| m.is_file())
    {
        commit(dir)?;
    }
    Ok(())
}

/// The commit of `dir`'s stage: every file its `meta.json` lists, then `meta.json`.
fn commit(dir: &Path) -> Result<Vec<PathBuf>> {
    let stage = dir.join(STAGE);
    let Ownership::Listed(files) = Ownership::of(&stage) else {
        return Err(Error::ResultFolder {
            path: stage.join("meta.json"),
            message: "lists no files; it is not the meta.json of a staged run".into(),
        });
    };
    let old = Ownership::of(dir);
    let rename = |name: &str| -> Result<()> {
        let (from, to) = (stage.join(name), dir.join(name));
        if from.symlink_metadata().is_ok_and(|m| m.is_file()) {
            std::fs::rename(&from, &to).map_err(|e| Error::io(&to, e))?;
        }
        Ok(())
    };
    for name in files.iter().filter(|n| *n != "meta.json") {
        rename(name)?;
    }
    // The old results' files that the new ones do not have (their charts, a layers.csv of
    // another scenario): proven by the old meta.json, still in place.
    owned::remove_stale(dir, &old, &files)?;
    rename("meta.json")?;
    owned::remove_leftovers(&stage)?;
    // Empty unless someone put a file of their own there, which stays.
    let _ = std::fs::remove_dir(&stage);
    Ok(files.iter().map(|n| dir.join(n)).collect())
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
        let _stage = staged(
            &dir,
            &[("summary.csv", "newer"), ("aggregate.csv", "newer")],
        );
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
        recover(&dir).unwrap();
        assert!(Stage::open(&dir, true).unwrap().has_journal());
        assert!(
            !Stage::open(&dir, false).unwrap().has_journal(),
            "a new run starts afresh"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
