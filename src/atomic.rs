//! Atomic file writes: a temporary name in the same folder, then a rename, so that a crash or
//! a reader never sees half a file. Every file jitterlab writes goes through here: the journal
//! of a sweep as well as the result files, charts and report.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = write_temp(path, bytes)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Writes `bytes` to the new file `path`, whole or not at all, and never replaces a file: an
/// existing `path` is an [`Error::Io`] of kind `AlreadyExists` and is left untouched.
pub fn create_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = write_temp(path, bytes)?;
    // A hard link, unlike a rename, fails when the target exists.
    let linked = match std::fs::hard_link(&tmp, path) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            // A file system without hard links: check, then rename.
            if path.symlink_metadata().is_ok() {
                Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists))
            } else {
                std::fs::rename(&tmp, path)
            }
        }
        other => other,
    };
    let _ = std::fs::remove_file(&tmp);
    linked.map_err(|e| Error::io(path, e))
}

/// A file written piece by piece under a temporary name beside its path, and renamed to it by
/// [`AtomicFile::commit`]; dropped without a commit, the temporary file is removed. For files
/// too large to build in memory first: a time series of hundreds of thousands of rows built
/// in memory cost more in fresh pages than in formatting.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: File,
    committed: bool,
}

impl AtomicFile {
    /// Starts writing `path` (created under a temporary name).
    pub fn create(path: &Path) -> Result<AtomicFile> {
        let tmp = temp_name(path)?;
        let file = create_temp(path, &tmp)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            file,
            committed: false,
        })
    }

    /// The path the file will have once committed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the written file to its path (replacing any file there).
    pub fn commit(mut self) -> Result<PathBuf> {
        std::fs::rename(&self.tmp, &self.path).map_err(|e| Error::io(&self.path, e))?;
        self.committed = true;
        Ok(std::mem::take(&mut self.path))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// Writing through a shared reference, as `&File` does: a CSV writer that owns the file lends
/// it out for rows written by hand.
impl Write for &AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (&self.file).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        (&self.file).flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// The temporary name beside `path`: `.<name>.tmp<pid>`.
fn temp_name(path: &Path) -> Result<PathBuf> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::ResultFolder {
            path: path.to_path_buf(),
            message: "not a file name".to_string(),
        })?
        .to_string_lossy();
    Ok(dir.join(format!(".{name}{}", temp_suffix())))
}

/// The end of this process's temporary names: `.tmp-HOST-NS-PID`, the host, the PID
/// namespace (the inode of `/proc/self/ns/pid`, 0 where there is none) and the process id.
/// A process id alone names no process in a folder shared between hosts or containers:
/// only a temporary file of this host and namespace is ever taken for a dead process's.
pub(crate) fn temp_suffix() -> &'static str {
    static SUFFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SUFFIX.get_or_init(|| {
        let (host, namespace) = host_and_namespace();
        format!(".tmp-{host}-{namespace}-{}", std::process::id())
    })
}

/// This process's host name (letters, digits, `.` and `-` only; `_` for any other byte)
/// and PID namespace, as temporary names carry them ([`temp_suffix`]).
pub(crate) fn host_and_namespace() -> (String, u64) {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let host: String = host
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let host = if host.is_empty() { "_".into() } else { host };
    // `pid:[4026531836]`
    let namespace = std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .and_then(|l| {
            let l = l.to_string_lossy().into_owned();
            l.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
        })
        .unwrap_or(0);
    (host, namespace)
}

/// Creates the temporary file `tmp` of `path`: a new file, never opened through a link or
/// over a file (an old one of this name, a dead process's, is removed first). Errors name
/// `path`, the file the user knows, never the temporary name.
fn create_temp(path: &Path, tmp: &Path) -> Result<File> {
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(tmp)
    };
    let file = match create() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // Removing a link removes the link, not what it points at.
            let _ = std::fs::remove_file(tmp);
            create()
        }
        other => other,
    };
    file.map_err(|e| {
        let folder = tmp.parent().filter(|p| !p.as_os_str().is_empty());
        match folder {
            Some(folder) if e.kind() == std::io::ErrorKind::NotFound && !folder.exists() => {
                Error::io(
                    path,
                    std::io::Error::new(
                        e.kind(),
                        format!("its folder {} does not exist", folder.display()),
                    ),
                )
            }
            _ => Error::io(path, e),
        }
    })
}

/// Writes `bytes` to a temporary name beside `path` and returns that name.
fn write_temp(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let tmp = temp_name(path)?;
    let result = (|| {
        let mut file = create_temp(path, &tmp)?;
        file.write_all(bytes).map_err(|e| Error::io(path, e))
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_without_leftovers() {
        let dir = std::env::temp_dir().join(format!("jitterlab-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        // `create_atomic` writes a new file but never replaces one.
        let new = dir.join("b.toml");
        create_atomic(&new, b"one").unwrap();
        let again = create_atomic(&new, b"two").unwrap_err();
        assert!(
            matches!(&again, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists),
            "{again}"
        );
        assert_eq!(std::fs::read(&new).unwrap(), b"one");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["a.txt", "b.toml"], "no temporary file left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_written_in_pieces_appears_whole_on_commit_and_not_at_all_without() {
        let dir = std::env::temp_dir().join(format!("jitterlab-pieces-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let names = || {
            let mut n: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        let path = dir.join("c.csv");
        write_atomic(&path, b"old").unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"one,").unwrap();
        (&file).write_all(b"two").unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"old",
            "nothing shows before the commit"
        );
        assert_eq!(names().len(), 2, "the file and its temporary");
        assert_eq!(file.commit().unwrap(), path);
        assert_eq!(std::fs::read(&path).unwrap(), b"one,two");
        // Dropped without a commit (an error half-way): the old file stays, no leftover.
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"one,two");
        assert_eq!(names(), ["c.csv"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
