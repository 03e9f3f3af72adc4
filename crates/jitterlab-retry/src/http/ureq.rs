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

use super::{Error, check};

impl From<ureq::Error> for Error {
    /// A timeout is [`Error::Timeout`]; a failed or broken connection [`Error::Connection`]; a
    /// status turned into an error by ureq's `http_status_as_error` is [`Error::Status`]
    /// (without its headers: [`call`] keeps them); a request that cannot succeed as it is (a
    /// bad URL, a redirect loop, TLS refused) is [`Error::Fatal`].
    fn from(e: ureq::Error) -> Error {
        match e {
            ureq::Error::StatusCode(code) => match ::http::StatusCode::from_u16(code) {
                Ok(status) => Error::Status {
                    status,
                    retry_after: None,
                },
                Err(_) => Error::Fatal(e.into()),
            },
            ureq::Error::Timeout(_) => Error::Timeout(e.into()),
            ureq::Error::Io(ref io) if io.kind() == io::ErrorKind::TimedOut => {
                Error::Timeout(e.into())
            }
            ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Protocol(_)
            | ureq::Error::BodyStalled
            | ureq::Error::ConnectProxyFailed(_) => Error::Connection(e.into()),
            _ => Error::Fatal(e.into()),
        }
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
