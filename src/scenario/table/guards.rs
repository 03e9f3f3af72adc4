//! The client's other guards: `client.breaker`, `client.throttle` and `client.adaptive_rate`
//! (and a strategy's overrides of them); a key left out keeps the engine's default.

use serde::Deserialize;
use toml::Value;

use super::helpers::{count, s, scope, std_duration, table, under};
use crate::error::Result;
use crate::policy::AdaptiveRateConfig;
use crate::policy::BreakerConfig;
use crate::policy::throttle::ThrottleConfig;
use crate::sim::Scope;
use crate::time::SimDuration;

/// `client.throttle`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThrottleFile {
    pub k: Option<f64>,
    pub window: Option<String>,
    pub scope: Option<String>,
}

/// `client.adaptive_rate`: the AWS adaptive mode's rate limiter, every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveRateFile {
    pub beta: Option<f64>,
    pub scale: Option<f64>,
    pub smoothing: Option<f64>,
    pub bucket: Option<String>,
    pub min_fill_rate: Option<f64>,
    pub max_rate_scale: Option<f64>,
    pub scope: Option<String>,
}

/// `client.breaker`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerFile {
    pub failure_ratio: Option<f64>,
    pub min_requests: Option<i64>,
    pub window: Option<String>,
    pub open_for: Option<String>,
    pub scope: Option<String>,
}

/// An adaptive rate limiter table at `table` (`client.adaptive_rate`, or a strategy's
/// `backoff.strategies[i].adaptive_rate`); a key left out keeps botocore's value.
pub fn adaptive_rate(table: &str, r: &AdaptiveRateFile) -> Result<(AdaptiveRateConfig, Scope)> {
    let key = |k: &str| format!("{table}.{k}");
    let d = AdaptiveRateConfig::default();
    let config = AdaptiveRateConfig {
        beta: r.beta.unwrap_or(d.beta),
        scale: r.scale.unwrap_or(d.scale),
        smoothing: r.smoothing.unwrap_or(d.smoothing),
        bucket: r
            .bucket
            .as_ref()
            .map_or(Ok(d.bucket), |b| std_duration(&key("bucket"), b))?,
        min_fill_rate: r.min_fill_rate.unwrap_or(d.min_fill_rate),
        max_rate_scale: r.max_rate_scale.unwrap_or(d.max_rate_scale),
    };
    config.validate().map_err(under(table))?;
    Ok((config, scope(&key("scope"), &r.scope)?))
}

/// A throttle table at `table` (`client.throttle`, or a strategy's
/// `backoff.strategies[i].throttle`).
pub fn throttle(table: &str, t: &ThrottleFile) -> Result<(ThrottleConfig, Scope)> {
    let key = |k: &str| format!("{table}.{k}");
    let d = ThrottleConfig::default();
    let config = ThrottleConfig {
        k: t.k.unwrap_or(d.k),
        window: t
            .window
            .as_ref()
            .map_or(Ok(d.window), |w| std_duration(&key("window"), w))?,
    };
    config.validate().map_err(under(table))?;
    Ok((config, scope(&key("scope"), &t.scope)?))
}

/// A breaker table at `table` (`client.breaker`, or a strategy's
/// `backoff.strategies[i].breaker`).
pub fn breaker(table: &str, b: &BreakerFile) -> Result<(BreakerConfig, Scope)> {
    let key = |k: &str| format!("{table}.{k}");
    let d = BreakerConfig::default();
    let config = BreakerConfig {
        failure_ratio: b.failure_ratio.unwrap_or(d.failure_ratio),
        min_requests: count(
            &key("min_requests"),
            b.min_requests,
            d.min_requests as i64,
            1,
            u32::MAX as i64,
        )?,
        window: b
            .window
            .as_ref()
            .map_or(Ok(d.window), |w| std_duration(&key("window"), w))?,
        open_for: b
            .open_for
            .as_ref()
            .map_or(Ok(d.open_for), |w| std_duration(&key("open_for"), w))?,
    };
    config.validate().map_err(under(table))?;
    Ok((config, scope(&key("scope"), &b.scope)?))
}

/// A breaker table with every key.
pub fn breaker_toml(b: &BreakerConfig, scope: Scope) -> Value {
    table(vec![
        ("failure_ratio", Value::Float(b.failure_ratio)),
        ("min_requests", Value::Integer(b.min_requests as i64)),
        ("window", s(SimDuration::from(b.window))),
        ("open_for", s(SimDuration::from(b.open_for))),
        ("scope", s(scope.name())),
    ])
}

/// A throttle table with every key.
pub fn throttle_toml(t: &ThrottleConfig, scope: Scope) -> Value {
    table(vec![
        ("k", Value::Float(t.k)),
        ("window", s(SimDuration::from(t.window))),
        ("scope", s(scope.name())),
    ])
}

/// An adaptive rate limiter table with every key.
pub fn adaptive_rate_toml(r: &AdaptiveRateConfig, scope: Scope) -> Value {
    table(vec![
        ("beta", Value::Float(r.beta)),
        ("scale", Value::Float(r.scale)),
        ("smoothing", Value::Float(r.smoothing)),
        ("bucket", s(SimDuration::from(r.bucket))),
        ("min_fill_rate", Value::Float(r.min_fill_rate)),
        ("max_rate_scale", Value::Float(r.max_rate_scale)),
        ("scope", s(scope.name())),
    ])
}
