//! # jitterlab
//!
//! Deterministic simulation and analysis of retry backoff. One backoff engine ([`backoff`],
//! with the retry policy around it in [`policy`]) is used three ways: inside a discrete-event
//! simulator ([`sim`]) where thousands to millions of clients hit a capacity-limited server on
//! a virtual clock; inside a small blocking retry executor ([`exec`]) that real code can call;
//! and inside criterion benchmarks. What you simulate is what you ship.
//!
//! Data flows one way: scenario file → [`scenario::Scenario`] → (points × strategies ×
//! replications) → [`sim::run`] → per-run results → CSV rows → charts and report.
//!
//! ```
//! use jitterlab::backoff::{Backoff, BackoffState, Jitter};
//! use jitterlab::time::SimDuration;
//!
//! // Full jitter, 50 ms base, doubling, capped at 2 s.
//! let policy = Backoff::new(Jitter::Full, SimDuration::from_millis(50), 2.0, SimDuration::from_secs(2))?;
//! let mut rng = jitterlab::rng::from_seed(7);
//! let mut state = BackoffState::new();
//! let first = policy.next_delay(&mut state, &mut rng);
//! assert!(first <= SimDuration::from_millis(50));
//! // Retry 10 000 with any multiplier is simply the cap, never an overflow.
//! assert_eq!(policy.nominal(10_000), SimDuration::from_secs(2));
//! # Ok::<(), jitterlab::Error>(())
//! ```

#![warn(missing_docs)]

pub mod atomic;
pub mod backoff;
pub mod cancel;
pub mod delays;
pub mod error;
pub mod exec;
pub mod metric;
pub mod output;
pub mod param;
pub mod policy;
pub mod recommend;
pub mod rng;
pub mod runner;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod sweep;
pub mod time;

pub use error::{Error, Result};
