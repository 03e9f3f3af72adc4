//! # jitterlab
//!
//! Deterministic simulation and analysis of retry backoff. One backoff engine ([`backoff`],
//! with the retry policy around it in [`policy`]) is used three ways: inside a discrete-event
//! simulator (`sim`) where thousands to millions of clients hit a capacity-limited server on
//! a virtual clock; inside a small blocking retry executor ([`exec`]) that real code can call;
//! and inside criterion benchmarks. What you simulate is what you ship.
//!
//! Data flows one way: scenario file → `scenario::Scenario` → (points × strategies ×
//! replications) → `sim::run` → per-run results → CSV rows → charts and report.
//!
//! ## Features
//!
//! The default features (`cli`, which implies `sim`) build the simulator, sweeps, output
//! files, charts and the `jitterlab` binary. With `default-features = false` the crate is the
//! engine alone — [`backoff`], [`policy`], [`exec`] and their small helpers ([`time`],
//! [`rng`], [`param`], [`cancel`], [`error`]) — depending only on `rand`, `rand_pcg`,
//! `httpdate` and `thiserror`:
//!
//! ```toml
//! [dependencies]
//! jitterlab = { version = "0.1", default-features = false }
//! ```
//!
//! Real code starts at the [`prelude`] and [`exec::Retrier::builder`].
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

// The engine: always built.
pub mod backoff;
pub mod cancel;
pub mod error;
pub mod exec;
pub mod param;
pub mod policy;
pub mod prelude;
pub mod rng;
pub mod time;

// The simulator and everything around it (feature `sim`).
#[cfg(feature = "sim")]
pub mod atomic;
#[cfg(feature = "sim")]
pub mod delays;
#[cfg(feature = "sim")]
pub mod input;
// `jitterlab live` (feature `live`): the scenario for real, on tokio and hyper.
#[cfg(feature = "live")]
pub mod live;
#[cfg(feature = "sim")]
pub mod metric;
#[cfg(feature = "sim")]
pub mod output;
#[cfg(feature = "sim")]
pub mod recommend;
#[cfg(feature = "sim")]
pub mod runner;
#[cfg(feature = "sim")]
pub mod scenario;
#[cfg(feature = "sim")]
pub mod sim;
#[cfg(feature = "sim")]
pub mod stats;
#[cfg(feature = "sim")]
pub mod sweep;
#[cfg(feature = "sim")]
pub mod text;

pub use error::{Error, Result};
