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
    let kind = s.kind.as_deref().unwrap_or("queue");
    match kind {
        "queue" => {
            let retry_after = match s.retry_after.as_deref().unwrap_or("off") {
                "off" => RetryAfterHint::Off,
                "drain" => RetryAfterHint::Drain,
                text => RetryAfterHint::Fixed(text.parse().map_err(|_| {
                    Error::invalid(
                        k("retry_after"),
                        format!("{text:?}"),
                        "\"off\", \"drain\" or a duration such as \"2s\"",
                    )
                })?),
            };
            let rate_limit = match &s.rate_limit {
                None => None,
                Some(r) => Some(RateLimit {
                    rate: finite(
                        &k("rate_limit.rate"),
                        r.rate,
                        r.rate > 0.0,
                        "a number of requests per second above 0",
                    )?,
                    burst: count(&k("rate_limit.burst"), Some(r.burst), 1, 1, u32::MAX as i64)?,
                }),
            };
            let workers = match &s.workers {
                Some(CountOr::Word(w)) if w == "unlimited" => UNLIMITED_WORKERS,
                Some(CountOr::Word(w)) => {
                    return Err(Error::invalid(
                        k("workers"),
                        format!("{w:?}"),
                        format!("an integer from 1 to {MAX_WORKERS}, or \"unlimited\""),
                    ));
                }
                Some(CountOr::Count(n)) => count(&k("workers"), Some(*n), 100, 1, MAX_WORKERS)?,
                None => 100,
            };
            Ok(ServerConfig::Queue(QueueConfig {
                workers,
                queue: count_or(&k("queue"), &s.queue, Some(1000), &["unbounded"], 0)?,
                service: dist(
                    &k("service"),
                    &s.service,
                    Dist::Exponential {
                        mean: SimDuration::from_millis(10),
                    },
                    dir,
                )?,
                contention: dur(&k("contention"), &s.contention, "0ms")?,
                overload_status: status(&k("overload_status"), s.overload_status.unwrap_or(503))?,
                retry_after,
                retry_after_header: header(&k("retry_after_header"), &s.retry_after_header)?,
                rate_limit,
                drop_expired: s.drop_expired.unwrap_or(false),
            }))
        }
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
