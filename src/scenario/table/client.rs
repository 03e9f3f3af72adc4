//! `[client]` (and a chain's `layers[i].client`): timeouts, attempts, what is retried, the
//! Retry-After handling and idempotency; its guard tables are read by [`super::budget`],
//! [`super::guards`] and [`super::hedging`].

use serde::Deserialize;
use toml::Value;

use super::budget::{BudgetFile, budget, budget_toml};
use super::guards::{
    AdaptiveRateFile, BreakerFile, ThrottleFile, adaptive_rate, adaptive_rate_toml, breaker,
    breaker_toml, throttle, throttle_toml,
};
use super::hedging::{HedgingFile, hedging, hedging_toml};
use super::helpers::{
    count_or, count_or_value, header, limit, outcome_list, outcome_set, s, table,
};
use crate::error::{Error, Result};
use crate::policy::{Idempotency, RetryOn};
use crate::policy::{RetryAfterHeader, RetryAfterPolicy, RetryOnItem};
use crate::scenario::file::CountOr;
use crate::sim::ClientConfig;
use crate::time::{SimDuration, format_limit};

/// `client.timeout` when absent.
pub const DEFAULT_TIMEOUT: &str = "1s";

/// `client.deadline` when absent.
pub const DEFAULT_DEADLINE: &str = "off";

/// `client.max_attempts` when absent.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

/// `client.retry_after` when absent: wait at least what the server asks.
pub const DEFAULT_RETRY_AFTER: &str = "at_least";

/// `client.retry_after_max` and `client.retry_after_max_extra` when absent.
pub const NO_LIMIT: &str = "off";

/// `client.idempotent` when absent.
pub const DEFAULT_IDEMPOTENT: bool = true;

/// `client.idempotency_key` when absent.
pub const DEFAULT_IDEMPOTENCY_KEY: bool = false;

/// `[client]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClientFile {
    pub timeout: Option<String>,
    pub deadline: Option<String>,
    pub max_attempts: Option<CountOr>,
    pub retry_on: Option<Vec<RetryOnItem>>,
    pub retry_after: Option<String>,
    pub retry_after_max: Option<String>,
    pub retry_after_max_extra: Option<String>,
    pub retry_after_header: Option<String>,
    pub throttling_on: Option<Vec<RetryOnItem>>,
    pub idempotent: Option<bool>,
    pub idempotency_key: Option<bool>,
    pub budget: Option<BudgetFile>,
    pub breaker: Option<BreakerFile>,
    pub throttle: Option<ThrottleFile>,
    pub concurrency: Option<CountOr>,
    pub adaptive_rate: Option<AdaptiveRateFile>,
    pub hedging: Option<HedgingFile>,
}

/// The default throttling answers: 429 (botocore's `ThrottlingStatusCodeChecker`).
pub fn throttling_default() -> RetryOn {
    RetryOn::none()
        .with_status(429)
        .expect("429 is a retryable status")
}

pub fn client(table: &str, c: &ClientFile) -> Result<ClientConfig> {
    let k = |key: &str| format!("{table}.{key}");
    let retry_on = outcome_set(&k("retry_on"), &c.retry_on, RetryOn::default())?;
    let throttling_on = outcome_set(&k("throttling_on"), &c.throttling_on, throttling_default())?;
    let idempotency = match (
        c.idempotent.unwrap_or(DEFAULT_IDEMPOTENT),
        c.idempotency_key.unwrap_or(DEFAULT_IDEMPOTENCY_KEY),
    ) {
        (true, _) => Idempotency::Idempotent,
        (false, true) => Idempotency::WithKey,
        (false, false) => Idempotency::NonIdempotent,
    };
    let budget = c
        .budget
        .as_ref()
        .map(|b| budget(&k("budget"), b))
        .transpose()?;
    let throttle = c
        .throttle
        .as_ref()
        .map(|t| throttle(&k("throttle"), t))
        .transpose()?;
    let breaker = c
        .breaker
        .as_ref()
        .map(|b| breaker(&k("breaker"), b))
        .transpose()?;
    let adaptive_rate = c
        .adaptive_rate
        .as_ref()
        .map(|r| adaptive_rate(&k("adaptive_rate"), r))
        .transpose()?;
    let concurrency = count_or(
        &k("concurrency"),
        &c.concurrency,
        None,
        &["unlimited", "off"],
        1,
    )?;
    Ok(ClientConfig {
        timeout: limit(&k("timeout"), &c.timeout, DEFAULT_TIMEOUT)?,
        deadline: limit(&k("deadline"), &c.deadline, DEFAULT_DEADLINE)?,
        max_attempts: count_or(
            &k("max_attempts"),
            &c.max_attempts,
            Some(DEFAULT_MAX_ATTEMPTS),
            &["unlimited"],
            1,
        )?,
        retry_on,
        retry_after: RetryAfterPolicy {
            mode: c
                .retry_after
                .as_deref()
                .unwrap_or(DEFAULT_RETRY_AFTER)
                .parse()
                .map_err(|e| Error::for_key(k("retry_after"), e))?,
            max: limit(&k("retry_after_max"), &c.retry_after_max, NO_LIMIT)?
                .map(SimDuration::to_std),
            max_extra: limit(
                &k("retry_after_max_extra"),
                &c.retry_after_max_extra,
                NO_LIMIT,
            )?
            .map(SimDuration::to_std),
            header: header(&k("retry_after_header"), &c.retry_after_header)?,
        },
        throttling_on,
        throttling_backoff: None,
        idempotency,
        budget,
        breaker,
        throttle,
        concurrency,
        adaptive_rate,
        hedging: c
            .hedging
            .as_ref()
            .map(|h| hedging(&k("hedging"), h))
            .transpose()?,
    })
}

/// A `[client]` table with every key.
pub fn client_table(c: &ClientConfig) -> Value {
    let mut client = vec![
        ("timeout", s(format_limit(c.timeout))),
        ("deadline", s(format_limit(c.deadline))),
        ("max_attempts", count_or_value(c.max_attempts, "unlimited")),
        ("retry_on", outcome_list(&c.retry_on)),
        ("retry_after", s(c.retry_after.mode.name())),
        (
            "retry_after_max",
            s(format_limit(c.retry_after.max.map(SimDuration::from))),
        ),
        (
            "idempotent",
            Value::Boolean(c.idempotency == Idempotency::Idempotent),
        ),
        (
            "idempotency_key",
            Value::Boolean(c.idempotency == Idempotency::WithKey),
        ),
        ("concurrency", count_or_value(c.concurrency, "unlimited")),
    ];
    // The keys of error classes and the AWS hint, only when not their defaults, so that the
    // resolved files of earlier releases (and the journals that hold them) stay unchanged.
    if c.throttling_on != throttling_default() {
        client.push(("throttling_on", outcome_list(&c.throttling_on)));
    }
    if let Some(extra) = c.retry_after.max_extra {
        client.push(("retry_after_max_extra", s(SimDuration::from(extra))));
    }
    if c.retry_after.header != RetryAfterHeader::RetryAfter {
        client.push(("retry_after_header", s(c.retry_after.header.name())));
    }
    if let Some((b, scope)) = &c.budget {
        client.push(("budget", budget_toml(b, *scope)));
    }
    if let Some((b, scope)) = &c.breaker {
        client.push(("breaker", breaker_toml(b, *scope)));
    }
    if let Some((t, scope)) = &c.throttle {
        client.push(("throttle", throttle_toml(t, *scope)));
    }
    if let Some((r, scope)) = &c.adaptive_rate {
        client.push(("adaptive_rate", adaptive_rate_toml(r, *scope)));
    }
    if let Some(h) = &c.hedging {
        client.push(("hedging", hedging_toml(h)));
    }
    table(client)
}
