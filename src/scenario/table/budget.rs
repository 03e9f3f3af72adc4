//! `client.budget` (and a strategy's `budget`): the retry budget of each kind, with the keys
//! that kind takes.

use serde::Deserialize;
use toml::Value;

use super::helpers::{count, s, scope_or, std_duration, table, under};
use crate::error::{Error, Result};
use crate::param::ValueError;
use crate::policy::adaptive::{AdaptiveBucketConfig, RetryBreakerConfig};
use crate::policy::{BudgetConfig, RatioDeposit};
use crate::sim::Scope;
use crate::time::SimDuration;

/// `client.budget`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetFile {
    pub kind: String,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub capacity: Option<i64>,
    #[serde(default)]
    pub retry_cost: Option<i64>,
    #[serde(default)]
    pub timeout_cost: Option<i64>,
    #[serde(default)]
    pub throttling_cost: Option<i64>,
    #[serde(default)]
    pub success_refund: Option<i64>,
    #[serde(default)]
    pub percent: Option<f64>,
    #[serde(default)]
    pub min_per_sec: Option<f64>,
    #[serde(default)]
    pub window: Option<String>,
    #[serde(default)]
    pub deposit: Option<String>,
    #[serde(default)]
    pub max_tokens: Option<f64>,
    #[serde(default)]
    pub token_ratio: Option<f64>,
    #[serde(default)]
    pub size: Option<f64>,
    #[serde(default)]
    pub fill: Option<f64>,
    #[serde(default)]
    pub ratio: Option<f64>,
    #[serde(default)]
    pub min_concurrency: Option<i64>,
}

/// The defaults of the budget kind a scenario names (`kind = "token_bucket"`).
pub fn budget_defaults(kind: &str) -> Result<BudgetConfig, ValueError> {
    Ok(match kind.trim() {
        "token_bucket" => BudgetConfig::token_bucket(),
        "ratio" => BudgetConfig::ratio(),
        "grpc" => BudgetConfig::grpc(),
        "adaptive" => BudgetConfig::adaptive(),
        "retry_breaker" => BudgetConfig::retry_breaker(),
        "concurrency" => BudgetConfig::concurrency(),
        _ => {
            return Err(ValueError::new(
                format!("{kind:?}"),
                format!("one of {}", BudgetConfig::KINDS.join(", ")),
            ));
        }
    })
}

/// A budget table at `table` (`client.budget`, or a strategy's `backoff.strategies[i].budget`).
pub fn budget(table: &str, b: &BudgetFile) -> Result<(BudgetConfig, Scope)> {
    let key = |k: &str| format!("{table}.{k}");
    let mut config = budget_defaults(&b.kind).map_err(|e| Error::for_key(key("kind"), e))?;
    refuse_other_kinds_keys(table, b, &config)?;
    set_given_keys(table, b, &mut config)?;
    config.validate().map_err(under(table))?;
    // Brooker's two kinds are per client unless told otherwise, as in his simulator.
    let default_scope = if config.per_client_by_default() {
        Scope::Client
    } else {
        Scope::Shared
    };
    Ok((config, scope_or(&key("scope"), &b.scope, default_scope)?))
}

/// Each kind takes its own keys; a key of another kind is a mistake worth naming.
fn refuse_other_kinds_keys(table: &str, b: &BudgetFile, config: &BudgetConfig) -> Result<()> {
    let given = [
        ("capacity", b.capacity.is_some()),
        ("retry_cost", b.retry_cost.is_some()),
        ("timeout_cost", b.timeout_cost.is_some()),
        ("throttling_cost", b.throttling_cost.is_some()),
        ("success_refund", b.success_refund.is_some()),
        ("percent", b.percent.is_some()),
        ("min_per_sec", b.min_per_sec.is_some()),
        ("window", b.window.is_some()),
        ("deposit", b.deposit.is_some()),
        ("max_tokens", b.max_tokens.is_some()),
        ("token_ratio", b.token_ratio.is_some()),
        ("size", b.size.is_some()),
        ("fill", b.fill.is_some()),
        ("ratio", b.ratio.is_some()),
        ("min_concurrency", b.min_concurrency.is_some()),
    ];
    let own: &[&str] = match config {
        BudgetConfig::TokenBucket { .. } => &[
            "capacity",
            "retry_cost",
            "timeout_cost",
            "throttling_cost",
            "success_refund",
        ],
        BudgetConfig::Ratio { .. } => &["percent", "min_per_sec", "window", "deposit"],
        BudgetConfig::Grpc { .. } => &["max_tokens", "token_ratio"],
        BudgetConfig::Adaptive(_) => &["size", "fill"],
        BudgetConfig::RetryBreaker(_) => &["ratio"],
        BudgetConfig::Concurrency { .. } => &["percent", "min_concurrency"],
    };
    match given.iter().find(|(k, g)| *g && !own.contains(k)) {
        Some((k, _)) => Err(Error::invalid(
            format!("{table}.{k}"),
            "given",
            format!(
                "not used when {table}.kind = \"{}\" (its keys: {}); remove it",
                config.kind(),
                own.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// Sets the keys the table gives over its kind's defaults.
fn set_given_keys(table: &str, b: &BudgetFile, config: &mut BudgetConfig) -> Result<()> {
    let key = |k: &str| format!("{table}.{k}");
    match config {
        BudgetConfig::TokenBucket { .. } => set_token_bucket_keys(table, b, config)?,
        BudgetConfig::Ratio {
            percent,
            min_per_sec,
            window,
            deposit,
        } => {
            *percent = b.percent.unwrap_or(*percent);
            *min_per_sec = b.min_per_sec.unwrap_or(*min_per_sec);
            if let Some(w) = &b.window {
                *window = std_duration(&key("window"), w)?;
            }
            if let Some(d) = &b.deposit {
                *deposit = RatioDeposit::from_name(d).ok_or_else(|| {
                    Error::invalid(
                        key("deposit"),
                        format!("{d:?}"),
                        "\"request\" or \"success\"",
                    )
                })?;
            }
        }
        BudgetConfig::Grpc {
            max_tokens,
            token_ratio,
        } => {
            *max_tokens = b.max_tokens.unwrap_or(*max_tokens);
            *token_ratio = b.token_ratio.unwrap_or(*token_ratio);
        }
        BudgetConfig::Adaptive(AdaptiveBucketConfig { size, fill }) => {
            *size = b.size.unwrap_or(*size);
            *fill = b.fill.unwrap_or(*fill);
        }
        BudgetConfig::RetryBreaker(RetryBreakerConfig { ratio }) => {
            *ratio = b.ratio.unwrap_or(*ratio);
        }
        BudgetConfig::Concurrency {
            percent,
            min_concurrency,
        } => {
            *percent = b.percent.unwrap_or(*percent);
            *min_concurrency = count(
                &key("min_concurrency"),
                b.min_concurrency,
                i64::from(*min_concurrency),
                0,
                u32::MAX as i64,
            )?;
        }
    }
    Ok(())
}

/// A token bucket's counts; `throttling_cost` follows `retry_cost` unless given.
fn set_token_bucket_keys(table: &str, b: &BudgetFile, config: &mut BudgetConfig) -> Result<()> {
    let BudgetConfig::TokenBucket {
        capacity,
        retry_cost,
        timeout_cost,
        throttling_cost,
        success_refund,
    } = config
    else {
        return Ok(());
    };
    let key = |k: &str| format!("{table}.{k}");
    [
        ("capacity", b.capacity, &mut *capacity),
        ("retry_cost", b.retry_cost, &mut *retry_cost),
        ("timeout_cost", b.timeout_cost, timeout_cost),
        ("success_refund", b.success_refund, success_refund),
    ]
    .into_iter()
    .try_for_each(|(k, given, slot)| {
        *slot = count(&key(k), given, i64::from(*slot), 0, u32::MAX as i64)?;
        Ok::<_, Error>(())
    })?;
    // A throttling answer costs what any retry costs unless told otherwise.
    let default = i64::from(*retry_cost);
    *throttling_cost = count(
        &key("throttling_cost"),
        b.throttling_cost,
        default,
        0,
        u32::MAX as i64,
    )?;
    Ok(())
}

/// A budget table: its kind, scope and every parameter.
pub fn budget_toml(b: &BudgetConfig, scope: Scope) -> Value {
    let mut pairs = vec![("kind", s(b.kind())), ("scope", s(scope.name()))];
    match *b {
        BudgetConfig::TokenBucket {
            capacity,
            retry_cost,
            timeout_cost,
            throttling_cost: _,
            success_refund,
        } => pairs.extend([
            ("capacity", Value::Integer(capacity as i64)),
            ("retry_cost", Value::Integer(retry_cost as i64)),
            ("timeout_cost", Value::Integer(timeout_cost as i64)),
            ("success_refund", Value::Integer(success_refund as i64)),
        ]),
        BudgetConfig::Ratio {
            percent,
            min_per_sec,
            window,
            deposit,
        } => {
            pairs.extend([
                ("percent", Value::Float(percent)),
                ("min_per_sec", Value::Float(min_per_sec)),
                ("window", s(SimDuration::from(window))),
            ]);
            // Only when not the default, as `throttling_cost` below.
            if deposit != RatioDeposit::Request {
                pairs.push(("deposit", s(deposit.name())));
            }
        }
        BudgetConfig::Grpc {
            max_tokens,
            token_ratio,
        } => pairs.extend([
            ("max_tokens", Value::Float(max_tokens)),
            ("token_ratio", Value::Float(token_ratio)),
        ]),
        BudgetConfig::Adaptive(a) => pairs.extend([
            ("size", Value::Float(a.size)),
            ("fill", Value::Float(a.fill)),
        ]),
        BudgetConfig::RetryBreaker(r) => pairs.push(("ratio", Value::Float(r.ratio))),
        BudgetConfig::Concurrency {
            percent,
            min_concurrency,
        } => pairs.extend([
            ("percent", Value::Float(percent)),
            (
                "min_concurrency",
                Value::Integer(i64::from(min_concurrency)),
            ),
        ]),
    }
    // Written only when it differs from its default, `retry_cost`: the resolved files of
    // earlier releases (and the journals that hold them) stay what this one writes.
    if let BudgetConfig::TokenBucket {
        retry_cost,
        throttling_cost,
        ..
    } = *b
        && throttling_cost != retry_cost
    {
        pairs.push(("throttling_cost", Value::Integer(throttling_cost as i64)));
    }
    table(pairs)
}
