//! The engine: the event loop of one run, routing each event between the clients, the
//! network, the server and the meter.
//!
//! Every handler is a few calls: ask a part what happens (the clients whether an attempt
//! leaves, the server what it does with an arrival), tell the meter, schedule what follows.
//! The parts never call each other, so the order of random draws and of scheduled events is
//! decided here alone.

use super::answer::Answer;
use super::client::{Clients, Launch, Next};
use super::event::Event;
use super::meter::Meter;
use super::metrics::{Ending, RunResult};
use super::model::{Model, RunSpec};
use super::network::Network;
use super::queue::EventQueue;
use super::server::{Admission, Server, Visit};
use super::workload::{PoissonSource, Workload, burst_times, exponential};
use crate::policy::Outcome;
use crate::rng::{StreamFamily, StreamKind};
use crate::time::{SimDuration, SimTime};

/// Simulates one (point, strategy, replication).
pub fn run(spec: RunSpec<'_>) -> RunResult {
    let mut sim = Sim::new(spec);
    while sim.step().is_some() {}
    sim.finish(spec.keep_series)
}

/// One simulation in progress.
struct Sim<'a> {
    model: &'a Model,
    /// The clock stops here.
    horizon: SimTime,
    now: SimTime,
    queue: EventQueue,
    clients: Clients,
    network: Network,
    server: Server<'a>,
    meter: Meter,
    /// Closed-loop think times: client `c`'s think before its request `n + 1` is stream `(c, n)`.
    think: StreamFamily,
    /// The open-loop source of a Poisson workload.
    poisson: Option<PoissonSource>,
}

impl<'a> Sim<'a> {
    /// A run at time zero with the workload's first events scheduled.
    fn new(spec: RunSpec<'a>) -> Self {
        let model = spec.model;
        let (seed, rep) = (spec.seed, spec.replication);
        let family = |kind| StreamFamily::new(seed, rep, kind);
        let initial = model.workload.initial_clients();
        let policy = model.client.retry_policy(spec.strategy.backoff.clone());
        let mut sim = Sim {
            model,
            horizon: SimTime(model.horizon.as_nanos()),
            now: SimTime::ZERO,
            queue: EventQueue::with_capacity(1024),
            clients: Clients::new(&model.client, policy, family(StreamKind::Jitter), initial),
            network: Network::new(model.latency, family(StreamKind::Network), initial as usize),
            server: Server::new(
                &model.server,
                &model.faults,
                family(StreamKind::Service),
                family(StreamKind::Faults),
            ),
            meter: Meter::new(model.bucket, model.horizon),
            think: family(StreamKind::Think),
            poisson: None,
        };
        sim.schedule_workload(seed, rep);
        sim
    }

    fn schedule_workload(&mut self, seed: u64, rep: u32) {
        match self.model.workload {
            Workload::Burst {
                clients,
                start,
                spread,
            } => {
                let times = burst_times(clients, start, spread, seed, rep);
                self.queue.preschedule(
                    times
                        .into_iter()
                        .enumerate()
                        .map(|(c, t)| (t, Event::Start(c as u32)))
                        .collect(),
                );
            }
            Workload::Closed {
                clients,
                think,
                start,
            } => {
                let mean = think.as_nanos() as f64;
                let first: Vec<(SimTime, Event)> = (0..clients)
                    .map(|c| {
                        let mut rng = self.think.get(c as u64, 0);
                        (
                            SimTime(start.as_nanos()) + exponential(&mut rng, mean),
                            Event::Start(c),
                        )
                    })
                    .collect();
                self.queue.preschedule(first);
            }
            Workload::Poisson {
                rate,
                start,
                duration,
            } => {
                let rng = StreamFamily::new(seed, rep, StreamKind::Arrivals).get(0, 0);
                let mut source = PoissonSource::new(rate, start, duration, rng);
                if let Some(first) = source.next_after(SimTime(start.as_nanos())) {
                    self.queue.push(first, Event::NextArrival);
                }
                self.clients
                    .reserve(self.model.workload.expected_requests().min(1 << 24));
                self.poisson = Some(source);
            }
        }
    }

    /// Processes the next event before the horizon and returns it; `None` when there is none.
    #[inline]
    fn step(&mut self) -> Option<(SimTime, Event)> {
        let (now, event) = self.queue.pop_until(self.horizon)?;
        self.now = now;
        self.meter.event(now, self.server.in_flight());
        self.dispatch(event);
        Some((now, event))
    }

    #[inline]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Start(c) => self.start_request(c),
            Event::Wake(c) => self.send_attempt(c),
            Event::Launch(c) => self.launch(c),
            Event::Arrive(c, tag) => self.arrive(c, tag),
            Event::ServiceDone(slot) => self.service_done(slot),
            Event::Reply(c, tag) => {
                let (answer, hint) = self.clients.reply(c);
                self.receive(c, tag, answer, hint);
            }
            Event::Timeout(c, tag) => self.timeout(c, tag),
            Event::NextArrival => self.next_arrival(),
            Event::ReadReply(c, tag) => self.read_reply(c, tag),
            Event::WriteArrive(c, tag) => self.write_arrive(c, tag),
        }
    }

    /// Schedules `event` after `delay`.
    #[inline]
    fn after(&mut self, delay: SimDuration, event: Event) {
        self.queue.push(self.now + delay, event);
    }

    /// The tally, once the queue is empty or the horizon reached.
    fn finish(self, keep_series: bool) -> RunResult {
        let end = if self.queue.is_empty() {
            self.now
        } else {
            self.horizon
        };
        self.meter.finish(
            end,
            self.server.in_flight(),
            self.server.workers(),
            keep_series,
        )
    }

    // The client side.

    /// An open-loop arrival: a new client with one request.
    fn next_arrival(&mut self) {
        let Some(source) = self.poisson.as_mut() else {
            return;
        };
        let next = source.next_after(self.now);
        let c = self.clients.add();
        self.network.add_client();
        if let Some(next) = next {
            self.queue.push(next, Event::NextArrival);
        }
        self.start_request(c);
    }

    /// Client `c` begins a new request.
    fn start_request(&mut self, c: u32) {
        self.clients.begin(c, self.now);
        self.meter.request();
        self.send_attempt(c);
    }

    /// Client `c` wants to send its next attempt: a limiter slot first, then launch.
    fn send_attempt(&mut self, c: u32) {
        if self.clients.acquire_slot(c) {
            self.launch(c);
        }
    }

    /// Client `c`, holding its limiter slot if any, sends its next attempt.
    fn launch(&mut self, c: u32) {
        match self.clients.launch(c, self.now) {
            Launch::Sent { tag, timeout } => {
                self.meter.attempt();
                self.send(c, tag);
                // Armed after the send, so an attempt answered at once (a rejection with an
                // instantaneous network) leaves no stale timer in the queue.
                if let Some(t) = timeout
                    && self.clients.awaits(c, tag)
                {
                    self.after(t, Event::Timeout(c, tag));
                }
            }
            Launch::Refused(ending) => {
                self.release_slot();
                self.end(c, ending);
            }
        }
    }

    /// The timer of attempt `tag` of client `c` fired.
    fn timeout(&mut self, c: u32, tag: u32) {
        if self.clients.awaits(c, tag) {
            // A served answer already on its way back is now work nobody will use.
            if let Some(work) = self.network.reply_work(c, tag) {
                self.meter.wasted(work);
            }
            self.meter.timeout();
            self.conclude(c, Outcome::Timeout, None);
        }
    }

    /// An answer reaches client `c` (inline when the network is instant).
    #[inline]
    fn receive(&mut self, c: u32, tag: u32, answer: Answer, hint: Option<SimDuration>) {
        if !self.clients.awaits(c, tag) {
            return;
        }
        let outcome = answer.outcome();
        if outcome == Outcome::Success {
            self.meter.success();
        }
        self.conclude(c, outcome, hint);
    }

    /// Client `c`'s current attempt ended with `outcome`: its limiter slot is freed, then it
    /// sleeps or its request ends.
    fn conclude(&mut self, c: u32, outcome: Outcome, hint: Option<SimDuration>) {
        self.release_slot();
        match self.clients.conclude(c, self.now, outcome, hint) {
            Next::Sleep(sleep) => self.after(sleep, Event::Wake(c)),
            Next::End(ending) => self.end(c, ending),
        }
    }

    /// Frees the caller's limiter slot; a waiter handed the slot launches through an event,
    /// which keeps the call stack flat.
    fn release_slot(&mut self) {
        if let Some(next) = self.clients.release_slot() {
            self.after(SimDuration::ZERO, Event::Launch(next));
        }
    }

    /// Client `c`'s request ends; a closed-loop client thinks, then starts the next.
    fn end(&mut self, c: u32, ending: Ending) {
        let request = self.clients.end(c);
        self.meter
            .ending(ending, self.now, request.start, request.attempts);
        if let Workload::Closed { think, .. } = self.model.workload {
            let mut rng = self.think.get(c as u64, request.number as u64);
            let gap = exponential(&mut rng, think.as_nanos() as f64);
            self.after(gap, Event::Start(c));
        }
    }

    // The server side.

    /// The server's view of attempt `tag` of client `c`, as of now.
    #[inline]
    fn visit(&self, c: u32, tag: u32) -> Visit {
        Visit {
            client: c,
            tag,
            stream: self.clients.stream(c, tag),
        }
    }

    /// Attempt `tag` leaves client `c`: it reaches the server after one leg.
    fn send(&mut self, c: u32, tag: u32) {
        if self.network.is_instant() {
            self.arrive(c, tag);
        } else {
            let d = self.network.first_leg(c, self.clients.stream(c, tag));
            self.after(d, Event::Arrive(c, tag));
        }
    }

    /// Attempt `tag` of client `c` reaches the server, which admits it.
    fn arrive(&mut self, c: u32, tag: u32) {
        self.meter.arrival(self.clients.is_first(c, tag));
        match self.server.admit(self.now, self.visit(c, tag)) {
            Admission::Serve { slot, service } => self.after(service, Event::ServiceDone(slot)),
            Admission::Wait => {}
            Admission::Reject { answer, hint } => self.reject(c, tag, answer, hint),
            Admission::Drop => self.meter.dropped(),
            Admission::Read { version } => {
                self.clients.set_version(c, version);
                if self.network.is_instant() {
                    self.read_reply(c, tag);
                } else {
                    let d = self.network.leg(c);
                    self.after(d, Event::ReadReply(c, tag));
                }
            }
        }
    }

    /// Worker `slot` finished: the answer goes back, then the worker takes the next waiting
    /// attempt.
    fn service_done(&mut self, slot: u32) {
        let job = self.server.depart(slot);
        self.meter.service(job.work);
        if self.clients.awaits(job.client, job.tag) {
            self.answer(job.client, job.tag, Answer::OK, None, job.work);
        } else {
            self.meter.wasted(job.work);
        }
        let clients = &self.clients;
        if let Some((c, tag)) = self
            .server
            .next_waiting(slot, |c, tag| clients.awaits(c, tag))
        {
            let service = self.server.serve(self.now, slot, self.visit(c, tag));
            self.after(service, Event::ServiceDone(slot));
        }
    }

    /// OCC: the version reaches client `c`, which sends its conditional write.
    fn read_reply(&mut self, c: u32, tag: u32) {
        if !self.clients.awaits(c, tag) {
            return;
        }
        if self.network.is_instant() {
            self.write_arrive(c, tag);
        } else {
            let d = self.network.leg(c);
            self.after(d, Event::WriteArrive(c, tag));
        }
    }

    /// OCC: the write of attempt `tag` of client `c` reaches the row.
    fn write_arrive(&mut self, c: u32, tag: u32) {
        match self.server.write(self.clients.version(c)) {
            Ok(()) => self.answer(c, tag, Answer::OK, None, 0),
            Err(answer) => self.reject(c, tag, answer, None),
        }
    }

    /// The server turns attempt `tag` of client `c` away without serving it.
    fn reject(&mut self, c: u32, tag: u32, answer: Answer, hint: Option<SimDuration>) {
        self.meter.rejection(hint.is_some());
        self.answer(c, tag, answer, hint, 0);
    }

    /// Sends `answer` back to client `c` over one leg, if it still waits for attempt `tag`.
    /// `work` is the service time spent on it (0 for an answer given without serving).
    fn answer(&mut self, c: u32, tag: u32, answer: Answer, hint: Option<SimDuration>, work: u64) {
        if !self.clients.awaits(c, tag) {
            return;
        }
        if self.network.is_instant() {
            self.receive(c, tag, answer, hint);
        } else {
            let d = self.network.reply_leg(c, tag, work);
            self.clients.hold_reply(c, answer, hint);
            self.after(d, Event::Reply(c, tag));
        }
    }
}
