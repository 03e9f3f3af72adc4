//! The engine's one error type, for what can go wrong before a call starts.
//!
//! Building a retrier fails only on a setting outside what is allowed ([`Error::InvalidValue`],
//! naming the setting). A clock's sleep fails only when cancelled ([`Error::Cancelled`]). What a
//! call itself returns when it gives up is a [`crate::exec::RetryError`], which keeps the last
//! attempt's own error.
//!
//! `Display` and `std::error::Error` are written by hand: the engine has no proc-macro
//! dependency.

use std::fmt;

use crate::param::{ParamError, ValueError};

/// Errors returned by the engine's constructors and clocks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A setting has a value outside what it allows; the [`ParamError`] names the field
    /// (`max_attempts`), the value and what is allowed.
    InvalidValue(ParamError),
    /// A sleep was cancelled through its [`crate::exec::CancelToken`].
    Cancelled,
}

impl Error {
    /// The setting's field name for an [`Error::InvalidValue`] (`"cap"`), else `None`.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::InvalidValue(e) => Some(&e.field),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidValue(e) => e.fmt(f),
            Error::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for Error {}

impl From<ParamError> for Error {
    fn from(e: ParamError) -> Error {
        Error::InvalidValue(e)
    }
}

impl From<ValueError> for Error {
    /// The only value errors without a field come from [`crate::policy::RetryOn`]'s
    /// builders, so `RetryOn::default().with_status(404)?` works in a function returning
    /// the engine's `Result`: the error names `retry_on`.
    fn from(e: ValueError) -> Error {
        Error::InvalidValue(e.of("retry_on"))
    }
}

/// `Result` with the engine's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_field() {
        let e = Error::from(ParamError::new(
            "cap",
            "10ms",
            "a duration at least base (50ms)",
        ));
        assert_eq!(e.field(), Some("cap"));
        assert_eq!(
            e.to_string(),
            "invalid value for `cap`: 10ms: a duration at least base (50ms)"
        );
        assert_eq!(Error::Cancelled.to_string(), "cancelled");
        assert_eq!(Error::Cancelled.field(), None);
        let e = Error::from(ValueError::new(250, "a status code"));
        assert_eq!(e.field(), Some("retry_on"));
    }
}
