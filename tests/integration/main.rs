//! The integration test binary: one binary, one module per concern.
//!
//! Run it in release mode; the simulations are slow in debug builds:
//! `cargo test --release --test integration`.

mod animate;
mod builtins;
mod cdp;
mod chart_check;
mod charts;
mod cheat_sheet;
mod classes;
mod cli;
mod commits;
mod common;
mod determinism;
mod docs;
mod edges;
mod folders;
mod fuzz;
mod hedging;
mod hedging_shown;
mod interrupt;
mod layering;
mod layers;
mod live;
mod long_names;
mod playground;
mod records;
mod regressions;
mod scenarios;
mod serve;
mod sources;
mod storms;
mod trust;
mod untrusted_io;
mod validation;
