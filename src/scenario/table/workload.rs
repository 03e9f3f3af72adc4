//! `[workload]`: who sends requests and when (a burst, open Poisson arrivals, closed-loop
//! clients, or persistent Poisson clients), with rate profiles and spikes.

use serde::Deserialize;
use toml::Value;

use super::helpers::{count, dur, duration, finite, only_for, positive_dur, s, table, under};
use crate::error::{Error, Result};
use crate::sim::workload::{PoissonRate, Workload};
use crate::time::SimDuration;

/// Most clients (or open-loop requests) in one run: each is about 100 bytes of state, and
/// runs go on in parallel, one per core.
pub const MAX_SIMULATED_CLIENTS: i64 = 10_000_000;

/// `workload.kind` when absent.
pub const DEFAULT_KIND: &str = "burst";

/// `workload.start` when absent.
pub const DEFAULT_START: &str = "0s";

/// A burst's `workload.clients` when absent.
pub const DEFAULT_BURST_CLIENTS: i64 = 1000;

/// A burst's `workload.spread` when absent: every client at the same instant.
pub const DEFAULT_SPREAD: &str = "0ms";

/// `workload.clients` of the closed and `poisson_clients` kinds when absent.
pub const DEFAULT_CLIENTS: i64 = 100;

/// An open (`poisson`) workload's `workload.rate` when absent, in requests per second.
pub const DEFAULT_POISSON_RATE: f64 = 100.0;

/// Each `poisson_clients` client's `workload.rate` when absent, in requests per second.
pub const DEFAULT_CLIENT_RATE: f64 = 10.0;

/// `workload.duration` of the open kinds when absent.
pub const DEFAULT_DURATION: &str = "60s";

/// A closed client's `workload.think` when absent.
pub const DEFAULT_THINK: &str = "1s";

/// `[workload]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadFile {
    pub kind: Option<String>,
    pub clients: Option<i64>,
    pub start: Option<String>,
    pub spread: Option<String>,
    /// A number or a profile `[["0s", 40], ["20s", 80]]`; read by hand.
    pub rate: Option<toml::Value>,
    pub spike: Option<SpikeFile>,
    pub duration: Option<String>,
    pub think: Option<String>,
}

/// `workload.spike`: the base rate steps to `rate` at `at` for `length`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpikeFile {
    pub at: String,
    pub length: String,
    pub rate: f64,
}

pub fn workload(w: &WorkloadFile) -> Result<Workload> {
    let kind = w.kind.as_deref().unwrap_or(DEFAULT_KIND);
    let start = dur("workload.start", &w.start, DEFAULT_START)?;
    match kind {
        "burst" => {
            only_for("workload.rate", &w.rate, "workload.kind", kind)?;
            only_for("workload.spike", &w.spike, "workload.kind", kind)?;
            only_for("workload.duration", &w.duration, "workload.kind", kind)?;
            only_for("workload.think", &w.think, "workload.kind", kind)?;
            Ok(Workload::Burst {
                clients: count(
                    "workload.clients",
                    w.clients,
                    DEFAULT_BURST_CLIENTS,
                    1,
                    MAX_SIMULATED_CLIENTS,
                )?,
                start,
                spread: dur("workload.spread", &w.spread, DEFAULT_SPREAD)?,
            })
        }
        "poisson" => {
            only_for("workload.clients", &w.clients, "workload.kind", kind)?;
            only_for("workload.spread", &w.spread, "workload.kind", kind)?;
            only_for("workload.think", &w.think, "workload.kind", kind)?;
            let rate = poisson_rate(&w.rate, DEFAULT_POISSON_RATE, &w.spike)?;
            let duration = dur("workload.duration", &w.duration, DEFAULT_DURATION)?;
            at_most_max_requests(Workload::Poisson {
                rate,
                start,
                duration,
            })
        }
        "closed" => {
            only_for("workload.rate", &w.rate, "workload.kind", kind)?;
            only_for("workload.spike", &w.spike, "workload.kind", kind)?;
            only_for("workload.duration", &w.duration, "workload.kind", kind)?;
            only_for("workload.spread", &w.spread, "workload.kind", kind)?;
            let think = positive_dur("workload.think", &w.think, DEFAULT_THINK)?;
            Ok(Workload::Closed {
                clients: count(
                    "workload.clients",
                    w.clients,
                    DEFAULT_CLIENTS,
                    1,
                    MAX_SIMULATED_CLIENTS,
                )?,
                think,
                start,
            })
        }
        "poisson_clients" => {
            only_for("workload.spread", &w.spread, "workload.kind", kind)?;
            only_for("workload.think", &w.think, "workload.kind", kind)?;
            let clients = count(
                "workload.clients",
                w.clients,
                DEFAULT_CLIENTS,
                1,
                MAX_SIMULATED_CLIENTS,
            )?;
            // Each client's own profile: the same shape for every client.
            let rate = poisson_rate(&w.rate, DEFAULT_CLIENT_RATE, &w.spike)?;
            let duration = dur("workload.duration", &w.duration, DEFAULT_DURATION)?;
            at_most_max_requests(Workload::PoissonClients {
                clients,
                rate,
                start,
                duration,
            })
        }
        other => Err(Error::invalid(
            "workload.kind",
            format!("{other:?}"),
            "one of burst, poisson, closed, poisson_clients",
        )),
    }
}

/// An open workload whose expected requests (from all its clients) are within the limit.
pub fn at_most_max_requests(workload: Workload) -> Result<Workload> {
    let expected = workload
        .poisson_profile()
        .map_or(0.0, |(p, from, to)| p.expected_arrivals(from, to));
    if expected > MAX_SIMULATED_CLIENTS as f64 {
        return Err(Error::invalid(
            "workload.rate",
            format!("{} expected requests", expected.round()),
            "at most 10 million requests over workload.duration (from all workload.clients)",
        ));
    }
    Ok(workload)
}

/// `workload.rate` (a number, `default` when absent, or a profile) with the optional
/// `workload.spike`.
pub fn poisson_rate(
    rate: &Option<toml::Value>,
    default: f64,
    spike: &Option<SpikeFile>,
) -> Result<PoissonRate> {
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    let rate = match rate {
        None => PoissonRate::Constant(default),
        Some(toml::Value::Array(points)) => {
            if spike.is_some() {
                return Err(Error::invalid(
                    "workload.spike",
                    "given",
                    "a spike on a number workload.rate only (write the spike into the profile)",
                ));
            }
            PoissonRate::Profile(rate_profile("workload.rate", points)?)
        }
        Some(v) => match number(v) {
            Some(r) => PoissonRate::Constant(finite(
                "workload.rate",
                r,
                r > 0.0,
                "a number of requests per second above 0",
            )?),
            None => {
                return Err(Error::invalid(
                    "workload.rate",
                    v,
                    "a number of requests per second, or a profile such as [[\"0s\", 40], [\"20s\", 80]]",
                ));
            }
        },
    };
    let rate = match (rate, spike) {
        (PoissonRate::Constant(base), Some(s)) => PoissonRate::Spike {
            base,
            at: duration("workload.spike.at", &s.at)?,
            length: duration("workload.spike.length", &s.length)?,
            rate: finite(
                "workload.spike.rate",
                s.rate,
                s.rate >= 0.0,
                "a number of requests per second, at least 0",
            )?,
        },
        (rate, _) => rate,
    };
    // Validates the points (order, rates); the start does not change what is valid.
    rate.profile(SimDuration::ZERO).map_err(under("workload"))?;
    Ok(rate)
}

/// A rate profile `[[time, rate], ...]` written at `key`: times are durations, rates numbers
/// (requests per second); errors name the point, `key[2]`. Order and values are checked by
/// [`crate::sim::profile::RateProfile::new`].
pub fn rate_profile(key: &str, points: &[toml::Value]) -> Result<Vec<(SimDuration, f64)>> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let at = format!("{key}[{i}]");
            match p.as_array().map(Vec::as_slice) {
                Some([t, r]) => {
                    let t = t
                        .as_str()
                        .ok_or_else(|| Error::invalid(&at, p, "a point [\"time\", rate]"))?;
                    let r = r
                        .as_float()
                        .or_else(|| r.as_integer().map(|i| i as f64))
                        .ok_or_else(|| Error::invalid(&at, p, "a point [\"time\", rate]"))?;
                    Ok((duration(&at, t)?, r))
                }
                _ => Err(Error::invalid(
                    at,
                    p,
                    "a point [\"time\", rate]: a duration and requests per second",
                )),
            }
        })
        .collect()
}

/// `workload.rate` (and `workload.spike`) as written back.
pub fn rate_pairs(rate: &PoissonRate) -> Vec<(&'static str, Value)> {
    match rate {
        PoissonRate::Constant(r) => vec![("rate", Value::Float(*r))],
        PoissonRate::Spike {
            base,
            at,
            length,
            rate,
        } => vec![
            ("rate", Value::Float(*base)),
            (
                "spike",
                table(vec![
                    ("at", s(at)),
                    ("length", s(length)),
                    ("rate", Value::Float(*rate)),
                ]),
            ),
        ],
        PoissonRate::Profile(points) => vec![(
            "rate",
            Value::Array(
                points
                    .iter()
                    .map(|(t, r)| Value::Array(vec![s(t), Value::Float(*r)]))
                    .collect(),
            ),
        )],
    }
}
/// `[workload]` as written back: its kind and that kind's keys.
pub fn write(workload: &Workload) -> Value {
    match workload {
        Workload::Burst {
            clients,
            start,
            spread,
        } => table(vec![
            ("kind", s("burst")),
            ("clients", Value::Integer(i64::from(*clients))),
            ("start", s(start)),
            ("spread", s(spread)),
        ]),
        Workload::Poisson {
            rate,
            start,
            duration,
        } => {
            let mut pairs = vec![("kind", s("poisson"))];
            pairs.extend(rate_pairs(rate));
            pairs.extend([("start", s(start)), ("duration", s(duration))]);
            table(pairs)
        }
        Workload::Closed {
            clients,
            think,
            start,
        } => table(vec![
            ("kind", s("closed")),
            ("clients", Value::Integer(i64::from(*clients))),
            ("think", s(think)),
            ("start", s(start)),
        ]),
        Workload::PoissonClients {
            clients,
            rate,
            start,
            duration,
        } => {
            let mut pairs = vec![
                ("kind", s("poisson_clients")),
                ("clients", Value::Integer(i64::from(*clients))),
            ];
            pairs.extend(rate_pairs(rate));
            pairs.extend([("start", s(start)), ("duration", s(duration))]);
            table(pairs)
        }
    }
}
