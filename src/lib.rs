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
//! ## The engine
//!
//! The retry engine is its own crate, `jitterlab-retry` (`crates/jitterlab-retry`): a program
//! that only retries depends on it, not on this one. Its modules are re-exported here under
//! the paths they always had ([`backoff`], [`policy`], [`exec`], [`cancel`], [`param`],
//! [`prelude`]); the simulator's own time ([`time`]), streams ([`rng`]) and errors
//! ([`error`]) live here. Engine durations are [`std::time::Duration`];
//! [`time::SimDuration`] converts exactly:
//!
//! ```
//! use jitterlab::backoff::{Backoff, BackoffState, Jitter};
//! use jitterlab::time::SimDuration;
//!
//! // Full jitter, 50 ms base, doubling, capped at 2 s.
//! let base = SimDuration::from_millis(50).to_std();
//! let policy = Backoff::new(Jitter::Full, base, 2.0, SimDuration::from_secs(2).to_std())?;
//! let mut rng = jitterlab::rng::from_seed(7);
//! let mut state = BackoffState::new();
//! // The simulator draws in integer nanoseconds, the same draw as `next_delay`.
//! let first = policy.next_delay_nanos(&mut state, &mut rng);
//! assert!(first <= SimDuration::from_millis(50).as_nanos());
//! // Retry 10 000 with any multiplier is simply the cap, never an overflow.
//! assert_eq!(policy.nominal(10_000), std::time::Duration::from_secs(2));
//! # Ok::<(), jitterlab::Error>(())
//! ```
//!
//! ## Features
//!
//! The default features (`cli`, which implies `sim`) build the simulator, sweeps, output
//! files, charts and the `jitterlab` binary; without them this crate is the engine under its
//! old paths plus the simulator's time, streams and error type.

#![warn(missing_docs)]

// The engine, from the `jitterlab-retry` crate under the paths it always had here.
pub use jitterlab_retry::{backoff, cancel, exec, param, policy, prelude, presets};

// Always built: the simulator's time, streams and errors.
pub mod error;
pub mod rng;
pub mod time;
// The simulator and everything around it (feature `sim`).
#[cfg(feature = "sim")]
pub mod atomic;
#[cfg(feature = "sim")]
pub mod delays;
#[cfg(feature = "sim")]
pub mod folder;
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
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "sim")]
pub mod sim;
#[cfg(feature = "sim")]
pub mod stats;
#[cfg(feature = "sim")]
pub mod sweep;
#[cfg(feature = "sim")]
pub mod text;

pub use error::{Error, Result};

/// The README's Rust code, compiled and run by `cargo test` so that it can be copied as it is.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
