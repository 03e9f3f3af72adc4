//! The names real code needs to retry a call: `use jitterlab_retry::prelude::*;`.
//!
//! The builder ([`Retrier::builder`]), the error classification ([`Classify`], [`Outcome`]),
//! the clocks and what a call reports ([`AttemptEvent`], [`RetryError`], [`StopReason`]); with
//! the `async` feature (or `tokio`), the async executor's `AsyncRetrier` and `AsyncCall` too. Durations are
//! [`std::time::Duration`] throughout.

pub use crate::backoff::Jitter;
#[cfg(feature = "async")]
pub use crate::exec::asynchronous::{AsyncCall, AsyncRetrier};
pub use crate::exec::{
    AttemptCtx, AttemptEvent, CancelToken, Classify, Clock, Retrier, RetrierBuilder, RetryError,
    SystemClock, TimedOut, VirtualClock,
};
pub use crate::policy::{
    BreakerConfig, BudgetConfig, Decision, Idempotency, Outcome, RetryAfterMode, RetryOn,
    StopReason,
};
