//! # jitterlab-retry
//!
//! (front door: see README.md; written below once the API settles)

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod backoff;
pub mod cancel;
pub mod error;
pub mod exec;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub mod param;
pub mod policy;
pub mod prelude;
pub mod time;

pub use error::{Error, Result};

/// The generator of the engine's unit tests.
#[cfg(test)]
pub(crate) fn test_rng(seed: u64) -> rand_pcg::Pcg64Mcg {
    <rand_pcg::Pcg64Mcg as rand::SeedableRng>::seed_from_u64(seed)
}
