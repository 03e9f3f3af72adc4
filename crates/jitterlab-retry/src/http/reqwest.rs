//! reqwest, classified (the `reqwest` feature): [`send`] one request, get the answer or an
//! [`Error`] the retrier knows how to retry.
//!
//! The feature turns on no TLS or other reqwest feature: your own reqwest dependency chooses
//! them, and Cargo unifies the two.

use super::{Error, check};

impl From<reqwest::Error> for Error {
    /// A timeout is [`Error::Timeout`]; a failed connection, or one that broke while the
    /// request or the answer was on its way, is [`Error::Connection`]; an error status (from
    /// `error_for_status`) is [`Error::Status`]; a request that could not be built or a
    /// redirect loop is [`Error::Fatal`].
    fn from(e: reqwest::Error) -> Error {
        if e.is_timeout() {
            Error::Timeout(e.into())
        } else if let Some(status) = e.status() {
            Error::Status {
                status,
                retry_after: None,
            }
        } else if e.is_builder() || e.is_redirect() {
            Error::Fatal(e.into())
        } else {
            Error::Connection(e.into())
        }
    }
}

/// Sends `request` once: the answer when its status is below 400, else an [`Error::Status`]
/// with the answer's `Retry-After`; reqwest's own errors as [`Error`]. The retrier's attempt
/// timeout cuts it off (dropping it closes the connection), so the request needs no timeout
/// of its own.
pub async fn send(request: reqwest::RequestBuilder) -> Result<reqwest::Response, Error> {
    let response = request.send().await?;
    let status = response.status();
    if status.is_client_error() || status.is_server_error() {
        let retry_after = response
            .headers()
            .get(::http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        return Err(Error::Status {
            status,
            retry_after,
        });
    }
    Ok(response)
}

/// [`check`] for a reqwest answer already received (for a caller that sends it itself).
pub fn check_response(response: reqwest::Response) -> Result<reqwest::Response, Error> {
    let status = response.status();
    if status.is_client_error() || status.is_server_error() {
        let mut answer = ::http::Response::new(());
        *answer.status_mut() = status;
        *answer.headers_mut() = response.headers().clone();
        return check(answer).map(|_| response);
    }
    Ok(response)
}
