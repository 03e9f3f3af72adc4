//! The state a live run shares between its server and its clients: the simulator's own
//! parts (clients with their retry policy and guards, the queue server's admission, the
//! network's leg delays, the meter) behind one lock, and the clock that stamps them.
//!
//! The simulator's parts are made for one event loop: each call moves one attempt along and
//! says what follows. Here the event loop is tokio: a task takes the lock, reads the clock
//! (inside the lock, so the meter sees time move forward only), makes the calls the engine
//! would make for that event, and releases it before it sleeps or does I/O. The state is in
//! one process, so the server can ask the clients' ledger whether an attempt is still awaited
//! (for wasted work and `drop_expired`), as the simulator's engine does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::measure::{Lag, Observed};
use crate::rng::{StreamFamily, StreamKind};
use crate::sim::answer::Answer;
use crate::sim::client::Clients;
use crate::sim::meter::Meter;
use crate::sim::network::Network;
use crate::sim::server::Server;
use crate::sim::{Model, RunResult, Strategy};
use crate::time::{SimDuration, SimTime};

/// The answer a worker hands to the request handler waiting for it: the answer, its
/// Retry-After hint, and the service time spent (ns).
pub(crate) type Reply = (Answer, Option<SimDuration>, u64);

/// Everything behind the lock.
pub(crate) struct Inner {
    pub clients: Clients,
    pub server: Server<'static>,
    pub network: Network,
    pub meter: Meter,
    /// The time of the latest event (the clock never goes back for the meter).
    now: SimTime,
    /// Handlers waiting for their attempt's service to end, by (client, tag).
    pub replies: HashMap<(u32, u32), oneshot::Sender<Reply>>,
    /// Clients queued for a concurrency-limiter slot.
    pub slot_waiters: HashMap<u32, oneshot::Sender<()>>,
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
    /// The state of a run of `strategy` on `model` (replication 0 of `seed`), starting now:
    /// the same streams as the simulator's run of the same unit.
    pub fn new(model: &'static Model, strategy: &Strategy, seed: u64, lag: Arc<Lag>) -> Shared {
        let family = |kind| StreamFamily::new(seed, 0, kind);
        let initial = model.workload.initial_clients();
        let policy = model.client.retry_policy(strategy.backoff.clone());
        Shared {
            inner: Mutex::new(Inner {
                clients: Clients::new(&model.client, policy, family(StreamKind::Jitter), initial),
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
                meter: Meter::new(model.bucket, model.horizon),
                now: SimTime::ZERO,
                replies: HashMap::new(),
                slot_waiters: HashMap::new(),
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
    /// horizon), which the meter has already seen.
    pub fn event(&self) -> (MutexGuard<'_, Inner>, SimTime) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.elapsed().max(g.now).min(self.horizon);
        g.now = now;
        let in_system = g.server.in_flight();
        g.meter.event(now, in_system);
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

    /// Time since the start, on the meter's scale.
    pub fn elapsed(&self) -> SimTime {
        SimTime(self.start().elapsed().as_nanos() as u64)
    }

    /// The instant `t` after the start.
    pub fn instant(&self, t: SimTime) -> Instant {
        self.start() + Duration::from_nanos(t.as_nanos())
    }

    /// The tally at `end`, and the observations; the state is left empty.
    pub fn finish(&self, end: SimTime) -> (RunResult, Observed) {
        let mut g = self.peek();
        let fresh = Meter::new(self.model.bucket, self.model.horizon);
        let meter = std::mem::replace(&mut g.meter, fresh);
        let end = end.max(g.now);
        let result = meter.finish(
            end,
            g.server.in_flight(),
            g.server.workers(),
            g.clients.in_flight(),
            true,
        );
        (result, std::mem::take(&mut g.observed))
    }
}
