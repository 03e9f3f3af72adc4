//! What the charts and the report need to know of a folder's `scenario.toml`: each point's
//! capacity, fault windows, offered load and layers, read with the scenario parser itself.

use std::path::Path;

use crate::error::{Error, Result};
use crate::scenario::{Role, ScenarioDoc};
use crate::sim::workload::Workload;
use crate::sim::{Model, ServerConfig, UNLIMITED_WORKERS};

use super::numbers::{fmt_ms, fmt_number};

/// A fault window of the scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultWindow {
    /// `outage`, `errors`, `slow`.
    pub kind: String,
    /// Start, ms.
    pub start_ms: f64,
    /// End, ms.
    pub end_ms: f64,
    /// False for a window that changes nothing (`errors` with a share of 0, `slow` by 1):
    /// charts do not shade it.
    pub effective: bool,
}

/// The server's capacity as a reference line for the herd chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// Attempts the server completes per output bucket when every worker is busy.
    pub per_bucket: f64,
    /// How it was computed, for the legend.
    pub label: String,
}

/// What the charts need to know of one sweep point's scenario (or of a scenario without a
/// sweep).
#[derive(Debug, Clone)]
pub struct PointInfo {
    /// `[[faults]]` of the single server.
    pub faults: Vec<FaultWindow>,
    /// workers / mean service time × bucket, for a `queue` server with a worker limit.
    pub capacity: Option<Capacity>,
    /// Requests per second the server can complete usefully, and how that was worked out:
    /// workers / mean service time, or for a load-dependent server without a worker limit the
    /// load at which service reaches the client's timeout.
    pub capacity_rps: Option<(f64, String)>,
    /// A `poisson` workload's offered rate over time as a polyline `(ms, requests per
    /// second)`: its rate profile, 0 before it starts and after its arrivals end.
    pub offered: Option<Vec<(f64, f64)>>,
    /// The trigger whose recovery is measured, `(start, end)` in ms.
    pub trigger_ms: Option<(f64, f64)>,
    /// True for a `burst` workload (every client sends once, around the same instant).
    pub burst: bool,
    /// A `poisson_clients` workload's client count: its `workload.rate` is each client's,
    /// so the offered load is that many times the rate.
    pub rate_clients: Option<u32>,
    /// A chain's layers in call order (empty for one server).
    pub layers: Vec<LayerInfo>,
    /// The strategies as they run at this point, in the scenario's order.
    pub strategies: Vec<StrategyInfo>,
}

/// What the report's sentences need of one strategy at one point: how its sleeps are
/// jittered, what it does with a Retry-After hint, whether it hedges and cancels.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyInfo {
    /// Its name in the outputs.
    pub name: String,
    /// The jitter of its sleeps; `None` for a user-supplied delay source (not known here).
    pub jitter: Option<crate::backoff::Jitter>,
    /// What its client does with a Retry-After hint.
    pub retry_after: crate::policy::RetryAfterMode,
    /// What the server does with a copy it no longer needs, for a strategy that hedges.
    pub hedge_cancel: Option<crate::sim::hedge::Cancel>,
    /// The parts of its client that turn requests away on the client itself, even from a
    /// healthy server.
    pub shedders: Vec<Shedder>,
}

/// What the charts and the report need from `scenario.toml`, and its text.
#[derive(Debug, Clone)]
pub struct ScenarioInfo {
    /// The file as written.
    pub text: String,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `output.bucket` in ms.
    pub bucket_ms: f64,
    /// The role of each sweep key, in the order of the sweep ([`crate::scenario::roles`]).
    pub roles: Vec<Role>,
    /// `recommend.min_success`, when the scenario gives it.
    pub min_success: Option<f64>,
    /// Each sweep point's scenario as the charts need it, in grid order (one without a
    /// sweep).
    pub points: Vec<PointInfo>,
}

/// A part of a client that turns requests away before they reach the server: a policy with
/// one can fall short of its offered load on a healthy system, which a reader of its
/// verdicts should be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shedder {
    /// An adaptive throttle (`client.throttle`).
    Throttle,
    /// A circuit breaker (`client.breaker`).
    Breaker,
    /// The AWS adaptive rate limiter (`client.adaptive_rate`).
    RateLimiter,
    /// A limit on requests in flight (`client.concurrency`).
    Concurrency,
}

impl Shedder {
    /// What it does, for a sentence of the report.
    pub fn what_it_does(self) -> &'static str {
        match self {
            Shedder::Throttle => {
                "an adaptive throttle, which rejects requests on the client while its record of accepted ones is short (it starts cold)"
            }
            Shedder::Breaker => {
                "a circuit breaker, which opens on ordinary failures and refuses every request while open"
            }
            Shedder::RateLimiter => {
                "a client-side rate limiter, which holds requests back below the offered rate after throttling answers"
            }
            Shedder::Concurrency => {
                "a concurrency limit, which turns requests away while too many are in flight"
            }
        }
    }

    /// The shedders of a client configured as `c`.
    fn of(c: &crate::sim::ClientConfig) -> Vec<Shedder> {
        [
            (c.throttle.is_some(), Shedder::Throttle),
            (c.breaker.is_some(), Shedder::Breaker),
            (c.adaptive_rate.is_some(), Shedder::RateLimiter),
            (c.concurrency.is_some(), Shedder::Concurrency),
        ]
        .into_iter()
        .filter_map(|(on, s)| on.then_some(s))
        .collect()
    }
}

/// One layer of a chain as the charts draw it.
#[derive(Debug, Clone)]
pub struct LayerInfo {
    /// `layers[].name`.
    pub name: String,
    /// Its server's capacity per bucket, as [`PointInfo::capacity`].
    pub capacity: Option<Capacity>,
    /// Its fault windows.
    pub faults: Vec<FaultWindow>,
}

impl ScenarioInfo {
    /// Reads the text of a resolved scenario with the scenario parser, every sweep point
    /// checked; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<ScenarioInfo> {
        let folder = path.parent().and_then(Path::file_name).map_or_else(
            || "jitterlab run".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let error = |e: Error| Error::ResultFolder {
            path: path.to_path_buf(),
            message: match e {
                // The scenario error already names the file.
                Error::Scenario { message, .. } => message,
                other => other.to_string(),
            },
        };
        let doc = ScenarioDoc::parse(text, &path.display().to_string(), &folder).map_err(error)?;
        let base = doc.base().map_err(error)?;
        let sweep = doc.sweep().map_err(error)?;
        let bucket_ms = base.model.bucket.as_millis_f64();
        let points = doc
            .points()
            .map_err(error)?
            .iter()
            .map(|p| PointInfo::of(&p.scenario.model, &p.scenario.strategies, bucket_ms))
            .collect();
        Ok(ScenarioInfo {
            text: text.to_string(),
            name: base.name,
            description: base.description,
            bucket_ms,
            roles: sweep.roles,
            min_success: base.min_success,
            points,
        })
    }
}

impl PointInfo {
    fn of(model: &Model, strategies: &[crate::sim::Strategy], bucket_ms: f64) -> PointInfo {
        // A layer that calls another holds its workers while it waits for the layer below:
        // workers / service time is no capacity of it. Only the last layer has one.
        let calls = |i: usize| model.chain.as_ref().is_some_and(|c| i < c.hops.len());
        let layers =
            model
                .chain
                .iter()
                .flat_map(|chain| {
                    let servers = std::iter::once((&model.server, &model.faults[..]))
                        .chain(chain.hops.iter().map(|h| (&h.server, &h.faults[..])));
                    chain.names.iter().zip(servers).enumerate().map(
                        |(i, (name, (server, faults)))| LayerInfo {
                            name: name.clone(),
                            capacity: capacity(server, bucket_ms).filter(|_| !calls(i)),
                            faults: windows(faults),
                        },
                    )
                })
                .collect();
        let ms = |t: crate::time::SimTime| t.as_nanos() as f64 / 1e6;
        PointInfo {
            faults: windows(&model.faults),
            capacity: capacity(&model.server, bucket_ms).filter(|_| !calls(0)),
            capacity_rps: capacity_rps(model).filter(|_| model.chain.is_none()),
            offered: offered_rate(&model.workload),
            trigger_ms: model.trigger.map(|(a, b)| (ms(a), ms(b))),
            burst: matches!(model.workload, Workload::Burst { .. }),
            rate_clients: match model.workload {
                Workload::PoissonClients { clients, .. } => Some(clients),
                _ => None,
            },
            layers,
            strategies: (strategies.iter())
                .map(|s| {
                    let client = s.client.apply(&model.client);
                    StrategyInfo {
                        name: s.name.clone(),
                        jitter: s.source.is_none().then(|| s.backoff.jitter()),
                        retry_after: client.retry_after.mode,
                        hedge_cancel: client.hedging.map(|h| h.cancel),
                        shedders: Shedder::of(&client),
                    }
                })
                .collect(),
        }
    }
}

/// A queue server's capacity per bucket of `bucket_ms` (none for unlimited workers or OCC).
fn capacity(server: &ServerConfig, bucket_ms: f64) -> Option<Capacity> {
    match server {
        ServerConfig::Queue(q) if q.workers == UNLIMITED_WORKERS => None,
        ServerConfig::Queue(q) => {
            let (workers, service_ms) = (q.workers as f64, q.service.mean_param().as_millis_f64());
            (workers > 0.0 && service_ms > 0.0 && bucket_ms > 0.0).then(|| {
                let per_bucket = workers / service_ms * bucket_ms;
                // A rate limiter below the workers is what gets through: it answers the rest 429.
                if let Some(limit) = q
                    .rate_limit
                    .filter(|r| r.rate * bucket_ms / 1000.0 < per_bucket)
                {
                    let per_bucket = limit.rate * bucket_ms / 1000.0;
                    return Capacity {
                        per_bucket,
                        label: format!(
                            "capacity: the rate limiter's {}/s = {} attempts per bucket",
                            fmt_number(limit.rate),
                            fmt_number(per_bucket)
                        ),
                    };
                }
                Capacity {
                    per_bucket,
                    label: format!(
                        "capacity: {} workers / {} mean service = {} attempts per bucket",
                        fmt_number(workers),
                        fmt_ms(service_ms),
                        fmt_number(per_bucket)
                    ),
                }
            })
        }
        ServerConfig::Occ => None,
    }
}

/// Requests per second a server completes usefully; see [`PointInfo::capacity_rps`]. A rate
/// limiter below what the workers complete is the capacity (it answers the rest with 429).
fn capacity_rps(model: &Model) -> Option<(f64, String)> {
    let ServerConfig::Queue(q) = &model.server else {
        return None;
    };
    let limiter = q.rate_limit.map(|r| {
        let how = format!("the rate limiter's {}/s", fmt_number(r.rate));
        (r.rate, how)
    });
    match (workers_rps(model, q), limiter) {
        (Some(w), Some(l)) => Some(if l.0 < w.0 { l } else { w }),
        (w, l) => w.or(l),
    }
}

/// What `q`'s workers complete usefully per second; see [`capacity_rps`].
fn workers_rps(model: &Model, q: &crate::sim::server::QueueConfig) -> Option<(f64, String)> {
    let service_ms = q.service.mean_param().as_millis_f64();
    let contention_ms = q.contention.as_millis_f64();
    if q.workers != UNLIMITED_WORKERS && contention_ms == 0.0 && service_ms > 0.0 {
        let rps = f64::from(q.workers) / service_ms * 1000.0;
        let how = format!(
            "{} workers / {} mean service",
            q.workers,
            fmt_ms(service_ms)
        );
        return Some((rps, how));
    }
    let timeout_ms = model.client.timeout?.as_millis_f64();
    if q.workers == UNLIMITED_WORKERS && contention_ms > 0.0 && timeout_ms > service_ms {
        // Service takes service + contention per other attempt in flight: it reaches the
        // timeout at n = (timeout - service) / contention in flight, n / timeout per second.
        let n = (timeout_ms - service_ms) / contention_ms;
        let rps = n / timeout_ms * 1000.0;
        let how = format!(
            "service reaches the {} timeout at {} in flight",
            fmt_ms(timeout_ms),
            fmt_number(n)
        );
        return Some((rps, how));
    }
    None
}

/// Fault windows as the charts draw them.
fn windows(faults: &[crate::sim::faults::Fault]) -> Vec<FaultWindow> {
    use crate::sim::faults::FaultKind;
    faults
        .iter()
        .map(|f| FaultWindow {
            kind: f.kind_name().to_string(),
            start_ms: f.start.as_millis_f64(),
            end_ms: f.end.as_millis_f64(),
            effective: f.end > f.start
                && match f.kind {
                    FaultKind::Errors { share, .. } => share > 0.0,
                    FaultKind::Slow { factor } => factor != 1.0,
                    FaultKind::Outage(_) => true,
                },
        })
        .collect()
}

/// The offered rate of a `poisson` workload as a polyline; see [`PointInfo::offered`].
fn offered_rate(workload: &Workload) -> Option<Vec<(f64, f64)>> {
    let (profile, start, end) = workload.poisson_profile()?;
    let ms = |t: crate::time::SimTime| t.as_nanos() as f64 / 1e6;
    let mut line = vec![(0.0, 0.0), (ms(start), 0.0)];
    line.extend(
        profile
            .points()
            .iter()
            .filter(|p| p.0 < end)
            .map(|&(t, r)| (ms(t), r)),
    );
    line.extend([(ms(end), profile.rate_at(end)), (ms(end), 0.0)]);
    Some(line)
}
