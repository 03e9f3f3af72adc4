//! `[network]`: the one-way latency of every message.

use std::path::Path;

use serde::Deserialize;
use toml::Value;

use super::dist::{DistFile, dist};
use super::helpers::table;
use crate::error::Result;
use crate::sim::dist::Dist;
use crate::time::SimDuration;

/// `[network]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkFile {
    pub latency: Option<DistFile>,
}
/// `network.latency` (none when absent).
pub fn latency(n: &NetworkFile, dir: Option<&Path>) -> Result<Dist> {
    dist(
        "network.latency",
        &n.latency,
        Dist::Constant {
            mean: SimDuration::ZERO,
        },
        dir,
    )
}

/// `[network]` as written back.
pub fn write(latency: &Dist) -> Value {
    table(vec![("latency", latency.to_toml())])
}
