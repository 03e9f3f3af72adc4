//! The integration test binary: one binary, one module per concern (DESIGN §2).
//!
//! Run it in release mode; the simulations are slow in debug builds:
//! `cargo test --release --test integration`.

mod builtins;
mod chart_check;
mod charts;
mod cli;
mod common;
mod determinism;
mod docs;
mod edges;
mod fuzz;
mod interrupt;
mod layers;
mod live;
mod regressions;
mod scenarios;
mod storms;
mod untrusted_io;
mod validation;
