//! Any backoff in the herd: a user-supplied delay source for a strategy, in place of its
//! built-in [`Backoff`](crate::backoff::Backoff).
//!
//! A [`DelaySource`] makes one [`ClientDelays`] per client, the per-client state of the
//! user's backoff (a peer crate's iterator, a hand-written schedule); the simulator asks it
//! for the sleep before each retry where it would have drawn from the built-in backoff, and
//! everything else (the retry policy's limits, Retry-After, budgets, breakers, the result
//! files) is the same. A strategy without a source runs the built-in kinds, which stay the
//! fast path: no allocation and no virtual call per client.
//!
//! ```
//! use jitterlab::sim::{ClientDelays, DelaySource, RetryAt};
//! use jitterlab::rng::SimRng;
//! use jitterlab::time::SimDuration;
//!
//! /// Sleep 100 ms, 200 ms, 300 ms...: a linear backoff, which jitterlab has no kind for.
//! #[derive(Debug)]
//! struct Linear;
//! struct LinearClient;
//!
//! impl DelaySource for Linear {
//!     fn client(&self, _client: u32, _seed: u64) -> Box<dyn ClientDelays> {
//!         Box::new(LinearClient)
//!     }
//!     fn describe(&self) -> String {
//!         "linear 100 ms steps (the example of jitterlab::sim::source)".into()
//!     }
//! }
//! impl ClientDelays for LinearClient {
//!     fn next_delay(&mut self, at: RetryAt, _rng: &mut SimRng) -> Option<SimDuration> {
//!         Some(SimDuration::from_millis(100 * at.retry as u64))
//!     }
//! }
//! let strategy = jitterlab::sim::Strategy::with_source("linear", std::sync::Arc::new(Linear));
//! assert_eq!(strategy.name, "linear");
//! ```

use std::fmt;

use crate::rng::SimRng;
use crate::time::{SimDuration, SimTime};

/// A backoff supplied by the user: it makes the per-client state. Shared by every run of a
/// sweep (and so by every thread): `Send + Sync`.
pub trait DelaySource: fmt::Debug + Send + Sync {
    /// The delays of client `client` (0-based, in the order the run creates clients), its
    /// state before its first request. `seed` is drawn for this client from a stream of its
    /// own (the client's jitter family, entity `(client, 1)`), for a backoff that seeds its
    /// own generator; the same scenario, seed and replication give the same `seed`.
    fn client(&self, client: u32, seed: u64) -> Box<dyn ClientDelays>;

    /// What this source is, with its crate and version and the configuration it runs (e.g.
    /// `backon 1.6.0 ExponentialBuilder::default()`): recorded in meta.json's `sources`, and
    /// part of the journal's fingerprint, so that `--resume` never mixes units run with
    /// different sources. Two sources that draw different delays must describe themselves
    /// differently.
    fn describe(&self) -> String;
}

/// One client's backoff state.
pub trait ClientDelays: Send {
    /// The sleep before retry `at.retry` of the current request (1: before the second
    /// attempt), or `None` when this backoff gives up (the request ends as a retry limit
    /// would end it, `gave_up_attempts`). `rng` is the client's own jitter stream, the one a
    /// built-in kind draws from.
    fn next_delay(&mut self, at: RetryAt, rng: &mut SimRng) -> Option<SimDuration>;

    /// A new request begins at `now`: back to its first retry. Nothing by default.
    fn reset(&mut self, now: SimTime) {
        let _ = now;
    }
}

/// Where a client is when it asks for its next sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryAt {
    /// The retry about to be slept for (1 = the first).
    pub retry: u32,
    /// The request's first send.
    pub start: SimTime,
    /// Now, on the virtual clock: when the failed attempt's outcome arrived.
    pub now: SimTime,
}

impl RetryAt {
    /// Retry `retry` of a request that began at `start`, asked at `now`.
    pub const fn new(retry: u32, start: SimTime, now: SimTime) -> RetryAt {
        RetryAt { retry, start, now }
    }
}
