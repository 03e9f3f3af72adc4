//! How an operation's error tells the retrier what happened: [`Classify`].
//!
//! Implement it for your own error type, or use one that has it already, so that a plain
//! closure needs no trait implementation of yours:
//!
//! - [`Outcome`] itself (a closure that says `Err(Outcome::Status(503))`);
//! - [`std::io::Error`]: timeouts are [`Outcome::Timeout`]; refused, reset, aborted or broken
//!   connections and the like are [`Outcome::Connection`]; errors about the request itself
//!   (not found, permission denied, invalid input or data, unsupported) are [`Outcome::Fatal`];
//!   any other kind is retried as a connection error;
//! - `Box<dyn Error + Send + Sync>` (what `?` makes of most errors): the first error of its
//!   source chain that the engine knows ([`TimedOut`], `std::io::Error`; with the `http`
//!   feature [`crate::http::Error`] and the `http` crate's own error, a request that cannot be
//!   built; with the `reqwest` and `ureq` features their errors, as [`crate::http::Error`]
//!   reads them, so `error_for_status()?` on a 404 is not retried) decides; an error it does
//!   not know is retried as a connection error, as most retry crates retry every error;
//! - [`crate::http::Error`] (the `http` feature), which reqwest's and ureq's errors convert
//!   into.
//!
//! [`TimedOut`] is the error of an attempt the async executor cut off at its time limit.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::time::Duration;

use crate::policy::Outcome;
use crate::time::Human;

/// How an operation's error tells the retrier what happened.
pub trait Classify {
    /// The attempt's outcome: normally an error status, a timeout or a connection error, or
    /// [`Outcome::Fatal`] for an error that must not be retried (an error that says
    /// [`Outcome::Success`] is returned as not retryable, but counted as a success: say
    /// `Fatal` instead).
    fn outcome(&self) -> Outcome;
    /// The raw `Retry-After` header value, if the answer had one.
    fn retry_after(&self) -> Option<&str> {
        None
    }
    /// The raw `x-amz-retry-after` header value (integer milliseconds), if the answer had
    /// one: read instead of `Retry-After` by a policy whose
    /// [`RetryAfterPolicy::header`](crate::policy::RetryAfterPolicy::header) is
    /// [`RetryAfterHeader::AmzMillis`](crate::policy::RetryAfterHeader::AmzMillis).
    fn retry_after_millis(&self) -> Option<&str> {
        None
    }
}

/// How an executor reads an operation's error `E`: through its [`Classify`] implementation
/// ([`ByClassify`], the default), or with a closure ([`RetryIf`], made by
/// [`Retrier::retry_if`](super::Retrier::retry_if) and
/// [`AsyncCall::retry_if`](super::asynchronous::AsyncCall::retry_if)).
pub trait Classifier<E> {
    /// The attempt's outcome.
    fn outcome(&self, error: &E) -> Outcome;
    /// The raw `Retry-After` header value, if the error carries one.
    fn retry_after<'e>(&self, error: &'e E) -> Option<&'e str> {
        let _ = error;
        None
    }
    /// The raw `x-amz-retry-after` header value, if the error carries one.
    fn retry_after_millis<'e>(&self, error: &'e E) -> Option<&'e str> {
        let _ = error;
        None
    }
}

/// The error classifies itself ([`Classify`]): the executors' default.
#[derive(Debug, Clone, Copy, Default)]
pub struct ByClassify;

impl<E: Classify> Classifier<E> for ByClassify {
    fn outcome(&self, error: &E) -> Outcome {
        error.outcome()
    }
    fn retry_after<'e>(&self, error: &'e E) -> Option<&'e str> {
        error.retry_after()
    }
    fn retry_after_millis<'e>(&self, error: &'e E) -> Option<&'e str> {
        error.retry_after_millis()
    }
}

/// A closure says whether an error is worth retrying, for any error type (`String`,
/// `anyhow::Error`, another crate's): `true` is [`Outcome::Transient`] (retried, and a
/// failure for the breaker and the budget), `false` is [`Outcome::Permanent`] (the call
/// stops; the breaker and the budget do not count it).
#[derive(Clone, Copy)]
pub struct RetryIf<P>(pub P);

impl<P> fmt::Debug for RetryIf<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RetryIf(..)")
    }
}

impl<E, P: Fn(&E) -> bool> Classifier<E> for RetryIf<P> {
    fn outcome(&self, error: &E) -> Outcome {
        if (self.0)(error) {
            Outcome::Transient
        } else {
            Outcome::Permanent
        }
    }
}

impl Classify for Outcome {
    fn outcome(&self) -> Outcome {
        *self
    }
}

impl Classify for io::Error {
    fn outcome(&self) -> Outcome {
        use io::ErrorKind::*;
        match self.kind() {
            TimedOut | WouldBlock => Outcome::Timeout,
            NotFound | PermissionDenied | InvalidInput | InvalidData | Unsupported
            | AlreadyExists | OutOfMemory => Outcome::Fatal,
            _ => Outcome::Connection,
        }
    }
}

impl Classify for Box<dyn StdError + Send + Sync> {
    /// The first error of the source chain the engine knows decides; else a connection error.
    fn outcome(&self) -> Outcome {
        known(&**self).map_or(Outcome::Connection, |k| k.outcome())
    }
    fn retry_after(&self) -> Option<&str> {
        match known(&**self)? {
            #[cfg(feature = "http")]
            Known::Http(e) => e.retry_after(),
            _ => None,
        }
    }
    fn retry_after_millis(&self) -> Option<&str> {
        match known(&**self)? {
            #[cfg(feature = "http")]
            Known::Http(e) => e.retry_after_millis(),
            _ => None,
        }
    }
}

/// An error of a type the engine can classify, found in a source chain.
enum Known<'a> {
    Outcome(Outcome),
    Io(&'a io::Error),
    #[cfg(feature = "http")]
    Http(&'a crate::http::Error),
}

impl Known<'_> {
    fn outcome(&self) -> Outcome {
        match self {
            Known::Outcome(outcome) => *outcome,
            Known::Io(e) => e.outcome(),
            #[cfg(feature = "http")]
            Known::Http(e) => e.outcome(),
        }
    }
}

/// The first error of `error`'s source chain that the engine knows: its own, std's, and with
/// their features the `http` crate's, reqwest's and ureq's.
fn known<'a>(error: &'a (dyn StdError + 'static)) -> Option<Known<'a>> {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.is::<TimedOut>() {
            return Some(Known::Outcome(Outcome::Timeout));
        }
        if let Some(io) = e.downcast_ref::<io::Error>() {
            return Some(Known::Io(io));
        }
        #[cfg(feature = "http")]
        if let Some(http) = e.downcast_ref::<crate::http::Error>() {
            return Some(Known::Http(http));
        }
        // The `http` crate's error is a request that cannot be built.
        #[cfg(feature = "http")]
        if e.is::<::http::Error>() {
            return Some(Known::Outcome(Outcome::Invalid));
        }
        #[cfg(feature = "reqwest")]
        if let Some(e) = e.downcast_ref::<::reqwest::Error>() {
            return Some(Known::Outcome(crate::http::reqwest::kind(e).outcome()));
        }
        #[cfg(feature = "ureq")]
        if let Some(e) = e.downcast_ref::<::ureq::Error>() {
            return Some(Known::Outcome(crate::http::ureq::kind(e).outcome()));
        }
        next = e.source();
    }
    None
}

/// The error of an attempt the async executor cut off at its timeout; it counts as
/// [`Outcome::Timeout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut {
    /// The attempt's time limit, which it reached.
    pub after: Duration,
}

impl fmt::Display for TimedOut {
    /// `attempt timed out after 1s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attempt timed out after {}", Human(self.after))
    }
}

impl StdError for TimedOut {}

impl Classify for TimedOut {
    fn outcome(&self) -> Outcome {
        Outcome::Timeout
    }
}

impl From<TimedOut> for Outcome {
    /// [`Outcome::Timeout`].
    fn from(_: TimedOut) -> Outcome {
        Outcome::Timeout
    }
}

impl From<TimedOut> for io::Error {
    /// An [`io::ErrorKind::TimedOut`] error whose source is the [`TimedOut`].
    fn from(e: TimedOut) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type BoxError = Box<dyn StdError + Send + Sync>;

    #[test]
    fn io_errors_say_what_they_are() {
        let of = |kind| io::Error::from(kind).outcome();
        assert_eq!(of(io::ErrorKind::TimedOut), Outcome::Timeout);
        assert_eq!(of(io::ErrorKind::ConnectionRefused), Outcome::Connection);
        assert_eq!(of(io::ErrorKind::ConnectionReset), Outcome::Connection);
        assert_eq!(of(io::ErrorKind::UnexpectedEof), Outcome::Connection);
        assert_eq!(of(io::ErrorKind::NotFound), Outcome::Fatal);
        assert_eq!(of(io::ErrorKind::InvalidData), Outcome::Fatal);
        let cut = io::Error::from(TimedOut {
            after: Duration::from_secs(1),
        });
        assert_eq!(cut.outcome(), Outcome::Timeout);
    }

    #[test]
    fn boxed_errors_are_read_through_their_chain() {
        #[derive(Debug)]
        struct Wrapper(io::Error);
        impl fmt::Display for Wrapper {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("fetching")
            }
        }
        impl StdError for Wrapper {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let boxed: BoxError = Box::new(Wrapper(io::ErrorKind::PermissionDenied.into()));
        assert_eq!(boxed.outcome(), Outcome::Fatal);
        let boxed: BoxError = TimedOut {
            after: Duration::from_millis(5),
        }
        .into();
        assert_eq!(boxed.outcome(), Outcome::Timeout);
        // The `http` crate's own error: a request that cannot be built.
        #[cfg(feature = "http")]
        {
            let e = ::http::Request::builder()
                .uri("exa mple")
                .body(())
                .unwrap_err();
            let boxed: BoxError = e.into();
            assert_eq!(boxed.outcome(), Outcome::Invalid);
        }
        let unknown: BoxError = "no idea".into();
        assert_eq!(unknown.outcome(), Outcome::Connection);
        assert_eq!(unknown.retry_after(), None);
    }
}
