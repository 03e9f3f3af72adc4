//! A chain of services: layers 2 and up, routed by the same event loop.
//!
//! Layer 1 is the engine's server. Each further layer is a [`Station`]: a queue server with
//! its own faults, and its callers, a [`Clients`] with one slot per worker of the layer above
//! (a worker serves one attempt at a time, so its outbound request is its slot's request),
//! running the calling layer's own retry policy, guards and backoff. A calling layer's worker
//! does its own service, then calls the layer below and stays busy until that request ends;
//! it then answers its caller with the outcome (see [`upstream`]). The last layer answers
//! after its service, as the single server does.
//!
//! Events of layers 2 and up carry a hop: the station in the top 8 bits, a caller slot (or a
//! worker) in the low 24. Random streams of layer `n` are the engine's families moved to that
//! layer ([`StreamFamily::layer`]), so the edge's and layer 1's streams are those of a single
//! server; an attempt's per-attempt key is its caller's job key and its attempt number, so
//! every strategy draws the same service and faults for the same original attempt path.

use super::Sim;
use crate::policy::Outcome;
use crate::rng::{StreamFamily, StreamKind, mix_key};
use crate::sim::answer::Answer;
use crate::sim::client::{Clients, Launch, Next};
use crate::sim::dist::Dist;
use crate::sim::event::Event;
use crate::sim::model::{Chain, GiveUp, Hop, LayerOverrides, RunSpec};
use crate::sim::network::Network;
use crate::sim::run_result::{Counts, Ending, LayerResult, LayerSeries, work_shares};
use crate::sim::server::{Admission, Server, Visit};
use crate::time::{SimDuration, SimTime};

/// Bits of a hop that hold the caller slot or worker.
const SLOT_BITS: u32 = 24;

use crate::sim::model::MAX_CALLING_WORKERS;
const _: () = assert!(MAX_CALLING_WORKERS == 1 << SLOT_BITS);

/// The hop of `index` (a caller slot or a worker) at `station`.
#[inline]
fn hop(station: usize, index: u32) -> u32 {
    debug_assert!(index < MAX_CALLING_WORKERS && station < 256);
    ((station as u32) << SLOT_BITS) | index
}

/// The station and index of a hop.
#[inline]
fn unhop(h: u32) -> (usize, u32) {
    ((h >> SLOT_BITS) as usize, h & (MAX_CALLING_WORKERS - 1))
}

/// What a layer's server did, for `layers.csv`.
#[derive(Debug, Default)]
pub(super) struct Tally {
    arrivals: u64,
    served: u64,
    busy_ns: u128,
    wasted_ns: u128,
    /// Durations of the requests into this layer that succeeded (layers 2 and up).
    succeeded_ns: u128,
    /// Attempts reaching the layer per bucket of `bucket_ns` (a run that keeps its series).
    series: Option<LayerSeries>,
    bucket_ns: u64,
}

impl Tally {
    /// A tally that keeps a time series of buckets of `bucket` when `keep_series`.
    fn new(bucket: SimDuration, keep_series: bool) -> Tally {
        Tally {
            series: keep_series.then(LayerSeries::default),
            bucket_ns: bucket.as_nanos().max(1),
            ..Tally::default()
        }
    }

    /// An attempt reaches the layer at `now`; `first` when it is its request's first.
    #[inline]
    fn arrival(&mut self, now: SimTime, first: bool) {
        self.arrivals += 1;
        if let Some(series) = self.series.as_mut() {
            series.count((now.as_nanos() / self.bucket_ns) as usize, first);
        }
    }

    /// A worker is done with an attempt after `work` nanoseconds, answering `answer`;
    /// `awaited` when its caller still waited for it.
    pub fn work(&mut self, work: u64, awaited: bool, answer: Answer) {
        self.busy_ns += work as u128;
        if !awaited {
            self.wasted_ns += work as u128;
        }
        self.served += (answer == Answer::OK) as u64;
    }

    fn result(&self, counts: Counts, end: SimTime, workers: usize) -> LayerResult {
        let (busy_share, wasted_work_share) =
            work_shares(self.busy_ns, self.wasted_ns, end, workers);
        LayerResult {
            counts,
            arrivals: self.arrivals,
            served: self.served,
            busy_share,
            wasted_work_share,
            latency_mean_ms: self.succeeded_ns as f64 / 1e6 / counts.succeeded as f64,
            series: self.series.clone(),
        }
    }
}

/// A caller slot's current request: the key of its per-attempt streams, the last answer it
/// received, when its worker above began waiting for it, the propagated deadline (when its
/// caller stops waiting; [`SimTime::NEVER`] without propagation), and when the current
/// attempt's own caller-side timer fires (what this layer propagates further down).
#[derive(Debug, Clone, Copy)]
struct Call {
    key: u64,
    last: Option<Answer>,
    since: SimTime,
    deadline: SimTime,
    expiry: SimTime,
}

/// The end of an attempt sent at `now` with `timeout` (`None`: never).
#[inline]
fn expiry(now: SimTime, timeout: Option<SimDuration>) -> SimTime {
    timeout.map_or(SimTime::NEVER, |t| now + t)
}

/// One layer from layer 2 down: its callers and its server.
struct Station<'a> {
    /// What the layer above answers upstream when its request here did not succeed.
    on_give_up: GiveUp,
    /// The layer above passes its callers' deadlines on.
    propagate: bool,
    callers: Clients,
    network: Network,
    server: Server<'a>,
    calls: Vec<Call>,
    counts: Counts,
    tally: Tally,
}

impl<'a> Station<'a> {
    /// Layer `layer` (2 and up), reached through `hop`.
    fn new(
        hop: &'a Hop,
        overrides: LayerOverrides,
        layer: u64,
        (seed, rep): (u64, u32),
        (latency, tally): (&Dist, Tally),
    ) -> Self {
        let family = |kind| StreamFamily::new(seed, rep, kind).layer(layer);
        let (client, on_give_up, propagate) = overrides.apply(hop);
        let policy = client.retry_policy(hop.backoff.clone());
        Station {
            on_give_up,
            propagate,
            callers: Clients::new(
                &client,
                policy,
                (family(StreamKind::Jitter), family(StreamKind::Throttle)),
                0,
                0,
            )
            .hearing(hop.server.retry_after_header()),
            network: Network::new(latency.clone(), family(StreamKind::Network), 0),
            server: Server::new(
                &hop.server,
                &hop.faults,
                family(StreamKind::Service),
                family(StreamKind::Faults),
            ),
            calls: Vec::new(),
            counts: Counts::default(),
            tally,
        }
    }

    /// Creates caller slots up to `s` (one per worker above, on its first call).
    fn ensure(&mut self, s: u32) {
        while self.calls.len() <= s as usize {
            self.callers.add();
            self.network.add_client();
            self.calls.push(Call {
                key: 0,
                last: None,
                since: SimTime::ZERO,
                deadline: SimTime::NEVER,
                expiry: SimTime::NEVER,
            });
        }
    }

    /// The per-attempt stream key of attempt `tag` of caller slot `s`.
    #[inline]
    fn stream(&self, s: u32, tag: u32) -> (u64, u64) {
        let key = self.calls[s as usize].key;
        match self.callers.attempt(s, tag) {
            Some(a) => (key, a as u64),
            None => (key, (1 << 40) | tag as u64),
        }
    }
}

/// Layers 2 and up, and layer 1's tally.
pub(super) struct Stations<'a> {
    /// Attempts layer 1 answered with a success (the rest of layer 1 is measured by the
    /// engine's recorder: its server and callers are the engine's own).
    pub first_served: u64,
    /// When each edge client's current attempt times out (what layer 1 propagates down).
    first_expiry: Vec<SimTime>,
    /// `inner[j]` is layer `j + 2`.
    inner: Vec<Station<'a>>,
}

impl<'a> Stations<'a> {
    /// The chain's stations as `spec`'s strategy runs them (layer 1's series is the run's).
    pub fn new(chain: &'a Chain, spec: &RunSpec) -> Self {
        let model = spec.model;
        let tally = || Tally::new(model.bucket, spec.keep_series);
        Stations {
            first_served: 0,
            first_expiry: Vec::new(),
            inner: (chain.hops.iter().enumerate())
                .map(|(j, hop)| {
                    Station::new(
                        hop,
                        spec.strategy.layer(j),
                        j as u64 + 2,
                        (spec.seed, spec.replication),
                        (&model.latency, tally()),
                    )
                })
                .collect(),
        }
    }

    /// True when layer 1 calls another layer (a chain of one layer is a lone server).
    pub fn calls_down(&self) -> bool {
        !self.inner.is_empty()
    }

    /// Edge client `c` sent an attempt at `now` that times out after `timeout`.
    #[inline]
    pub fn sent(&mut self, c: u32, now: SimTime, timeout: Option<SimDuration>) {
        let c = c as usize;
        if self.first_expiry.len() <= c {
            self.first_expiry.resize(c + 1, SimTime::NEVER);
        }
        self.first_expiry[c] = expiry(now, timeout);
    }

    /// One result per layer after `layer1`, which the engine measured (its recorder's counts,
    /// arrivals, shares and latency).
    pub fn results(&self, end: SimTime, layer1: LayerResult) -> Vec<LayerResult> {
        let mut layers = vec![LayerResult {
            served: self.first_served,
            ..layer1
        }];
        for station in &self.inner {
            let mut counts = station.counts;
            counts.unfinished = station.callers.in_flight();
            layers.push(station.tally.result(counts, end, station.server.workers()));
        }
        layers
    }
}

/// The answer a layer gives upstream when its outbound request did not succeed: its last
/// received answer's status (a timeout as 504, a connection error as 502, none as 503),
/// marked "do not retry" when the layer says so or when it was marked already.
fn upstream(last: Option<Answer>, give_up: GiveUp) -> Answer {
    let status = match last {
        Some(Answer::NoRetry(code)) => return Answer::NoRetry(code),
        Some(Answer::Status(code)) => code,
        Some(Answer::Reset) => 502,
        None => 503,
    };
    match give_up {
        GiveUp::Pass => Answer::Status(status),
        GiveUp::DoNotRetry => Answer::NoRetry(status),
    }
}

/// The status a caller records for an attempt that timed out.
const GATEWAY_TIMEOUT: Answer = Answer::Status(504);

impl<'a> Sim<'a> {
    /// Station `st` (layer `st + 1`, 1 and up).
    #[inline]
    fn station(&mut self, st: usize) -> &mut Station<'a> {
        &mut self.chain.as_mut().expect("a chain event in a chain").inner[st - 1]
    }

    /// Routes an event of layers 2 and up.
    pub(super) fn hop_event(&mut self, event: Event) {
        match event {
            Event::HopArrive(h, tag) => {
                let (st, s) = unhop(h);
                self.hop_arrive(st, s, tag);
            }
            Event::HopDone(h) => {
                let (st, w) = unhop(h);
                self.hop_done(st, w);
            }
            Event::HopReply(h, tag) => {
                let (st, s) = unhop(h);
                let (answer, hint) = self.station(st).network.reply(s);
                self.hop_receive(st, s, tag, answer, hint);
            }
            Event::HopTimeout(h, tag) => {
                let (st, s) = unhop(h);
                self.hop_timeout(st, s, tag);
            }
            Event::HopWake(h) => {
                let (st, s) = unhop(h);
                self.hop_send_attempt(st, s);
            }
            Event::HopLaunch(h) => {
                let (st, s) = unhop(h);
                self.hop_launch(st, s);
            }
            _ => unreachable!("only hop events are routed here"),
        }
    }

    /// The key the outbound request of worker `w` of station `st` derives its streams from:
    /// its job's per-attempt key, mixed.
    fn job_key(&mut self, st: usize, w: u32) -> u64 {
        let (key, sub) = if st == 0 {
            let job = self.server.job(w);
            self.clients.stream(job.client, job.tag)
        } else {
            let station = self.station(st);
            let job = station.server.job(w);
            station.stream(job.client, job.tag)
        };
        mix_key(key, &[sub])
    }

    /// When the caller of the job worker `w` of station `st` serves stops waiting for it.
    fn caller_expiry(&mut self, st: usize, w: u32) -> SimTime {
        // A job whose caller no longer waits (it timed out, its answer is late) has no time
        // left: the layer below must not work for it.
        let chain = self.chain.as_ref().expect("a chain");
        if st == 0 {
            let job = self.server.job(w);
            if !self.clients.awaits(job.client, job.tag) {
                return SimTime::ZERO;
            }
            chain.first_expiry[job.client as usize]
        } else {
            let station = &chain.inner[st - 1];
            let job = station.server.job(w);
            if !station.callers.awaits(job.client, job.tag) {
                return SimTime::ZERO;
            }
            station.calls[job.client as usize].expiry
        }
    }

    /// Worker `w` of station `st - 1` finished its own service: it calls station `st`
    /// through its layer's policy, on caller slot `w`.
    pub(super) fn call_down(&mut self, st: usize, w: u32) {
        let key = self.job_key(st - 1, w);
        let deadline = if self.station(st).propagate {
            self.caller_expiry(st - 1, w)
        } else {
            SimTime::NEVER
        };
        let now = self.now;
        let station = self.station(st);
        station.ensure(w);
        station.calls[w as usize] = Call {
            key,
            last: None,
            since: now,
            deadline,
            expiry: SimTime::NEVER,
        };
        if !station.callers.begin(w, now) {
            self.recorder.ledger_fault();
            return;
        }
        station.counts.requests += 1;
        self.hop_send_attempt(st, w);
    }

    /// Caller slot `s` of station `st` wants to send: a rate limiter's token first (waking
    /// again when it is due), then a limiter slot, then launch.
    fn hop_send_attempt(&mut self, st: usize, s: u32) {
        let now = self.now;
        if let Some(wait) = self.station(st).callers.token_wait(s, now) {
            self.after(wait, Event::HopWake(hop(st, s)));
        } else if self.station(st).callers.acquire_slot(s) {
            self.hop_launch(st, s);
        }
    }

    /// Caller slot `s` of station `st`, holding its limiter slot if any, sends an attempt.
    fn hop_launch(&mut self, st: usize, s: u32) {
        let now = self.now;
        let station = self.station(st);
        let deadline = station.calls[s as usize].deadline;
        // A propagated deadline that has passed: the caller above waits no longer (and a
        // retry's budget token goes back, as for the layer's own deadline).
        let launch = if now >= deadline {
            station.callers.forgo_retry(s);
            Launch::Refused(Ending::GaveUpDeadline)
        } else {
            station.callers.launch(s, now)
        };
        match launch {
            Launch::Sent { tag, timeout } => {
                // The attempt's timer is cut to the propagated deadline.
                let timeout = match (timeout, deadline) {
                    (t, SimTime::NEVER) => t,
                    (None, d) => Some(d.saturating_since(now)),
                    (Some(t), d) => Some(t.min(d.saturating_since(now))),
                };
                station.calls[s as usize].expiry = expiry(now, timeout);
                station.counts.attempts += 1;
                self.hop_send(st, s, tag);
                if let Some(t) = timeout
                    && self.station(st).callers.awaits(s, tag)
                {
                    self.after(t, Event::HopTimeout(hop(st, s), tag));
                }
            }
            Launch::Refused(ending) => {
                self.hop_release_slot(st);
                self.hop_end(st, s, ending);
            }
        }
    }

    /// Attempt `tag` of caller slot `s` leaves for station `st`.
    fn hop_send(&mut self, st: usize, s: u32, tag: u32) {
        let station = self.station(st);
        if station.network.is_instant() {
            self.hop_arrive(st, s, tag);
        } else {
            let stream = station.stream(s, tag);
            let d = station.network.first_leg(s, stream);
            self.after(d, Event::HopArrive(hop(st, s), tag));
        }
    }

    /// Attempt `tag` of caller slot `s` reaches station `st`'s server.
    fn hop_arrive(&mut self, st: usize, s: u32, tag: u32) {
        let now = self.now;
        let station = self.station(st);
        let first = station.callers.is_first(s, tag);
        station.tally.arrival(now, first);
        let visit = Visit {
            client: s,
            tag,
            stream: station.stream(s, tag),
        };
        match station.server.admit(now, visit) {
            Admission::Serve { slot, service } => {
                self.after(service, Event::HopDone(hop(st, slot)))
            }
            Admission::Wait | Admission::Drop => {}
            Admission::Reject { answer, hint } => self.hop_answer(st, s, tag, answer, hint, 0),
            // A chain's layers are queues (checked by the scenario).
            Admission::Read { .. } => self.hop_answer(st, s, tag, Answer::Status(501), None, 0),
        }
    }

    /// Worker `w` of station `st` finished its own service: the last layer answers, a
    /// calling layer calls the next.
    fn hop_done(&mut self, st: usize, w: u32) {
        if st == self.chain.as_ref().map_or(0, |c| c.inner.len()) {
            self.hop_release(st, w, Answer::OK, 0);
        } else {
            self.call_down(st + 1, w);
        }
    }

    /// Worker `w` of station `st` (1 and up) is done with its attempt, `held` nanoseconds
    /// after its own service: the answer goes back, then the worker takes the next waiting
    /// attempt.
    fn hop_release(&mut self, st: usize, w: u32, answer: Answer, held: u64) {
        let now = self.now;
        let station = self.station(st);
        let job = station.server.depart(w);
        let work = job.work + held;
        let awaited = station.callers.awaits(job.client, job.tag);
        station.tally.work(work, awaited, answer);
        if awaited {
            self.hop_answer(st, job.client, job.tag, answer, None, work);
        }
        let station = self.station(st);
        let callers = &station.callers;
        if let Some((c, tag)) = station
            .server
            .next_waiting(w, false, |c, tag| callers.awaits(c, tag))
        {
            let visit = Visit {
                client: c,
                tag,
                stream: station.stream(c, tag),
            };
            let service = station.server.serve(now, w, visit);
            self.after(service, Event::HopDone(hop(st, w)));
        }
    }

    /// Sends `answer` from station `st` back to caller slot `s`, if it still waits for
    /// attempt `tag`; `work` is the worker time spent on it.
    fn hop_answer(
        &mut self,
        st: usize,
        s: u32,
        tag: u32,
        answer: Answer,
        hint: Option<SimDuration>,
        work: u64,
    ) {
        let station = self.station(st);
        if !station.callers.awaits(s, tag) {
            return;
        }
        if station.network.is_instant() {
            self.hop_receive(st, s, tag, answer, hint);
        } else {
            let d = station.network.reply_leg(s, tag, work, answer, hint);
            self.after(d, Event::HopReply(hop(st, s), tag));
        }
    }

    /// An answer reaches caller slot `s` of station `st`.
    fn hop_receive(
        &mut self,
        st: usize,
        s: u32,
        tag: u32,
        answer: Answer,
        hint: Option<SimDuration>,
    ) {
        let station = self.station(st);
        if !station.callers.awaits(s, tag) {
            return;
        }
        station.calls[s as usize].last = Some(answer);
        self.hop_conclude(st, s, answer.outcome(), hint);
    }

    /// The timer of attempt `tag` of caller slot `s` of station `st` fired.
    fn hop_timeout(&mut self, st: usize, s: u32, tag: u32) {
        let station = self.station(st);
        if !station.callers.awaits(s, tag) {
            return;
        }
        // A served answer already on its way back is now work nobody will use.
        if let Some(work) = station.network.reply_work(s, tag) {
            station.tally.wasted_ns += work as u128;
        }
        station.calls[s as usize].last = Some(GATEWAY_TIMEOUT);
        self.hop_conclude(st, s, Outcome::Timeout, None);
    }

    /// Caller slot `s`'s attempt ended with `outcome`: it sleeps or its request ends.
    fn hop_conclude(&mut self, st: usize, s: u32, outcome: Outcome, hint: Option<SimDuration>) {
        self.hop_release_slot(st);
        let now = self.now;
        let station = self.station(st);
        let deadline = station.calls[s as usize].deadline;
        match station.callers.conclude(s, now, outcome, hint) {
            // A retry that could not be sent before the propagated deadline is not taken, as
            // with the layer's own deadline.
            Next::Sleep(sleep) if now + sleep >= deadline => {
                station.callers.forgo_retry(s);
                self.hop_end(st, s, Ending::GaveUpDeadline)
            }
            Next::Sleep(sleep) => self.after(sleep, Event::HopWake(hop(st, s))),
            Next::End(ending) => self.hop_end(st, s, ending),
        }
    }

    /// Frees a limiter slot of station `st`'s callers; a waiter handed it launches by event.
    fn hop_release_slot(&mut self, st: usize) {
        if let Some(next) = self.station(st).callers.release_slot() {
            self.after(SimDuration::ZERO, Event::HopLaunch(hop(st, next)));
        }
    }

    /// Caller slot `s`'s request to station `st` ends: its worker above answers upstream.
    fn hop_end(&mut self, st: usize, s: u32, ending: Ending) {
        let now = self.now;
        let station = self.station(st);
        if station.callers.end(s).is_none() {
            self.recorder.ledger_fault();
            return;
        }
        station.counts.record(ending);
        let call = station.calls[s as usize];
        let held = now.saturating_since(call.since).as_nanos();
        if ending == Ending::Succeeded {
            station.tally.succeeded_ns += held as u128;
        }
        let answer = match ending {
            Ending::Succeeded => Answer::OK,
            _ => upstream(call.last, station.on_give_up),
        };
        if st == 1 {
            self.release(s, answer, held);
        } else {
            self.hop_release(st - 1, s, answer, held);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Chains with the last layer failing throughout and immediate retries: the attempts
    //! reaching each layer are products of the attempts each layer makes, computed by hand.

    use super::*;
    use crate::backoff::{Backoff, Jitter};
    use crate::policy::BudgetConfig;
    use crate::sim::client::{ClientConfig, Scope};
    use crate::sim::faults::{Fault, FaultKind, OutageAnswer};
    use crate::sim::model::{Model, RunSpec, Strategy};
    use crate::sim::recovery::RecoveryConfig;
    use crate::sim::run;
    use crate::sim::workload::Workload;

    use super::super::tests::{constant, ms, queue, run_immediate};

    /// Immediate retries.
    fn immediate() -> Backoff {
        Backoff::new(Jitter::None, ms(10), 2.0, ms(1000)).unwrap()
    }

    /// A 503 outage for the whole run.
    fn outage() -> Vec<Fault> {
        vec![Fault {
            kind: FaultKind::Outage(OutageAnswer::Status(503)),
            start: SimTime::ZERO,
            end: SimTime::ZERO + SimDuration::from_secs(3600),
        }]
    }

    /// `clients` requests at time zero into a chain of `layers` layers (64 workers serving 1 ms
    /// each, unbounded waiting rooms) over a network of `latency` per leg; the edge and every calling layer make `n` attempts, and the last
    /// layer fails throughout.
    fn chain(clients: u32, layers: usize, n: u32, latency: u64) -> Model {
        let hop = |layer: usize| Hop {
            client: ClientConfig::bare(Some(n)),
            backoff: immediate(),
            backoff_keys: Vec::new(),
            on_give_up: GiveUp::Pass,
            propagate_deadline: false,
            server: queue(64, None, 1),
            faults: if layer == layers {
                outage()
            } else {
                Vec::new()
            },
        };
        Model {
            horizon: SimDuration::from_secs(60),
            workload: Workload::Burst {
                clients,
                start: SimDuration::ZERO,
                spread: SimDuration::ZERO,
            },
            server: queue(64, None, 1),
            latency: constant(latency),
            client: ClientConfig::bare(Some(n)),
            faults: if layers == 1 { outage() } else { Vec::new() },
            bucket: ms(10),
            trigger: None,
            recovery: RecoveryConfig::default(),
            chain: (layers > 1).then(|| Chain {
                names: (1..=layers).map(|l| format!("layer{l}")).collect(),
                hops: (2..=layers).map(hop).collect(),
            }),
        }
    }

    #[test]
    fn n_attempts_at_each_of_l_layers_reach_the_last_n_to_the_l_times() {
        for layers in 1..=4usize {
            for n in 1..=3u32 {
                for latency in [0, 1] {
                    let clients = 5;
                    let r = run_immediate(&chain(clients, layers, n, latency));
                    let at = |layer: usize| u64::from(clients) * u64::from(n).pow(layer as u32);
                    let case = format!("{layers} layers, {n} attempts, latency {latency}");
                    assert_eq!(r.counts.attempts, at(1), "{case}");
                    assert_eq!(r.counts.gave_up_attempts, u64::from(clients), "{case}");
                    if layers == 1 {
                        assert!(r.layers.is_empty(), "{case}");
                        continue;
                    }
                    assert_eq!(r.layers.len(), layers, "{case}");
                    for (i, layer) in r.layers.iter().enumerate() {
                        let l = i + 1;
                        assert_eq!(layer.arrivals, at(l), "{case}: layer {l}");
                        assert_eq!(
                            layer.amplification(r.counts.requests),
                            f64::from(n).powi(l as i32),
                            "{case}: layer {l}"
                        );
                        // Every request into a layer below the first is a served attempt
                        // of the layer above, and it fails.
                        if l > 1 {
                            assert_eq!(layer.counts.requests, at(l - 1), "{case}: layer {l}");
                            assert_eq!(layer.counts.attempts, at(l), "{case}: layer {l}");
                            assert_eq!(layer.counts.gave_up_attempts, at(l - 1), "{case}");
                        }
                        assert_eq!(layer.served, 0, "{case}: layer {l}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_healthy_chain_serves_every_request_once_per_layer() {
        let mut m = chain(5, 3, 3, 1);
        m.chain.as_mut().unwrap().hops[1].faults.clear();
        let r = run_immediate(&m);
        assert_eq!(r.counts.succeeded, 5);
        for layer in &r.layers {
            assert_eq!((layer.arrivals, layer.served), (5, 5));
        }
        // One request, alone: 1 ms legs and 1 ms of service per layer, 3 layers deep.
        assert_eq!(r.latency_mean_ms, 9.0);
        // Layer 1's worker is busy from 1 ms to 8 ms: its own 1 ms of service, then 6 ms
        // waiting for layer 2 (a leg, 4 ms below, a leg back).
        let l1 = &r.layers[0];
        assert_eq!(l1.wasted_work_share, 0.0);
        assert_eq!(l1.busy_share, 5.0 * 7.0 / (64.0 * 9.0));
    }

    #[test]
    fn do_not_retry_stops_the_retries_above_the_layer_that_gave_up() {
        // Layer 2 tries layer 3 three times, gives up and says "do not retry": layer 1 (which
        // passes what it gets on, the mark included) and the edge stop after their first
        // attempt, and the request fails.
        let mut m = chain(5, 3, 3, 0);
        m.chain.as_mut().unwrap().hops[1].on_give_up = GiveUp::DoNotRetry;
        let r = run_immediate(&m);
        let arrivals: Vec<u64> = r.layers.iter().map(|l| l.arrivals).collect();
        assert_eq!(arrivals, [5, 5, 15]);
        assert_eq!((r.counts.failed, r.counts.attempts), (5, 5));
        // Only at layer 2, the one that gave up, do the retries stop for its own reason.
        assert_eq!(r.layers[1].counts.failed, 5);
        assert_eq!(r.layers[2].counts.gave_up_attempts, 5);
        // Passing the status on instead, the storm is 27 per request.
        m.chain.as_mut().unwrap().hops[1].on_give_up = GiveUp::Pass;
        let storm = run_immediate(&m);
        assert_eq!(storm.layers[2].arrivals, 5 * 27);
    }

    #[test]
    fn a_budget_in_the_middle_caps_the_retries_into_the_last_layer() {
        // One request; layer 2 shares a token bucket of 10 with retries costing 5: two retries
        // in the whole run. Layer 2 gets 3 × 3 = 9 requests: the first makes 3 attempts, the
        // other 8 one each, so 11 attempts reach layer 3 instead of 27.
        let mut m = chain(1, 3, 3, 0);
        m.chain.as_mut().unwrap().hops[1].client.budget = Some((
            BudgetConfig::TokenBucket {
                capacity: 10,
                retry_cost: 5,
                timeout_cost: 10,
                throttling_cost: 5,
                success_refund: 1,
            },
            Scope::Shared,
        ));
        let r = run_immediate(&m);
        let arrivals: Vec<u64> = r.layers.iter().map(|l| l.arrivals).collect();
        assert_eq!(arrivals, [3, 9, 11]);
        assert_eq!(r.layers[2].counts.gave_up_budget, 8);
        assert_eq!(r.layers[2].counts.gave_up_attempts, 1);
    }

    /// Two layers, 1 ms legs and 1 ms service: the edge tries once with a 20 ms timeout;
    /// layer 1 tries layer 2 (failing throughout) up to 5 times, sleeping 10, 20, 40, 80 ms.
    fn deadline_chain(propagate: bool) -> Model {
        let mut m = chain(1, 2, 5, 1);
        m.client = ClientConfig::bare(Some(1));
        m.client.timeout = Some(ms(20));
        let hop = &mut m.chain.as_mut().unwrap().hops[0];
        hop.backoff = Backoff::new(Jitter::NoJitter, ms(10), 2.0, ms(1000)).unwrap();
        hop.client.timeout = Some(ms(1000));
        hop.propagate_deadline = propagate;
        m
    }

    #[test]
    fn a_propagated_deadline_stops_the_retries_below_a_caller_that_left() {
        // Layer 1's request to layer 2 starts at 2 ms (1 ms leg, 1 ms service); attempts go
        // out at 2 and 14 ms (an answer takes 2 ms, then a 10 ms sleep); the next would go
        // out at 16 + 20 = 36 ms, past the edge attempt's end at 20 ms: with propagation it
        // is not taken (deadline), without it all 5 attempts go out (2, 14, 36, 78, 160 ms).
        let r = run_immediate(&deadline_chain(true));
        assert_eq!(r.layers[1].arrivals, 2);
        assert_eq!(r.layers[1].counts.gave_up_deadline, 1);
        let r = run_immediate(&deadline_chain(false));
        assert_eq!(r.layers[1].arrivals, 5);
        assert_eq!(r.layers[1].counts.gave_up_attempts, 1);
        // The edge timed out at 20 ms either way; layer 1's worker stayed busy for it until
        // its request below ended: 16 ms after its own service with propagation (the give-up
        // at 18 ms, from 2 ms), 160 ms without (the fifth answer at 162 ms).
        assert_eq!(r.counts.failed + r.counts.gave_up_attempts, 1);
        assert!(r.layers[0].wasted_work_share > 0.0);
    }

    #[test]
    fn a_strategy_overrides_a_layer_and_leaves_the_others() {
        // 3 layers, 3 attempts each; the strategy lets layer 2 (hop 1) call layer 3 once and
        // marks layer 1's give-ups "do not retry": 1 attempt at layer 1 (the edge does not
        // retry the mark), 3 at layer 2, 3 at layer 3.
        let m = chain(1, 3, 3, 0);
        let strategy = Strategy {
            layers: vec![
                LayerOverrides {
                    on_give_up: Some(GiveUp::DoNotRetry),
                    ..LayerOverrides::default()
                },
                LayerOverrides {
                    client: crate::sim::ClientOverrides {
                        max_attempts: Some(Some(1)),
                        ..Default::default()
                    },
                    ..LayerOverrides::default()
                },
            ],
            ..Strategy::new("override", immediate())
        };
        let r = run(RunSpec {
            model: &m,
            strategy: &strategy,
            seed: 1,
            replication: 0,
            keep_series: false,
        });
        let arrivals: Vec<u64> = r.layers.iter().map(|l| l.arrivals).collect();
        assert_eq!(arrivals, [1, 3, 3]);
        assert!(r.layers.iter().all(LayerResult::conserved));
    }

    #[test]
    fn a_job_whose_caller_left_gets_no_time_below() {
        // Edge: one client, 2 attempts, 20 ms timeout, immediate retry. Layer 1: one worker,
        // 30 ms service; layer 2 healthy. With propagation, attempt 1 (its caller left at
        // 20 ms) ends its service at 30 ms and attempt 2 (expiring at 40 ms) at 60 ms: layer 1
        // calls layer 2 for neither. Without, both reach it.
        let model = |propagate: bool| {
            let mut m = chain(1, 2, 1, 0);
            m.client = ClientConfig::bare(Some(2));
            m.client.timeout = Some(ms(20));
            m.server = queue(1, None, 30);
            let hop = &mut m.chain.as_mut().unwrap().hops[0];
            hop.faults.clear();
            hop.propagate_deadline = propagate;
            m
        };
        let arrivals = |m: &Model| -> Vec<u64> {
            run_immediate(m).layers.iter().map(|l| l.arrivals).collect()
        };
        assert_eq!(arrivals(&model(true)), [2, 0]);
        assert_eq!(arrivals(&model(false)), [2, 2]);
    }

    #[test]
    fn a_chain_of_one_layer_is_its_server() {
        let lone = chain(5, 1, 3, 1);
        let mut layer = lone.clone();
        layer.chain = Some(Chain {
            names: vec!["only".into()],
            hops: Vec::new(),
        });
        let (a, b) = (run_immediate(&lone), run_immediate(&layer));
        assert_eq!((a.counts, a.events), (b.counts, b.events));
        assert_eq!(b.layers.len(), 1);
        assert_eq!(b.layers[0].arrivals, 15);
    }
}
