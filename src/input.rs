//! Bounded reading: every file jitterlab reads goes through [`read`] or [`read_text`], which
//! refuse a file larger than the limit of its kind before reading it whole.
//!
//! The size on disk is checked first; then the file is read through a reader that stops one
//! byte past the limit, because a device or a pipe (`/dev/zero`, `/dev/stdin`) has no size
//! on disk and would otherwise be read until memory runs out. The limits, documented in
//! docs/cli.md, are far above any file jitterlab writes for a sane run and far below what
//! would hurt a machine.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// The largest file of one kind that jitterlab reads, and the kind's name for errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The largest size read, in bytes.
    pub bytes: u64,
    /// What the file is, for the error (`a scenario file`).
    pub what: &'static str,
}

const MIB: u64 = 1 << 20;

/// A scenario file (TOML): 1 MiB, a thousand times the largest built-in.
pub const SCENARIO: Limit = Limit {
    bytes: MIB,
    what: "a scenario file",
};

/// `meta.json` of a result folder: 1 MiB.
pub const META: Limit = Limit {
    bytes: MIB,
    what: "meta.json",
};

/// A CSV file of a result folder (`summary.csv`, `timeseries.csv`, ...): 1 GiB.
pub const RESULT_CSV: Limit = Limit {
    bytes: 1024 * MIB,
    what: "a result CSV file",
};

/// A file of samples for `dist = "empirical"`: 256 MiB (ten million samples of twenty
/// characters).
pub const SAMPLES: Limit = Limit {
    bytes: 256 * MIB,
    what: "a file of samples",
};

/// The journal of a run (`units.jsonl`): 1 GiB.
pub const JOURNAL: Limit = Limit {
    bytes: 1024 * MIB,
    what: "a journal (units.jsonl)",
};

impl Limit {
    /// `1 MiB`, `1 GiB`, or bytes.
    pub fn size_text(&self) -> String {
        match self.bytes {
            b if b >= 1024 * MIB && b.is_multiple_of(1024 * MIB) => {
                format!("{} GiB", b / (1024 * MIB))
            }
            b if b >= MIB && b.is_multiple_of(MIB) => format!("{} MiB", b / MIB),
            b => format!("{b} bytes"),
        }
    }

    fn refuse(&self, path: &Path) -> Error {
        Error::TooLarge {
            path: path.to_path_buf(),
            limit: self.size_text(),
            what: self.what,
        }
    }
}

/// The bytes of `path`, refused with [`Error::TooLarge`] when larger than `limit`.
pub fn read(path: &Path, limit: Limit) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    // Refused before reading when the size is known; a device reports 0.
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && meta.len() > limit.bytes
    {
        return Err(limit.refuse(path));
    }
    let mut bytes = Vec::new();
    file.take(limit.bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit.bytes {
        return Err(limit.refuse(path));
    }
    Ok(bytes)
}

/// The text of `path` (UTF-8), refused with [`Error::TooLarge`] when larger than `limit`.
pub fn read_text(path: &Path, limit: Limit) -> Result<String> {
    String::from_utf8(read(path, limit)?).map_err(|e| {
        Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: Limit = Limit {
        bytes: 4,
        what: "a test file",
    };

    #[test]
    fn files_above_the_limit_are_refused_and_devices_are_cut_short() {
        let dir = std::env::temp_dir().join(format!("jitterlab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (fits, over) = (dir.join("fits"), dir.join("over"));
        std::fs::write(&fits, "1234").unwrap();
        std::fs::write(&over, "12345").unwrap();
        assert_eq!(read_text(&fits, TINY).unwrap(), "1234");
        let e = read(&over, TINY).unwrap_err();
        assert!(
            matches!(e, Error::TooLarge { .. }) && e.is_user_error(),
            "{e}"
        );
        assert!(e.to_string().contains("larger than 4 bytes"), "{e}");
        // No size on disk: the reader stops one byte past the limit.
        let e = read(Path::new("/dev/zero"), SCENARIO).unwrap_err();
        assert!(
            e.to_string()
                .contains("1 MiB, the limit for a scenario file"),
            "{e}"
        );
        std::fs::write(&fits, [0xff, 0xfe]).unwrap();
        assert!(
            read_text(&fits, TINY)
                .unwrap_err()
                .to_string()
                .contains("not UTF-8")
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(RESULT_CSV.size_text(), "1 GiB");
    }
}
