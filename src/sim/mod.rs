//! The discrete-event simulator: many clients, each running the backoff engine and retry
//! policy unchanged, against a capacity-limited server on a virtual clock.
//!
//! One call to [`run`] simulates one (point, strategy, replication). It is a pure function of
//! its arguments: the same [`Model`], [`Strategy`], seed and replication give the same
//! [`RunResult`] on every machine. Events are processed in `(time, seq)` order (see
//! [`queue`]); random numbers come from named streams (see [`crate::rng`]) so that every
//! strategy sees the same arrivals, service demands, faults and network delays.
//!
//! Layout, each module using only those listed before it:
//! - inputs and vocabulary: `spare` (buffers a thread's runs hand on to one another),
//!   [`event`], [`queue`], [`dist`], [`workload`], [`faults`],
//!   [`run_result`] (what a run measured), [`resync`] (the re-synchronisation measure), `answer` (what comes back for an attempt),
//!   [`source`] (a user-supplied backoff);
//! - the parts, each testable alone: `recorder` (one method per measurement), `network` (leg
//!   delays), `server` (admission, service, OCC), [`hedge`] (a hedged request's copies),
//!   `client` (the request state machine around
//!   [`crate::policy::RetryPolicy::decide`]); `model` gathers the configurations;
//! - `engine` on top: the event loop, routing each event between clients, network, server and
//!   recorder; [`work`] beside it: the events and memory a run could take, estimated before it.

pub mod dist;
pub mod event;
pub mod faults;
pub mod hedge;
pub mod passage;
pub mod profile;
pub mod queue;
pub mod recovery;
pub mod resync;
pub mod run_result;
pub mod source;
pub mod work;
pub mod workload;

// The parts are crate-visible for the live mode (`crate::live`), which drives the same
// clients, server and recorder with real timers and sockets instead of the event queue.
pub(crate) mod answer;
pub(crate) mod client;
mod engine;
mod model;
pub(crate) mod network;
pub(crate) mod recorder;
pub(crate) mod server;
mod spare;

pub use client::{ClientConfig, Scope};
pub use engine::{run, run_until};
// Event by event, for the property tests of `crate::sweep` (the simulator's own tests build
// no scenario files).
#[cfg(test)]
pub(crate) use engine::Sim;
pub use model::{
    Chain, ClientOverrides, GiveUp, Hop, LayerOverrides, MAX_CALLING_WORKERS, MAX_LAYERS, Model,
    RunSpec, Strategy,
};
pub use run_result::{Counts, Ending, LayerResult, LayerSeries, RunResult, TimeSeries};
pub use server::{QueueConfig, RateLimit, RetryAfterHint, ServerConfig, UNLIMITED_WORKERS};
pub use source::{ClientDelays, DelaySource, RetryAt};
