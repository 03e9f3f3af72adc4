//! Retrying real HTTP calls: jitterlab's executor around `ureq`.
//!
//! `fetch` sends one GET with the attempt's time limit and turns what went wrong into a
//! `FetchError` that says how to retry ([`Classify`]): an error status with its `Retry-After`,
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
use std::fmt;
use std::time::{Duration, Instant};

use jitterlab::prelude::*;

#[path = "../tests/support/http_server.rs"]
mod http_server;

/// Why one GET failed.
#[derive(Debug)]
enum FetchError {
    /// The server answered with an error status.
    Status {
        code: u16,
        retry_after: Option<String>,
    },
    /// No answer within the attempt's time limit.
    Timeout,
    /// No connection, or it broke.
    Connection(ureq::Error),
    /// The answer came but its body is not text: not worth asking again.
    Body(ureq::Error),
}

impl Classify for FetchError {
    fn outcome(&self) -> Outcome {
        match self {
            FetchError::Status { code, .. } => Outcome::from_status(*code),
            FetchError::Timeout => Outcome::Timeout,
            FetchError::Connection(_) => Outcome::Connection,
            FetchError::Body(_) => Outcome::Fatal,
        }
    }
    fn retry_after(&self) -> Option<&str> {
        match self {
            FetchError::Status { retry_after, .. } => retry_after.as_deref(),
            _ => None,
        }
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Status { code, .. } => write!(f, "HTTP {code}"),
            FetchError::Timeout => f.write_str("timed out"),
            FetchError::Connection(_) => f.write_str("connection failed"),
            FetchError::Body(_) => f.write_str("unreadable body"),
        }
    }
}

impl Error for FetchError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            FetchError::Connection(e) | FetchError::Body(e) => Some(e),
            _ => None,
        }
    }
}

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
                FetchError::Connection(e)
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
            FetchError::Body(e)
        }
    })
}

/// The retrier's settings: the builder's defaults, with a 1 s attempt timeout and a 4 s
/// deadline. `build()` seeds the jitter from entropy; the tests fix the seed.
fn settings() -> RetrierBuilder {
    Retrier::builder()
        .max_attempts(6)
        .timeout(Duration::from_secs(1))
        .deadline(Duration::from_secs(4))
}

/// Every cause of an error, outermost first: `not retryable after 1 attempt: HTTP 404`.
fn chain(e: &dyn Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

// Under `cargo test` the harness has its own `main`.
#[cfg_attr(test, allow(dead_code))]
fn main() -> Result<(), Box<dyn Error>> {
    let urls: Vec<String> = match std::env::args().nth(1) {
        Some(url) => vec![url],
        None => {
            let base = http_server::start()?;
            ["/flaky", "/missing", "/garbled", "/slow"]
                .map(|path| format!("{base}{path}"))
                .to_vec()
        }
    };
    let retrier = settings().build()?;
    let agent = agent();
    for url in urls {
        println!("GET {url}");
        let began = Instant::now();
        let answer = retrier.retry(
            &SystemClock::new(),
            &CancelToken::new(),
            |ctx| fetch(&agent, &url, ctx),
            |event| println!("  {event}"),
        );
        let took = began.elapsed();
        match answer {
            Ok(body) => println!("  => {body:?} in {took:.2?}"),
            Err(e) => println!("  => {} in {took:.2?}", chain(&e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a test keeps of each attempt: its outcome, start, end and the sleep after it.
    type Seen = (Outcome, Duration, Duration, Option<Duration>);

    /// GETs `path` from a fresh local server with a seeded retrier; the attempts, the answer
    /// and the real time it took.
    fn get(path: &str) -> (Vec<Seen>, Result<String, RetryError<FetchError>>, Duration) {
        let url = format!("{}{path}", http_server::start().expect("a local port"));
        let (retrier, agent) = (settings().seed(7).build().expect("valid settings"), agent());
        let mut seen = Vec::new();
        let began = Instant::now();
        let answer = retrier.retry(
            &SystemClock::new(),
            &CancelToken::new(),
            |ctx| fetch(&agent, &url, ctx),
            |e| seen.push((e.outcome, e.start, e.end, e.sleep())),
        );
        (seen, answer, began.elapsed())
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn retry_after_twice_then_503_then_200() {
        let (seen, answer, took) = get("/flaky");
        assert_eq!(answer.ok().as_deref(), Some("hello"));
        let outcomes: Vec<Outcome> = seen.iter().map(|s| s.0).collect();
        let (s429, s503) = (Outcome::Status(429), Outcome::Status(503));
        assert_eq!(outcomes, [s429, s429, s503, Outcome::Success], "{seen:?}");
        let sleeps: Vec<Duration> = seen.iter().filter_map(|s| s.3).collect();
        // `Retry-After: 1` is longer than the first backoff (at most 100 ms): exactly 1 s.
        assert_eq!(sleeps[0], ms(1_000));
        // An HTTP-date 2 s ahead, in whole seconds: between 1 and 2 s from the answer.
        assert!((ms(1_000)..=ms(2_000)).contains(&sleeps[1]), "{sleeps:?}");
        // The 503 has no hint: the third backoff, at most 400 ms.
        assert!(sleeps[2] <= ms(400), "{sleeps:?}");
        // The sleeps really happened: each attempt starts at least its sleep after the last.
        for pair in seen.windows(2) {
            let (prev, next) = (&pair[0], &pair[1]);
            assert!(next.1 >= prev.2 + prev.3.unwrap_or_default(), "{seen:?}");
        }
        let slept: Duration = sleeps.iter().sum();
        assert!(
            took >= slept && took < slept + ms(500),
            "{took:?} for {slept:?} of sleep"
        );
    }

    #[test]
    fn a_404_is_not_retried() {
        let (seen, answer, took) = get("/missing");
        let e = answer.unwrap_err();
        assert_eq!(chain(&e), "not retryable after 1 attempt: HTTP 404");
        assert_eq!(seen.len(), 1);
        assert!(took < ms(500), "{took:?}");
    }

    #[test]
    fn an_unreadable_body_is_fatal() {
        let (seen, answer, _) = get("/garbled");
        let e = answer.unwrap_err();
        assert_eq!(e.attempts(), 1);
        assert_eq!(seen[0].0, Outcome::Fatal);
        // Each cause once: the retrier's verdict, the fetch error, ureq's own error.
        let text = chain(&e);
        assert!(
            text.starts_with("not retryable after 1 attempt: unreadable body: "),
            "{text}"
        );
        assert_eq!(text.matches("unreadable body").count(), 1, "{text}");
    }

    #[test]
    fn a_slow_endpoint_is_cut_by_the_deadline() {
        let (seen, answer, took) = get("/slow");
        assert!(
            matches!(
                answer,
                Err(RetryError::Stopped {
                    reason: StopReason::Deadline,
                    error: FetchError::Timeout,
                    ..
                })
            ),
            "{answer:?}"
        );
        assert!(seen.iter().all(|s| s.0 == Outcome::Timeout), "{seen:?}");
        // Every attempt but the last runs its full 1 s; the last only until the 4 s deadline.
        let (last, full) = seen.split_last().expect("attempts");
        for s in full {
            let ran = s.2 - s.1;
            assert!(ran >= ms(1_000) && ran < ms(1_300), "{seen:?}");
        }
        assert!(
            last.2 - last.1 < ms(1_000),
            "the deadline shortened it: {seen:?}"
        );
        assert!(last.2 >= ms(4_000) && last.2 < ms(4_300), "{seen:?}");
        // The server would have answered after 5 s: the call ended at the deadline.
        assert!(took >= ms(4_000) && took < ms(4_500), "{took:?}");
    }
}
