//! The live clients: the scenario's workload (burst, open Poisson, closed loop) as tokio
//! tasks, each request driven by the simulator's client state machine
//! ([`crate::sim::client::Clients`]: the scenario's [`crate::policy::RetryPolicy`] with its
//! budget, breaker and concurrency limiter) and sent as real HTTP/1.1 requests.
//!
//! Start times, think times and Poisson gaps come from the simulator's streams, so a live run
//! and the simulated run of the same unit start the same requests at the same instants; each
//! client's jitter comes from its own stream too. What differs is time itself: sleeps wake
//! when tokio's timers fire, and answers take what the machine takes.
//!
//! Each client keeps one keep-alive connection. Burst and closed-loop clients connect before
//! time zero ([`connect_all`]), as pooled clients are already connected when an outage
//! begins; an open-loop client connects with its first attempt. A client connects again after
//! an attempt that timed out or failed (dropping an attempt closes its connection). An
//! attempt's first leg (the scenario's network latency) is slept before the request is
//! written; its timeout covers the legs, as in the simulator.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, header};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::server::{ATTEMPT_HEADER, Arrival, RETRY_AFTER_MS};
use super::state::{Inner, Shared};
use crate::policy::{Outcome, parse_retry_after};
use crate::rng::StreamFamily;
use crate::rng::StreamKind;
use crate::sim::answer::Answer;
use crate::sim::client::{Launch, Next};
use crate::sim::metrics::Ending;
use crate::sim::server::Visit;
use crate::sim::workload::{PoissonSource, Workload, burst_times, exponential};
use crate::time::{SimDuration, SimTime};

/// One client's connection to the server.
pub(crate) type Connection = Option<SendRequest<Empty<Bytes>>>;

/// One connection per client of a burst or closed loop (none for an open loop), in client
/// order; a client whose connection failed connects again with its first attempt.
pub(crate) async fn connect_all(workload: &Workload, addr: SocketAddr) -> Vec<Connection> {
    let n = match *workload {
        Workload::Burst { clients, .. } | Workload::Closed { clients, .. } => clients as usize,
        Workload::Poisson { .. } => 0,
    };
    let mut tasks = JoinSet::new();
    for c in 0..n {
        tasks.spawn(async move { (c, connect(addr).await.ok()) });
    }
    let mut connections: Vec<Connection> = (0..n).map(|_| None).collect();
    while let Some(Ok((c, connection))) = tasks.join_next().await {
        connections[c] = connection;
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
                let shared = shared.clone();
                let mut connection = connections.next().flatten();
                tasks.spawn(async move {
                    shared.lag.sleep_until(shared.instant(t)).await;
                    request(&shared, addr, c as u32, &mut connection).await;
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
                let mut connection = connections.next().flatten();
                tasks.spawn(async move {
                    let mut rng = shared.think.get(c as u64, 0);
                    let mut at = SimTime(start.as_nanos()) + exponential(&mut rng, mean);
                    loop {
                        shared.lag.sleep_until(shared.instant(at)).await;
                        let Some(number) = request(&shared, addr, c, &mut connection).await else {
                            return;
                        };
                        let mut rng = shared.think.get(c as u64, number as u64);
                        at = shared.elapsed() + exponential(&mut rng, mean);
                    }
                });
            }
        }
        Workload::Poisson {
            rate,
            start,
            duration,
        } => {
            let rng = StreamFamily::new(seed, 0, StreamKind::Arrivals).get(0, 0);
            let mut source = PoissonSource::new(rate, start, duration, rng);
            let mut next = source.next_after(SimTime(start.as_nanos()));
            while let Some(t) = next {
                shared.lag.sleep_until(shared.instant(t)).await;
                next = source.next_after(t);
                let c = {
                    let mut g = shared.peek();
                    g.network.add_client();
                    g.clients.add()
                };
                let shared = shared.clone();
                tasks.spawn(async move {
                    request(&shared, addr, c, &mut None).await;
                });
            }
        }
    }
    while tasks.join_next().await.is_some() {}
}

/// One request of client `c`, from its first attempt to its ending; returns the request's
/// number at its client (`None` if it could not begin).
async fn request(
    shared: &Shared,
    addr: SocketAddr,
    c: u32,
    connection: &mut Connection,
) -> Option<u32> {
    {
        let (mut g, now) = shared.event();
        if !g.clients.begin(c, now) {
            g.meter.ledger_fault();
            return None;
        }
        g.meter.request();
    }
    loop {
        // A concurrency-limiter slot first, as the engine's `send_attempt`.
        let queued = {
            let mut g = shared.peek();
            if g.clients.acquire_slot(c) {
                None
            } else {
                let (tx, rx) = oneshot::channel();
                g.slot_waiters.insert(c, tx);
                Some(rx)
            }
        };
        if let Some(rx) = queued {
            let _ = rx.await;
        }
        let (tag, timeout, leg, visit) = {
            let (mut g, now) = shared.event();
            match g.clients.launch(c, now) {
                Launch::Sent { tag, timeout } => {
                    g.meter.attempt();
                    let stream = g.clients.stream(c, tag);
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
                    (tag, timeout, leg, Arrival { visit, sent: now })
                }
                Launch::Refused(ending) => {
                    release_slot(&mut g);
                    return end(&mut g, now, c, ending);
                }
            }
        };
        let attempt = async {
            shared.lag.sleep(leg.to_std()).await;
            send(connection, addr, &visit).await
        };
        let result = match timeout {
            Some(t) => tokio::time::timeout(t.to_std(), attempt).await.ok(),
            None => Some(attempt.await),
        };
        let sleep = {
            let (mut g, now) = shared.event();
            let (outcome, hint) = match result {
                Some(Ok((code, hint))) => {
                    let outcome = Answer::Status(code).outcome();
                    if outcome == Outcome::Success {
                        g.meter.success();
                    }
                    (outcome, hint)
                }
                Some(Err(_)) => {
                    *connection = None;
                    (Outcome::Connection, None)
                }
                None => {
                    *connection = None;
                    // A served answer already on its way back is work nobody will use.
                    if let Some(work) = g.network.reply_work(c, tag) {
                        g.meter.wasted(work);
                    }
                    g.replies.remove(&(c, tag));
                    g.meter.timeout();
                    (Outcome::Timeout, None)
                }
            };
            release_slot(&mut g);
            match g.clients.conclude(c, now, outcome, hint) {
                Next::Sleep(sleep) => sleep,
                Next::End(ending) => return end(&mut g, now, c, ending),
            }
        };
        shared.lag.sleep(sleep.to_std()).await;
    }
}

/// Frees the caller's limiter slot, handing it to the next queued client if any.
fn release_slot(g: &mut Inner) {
    if let Some(next) = g.clients.release_slot()
        && let Some(tx) = g.slot_waiters.remove(&next)
    {
        let _ = tx.send(());
    }
}

/// Client `c`'s request ends at `now`; returns its number.
fn end(g: &mut Inner, now: SimTime, c: u32, ending: Ending) -> Option<u32> {
    let Some(request) = g.clients.end(c) else {
        g.meter.ledger_fault();
        return None;
    };
    g.meter.ending(ending, now, request.start, request.attempts);
    Some(request.number)
}

/// Sends one attempt over the client's connection (opening it if needed) and returns the
/// answer's status and Retry-After hint.
async fn send(
    connection: &mut Connection,
    addr: SocketAddr,
    arrival: &Arrival,
) -> Result<(u16, Option<SimDuration>), Box<dyn std::error::Error + Send + Sync>> {
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
    let hint = retry_after(response.headers());
    response.into_body().collect().await?;
    Ok((code, hint))
}

/// A new HTTP/1.1 connection to `addr`.
async fn connect(
    addr: SocketAddr,
) -> Result<SendRequest<Empty<Bytes>>, Box<dyn std::error::Error + Send + Sync>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, conn) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// The answer's Retry-After: `retry-after-ms` when present (exact), else `Retry-After`
/// (seconds or an HTTP date) read by the policy's parser.
fn retry_after(headers: &hyper::HeaderMap) -> Option<SimDuration> {
    if let Some(ms) = headers
        .get(RETRY_AFTER_MS)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(SimDuration::from_secs_f64(ms / 1000.0));
    }
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?;
    parse_retry_after(value, std::time::SystemTime::now())
}

/// Polls `done` until it is true, every `every`.
pub(crate) async fn until(mut done: impl FnMut() -> bool, every: Duration) {
    while !done() {
        tokio::time::sleep(every).await;
    }
}
