//! What the two HTTP examples share (`examples/http_retry.rs` with ureq, blocking;
//! `examples/async_http_retry.rs` with hyper, async): the error one GET ends with and how it is
//! retried, the retrier's settings, the error chain, and the checks their tests make of the
//! retries against `http_server.rs`. Each example has only its client's code.

use std::error::Error;
use std::fmt;
use std::time::Duration;

use jitterlab::prelude::*;

/// A cause kept as the client gave it (ureq's or hyper's error, a UTF-8 error).
pub type Cause = Box<dyn Error + Send + Sync>;

/// Why one GET failed.
#[derive(Debug)]
pub enum FetchError {
    /// The server answered with an error status.
    Status {
        code: u16,
        retry_after: Option<String>,
    },
    /// No answer within the attempt's time limit.
    Timeout,
    /// No connection, or it broke before the whole answer came.
    Connection(Cause),
    /// The answer came but its body is not text: not worth asking again.
    Body(Cause),
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
            FetchError::Connection(e) | FetchError::Body(e) => Some(&**e),
            _ => None,
        }
    }
}

/// The retrier's settings: the builder's defaults, with a 1 s attempt timeout and a 4 s
/// deadline. Building seeds the jitter from entropy; the tests fix the seed.
pub fn settings() -> RetrierBuilder {
    Retrier::builder()
        .max_attempts(6)
        .timeout(Duration::from_secs(1))
        .deadline(Duration::from_secs(4))
}

/// The URLs to GET: the one on the command line, or four paths of a local demo server.
pub fn urls() -> std::io::Result<Vec<String>> {
    Ok(match std::env::args().nth(1) {
        Some(url) => vec![url],
        None => {
            let base = super::http_server::start()?;
            ["/flaky", "/missing", "/garbled", "/slow"]
                .map(|path| format!("{base}{path}"))
                .to_vec()
        }
    })
}

/// Prints how a call ended and how long it took: `=> "hello" in 2.31s`.
pub fn print_answer(answer: Result<String, RetryError<FetchError>>, took: Duration) {
    match answer {
        Ok(body) => println!("  => {body:?} in {took:.2?}"),
        Err(e) => println!("  => {} in {took:.2?}", chain(&e)),
    }
}

/// Every cause of an error, outermost first: `not retryable after 1 attempt: HTTP 404`.
pub fn chain(e: &dyn Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// The examples' tests: one check per path of `http_server.rs`, given what a GET of it saw.
#[cfg(test)]
pub mod checks {
    use super::*;

    /// What a test keeps of each attempt: its outcome, start, end and the sleep after it.
    pub type Seen = (Outcome, Duration, Duration, Option<Duration>);

    /// What a GET of one path saw: its attempts, its answer and the real time it took.
    pub type Got = (Vec<Seen>, Result<String, RetryError<FetchError>>, Duration);

    /// The part of `e` a test keeps.
    pub fn seen<E>(e: &AttemptEvent<'_, E>) -> Seen {
        (e.outcome, e.start, e.end, e.sleep())
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// `/flaky`: 429 with `Retry-After: 1`, 429 with an HTTP-date, 503, then 200 `hello`.
    pub fn retry_after_twice_then_503_then_200((seen, answer, took): Got) {
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

    /// `/missing`: a 404, tried once.
    pub fn a_404_is_not_retried((seen, answer, took): Got) {
        let e = answer.unwrap_err();
        assert_eq!(chain(&e), "not retryable after 1 attempt: HTTP 404");
        assert_eq!(seen.len(), 1);
        assert!(took < ms(500), "{took:?}");
    }

    /// `/garbled`: a body that is not UTF-8 is fatal.
    pub fn an_unreadable_body_is_fatal((seen, answer, _): Got) {
        let e = answer.unwrap_err();
        assert_eq!(e.attempts(), 1);
        assert_eq!(seen[0].0, Outcome::Fatal);
        // Each cause once: the retrier's verdict, the fetch error, the client's own error.
        let text = chain(&e);
        assert!(
            text.starts_with("not retryable after 1 attempt: unreadable body: "),
            "{text}"
        );
        assert_eq!(text.matches("unreadable body").count(), 1, "{text}");
    }

    /// `/slow` (5 s): every attempt times out, the 4 s deadline ends the call.
    pub fn a_slow_endpoint_is_cut_by_the_deadline((seen, answer, took): Got) {
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
