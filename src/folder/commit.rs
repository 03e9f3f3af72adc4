//! The commit of a staged run: its files moved into the result folder so that the folder is
//! never left holding old and new files side by side.
//!
//! Every obstacle is looked for before the first rename ([`obstacles`]): a folder or a FIFO
//! where a result file goes, a file that cannot be replaced (read-only, immutable), a
//! file jitterlab did not write, a folder it cannot write into; any of them refuses the
//! commit with nothing changed. Then each file the new results replace or no longer have is
//! moved aside into the stage's [`REPLACED`] folder, each new file moved in, `meta.json`
//! last. A rename that fails anyway (the folder changed since it was looked at) undoes every
//! rename before it, in reverse order. A commit cut short by a kill is finished by the next
//! command that opens the folder ([`super::stage::recover`]): the stage's `meta.json`, moved
//! last, is still there, and every step is repeated only where it is not done yet. Readers
//! take the folder's lock or refuse a folder whose commit is pending
//! ([`pending`]), so that no reader sees a mix.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::names::{META, REPLACED, STAGE};
use super::owned::{self, Ownership};
use crate::error::{Error, Result};

/// True when `dir` holds a staged run whose commit has not ended (it goes on, or it was cut
/// short): its files may be half old, half new until the next command finishes it.
pub fn pending(dir: &Path) -> bool {
    dir.join(STAGE)
        .join(META)
        .symlink_metadata()
        .is_ok_and(|m| m.is_file())
}

/// The refusal of a reader of `dir` while [`pending`].
pub fn pending_error(dir: &Path) -> Error {
    Error::ResultFolder {
        path: dir.to_path_buf(),
        message: format!(
            "a commit of new results into it has not ended ({STAGE}/{META} is there): its files may be half old, half new; run `jitterlab plot {}` (it finishes the commit), or wait for the run that writes it",
            dir.display()
        ),
    }
}

/// One rename a commit made, to undo it.
enum Step {
    /// The folder's file of this name moved into [`REPLACED`].
    Aside(String),
    /// The stage's file of this name moved into the folder.
    In(String),
}

/// Moves the stage of `dir` in (see the module's notes); returns the files its `meta.json`
/// lists, in the folder.
pub fn commit(dir: &Path) -> Result<Vec<PathBuf>> {
    let stage = dir.join(STAGE);
    let Ownership::Listed(files) = Ownership::of(&stage) else {
        return Err(Error::ResultFolder {
            path: stage.join(META),
            message: "lists no files; it is not the meta.json of a staged run".into(),
        });
    };
    let old = Ownership::of(dir);
    let staged: Vec<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|n| stage.join(n).symlink_metadata().is_ok_and(|m| m.is_file()))
        .collect();
    // The old results' files that the new ones do not have (their charts, a layers.csv of
    // another scenario): proven by the old meta.json, still in place.
    let stale: Vec<String> = owned::entries(dir)?
        .into_iter()
        .filter(|n| old.holds(n) && !files.contains(n))
        .filter(|n| dir.join(n).symlink_metadata().is_ok_and(|m| m.is_file()))
        .collect();
    obstacles(dir, staged.iter().copied(), &old)?;
    obstacles(dir, stale.iter().map(String::as_str), &old)?;
    writable_folder(dir)?;
    let replaced = stage.join(REPLACED);
    std::fs::create_dir_all(&replaced).map_err(|e| Error::io(&replaced, e))?;
    let mut done = Vec::new();
    if let Err(e) = apply(dir, &staged, &stale, &mut done) {
        undo(dir, done);
        return Err(e);
    }
    finish(&stage);
    Ok(files.iter().map(|n| dir.join(n)).collect())
}

/// The renames of a commit, each recorded in `done` once made: the staged files in
/// (`meta.json` last), the stale ones aside before it.
fn apply(dir: &Path, staged: &[&str], stale: &[String], done: &mut Vec<Step>) -> Result<()> {
    let stage = dir.join(STAGE);
    let replaced = stage.join(REPLACED);
    let aside = |name: &str, done: &mut Vec<Step>| -> Result<()> {
        let from = dir.join(name);
        if from.symlink_metadata().is_ok() {
            move_file(&from, &replaced.join(name))?;
            done.push(Step::Aside(name.to_string()));
        }
        Ok(())
    };
    let move_in = |name: &str, done: &mut Vec<Step>| -> Result<()> {
        aside(name, done)?;
        move_file(&stage.join(name), &dir.join(name))?;
        done.push(Step::In(name.to_string()));
        Ok(())
    };
    for name in staged.iter().filter(|n| **n != META) {
        move_in(name, done)?;
    }
    for name in stale {
        aside(name, done)?;
    }
    if staged.contains(&META) {
        move_in(META, done)?;
    }
    Ok(())
}

/// Undoes the renames `done`, last first: the folder is as it was before the commit, and
/// the stage too (its `meta.json` with it, for the next command to try again).
fn undo(dir: &Path, done: Vec<Step>) {
    let stage = dir.join(STAGE);
    for step in done.into_iter().rev() {
        // Best effort: the commit's own error is the one to report.
        let _ = match step {
            Step::In(name) => std::fs::rename(dir.join(&name), stage.join(&name)),
            Step::Aside(name) => std::fs::rename(stage.join(REPLACED).join(&name), dir.join(&name)),
        };
    }
    let _ = std::fs::remove_dir(stage.join(REPLACED));
}

/// After the last rename: the replaced files go, and the stage once empty (a file someone
/// put there stays, and so does the stage).
fn finish(stage: &Path) {
    remove_replaced(stage);
    let _ = owned::remove_leftovers(stage);
    let _ = std::fs::remove_dir(stage);
}

/// Deletes the files a commit moved aside into `stage`'s [`REPLACED`] folder, and the folder.
pub fn remove_replaced(stage: &Path) {
    let replaced = stage.join(REPLACED);
    if let Ok(names) = owned::entries(&replaced) {
        for name in names {
            let path = replaced.join(name);
            // A file or a link (never its target); a folder stays, and the stage with it.
            if path.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
    let _ = std::fs::remove_dir(replaced);
}

fn move_file(from: &Path, to: &Path) -> Result<()> {
    std::fs::rename(from, to).map_err(|e| Error::io(to, e))
}

/// Refuses, before anything is changed, when one of `names` in `dir` could not be replaced
/// or moved: a folder, a FIFO or another non-file there (a link is moved, never followed), a file jitterlab did not write
/// ([`Ownership`] `old`), or one that cannot be written (read-only, immutable). Names not
/// in `dir` pass.
pub fn obstacles<'a>(
    dir: &Path,
    names: impl IntoIterator<Item = &'a str>,
    old: &Ownership,
) -> Result<()> {
    let names: BTreeSet<&str> = names.into_iter().collect();
    for name in names {
        let path = dir.join(name);
        let meta = match path.symlink_metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&path, e)),
        };
        // A link is moved aside as a file is (a rename never follows it).
        let link = meta.file_type().is_symlink();
        let what = if meta.is_dir() {
            Some("a folder")
        } else if !meta.is_file() && !link {
            Some("not a regular file (a FIFO, a socket or a device)")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(obstacle(
                &path,
                &format!("is {what}, where jitterlab puts its result file {name}"),
            ));
        }
        if !old.holds(name) {
            return Err(owned::not_ours(&path));
        }
        if link {
            continue;
        }
        if let Err(e) = std::fs::OpenOptions::new().write(true).open(&path) {
            return Err(obstacle(
                &path,
                &format!("cannot be replaced ({}: read-only or immutable)", e),
            ));
        }
    }
    Ok(())
}

/// Refuses when jitterlab cannot create, rename or delete files in `dir`.
pub fn writable_folder(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
            return Ok(());
        };
        // SAFETY: access() reads the NUL-terminated path `c` and nothing else.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(obstacle(
                dir,
                &format!("is a folder jitterlab cannot write into ({})", e),
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The refusal of a commit with nothing changed.
fn obstacle(path: &Path, what: &str) -> Error {
    Error::ResultFolder {
        path: path.to_path_buf(),
        message: format!(
            "{what}; nothing in the folder was changed (no result file is replaced while one cannot be): move it away, or write elsewhere"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::folder::stage::{Stage, recover};

    fn write(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
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

    fn folder(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("jitterlab-commit-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        staged(
            &dir,
            &[
                ("summary.csv", "old"),
                ("timeseries.csv", "old"),
                ("layers.csv", "old"),
            ],
        )
        .commit()
        .unwrap();
        dir
    }

    /// The folder's old results, untouched: every file as the first commit wrote it.
    fn all_old(dir: &Path) {
        assert_eq!(read(&dir.join("summary.csv")), "old");
        assert_eq!(read(&dir.join("layers.csv")), "old");
        assert!(Ownership::of(dir).holds("layers.csv"), "the old meta.json");
    }

    #[test]
    fn an_obstacle_refuses_the_commit_before_the_first_rename_and_the_next_one_finishes() {
        let dir = folder("obstacle");
        let stage = staged(&dir, &[("summary.csv", "new"), ("timeseries.csv", "new")]);
        // The case of issue 42: a folder where a result file goes.
        std::fs::remove_file(dir.join("timeseries.csv")).unwrap();
        std::fs::create_dir(dir.join("timeseries.csv")).unwrap();
        let e = stage.commit().unwrap_err();
        assert!(
            e.is_user_error() && e.to_string().contains("is a folder"),
            "{e}"
        );
        all_old(&dir);
        assert!(pending(&dir) && pending_error(&dir).to_string().contains("half old"));
        // Gone, the next command that opens the folder commits the new results whole.
        std::fs::remove_dir(dir.join("timeseries.csv")).unwrap();
        recover(&dir).unwrap();
        assert!(!pending(&dir) && !dir.join(STAGE).exists());
        assert_eq!(read(&dir.join("summary.csv")), "new");
        assert_eq!(read(&dir.join("timeseries.csv")), "new");
        assert!(
            !dir.join("layers.csv").exists(),
            "the old results' own file went"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_is_moved_never_followed_and_a_read_only_file_refuses() {
        // The variant: another obstacle, at another file.
        let dir = folder("link");
        let target = dir.with_extension("target");
        write(&target, "precious");
        std::fs::remove_file(dir.join("layers.csv")).unwrap();
        std::os::unix::fs::symlink(&target, dir.join("layers.csv")).unwrap();
        // A link where a new result goes: replaced, its target untouched.
        let stage = staged(&dir, &[("summary.csv", "new"), ("layers.csv", "new")]);
        stage.commit().unwrap();
        assert_eq!(read(&dir.join("layers.csv")), "new");
        assert_eq!(read(&target), "precious");
        // An immutable file (chattr +i, as root) or a read-only one: refused, nothing moved.
        let summary = dir.join("summary.csv");
        let immutable = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&summary)
            .status()
            .is_ok_and(|s| s.success());
        if !immutable {
            let mut perms = std::fs::metadata(&summary).unwrap().permissions();
            perms.set_readonly(true);
            std::fs::set_permissions(&summary, perms).unwrap();
        }
        let stage = staged(&dir, &[("summary.csv", "newer"), ("layers.csv", "newer")]);
        let result = stage.commit();
        if immutable {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&summary)
                .status();
        }
        // Root may write a read-only file: only the immutable case proves the refusal there.
        if immutable || !is_root() {
            let e = result.unwrap_err();
            assert!(e.to_string().contains("cannot be replaced"), "{e}");
            assert_eq!(read(&summary), "new");
            assert_eq!(read(&dir.join("layers.csv")), "new");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::remove_file(&target).unwrap();
    }

    fn is_root() -> bool {
        // SAFETY: geteuid reads the process's user id and nothing else.
        unsafe { libc::geteuid() == 0 }
    }

    #[test]
    fn a_rename_that_fails_half_way_is_undone_whole() {
        let dir = folder("undo");
        drop(staged(
            &dir,
            &[("summary.csv", "new"), ("timeseries.csv", "new")],
        ));
        std::fs::create_dir_all(dir.join(STAGE).join(REPLACED)).unwrap();
        // A file the stage lists that has gone since it was looked at: the third rename fails.
        let mut done = Vec::new();
        let stale = vec!["layers.csv".to_string()];
        let staged = ["summary.csv", "missing.csv", "timeseries.csv", META];
        assert!(apply(&dir, &staged, &stale, &mut done).is_err());
        assert!(!done.is_empty(), "renames were made before the failure");
        undo(&dir, done);
        all_old(&dir);
        assert_eq!(read(&dir.join("timeseries.csv")), "old");
        assert_eq!(read(&dir.join(STAGE).join("summary.csv")), "new");
        assert!(!dir.join(STAGE).join(REPLACED).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_commit_killed_half_way_is_finished_from_where_it_stopped() {
        let dir = folder("killed");
        drop(staged(
            &dir,
            &[("summary.csv", "new"), ("timeseries.csv", "new")],
        ));
        let replaced = dir.join(STAGE).join(REPLACED);
        std::fs::create_dir_all(&replaced).unwrap();
        // Killed after moving summary.csv in and the old timeseries.csv aside.
        std::fs::rename(dir.join("summary.csv"), replaced.join("summary.csv")).unwrap();
        std::fs::rename(dir.join(STAGE).join("summary.csv"), dir.join("summary.csv")).unwrap();
        std::fs::rename(dir.join("timeseries.csv"), replaced.join("timeseries.csv")).unwrap();
        // Readers refuse it meanwhile (output::results asks `pending`).
        assert!(pending(&dir) && pending_error(&dir).to_string().contains("half old"));
        recover(&dir).unwrap();
        assert_eq!(read(&dir.join("summary.csv")), "new");
        assert_eq!(read(&dir.join("timeseries.csv")), "new");
        assert!(!dir.join("layers.csv").exists() && !dir.join(STAGE).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
