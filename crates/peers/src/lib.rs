//! jitterlab's backoff core against the retry crates people use.
//!
//! - [`idiom`]: each peer crate stepped in its own idiom (backon 1.6, backoff 0.4,
//!   exponential-backoff 2.1, retry-policies 0.5, tokio-retry 0.3), seeded where the crate
//!   allows it; one fresh request's delays at a time.
//! - [`audit`]: large samples of each crate's delays, up to two retries past its cap, against
//!   what its docs state (a Kolmogorov–Smirnov test, bunching at the cap, zero delays,
//!   monotone growth).
//! - [`herd`]: each crate's defaults as a [`jitterlab::sim::DelaySource`], so that any
//!   scenario runs them (`examples/herd.rs` runs the thundering herd).
//! - [`step`]: one next-delay step of every implementation and the bare draw, defined once
//!   for the clock (criterion) and the instruction count (callgrind).
//! - [`steps`]: the report of `benches/steps.rs` (one next-delay step of every implementation
//!   and the bare draw): ratios to the bare draw, a table and a chart.
//!
//! This crate is a workspace member outside `default-members`: the root's `cargo test` never
//! compiles a peer crate.

pub mod audit;
pub mod herd;
pub mod idiom;
pub mod ks;
pub mod step;
pub mod steps;
