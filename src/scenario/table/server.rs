//! `[server]` (and a chain's `layers[i].server`): a queue server with workers, a queue, a
//! service time and its overload answers, or the optimistic-concurrency store.

use std::path::Path;

use serde::Deserialize;
use toml::Value;

use super::dist::{DistFile, dist};
use super::helpers::{
    count, count_or, count_or_value, dur, finite, header, only_for, s, status, table,
};
use crate::error::{Error, Result};
use crate::policy::RetryAfterHeader;
use crate::scenario::file::CountOr;
use crate::sim::UNLIMITED_WORKERS;
use crate::sim::dist::Dist;
use crate::sim::{QueueConfig, RateLimit, RetryAfterHint, ServerConfig};
use crate::time::SimDuration;

/// The most workers of a queue server (`server.workers`, `layers[].server.workers`).
pub const MAX_WORKERS: i64 = 10_000_000;

/// `server.kind` when absent.
pub const DEFAULT_KIND: &str = "queue";

/// `server.workers` when absent.
pub const DEFAULT_WORKERS: i64 = 100;

/// `server.queue` when absent.
pub const DEFAULT_QUEUE: u32 = 1000;

/// The mean of `server.service` when absent (exponentially distributed).
pub const DEFAULT_SERVICE_MEAN: SimDuration = SimDuration::from_millis(10);

/// `server.contention` when absent.
pub const DEFAULT_CONTENTION: &str = "0ms";

/// `server.overload_status` when absent.
pub const DEFAULT_OVERLOAD_STATUS: i64 = 503;

/// `server.retry_after` when absent: no hint.
pub const DEFAULT_RETRY_AFTER: &str = "off";

/// `server.drop_expired` when absent.
pub const DEFAULT_DROP_EXPIRED: bool = false;

/// `[server]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerFile {
    pub kind: Option<String>,
    pub workers: Option<CountOr>,
    pub queue: Option<CountOr>,
    pub service: Option<DistFile>,
    pub contention: Option<String>,
    pub overload_status: Option<i64>,
    pub retry_after: Option<String>,
    pub retry_after_header: Option<String>,
    pub rate_limit: Option<RateLimitFile>,
    pub drop_expired: Option<bool>,
}

/// `server.rate_limit`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitFile {
    pub rate: f64,
    pub burst: i64,
}

/// The server table at `table` (`server`, or a chain's `layers[i].server`).
pub fn server(table: &str, s: &ServerFile, dir: Option<&Path>) -> Result<ServerConfig> {
    let k = |key: &str| format!("{table}.{key}");
    let kind = s.kind.as_deref().unwrap_or(DEFAULT_KIND);
    match kind {
        "queue" => queue_server(table, s, dir),
        "occ" => {
            only_for(&k("workers"), &s.workers, &k("kind"), kind)?;
            only_for(&k("queue"), &s.queue, &k("kind"), kind)?;
            only_for(&k("service"), &s.service, &k("kind"), kind)?;
            only_for(&k("contention"), &s.contention, &k("kind"), kind)?;
            only_for(&k("overload_status"), &s.overload_status, &k("kind"), kind)?;
            only_for(&k("retry_after"), &s.retry_after, &k("kind"), kind)?;
            only_for(
                &k("retry_after_header"),
                &s.retry_after_header,
                &k("kind"),
                kind,
            )?;
            only_for(&k("rate_limit"), &s.rate_limit, &k("kind"), kind)?;
            only_for(&k("drop_expired"), &s.drop_expired, &k("kind"), kind)?;
            Ok(ServerConfig::Occ)
        }
        other => Err(Error::invalid(
            k("kind"),
            format!("{other:?}"),
            "\"queue\" or \"occ\"",
        )),
    }
}

/// A queue server's keys, defaults applied.
fn queue_server(table: &str, s: &ServerFile, dir: Option<&Path>) -> Result<ServerConfig> {
    let k = |key: &str| format!("{table}.{key}");
    let retry_after = retry_after_hint(&k("retry_after"), &s.retry_after)?;
    let rate_limit = s
        .rate_limit
        .as_ref()
        .map(|r| rate_limit(&k("rate_limit"), r))
        .transpose()?;
    let workers = workers(&k("workers"), &s.workers)?;
    Ok(ServerConfig::Queue(QueueConfig {
        workers,
        queue: count_or(
            &k("queue"),
            &s.queue,
            Some(DEFAULT_QUEUE),
            &["unbounded"],
            0,
        )?,
        service: dist(
            &k("service"),
            &s.service,
            Dist::Exponential {
                mean: DEFAULT_SERVICE_MEAN,
            },
            dir,
        )?,
        contention: dur(&k("contention"), &s.contention, DEFAULT_CONTENTION)?,
        overload_status: status(
            &k("overload_status"),
            s.overload_status.unwrap_or(DEFAULT_OVERLOAD_STATUS),
        )?,
        retry_after,
        retry_after_header: header(&k("retry_after_header"), &s.retry_after_header)?,
        rate_limit,
        drop_expired: s.drop_expired.unwrap_or(DEFAULT_DROP_EXPIRED),
    }))
}

/// `server.retry_after` at `key`: `"off"`, `"drain"` or a fixed duration.
fn retry_after_hint(key: &str, value: &Option<String>) -> Result<RetryAfterHint> {
    Ok(match value.as_deref().unwrap_or(DEFAULT_RETRY_AFTER) {
        "off" => RetryAfterHint::Off,
        "drain" => RetryAfterHint::Drain,
        text => RetryAfterHint::Fixed(text.parse().map_err(|_| {
            Error::invalid(
                key,
                format!("{text:?}"),
                "\"off\", \"drain\" or a duration such as \"2s\"",
            )
        })?),
    })
}

/// `server.rate_limit` at `key`.
fn rate_limit(key: &str, r: &RateLimitFile) -> Result<RateLimit> {
    Ok(RateLimit {
        rate: finite(
            &format!("{key}.rate"),
            r.rate,
            r.rate > 0.0,
            "a number of requests per second above 0",
        )?,
        burst: count(
            &format!("{key}.burst"),
            Some(r.burst),
            1,
            1,
            u32::MAX as i64,
        )?,
    })
}

/// `server.workers` at `key`: a count or `"unlimited"`.
fn workers(key: &str, value: &Option<CountOr>) -> Result<u32> {
    match value {
        Some(CountOr::Word(w)) if w == "unlimited" => Ok(UNLIMITED_WORKERS),
        Some(CountOr::Word(w)) => Err(Error::invalid(
            key,
            format!("{w:?}"),
            format!("an integer from 1 to {MAX_WORKERS}, or \"unlimited\""),
        )),
        Some(CountOr::Count(n)) => count(key, Some(*n), DEFAULT_WORKERS, 1, MAX_WORKERS),
        None => Ok(DEFAULT_WORKERS as u32),
    }
}

/// A `[server]` table with every key.
pub fn server_table(server: &ServerConfig) -> Value {
    match server {
        ServerConfig::Occ => table(vec![("kind", s("occ"))]),
        ServerConfig::Queue(q) => {
            let mut pairs = vec![
                ("kind", s("queue")),
                (
                    "workers",
                    count_or_value(
                        (q.workers != UNLIMITED_WORKERS).then_some(q.workers),
                        "unlimited",
                    ),
                ),
                ("queue", count_or_value(q.queue, "unbounded")),
                ("service", q.service.to_toml()),
                ("contention", s(q.contention)),
                ("overload_status", Value::Integer(q.overload_status as i64)),
                (
                    "retry_after",
                    match q.retry_after {
                        RetryAfterHint::Off => s("off"),
                        RetryAfterHint::Drain => s("drain"),
                        RetryAfterHint::Fixed(d) => s(d),
                    },
                ),
                ("drop_expired", Value::Boolean(q.drop_expired)),
            ];
            // Only when not the default (as the client's new keys).
            if q.retry_after_header != RetryAfterHeader::RetryAfter {
                pairs.push(("retry_after_header", s(q.retry_after_header.name())));
            }
            if let Some(r) = q.rate_limit {
                pairs.push((
                    "rate_limit",
                    table(vec![
                        ("rate", Value::Float(r.rate)),
                        ("burst", Value::Integer(r.burst as i64)),
                    ]),
                ));
            }
            table(pairs)
        }
    }
}
