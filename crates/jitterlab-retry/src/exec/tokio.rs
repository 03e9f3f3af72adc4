//! The async executor on tokio's timer (the `tokio` feature): [`TokioTimer`] (whose home is
//! [`super::timer`]), the default timer of [`AsyncRetrier`], [`RetrierBuilder::build_async`] and [`AsyncRetrier::new`]; the
//! executor itself is [`super::asynchronous`] (re-exported here).
//!
//! Sleeps are `tokio::time::sleep` and time is `tokio::time::Instant`, so a test under
//! `tokio::time::pause` (`#[tokio::test(start_paused = true)]`) runs hours of backoff in
//! milliseconds. The retrier brings no runtime: call it from any tokio runtime with the time
//! driver on.
//!
//! ```
//! use std::time::Duration;
//! use jitterlab_retry::prelude::*;
//!
//! /// What a real client's error might look like: no `From<TimedOut>` needed.
//! #[derive(Debug)]
//! struct Status {
//!     code: u16,
//!     retry_after: Option<String>,
//! }
//! impl Classify for Status {
//!     fn outcome(&self) -> Outcome {
//!         Outcome::from_status(self.code)
//!     }
//!     fn retry_after(&self) -> Option<&str> {
//!         self.retry_after.as_deref()
//!     }
//! }
//!
//! // Paused time: sleeps advance tokio's clock at once.
//! let runtime = tokio::runtime::Builder::new_current_thread()
//!     .enable_time()
//!     .start_paused(true)
//!     .build()?;
//! runtime.block_on(async {
//!     let retrier = Retrier::builder().seed(42).build_async()?;
//!     let began = tokio::time::Instant::now();
//!     let mut log = Vec::new();
//!     let body = retrier
//!         .call(|ctx| async move {
//!             match ctx.attempt {
//!                 1 | 2 => Err(Status { code: 429, retry_after: Some("2".into()) }),
//!                 _ => Ok("hello"),
//!             }
//!         })
//!         .on_attempt(|event| log.push(event.to_string()))
//!         .await;
//!     assert_eq!(body.ok(), Some("hello"));
//!     assert_eq!(log[0], "attempt 1: 429 after 0ns, retry in 2s");
//!     // Twice the 2 s the server asked for, in no real time.
//!     assert_eq!(began.elapsed(), Duration::from_secs(4));
//!     Ok::<(), jitterlab_retry::Error>(())
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use super::TimedOut;
pub use super::asynchronous::{AsyncCall, AsyncRetrier, CallFuture, NoCancel, NoObserver};
pub use super::timer::{ThreadTimer, Timer, TokioTimer};
use super::{Retrier, RetrierBuilder};
use crate::error::Result;

impl RetrierBuilder {
    /// The retrier for async code on tokio's timer ([`AsyncRetrier`]), or the first setting
    /// not allowed.
    pub fn build_async(&self) -> Result<AsyncRetrier> {
        self.build_async_on(TokioTimer::new())
    }
}

impl AsyncRetrier<TokioTimer> {
    /// Runs `retrier`'s policy, budget and breaker for async operations on tokio's timer,
    /// with no concurrency limit. Its time starts now (tokio's clock, paused or not).
    pub fn new(retrier: Retrier) -> AsyncRetrier {
        AsyncRetrier::with_timer(retrier, TokioTimer::new())
    }
}

impl From<Retrier> for AsyncRetrier {
    fn from(retrier: Retrier) -> Self {
        AsyncRetrier::new(retrier)
    }
}
