//! The state a live run shares between its server and its clients: the simulator's own
//! parts (the queue server's admission, the network's leg delays, the recorder), the ledger of
//! the clients' requests and attempts, behind one lock, and the clock that stamps them.
//!
//! The simulator's parts are made for one event loop: each call moves one attempt along and
//! says what follows. Here the event loop is tokio: a task takes the lock, reads the clock
//! (inside the lock, so the recorder sees time move forward only), makes the calls the engine
//! would make for that event, and releases it before it sleeps or does I/O. The retry
//! decisions are not here: each client runs the async executor ([`crate::exec::tokio`]).
//! The state is in one process, so the server can ask the [`Ledger`] whether an attempt is
//! still awaited (for wasted work and `drop_expired`), as the simulator's engine asks its
//! clients.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::measure::{Lag, Observed};
use crate::rng::{StreamFamily, StreamKind};
use crate::sim::answer::Answer;
use crate::sim::client::{Request, request_key};
use crate::sim::network::Network;
use crate::sim::recorder::Recorder;
use crate::sim::server::Server;
use crate::sim::{Model, RunResult};
use crate::time::{SimDuration, SimTime};

/// The answer a worker hands to the request handler waiting for it: the answer, its
/// Retry-After hint, and the service time spent (ns).
pub(crate) type Reply = (Answer, Option<SimDuration>, u64);

/// One client's place in its requests, as the simulator's client keeps it: attempts are
/// tagged by a counter that never repeats for the client.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    /// Requests begun.
    requests: u32,
    /// Attempts sent over all requests: the tag of the latest.
    sends: u32,
    /// `sends` when the current request began.
    first_send: u32,
    /// A request is in flight.
    busy: bool,
    /// The attempt in flight waits for its answer.
    awaiting: bool,
}

/// Which client has a request in flight and which attempt it awaits: the bookkeeping of the
/// simulator's clients without their decisions (the executor makes those).
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    clients: Vec<Entry>,
    starts: Vec<SimTime>,
}

impl Ledger {
    fn new(clients: usize) -> Ledger {
        Ledger {
            clients: vec![Entry::default(); clients],
            starts: vec![SimTime::ZERO; clients],
        }
    }

    /// A new client (an open-loop arrival); returns its index.
    pub fn add(&mut self) -> u32 {
        self.clients.push(Entry::default());
        self.starts.push(SimTime::ZERO);
        (self.clients.len() - 1) as u32
    }

    /// Client `c` begins a request at `now`; false when it has one in flight.
    pub fn begin(&mut self, c: u32, now: SimTime) -> bool {
        let e = &mut self.clients[c as usize];
        if e.busy {
            return false;
        }
        e.busy = true;
        e.requests += 1;
        e.first_send = e.sends;
        self.starts[c as usize] = now;
        true
    }

    /// Client `c` sends its next attempt; returns its tag.
    pub fn send(&mut self, c: u32) -> u32 {
        let e = &mut self.clients[c as usize];
        e.sends = e.sends.wrapping_add(1);
        e.awaiting = true;
        e.sends
    }

    /// The tag of client `c`'s latest attempt.
    pub fn latest(&self, c: u32) -> u32 {
        self.clients[c as usize].sends
    }

    /// Client `c` no longer waits for its attempt (answered, timed out, failed).
    pub fn settle(&mut self, c: u32) {
        self.clients[c as usize].awaiting = false;
    }

    /// True when client `c` waits for the answer to attempt `tag`.
    pub fn awaits(&self, c: u32, tag: u32) -> bool {
        let e = &self.clients[c as usize];
        e.awaiting && e.sends == tag
    }

    /// The attempt number of `tag` in client `c`'s current request, if it is one of it.
    fn attempt_of(&self, c: u32, tag: u32) -> Option<u32> {
        let e = &self.clients[c as usize];
        (tag > e.first_send && tag <= e.sends).then(|| tag - e.first_send)
    }

    /// True when `tag` is the first attempt of client `c`'s current request.
    pub fn is_first(&self, c: u32, tag: u32) -> bool {
        self.attempt_of(c, tag) == Some(1)
    }

    /// The per-attempt stream key of attempt `tag` of client `c`, as the simulator's.
    pub fn stream(&self, c: u32, tag: u32) -> (u64, u64) {
        match self.attempt_of(c, tag) {
            Some(a) => (request_key(c, self.clients[c as usize].requests), a as u64),
            None => (c as u64, (1 << 40) | tag as u64),
        }
    }

    /// Client `c`'s request ends; `None` when it had none in flight.
    pub fn end(&mut self, c: u32) -> Option<Request> {
        let e = &mut self.clients[c as usize];
        if !e.busy {
            return None;
        }
        e.busy = false;
        e.awaiting = false;
        Some(Request {
            start: self.starts[c as usize],
            attempts: e.sends - e.first_send,
            number: e.requests,
        })
    }

    /// Requests in flight, counted client by client.
    pub fn in_flight(&self) -> u64 {
        self.clients.iter().filter(|e| e.busy).count() as u64
    }
}

/// Everything behind the lock.
pub(crate) struct Inner {
    pub ledger: Ledger,
    pub server: Server<'static>,
    pub network: Network,
    pub recorder: Recorder,
    /// The time of the latest event (the clock never goes back for the recorder).
    now: SimTime,
    /// The latest instant an attempt's timer was armed for: the simulator's clock runs
    /// through these timers after the last request ends, and the tally's end follows it.
    pub armed: SimTime,
    /// Handlers waiting for their attempt's service to end, by (client, tag).
    pub replies: HashMap<(u32, u32), oneshot::Sender<Reply>>,
    pub observed: Observed,
}

/// One live run's shared state.
pub(crate) struct Shared {
    inner: Mutex<Inner>,
    /// Time zero of the run, set by [`Shared::begin`] once the clients are connected.
    start: OnceLock<Instant>,
    /// The clock stops here.
    pub horizon: SimTime,
    pub model: &'static Model,
    /// Think-time streams of closed-loop clients (as in the simulator).
    pub think: StreamFamily,
    /// How late sleeps wake (shared by the runs of one command).
    pub lag: Arc<Lag>,
}

impl Shared {
    /// The state of a run on `model` (replication 0 of `seed`): the same streams as the
    /// simulator's run of the same unit.
    pub fn new(model: &'static Model, seed: u64, lag: Arc<Lag>) -> Shared {
        let family = |kind| StreamFamily::new(seed, 0, kind);
        let initial = model.workload.initial_clients();
        Shared {
            inner: Mutex::new(Inner {
                ledger: Ledger::new(initial as usize),
                server: Server::new(
                    &model.server,
                    &model.faults,
                    family(StreamKind::Service),
                    family(StreamKind::Faults),
                ),
                network: Network::new(
                    model.latency.clone(),
                    family(StreamKind::Network),
                    initial as usize,
                ),
                recorder: Recorder::new(model.bucket, model.horizon)
                    .judging(model.trigger.is_some()),
                now: SimTime::ZERO,
                armed: SimTime::ZERO,
                replies: HashMap::new(),
                observed: Observed::default(),
            }),
            start: OnceLock::new(),
            horizon: SimTime(model.horizon.as_nanos()),
            model,
            think: family(StreamKind::Think),
            lag,
        }
    }

    /// Takes the lock for an event happening now: returns the state and the event's time
    /// (nanoseconds since the start, never before the previous event's, never past the
    /// horizon), which the recorder has already seen.
    pub fn event(&self) -> (MutexGuard<'_, Inner>, SimTime) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.elapsed().max(g.now).min(self.horizon);
        g.now = now;
        let in_system = g.server.in_flight();
        g.recorder.event(now, in_system);
        (g, now)
    }

    /// The lock, without an event (for reading).
    pub fn peek(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the clock (the first call only): time zero is now.
    pub fn begin(&self) {
        self.start.get_or_init(Instant::now);
    }

    fn start(&self) -> Instant {
        *self.start.get_or_init(Instant::now)
    }

    /// Time since the start, on the recorder's scale.
    pub fn elapsed(&self) -> SimTime {
        SimTime(self.start().elapsed().as_nanos() as u64)
    }

    /// The instant `t` after the start.
    pub fn instant(&self, t: SimTime) -> Instant {
        self.start() + Duration::from_nanos(t.as_nanos())
    }

    /// The tally at `end` (or later: the last event, the last armed attempt timer, as the
    /// simulator's clock stops; never past the horizon), and the observations; the state is
    /// left empty.
    pub fn finish(&self, end: SimTime) -> (RunResult, Observed) {
        let mut g = self.peek();
        let fresh = Recorder::new(self.model.bucket, self.model.horizon)
            .judging(self.model.trigger.is_some());
        let recorder = std::mem::replace(&mut g.recorder, fresh);
        let end = end.max(g.now).max(g.armed).min(self.horizon);
        let result = recorder.finish(
            end,
            g.server.in_flight(),
            g.server.workers(),
            g.ledger.in_flight(),
            true,
            self.model.trigger.map(|t| (t, self.model.recovery)),
        );
        (result, std::mem::take(&mut g.observed))
    }
}
