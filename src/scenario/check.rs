//! From the raw file to a checked [`Scenario`]: defaults applied, every value validated, every
//! error naming its key as the user wrote it.
//!
//! The engine's constructors name a wrong parameter by its field (`cap`); this is where a
//! field becomes a key: `backoff.cap`, or `backoff.strategies[1].cap` when the strategy's own
//! table set it, `client.budget.capacity`, `server.service.mean`. [`super::ScenarioDoc`] then
//! places the key where its value was written (a line and column, a `--set`, a sweep point).

use std::path::{Path, PathBuf};

use super::Scenario;
use super::file::{
    AdaptiveRateFile, BackoffFile, BreakerFile, BudgetFile, ClientFile, CountOr, DistFile,
    FaultFile, HedgingFile, ScenarioFile, ServerFile, SpikeFile, ThrottleFile, WorkloadFile,
};
use crate::backoff::{Backoff, BackoffParams, DEFAULT_FACTOR, DEFAULT_GROWTH, Jitter};
use crate::error::{Error, Result};
use crate::param::{ParamError, ValueError};
use crate::policy::AdaptiveRateConfig;
use crate::policy::BreakerConfig;
use crate::policy::adaptive::{AdaptiveBucketConfig, RetryBreakerConfig};
use crate::policy::throttle::ThrottleConfig;
use crate::policy::{BudgetConfig, RatioDeposit};
use crate::policy::{HedgingPolicy, Idempotency, RetryOn};
use crate::policy::{RetryAfterHeader, RetryAfterPolicy, RetryOnItem};
use crate::sim::UNLIMITED_WORKERS;
use crate::sim::dist::{Dist, Empirical};
use crate::sim::faults::{Fault, FaultKind, OutageAnswer};
use crate::sim::hedge::{Cancel, HedgeConfig, HedgeDelay, MAX_COPIES};
use crate::sim::recovery::RecoveryConfig;
use crate::sim::workload::{PoissonRate, Workload};
use crate::sim::{
    Chain, ClientConfig, ClientOverrides, GiveUp, Hop, LayerOverrides, MAX_CALLING_WORKERS,
    MAX_LAYERS, Model, QueueConfig, RateLimit, RetryAfterHint, Scope, ServerConfig, Strategy,
};
use crate::time::{SimDuration, SimTime, parse_limit};

/// Most clients (or open-loop requests) in one run: each is about 100 bytes of state, and
/// runs go on in parallel, one per core.
pub const MAX_SIMULATED_CLIENTS: i64 = 10_000_000;

/// The most workers of a queue server (`server.workers`, `layers[].server.workers`).
pub const MAX_WORKERS: i64 = 10_000_000;

/// Most time-series buckets in one run (horizon / bucket).
pub const MAX_BUCKETS: u64 = 1_000_000;

/// The strategies compared when a file names none.
pub const DEFAULT_STRATEGIES: [Jitter; 4] = [
    Jitter::NoJitter,
    Jitter::Full,
    Jitter::Equal,
    Jitter::Decorrelated,
];

/// Names an engine error's field by its key under `table` (`client.budget` + `capacity`).
fn under(table: &str) -> impl Fn(ParamError) -> Error + '_ {
    move |e| Error::for_key(format!("{table}.{}", e.field), e)
}

fn duration(key: &str, text: &str) -> Result<SimDuration> {
    text.parse().map_err(|e| Error::for_key(key, e))
}

/// A duration for the engine, which takes [`std::time::Duration`] (exact: every
/// [`SimDuration`] fits).
fn std_duration(key: &str, text: &str) -> Result<std::time::Duration> {
    duration(key, text).map(SimDuration::to_std)
}

/// The defaults of the budget kind a scenario names (`kind = "token_bucket"`).
fn budget_defaults(kind: &str) -> Result<BudgetConfig, ValueError> {
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

fn dur(key: &str, value: &Option<String>, default: &str) -> Result<SimDuration> {
    duration(key, value.as_deref().unwrap_or(default))
}

fn positive_dur(key: &str, value: &Option<String>, default: &str) -> Result<SimDuration> {
    match dur(key, value, default)? {
        SimDuration::ZERO => Err(Error::invalid(key, "0ms", "a duration greater than 0")),
        d => Ok(d),
    }
}

fn limit(key: &str, value: &Option<String>, default: &str) -> Result<Option<SimDuration>> {
    parse_limit(value.as_deref().unwrap_or(default)).map_err(|e| Error::for_key(key, e))
}

fn count(key: &str, value: Option<i64>, default: i64, min: i64, max: i64) -> Result<u32> {
    let v = value.unwrap_or(default);
    if v < min || v > max {
        return Err(Error::invalid(
            key,
            v,
            format!("an integer from {min} to {max}"),
        ));
    }
    Ok(v as u32)
}

/// A count, or one of `words` meaning "no limit".
fn count_or(
    key: &str,
    value: &Option<CountOr>,
    default: Option<u32>,
    words: &[&str],
    min: i64,
) -> Result<Option<u32>> {
    let allowed = || format!("an integer >= {min}, or \"{}\"", words.join("\" or \""));
    match value {
        None => Ok(default),
        Some(CountOr::Count(n)) if *n >= min && *n <= u32::MAX as i64 => Ok(Some(*n as u32)),
        Some(CountOr::Count(n)) => Err(Error::invalid(key, n, allowed())),
        Some(CountOr::Word(w)) if words.contains(&w.as_str()) => Ok(None),
        Some(CountOr::Word(w)) => Err(Error::invalid(key, format!("{w:?}"), allowed())),
    }
}

fn status(key: &str, value: i64) -> Result<u16> {
    if (400..=599).contains(&value) {
        Ok(value as u16)
    } else {
        Err(Error::invalid(
            key,
            value,
            "an error status from 400 to 599",
        ))
    }
}

fn finite(key: &str, value: f64, ok: bool, allowed: &str) -> Result<f64> {
    if value.is_finite() && ok {
        Ok(value)
    } else {
        Err(Error::invalid(key, value, allowed))
    }
}

/// Refuses a key that does not belong to the chosen kind.
fn only_for<T>(key: &str, value: &Option<T>, kind_key: &str, kind: &str) -> Result<()> {
    match value {
        Some(_) => Err(Error::invalid(
            key,
            "given",
            format!("not used when {kind_key} = \"{kind}\"; remove it"),
        )),
        None => Ok(()),
    }
}

/// A distribution table; the file of an `empirical` one is read relative to `dir` (the
/// scenario file's folder; the current folder for built-ins and text).
fn dist(key: &str, file: &Option<DistFile>, default: Dist, dir: Option<&Path>) -> Result<Dist> {
    let Some(f) = file else { return Ok(default) };
    if f.dist == "empirical" {
        return empirical(key, f, dir);
    }
    only_for(
        &format!("{key}.file"),
        &f.file,
        &format!("{key}.dist"),
        &f.dist,
    )?;
    let mean = f.mean.as_deref().ok_or_else(|| {
        Error::invalid(
            format!("{key}.mean"),
            "missing",
            format!("a duration: `{}` needs `mean`", f.dist),
        )
    })?;
    let mean = duration(&format!("{key}.mean"), mean)?;
    let sd =
        f.sd.as_ref()
            .map(|s| duration(&format!("{key}.sd"), s))
            .transpose()?;
    Dist::new(&f.dist, mean, sd).map_err(under(key))
}

/// `{ dist = "empirical", file = "..." }`: the samples, read (bounded) and checked.
fn empirical(key: &str, f: &DistFile, dir: Option<&Path>) -> Result<Dist> {
    let kind = format!("{key}.dist");
    only_for(&format!("{key}.mean"), &f.mean, &kind, "empirical")?;
    only_for(&format!("{key}.sd"), &f.sd, &kind, "empirical")?;
    let file_key = format!("{key}.file");
    let name = f.file.as_deref().ok_or_else(|| {
        Error::invalid(
            &file_key,
            "missing",
            "a file of samples in milliseconds: `empirical` needs `file`",
        )
    })?;
    let path = match dir {
        Some(dir) if Path::new(name).is_relative() => dir.join(name),
        _ => PathBuf::from(name),
    };
    let text = crate::input::read_text(&path, crate::input::SAMPLES).map_err(|e| match e {
        Error::Io { source, .. } => Error::invalid(
            &file_key,
            format!("{name:?}"),
            format!("a readable file of samples ({}: {source})", path.display()),
        ),
        other => other,
    })?;
    Ok(Dist::Empirical(
        Empirical::parse(&path, &text).map_err(under(key))?,
    ))
}

fn scope(key: &str, value: &Option<String>) -> Result<Scope> {
    scope_or(key, value, Scope::Shared)
}

fn scope_or(key: &str, value: &Option<String>, default: Scope) -> Result<Scope> {
    match value.as_deref().unwrap_or(default.name()) {
        "shared" => Ok(Scope::Shared),
        "client" => Ok(Scope::Client),
        other => Err(Error::invalid(
            key,
            format!("{other:?}"),
            "\"shared\" or \"client\"",
        )),
    }
}

/// Checks a whole file. `name` is used when the file has none.
/// Files the scenario names (empirical samples) are read relative to `dir`.
pub(super) fn check(
    file: &ScenarioFile,
    fallback_name: &str,
    dir: Option<&Path>,
) -> Result<Scenario> {
    let horizon = positive_dur("horizon", &file.horizon, "120s")?;
    let replications = file.replications.unwrap_or(10);
    if !(1..=1_000_000).contains(&replications) {
        return Err(Error::invalid(
            "replications",
            replications,
            "an integer from 1 to 1000000",
        ));
    }
    let bucket = dur("output.bucket", &file.output.bucket, "10ms")?;
    if bucket == SimDuration::ZERO || horizon.as_nanos() / bucket.as_nanos() >= MAX_BUCKETS {
        return Err(Error::invalid(
            "output.bucket",
            bucket,
            format!(
                "a duration greater than 0 giving fewer than {MAX_BUCKETS} buckets over the horizon ({horizon})"
            ),
        ));
    }
    let name = file
        .name
        .clone()
        .unwrap_or_else(|| fallback_name.to_string());
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(Error::invalid(
            "name",
            format!("{name:?}"),
            "a non-empty name usable as a folder name (no slashes)",
        ));
    }
    let workload = workload(&file.workload)?;
    let (server, layer_faults, chain) = if file.layers.is_none() {
        (server("server", &file.server, dir)?, None, None)
    } else {
        let (server, faults, chain) = layers(file, dir)?;
        (server, Some(faults), Some(chain))
    };
    let latency = dist(
        "network.latency",
        &file.network.latency,
        Dist::Constant {
            mean: SimDuration::ZERO,
        },
        dir,
    )?;
    let client = client("client", &file.client)?;
    let recovery = RecoveryConfig {
        window: positive_dur("recovery.window", &file.recovery.window, "10s")?,
        tolerance: {
            let t = file.recovery.tolerance.unwrap_or(0.05);
            finite(
                "recovery.tolerance",
                t,
                (0.0..1.0).contains(&t),
                "a number from 0 to below 1 (0.05 = within 5 %)",
            )?
        },
    };
    let strategies = strategies(&file.backoff)?;
    let faults = match layer_faults {
        Some(faults) => faults,
        None => file
            .faults
            .iter()
            .enumerate()
            .map(|(i, f)| fault(&format!("faults[{i}]"), f))
            .collect::<Result<Vec<_>>>()?,
    };
    if matches!(server, ServerConfig::Occ) && !matches!(workload, Workload::Burst { .. }) {
        return Err(Error::invalid(
            "workload.kind",
            workload.kind(),
            "\"burst\" with server.kind = \"occ\" (one write per client, as in Brooker 2015)",
        ));
    }
    if latency.is_zero()
        && strategies.iter().any(|s| {
            s.backoff.jitter() == Jitter::None && s.client_config(&client).max_attempts.is_none()
        })
    {
        return Err(Error::invalid(
            "client.max_attempts",
            "\"unlimited\"",
            "a number when a strategy has jitter \"none\" and network.latency is zero: such a client would retry forever at one instant",
        ));
    }
    // The same at every calling layer, as each strategy runs it.
    if latency.is_zero()
        && let Some(chain) = &chain
    {
        for (i, st) in strategies.iter().enumerate() {
            for (j, hop) in chain.hops.iter().enumerate() {
                let overrides = st.layer(j);
                let (client, _, _) = overrides.apply(hop);
                if hop.backoff.jitter() == Jitter::None && client.max_attempts.is_none() {
                    let key = if overrides.client.max_attempts.is_some() {
                        format!("backoff.strategies[{i}].layers[{j}].max_attempts")
                    } else {
                        format!("layers[{j}].client.max_attempts")
                    };
                    return Err(Error::invalid(
                        key,
                        "\"unlimited\"",
                        "a number when the layer's backoff has jitter \"none\" and network.latency is zero: the layer would retry forever at one instant",
                    ));
                }
            }
        }
    }
    if let Some(chain) = &chain
        && let Some((i, s)) = strategies
            .iter()
            .enumerate()
            .find(|(_, s)| s.layers.len() > chain.hops.len())
    {
        return Err(Error::invalid(
            format!("backoff.strategies[{i}].layers"),
            format!("{} entries", s.layers.len()),
            format!(
                "at most {} entries, one per layer that calls another",
                chain.hops.len()
            ),
        ));
    }
    hedging_fits(&strategies, &client, &latency, &server, chain.is_some())?;
    if chain.is_none()
        && let Some(i) = strategies.iter().position(|s| !s.layers.is_empty())
    {
        return Err(Error::invalid(
            format!("backoff.strategies[{i}].layers"),
            "given",
            "nothing without [[layers]]: a scenario with one server has no layers to override",
        ));
    }
    // The trigger spans the fault windows of every layer.
    let all_faults: Vec<Fault> = faults
        .iter()
        .chain(
            chain
                .iter()
                .flat_map(|c| c.hops.iter().flat_map(|h| h.faults.iter())),
        )
        .cloned()
        .collect();
    let trigger = trigger(&all_faults, &workload);
    Ok(Scenario {
        name,
        description: file.description.clone().unwrap_or_default(),
        seed: file.seed.map_or(1, |s| s.0),
        replications,
        model: Model {
            horizon,
            workload,
            server,
            latency,
            client,
            trigger,
            faults,
            bucket,
            recovery,
            chain,
        },
        strategies,
        backoff_defaults: backoff_defaults(&file.backoff)?,
        min_success: min_success(file.recommend.as_ref())?,
    })
}

/// Hedged requests, where a strategy runs them, need what the simulator's hedging supports:
/// an instant network (a client's network link carries one attempt at a time), one queue
/// server, no concurrency limiter, no adaptive rate limiter.
fn hedging_fits(
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

/// `recommend.min_success`: a share above 0, at most 1 (absent: `recommend`'s default).
fn min_success(file: Option<&super::file::RecommendFile>) -> Result<Option<f64>> {
    match file.and_then(|r| r.min_success) {
        Some(x) if !(x > 0.0 && x <= 1.0) => Err(Error::invalid(
            "recommend.min_success",
            x,
            "a number above 0 and at most 1",
        )),
        other => Ok(other),
    }
}

/// The span whose recovery is measured: from the first fault window's start to the last
/// one's end; without faults, from the first to the last span where the workload's rate
/// profile is above its base (none when it stays above for good).
fn trigger(faults: &[Fault], workload: &Workload) -> Option<(SimTime, SimTime)> {
    let spans: Vec<(SimTime, SimTime)> = if faults.is_empty() {
        workload.trigger_windows()
    } else {
        faults.iter().map(|f| (f.start, f.end)).collect()
    };
    let start = spans.iter().map(|s| s.0).min()?;
    let end = spans.iter().map(|s| s.1).max()?;
    (end != SimTime::NEVER).then_some((start, end))
}

fn workload(w: &WorkloadFile) -> Result<Workload> {
    let kind = w.kind.as_deref().unwrap_or("burst");
    let start = dur("workload.start", &w.start, "0s")?;
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
                    1000,
                    1,
                    MAX_SIMULATED_CLIENTS,
                )?,
                start,
                spread: dur("workload.spread", &w.spread, "0ms")?,
            })
        }
        "poisson" => {
            only_for("workload.clients", &w.clients, "workload.kind", kind)?;
            only_for("workload.spread", &w.spread, "workload.kind", kind)?;
            only_for("workload.think", &w.think, "workload.kind", kind)?;
            let rate = poisson_rate(&w.rate, 100.0, &w.spike)?;
            let duration = dur("workload.duration", &w.duration, "60s")?;
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
            let think = positive_dur("workload.think", &w.think, "1s")?;
            Ok(Workload::Closed {
                clients: count("workload.clients", w.clients, 100, 1, MAX_SIMULATED_CLIENTS)?,
                think,
                start,
            })
        }
        "poisson_clients" => {
            only_for("workload.spread", &w.spread, "workload.kind", kind)?;
            only_for("workload.think", &w.think, "workload.kind", kind)?;
            let clients = count("workload.clients", w.clients, 100, 1, MAX_SIMULATED_CLIENTS)?;
            // Each client's own profile: the same shape for every client.
            let rate = poisson_rate(&w.rate, 10.0, &w.spike)?;
            let duration = dur("workload.duration", &w.duration, "60s")?;
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
fn at_most_max_requests(workload: Workload) -> Result<Workload> {
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
fn poisson_rate(
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
pub(super) fn rate_profile(key: &str, points: &[toml::Value]) -> Result<Vec<(SimDuration, f64)>> {
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

/// The server table at `table` (`server`, or a chain's `layers[i].server`).
fn server(table: &str, s: &ServerFile, dir: Option<&Path>) -> Result<ServerConfig> {
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

/// The client table at `table` (`client`, or a chain's `layers[i].client`).
/// A `retry_after_header` value at `key` (default `retry-after`).
fn header(key: &str, value: &Option<String>) -> Result<RetryAfterHeader> {
    value
        .as_deref()
        .map_or(Ok(RetryAfterHeader::RetryAfter), str::parse)
        .map_err(|e| Error::for_key(key, e))
}

/// A list of outcomes at `key` (`retry_on`, `throttling_on`), `default` when absent.
fn outcome_set(key: &str, items: &Option<Vec<RetryOnItem>>, default: RetryOn) -> Result<RetryOn> {
    match items {
        None => Ok(default),
        Some(items) => items
            .iter()
            .enumerate()
            .try_fold(RetryOn::none(), |set, (i, item)| {
                set.with_item(item)
                    .map_err(|e| Error::for_key(format!("{key}[{i}]"), e))
            }),
    }
}

/// The default throttling answers: 429 (botocore's `ThrottlingStatusCodeChecker`).
pub(super) fn throttling_default() -> RetryOn {
    RetryOn::none()
        .with_status(429)
        .expect("429 is a retryable status")
}

fn client(table: &str, c: &ClientFile) -> Result<ClientConfig> {
    let k = |key: &str| format!("{table}.{key}");
    let retry_on = outcome_set(&k("retry_on"), &c.retry_on, RetryOn::default())?;
    let throttling_on = outcome_set(&k("throttling_on"), &c.throttling_on, throttling_default())?;
    let idempotency = match (
        c.idempotent.unwrap_or(true),
        c.idempotency_key.unwrap_or(false),
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
        timeout: limit(&k("timeout"), &c.timeout, "1s")?,
        deadline: limit(&k("deadline"), &c.deadline, "off")?,
        max_attempts: count_or(
            &k("max_attempts"),
            &c.max_attempts,
            Some(5),
            &["unlimited"],
            1,
        )?,
        retry_on,
        retry_after: RetryAfterPolicy {
            mode: c
                .retry_after
                .as_deref()
                .unwrap_or("at_least")
                .parse()
                .map_err(|e| Error::for_key(k("retry_after"), e))?,
            max: limit(&k("retry_after_max"), &c.retry_after_max, "off")?.map(SimDuration::to_std),
            max_extra: limit(&k("retry_after_max_extra"), &c.retry_after_max_extra, "off")?
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

/// The keys of a hedging table.
const HEDGING_KEYS: &str = "delay, max_attempts, non_fatal, cancel";

/// A hedging table at `table` (`client.hedging`, or a strategy's
/// `backoff.strategies[i].hedging`). `delay` is required; `max_attempts` 2 by default,
/// `non_fatal` empty (gRFC A6's defaults), `cancel` "waiting".
fn hedging(table: &str, h: &HedgingFile) -> Result<HedgeConfig> {
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
        2,
        2,
        i64::from(MAX_COPIES),
    )?;
    let cancel = match h.cancel.as_deref().unwrap_or("waiting") {
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

/// An adaptive rate limiter table at `table` (`client.adaptive_rate`, or a strategy's
/// `backoff.strategies[i].adaptive_rate`); a key left out keeps botocore's value.
fn adaptive_rate(table: &str, r: &AdaptiveRateFile) -> Result<(AdaptiveRateConfig, Scope)> {
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
fn throttle(table: &str, t: &ThrottleFile) -> Result<(ThrottleConfig, Scope)> {
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
fn breaker(table: &str, b: &BreakerFile) -> Result<(BreakerConfig, Scope)> {
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

/// A budget table at `table` (`client.budget`, or a strategy's `backoff.strategies[i].budget`).
fn budget(table: &str, b: &BudgetFile) -> Result<(BudgetConfig, Scope)> {
    let key = |k: &str| format!("{table}.{k}");
    let mut config = budget_defaults(&b.kind).map_err(|e| Error::for_key(key("kind"), e))?;
    // Each kind takes its own keys; a key of another kind is a mistake worth naming.
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
    if let Some((k, _)) = given.iter().find(|(k, g)| *g && !own.contains(k)) {
        return Err(Error::invalid(
            key(k),
            "given",
            format!(
                "not used when {table}.kind = \"{}\" (its keys: {}); remove it",
                config.kind(),
                own.join(", ")
            ),
        ));
    }
    match &mut config {
        BudgetConfig::TokenBucket {
            capacity,
            retry_cost,
            timeout_cost,
            throttling_cost,
            success_refund,
        } => {
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
        }
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
    config.validate().map_err(under(table))?;
    // Brooker's two kinds are per client unless told otherwise, as in his simulator.
    let default_scope = if config.per_client_by_default() {
        Scope::Client
    } else {
        Scope::Shared
    };
    Ok((config, scope_or(&key("scope"), &b.scope, default_scope)?))
}

fn backoff_defaults(b: &BackoffFile) -> Result<BackoffParams> {
    Ok(BackoffParams {
        jitter: Jitter::Full,
        base: dur("backoff.base", &b.base, "50ms")?.to_std(),
        multiplier: b.multiplier.unwrap_or(2.0),
        cap: dur("backoff.cap", &b.cap, "2s")?.to_std(),
        growth: b.growth.unwrap_or(DEFAULT_GROWTH),
        factor: b.factor.unwrap_or(DEFAULT_FACTOR),
    })
}

fn strategies(b: &BackoffFile) -> Result<Vec<Strategy>> {
    let defaults = backoff_defaults(b)?;
    let entries: Vec<toml::Value> = match &b.strategies {
        Some(list) => list.clone(),
        None => DEFAULT_STRATEGIES
            .iter()
            .map(|j| toml::Value::String(j.name().into()))
            .collect(),
    };
    if entries.is_empty() {
        return Err(Error::invalid(
            "backoff.strategies",
            "[]",
            "a list of one or more strategies",
        ));
    }
    let mut out: Vec<Strategy> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let key = format!("backoff.strategies[{i}]");
        let strategy = match entry {
            toml::Value::String(name) => {
                let jitter = name.parse().map_err(|e| Error::for_key(&key, e))?;
                Strategy {
                    name: name.clone(),
                    backoff: backoff(
                        &key,
                        &toml::Table::new(),
                        BackoffParams { jitter, ..defaults },
                    )?,
                    client: ClientOverrides::default(),
                    layers: Vec::new(),
                    source: None,
                }
            }
            toml::Value::Table(t) => strategy_table(&key, t, defaults)?,
            other => {
                return Err(Error::invalid(
                    key,
                    other,
                    format!("a jitter name such as \"full\", or a table {{ {STRATEGY_KEYS} }}"),
                ));
            }
        };
        if out.iter().any(|s| s.name == strategy.name) {
            return Err(Error::invalid(
                format!("{key}.name"),
                format!("{:?}", strategy.name),
                "a name not used by another strategy",
            ));
        }
        out.push(strategy);
    }
    Ok(out)
}

/// Validates a strategy's parameters. A wrong one is named where its value came from: the
/// strategy's own table `t` (at `key`), or else `[backoff]`.
fn backoff(key: &str, t: &toml::Table, params: BackoffParams) -> Result<Backoff> {
    Backoff::from_params(params).map_err(|e| {
        let table = if t.contains_key(&*e.field) {
            key
        } else {
            "backoff"
        };
        under(table)(e)
    })
}

/// The keys of a strategy table: its preset, its backoff, then the client keys it may
/// override.
const STRATEGY_KEYS: &str = "name, preset, jitter, base, multiplier, cap, growth, factor, throttling_backoff, max_attempts, budget, throttle, breaker, adaptive_rate, timeout, deadline, retry_on, throttling_on, retry_after, retry_after_max, retry_after_max_extra, retry_after_header, hedging, layers";

/// A strategy's override at `key` that is a table like the `[client]` one (read as `F`), or
/// `"off"` (`None`: the strategy runs without it).
fn off_or_table<F: serde::de::DeserializeOwned>(
    key: &str,
    v: &toml::Value,
    allowed: &str,
) -> Result<Option<F>> {
    match v {
        toml::Value::String(w) if w == "off" => Ok(None),
        toml::Value::Table(_) => v
            .clone()
            .try_into()
            .map(Some)
            .map_err(|e| Error::invalid(key, v, format!("{allowed} ({e})"))),
        _ => Err(Error::invalid(key, v, format!("{allowed}, or \"off\""))),
    }
}

fn strategy_table(key: &str, t: &toml::Table, defaults: BackoffParams) -> Result<Strategy> {
    let expanded = super::presets::expand(key, t)?;
    let t = &expanded;
    let mut params = defaults;
    let mut name = None;
    let text = |k: &str, v: &toml::Value| -> Result<String> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| Error::invalid(format!("{key}.{k}"), v, "a string"))
    };
    let number = |k: &str, v: &toml::Value| -> Result<f64> {
        v.as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .ok_or_else(|| Error::invalid(format!("{key}.{k}"), v, "a number"))
    };
    let mut jitter = None;
    let mut client = ClientOverrides::default();
    let mut layers = Vec::new();
    let mut throttling = None;
    for (k, v) in t {
        let sub = format!("{key}.{k}");
        match k.as_str() {
            "name" => name = Some(text(k, v)?),
            "jitter" => {
                jitter = Some(
                    text(k, v)?
                        .parse::<Jitter>()
                        .map_err(|e| Error::for_key(&sub, e))?,
                )
            }
            "base" => params.base = std_duration(&sub, &text(k, v)?)?,
            "cap" => params.cap = std_duration(&sub, &text(k, v)?)?,
            "multiplier" => params.multiplier = number(k, v)?,
            "growth" => params.growth = number(k, v)?,
            "factor" => params.factor = number(k, v)?,
            "layers" => layers = layer_overrides(&sub, v)?,
            "hedging" => {
                client.hedging = Some(
                    off_or_table(&sub, v, "a hedging table like client.hedging")?
                        .map(|file: HedgingFile| hedging(&sub, &file))
                        .transpose()?,
                )
            }
            "throttling_backoff" => throttling = Some(v),
            k if client_override(&sub, k, v, &mut client)? => {}
            _ => {
                return Err(Error::invalid(
                    sub,
                    "given",
                    format!("one of the keys {STRATEGY_KEYS}"),
                ));
            }
        }
    }
    let jitter = jitter.ok_or_else(|| {
        Error::invalid(
            format!("{key}.jitter"),
            "missing",
            format!("one of {}", Jitter::names()),
        )
    })?;
    params.jitter = jitter;
    let backoff = backoff(key, t, params)?;
    if let Some(v) = throttling {
        client.throttling_backoff = Some(throttling_backoff(
            &format!("{key}.throttling_backoff"),
            v,
            params,
        )?);
    }
    Ok(Strategy {
        name: name.unwrap_or_else(|| jitter.name().to_string()),
        backoff,
        client,
        layers,
        source: None,
    })
}

/// A strategy's `throttling_backoff` at `key`: a table of backoff keys over the strategy's
/// own `params` (`jitter`, `base`, `multiplier`, `cap`, `growth`, `factor`), or `"off"`.
fn throttling_backoff(
    key: &str,
    v: &toml::Value,
    params: BackoffParams,
) -> Result<Option<BackoffParams>> {
    const KEYS: &str = "jitter, base, multiplier, cap, growth, factor";
    let t = match v {
        toml::Value::String(w) if w == "off" => return Ok(None),
        toml::Value::Table(t) => t,
        _ => {
            return Err(Error::invalid(
                key,
                v,
                format!("a table of {KEYS}, or \"off\""),
            ));
        }
    };
    let mut p = params;
    for (k, v) in t {
        let sub = format!("{key}.{k}");
        let text = || {
            v.as_str()
                .ok_or_else(|| Error::invalid(&sub, v, "a string"))
        };
        let number = || {
            v.as_float()
                .or_else(|| v.as_integer().map(|i| i as f64))
                .ok_or_else(|| Error::invalid(&sub, v, "a number"))
        };
        match k.as_str() {
            "jitter" => p.jitter = text()?.parse().map_err(|e| Error::for_key(&sub, e))?,
            "base" => p.base = std_duration(&sub, text()?)?,
            "cap" => p.cap = std_duration(&sub, text()?)?,
            "multiplier" => p.multiplier = number()?,
            "growth" => p.growth = number()?,
            "factor" => p.factor = number()?,
            _ => {
                return Err(Error::invalid(
                    sub,
                    "given",
                    format!("one of the keys {KEYS}"),
                ));
            }
        }
    }
    Backoff::from_params(p).map_err(under(key))?;
    Ok(Some(p))
}

/// Reads client key `k` of a strategy (or of one of its layer overrides) at `sub` into
/// `client`: false when `k` is not one of them.
fn client_override(
    sub: &str,
    k: &str,
    v: &toml::Value,
    client: &mut ClientOverrides,
) -> Result<bool> {
    match k {
        "max_attempts" => {
            let given: CountOr = v
                .clone()
                .try_into()
                .map_err(|_| Error::invalid(sub, v, "an integer >= 1, or \"unlimited\""))?;
            client.max_attempts = Some(count_or(sub, &Some(given), None, &["unlimited"], 1)?);
        }
        "budget" => {
            client.budget = Some(
                off_or_table(sub, v, "a budget table like client.budget")?
                    .map(|file: BudgetFile| budget(sub, &file))
                    .transpose()?,
            )
        }
        "throttle" => {
            client.throttle = Some(
                off_or_table(sub, v, "a throttle table like client.throttle")?
                    .map(|file: ThrottleFile| throttle(sub, &file))
                    .transpose()?,
            )
        }
        "adaptive_rate" => {
            client.adaptive_rate = Some(
                off_or_table(sub, v, "an adaptive_rate table like client.adaptive_rate")?
                    .map(|file: AdaptiveRateFile| adaptive_rate(sub, &file))
                    .transpose()?,
            )
        }
        "breaker" => {
            client.breaker = Some(
                off_or_table(sub, v, "a breaker table like client.breaker")?
                    .map(|file: BreakerFile| breaker(sub, &file))
                    .transpose()?,
            )
        }
        "timeout" | "deadline" | "retry_after_max" | "retry_after_max_extra" => {
            let given = v.as_str().ok_or_else(|| {
                Error::invalid(sub, v, "a duration in quotes such as \"3s\", or \"off\"")
            })?;
            let value = Some(limit(sub, &Some(given.to_string()), "")?);
            match k {
                "timeout" => client.timeout = value,
                "deadline" => client.deadline = value,
                "retry_after_max" => client.retry_after_max = value,
                _ => client.retry_after_max_extra = value,
            }
        }
        "retry_on" | "throttling_on" => {
            let items: Vec<RetryOnItem> = v.clone().try_into().map_err(|_| {
                Error::invalid(
                    sub,
                    v,
                    "a list of status codes and \"timeout\", \"connection\"",
                )
            })?;
            let set = outcome_set(sub, &Some(items), RetryOn::none())?;
            if k == "retry_on" {
                client.retry_on = Some(set);
            } else {
                client.throttling_on = Some(set);
            }
        }
        "retry_after" => {
            let mode = v.as_str().ok_or_else(|| {
                Error::invalid(sub, v, "one of \"ignore\", \"at_least\", \"spread\"")
            })?;
            client.retry_after = Some(mode.parse().map_err(|e| Error::for_key(sub, e))?);
        }
        "retry_after_header" => {
            let name = v.as_str().map(str::to_string);
            if name.is_none() {
                return Err(Error::invalid(
                    sub,
                    v,
                    "\"retry-after\" or \"x-amz-retry-after\"",
                ));
            }
            client.retry_after_header = Some(header(sub, &name)?);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The keys of a strategy's layer override.
const LAYER_OVERRIDE_KEYS: &str =
    "max_attempts, budget, throttle, breaker, timeout, deadline, on_give_up, propagate_deadline";

/// A strategy's `layers` list at `key`: entry `j` overrides how layer `j + 1` calls layer
/// `j + 2`.
fn layer_overrides(key: &str, v: &toml::Value) -> Result<Vec<LayerOverrides>> {
    let list = v.as_array().ok_or_else(|| {
        Error::invalid(
            key,
            v,
            format!("a list of tables {{ {LAYER_OVERRIDE_KEYS} }}, one per calling layer"),
        )
    })?;
    list.iter()
        .enumerate()
        .map(|(j, entry)| {
            let key = format!("{key}[{j}]");
            let t = entry.as_table().ok_or_else(|| {
                Error::invalid(&key, entry, format!("a table {{ {LAYER_OVERRIDE_KEYS} }}"))
            })?;
            let mut o = LayerOverrides::default();
            for (k, v) in t {
                let sub = format!("{key}.{k}");
                match k.as_str() {
                    "on_give_up" => o.on_give_up = Some(give_up(&sub, v)?),
                    "propagate_deadline" => {
                        o.propagate_deadline = Some(
                            v.as_bool()
                                .ok_or_else(|| Error::invalid(&sub, v, "true or false"))?,
                        )
                    }
                    k if client_override(&sub, k, v, &mut o.client)? => {}
                    _ => {
                        return Err(Error::invalid(
                            sub,
                            "given",
                            format!("one of the keys {LAYER_OVERRIDE_KEYS}"),
                        ));
                    }
                }
            }
            Ok(o)
        })
        .collect()
}

/// `on_give_up` at `key`.
fn give_up(key: &str, v: &toml::Value) -> Result<GiveUp> {
    match v.as_str() {
        Some("pass") => Ok(GiveUp::Pass),
        Some("do_not_retry") => Ok(GiveUp::DoNotRetry),
        _ => Err(Error::invalid(
            key,
            v,
            "\"pass\" (answer upstream with the last status received) or \"do_not_retry\" (the same status, marked so that callers never retry it)",
        )),
    }
}

/// The keys of a layer's `backoff` table.
const LAYER_BACKOFF_KEYS: [&str; 6] = ["jitter", "base", "multiplier", "cap", "growth", "factor"];

/// The checked `[[layers]]` of a chain: layer 1's server and faults (the model's own), and
/// the hops to the layers behind it.
fn layers(file: &ScenarioFile, dir: Option<&Path>) -> Result<(ServerConfig, Vec<Fault>, Chain)> {
    if file.server != ServerFile::default() {
        return Err(Error::invalid(
            "server",
            "a table",
            "no [server] table with [[layers]]: each layer has its own `server`",
        ));
    }
    if !file.faults.is_empty() {
        return Err(Error::invalid(
            "faults",
            "a list",
            "no top-level [[faults]] with [[layers]]: each layer has its own [[layers.faults]]",
        ));
    }
    let file_layers = file.layers.as_deref().unwrap_or_default();
    let n = file_layers.len();
    if n == 0 || n > MAX_LAYERS {
        return Err(Error::invalid(
            "layers",
            format!("{n} layers"),
            format!(
                "from 1 to {MAX_LAYERS} layers (`[[layers]]` tables); without a chain, leave `layers` out and describe the one server in [server]"
            ),
        ));
    }
    let defaults = backoff_defaults(&file.backoff)?;
    let mut names = Vec::with_capacity(n);
    let mut servers = Vec::with_capacity(n);
    let mut faults = Vec::with_capacity(n);
    let mut calls = Vec::with_capacity(n);
    for (i, layer) in file_layers.iter().enumerate() {
        let key = format!("layers[{i}]");
        let k = |s: &str| format!("{key}.{s}");
        let name = layer
            .name
            .clone()
            .unwrap_or_else(|| format!("layer{}", i + 1));
        if name.is_empty() || name.contains([',', '"', '\n']) || names.contains(&name) {
            return Err(Error::invalid(
                k("name"),
                format!("{name:?}"),
                "a non-empty name, used by no other layer, without commas, quotes or line breaks",
            ));
        }
        names.push(name);
        let server = server(&k("server"), &layer.server, dir)?;
        let ServerConfig::Queue(queue) = &server else {
            return Err(Error::invalid(
                k("server.kind"),
                "\"occ\"",
                "\"queue\": the layers of a chain are queue servers",
            ));
        };
        let last = i + 1 == n;
        // A calling layer's workers are the caller slots of the next layer, and the workers of
        // layer 2 and below are named in 24 bits of an event: a count, never "unlimited" (the
        // largest count, 10000000, fits).
        const _: () = assert!(MAX_WORKERS <= MAX_CALLING_WORKERS as i64);
        if (!last || i > 0) && queue.workers > MAX_CALLING_WORKERS {
            return Err(Error::invalid(
                k("server.workers"),
                "\"unlimited\"",
                format!(
                    "an integer from 1 to {MAX_WORKERS} in a chain, not \"unlimited\" (but for a lone layer: a calling layer's workers are the callers of the next, and the workers of layer 2 and below are counted); {MAX_WORKERS} is as good as unlimited"
                ),
            ));
        }
        servers.push(server);
        faults.push(
            layer
                .faults
                .iter()
                .enumerate()
                .map(|(j, f)| fault(&k(&format!("faults[{j}]")), f))
                .collect::<Result<Vec<_>>>()?,
        );
        if last {
            for (given, what) in [
                (layer.client.is_some(), "client"),
                (layer.backoff.is_some(), "backoff"),
                (layer.on_give_up.is_some(), "on_give_up"),
                (layer.propagate_deadline.is_some(), "propagate_deadline"),
            ] {
                if given {
                    return Err(Error::invalid(
                        k(what),
                        "given",
                        "nothing: the last layer does the work and calls no other",
                    ));
                }
            }
            continue;
        }
        let client = client(
            &k("client"),
            layer.client.as_ref().unwrap_or(&ClientFile::default()),
        )?;
        if client.hedging.is_some() {
            return Err(Error::invalid(
                k("client.hedging"),
                "given",
                "nothing: a layer of a chain does not hedge (hedging is for the edge clients, [client] or a strategy, without [[layers]])",
            ));
        }
        let mut table = layer.backoff.clone().unwrap_or_default();
        if let Some(bad) = table
            .keys()
            .find(|k| !LAYER_BACKOFF_KEYS.contains(&k.as_str()))
        {
            return Err(Error::invalid(
                k(&format!("backoff.{bad}")),
                "given",
                "one of the keys jitter, base, multiplier, cap, growth, factor",
            ));
        }
        // Which keys the layer set: the others follow `[backoff]` (also when a sweep changes
        // it), and the resolved file writes back only these.
        let backoff_keys: Vec<&'static str> = LAYER_BACKOFF_KEYS
            .into_iter()
            .filter(|key| table.contains_key(*key))
            .collect();
        table
            .entry("jitter")
            .or_insert_with(|| toml::Value::String("full".into()));
        // Every key present, inherited ones as `[backoff]` has them, so that a wrong value is
        // named under the layer whichever table it came from.
        let d = defaults;
        for (key, value) in [
            (
                "base",
                toml::Value::String(SimDuration::from(d.base).to_string()),
            ),
            ("multiplier", toml::Value::Float(d.multiplier)),
            (
                "cap",
                toml::Value::String(SimDuration::from(d.cap).to_string()),
            ),
            ("growth", toml::Value::Float(d.growth)),
            ("factor", toml::Value::Float(d.factor)),
        ] {
            table.entry(key).or_insert(value);
        }
        let backoff = strategy_table(&k("backoff"), &table, defaults)?.backoff;
        let on_give_up = match &layer.on_give_up {
            None => GiveUp::Pass,
            Some(text) => give_up(&k("on_give_up"), &toml::Value::String(text.clone()))?,
        };
        calls.push((
            client,
            (backoff, backoff_keys),
            on_give_up,
            layer.propagate_deadline.unwrap_or(false),
        ));
    }
    // Layer 1's server and faults are the model's own; each hop adds the next layer.
    let mut servers = servers.into_iter();
    let mut faults = faults.into_iter();
    let (Some(first), Some(first_faults)) = (servers.next(), faults.next()) else {
        return Err(Error::invalid("layers", "[]", "one layer or more"));
    };
    let hops = calls
        .into_iter()
        .zip(servers.zip(faults))
        .map(
            |(
                (client, (backoff, backoff_keys), on_give_up, propagate_deadline),
                (server, faults),
            )| Hop {
                client,
                backoff,
                backoff_keys,
                on_give_up,
                propagate_deadline,
                server,
                faults,
            },
        )
        .collect();
    Ok((first, first_faults, Chain { names, hops }))
}

fn fault(key: &str, f: &FaultFile) -> Result<Fault> {
    let start = SimTime(duration(&format!("{key}.start"), &f.start)?.as_nanos());
    let end = SimTime(duration(&format!("{key}.end"), &f.end)?.as_nanos());
    if end <= start {
        return Err(Error::invalid(
            format!("{key}.end"),
            &f.end,
            format!("a time after {key}.start ({})", f.start),
        ));
    }
    let k = |s: &str| format!("{key}.{s}");
    let kind = match f.kind.as_str() {
        "outage" => {
            only_for(&k("share"), &f.share, &k("kind"), "outage")?;
            only_for(&k("factor"), &f.factor, &k("kind"), "outage")?;
            FaultKind::Outage(match &f.status {
                None => OutageAnswer::Status(503),
                Some(CountOr::Count(n)) => OutageAnswer::Status(status(&k("status"), *n)?),
                Some(CountOr::Word(w)) if w == "drop" => OutageAnswer::Drop,
                Some(CountOr::Word(w)) if w == "reset" => OutageAnswer::Reset,
                Some(CountOr::Word(w)) => {
                    return Err(Error::invalid(
                        k("status"),
                        format!("{w:?}"),
                        "an error status from 400 to 599, \"drop\" (no answer) or \"reset\" (connection error)",
                    ));
                }
            })
        }
        "errors" => {
            only_for(&k("factor"), &f.factor, &k("kind"), "errors")?;
            let share = f
                .share
                .ok_or_else(|| Error::invalid(k("share"), "missing", "a number from 0 to 1"))?;
            let share = finite(
                &k("share"),
                share,
                (0.0..=1.0).contains(&share),
                "a number from 0 to 1",
            )?;
            let status = match &f.status {
                None => 503,
                Some(CountOr::Count(n)) => status(&k("status"), *n)?,
                Some(CountOr::Word(w)) => {
                    return Err(Error::invalid(
                        k("status"),
                        format!("{w:?}"),
                        "an error status from 400 to 599",
                    ));
                }
            };
            FaultKind::Errors { share, status }
        }
        "slow" => {
            only_for(&k("share"), &f.share, &k("kind"), "slow")?;
            only_for(&k("status"), &f.status, &k("kind"), "slow")?;
            let factor = f.factor.ok_or_else(|| {
                Error::invalid(
                    k("factor"),
                    "missing",
                    "a number above 0 (3 = three times slower)",
                )
            })?;
            FaultKind::Slow {
                factor: finite(
                    &k("factor"),
                    factor,
                    factor > 0.0 && factor <= 1e6,
                    "a number above 0 and at most 1000000",
                )?,
            }
        }
        other => {
            return Err(Error::invalid(
                k("kind"),
                format!("{other:?}"),
                "one of outage, errors, slow",
            ));
        }
    };
    Ok(Fault { kind, start, end })
}
