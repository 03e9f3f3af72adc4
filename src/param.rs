//! What the engine's constructors and parsers say about a bad value: which parameter, the
//! value, what is allowed — never where the value came from.
//!
//! [`crate::backoff`], [`crate::policy`], [`crate::time`] and the simulator's `sim::dist` know their
//! own parameters (`cap`, `window`, `mean`) but not how a user spelled them: a key in a
//! scenario file (`backoff.strategies[1].cap`, at line 7), a `--set`, a sweep point, a
//! command-line flag (`--cap`), or a field in the caller's own code. Whoever knows turns these
//! errors into a [`crate::Error`] naming that: the scenario checker, the binary.

use std::borrow::Cow;

/// A value outside what is allowed, without a name: a parser's answer (`"-1s"` is not a
/// duration). The caller names the key or flag it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value}: {allowed}")]
pub struct ValueError {
    /// The value as given (strings quoted).
    pub value: String,
    /// What is allowed instead.
    pub allowed: String,
}

impl ValueError {
    /// A value error.
    pub fn new(value: impl ToString, allowed: impl Into<String>) -> ValueError {
        ValueError {
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }

    /// The same error, about the parameter `field`.
    pub fn of(self, field: impl Into<Cow<'static, str>>) -> ParamError {
        ParamError {
            field: field.into(),
            value: self.value,
            allowed: self.allowed,
        }
    }
}

/// A constructor's parameter with a value outside what is allowed.
///
/// `field` is the parameter as the constructor's type names it (`"cap"` for
/// [`crate::backoff::BackoffParams::cap`]); scenario keys and command-line flags are named
/// after these fields, and their owners map one to the other. A rule between two parameters
/// (`cap` at least `base`) is reported on the later one, its text naming the other by field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value for `{field}`: {value}: {allowed}")]
pub struct ParamError {
    /// The parameter's field name; an element of a list parameter is named with its index
    /// (`rate[2]`).
    pub field: Cow<'static, str>,
    /// The value that was given.
    pub value: String,
    /// What is allowed instead.
    pub allowed: String,
}

impl ParamError {
    /// An error about `field`.
    pub fn new(
        field: impl Into<Cow<'static, str>>,
        value: impl ToString,
        allowed: impl Into<String>,
    ) -> Self {
        ValueError::new(value, allowed).of(field)
    }
}

impl From<ParamError> for ValueError {
    /// The value and what is allowed, for a caller that names the parameter its own way.
    fn from(e: ParamError) -> ValueError {
        ValueError {
            value: e.value,
            allowed: e.allowed,
        }
    }
}
