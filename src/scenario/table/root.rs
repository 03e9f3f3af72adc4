//! The top-level keys: `name`, `description`, `seed`, `horizon`, `replications`.

use toml::Value;

use super::helpers::{positive_dur, s};
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use crate::scenario::file::Seed;
use crate::time::SimDuration;

/// `horizon` when absent.
pub const DEFAULT_HORIZON: &str = "120s";

/// `replications` when absent.
pub const DEFAULT_REPLICATIONS: u32 = 10;

/// The most replications per (point, strategy).
pub const MAX_REPLICATIONS: u32 = 1_000_000;

/// `seed` when absent.
pub const DEFAULT_SEED: u64 = 1;

/// `horizon`: how long each run lasts, above 0.
pub fn horizon(value: &Option<String>) -> Result<SimDuration> {
    positive_dur("horizon", value, DEFAULT_HORIZON)
}

/// `replications`: from 1 to [`MAX_REPLICATIONS`].
pub fn replications(value: Option<u32>) -> Result<u32> {
    let replications = value.unwrap_or(DEFAULT_REPLICATIONS);
    if !(1..=MAX_REPLICATIONS).contains(&replications) {
        return Err(Error::invalid(
            "replications",
            replications,
            format!("an integer from 1 to {MAX_REPLICATIONS}"),
        ));
    }
    Ok(replications)
}

/// `name`, or `fallback` (the file's stem): usable as a folder name.
pub fn name(value: &Option<String>, fallback: &str) -> Result<String> {
    let name = value.clone().unwrap_or_else(|| fallback.to_string());
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(Error::invalid(
            "name",
            format!("{name:?}"),
            "a non-empty name usable as a folder name (no slashes)",
        ));
    }
    Ok(name)
}

/// `description` (empty when absent).
pub fn description(value: &Option<String>) -> String {
    value.clone().unwrap_or_default()
}

/// `seed`.
pub fn seed(value: Option<Seed>) -> u64 {
    value.map_or(DEFAULT_SEED, |s| s.0)
}

/// The top-level keys as written back, in order.
pub fn write(scenario: &Scenario) -> Vec<(String, Value)> {
    // Above TOML's largest integer, the seed is written as its digits in quotes.
    let seed = i64::try_from(scenario.seed).map_or_else(|_| s(scenario.seed), Value::Integer);
    vec![
        ("name".into(), s(&scenario.name)),
        ("description".into(), s(&scenario.description)),
        ("seed".into(), seed),
        ("horizon".into(), s(scenario.model.horizon)),
        (
            "replications".into(),
            Value::Integer(i64::from(scenario.replications)),
        ),
    ]
}
