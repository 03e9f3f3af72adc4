//! The engine: the event loop of one run, routing each event between the clients, the
//! network, the server and the recorder.
//!
//! Every handler is a few calls: ask a part what happens (the clients whether an attempt
//! leaves, the server what it does with an arrival), tell the recorder, schedule what follows.
//! The parts never call each other, so the order of random draws and of scheduled events is
//! decided here alone.

use super::answer::Answer;
use super::client::{Clients, Request};
use super::event::Event;
use super::hedge::CopyNext;
use super::model::{Model, RunSpec};
use super::network::Network;
use super::passage::Watch;
use super::profile::Arrivals;
use super::queue::EventQueue;
use super::recorder::Recorder;
use super::run_result::{Ending, LayerResult, LayerSeries, RunResult};
use super::server::Server;
use super::workload::{PoissonSource, Workload, burst_times, client_profile, exponential};
use crate::cancel::CancelToken;
use crate::policy::Outcome;
use crate::rng::{SimRng, StreamFamily, StreamKind};
use crate::time::{SimDuration, SimTime};
use chain::Layers;
use lifecycle::{Below, Edge, Parts, Station};

/// Simulates one (point, strategy, replication).
pub fn run(spec: RunSpec<'_>) -> RunResult {
    // The one loop over events is `run_until`'s: with a single caller, `Sim::step` is inlined
    // into it (two callers cost the event loop 2.5 % more instructions).
    run_until(spec, &CancelToken::new()).expect("a token no one holds is never cancelled")
}

/// Events processed between two looks at the cancel token of [`run_until`]: a few hundred
/// microseconds of work, so that a cancel stops even a runaway run at once.
const EVENTS_PER_CHECK: u32 = 4096;

/// [`run`], stopped as soon as `cancel` is cancelled: `None` then (the run is dropped).
pub fn run_until(spec: RunSpec<'_>, cancel: &CancelToken) -> Option<RunResult> {
    let mut sim = Sim::new(spec);
    loop {
        for _ in 0..EVENTS_PER_CHECK {
            if sim.step().is_none() {
                return Some(sim.finish(spec.keep_series));
            }
        }
        if cancel.is_cancelled() {
            return None;
        }
    }
}

/// One simulation in progress.
pub(crate) struct Sim<'a> {
    model: &'a Model,
    /// The clock stops here.
    horizon: SimTime,
    now: SimTime,
    queue: EventQueue,
    clients: Clients,
    network: Network,
    server: Server<'a>,
    recorder: Recorder,
    /// Closed-loop think times: client `c`'s think before its request `n + 1` is stream `(c, n)`.
    think: StreamFamily,
    /// The open-loop source of a Poisson workload.
    poisson: Option<PoissonSource>,
    /// The persistent sources of a `poisson_clients` workload: arrivals (relative to the
    /// workload's start) and their stream.
    sources: Vec<(Arrivals, SimRng)>,
    /// The layers behind the server when the model is a chain of services.
    chain: Option<Layers<'a>>,
}

impl<'a> Sim<'a> {
    /// A run at time zero with the workload's first events scheduled.
    pub(crate) fn new(spec: RunSpec<'a>) -> Self {
        let model = spec.model;
        let (seed, rep) = (spec.seed, spec.replication);
        let family = |kind| StreamFamily::new(seed, rep, kind);
        let initial = model.workload.initial_clients();
        let client = spec.strategy.client_config(&model.client);
        let policy = client.retry_policy(spec.strategy.backoff.clone());
        let mut sim = Sim {
            model,
            horizon: SimTime(model.horizon.as_nanos()),
            now: SimTime::ZERO,
            queue: EventQueue::with_capacity(1024),
            clients: Clients::new(
                &client,
                policy,
                (family(StreamKind::Jitter), family(StreamKind::Throttle)),
                initial,
                model.workload.owners(),
            )
            .hearing(model.server.retry_after_header()),
            network: Network::new(
                model.latency.clone(),
                family(StreamKind::Network),
                initial as usize,
            ),
            server: Server::new(
                &model.server,
                &model.faults,
                family(StreamKind::Service),
                family(StreamKind::Faults),
            ),
            recorder: {
                let recorder =
                    Recorder::new(model.bucket, model.horizon).judging(model.trigger.is_some());
                match model.passage.watched {
                    true => recorder.watching(Watch::new(
                        model.passage,
                        model.server.full_at(),
                        model.trigger.map(|t| t.1),
                    )),
                    false => recorder,
                }
            },
            think: family(StreamKind::Think),
            poisson: None,
            sources: Vec::new(),
            chain: model.chain.as_ref().map(|c| Layers::new(c, &spec)),
        };
        if let Some(source) = &spec.strategy.source {
            sim.clients.use_source(source.clone());
        }
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
            Workload::Poisson { .. } => {
                let rng = StreamFamily::new(seed, rep, StreamKind::Arrivals).get(0, 0);
                let (profile, _, end) = self
                    .model
                    .workload
                    .poisson_profile()
                    .expect("a checked Poisson workload has a profile");
                let mut source = PoissonSource::new(&profile, end, rng);
                if let Some(first) = source.next() {
                    self.queue.push(first, Event::NextArrival);
                }
                self.clients
                    .reserve(self.model.workload.expected_requests().min(1 << 24));
                self.poisson = Some(source);
            }
            Workload::PoissonClients {
                clients,
                ref rate,
                start,
                duration,
            } => {
                let streams = StreamFamily::new(seed, rep, StreamKind::Arrivals);
                let profile = client_profile(rate);
                for s in 0..clients {
                    let mut rng = streams.get(s as u64, 1);
                    let mut arrivals = profile.arrivals(SimTime(duration.as_nanos()));
                    if let Some(t) = arrivals.next_arrival(&mut rng) {
                        self.queue.push(t + start, Event::SourceArrival(s));
                    }
                    self.sources.push((arrivals, rng));
                }
                self.clients
                    .reserve(self.model.workload.expected_requests().min(1 << 24));
            }
        }
    }

    /// Processes the next event before the horizon and returns it; `None` when there is none.
    #[inline]
    pub(crate) fn step(&mut self) -> Option<(SimTime, Event)> {
        let (now, event) = self.queue.pop_until(self.horizon)?;
        if self.clients.outgrow_the_cache() {
            for c in self.queue.upcoming().filter_map(Event::client) {
                self.clients.prefetch(c);
            }
        }
        self.now = now;
        self.recorder.event(now, self.server.in_flight());
        self.dispatch(event);
        Some((now, event))
    }

    #[inline]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Start(c) => self.begin(Edge, c),
            Event::Wake(c) => self.send_attempt(Edge, c),
            Event::Launch(c) => self.launch(Edge, c),
            Event::Arrive(c, tag) => self.arrive(Edge, c, tag),
            Event::ServiceDone(slot) => self.service_done(Edge, slot),
            Event::Reply(c, tag) => {
                let (answer, hint) = self.network.reply(c);
                self.receive(Edge, c, tag, answer, hint);
            }
            Event::Timeout(c, tag) => self.timeout(Edge, c, tag),
            Event::NextArrival => self.next_arrival(),
            Event::SourceArrival(s) => self.source_arrival(s),
            Event::HopArrive(..)
            | Event::HopDone(_)
            | Event::HopReply(..)
            | Event::HopTimeout(..)
            | Event::HopWake(_)
            | Event::HopLaunch(_) => self.hop_event(event),
            Event::ReadReply(c, tag) => self.read_reply(c, tag, self.network.version(c)),
            Event::WriteArrive(c, tag) => self.write_arrive(c, tag, self.network.version(c)),
            Event::Hedge(c, tag) => {
                if self.clients.hedge_due(c, tag, self.now) {
                    self.send_copy(c);
                }
            }
        }
    }

    /// Schedules `event` after `delay`.
    #[inline]
    fn after(&mut self, delay: SimDuration, event: Event) {
        self.queue.push(self.now + delay, event);
    }

    /// The tally, once the queue is empty or the horizon reached.
    pub(crate) fn finish(self, keep_series: bool) -> RunResult {
        let end = if self.queue.is_empty() {
            self.now
        } else {
            self.horizon
        };
        let arrivals = self.recorder.arrivals();
        let mut result = self.recorder.finish(
            end,
            self.server.in_flight(),
            self.server.workers(),
            self.clients.in_flight(),
            keep_series,
            self.model.trigger.map(|t| (t, self.model.recovery)),
        );
        if let Some(chain) = &self.chain {
            // Layer 1 is the engine's own server: what the recorder measured, its requests the
            // edge clients', its series their attempts'.
            let layer1 = LayerResult {
                counts: result.counts,
                arrivals,
                served: 0,
                busy_share: result.server_busy_share,
                wasted_work_share: result.wasted_work_share,
                latency_mean_ms: result.latency_mean_ms,
                series: result.series.as_ref().map(|s| LayerSeries {
                    arrivals: s.arrivals.clone(),
                    retries: s.retries.clone(),
                }),
            };
            let mut layers = chain.results(end, layer1);
            if let Some(series) = result.series.as_ref() {
                for layer in &mut layers[1..] {
                    if let Some(s) = layer.series.as_mut() {
                        s.fit(series.arrivals.len());
                    }
                }
            }
            result.layers = layers;
        }
        result.hedging = self.clients.hedge_counts();
        result
    }

    // The edge's own steps: its workload, hedged copies and the OCC row's write; the
    // lifecycle every layer shares is in `lifecycle`.

    /// An open-loop arrival: a new client with one request.
    fn next_arrival(&mut self) {
        let Some(source) = self.poisson.as_mut() else {
            return;
        };
        let next = source.next();
        let c = self.clients.add();
        self.network.add_client();
        if let Some(next) = next {
            self.queue.push(next, Event::NextArrival);
        }
        self.begin(Edge, c);
    }

    /// A request of persistent source `s`: a new client slot owned by `s`.
    fn source_arrival(&mut self, s: u32) {
        let Workload::PoissonClients { start, .. } = self.model.workload else {
            return;
        };
        let (arrivals, rng) = &mut self.sources[s as usize];
        if let Some(t) = arrivals.next_arrival(rng) {
            self.queue.push(t + start, Event::SourceArrival(s));
        }
        let c = self.clients.add_owned(s);
        self.network.add_client();
        self.begin(Edge, c);
    }

    /// Client `c` sends another copy of its hedged request; a refused copy ends the request
    /// when no other copy is awaited.
    fn send_copy(&mut self, c: u32) {
        match self.clients.launch_copy(c, self.now) {
            Ok((tag, timeout)) => {
                self.recorder.attempt();
                self.send(Edge, c, tag);
                self.arm(Edge, c, tag, timeout);
            }
            Err(ending) => {
                if !self.clients.any_copy_live(c) {
                    self.end(Edge, c, ending);
                }
            }
        }
    }

    /// Copy `tag` of client `c`'s hedged request ended with `outcome`: wait for the other
    /// copies, send the next at once or after the server's pushback, or end the request
    /// (cancelling the copies left).
    fn conclude_copy(&mut self, c: u32, tag: u32, outcome: Outcome, hint: Option<SimDuration>) {
        match self.clients.conclude_copy(c, tag, self.now, outcome, hint) {
            CopyNext::Wait => {}
            CopyNext::SendNow => self.send_copy(c),
            CopyNext::SendAfter { delay, latest } => self.after(delay, Event::Hedge(c, latest)),
            CopyNext::End(ending) => self.end(Edge, c, ending),
        }
    }

    /// OCC: the `version` read reaches client `c`, which sends its conditional write.
    fn read_reply(&mut self, c: u32, tag: u32, version: u32) {
        if !self.clients.awaits(c, tag) {
            return;
        }
        if self.network.is_instant() {
            self.write_arrive(c, tag, version);
        } else {
            let d = self.network.leg(c);
            self.after(d, Event::WriteArrive(c, tag));
        }
    }

    /// OCC: the write of attempt `tag` of client `c`, made on `version`, reaches the row.
    fn write_arrive(&mut self, c: u32, tag: u32, version: u32) {
        match self.server.write(version) {
            Ok(()) => self.answer(Edge, c, tag, Answer::OK, None, 0),
            Err(answer) => self.reject(Edge, c, tag, answer, None),
        }
    }
}

/// Layer 1's parameters: the edge clients, the engine's network and server, its recorder;
/// a request that ends lets a closed-loop client think, then start the next.
impl Station for Edge {
    const HEDGES: bool = true;

    #[inline]
    fn arrive_event(self, c: u32, tag: u32) -> Event {
        Event::Arrive(c, tag)
    }
    #[inline]
    fn done_event(self, w: u32) -> Event {
        Event::ServiceDone(w)
    }
    #[inline]
    fn reply_event(self, c: u32, tag: u32) -> Event {
        Event::Reply(c, tag)
    }
    #[inline]
    fn timeout_event(self, c: u32, tag: u32) -> Event {
        Event::Timeout(c, tag)
    }
    #[inline]
    fn wake_event(self, c: u32) -> Event {
        Event::Wake(c)
    }
    #[inline]
    fn launch_event(self, c: u32) -> Event {
        Event::Launch(c)
    }

    #[inline]
    fn parts<'s, 'a>(self, sim: &'s mut Sim<'a>) -> Parts<'s, 'a> {
        Parts {
            callers: &mut sim.clients,
            network: &mut sim.network,
            server: &mut sim.server,
        }
    }
    #[inline]
    fn stream(self, sim: &Sim<'_>, c: u32, tag: u32) -> (u64, u64) {
        sim.clients.stream(c, tag)
    }
    #[inline]
    fn below(self, sim: &Sim<'_>) -> Option<Below> {
        sim.chain
            .as_ref()
            .is_some_and(|c| c.calls_down())
            .then_some(Below(1))
    }
    #[inline]
    fn deadline(self, _: &Sim<'_>, _: u32) -> Option<SimTime> {
        None
    }
    fn expiry(self, sim: &Sim<'_>, c: u32) -> SimTime {
        sim.chain.as_ref().expect("a chain").first_expiry(c)
    }

    #[inline]
    fn began(self, sim: &mut Sim<'_>) {
        sim.recorder.request();
    }
    #[inline]
    fn sent(self, sim: &mut Sim<'_>, c: u32, timeout: Option<SimDuration>) -> Option<SimDuration> {
        sim.recorder.attempt();
        if let Some(chain) = sim.chain.as_mut() {
            chain.sent(c, sim.now, timeout);
        }
        timeout
    }
    #[inline]
    fn arrived(self, sim: &mut Sim<'_>, c: u32, tag: u32) {
        let first = sim.clients.is_first(c, tag);
        sim.recorder.arrival(first);
    }
    #[inline]
    fn dropped(self, sim: &mut Sim<'_>) {
        sim.recorder.dropped();
    }
    #[inline]
    fn rejected(self, sim: &mut Sim<'_>, hinted: bool) {
        sim.recorder.rejection(hinted);
    }
    fn read(self, sim: &mut Sim<'_>, c: u32, tag: u32, version: u32) {
        if sim.network.is_instant() {
            sim.read_reply(c, tag, version);
        } else {
            let d = sim.network.version_leg(c, version);
            sim.after(d, Event::ReadReply(c, tag));
        }
    }
    #[inline]
    fn worked(self, sim: &mut Sim<'_>, work: u64, awaited: bool, answer: Answer) {
        sim.recorder.work(work, awaited);
        if let Some(chain) = sim.chain.as_mut() {
            chain.first_served += u64::from(answer == Answer::OK);
        }
    }
    #[inline]
    fn wasted(self, sim: &mut Sim<'_>, work: u64) {
        sim.recorder.wasted(work);
    }
    #[inline]
    fn answered(self, sim: &mut Sim<'_>, _: u32, answer: Answer) {
        if answer.outcome() == Outcome::Success {
            sim.recorder.success();
        }
    }
    #[inline]
    fn timed_out(self, sim: &mut Sim<'_>, _: u32) {
        sim.recorder.timeout();
    }
    fn ended(self, sim: &mut Sim<'_>, c: u32, ending: Ending, request: Request) {
        sim.recorder
            .ending(ending, sim.now, request.start, request.attempts);
        if let Workload::Closed { think, .. } = sim.model.workload {
            let mut rng = sim.think.get(c as u64, request.number as u64);
            let gap = exponential(&mut rng, think.as_nanos() as f64);
            sim.after(gap, Event::Start(c));
        }
    }
}

mod chain;
mod lifecycle;

#[cfg(test)]
mod tests;
