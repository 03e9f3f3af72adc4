//! The live clients: the scenario's workload (burst, open Poisson, closed loop) as tokio
//! tasks, each request run by the async executor ([`AsyncRetrier`]: the scenario's
//! [`crate::policy::RetryPolicy`] with its budget, breaker and concurrency limit, the code
//! a user ships) around a real HTTP/1.1 request.
//!
//! Start times, think times and Poisson gaps come from the simulator's streams, so a live run
//! and the simulated run of the same unit start the same requests at the same instants. Each
//! client has a retrier of its own whose jitter is the simulator's stream for that client,
//! so the two draw the same sleeps; when the scenario shares a guard (a `shared` budget or
//! breaker, `client.concurrency`), all clients share one retrier, as they would share one SDK
//! client, and draw their sleeps from its one stream in the order they ask (the simulator
//! still draws per client: equally distributed sleeps, not the same ones). A scenario that
//! mixes shared and per-client guards is refused ([`super::check_limits`]). What differs
//! beyond that is time itself: sleeps wake when tokio's timers fire, and answers take what
//! the machine takes.
//!
//! Each client keeps one keep-alive connection. Burst and closed-loop clients connect before
//! time zero ([`connect_all`]), as pooled clients are already connected when an outage
//! begins; an open-loop client connects with its first attempt. A client connects again after
//! an attempt that timed out or failed (dropping an attempt closes its connection). An
//! attempt's first leg (the scenario's network latency) is slept before the request is
//! written; its timeout (the executor's) covers the legs, as in the simulator.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, header};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use super::server::{ATTEMPT_HEADER, Arrival};
use super::state::{Inner, Shared};
use crate::backoff::Backoff;
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::exec::tokio::AsyncRetrier;
use crate::exec::{AttemptEvent, Classify, Retrier, RetryError};
use crate::policy::{Breaker, Budget, Outcome, StopReason};
use crate::rng::{SimRng, StreamFamily, StreamKind};
use crate::sim::answer::Answer;
use crate::sim::run_result::Ending;
use crate::sim::server::Visit;
use crate::sim::workload::{PoissonSource, Workload, burst_times, exponential};
use crate::sim::{Model, Scope};
use crate::time::{SimDuration, SimTime};

/// One client's connection to the server (none before the first or after a failed attempt),
/// which its attempts take in turn.
pub(crate) type Connection = Arc<tokio::sync::Mutex<Option<SendRequest<Empty<Bytes>>>>>;

/// The retriers of a run's clients (see the module's notes).
pub(crate) enum Retriers {
    /// One retrier shared by every client.
    Shared(Arc<AsyncRetrier>),
    /// One retrier per client, made as the client appears.
    Own {
        model: &'static Model,
        backoff: Box<Backoff>,
        jitter: StreamFamily,
    },
}

impl Retriers {
    /// The retriers for `backoff` on `model`, jitter from replication 0 of `seed`.
    pub fn new(model: &'static Model, backoff: &Backoff, seed: u64) -> Result<Retriers> {
        let jitter = StreamFamily::new(seed, 0, StreamKind::Jitter);
        let c = &model.client;
        let shared = c.concurrency.is_some()
            || matches!(c.budget, Some((_, Scope::Shared)))
            || matches!(c.breaker, Some((_, Scope::Shared)));
        Ok(if shared {
            // One stream for all, past every client's entity.
            Retriers::Shared(Arc::new(retrier(model, backoff, jitter.get(u64::MAX, 0))?))
        } else {
            // Made once here, so that `client` below cannot fail.
            retrier(model, backoff, jitter.get(0, 0))?;
            Retriers::Own {
                model,
                backoff: Box::new(backoff.clone()),
                jitter,
            }
        })
    }

    /// Client `c`'s retrier.
    fn client(&self, c: u32) -> Arc<AsyncRetrier> {
        match self {
            Retriers::Shared(r) => r.clone(),
            Retriers::Own {
                model,
                backoff,
                jitter,
            } => Arc::new(
                retrier(model, backoff, jitter.get(c as u64, 0))
                    .expect("the same settings made a retrier in Retriers::new"),
            ),
        }
    }
}

/// A retrier of the scenario's client settings with `backoff`, drawing jitter from `rng`.
fn retrier(model: &Model, backoff: &Backoff, rng: SimRng) -> Result<AsyncRetrier> {
    let c = &model.client;
    let mut r =
        Retrier::with_rng(c.retry_policy(backoff.clone()), rng)?.with_idempotency(c.idempotency);
    if let Some((budget, _)) = c.budget {
        r = r.with_budget(Budget::new(budget)?);
    }
    if let Some((breaker, _)) = c.breaker {
        r = r.with_breaker(Breaker::new(breaker)?);
    }
    if let Some((rate, _)) = c.adaptive_rate {
        r = r.with_rate_limiter(rate)?;
    }
    let r = AsyncRetrier::new(r);
    Ok(match c.concurrency {
        Some(n) => r.with_concurrency_limit(n)?,
        None => r,
    })
}

/// How an attempt failed, as the executor classifies it.
#[derive(Debug)]
enum Failure {
    /// An error status, with the answer's `Retry-After` if any.
    Status {
        code: u16,
        retry_after: Option<String>,
    },
    /// The connection failed or was closed (a reset).
    Connection,
}

impl Classify for Failure {
    fn outcome(&self) -> Outcome {
        match self {
            Failure::Status { code, .. } => Answer::Status(*code).outcome(),
            Failure::Connection => Outcome::Connection,
        }
    }

    fn retry_after(&self) -> Option<&str> {
        match self {
            Failure::Status { retry_after, .. } => retry_after.as_deref(),
            _ => None,
        }
    }
}

/// One connection per client of a burst or closed loop (none for an open loop), in client
/// order; a client whose connection failed connects again with its first attempt.
pub(crate) async fn connect_all(workload: &Workload, addr: SocketAddr) -> Vec<Connection> {
    let n = match *workload {
        Workload::Burst { clients, .. } | Workload::Closed { clients, .. } => clients as usize,
        Workload::Poisson { .. } | Workload::PoissonClients { .. } => 0,
    };
    let mut tasks = JoinSet::new();
    for c in 0..n {
        tasks.spawn(async move { (c, connect(addr).await.ok()) });
    }
    let mut connections: Vec<Connection> = (0..n).map(|_| Connection::default()).collect();
    while let Some(Ok((c, connection))) = tasks.join_next().await {
        connections[c] = Arc::new(tokio::sync::Mutex::new(connection));
    }
    connections
}

/// Runs the scenario's workload against the server at `addr` until every request has ended
/// (for a closed loop: never; the caller stops it at the horizon). `connections` are those
/// of [`connect_all`].
pub(crate) async fn run_workload(
    shared: Arc<Shared>,
    addr: SocketAddr,
    seed: u64,
    retriers: Retriers,
    connections: Vec<Connection>,
) {
    let model = shared.model;
    let mut tasks = JoinSet::new();
    let mut connections = connections.into_iter();
    match model.workload {
        Workload::Burst {
            clients,
            start,
            spread,
        } => {
            for (c, t) in burst_times(clients, start, spread, seed, 0)
                .into_iter()
                .enumerate()
            {
                let c = c as u32;
                let shared = shared.clone();
                let connection = connections.next().unwrap_or_default();
                let retrier = retriers.client(c);
                tasks.spawn(async move {
                    shared.lag.sleep_until(shared.instant(t)).await;
                    request(&shared, addr, c, &connection, &retrier).await;
                });
            }
        }
        Workload::Closed {
            clients,
            think,
            start,
        } => {
            let mean = think.as_nanos() as f64;
            for c in 0..clients {
                let shared = shared.clone();
                let connection = connections.next().unwrap_or_default();
                let retrier = retriers.client(c);
                tasks.spawn(async move {
                    let mut rng = shared.think.get(c as u64, 0);
                    let mut at = SimTime(start.as_nanos()) + exponential(&mut rng, mean);
                    loop {
                        shared.lag.sleep_until(shared.instant(at)).await;
                        let Some(number) = request(&shared, addr, c, &connection, &retrier).await
                        else {
                            return;
                        };
                        let mut rng = shared.think.get(c as u64, number as u64);
                        at = shared.elapsed() + exponential(&mut rng, mean);
                    }
                });
            }
        }
        Workload::Poisson { .. } => {
            let rng = StreamFamily::new(seed, 0, StreamKind::Arrivals).get(0, 0);
            let (profile, _, end) = model
                .workload
                .poisson_profile()
                .expect("a checked Poisson workload has a profile");
            let mut source = PoissonSource::new(&profile, end, rng);
            let mut next = source.next();
            while let Some(t) = next {
                shared.lag.sleep_until(shared.instant(t)).await;
                next = source.next();
                let c = {
                    let mut g = shared.peek();
                    g.network.add_client();
                    g.ledger.add()
                };
                let shared = shared.clone();
                let retrier = retriers.client(c);
                tasks.spawn(async move {
                    request(&shared, addr, c, &Connection::default(), &retrier).await;
                });
            }
        }
        // Refused by `check_limits`: persistent sources are not run live.
        Workload::PoissonClients { .. } => {}
    }
    while tasks.join_next().await.is_some() {}
}

/// One request of client `c`, from its first attempt to its ending, run by `retrier`;
/// returns the request's number at its client (`None` if it could not begin).
async fn request(
    shared: &Shared,
    addr: SocketAddr,
    c: u32,
    connection: &Connection,
    retrier: &AsyncRetrier,
) -> Option<u32> {
    {
        let (mut g, now) = shared.event();
        if !g.ledger.begin(c, now) {
            g.recorder.ledger_fault();
            return None;
        }
        g.recorder.request();
    }
    // When the executor's backoff sleep should end, to measure how late it woke.
    let due: Mutex<Option<Instant>> = Mutex::new(None);
    // The run is stopped by dropping its runtime, never by this token.
    let result = retrier
        .retry(
            &CancelToken::new(),
            |ctx| {
                if let Some(due) = due.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    shared.lag.record(due);
                }
                attempt(shared, addr, c, connection.clone(), ctx.timeout)
            },
            |event| {
                *due.lock().unwrap_or_else(|p| p.into_inner()) =
                    event.sleep().map(|sleep| Instant::now() + sleep);
                observe(shared, c, connection, event);
            },
        )
        .await;
    let ending = match result {
        Ok(()) => Ending::Succeeded,
        Err(RetryError::Stopped { reason, .. } | RetryError::TimedOut { reason, .. }) => {
            match reason {
                StopReason::NotRetryable => Ending::Failed,
                StopReason::Attempts => Ending::GaveUpAttempts,
                StopReason::Budget => Ending::GaveUpBudget,
                // The deadline passed, or the next sleep would pass it.
                _ => Ending::GaveUpDeadline,
            }
        }
        Err(RetryError::BreakerOpen { .. }) => Ending::RejectedByBreaker,
        // Never cancelled: the request stays unfinished.
        Err(RetryError::Cancelled { .. }) => return None,
    };
    let (mut g, now) = shared.event();
    end(&mut g, now, c, ending)
}

/// One attempt of client `c`: counted, its first leg slept, sent over its connection.
async fn attempt(
    shared: &Shared,
    addr: SocketAddr,
    c: u32,
    connection: Connection,
    timeout: Option<Duration>,
) -> std::result::Result<(), Failure> {
    let (leg, arrival) = {
        let (mut g, now) = shared.event();
        if let Some(t) = timeout {
            g.armed = g.armed.max(now + SimDuration::from_std(t));
        }
        let tag = g.ledger.send(c);
        g.recorder.attempt();
        let stream = g.ledger.stream(c, tag);
        let leg = if g.network.is_instant() {
            SimDuration::ZERO
        } else {
            g.network.first_leg(c, stream)
        };
        let visit = Visit {
            client: c,
            tag,
            stream,
        };
        (leg, Arrival { visit, sent: now })
    };
    shared.lag.sleep(leg.to_std()).await;
    let mut connection = connection.lock().await;
    match send(&mut connection, addr, &arrival).await {
        Ok((code, _)) if Answer::Status(code).outcome() == Outcome::Success => Ok(()),
        Ok((code, retry_after)) => Err(Failure::Status { code, retry_after }),
        Err(_) => {
            *connection = None;
            Err(Failure::Connection)
        }
    }
}

/// The executor's report of client `c`'s attempt: the client stops waiting for it, and the
/// recorder counts a success or a timeout (whose answer, if already on its way, was wasted work).
fn observe(shared: &Shared, c: u32, connection: &Connection, event: &AttemptEvent<'_, Failure>) {
    // A stop before an attempt: no attempt to settle, the request's ending says the rest.
    let Some(outcome) = event.outcome else {
        return;
    };
    let (mut g, _) = shared.event();
    let tag = g.ledger.latest(c);
    g.ledger.settle(c);
    match outcome {
        Outcome::Success => g.recorder.success(),
        Outcome::Timeout => {
            if let Some(work) = g.network.reply_work(c, tag) {
                g.recorder.wasted(work);
            }
            g.replies.remove(&(c, tag));
            g.recorder.timeout();
            // The cut-off attempt left its connection mid-request: the next one reconnects.
            if let Ok(mut connection) = connection.try_lock() {
                *connection = None;
            }
        }
        _ => {}
    }
}

/// Client `c`'s request ends at `now`; returns its number.
fn end(g: &mut Inner, now: SimTime, c: u32, ending: Ending) -> Option<u32> {
    let Some(request) = g.ledger.end(c) else {
        g.recorder.ledger_fault();
        return None;
    };
    g.recorder
        .ending(ending, now, request.start, request.attempts);
    Some(request.number)
}

/// Sends one attempt over the connection (opening it if needed) and returns the answer's
/// status and `Retry-After` header.
async fn send(
    connection: &mut Option<SendRequest<Empty<Bytes>>>,
    addr: SocketAddr,
    arrival: &Arrival,
) -> std::result::Result<(u16, Option<String>), Box<dyn std::error::Error + Send + Sync>> {
    if connection.as_ref().is_none_or(|s| s.is_closed()) {
        *connection = Some(connect(addr).await?);
    }
    let sender = connection.as_mut().expect("opened above");
    sender.ready().await?;
    let request = Request::builder()
        .uri("/")
        .header(header::HOST, addr.to_string())
        .header(ATTEMPT_HEADER, arrival.header())
        .body(Empty::<Bytes>::new())?;
    let response = sender.send_request(request).await?;
    let code = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    response.into_body().collect().await?;
    Ok((code, retry_after))
}

/// A new HTTP/1.1 connection to `addr`.
async fn connect(
    addr: SocketAddr,
) -> std::result::Result<SendRequest<Empty<Bytes>>, Box<dyn std::error::Error + Send + Sync>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// Polls `done` until it is true, every `every`.
pub(crate) async fn until(mut done: impl FnMut() -> bool, every: Duration) {
    while !done() {
        tokio::time::sleep(every).await;
    }
}
