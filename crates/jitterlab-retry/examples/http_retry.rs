//! Retrying real HTTP calls: jitterlab's executor around `ureq`.
//!
//! `fetch` sends one GET with the attempt's time limit and turns what went wrong into a
//! `FetchError` (in `tests/support/http_fetch.rs`, shared with the async example
//! `async_http_retry`) that says how to retry ([`Classify`]): an error status with its `Retry-After`,
//! a timeout, a connection error, or a body that cannot be read (fatal: asking again will not
//! help). The retrier does the rest: backoff with jitter, `Retry-After` (seconds or an
//! HTTP-date), per-attempt timeouts shortened by the deadline, the budget.
//!
//! ```sh
//! cargo run --example http_retry                          # against a local demo server
//! cargo run --example http_retry -- http://127.0.0.1:8080/path
//! ```
//!
//! Its tests (`cargo test --release --example http_retry`) start the local server of
//! `tests/support/http_server.rs` and check the retries' timings.

use std::error::Error;
use std::time::Instant;

use jitterlab::prelude::*;

#[path = "../tests/support/http_server.rs"]
mod http_server;

#[path = "../tests/support/http_fetch.rs"]
mod http_fetch;
use http_fetch::{FetchError, print_answer, settings, urls};

/// An agent that returns error statuses as answers, so their headers can be read.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// One GET of `url`, limited to the attempt's timeout.
fn fetch(agent: &ureq::Agent, url: &str, ctx: AttemptCtx) -> Result<String, FetchError> {
    let timed_out = |e: &ureq::Error| match e {
        ureq::Error::Timeout(_) => true,
        ureq::Error::Io(io) => io.kind() == std::io::ErrorKind::TimedOut,
        _ => false,
    };
    let mut answer = agent
        .get(url)
        .config()
        .timeout_global(ctx.timeout)
        .build()
        .call()
        .map_err(|e| {
            if timed_out(&e) {
                FetchError::Timeout
            } else {
                FetchError::Connection(e.into())
            }
        })?;
    let code = answer.status().as_u16();
    if code >= 400 {
        let retry_after = answer.headers().get("retry-after");
        return Err(FetchError::Status {
            code,
            retry_after: retry_after.and_then(|v| v.to_str().ok()).map(str::to_owned),
        });
    }
    answer.body_mut().read_to_string().map_err(|e| {
        if timed_out(&e) {
            FetchError::Timeout
        } else {
            FetchError::Body(e.into())
        }
    })
}

// Under `cargo test` the harness has its own `main`.
#[cfg_attr(test, allow(dead_code))]
fn main() -> Result<(), Box<dyn Error>> {
    let retrier = settings().build()?;
    let agent = agent();
    for url in urls()? {
        println!("GET {url}");
        let began = Instant::now();
        let answer = retrier.retry(
            &SystemClock::new(),
            &CancelToken::new(),
            |ctx| fetch(&agent, &url, ctx),
            |event| println!("  {event}"),
        );
        print_answer(answer, began.elapsed());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_fetch::checks::{self, Got, seen};

    /// GETs `path` from a fresh local server with a seeded retrier.
    fn get(path: &str) -> Got {
        let url = format!("{}{path}", http_server::start().expect("a local port"));
        let (retrier, agent) = (settings().seed(7).build().expect("valid settings"), agent());
        let mut events = Vec::new();
        let began = Instant::now();
        let answer = retrier.retry(
            &SystemClock::new(),
            &CancelToken::new(),
            |ctx| fetch(&agent, &url, ctx),
            |e| events.push(seen(e)),
        );
        (events, answer, began.elapsed())
    }

    #[test]
    fn retry_after_twice_then_503_then_200() {
        checks::retry_after_twice_then_503_then_200(get("/flaky"));
    }

    #[test]
    fn a_404_is_not_retried() {
        checks::a_404_is_not_retried(get("/missing"));
    }

    #[test]
    fn an_unreadable_body_is_fatal() {
        checks::an_unreadable_body_is_fatal(get("/garbled"));
    }

    #[test]
    fn a_slow_endpoint_is_cut_by_the_deadline() {
        checks::a_slow_endpoint_is_cut_by_the_deadline(get("/slow"));
    }
}
