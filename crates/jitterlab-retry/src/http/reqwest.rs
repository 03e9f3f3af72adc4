//! reqwest, classified (the `reqwest` feature): send one request and read its answer, getting
//! the body or an [`Error`] the retrier knows how to retry.
//!
//! The retrier's attempt timeout cuts off the future the closure returns, and only that: read
//! the body inside it ([`send_text`], [`send_bytes`], [`send_with`] for JSON and the like), so
//! that an answer that stalls half-way is cut off at the attempt's time limit and retried like
//! any other timeout. [`send`] returns the response with its body unread: a body read after
//! the call returns is bounded by neither the deadline nor the attempt timeout (give the
//! client a timeout of its own then), and is not retried.
//!
//! The feature turns on no TLS or other reqwest feature: your own reqwest dependency chooses
//! them, and Cargo unifies the two.

use std::future::Future;

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
/// with the answer's `Retry-After`; reqwest's own errors as [`Error`]. The body is left
/// unread: prefer [`send_text`], [`send_bytes`] or [`send_with`], which read it within the
/// attempt (see the [module docs](self)).
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

/// Sends `request` once and reads the answer's body as text, within the attempt: what
/// [`send`] returns, then `Response::text`.
pub async fn send_text(request: reqwest::RequestBuilder) -> Result<String, Error> {
    send_with(request, reqwest::Response::text).await
}

/// Sends `request` once and reads the answer's body as bytes, within the attempt: what
/// [`send`] returns, then `Response::bytes`.
pub async fn send_bytes(request: reqwest::RequestBuilder) -> Result<bytes::Bytes, Error> {
    send_with(request, reqwest::Response::bytes).await
}

/// Sends `request` once and reads the answer with `read`, within the attempt: for example
/// `send_with(client.get(url), Response::json::<Order>)` with reqwest's `json` feature. An
/// error of `read` is classified as reqwest's errors are (a broken connection is retried, a
/// body that does not decode is not).
pub async fn send_with<T, R, Fut>(request: reqwest::RequestBuilder, read: R) -> Result<T, Error>
where
    R: FnOnce(reqwest::Response) -> Fut,
    Fut: Future<Output = Result<T, reqwest::Error>>,
{
    let response = send(request).await?;
    Ok(read(response).await?)
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
