//! The discrete-event simulator: many clients, each running the backoff engine and retry
//! policy unchanged, against a capacity-limited server on a virtual clock.
//!
//! One call to [`run`] simulates one (point, strategy, replication). It is a pure function of
//! its arguments: the same [`Model`], [`Strategy`], seed and replication give the same
//! [`RunResult`] on every machine. Events are processed in `(time, seq)` order (see
//! [`queue`]); random numbers come from named streams (see [`crate::rng`]) so that every
//! strategy sees the same arrivals, service demands, faults and network delays.
//!
//! Layout: [`event`] and [`queue`] are the engine; `client` (the request state machine
//! around [`crate::policy::RetryPolicy::decide`]) and `server` (queue and OCC) are the model;
//! [`workload`], [`faults`] and [`dist`] are its inputs; [`metrics`] its outputs.

pub mod dist;
pub mod event;
pub mod faults;
pub mod metrics;
pub mod profile;
pub mod queue;
pub mod workload;

mod client;
mod engine;
mod server;

pub use client::{ClientConfig, Scope};
pub use engine::run;
pub use server::{QueueConfig, RateLimit, RetryAfterHint, ServerConfig};

use crate::backoff::Backoff;
use crate::time::SimDuration;
use dist::Dist;
use faults::Fault;
use workload::Workload;

/// Everything about a point except the backoff strategy: validated, ready to run.
#[derive(Debug, Clone)]
pub struct Model {
    /// The clock stops here; unfinished requests are counted.
    pub horizon: SimDuration,
    /// Who sends requests, and when.
    pub workload: Workload,
    /// The server.
    pub server: ServerConfig,
    /// One-way network latency, drawn for each leg.
    pub latency: Dist,
    /// Timeouts, deadline, attempts, what to retry, Retry-After, budget, breaker, limiter.
    pub client: ClientConfig,
    /// Fault windows.
    pub faults: Vec<Fault>,
    /// Time-series resolution.
    pub bucket: SimDuration,
}

/// One backoff strategy under comparison.
#[derive(Debug, Clone)]
pub struct Strategy {
    /// Its name in outputs (`full`, or an override table's `name`).
    pub name: String,
    /// The validated backoff policy.
    pub backoff: Backoff,
}

/// What [`run`] simulates.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec<'a> {
    /// The point's model.
    pub model: &'a Model,
    /// The strategy.
    pub strategy: &'a Strategy,
    /// The master seed.
    pub seed: u64,
    /// The replication (0-based); part of every stream's seed.
    pub replication: u32,
    /// Keep the per-bucket time series in the result (peaks are computed either way).
    pub keep_series: bool,
}

pub use metrics::{Counts, Ending, RunResult, TimeSeries};
