//! ureq, classified (the `ureq` feature): [`call`] one blocking request, get the answer or an
//! [`Error`] the retrier knows how to retry.
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
/// blocking executor cannot cut a call off.
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
