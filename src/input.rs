//! Bounded reading: every file jitterlab reads goes through [`read`] or [`read_text`], which
//! refuse a file larger than the limit of its kind before reading it whole, and anything that
//! is not a regular file before opening it.
//!
//! A FIFO (named pipe) blocks its reader until a writer comes, and a device or a socket has no
//! end (`/dev/zero`) or no size: none is a file jitterlab wrote or a scenario, so each is
//! refused by its type, found before the file is opened ([`regular`]); the file is then opened
//! without blocking and its type checked again on the open file, so that one swapped in
//! between cannot block either. The size on disk is checked next, and the file is read
//! through a reader that stops one byte past the limit (a file that grows while it is read).
//! The limits, documented in docs/cli.md, are far above any file jitterlab writes for a sane
//! run and far below what would hurt a machine.

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
    what: crate::folder::names::META,
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
    what: crate::folder::names::JOURNAL_DESCRIBED,
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

/// What a file that is not a regular file is, for the refusal: `a FIFO (named pipe)`.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    if meta.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// The error for `path`, which is `meta`'s kind of file and not a regular file: an
/// [`Error::Io`] of kind `InvalidInput` whose cause is a [`NotRegular`] (each caller names the
/// file as its kind of input); bad input, exit code 2, wherever it is read.
fn not_regular(path: &Path, meta: &std::fs::Metadata) -> Error {
    Error::io(
        path,
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            NotRegular(format!(
                "is {}, not a regular file; jitterlab reads only regular files",
                kind_of(meta)
            )),
        ),
    )
}

/// The cause of the refusal of a file that is not a regular file ([`regular`]).
#[derive(Debug)]
pub struct NotRegular(String);

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotRegular {}

/// True when `e` is the refusal of a file that is not a regular file ([`regular`]).
pub fn is_not_regular(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|cause| cause.is::<NotRegular>())
}

/// Refuses `path` unless it is a regular file (a symbolic link to one is followed), by its
/// type, without opening it: a FIFO would block the open, a device never ends.
pub fn regular(path: &Path) -> Result<std::fs::Metadata> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_file() {
        Ok(meta)
    } else {
        Err(not_regular(path, &meta))
    }
}

/// Opens `path`, a regular file ([`regular`]), for reading: without blocking (a FIFO put in
/// its place since would otherwise block the open), and checked again once open.
pub fn open(path: &Path) -> Result<std::fs::File> {
    regular(path)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // No effect on a regular file.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    Ok(file)
}

/// The bytes of `path`, refused with [`Error::TooLarge`] when larger than `limit`, and with an
/// [`Error::Io`] of kind `InvalidInput` when it is not a regular file ([`regular`]).
pub fn read(path: &Path, limit: Limit) -> Result<Vec<u8>> {
    let file = open(path)?;
    // Refused before reading when the size is known.
    if let Ok(meta) = file.metadata()
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
        // Not a regular file: refused by its type, never opened (a FIFO blocks the open).
        let e = read(Path::new("/dev/zero"), SCENARIO).unwrap_err();
        assert!(
            e.to_string().contains("is a device, not a regular file"),
            "{e}"
        );
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo");
            // Made by a call, not by a `mkfifo` process: a child holds the parent's descriptors
            // until it execs, flocks included, which would race the lock tests of
            // `folder::stage`.
            let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path that lives through the call.
            if unsafe { libc::mkfifo(path.as_ptr(), 0o600) } == 0 {
                let e = read(&fifo, SCENARIO).unwrap_err();
                assert!(e.to_string().contains("is a FIFO (named pipe)"), "{e}");
                let e = open(&fifo).unwrap_err();
                assert!(e.to_string().contains("not a regular file"), "{e}");
            }
        }
        let e = read(&dir, SCENARIO).unwrap_err();
        assert!(e.to_string().contains("is a folder"), "{e}");
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
