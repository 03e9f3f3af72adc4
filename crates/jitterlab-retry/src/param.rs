//! What the engine's constructors and parsers say about a bad value: which parameter, the
//! value, what is allowed — never where the value came from.
//!
//! [`crate::backoff`] and [`crate::policy`] know their own parameters (`cap`, `window`) but not
//! how a user spelled them: a field in the caller's own code, a key in a configuration file, a
//! command-line flag. Whoever knows turns these errors into a message naming that (jitterlab's
//! scenario checker names the scenario key and its line). `Display` is written by hand.

use std::borrow::Cow;
use std::fmt;

/// A value outside what is allowed, without a name: a parser's answer (`"-1s"` is not a
/// duration). The caller names the key or flag it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
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

impl fmt::Display for ValueError {
    /// `"-1s": a non-negative number with a unit`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.value, self.allowed)
    }
}

impl std::error::Error for ValueError {}

impl fmt::Display for ParamError {
    /// ``invalid value for `cap`: 10ms: a duration at least base (50ms)``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid value for `{}`: {}: {}",
            self.field, self.value, self.allowed
        )
    }
}

impl std::error::Error for ParamError {}
