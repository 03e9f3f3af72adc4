//! # jitterlab-retry
//!
//! Retries with exponential backoff and jitter, `Retry-After`, a deadline, retry budgets and a
//! circuit breaker, for async and blocking code. Any closure returning a `Result` is retried;
//! say which errors are worth it with a closure, any error type:
//!
//! ```
//! use jitterlab_retry::prelude::*;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let retrier = Retrier::builder().build()?;
//!     let mut busy = 2; // a server busy for two attempts
//!     let answer = retrier
//!         .retry_if(|e: &String| e.starts_with("busy"))
//!         .call(|_| if busy > 0 { busy -= 1; Err(format!("busy, {busy} left")) } else { Ok(42) })?;
//!     assert_eq!(answer, 42);
//!     Ok(())
//! }
//! ```
//!
//! The defaults are the ones real code wants: full jitter from 100 ms, at most 4 attempts
//! within 30 s, a retry budget shared by every call; the error `?` gives up with says why
//! (`attempts exhausted after 4 attempts`), the last attempt's error as its `source()`. With
//! `anyhow`, a closure chooses by the error's cause, and `?` takes the retrier's error into
//! `anyhow::Error`:
//!
//! ```
//! use jitterlab_retry::prelude::*;
//!
//! fn load(retrier: &Retrier) -> anyhow::Result<u32> {
//!     let mut locked = 2;
//!     let n = retrier
//!         .retry_if(|e: &anyhow::Error| e.is::<std::io::Error>()) // io errors only
//!         .call(|_| -> anyhow::Result<u32> {
//!             if locked > 0 {
//!                 locked -= 1;
//!                 Err(std::io::Error::other("file locked"))?;
//!             }
//!             Ok("7".parse::<u32>()?) // a parse error would not be retried
//!         })?;
//!     Ok(n)
//! }
//! # assert_eq!(load(&Retrier::builder().build().unwrap()).unwrap(), 7);
//! ```
//!
//! HTTP needs no closure at all: reqwest, ureq and `http` answers are classified for you
//! (the error status, `Retry-After`, a timeout, a refused connection). The
//! [jitterlab](https://crates.io/crates/jitterlab) simulator runs this same code, so a policy
//! chosen from its charts is the one that ships.
//!
//! - **Light**: three dependencies (`rand_core`, `rand_pcg`, `httpdate`), no proc-macro;
//!   tokio, the HTTP adapters, tracing and serde only when you ask.
//! - **Any error**: [`Retrier::retry_if`](exec::Retrier::retry_if) and
//!   [`AsyncCall::retry_if`](exec::asynchronous::AsyncCall::retry_if) take a closure; an
//!   error type of your own may implement [`Classify`](exec::Classify) instead, to report an
//!   HTTP status and a `Retry-After`.
//! - **Exact**: a retry that will not happen (breaker open, call cancelled, deadline) is not
//!   announced and costs no budget token; a sleep that would pass the deadline says so, or is
//!   shortened to fit one last attempt ([`RetrierBuilder::fit_last_attempt`](exec::RetrierBuilder::fit_last_attempt)).
//! - **Testable**: sleeps run on tokio's clock or a [`VirtualClock`](exec::VirtualClock), so a
//!   test of an hour of backoff takes milliseconds.
//! - **Observable**: every attempt is an event, one log line; the budget's tokens, the
//!   breaker's state and the call counts can be read at any time
//!   ([`Retrier::metrics`](exec::Retrier::metrics)).
//!
//! ## Async
//!
//! With the `reqwest` feature (which brings `tokio` and `http`): five attempts of at most 2 s
//! within 10 s, full jitter from 100 ms, `Retry-After` honoured, 429/500/502/503/504, timeouts
//! and refused connections retried, 404 not, a retry budget shared by every call, and any
//! future as the cancel signal. No error type of your own
//! (from `examples/reqwest_client.rs`, whose tests run it against a local server):
//!
//! ```no_run
//! # #[cfg(feature = "reqwest")]
//! # mod demo {
//! use std::error::Error;
//! use std::time::Duration;
//!
//! use jitterlab_retry::http::reqwest::send_text;
//! use jitterlab_retry::prelude::*;
//!
//! /// The retrier every call shares (its budget spans calls).
//! fn retrier() -> Result<AsyncRetrier, jitterlab_retry::Error> {
//!     Retrier::builder()
//!         .max_attempts(5)
//!         .timeout(Duration::from_secs(2))
//!         .deadline(Duration::from_secs(10))
//!         .build_async()
//! }
//!
//! /// GETs `url`'s body (read within each attempt) with retries, until `cancel` completes;
//! /// every attempt is logged.
//! async fn fetch(
//!     retrier: &AsyncRetrier,
//!     client: &reqwest::Client,
//!     url: &str,
//!     cancel: impl Future<Output = ()> + Send,
//! ) -> Result<String, Box<dyn Error + Send + Sync>> {
//!     let body = retrier
//!         .call(|_| send_text(client.get(url)))
//!         .cancel_on(cancel)
//!         .on_attempt(|event| eprintln!("{url}: {event}"))
//!         .await?;
//!     Ok(body)
//! }
//! # }
//! ```
//!
//! Each attempt's event is one log line (`attempt 1: 429 after 3.1ms, retry in 2s`), and so is
//! a stop before an attempt (`attempt 3: not sent, stop: circuit breaker open`); a call that
//! gives up returns a [`RetryError`](exec::RetryError) that says why
//! (`the next sleep would pass the deadline after 4 attempts`) with the last attempt's error
//! as its `source()`. Any operation works the same way: its error type implements
//! [`Classify`](exec::Classify), or is one that does already ([`Outcome`](policy::Outcome),
//! `std::io::Error`, `Box<dyn Error + Send + Sync>`, [`http::Error`]). The body is read
//! within the attempt ([`http::reqwest::send_text`]), so the attempt timeout cuts off an answer
//! that stalls half-way and the retrier tries again. See [`exec::asynchronous`] for the attempt
//! timeout, the concurrency limit and cancellation.
//!
//! ## Blocking
//!
//! [`Retrier`](exec::Retrier) runs the same policy around a blocking closure, sleeping on a
//! [`Clock`](exec::Clock): [`SystemClock`](exec::SystemClock) for real,
//! [`VirtualClock`](exec::VirtualClock) in tests, where this takes no time at all:
//!
//! ```
//! use std::time::Duration;
//! use jitterlab_retry::prelude::*;
//!
//! let retrier = Retrier::builder().deadline(Duration::from_secs(10)).seed(7).build()?;
//! let clock = VirtualClock::new();
//! let mut log = Vec::new();
//! let answer = retrier.retry(
//!     &clock,
//!     &CancelToken::new(),
//!     // Any closure returning a `Result`; here the server is down for two attempts.
//!     |ctx| if ctx.attempt < 3 { Err(Outcome::Status(503)) } else { Ok("hello") },
//!     |event| log.push(event.to_string()),
//! );
//! assert_eq!(answer.ok(), Some("hello"));
//! assert_eq!(log.len(), 3);
//! assert!(clock.now() < Duration::from_millis(300), "full jitter: at most 100 + 200 ms");
//! # Ok::<(), jitterlab_retry::Error>(())
//! ```
//!
//! With the `ureq` feature, [`http::ureq::call_text`] is the closure
//! (`examples/ureq_client.rs`):
//!
//! ```no_run
//! # #[cfg(feature = "ureq")]
//! # fn demo(retrier: &jitterlab_retry::exec::Retrier, agent: &ureq::Agent, url: &str) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
//! use jitterlab_retry::http::ureq::call_text;
//! use jitterlab_retry::prelude::*;
//!
//! let body = retrier.retry(
//!     &SystemClock::new(),
//!     &CancelToken::new(),
//!     |ctx| call_text(agent.get(url).config().timeout_global(ctx.timeout).build()),
//!     |event| eprintln!("{url}: {event}"),
//! )?;
//! Ok(body)
//! # }
//! ```
//!
//! ## The policy pieces
//!
//! [`Retrier::builder`](exec::Retrier::builder) sets them all with defaults for real code
//! (full jitter, base 100 ms, cap 10 s, 4 attempts, a 30 s deadline, the AWS SDK's token
//! bucket). Each piece is also usable alone, as a pure state machine with `now` passed in:
//!
//! | piece | what it decides |
//! | --- | --- |
//! | [`backoff::Backoff`], [`backoff::Jitter`] | the sleep before retry `k`: none, constant, exponential, full, equal, decorrelated (AWS), Polly's decorrelated v2, proportional (gRPC) |
//! | [`policy::RetryPolicy::decide`] | after an attempt: done, retry after this sleep, or stop and why |
//! | [`policy::RetryOn`], [`policy::Idempotency`] | which outcomes are retried (409, 429, 500, 502, 503, 504, timeouts, connection errors by default; any status opted in or out), and which requests may be |
//! | [`policy::RetryAfterPolicy`] | `Retry-After` ignored, honoured as a minimum, or spread over 1 to 1.5 times the hint |
//! | [`policy::Budget`] | retry budgets: token bucket (AWS), ratio (Finagle, Envoy), gRPC throttling, Brooker's adaptive bucket and retry breaker |
//! | [`policy::Breaker`] | a circuit breaker over a sliding window, with one half-open probe |
//! | [`policy::throttle::Throttle`], [`policy::ConcurrencyLimiter`] | Google SRE's client-side throttling; attempts in flight |
//!
//! Bad settings are refused with an error naming the field, never a panic:
//!
//! ```
//! use std::time::Duration;
//! use jitterlab_retry::prelude::*;
//!
//! let err = Retrier::builder().cap(Duration::from_millis(10)).build().unwrap_err();
//! assert_eq!(err.to_string(), "invalid value for `cap`: 10ms: a duration at least base (100ms)");
//! assert_eq!(err.field(), Some("cap"));
//! ```
//!
//! ## Time
//!
//! Every duration is a [`std::time::Duration`]; an instant is a `Duration` since the clock's
//! origin. Inside, the engine counts integer nanoseconds ([`time`]).
//!
//! ## Targets
//!
//! Any target with std and a clock: Linux, macOS, Windows, the BSDs, WASI. On
//! `wasm32-unknown-unknown` std has no clock: the policy pieces, the executors over a
//! [`VirtualClock`](exec::VirtualClock) or a [`Clock`](exec::Clock) or `Timer` of your own,
//! and the builder work, but seed the jitter yourself (`.seed(n)`, or every instance draws
//! the same sleeps), and [`SystemClock`](exec::SystemClock), `ThreadTimer`,
//! [`Retrier::call`](exec::Retrier::call) and `AsyncRetrier::with_timer` (which reads the
//! wall time) panic there, as std's `Instant::now` and `SystemTime::now` do.
//!
//! ## Features
//!
//! | feature | adds | dependencies |
//! | --- | --- | --- |
//! | (default) | backoff, policy, the blocking executor | `rand_core`, `rand_pcg`, `httpdate` (4 crates with this one) |
//! | `async` | [`exec::asynchronous::AsyncRetrier`] on any runtime's timer ([`exec::timer::Timer`]; [`exec::timer::ThreadTimer`] needs none), [`cancel::CancelToken::cancelled`]; a call is `Send` exactly when its operation is | none (its semaphore and notifier are its own) |
//! | `tokio` | `async` on tokio's timer: [`exec::tokio::TokioTimer`], the default, and `build_async`; you bring the runtime | `tokio` (`time` only) |
//! | `http` | [`http::Error`] and [`http::check`]: an `http::Response` as an outcome and a `Retry-After` | `http` |
//! | `reqwest` | [`http::reqwest::send_text`], `send_bytes`, `send_with`, `send`; `From<reqwest::Error>` (implies `http` and `tokio`) | `reqwest` 0.13 (no default features: yours choose TLS) |
//! | `ureq` | [`http::ureq::call_text`], `call_bytes`, `call_with`, `call`; `From<ureq::Error>` (implies `http`) | `ureq` 3 (no default features) |
//! | `tracing` | one span per call, one event per attempt (attempt, outcome, sleep, stop reason) | `tracing` |
//! | `serde` | `Serialize`/`Deserialize` for [`policy::RetryOnItem`] | `serde` |

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod backoff;
pub mod cancel;
mod draw;
pub mod error;
pub mod exec;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub mod param;
pub mod policy;
pub mod prelude;
pub mod presets;
pub mod time;

pub use error::{Error, Result};

/// The generator of the engine's unit tests.
#[cfg(test)]
pub(crate) fn test_rng(seed: u64) -> rand_pcg::Pcg64Mcg {
    <rand_pcg::Pcg64Mcg as rand_core::SeedableRng>::seed_from_u64(seed)
}

/// The README's Rust code, compiled by `cargo test --all-features` so that it can be copied as
/// it is (its examples need the `reqwest` and `ureq` features).
#[cfg(all(doctest, feature = "reqwest", feature = "ureq"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
