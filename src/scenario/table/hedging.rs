//! `client.hedging` (and a strategy's `hedging`): hedged requests, and what the simulator's
//! hedging needs from the other tables ([`hedging_fits`]).

use serde::Deserialize;
use toml::Value;

use super::helpers::{count, duration, outcome_list, outcome_set, s, table};
use crate::error::{Error, Result};
use crate::policy::RetryOnItem;
use crate::policy::{HedgingPolicy, RetryOn};
use crate::sim::dist::Dist;
use crate::sim::hedge::{Cancel, HedgeConfig, HedgeDelay, MAX_COPIES};
use crate::sim::{ClientConfig, ServerConfig, Strategy};
use crate::time::SimDuration;

/// `hedging.max_attempts` when absent: the request and one copy (gRFC A6).
pub const DEFAULT_MAX_ATTEMPTS: i64 = 2;

/// `hedging.cancel` when absent: the server drops a cancelled copy still in its queue.
pub const DEFAULT_CANCEL: &str = "waiting";

/// `client.hedging`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HedgingFile {
    pub delay: Option<String>,
    pub max_attempts: Option<i64>,
    pub non_fatal: Option<Vec<RetryOnItem>>,
    pub cancel: Option<String>,
}

/// The keys of a hedging table.
pub const HEDGING_KEYS: &str = "delay, max_attempts, non_fatal, cancel";

/// A hedging table at `table` (`client.hedging`, or a strategy's
/// `backoff.strategies[i].hedging`). `delay` is required; `max_attempts` 2 by default,
/// `non_fatal` empty (gRFC A6's defaults), `cancel` "waiting".
pub fn hedging(table: &str, h: &HedgingFile) -> Result<HedgeConfig> {
    let key = |k: &str| format!("{table}.{k}");
    let text = h.delay.as_deref().ok_or_else(|| {
        Error::invalid(
            key("delay"),
            "missing",
            format!("a duration such as \"10ms\" or a percentile such as \"p95\" (the keys of {table}: {HEDGING_KEYS})"),
        )
    })?;
    let delay = match text.strip_prefix('p') {
        Some(p) => {
            // Digits and one point only: `f64`'s parser would also take "1e1" or "inf".
            let decimal = !p.is_empty()
                && p.chars().all(|c| c.is_ascii_digit() || c == '.')
                && p.matches('.').count() <= 1;
            let p = decimal.then(|| p.parse::<f64>().ok()).flatten();
            let p = p.filter(|p| *p > 0.0 && *p < 100.0).ok_or_else(|| {
                Error::invalid(
                    key("delay"),
                    format!("{text:?}"),
                    "a percentile above p0 and below p100 such as \"p95\" or \"p99.9\", or a duration such as \"10ms\"",
                )
            })?;
            HedgeDelay::Percentile(p)
        }
        None => {
            let d = duration(&key("delay"), text)?;
            if d == SimDuration::ZERO {
                return Err(Error::invalid(
                    key("delay"),
                    format!("{text:?}"),
                    "a duration above 0 (a copy sent at once is a duplicate, not a hedge)",
                ));
            }
            HedgeDelay::Fixed(d.to_std())
        }
    };
    let max_attempts = count(
        &key("max_attempts"),
        h.max_attempts,
        DEFAULT_MAX_ATTEMPTS,
        2,
        i64::from(MAX_COPIES),
    )?;
    let cancel = match h.cancel.as_deref().unwrap_or(DEFAULT_CANCEL) {
        "waiting" => Cancel::Waiting,
        "never" => Cancel::Never,
        other => {
            return Err(Error::invalid(
                key("cancel"),
                format!("{other:?}"),
                "\"waiting\" (the server drops a cancelled copy still in its queue) or \"never\" (it serves it anyway)",
            ));
        }
    };
    let policy = HedgingPolicy::new(delay)
        .max_attempts(max_attempts)
        .non_fatal(outcome_set(
            &key("non_fatal"),
            &h.non_fatal,
            RetryOn::none(),
        )?);
    Ok(HedgeConfig { policy, cancel })
}

/// Hedged requests, where a strategy runs them, need what the simulator's hedging supports:
/// an instant network (a client's network link carries one attempt at a time), one queue
/// server, no concurrency limiter, no adaptive rate limiter.
pub fn hedging_fits(
    strategies: &[Strategy],
    client: &ClientConfig,
    latency: &Dist,
    server: &ServerConfig,
    chain: bool,
) -> Result<()> {
    for (i, s) in strategies.iter().enumerate() {
        if s.client_config(client).hedging.is_none() {
            continue;
        }
        let key = if s.client.hedging.is_some() {
            format!("backoff.strategies[{i}].hedging")
        } else {
            "client.hedging".to_string()
        };
        let refuse = |why: &str| Err(Error::invalid(&key, "given", why.to_string()));
        if !latency.is_zero() {
            return refuse(
                "no hedging with a network.latency above 0: the simulator hedges over an instant network only (leave network.latency out)",
            );
        }
        if chain {
            return refuse("no hedging in a chain of services ([[layers]])");
        }
        if !matches!(server, ServerConfig::Queue(_)) {
            return refuse("no hedging with server.kind = \"occ\": hedging needs a queue server");
        }
        if client.concurrency.is_some() {
            return refuse(
                "no hedging with client.concurrency: each copy would need a slot of its own",
            );
        }
        if !s.client_config(client).idempotency.may_retry() {
            return refuse(
                "no hedging with client.idempotent = false (without idempotency_key = true): every copy repeats the request, which only an idempotent one may be (gRFC A6)",
            );
        }
        if s.client_config(client).adaptive_rate.is_some() {
            return refuse(
                "no hedging with adaptive_rate: the rate limiter's token wait holds one attempt per client, and a copy would need a token of its own",
            );
        }
    }
    Ok(())
}

/// A hedging table with every key.
pub fn hedging_toml(h: &HedgeConfig) -> Value {
    let delay = match h.policy.delay {
        HedgeDelay::Fixed(d) => s(SimDuration::from(d)),
        HedgeDelay::Percentile(p) => s(format!("p{p}")),
    };
    table(vec![
        ("delay", delay),
        (
            "max_attempts",
            Value::Integer(i64::from(h.policy.max_attempts)),
        ),
        ("non_fatal", outcome_list(&h.policy.non_fatal)),
        ("cancel", s(h.cancel.name())),
    ])
}
