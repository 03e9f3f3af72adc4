//! A chain of services: layers 2 and up, routed by the same event loop.
//!
//! Layer 1 is the engine's server. Each further layer is a [`Layer`]: a queue server with
//! its own faults, and its callers, a [`Clients`] with one slot per worker of the layer above
//! (a worker serves one attempt at a time, so its outbound request is its slot's request),
//! running the calling layer's own retry policy, guards and backoff. A calling layer's worker
//! does its own service, then calls the layer below and stays busy until that request ends;
//! it then answers its caller with the outcome (see [`upstream`]). The last layer answers
//! after its service, as the single server does. Its steps are the one request lifecycle of
//! every layer (`super::lifecycle`); this module holds what is particular to layers 2 and
//! up, the parameters of [`Below`].
//!
//! Events of layers 2 and up carry a hop: the station in the top 8 bits, a caller slot (or a
//! worker) in the low 24. Random streams of layer `n` are the engine's families moved to that
//! layer ([`StreamFamily::layer`]), so the edge's and layer 1's streams are those of a single
//! server; an attempt's per-attempt key is its caller's job key and its attempt number, so
//! every strategy draws the same service and faults for the same original attempt path.

use super::Sim;
use super::lifecycle::{Below, Edge, Parts, Station};
use crate::rng::{StreamFamily, StreamKind, mix_key};
use crate::sim::answer::Answer;
use crate::sim::client::{Clients, Request};
use crate::sim::dist::Dist;
use crate::sim::event::Event;
use crate::sim::model::{Chain, GiveUp, Hop, LayerOverrides, RunSpec};
use crate::sim::network::Network;
use crate::sim::run_result::{Counts, Ending, LayerResult, LayerSeries, work_shares};
use crate::sim::server::Server;
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
struct Layer<'a> {
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

impl<'a> Layer<'a> {
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
        Layer {
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
pub(super) struct Layers<'a> {
    /// Attempts layer 1 answered with a success (the rest of layer 1 is measured by the
    /// engine's recorder: its server and callers are the engine's own).
    pub first_served: u64,
    /// When each edge client's current attempt times out (what layer 1 propagates down).
    first_expiry: Vec<SimTime>,
    /// `inner[j]` is layer `j + 2`.
    inner: Vec<Layer<'a>>,
}

impl<'a> Layers<'a> {
    /// The chain's layers as `spec`'s strategy runs them (layer 1's series is the run's).
    pub fn new(chain: &'a Chain, spec: &RunSpec) -> Self {
        let model = spec.model;
        let tally = || Tally::new(model.bucket, spec.keep_series);
        Layers {
            first_served: 0,
            first_expiry: Vec::new(),
            inner: (chain.hops.iter().enumerate())
                .map(|(j, hop)| {
                    Layer::new(
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

    /// When edge client `c`'s current attempt times out.
    pub fn first_expiry(&self, c: u32) -> SimTime {
        self.first_expiry[c as usize]
    }

    /// One result per layer after `layer1`, which the engine measured (its recorder's counts,
    /// arrivals, shares and latency).
    pub fn results(&self, end: SimTime, layer1: LayerResult) -> Vec<LayerResult> {
        let mut layers = vec![LayerResult {
            served: self.first_served,
            ..layer1
        }];
        for layer in &self.inner {
            let mut counts = layer.counts;
            counts.unfinished = layer.callers.in_flight();
            layers.push(layer.tally.result(counts, end, layer.server.workers()));
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
    /// Layer `st + 1` (2 and up), the layer of station `Below(st)`.
    #[inline]
    fn layer_mut(&mut self, st: usize) -> &mut Layer<'a> {
        &mut self.chain.as_mut().expect("a chain event in a chain").inner[st - 1]
    }

    /// Routes an event of layers 2 and up to its station's lifecycle step.
    pub(super) fn hop_event(&mut self, event: Event) {
        match event {
            Event::HopArrive(h, tag) => {
                let (st, s) = unhop(h);
                self.arrive(Below(st), s, tag);
            }
            Event::HopDone(h) => {
                let (st, w) = unhop(h);
                self.service_done(Below(st), w);
            }
            Event::HopReply(h, tag) => {
                let (st, s) = unhop(h);
                let (answer, hint) = self.layer_mut(st).network.reply(s);
                self.receive(Below(st), s, tag, answer, hint);
            }
            Event::HopTimeout(h, tag) => {
                let (st, s) = unhop(h);
                self.timeout(Below(st), s, tag);
            }
            Event::HopWake(h) => {
                let (st, s) = unhop(h);
                self.send_attempt(Below(st), s);
            }
            Event::HopLaunch(h) => {
                let (st, s) = unhop(h);
                self.launch(Below(st), s);
            }
            _ => unreachable!("only hop events are routed here"),
        }
    }

    /// Worker `w` of `above` finished its own service: it calls `below` through its layer's
    /// policy, on caller slot `w`. The request's streams derive from its job's per-attempt
    /// key; with propagation, its deadline is when the job's own caller stops waiting (at
    /// once when it no longer waits: the layer below must not work for it).
    pub(super) fn call_down<S: Station>(&mut self, above: S, below: Below, w: u32) {
        let job = above.parts(self).server.job(w);
        let (key, sub) = above.stream(self, job.client, job.tag);
        let deadline = if !self.layer_mut(below.0).propagate {
            SimTime::NEVER
        } else if above.parts(self).callers.awaits(job.client, job.tag) {
            above.expiry(self, job.client)
        } else {
            SimTime::ZERO
        };
        let now = self.now;
        let layer = self.layer_mut(below.0);
        layer.ensure(w);
        layer.calls[w as usize] = Call {
            key: mix_key(key, &[sub]),
            last: None,
            since: now,
            deadline,
            expiry: SimTime::NEVER,
        };
        self.begin(below, w);
    }
}

impl Below {
    /// Its layer.
    #[inline]
    fn layer<'s, 'a>(self, sim: &'s Sim<'a>) -> &'s Layer<'a> {
        &sim.chain.as_ref().expect("a chain event in a chain").inner[self.0 - 1]
    }

    /// Caller slot `s`'s current request.
    #[inline]
    fn call<'s>(self, sim: &'s mut Sim<'_>, s: u32) -> &'s mut Call {
        &mut sim.layer_mut(self.0).calls[s as usize]
    }
}

/// The parameters of layers 2 and up: a layer's caller slots, network and server, its own
/// counts and tally; the deadline its callers' callers propagate; a request that ends lets
/// its worker above answer upstream.
impl Station for Below {
    const HEDGES: bool = false;

    #[inline]
    fn arrive_event(self, s: u32, tag: u32) -> Event {
        Event::HopArrive(hop(self.0, s), tag)
    }
    #[inline]
    fn done_event(self, w: u32) -> Event {
        Event::HopDone(hop(self.0, w))
    }
    #[inline]
    fn reply_event(self, s: u32, tag: u32) -> Event {
        Event::HopReply(hop(self.0, s), tag)
    }
    #[inline]
    fn timeout_event(self, s: u32, tag: u32) -> Event {
        Event::HopTimeout(hop(self.0, s), tag)
    }
    #[inline]
    fn wake_event(self, s: u32) -> Event {
        Event::HopWake(hop(self.0, s))
    }
    #[inline]
    fn launch_event(self, s: u32) -> Event {
        Event::HopLaunch(hop(self.0, s))
    }

    #[inline]
    fn parts<'s, 'a>(self, sim: &'s mut Sim<'a>) -> Parts<'s, 'a> {
        let layer = sim.layer_mut(self.0);
        Parts {
            callers: &mut layer.callers,
            network: &mut layer.network,
            server: &mut layer.server,
        }
    }
    #[inline]
    fn stream(self, sim: &Sim<'_>, s: u32, tag: u32) -> (u64, u64) {
        self.layer(sim).stream(s, tag)
    }
    #[inline]
    fn below(self, sim: &Sim<'_>) -> Option<Below> {
        let layers = sim.chain.as_ref().map_or(0, |c| c.inner.len());
        (self.0 < layers).then_some(Below(self.0 + 1))
    }
    #[inline]
    fn deadline(self, sim: &Sim<'_>, s: u32) -> Option<SimTime> {
        Some(self.layer(sim).calls[s as usize].deadline)
    }
    fn expiry(self, sim: &Sim<'_>, s: u32) -> SimTime {
        self.layer(sim).calls[s as usize].expiry
    }

    #[inline]
    fn began(self, sim: &mut Sim<'_>) {
        sim.layer_mut(self.0).counts.requests += 1;
    }
    /// The attempt's timer is cut to the propagated deadline.
    fn sent(self, sim: &mut Sim<'_>, s: u32, timeout: Option<SimDuration>) -> Option<SimDuration> {
        let now = sim.now;
        let layer = sim.layer_mut(self.0);
        let deadline = layer.calls[s as usize].deadline;
        let timeout = match (timeout, deadline) {
            (t, SimTime::NEVER) => t,
            (None, d) => Some(d.saturating_since(now)),
            (Some(t), d) => Some(t.min(d.saturating_since(now))),
        };
        layer.calls[s as usize].expiry = expiry(now, timeout);
        layer.counts.attempts += 1;
        timeout
    }
    #[inline]
    fn arrived(self, sim: &mut Sim<'_>, s: u32, tag: u32) {
        let now = sim.now;
        let layer = sim.layer_mut(self.0);
        let first = layer.callers.is_first(s, tag);
        layer.tally.arrival(now, first);
    }
    /// Drops are not tallied below layer 1.
    #[inline]
    fn dropped(self, _: &mut Sim<'_>) {}
    /// Rejections are not tallied below layer 1.
    #[inline]
    fn rejected(self, _: &mut Sim<'_>, _: bool) {}
    /// A chain's layers are queues (checked by the scenario).
    fn read(self, sim: &mut Sim<'_>, s: u32, tag: u32, _: u32) {
        sim.answer(self, s, tag, Answer::Status(501), None, 0);
    }
    #[inline]
    fn worked(self, sim: &mut Sim<'_>, work: u64, awaited: bool, answer: Answer) {
        sim.layer_mut(self.0).tally.work(work, awaited, answer);
    }
    #[inline]
    fn wasted(self, sim: &mut Sim<'_>, work: u64) {
        sim.layer_mut(self.0).tally.wasted_ns += work as u128;
    }
    #[inline]
    fn answered(self, sim: &mut Sim<'_>, s: u32, answer: Answer) {
        self.call(sim, s).last = Some(answer);
    }
    #[inline]
    fn timed_out(self, sim: &mut Sim<'_>, s: u32) {
        self.call(sim, s).last = Some(GATEWAY_TIMEOUT);
    }
    /// The worker above that waited for caller slot `s` answers its own caller: OK, or
    /// what [`upstream`] makes of the last answer it received.
    fn ended(self, sim: &mut Sim<'_>, s: u32, ending: Ending, _: Request) {
        let now = sim.now;
        let layer = sim.layer_mut(self.0);
        layer.counts.record(ending);
        let call = layer.calls[s as usize];
        let held = now.saturating_since(call.since).as_nanos();
        if ending == Ending::Succeeded {
            layer.tally.succeeded_ns += held as u128;
        }
        let answer = match ending {
            Ending::Succeeded => Answer::OK,
            _ => upstream(call.last, layer.on_give_up),
        };
        // The station above is the edge (its own type) or another `Below`.
        if self.0 == 1 {
            sim.release(Edge, s, answer, held);
        } else {
            sim.release(Below(self.0 - 1), s, answer, held);
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
    use crate::sim::run_result::RunResult;
    use crate::sim::server::{RetryAfterHint, ServerConfig};
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
            passage: Default::default(),
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

    /// Three requests at time zero into two healthy layers, 1 ms of service each and no
    /// network: layer 1's workers all call layer 2 at 1 ms; `tune` changes the hop.
    fn two_healthy_layers(tune: impl FnOnce(&mut Hop)) -> RunResult {
        let mut m = chain(3, 2, 2, 0);
        let hop = &mut m.chain.as_mut().unwrap().hops[0];
        hop.faults.clear();
        tune(hop);
        run_immediate(&m)
    }

    #[test]
    fn a_layers_callers_wait_for_a_limiter_slot_and_launch_when_one_is_freed() {
        // Without a limit the three calls into layer 2 end at 2 ms, 1 ms after they began.
        // With one slot for layer 1's callers they go one after the other, each launched
        // when the call before frees the slot: they end at 2, 3 and 4 ms.
        let free = two_healthy_layers(|_| {});
        assert_eq!(free.layers[1].latency_mean_ms, 1.0);
        let limited = two_healthy_layers(|hop| hop.client.concurrency = Some(1));
        assert_eq!(limited.layers[1].latency_mean_ms, 2.0);
        assert_eq!(limited.layers[0].latency_mean_ms, 3.0);
        assert_eq!(limited.layers[1].counts.succeeded, 3);
    }

    #[test]
    fn a_layers_caller_honours_the_retry_after_hint_of_the_layer_below() {
        // Layer 2 has one worker and no waiting room, and turns an arrival away with a 50 ms
        // hint; every backoff is immediate. Of the three calls at 1 ms one is served (1 ms
        // long); two are told to wait 50 ms (at least, over no backoff) and retry at 51 ms:
        // one is served (51 ms long), the other turned away again, out of attempts; its edge
        // client retries at once and the new call, at 52 ms, is served (1 ms). Without the
        // hint both retry at once into the busy worker and run out of attempts; their edge
        // clients' new calls at 2 ms serve one and turn the other away twice.
        let hinted = |hint| {
            two_healthy_layers(|hop| {
                let mut server = queue(1, Some(0), 1);
                if let ServerConfig::Queue(q) = &mut server {
                    q.retry_after = hint;
                }
                hop.server = server;
            })
        };
        let r = hinted(RetryAfterHint::Fixed(SimDuration::from_millis(50)));
        assert_eq!(r.layers[1].arrivals, 6);
        assert_eq!(r.layers[1].counts.succeeded, 3);
        assert!((r.layers[1].latency_mean_ms - (1.0 + 51.0 + 1.0) / 3.0).abs() < 1e-9);
        let r = hinted(RetryAfterHint::Off);
        assert_eq!(r.layers[1].arrivals, 8);
        assert_eq!(r.layers[1].counts.succeeded, 2);
        assert_eq!(r.layers[1].latency_mean_ms, 1.0);
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
