//! `[recovery]`: when a run counts as recovered.

use serde::Deserialize;
use toml::Value;

use super::helpers::{finite, positive_dur, s, table};
use crate::error::Result;
use crate::sim::recovery::RecoveryConfig;

/// `[recovery]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecoveryFile {
    pub window: Option<String>,
    pub tolerance: Option<f64>,
}
/// `recovery.window` when absent.
pub const DEFAULT_WINDOW: &str = "10s";

/// `recovery.tolerance` when absent: within 5 %.
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// `[recovery]`.
pub fn recovery(r: &RecoveryFile) -> Result<RecoveryConfig> {
    let tolerance = r.tolerance.unwrap_or(DEFAULT_TOLERANCE);
    Ok(RecoveryConfig {
        window: positive_dur("recovery.window", &r.window, DEFAULT_WINDOW)?,
        tolerance: finite(
            "recovery.tolerance",
            tolerance,
            (0.0..1.0).contains(&tolerance),
            "a number from 0 to below 1 (0.05 = within 5 %)",
        )?,
    })
}

/// `[recovery]` as written back.
pub fn write(r: &RecoveryConfig) -> Value {
    table(vec![
        ("window", s(r.window)),
        ("tolerance", Value::Float(r.tolerance)),
    ])
}
