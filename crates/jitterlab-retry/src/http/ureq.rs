//! ureq, classified (the `ureq` feature): call one blocking request and read its answer,
//! getting the body or an [`Error`] the retrier knows how to retry.
//!
//! Give the request the attempt's time limit ([`crate::exec::AttemptCtx::timeout`], as ureq's
//! `timeout_global`, which runs until the body is read), and read the body inside the retried
//! closure ([`call_text`], [`call_bytes`], [`call_with`]): an answer that stalls half-way then
//! times out within the attempt and is retried. [`call`] returns the answer with its body
//! unread: an error while reading it after the call returns is not retried.
//!
//! The feature turns on no TLS or other ureq feature: your own ureq dependency chooses them.

use std::io;

use super::{Error, Kind, check};

impl From<ureq::Error> for Error {
    /// A timeout is [`Error::Timeout`]; a failed or broken connection [`Error::Connection`]; a
    /// status turned into an error by ureq's `http_status_as_error` is [`Error::Status`]
    /// (without its headers: [`call`] keeps them); a request that cannot succeed as it is (a
    /// bad URL, a redirect loop, HTTPS required) is [`Error::Invalid`]; an answer that cannot
    /// be used (too large, TLS refused, a body that does not decode) is [`Error::Fatal`].
    fn from(e: ureq::Error) -> Error {
        kind(&e).with(e)
    }
}

/// How a ureq error is classified (also when boxed, see [`crate::exec::Classify`]).
pub(crate) fn kind(e: &ureq::Error) -> Kind {
    use ureq::Error as U;
    match e {
        U::StatusCode(code) => {
            ::http::StatusCode::from_u16(*code).map_or(Kind::Fatal, Kind::Status)
        }
        U::Timeout(_) => Kind::Timeout,
        U::Io(io) if io.kind() == io::ErrorKind::TimedOut => Kind::Timeout,
        U::Io(_)
        | U::ConnectionFailed
        | U::HostNotFound
        | U::Protocol(_)
        | U::BodyStalled
        | U::ConnectProxyFailed(_) => Kind::Connection,
        U::Http(_)
        | U::BadUri(_)
        | U::InvalidProxyUrl
        | U::RequireHttpsOnly(_)
        | U::TlsRequired
        | U::TooManyRedirects
        | U::RedirectFailed => Kind::Invalid,
        _ => Kind::Fatal,
    }
}

/// Calls `request` once (a GET, HEAD, DELETE...): the answer when its status is below 400,
/// else an [`Error::Status`] with the answer's `Retry-After`; ureq's own errors as [`Error`].
/// Set the request's timeout from the attempt's ([`crate::exec::AttemptCtx::timeout`]): a
/// blocking executor cannot cut a call off. The body is left unread: prefer [`call_text`],
/// [`call_bytes`] or [`call_with`], which read it within the attempt.
pub fn call(
    request: ureq::RequestBuilder<ureq::typestate::WithoutBody>,
) -> Result<::http::Response<ureq::Body>, Error> {
    let response = request
        .config()
        .http_status_as_error(false)
        .build()
        .call()?;
    check(response)
}

/// Calls `request` once and reads the answer's body as text (up to ureq's default limit of
/// 10 MB), within the attempt: what [`call`] returns, then `Body::read_to_string`.
pub fn call_text(
    request: ureq::RequestBuilder<ureq::typestate::WithoutBody>,
) -> Result<String, Error> {
    call_with(request, |mut answer| answer.body_mut().read_to_string())
}

/// Calls `request` once and reads the answer's body as bytes (up to ureq's default limit of
/// 10 MB), within the attempt: what [`call`] returns, then `Body::read_to_vec`.
pub fn call_bytes(
    request: ureq::RequestBuilder<ureq::typestate::WithoutBody>,
) -> Result<Vec<u8>, Error> {
    call_with(request, |mut answer| answer.body_mut().read_to_vec())
}

/// Calls `request` once and reads the answer with `read`, within the attempt (for example
/// `|mut answer| answer.body_mut().read_json::<Order>()` with ureq's `json` feature). An error
/// of `read` is classified as ureq's errors are.
pub fn call_with<T, R>(
    request: ureq::RequestBuilder<ureq::typestate::WithoutBody>,
    read: R,
) -> Result<T, Error>
where
    R: FnOnce(::http::Response<ureq::Body>) -> Result<T, ureq::Error>,
{
    Ok(read(call(request)?)?)
}

#[cfg(test)]
mod tests {
    use std::error::Error as StdError;

    use super::*;
    use crate::exec::Classify;
    use crate::policy::Outcome;

    type BoxError = Box<dyn StdError + Send + Sync>;

    #[test]
    fn ureq_errors_are_classified_boxed_or_not() {
        let cases = [
            (ureq::Error::StatusCode(404), Outcome::Status(404)),
            (ureq::Error::ConnectionFailed, Outcome::Connection),
            (ureq::Error::BadUri("exa mple".into()), Outcome::Invalid),
            (ureq::Error::TooManyRedirects, Outcome::Invalid),
            (ureq::Error::BodyExceedsLimit(10), Outcome::Fatal),
        ];
        for (e, outcome) in cases {
            let text = e.to_string();
            let boxed: BoxError = Box::new(e);
            assert_eq!(boxed.outcome(), outcome, "boxed {text}");
            let e = *boxed.downcast::<ureq::Error>().unwrap();
            assert_eq!(Error::from(e).outcome(), outcome, "{text}");
        }
    }
}
