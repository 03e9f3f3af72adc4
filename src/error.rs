//! The library's one error type.
//!
//! Every variant that comes from user input names the offending key (for example
//! `backoff.cap`), the value that was given, and what is allowed, so that the binary can
//! print it as is and exit with code 2. [`Error::is_user_error`] tells the two families apart.
//!
//! Every message is complete: the variants with a cause (`Io`, `Csv`) write its message after
//! the path, so print an error alone; walking `source()` as well would repeat the cause.
//!
//! The variants about scenarios, arguments, result folders and charts exist with the `sim`
//! feature only. The engine (`jitterlab-retry`, re-exported as [`crate::backoff`],
//! [`crate::policy`], [`crate::exec`]) has its own small error type, which converts into
//! `InvalidValue` and `Cancelled` here.
//!
//! The engine's constructors answer with the smaller [`ParamError`] and [`ValueError`], which
//! name a parameter but not a key; `From<ParamError>` names the bare field (`cap`), and
//! [`Error::for_key`] names whatever key or flag the caller knows the value by.
//!
//! A message that asks for another option of a call (`RunOptions::force`, to go ahead
//! anyway) names it as a [`Setting`], by its field: the library knows its own fields, not the
//! flags of a command line. A front end with names of its own for them renders the message
//! with [`Error::naming`]; the CLI's are its flags (`--force`).

#[cfg(feature = "sim")]
use std::fmt;
use std::path::PathBuf;

use crate::param::{ParamError, ValueError};

/// Errors returned by jitterlab.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter has a value outside its allowed range or of the wrong form.
    #[error("invalid value for `{key}`: {value}: {allowed}")]
    InvalidValue {
        /// The parameter as the user knows it: a scenario key (`backoff.cap`), a flag
        /// (`--cap`), or a constructor's field (`cap`).
        key: String,
        /// The value that was given, as the user wrote it.
        value: String,
        /// What is allowed instead.
        allowed: String,
    },
    #[cfg(feature = "sim")]
    /// A scenario is not valid: it could not be read as TOML, does not fit the schema, or has
    /// a value outside what its key allows.
    #[error("{origin}{}: {message}", position.map_or(String::new(), |p| format!(":{p}")))]
    Scenario {
        /// Where the value came from: the file (or `<built-in ...>`), or the `--set KEY=VALUE`.
        origin: String,
        /// Where in the file, when the value was written there.
        position: Option<Position>,
        /// What is wrong, naming the key as the user wrote it (`backoff.strategies[1].cap`).
        message: String,
    },
    #[cfg(feature = "sim")]
    /// A command-line argument is malformed (for example `--shard 3/2`).
    #[error("invalid argument `{arg}`: {message}")]
    Usage {
        /// The argument as given.
        arg: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    #[cfg(feature = "sim")]
    /// A result folder does not hold what a command needs (for example `merge` or `plot`).
    #[error("{path}: {message}")]
    ResultFolder {
        /// The folder or file.
        path: PathBuf,
        /// What is missing or inconsistent.
        message: String,
    },
    /// The retry executor was cancelled through its [`crate::exec::CancelToken`].
    #[error("cancelled")]
    Cancelled,
    /// The operating system gave no entropy to seed a [`crate::exec::Retrier`]'s jitter. No
    /// longer produced (the engine seeds its jitter through std's `RandomState`); kept so that
    /// code matching on it still compiles.
    #[error("no entropy from the operating system to seed the jitter: {0}")]
    Entropy(String),
    /// An error of the retry engine that no other variant says (its `Display` is the
    /// engine's).
    #[error(transparent)]
    Engine(jitterlab_retry::Error),
    #[cfg(feature = "sim")]
    /// The run was interrupted (Ctrl-C); finished work units are kept for `--resume`.
    #[error(
        "interrupted; finished work is kept, continue with {}",
        Setting::Resume
    )]
    Interrupted,
    #[cfg(feature = "sim")]
    /// Drawing the charts of a result folder was interrupted (Ctrl-C) before they were written:
    /// the results are complete; `jitterlab plot` draws the charts.
    #[error(
        "interrupted while drawing the charts; the results in {} are complete: draw the charts with `jitterlab plot {}`",
        .0.display(), .0.display()
    )]
    ChartsInterrupted(PathBuf),
    /// An I/O error on a named file.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    #[cfg(feature = "sim")]
    /// A CSV file could not be written or read.
    #[error("{path}: {source}")]
    Csv {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: csv::Error,
    },
    #[cfg(feature = "sim")]
    /// A check of the simulator's own bookkeeping failed: a bug in jitterlab, not bad input.
    #[error("internal error in {run}: {message}; this is a bug in jitterlab, please report it")]
    Internal {
        /// The run it happened in (point, strategy, replication).
        run: String,
        /// What the check found.
        message: String,
    },
    #[cfg(feature = "sim")]
    /// Running would take more work (events, memory) than the limits allow; `--force` goes
    /// ahead anyway.
    #[error("{message}")]
    TooMuchWork {
        /// What would be too large, and what to lower.
        message: String,
    },
    #[cfg(feature = "sim")]
    /// A file is larger than jitterlab reads for its kind ([`crate::input`]).
    #[error("{path}: larger than {limit}, the limit for {what}; is this the right file?")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit, as text (`1 MiB`).
        limit: String,
        /// What the file was read as (`a scenario file`).
        what: &'static str,
    },
    #[cfg(feature = "sim")]
    /// A chart could not be drawn.
    #[error("drawing {path}: {message}")]
    Plot {
        /// The chart file.
        path: PathBuf,
        /// The drawing back end's message.
        message: String,
    },
}

impl Error {
    /// Builds an [`Error::InvalidValue`].
    pub fn invalid(
        key: impl Into<String>,
        value: impl ToString,
        allowed: impl Into<String>,
    ) -> Self {
        Error::InvalidValue {
            key: key.into(),
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }

    /// An [`Error::InvalidValue`] for `key`, from the engine's answer about a value it could
    /// not name (a [`ValueError`], or a [`ParamError`] named by its caller's own key).
    pub fn for_key(key: impl Into<String>, e: impl Into<ValueError>) -> Self {
        let e = e.into();
        Error::invalid(key, e.value, e.allowed)
    }

    /// Builds an [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The message with every [`Setting`] it names called `name(setting)` instead of its
    /// field: the CLI's flags (`--threads` for `RunOptions::threads`).
    #[cfg(feature = "sim")]
    pub fn naming(&self, name: impl Fn(Setting) -> &'static str) -> String {
        Setting::ALL.iter().fold(self.to_string(), |text, &s| {
            text.replace(s.field(), name(s))
        })
    }

    /// True when the error comes from bad input (exit code 2), false otherwise (exit code 1).
    pub fn is_user_error(&self) -> bool {
        match self {
            Error::InvalidValue { .. } => true,
            #[cfg(feature = "sim")]
            Error::Scenario { .. }
            | Error::Usage { .. }
            | Error::ResultFolder { .. }
            | Error::TooMuchWork { .. }
            | Error::TooLarge { .. } => true,
            // A FIFO, a device or a folder given where a file is read ([`crate::input`]).
            #[cfg(feature = "sim")]
            Error::Io { source, .. } => crate::input::is_not_regular(source),
            _ => false,
        }
    }
}

impl From<jitterlab_retry::Error> for Error {
    /// The engine's error as the variant that says the same.
    fn from(e: jitterlab_retry::Error) -> Error {
        match e {
            jitterlab_retry::Error::InvalidValue(e) => e.into(),
            jitterlab_retry::Error::Cancelled => Error::Cancelled,
            // The engine's error is non-exhaustive: a later variant is kept as it is.
            other => Error::Engine(other),
        }
    }
}

impl From<ParamError> for Error {
    /// Names the parameter by its field (`cap`), for callers of the engine's constructors.
    fn from(e: ParamError) -> Error {
        Error::for_key(e.field.to_string(), e)
    }
}

#[cfg(feature = "sim")]
/// An option of a library call that an error's message asks for or refuses, named by its
/// field ([`Setting::field`]); [`Error::naming`] names it otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// Resuming an interrupted run as the same share: [`crate::runner::run`] with
    /// `RunOptions::resume` and the `shard` it was run with.
    ResumeRun,
    /// The result folder (`RunOptions::out`, `LiveOptions::out`, `merge`'s `out`).
    Out,
    /// Worker threads (`RunOptions::threads`).
    Threads,
    /// The share of the units (`RunOptions::shard`).
    Shard,
    /// Continuing an interrupted run (`RunOptions::resume`).
    Resume,
    /// Going ahead over the work limits and beside foreign files (`RunOptions::force`,
    /// `LiveOptions::force`, `merge`'s `force`).
    Force,
    /// The chart file of the jitter picture ([`crate::output::plot::draw_delays_new`]'s
    /// `path`).
    DelaysPlot,
    /// Replacing an existing chart file: [`crate::output::plot::draw_delays`] rather than
    /// `draw_delays_new`.
    ReplacePlot,
}

#[cfg(feature = "sim")]
impl Setting {
    /// Every setting; one whose field holds another's comes first.
    pub const ALL: [Setting; 8] = [
        Setting::ResumeRun,
        Setting::Out,
        Setting::Threads,
        Setting::Shard,
        Setting::Resume,
        Setting::Force,
        Setting::DelaysPlot,
        Setting::ReplacePlot,
    ];

    /// The setting as the library's messages name it: by its field, qualified so that no
    /// other words of a message read the same.
    pub fn field(self) -> &'static str {
        match self {
            Setting::ResumeRun => "`runner::run` with RunOptions::resume",
            Setting::Out => "RunOptions::out",
            Setting::Threads => "RunOptions::threads",
            Setting::Shard => "RunOptions::shard",
            Setting::Resume => "RunOptions::resume",
            Setting::Force => "RunOptions::force",
            Setting::DelaysPlot => "plot::draw_delays_new",
            Setting::ReplacePlot => "plot::draw_delays",
        }
    }
}

#[cfg(feature = "sim")]
impl fmt::Display for Setting {
    /// [`Setting::field`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field())
    }
}

#[cfg(feature = "sim")]
/// A place in a text file: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

#[cfg(feature = "sim")]
impl fmt::Display for Position {
    /// `line:column`, as compilers print it after a file name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// `Result` with jitterlab's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's errors become the variants that say the same, never another's words.
    #[test]
    fn engine_errors_keep_their_meaning() {
        let cancelled = Error::from(jitterlab_retry::Error::Cancelled);
        assert!(matches!(cancelled, Error::Cancelled));
        let invalid = Error::from(jitterlab_retry::Error::from(ParamError::new(
            "cap",
            "10ms",
            "a duration at least base (50ms)",
        )));
        assert_eq!(
            invalid.to_string(),
            "invalid value for `cap`: 10ms: a duration at least base (50ms)"
        );
        assert!(invalid.is_user_error());
        let kept = Error::Engine(jitterlab_retry::Error::Cancelled);
        assert_eq!(kept.to_string(), "cancelled");
        assert!(!kept.is_user_error());
    }
}
