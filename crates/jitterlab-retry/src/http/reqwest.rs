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

use super::{Error, Kind, check};

impl From<reqwest::Error> for Error {
    /// A timeout is [`Error::Timeout`]; an error status (from `error_for_status`) is
    /// [`Error::Status`]; a request that could not be built or a redirect loop is
    /// [`Error::Invalid`]; a body that does not decode is [`Error::Fatal`]; a failed
    /// connection, or one that broke while the request or the answer was on its way, is
    /// [`Error::Connection`].
    fn from(e: reqwest::Error) -> Error {
        kind(&e).with(e)
    }
}

/// How a reqwest error is classified (also when boxed, see [`crate::exec::Classify`]).
pub(crate) fn kind(e: &reqwest::Error) -> Kind {
    if e.is_timeout() {
        Kind::Timeout
    } else if let Some(status) = e.status() {
        Kind::Status(status)
    } else if e.is_builder() || e.is_redirect() {
        Kind::Invalid
    } else if e.is_decode() {
        Kind::Fatal
    } else {
        Kind::Connection
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
        let headers = response.headers();
        return Err(Error::Status {
            status,
            retry_after: super::retry_after(headers).map(str::to_owned),
            retry_after_ms: super::retry_after_millis(headers).map(str::to_owned),
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

#[cfg(test)]
mod tests {
    use std::error::Error as StdError;

    use super::*;
    use crate::exec::Classify;
    use crate::policy::{BreakerConfig, Outcome};
    use crate::prelude::Retrier;

    type BoxError = Box<dyn StdError + Send + Sync>;

    fn answer(status: u16, body: &'static str) -> reqwest::Response {
        let mut answer = ::http::Response::new(body);
        *answer.status_mut() = ::http::StatusCode::from_u16(status).unwrap();
        reqwest::Response::from(answer)
    }

    #[tokio::test]
    async fn a_body_that_does_not_decode_is_fatal() {
        let e = answer(200, "not json").json::<u32>().await.unwrap_err();
        assert!(e.is_decode(), "{e:?}");
        let e = Error::from(e);
        assert!(matches!(e, Error::Fatal(_)), "{e:?}");
        assert_eq!(e.outcome(), Outcome::Fatal);
    }

    /// `error_for_status()?` in a plain closure: the boxed reqwest error says 404, which is not
    /// retried.
    #[tokio::test(start_paused = true)]
    async fn a_boxed_reqwest_error_is_classified() {
        let retrier = Retrier::builder().seed(1).build_async().unwrap();
        let mut attempts = 0;
        let result = retrier
            .call(|_| {
                attempts += 1;
                async {
                    answer(404, "").error_for_status()?;
                    Ok::<_, BoxError>(())
                }
            })
            .await;
        assert_eq!(attempts, 1, "{result:?}");
        let boxed: BoxError = answer(503, "").error_for_status().unwrap_err().into();
        assert_eq!(boxed.outcome(), Outcome::Status(503));
        let bad_url: BoxError = reqwest::Client::new()
            .get("http://exa mple/")
            .send()
            .await
            .unwrap_err()
            .into();
        assert_eq!(bad_url.outcome(), Outcome::Invalid);
    }

    /// A request that cannot be built says nothing about the server: it is not retried and
    /// does not count against the breaker.
    #[tokio::test(start_paused = true)]
    async fn a_bad_url_does_not_open_the_breaker() {
        let breaker = BreakerConfig {
            failure_ratio: 1.0,
            min_requests: 1,
            ..BreakerConfig::default()
        };
        let retrier = Retrier::builder()
            .breaker(breaker)
            .seed(1)
            .build_async()
            .unwrap();
        let client = reqwest::Client::new();
        for _ in 0..3 {
            let e = retrier
                .call(|_| send_text(client.get("http://exa mple/")))
                .await
                .unwrap_err();
            assert!(matches!(e.last_error(), Some(Error::Invalid(_))), "{e:?}");
            assert_eq!(e.attempts(), 1);
        }
        let ok = retrier.call(|_| async { Ok::<_, Outcome>(()) }).await;
        assert!(ok.is_ok(), "{ok:?}");
    }
}
