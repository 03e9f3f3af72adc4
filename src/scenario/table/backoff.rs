//! `[backoff]`: the keys the strategies share (`base`, `multiplier`, `cap`, `growth`,
//! `factor`) and the default strategies; the strategies themselves are in [`super::strategies`].

use serde::Deserialize;
use toml::Value;

use super::helpers::{dur, s, table, under};
use super::strategies::strategy_toml;
use crate::backoff::{Backoff, BackoffParams, DEFAULT_FACTOR, DEFAULT_GROWTH, Jitter};
use crate::error::Result;
use crate::sim::Strategy;
use crate::time::SimDuration;

/// The strategies compared when a file names none.
pub const DEFAULT_STRATEGIES: [Jitter; 4] = [
    Jitter::NoJitter,
    Jitter::Full,
    Jitter::Equal,
    Jitter::Decorrelated,
];

/// `backoff.base` when absent.
pub const DEFAULT_BASE: &str = "50ms";

/// `backoff.multiplier` when absent.
pub const DEFAULT_MULTIPLIER: f64 = 2.0;

/// `backoff.cap` when absent.
pub const DEFAULT_CAP: &str = "2s";

/// `[backoff]`; strategies are read by hand for errors that name `backoff.strategies[i]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackoffFile {
    pub strategies: Option<Vec<toml::Value>>,
    pub base: Option<String>,
    pub multiplier: Option<f64>,
    pub cap: Option<String>,
    pub growth: Option<f64>,
    pub factor: Option<f64>,
}

pub fn backoff_defaults(b: &BackoffFile) -> Result<BackoffParams> {
    Ok(BackoffParams {
        jitter: Jitter::Full,
        base: dur("backoff.base", &b.base, DEFAULT_BASE)?.to_std(),
        multiplier: b.multiplier.unwrap_or(DEFAULT_MULTIPLIER),
        cap: dur("backoff.cap", &b.cap, DEFAULT_CAP)?.to_std(),
        growth: b.growth.unwrap_or(DEFAULT_GROWTH),
        factor: b.factor.unwrap_or(DEFAULT_FACTOR),
    })
}

/// Validates a strategy's parameters. A wrong one is named where its value came from: the
/// strategy's own table `t` (at `key`), or else `[backoff]`.
pub fn backoff(key: &str, t: &toml::Table, params: BackoffParams) -> Result<Backoff> {
    Backoff::from_params(params).map_err(|e| {
        let table = if t.contains_key(&*e.field) {
            key
        } else {
            "backoff"
        };
        under(table)(e)
    })
}

/// A backoff's keys: its jitter and every parameter.
pub fn backoff_pairs(p: &BackoffParams) -> Vec<(&'static str, Value)> {
    vec![
        ("jitter", s(p.jitter.name())),
        ("base", s(SimDuration::from(p.base))),
        ("multiplier", Value::Float(p.multiplier)),
        ("cap", s(SimDuration::from(p.cap))),
        ("growth", Value::Float(p.growth)),
        ("factor", Value::Float(p.factor)),
    ]
}
/// `[backoff]` as written back: the strategies, then the shared keys.
pub fn write(shared: &BackoffParams, strategies: &[Strategy]) -> Value {
    table(vec![
        (
            "strategies",
            Value::Array(
                strategies
                    .iter()
                    .map(|st| strategy_toml(st, shared))
                    .collect(),
            ),
        ),
        ("base", s(SimDuration::from(shared.base))),
        ("multiplier", Value::Float(shared.multiplier)),
        ("cap", s(SimDuration::from(shared.cap))),
        ("growth", Value::Float(shared.growth)),
        ("factor", Value::Float(shared.factor)),
    ])
}
