//! Retrying real HTTP calls in async code: jitterlab's async executor around hyper's client.
//!
//! The async twin of `examples/http_retry.rs`: `fetch` sends one GET with hyper 1 (the
//! `hyper-util` pooled client) and turns what went wrong into a `FetchError` that says how to
//! retry ([`Classify`]; shared with the blocking example, in `tests/support/http_fetch.rs`). The [`AsyncRetrier`] does the rest on tokio's clock: backoff with
//! jitter, `Retry-After` (seconds or an HTTP-date), the per-attempt timeout (it cuts a slow
//! attempt off and hands `fetch`'s caller `FetchError::from(TimedOut)`), the deadline, the
//! budget, and at most 8 requests in flight across all calls.
//!
//! ```sh
//! cargo run --example async_http_retry                     # against a local demo server
//! cargo run --example async_http_retry -- http://127.0.0.1:8080/path
//! ```
//!
//! Its tests (`cargo test --release --example async_http_retry`) start the local server of
//! `tests/support/http_server.rs` and check the retries' timings, as the blocking example's do.

use std::error::Error;
use std::time::Instant;

use http_body_util::{BodyExt, Empty};
use hyper::Uri;
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use jitterlab::prelude::*;

#[path = "../tests/support/http_server.rs"]
mod http_server;

#[path = "../tests/support/http_fetch.rs"]
mod http_fetch;
use http_fetch::{FetchError, print_answer, settings, urls};

/// Plain HTTP/1.1 (no TLS stack for a local server), bodiless requests.
type HttpClient = Client<HttpConnector, Empty<Bytes>>;

/// What the retrier hands on for an attempt it cut off at its time limit.
impl From<TimedOut> for FetchError {
    fn from(_: TimedOut) -> Self {
        FetchError::Timeout
    }
}

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// One GET of `uri`. No timeout here: the retrier cuts the attempt off at its time limit
/// (dropping the future closes the connection).
async fn fetch(client: &HttpClient, uri: &Uri) -> Result<String, FetchError> {
    let answer = client
        .get(uri.clone())
        .await
        .map_err(|e| FetchError::Connection(e.into()))?;
    let code = answer.status().as_u16();
    if code >= 400 {
        let retry_after = answer.headers().get(hyper::header::RETRY_AFTER);
        return Err(FetchError::Status {
            code,
            retry_after: retry_after.and_then(|v| v.to_str().ok()).map(str::to_owned),
        });
    }
    let body = answer
        .into_body()
        .collect()
        .await
        .map_err(|e| FetchError::Connection(e.into()))?
        .to_bytes();
    String::from_utf8(body.to_vec()).map_err(|e| FetchError::Body(e.into()))
}

/// The async retrier: `settings`, and at most 8 requests in flight across all its calls.
fn retrier(settings: RetrierBuilder) -> Result<AsyncRetrier, jitterlab::Error> {
    settings.build_async()?.with_concurrency_limit(8)
}

// Under `cargo test` the harness has its own `main`.
#[cfg_attr(test, allow(dead_code))]
#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let retrier = retrier(settings())?;
    let client = client();
    for url in urls()? {
        println!("GET {url}");
        let uri: Uri = url.parse()?;
        let began = Instant::now();
        let answer = retrier
            .retry(
                &CancelToken::new(),
                |_| fetch(&client, &uri),
                |event| println!("  {event}"),
            )
            .await;
        print_answer(answer, began.elapsed());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_fetch::checks::{self, Got, seen};

    /// GETs `path` from a fresh local server with a seeded retrier.
    async fn get(path: &str) -> Got {
        let base = http_server::start().expect("a local port");
        let uri: Uri = format!("{base}{path}").parse().expect("a URI");
        let retrier = retrier(settings().seed(7)).expect("valid settings");
        let client = client();
        let mut events = Vec::new();
        let began = Instant::now();
        let answer = retrier
            .retry(
                &CancelToken::new(),
                |_| fetch(&client, &uri),
                |e| events.push(seen(e)),
            )
            .await;
        (events, answer, began.elapsed())
    }

    #[tokio::test]
    async fn retry_after_twice_then_503_then_200() {
        checks::retry_after_twice_then_503_then_200(get("/flaky").await);
    }

    #[tokio::test]
    async fn a_404_is_not_retried() {
        checks::a_404_is_not_retried(get("/missing").await);
    }

    #[tokio::test]
    async fn an_unreadable_body_is_fatal() {
        checks::an_unreadable_body_is_fatal(get("/garbled").await);
    }

    /// The retrier cuts each attempt off at its time limit: `fetch` has no timeout of its own.
    #[tokio::test]
    async fn a_slow_endpoint_is_cut_off_and_stopped_by_the_deadline() {
        checks::a_slow_endpoint_is_cut_by_the_deadline(get("/slow").await);
    }
}
