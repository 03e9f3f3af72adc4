//! The live server: an HTTP/1.1 server on 127.0.0.1 (an ephemeral port) that implements the
//! scenario's queue server with the simulator's own admission ([`Server::admit`]).
//!
//! An arriving request names its attempt in the `x-jitterlab-attempt` header (client, tag,
//! the key of its random streams, and when its first leg began). The server admits it as the
//! simulator would: serve it now (a worker permit), let it wait (the waiting room), or turn
//! it away with the overload status, a rate-limit 429 or a fault's answer, with its
//! Retry-After hint. A served attempt's service time is drawn from the attempt's own stream
//! (the simulator's service demand for the same request's same attempt) and spent as a tokio
//! timer by a worker task, which then takes the next waiting attempt. Fault windows are
//! placed in wall-clock time from the start of the run.
//!
//! The hint goes out as `Retry-After` in whole seconds, rounded up: HTTP allows nothing finer,
//! so a hint the simulator hands over to the nanosecond (a rate limiter's, `"drain"`) reaches
//! a live client coarser. A connection-reset answer closes the connection; an outage that
//! drops never answers. The answer travels back after the scenario's network leg, slept by the
//! handler (loopback itself takes microseconds).

use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::Empty;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::oneshot;

use super::state::{Inner, Reply, Shared};
use crate::sim::answer::Answer;
use crate::sim::server::{Admission, Visit};
use crate::time::{SimDuration, SimTime};

/// The header that names an attempt: `client tag stream_key stream_sub sent_ns`.
pub(crate) const ATTEMPT_HEADER: &str = "x-jitterlab-attempt";

/// An attempt as it arrives: the server's view ([`Visit`]) and when its first leg began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arrival {
    pub visit: Visit,
    pub sent: SimTime,
}

impl Arrival {
    /// The header value.
    pub fn header(&self) -> String {
        let v = self.visit;
        format!(
            "{} {} {} {} {}",
            v.client,
            v.tag,
            v.stream.0,
            v.stream.1,
            self.sent.as_nanos()
        )
    }

    /// Parses a header value; `None` when malformed.
    pub fn parse(text: &str) -> Option<Arrival> {
        let mut it = text.split(' ');
        let mut next = || it.next()?.parse::<u64>().ok();
        let (client, tag, key, sub, sent) = (next()?, next()?, next()?, next()?, next()?);
        Some(Arrival {
            visit: Visit {
                client: u32::try_from(client).ok()?,
                tag: u32::try_from(tag).ok()?,
                stream: (key, sub),
            },
            sent: SimTime(sent),
        })
    }
}

/// What the handler does after admission.
#[derive(Debug)]
pub(crate) enum Answering {
    /// Wait for a worker to finish the attempt's service.
    Served(oneshot::Receiver<Reply>),
    /// Answer at once.
    Now(Reply),
    /// Never answer (an outage that drops).
    Never,
}

/// Admits an arriving attempt at `now`, as the engine's `arrive` does: counts the arrival,
/// asks the server, starts a worker for an attempt served at once, and registers the
/// handler for an attempt that will be served.
pub(crate) fn admit(
    shared: &Arc<Shared>,
    g: &mut Inner,
    now: SimTime,
    arrival: Arrival,
) -> Answering {
    let v = arrival.visit;
    g.observed
        .latency(now.saturating_since(arrival.sent).as_nanos());
    let first = g.ledger.is_first(v.client, v.tag);
    g.recorder.arrival(first);
    match g.server.admit(now, v) {
        Admission::Serve { slot, service } => {
            tokio::spawn(worker(shared.clone(), slot, service));
            served(g, v)
        }
        Admission::Wait => served(g, v),
        Admission::Reject { answer, hint } => {
            g.recorder.rejection(hint.is_some());
            Answering::Now((answer, hint, 0))
        }
        Admission::Drop => {
            g.recorder.dropped();
            Answering::Never
        }
        // `live` refuses the OCC server before the run.
        Admission::Read { .. } => Answering::Now((Answer::Status(500), None, 0)),
    }
}

fn served(g: &mut Inner, v: Visit) -> Answering {
    let (tx, rx) = oneshot::channel();
    g.replies.insert((v.client, v.tag), tx);
    Answering::Served(rx)
}

/// A worker serving `slot`: spends the service time as a timer, answers the attempt if its
/// client still waits (else the work was wasted), then takes the next waiting attempt, as
/// the engine's `service_done` does.
async fn worker(shared: Arc<Shared>, slot: u32, mut service: SimDuration) {
    loop {
        let began = std::time::Instant::now();
        shared.lag.sleep(service.to_std()).await;
        let spent = began.elapsed();
        let (mut g, now) = shared.event();
        let g = &mut *g;
        g.observed.service(spent);
        let job = g.server.depart(slot);
        let work = spent.as_nanos() as u64;
        // The answer goes back only to a client still waiting on its channel.
        let reply = (g.replies.remove(&(job.client, job.tag)))
            .filter(|_| g.ledger.awaits(job.client, job.tag));
        g.recorder.work(work, reply.is_some());
        if let Some(tx) = reply {
            let _ = tx.send((Answer::OK, None, work));
        }
        let ledger = &g.ledger;
        let Some((c, tag)) = g
            .server
            .next_waiting(slot, false, |c, tag| ledger.awaits(c, tag))
        else {
            return;
        };
        let visit = Visit {
            client: c,
            tag,
            stream: g.ledger.stream(c, tag),
        };
        service = g.server.serve(now, slot, visit);
    }
}

/// Handles one request: admission, the wait for service, the reply leg, the answer.
async fn handle(
    shared: Arc<Shared>,
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Empty<Bytes>>, std::io::Error> {
    let arrival = request
        .headers()
        .get(ATTEMPT_HEADER)
        .and_then(|h| h.to_str().ok())
        .and_then(Arrival::parse);
    let Some(arrival) = arrival else {
        return Ok(status(StatusCode::BAD_REQUEST.as_u16(), None));
    };
    let answering = {
        let (mut g, now) = shared.event();
        admit(&shared, &mut g, now, arrival)
    };
    let (answer, hint, work) = match answering {
        Answering::Now(reply) => reply,
        Answering::Served(rx) => match rx.await {
            Ok(reply) => reply,
            // The client stopped waiting: nobody reads an answer.
            Err(_) => return Err(std::io::Error::other("attempt no longer awaited")),
        },
        Answering::Never => std::future::pending().await,
    };
    let v = arrival.visit;
    let leg = {
        let mut g = shared.peek();
        if g.network.is_instant() || !g.ledger.awaits(v.client, v.tag) {
            SimDuration::ZERO
        } else {
            g.network.reply_leg(v.client, v.tag, work, answer, hint)
        }
    };
    shared.lag.sleep(leg.to_std()).await;
    match answer {
        // A do-not-retry answer only comes from a layer of a chain, which `live` refuses.
        Answer::Status(code) | Answer::NoRetry(code) => Ok(status(code, hint)),
        // An error from the service makes hyper close the connection: the client sees a
        // connection error, as from a reset.
        Answer::Reset => Err(std::io::Error::other("connection reset by a fault")),
    }
}

/// An empty response with `code` and the hint's headers.
fn status(code: u16, hint: Option<SimDuration>) -> Response<Empty<Bytes>> {
    let mut response = Response::new(Empty::new());
    *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_GATEWAY);
    if let Some(h) = hint {
        let headers = response.headers_mut();
        let ns = h.as_nanos();
        let secs = ns.div_ceil(1_000_000_000);
        headers.insert(hyper::header::RETRY_AFTER, secs.into());
    }
    response
}

/// Binds 127.0.0.1 on an ephemeral port with a backlog for a herd of connections.
pub(crate) fn bind() -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    socket.listen(8192)
}

/// Accepts connections until the run's runtime stops, serving each on its own task.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| handle(shared.clone(), req));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    //! The live server's admission: the simulator's decisions, routed to handlers and
    //! workers, on a paused tokio clock.

    use super::*;
    use crate::scenario::ScenarioDoc;

    fn shared(text: &str) -> Arc<Shared> {
        let doc = ScenarioDoc::parse(text, "<test>", "test").unwrap();
        let scenario = doc.base().unwrap();
        let model: &'static _ = Box::leak(Box::new(scenario.model));
        Arc::new(Shared::new(
            model,
            1,
            Arc::new(super::super::measure::Lag::new()),
        ))
    }

    fn arrival(c: u32) -> Arrival {
        Arrival {
            visit: Visit {
                client: c,
                tag: 1,
                stream: ((c as u64) << 32 | 1, 1),
            },
            sent: SimTime::ZERO,
        }
    }

    /// Begins client `c`'s request and sends its first attempt.
    fn launch(g: &mut Inner, c: u32) {
        assert!(g.ledger.begin(c, SimTime::ZERO));
        assert_eq!(g.ledger.send(c), 1);
        assert!(g.ledger.is_first(c, 1));
    }

    const QUEUE: &str = "[workload]\nclients = 4\n[server]\nworkers = 2\nqueue = 1\nservice = { dist = \"constant\", mean = \"10ms\" }\noverload_status = 429\nretry_after = \"2s\"\n";

    #[tokio::test(start_paused = true)]
    async fn workers_serve_the_waiting_room_waits_and_overload_is_answered_with_its_hint() {
        let s = shared(QUEUE);
        let mut answers = Vec::new();
        {
            let (mut g, now) = s.event();
            for c in 0..4 {
                launch(&mut g, c);
                answers.push(admit(&s, &mut g, now, arrival(c)));
            }
            assert_eq!(g.server.in_flight(), 3, "two in service, one waiting");
        }
        let mut answers = answers.into_iter();
        let mut next = || answers.next().unwrap();
        let (a, b, waiting, overloaded) = (next(), next(), next(), next());
        match overloaded {
            Answering::Now((answer, hint, work)) => {
                assert_eq!(answer, Answer::Status(429));
                assert_eq!(hint, Some(SimDuration::from_secs(2)));
                assert_eq!(work, 0);
            }
            other => panic!("the fourth must be turned away, not {other:?}"),
        }
        let (Answering::Served(a), Answering::Served(b), Answering::Served(waiting)) =
            (a, b, waiting)
        else {
            panic!("three attempts are admitted");
        };
        // The two workers answer after their 10 ms, then the third is served.
        let t0 = tokio::time::Instant::now();
        let (ra, rb) = (a.await.unwrap(), b.await.unwrap());
        assert_eq!((ra.0, rb.0), (Answer::OK, Answer::OK));
        assert_eq!(t0.elapsed(), std::time::Duration::from_millis(10));
        let rw = waiting.await.unwrap();
        assert_eq!(rw.0, Answer::OK);
        assert_eq!(t0.elapsed(), std::time::Duration::from_millis(20));
        assert_eq!(s.peek().server.in_flight(), 0);
        let (r, _) = s.finish(s.elapsed());
        assert_eq!(r.series.unwrap().rejections.iter().sum::<u32>(), 1);
        assert_eq!(r.retry_after_share, 1.0);
    }

    #[tokio::test(start_paused = true)]
    async fn work_for_an_attempt_nobody_awaits_is_wasted() {
        let s = shared(QUEUE);
        let rx = {
            let (mut g, now) = s.event();
            launch(&mut g, 0);
            let answering = admit(&s, &mut g, now, arrival(0));
            // The client gives up on it (a timeout) while it is served.
            g.ledger.settle(0);
            answering
        };
        let Answering::Served(rx) = rx else {
            panic!("served at once")
        };
        assert!(rx.await.is_err(), "nobody is answered");
        let (r, _) = s.finish(s.elapsed());
        assert_eq!(r.wasted_work_share, 1.0);
    }

    #[test]
    fn the_attempt_header_round_trips_and_malformed_ones_are_refused() {
        let a = Arrival {
            visit: Visit {
                client: 7,
                tag: 3,
                stream: (u64::MAX, 2),
            },
            sent: SimTime(123),
        };
        assert_eq!(Arrival::parse(&a.header()), Some(a));
        for bad in ["", "1 2 3 4", "1 2 3 4 x", "4294967296 1 1 1 1"] {
            assert_eq!(Arrival::parse(bad), None, "{bad:?}");
        }
    }
}
