//! HTTP answers as retry outcomes (the `http` feature): no error type of your own needed.
//!
//! [`Error`] is what one HTTP attempt ends with, classified for the retrier: an error status
//! with its `Retry-After` header, a timeout, a connection that failed, an answer that cannot be
//! used ([`Outcome::Fatal`]: a body that does not decode), or a request that cannot succeed as
//! it is ([`Outcome::Invalid`]: a bad URL, a redirect loop; not counted against the server by
//! the breaker). [`check`] turns an
//! `http` [`Response`] with a 4xx or 5xx status into that error; [`outcome`] and
//! [`retry_after`] are the two readings it makes.
//!
//! With the `reqwest` feature, [`reqwest::send_text`] sends a `reqwest::RequestBuilder`,
//! checks the answer and reads its body, all within the attempt (so the attempt timeout covers
//! the body too); with `ureq`, [`ureq::call_text`] does the same for a blocking ureq request.
//! Both classify their client's own errors (`From<reqwest::Error>`, `From<ureq::Error>`), so a
//! closure passed to the retrier is one line:
//!
//! ```no_run
//! # #[cfg(feature = "reqwest")]
//! # async fn demo(client: reqwest::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use jitterlab_retry::http::reqwest::send_text;
//! use jitterlab_retry::prelude::*;
//!
//! let retrier = Retrier::builder().build_async()?;
//! let body = retrier.call(|_| send_text(client.get("http://127.0.0.1:8080/"))).await?;
//! println!("{body}");
//! # Ok(())
//! # }
//! ```

use std::error::Error as StdError;
use std::fmt;

use http::{HeaderMap, Response, StatusCode, header::RETRY_AFTER};

use crate::exec::Classify;
use crate::exec::TimedOut;
use crate::policy::Outcome;

#[cfg(feature = "reqwest")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub mod reqwest;
#[cfg(feature = "ureq")]
#[cfg_attr(docsrs, doc(cfg(feature = "ureq")))]
pub mod ureq;

/// A cause kept as the HTTP client gave it.
pub type Cause = Box<dyn StdError + Send + Sync>;

/// Why one HTTP attempt failed, as the retrier needs to know it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error status (4xx or 5xx).
    Status {
        /// The status.
        status: StatusCode,
        /// The raw `Retry-After` header, if the answer had one.
        retry_after: Option<String>,
        /// The raw `x-amz-retry-after` header (milliseconds), if the answer had one.
        retry_after_ms: Option<String>,
    },
    /// No answer within the attempt's time limit.
    Timeout(Cause),
    /// No connection, or it broke before the whole answer came.
    Connection(Cause),
    /// The answer cannot be used (a body that does not decode, TLS refused): never retried,
    /// and a failure for the breaker and the budget ([`Outcome::Fatal`]).
    Fatal(Cause),
    /// The request cannot succeed as it is, whatever the server's state (a bad URL, a request
    /// that cannot be built, a redirect loop): never retried, and not counted by the breaker
    /// or the budget ([`Outcome::Invalid`]).
    Invalid(Cause),
}

impl Error {
    /// The error of an answer with status 400 or above, else `None`.
    pub fn from_response<B>(response: &Response<B>) -> Option<Error> {
        let status = response.status();
        (status.is_client_error() || status.is_server_error()).then(|| Error::Status {
            status,
            retry_after: retry_after(response.headers()).map(str::to_owned),
            retry_after_ms: retry_after_millis(response.headers()).map(str::to_owned),
        })
    }

    /// The status, for an [`Error::Status`].
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// The answer itself when its status is below 400, else its [`Error::Status`].
pub fn check<B>(response: Response<B>) -> Result<Response<B>, Error> {
    match Error::from_response(&response) {
        Some(error) => Err(error),
        None => Ok(response),
    }
}

/// The outcome of an answer with `status`: 1xx to 3xx are a success, the rest an error status
/// (retried or not as the policy's `retry_on` says: by default 409, 429, 502, 503, 504).
pub fn outcome(status: StatusCode) -> Outcome {
    Outcome::from_status(status.as_u16())
}

/// The raw `Retry-After` header (seconds or an HTTP-date; the retrier parses it), if present
/// and text.
pub fn retry_after(headers: &HeaderMap) -> Option<&str> {
    headers.get(RETRY_AFTER)?.to_str().ok()
}

/// The raw `x-amz-retry-after` header (integer milliseconds; the AWS SDKs' hint), if present
/// and text.
pub fn retry_after_millis(headers: &HeaderMap) -> Option<&str> {
    headers.get("x-amz-retry-after")?.to_str().ok()
}

impl Classify for Error {
    fn outcome(&self) -> Outcome {
        match self {
            Error::Status { status, .. } => outcome(*status),
            Error::Timeout(_) => Outcome::Timeout,
            Error::Connection(_) => Outcome::Connection,
            Error::Fatal(_) => Outcome::Fatal,
            Error::Invalid(_) => Outcome::Invalid,
        }
    }
    fn retry_after(&self) -> Option<&str> {
        match self {
            Error::Status { retry_after, .. } => retry_after.as_deref(),
            _ => None,
        }
    }
    fn retry_after_millis(&self) -> Option<&str> {
        match self {
            Error::Status { retry_after_ms, .. } => retry_after_ms.as_deref(),
            _ => None,
        }
    }
}

/// How an HTTP client's error is classified, read from a reference (so that the same reading
/// serves `From` and a boxed error's [`Classify`]).
#[cfg(any(feature = "reqwest", feature = "ureq"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Status(StatusCode),
    Timeout,
    Connection,
    Fatal,
    Invalid,
}

#[cfg(any(feature = "reqwest", feature = "ureq"))]
impl Kind {
    /// The error of this kind, with `cause` (not kept for a status, which says it all).
    pub(crate) fn with(self, cause: impl Into<Cause>) -> Error {
        match self {
            Kind::Status(status) => Error::Status {
                status,
                retry_after: None,
                retry_after_ms: None,
            },
            Kind::Timeout => Error::Timeout(cause.into()),
            Kind::Connection => Error::Connection(cause.into()),
            Kind::Fatal => Error::Fatal(cause.into()),
            Kind::Invalid => Error::Invalid(cause.into()),
        }
    }

    pub(crate) fn outcome(self) -> Outcome {
        match self {
            Kind::Status(status) => outcome(status),
            Kind::Timeout => Outcome::Timeout,
            Kind::Connection => Outcome::Connection,
            Kind::Fatal => Outcome::Fatal,
            Kind::Invalid => Outcome::Invalid,
        }
    }
}

impl From<TimedOut> for Error {
    /// The executor cut the attempt off at its time limit.
    fn from(e: TimedOut) -> Error {
        Error::Timeout(Box::new(e))
    }
}

impl fmt::Display for Error {
    /// `HTTP 503 Service Unavailable`, `timed out`, `connection failed`, `request failed`,
    /// `invalid request`: the cause is the error's `source()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Status { status, .. } => write!(f, "HTTP {status}"),
            Error::Timeout(_) => f.write_str("timed out"),
            Error::Connection(_) => f.write_str("connection failed"),
            Error::Fatal(_) => f.write_str("request failed"),
            Error::Invalid(_) => f.write_str("invalid request"),
        }
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Error::Status { .. } => None,
            Error::Timeout(e) | Error::Connection(e) | Error::Fatal(e) | Error::Invalid(e) => {
                Some(&**e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, retry_after: Option<&str>) -> Response<()> {
        let mut builder = Response::builder().status(status);
        if let Some(value) = retry_after {
            builder = builder.header(RETRY_AFTER, value);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn error_statuses_become_errors_with_their_hint() {
        assert!(check(answer(200, None)).is_ok());
        assert!(check(answer(304, Some("5"))).is_ok());
        let e = check(answer(503, Some("7"))).unwrap_err();
        assert_eq!(e.outcome(), Outcome::Status(503));
        assert_eq!(Classify::retry_after(&e), Some("7"));
        assert_eq!(e.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
        assert_eq!(e.to_string(), "HTTP 503 Service Unavailable");
        let e = check(answer(404, None)).unwrap_err();
        assert_eq!(e.outcome(), Outcome::Status(404));
        assert_eq!(Classify::retry_after(&e), None);
        let timed_out = Error::from(TimedOut {
            after: std::time::Duration::from_secs(1),
        });
        assert_eq!(timed_out.outcome(), Outcome::Timeout);
        assert_eq!(
            timed_out.source().map(ToString::to_string).as_deref(),
            Some("attempt timed out after 1s")
        );
    }
}
