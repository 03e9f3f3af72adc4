//! `jitterlab live`: the scenario run for real — real HTTP/1.1 over real sockets on the
//! loopback interface, real timers — and set beside what the simulator predicts.
//!
//! For each strategy, one after another, a fresh tokio runtime (two worker threads) starts the
//! server (`server`) on 127.0.0.1 (an ephemeral port) and runs the workload's clients
//! (`client`) against it until every request has ended (or the horizon). The server admits
//! with the simulator's queue server, the clients decide with the async executor
//! ([`crate::exec::tokio`]) running the scenario's retry policy, and the simulator's recorder
//! measures, from real timestamps (nanoseconds since the start; `state`). The result folder is the one `run` writes (CSV files,
//! charts, report; `meta.json` says `"mode": "live"`), plus `live_vs_sim.csv`
//! ([`compare`]) and the observed service times and one-way latencies ([`measure`]).
//!
//! What live mode does with the scenario, and refuses:
//! - one point: a `[sweep]` with more than one point is refused; replications beyond the
//!   first are not run (replication 0 only: its streams are those of the simulated unit
//!   it is compared with);
//! - the `queue` server only (`occ` is refused);
//! - what cannot run in real time on one machine is refused before anything starts: more
//!   than [`MAX_LIVE_CLIENTS`] clients, more than [`MAX_REQUESTS`] open-loop requests, a horizon
//!   past [`MAX_HORIZON`];
//! - the network: loopback takes microseconds, so each leg of `network.latency` is slept
//!   (the first before the request is written, the answer's before it is sent);
//! - timers: tokio's timers have a granularity (about 1 ms; measured and reported as
//!   `timer_resolution_ms`) and wake late under load; every sleep's lateness is recorded and
//!   reported (`meta.json` `timers`, the report), so a reader knows how far to trust the
//!   comparison at the scale of the scenario's delays;
//! - Ctrl-C (the [`CancelToken`]) stops the run within 50 ms: the runtime is dropped, which
//!   closes every socket and task, and nothing is written ([`Error::Interrupted`]).

mod client;
pub mod compare;
pub mod measure;
mod server;
mod state;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::metric::PerMetric;
use crate::output::csv::write_rows;
use crate::output::publish::{Claimed, RunReport};
use crate::output::rows::LiveVsSimRow;
use crate::scenario::{Scenario, ScenarioDoc};
use crate::sim::workload::Workload;
use crate::sim::{ClientConfig, Model, RunResult, Scope, ServerConfig, Strategy};
use crate::sweep::Unit;
use crate::sweep::journal::UnitRecord;
use crate::time::SimDuration;
use crate::time::SimTime;
use measure::{Lag, Observed, TimerReport};
use state::Shared;

/// Most clients of a burst or closed loop: each is a task with its own connection.
pub const MAX_LIVE_CLIENTS: u32 = 4000;
/// Most requests an open (Poisson) workload may start.
pub const MAX_REQUESTS: f64 = 50_000.0;
/// The longest horizon: a live run takes as long as it simulates, per strategy.
pub const MAX_HORIZON: SimDuration = SimDuration::from_secs(300);

/// Worker threads of each run's runtime: the server and the clients share them.
pub const THREADS: usize = 2;

/// Options of `jitterlab live`.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// Output folder (default `out/<name>`).
    pub out: Option<PathBuf>,
    /// Write into an --out folder that holds other files (only jitterlab's are replaced).
    pub force: bool,
    /// The command line, for meta.json.
    pub command: String,
}

/// What a live run did.
#[derive(Debug)]
pub struct LiveReport {
    /// The result folder, as `run` reports it.
    pub run: RunReport,
    /// Every metric of every strategy, live and simulated (`live_vs_sim.csv`).
    pub comparison: Vec<LiveVsSimRow>,
    /// Timer resolution and scheduling lag.
    pub timers: TimerReport,
    /// Replications in the scenario that were not run (only replication 0 is).
    pub replications_skipped: u32,
}

/// Refuses a scenario of more than one point, by its sweep, before any point is checked (a
/// sweep of 100000 points takes seconds to check): live mode runs one.
pub fn check_one_point(doc: &ScenarioDoc) -> Result<()> {
    check_points(doc.sweep()?.points()).map_err(|e| doc.place_value_error(e))
}

fn check_points(points: usize) -> Result<()> {
    if points > 1 {
        return Err(Error::invalid(
            "sweep",
            format!("{points} points"),
            "one point for `jitterlab live` (one live run per strategy): remove [sweep], or leave one value per key",
        ));
    }
    Ok(())
}

/// Refuses what live mode cannot run (see the module's notes), naming the key.
pub fn check_limits(model: &Model, points: usize) -> Result<()> {
    check_points(points)?;
    if model.chain.is_some() {
        return Err(Error::invalid(
            "layers",
            "a chain of services",
            "one [server] for `jitterlab live`: it serves one layer on the loopback",
        ));
    }
    check_guards(&model.client)?;
    if let ServerConfig::Occ = model.server {
        return Err(Error::invalid(
            "server.kind",
            "\"occ\"",
            "\"queue\" for `jitterlab live`",
        ));
    }
    check_workload(model)?;
    if model.horizon > MAX_HORIZON {
        return Err(Error::invalid(
            "horizon",
            model.horizon,
            format!(
                "at most {MAX_HORIZON} for `jitterlab live`, which runs in real time (each strategy in turn)"
            ),
        ));
    }
    Ok(())
}

/// Refuses the client guards the live executor has not, or cannot mix.
fn check_guards(c: &ClientConfig) -> Result<()> {
    if c.throttle.is_some() {
        return Err(Error::invalid(
            "client.throttle",
            "set",
            "\"off\" for `jitterlab live`: adaptive throttling is a simulator guard, the executors have none",
        ));
    }
    if c.hedging.is_some() {
        return Err(Error::invalid(
            "client.hedging",
            "set",
            "\"off\" for `jitterlab live`: the live clients retry, they do not hedge (hedging is simulated)",
        ));
    }
    let scopes = [
        c.budget.map(|b| b.1),
        c.breaker.map(|b| b.1),
        c.adaptive_rate.map(|r| r.1),
    ];
    let shared = c.concurrency.is_some() || scopes.contains(&Some(Scope::Shared));
    if shared && scopes.contains(&Some(Scope::Client)) {
        return Err(Error::invalid(
            "client",
            "shared and per-client guards together",
            "for `jitterlab live`, guards that are all `shared` (client.concurrency is shared too) or all `client`: a live client runs one executor, whose guards are one or the other",
        ));
    }
    Ok(())
}

/// Refuses a workload too large to run for real, or one live mode has no driver for.
fn check_workload(model: &Model) -> Result<()> {
    match model.workload {
        Workload::Burst { clients, .. } | Workload::Closed { clients, .. }
            if clients > MAX_LIVE_CLIENTS =>
        {
            return Err(Error::invalid(
                "workload.clients",
                clients,
                format!(
                    "at most {MAX_LIVE_CLIENTS} for `jitterlab live`: every client is a real task with its own connection, on this machine, in real time"
                ),
            ));
        }
        Workload::Poisson { .. } => {
            let n = model
                .workload
                .poisson_profile()
                .map_or(0.0, |(p, from, to)| {
                    p.expected_arrivals(from, to.min(SimTime(model.horizon.as_nanos())))
                });
            if n > MAX_REQUESTS {
                return Err(Error::invalid(
                    "workload.rate",
                    format!("{n:.0} expected requests"),
                    format!(
                        "a rate that starts at most {MAX_REQUESTS} requests for `jitterlab live` (over workload.duration within the horizon)"
                    ),
                ));
            }
        }
        Workload::PoissonClients { .. } => {
            return Err(Error::invalid(
                "workload.kind",
                "\"poisson_clients\"",
                "\"burst\", \"poisson\" or \"closed\" for `jitterlab live`",
            ));
        }
        _ => {}
    }
    Ok(())
}

/// The model of each strategy of `scenario`, with its own client settings (its overrides
/// over [client]). The models outlive every task of the runs: tasks are 'static, and one live
/// command runs once per process.
fn models(scenario: &Scenario) -> Vec<&'static Model> {
    scenario
        .strategies
        .iter()
        .map(|strategy| {
            let mut model = scenario.model.clone();
            model.client = strategy.client_config(&scenario.model.client);
            &*Box::leak(Box::new(model))
        })
        .collect()
}

/// The fields a live run adds to meta.json.
fn meta_extra<T: serde::Serialize>(
    timers: &T,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let mut extra = serde_json::Map::new();
    extra.insert("mode".into(), "live".into());
    extra.insert(
        "timers".into(),
        serde_json::to_value(timers)
            .map_err(|e| Error::io(crate::folder::names::META, e.into()))?,
    );
    extra.insert("replications_run".into(), 1.into());
    extra.insert(
        "network".into(),
        "loopback (127.0.0.1); each leg of network.latency slept".into(),
    );
    Ok(extra)
}

/// Runs `doc` live, one strategy after another, and writes its result folder. `progress` is
/// told which strategy starts. Once `cancel` is cancelled the run stops and nothing is
/// written ([`Error::Interrupted`]).
pub fn live(
    doc: &ScenarioDoc,
    options: &LiveOptions,
    cancel: &CancelToken,
    progress: &dyn Fn(&str),
) -> Result<LiveReport> {
    let started = Instant::now();
    let mut doc = doc.clone();
    let replications = doc.base()?.replications;
    if replications > 1 {
        doc.set_replications(1)?;
    }
    let points = doc.points()?;
    let scenario = &points[0].scenario;
    let models = models(scenario);
    for model in &models {
        // Placed where the user wrote the value, as the checker's own refusals are.
        check_limits(model, points.len()).map_err(|e| doc.place_value_error(e))?;
    }
    let folder = Claimed::claim(&doc, options.out.clone(), options.force)?;
    let plan = folder.plan();
    let seed = plan.seed;
    let lag = Arc::new(Lag::new());
    let mut resolution = Duration::ZERO;
    let (mut live, mut simulated) = (Vec::new(), Vec::new());
    let mut observed = Observed::default();
    for (s, strategy) in scenario.strategies.iter().enumerate() {
        progress(&format!(
            "live: strategy {} ({} of {})",
            strategy.name,
            s + 1,
            scenario.strategies.len()
        ));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(THREADS)
            .enable_all()
            .build()
            .map_err(|e| Error::io("tokio runtime", e))?;
        if s == 0 {
            resolution = runtime.block_on(measure::timer_resolution(51));
        }
        let (result, seen) = runtime.block_on(run_one(models[s], strategy, seed, &lag, cancel))?;
        // Closes every socket and stops every task of the run before the next.
        drop(runtime);
        let unit = Unit {
            index: s,
            point: 0,
            strategy: s,
            replication: 0,
        };
        result.conservation().map_err(|message| Error::Internal {
            run: format!("live run of {}", plan.describe_unit(unit)),
            message,
        })?;
        observed.extend(seen);
        live.push(UnitRecord::new(unit, seed, &result));
        simulated.push(
            plan.run_unit_until(unit, cancel)?
                .ok_or(Error::Interrupted)?,
        );
    }
    let names: Vec<String> = scenario.strategies.iter().map(|s| s.name.clone()).collect();
    let values = |records: &[UnitRecord]| -> Vec<PerMetric<f64>> {
        records.iter().map(PerMetric::measure).collect()
    };
    let comparison = compare::rows(&names, &values(&live), &values(&simulated));
    let timers = lag.report(resolution);
    let extra = meta_extra(&timers)?;
    let run = folder.write(
        &live,
        &options.command,
        doc.origin(),
        THREADS,
        started.elapsed().as_secs_f64(),
        extra,
        &|dir| {
            let mut files = vec![write_rows(dir, &[], &comparison)?];
            files.extend(observed.write(dir)?);
            Ok(files)
        },
    )?;
    Ok(LiveReport {
        run,
        comparison,
        timers,
        replications_skipped: replications - 1,
    })
}

/// One strategy's live run: the server and the workload until every request has ended and
/// the server is idle, or the horizon.
async fn run_one(
    model: &'static Model,
    strategy: &Strategy,
    seed: u64,
    lag: &Arc<Lag>,
    cancel: &CancelToken,
) -> Result<(RunResult, Observed)> {
    let listener = server::bind().map_err(|e| Error::io("127.0.0.1", e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("127.0.0.1", e))?;
    reachable(addr).await?;
    let shared = Arc::new(Shared::new(model, seed, lag.clone()));
    let retriers = client::Retriers::new(model, &strategy.backoff, seed)?;
    tokio::spawn(server::serve(listener, shared.clone()));
    let connections = client::connect_all(&model.workload, addr).await;
    shared.begin();
    let horizon = shared.instant(shared.horizon);
    let finished = async {
        client::run_workload(shared.clone(), addr, seed, retriers, connections).await;
        client::until(
            || shared.peek().server.in_flight() == 0,
            Duration::from_millis(1),
        )
        .await;
    };
    tokio::select! {
        _ = finished => {}
        _ = tokio::time::sleep_until(horizon.into()) => {}
        _ = client::until(|| cancel.is_cancelled(), Duration::from_millis(50)) => {
            return Err(Error::Interrupted);
        }
    }
    let end = shared.elapsed().min(shared.horizon);
    let (result, observed) = shared.finish(end);
    // Requests that never reached the server measure the machine, not the scenario.
    if result.counts.requests > 0 && result.peak_arrivals == 0 {
        return Err(unreachable(
            addr,
            format!(
                "none of the {} requests of strategy {} reached the server (every connection failed)",
                result.counts.requests,
                crate::text::shown(&strategy.name)
            ),
        ));
    }
    Ok((result, observed))
}

/// Checks that the server can be reached on the loopback before the clients start: a machine
/// without one (the interface down) fails loudly instead of measuring 0 % success.
async fn reachable(addr: std::net::SocketAddr) -> Result<()> {
    let connect = tokio::net::TcpStream::connect(addr);
    match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(unreachable(addr, e.to_string())),
        Err(_) => Err(unreachable(
            addr,
            "no answer to a connection within 5 s".into(),
        )),
    }
}

/// The error of a live run whose server could not be reached: exit code 1 (the machine, not
/// the input), nothing written.
fn unreachable(addr: std::net::SocketAddr, why: String) -> Error {
    Error::io(
        addr.to_string(),
        std::io::Error::other(format!(
            "cannot reach the live server: {why}; is the loopback interface up? nothing was written"
        )),
    )
}
