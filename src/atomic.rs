//! Atomic file writes: a temporary name in the same folder, then a rename, so that a crash or
//! a reader never sees half a file. Every file jitterlab writes goes through here: the journal
//! of a sweep as well as the result files, charts and report.

use std::io::Write;
use std::path::Path;

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

/// Writes `bytes` to a temporary name beside `path` and returns that name.
fn write_temp(path: &Path, bytes: &[u8]) -> Result<std::path::PathBuf> {
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
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        file.write_all(bytes).map_err(|e| Error::io(&tmp, e))
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
}
