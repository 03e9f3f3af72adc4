//! The result folder: the one owner of what a folder of results holds and of who may change
//! it. [`names`] spells every file name; [`owned`] knows which files jitterlab can prove it
//! wrote and guards the others (the `--out` claim, stale-file removal, killed processes'
//! temporary files); [`stage`] moves a run's new files in whole. `run`, `merge`, `plot`,
//! `recommend`, `report` and `live` all go through it, and nothing else spells a file name.
//!
//! It sits between the sweeps (whose journal format it reads to recognise a result folder)
//! and the output files (the CSV writers, charts and report, which take their names and
//! their guard from here); [`names`] alone is a leaf that any module may name.

pub mod commit;
pub mod names;
pub mod owned;
pub mod stage;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use stage::Stage;

/// A result folder a command writes into. `run`, `merge` and `live` [`claim`](Folder::claim)
/// one for new results, before any work, so that a refusal comes first; `plot` and
/// `recommend` [`open`](Folder::open) one to add their files. Files are replaced only through
/// its guard ([`owned::guard`]) and recorded in its `meta.json` ([`owned::record`]).
#[derive(Debug)]
pub struct Folder {
    dir: PathBuf,
    /// Held by a folder [`open`](Folder::open)ed, for as long as the value lives.
    _lock: Option<stage::Lock>,
}

impl Folder {
    /// Claims `dir` for new results: it must be new, empty or a result folder, or `force`
    /// given (the refusals of [`owned::claim`]).
    pub fn claim(dir: PathBuf, force: bool) -> Result<Folder> {
        owned::claim(&dir, force)?;
        Ok(Folder { dir, _lock: None })
    }

    /// Opens `dir`, a result folder, to add files to it: locked as a run's stage is
    /// ([`stage::Lock`], refused while another process writes it) until the value is
    /// dropped, and a commit cut short there finished first, so that its files are the new
    /// results' whole. A folder that is not there is not locked (reading it fails).
    pub fn open(dir: &Path) -> Result<Folder> {
        let lock = if dir.is_dir() {
            Some(stage::Lock::take(dir)?)
        } else {
            None
        };
        Ok(Folder {
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates the folder when it is not there; true when this call created it.
    pub fn create(&self) -> Result<bool> {
        let created = self.dir.symlink_metadata().is_err();
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        Ok(created)
    }

    /// Opens and locks the folder's staging folder ([`Stage::open`]); with `resume`, an
    /// interrupted run's journal there is kept.
    pub fn stage(&self, resume: bool) -> Result<Stage> {
        Stage::open(&self.dir, resume)
    }

    /// Removes the temporary files that killed jitterlab processes left in the folder
    /// ([`owned::remove_leftovers`]); returns them.
    pub fn remove_leftovers(&self) -> Result<Vec<PathBuf>> {
        owned::remove_leftovers(&self.dir)
    }

    /// Refuses unless each of `names` that exists is a file jitterlab wrote ([`owned::guard`]).
    pub fn guard<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Result<()> {
        owned::guard(&self.dir, names)
    }

    /// Records in `meta.json` the files `added` ([`owned::record`]); returns those removed.
    pub fn record(&self, added: &[PathBuf], charts: bool) -> Result<Vec<PathBuf>> {
        owned::record(&self.dir, added, charts)
    }
}
