//! The run loop: state of one simulation, event dispatch, and the final tally.

use super::client::{Client, Guards};
use super::event::Event;
use super::metrics::{Counts, RunResult, TimeSeries, new_latency_histogram, ratio};
use super::queue::EventQueue;
use super::server::ServerState;
use super::workload::{Workload, burst_times, exponential};
use super::{Model, RunSpec};
use crate::policy::RetryPolicy;
use crate::rng::{SimRng, StreamFamily, StreamKind};
use crate::time::{SimDuration, SimTime};

/// The random streams of one run.
pub(super) struct Streams {
    pub jitter: StreamFamily,
    pub service: StreamFamily,
    pub faults: StreamFamily,
    pub network: StreamFamily,
    pub think: StreamFamily,
}

/// Running measurements.
pub(super) struct Meter {
    pub counts: Counts,
    pub latency_us: hdrhistogram::Histogram<u64>,
    /// Exact sum of succeeded requests' latencies, for an exact mean.
    pub latency_sum_ns: u128,
    pub by_attempt: Vec<u64>,
    pub series: TimeSeries,
    /// Index of the bucket holding `now`.
    pub bucket: usize,
    pub bucket_ns: u64,
    /// Buckets up to the horizon.
    pub max_buckets: usize,
    /// Attempts at the server now (waiting or in service).
    pub in_system: u32,
    pub busy_ns: u128,
    pub wasted_ns: u128,
    pub error_answers: u64,
    pub hinted_answers: u64,
    pub events: u64,
    pub makespan: SimTime,
}

impl Meter {
    /// Moves the bucket cursor to `now`, closing the buckets passed (their `in_system` is the
    /// count at their end) and growing the series lazily.
    #[inline]
    pub fn advance(&mut self, now: SimTime) {
        let b = (now.as_nanos() / self.bucket_ns) as usize;
        if b == self.bucket && b < self.series.len() {
            return;
        }
        if b >= self.series.len() {
            // Doubling, but never past the horizon's last bucket.
            let len = (self.series.len() * 2)
                .max(64)
                .min(self.max_buckets)
                .max(b + 1);
            for v in self.series.columns_mut() {
                v.resize(len, 0);
            }
        }
        for slot in &mut self.series.in_system[self.bucket..b] {
            *slot = self.in_system;
        }
        self.bucket = b;
    }

    #[inline]
    pub fn arrival(&mut self, first: bool) {
        let b = self.bucket;
        self.series.arrivals[b] += 1;
        if first {
            self.series.first_attempts[b] += 1;
        } else {
            self.series.retries[b] += 1;
        }
    }
}

/// A client's network state, kept only when legs take time.
#[derive(Debug, Clone)]
pub(super) struct NetState {
    /// The current attempt's stream of leg delays.
    pub rng: SimRng,
    /// The attempt whose answer is travelling back, and the service time it carries: if the
    /// client stops waiting before it lands, that work was wasted.
    pub reply_tag: u32,
    pub reply_work: u64,
}

impl Default for NetState {
    fn default() -> Self {
        NetState {
            rng: crate::rng::from_seed(0),
            reply_tag: 0,
            reply_work: 0,
        }
    }
}

/// Open-loop arrival state.
pub(super) struct Poisson {
    pub rng: SimRng,
    pub mean_gap_ns: f64,
    pub end: SimTime,
}

/// One simulation in progress.
pub(super) struct Sim<'a> {
    pub model: &'a Model,
    pub policy: RetryPolicy,
    pub now: SimTime,
    pub queue: EventQueue,
    pub clients: Vec<Client>,
    pub server: ServerState,
    pub guards: Guards,
    pub streams: Streams,
    pub meter: Meter,
    /// True when every network leg takes zero time: answers are handled at once, no events.
    pub zero_latency: bool,
    /// Each client's network state for its current attempt (empty when `zero_latency`).
    pub network: Vec<NetState>,
    pub poisson: Option<Poisson>,
}

/// Simulates one (point, strategy, replication).
pub fn run(spec: RunSpec<'_>) -> RunResult {
    let model = spec.model;
    let (seed, rep) = (spec.seed, spec.replication);
    let initial = model.workload.initial_clients();
    let streams = Streams {
        jitter: StreamFamily::new(seed, rep, StreamKind::Jitter),
        service: StreamFamily::new(seed, rep, StreamKind::Service),
        faults: StreamFamily::new(seed, rep, StreamKind::Faults),
        network: StreamFamily::new(seed, rep, StreamKind::Network),
        think: StreamFamily::new(seed, rep, StreamKind::Think),
    };
    let clients: Vec<Client> = (0..initial)
        .map(|c| Client::new(streams.jitter.get(c as u64, 0)))
        .collect();
    let mut sim = Sim {
        model,
        policy: model.client.retry_policy(spec.strategy.backoff.clone()),
        now: SimTime::ZERO,
        queue: EventQueue::with_capacity(1024),
        clients,
        server: ServerState::new(&model.server),
        guards: Guards::new(&model.client, initial as usize),
        streams,
        meter: Meter {
            counts: Counts::default(),
            latency_us: new_latency_histogram(),
            latency_sum_ns: 0,
            by_attempt: Vec::new(),
            series: TimeSeries {
                bucket: model.bucket,
                ..TimeSeries::default()
            },
            bucket: 0,
            bucket_ns: model.bucket.as_nanos().max(1),
            max_buckets: (model.horizon.as_nanos() / model.bucket.as_nanos().max(1)) as usize + 1,
            in_system: 0,
            busy_ns: 0,
            wasted_ns: 0,
            error_answers: 0,
            hinted_answers: 0,
            events: 0,
            makespan: SimTime::ZERO,
        },
        zero_latency: model.latency.is_zero(),
        network: Vec::new(),
        poisson: None,
    };
    if !sim.zero_latency {
        sim.network = vec![NetState::default(); initial as usize];
    }
    sim.schedule_workload(seed, rep);
    let horizon = SimTime(model.horizon.as_nanos());
    while let Some((now, event)) = sim.queue.pop_until(horizon) {
        sim.now = now;
        sim.meter.advance(now);
        sim.meter.events += 1;
        sim.dispatch(event);
    }
    sim.finish(horizon, spec.keep_series)
}

impl Sim<'_> {
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
                        let mut rng = self.streams.think.get(c as u64, 0);
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
                let mut rng = StreamFamily::new(seed, rep, StreamKind::Arrivals).get(0, 0);
                let mean_gap_ns = 1e9 / rate;
                let first = SimTime(start.as_nanos()) + exponential(&mut rng, mean_gap_ns);
                let end = SimTime(start.as_nanos()) + duration;
                if first < end {
                    self.queue.push(first, Event::NextArrival);
                }
                self.clients
                    .reserve(self.model.workload.expected_requests().min(1 << 24));
                self.poisson = Some(Poisson {
                    rng,
                    mean_gap_ns,
                    end,
                });
            }
        }
    }

    #[inline]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Start(c) => self.start_request(c),
            Event::Wake(c) => self.send_attempt(c),
            Event::Launch(c) => self.launch(c),
            Event::Arrive(c, a) => self.arrive(c, a),
            Event::ServiceDone(slot) => self.service_done(slot),
            Event::Reply(c, a) => self.reply_arrives(c, a),
            Event::Timeout(c, a) => self.timeout(c, a),
            Event::NextArrival => self.next_arrival(),
            Event::ReadArrive(c, a) => self.read_arrive(c, a),
            Event::ReadReply(c, a) => self.read_reply(c, a),
            Event::WriteArrive(c, a) => self.write_arrive(c, a),
        }
    }

    fn next_arrival(&mut self) {
        let Some(p) = self.poisson.as_mut() else {
            return;
        };
        let next = self.now + exponential(&mut p.rng, p.mean_gap_ns);
        let end = p.end;
        let c = self.clients.len() as u32;
        self.clients
            .push(Client::new(self.streams.jitter.get(c as u64, 0)));
        if !self.zero_latency {
            self.network.push(NetState::default());
        }
        self.guards.add_client();
        if next < end {
            self.queue.push(next, Event::NextArrival);
        }
        self.start_request(c);
    }

    /// Schedules `event` after `delay`.
    #[inline]
    pub fn after(&mut self, delay: SimDuration, event: Event) {
        self.queue.push(self.now + delay, event);
    }

    fn finish(mut self, horizon: SimTime, keep_series: bool) -> RunResult {
        let end = if self.queue.is_empty() {
            self.now
        } else {
            horizon
        };
        self.meter.advance(end);
        let meter = &mut self.meter;
        let used = meter.bucket + 1;
        meter.series.truncate(used);
        let last = meter.series.in_system.len() - 1;
        meter.series.in_system[last] = meter.in_system;
        let mut counts = meter.counts;
        counts.unfinished = counts.requests - counts.ended();
        let capacity_ns = self.server.workers() as f64 * end.as_nanos() as f64;
        let total_service = meter.busy_ns as f64;
        RunResult {
            counts,
            latency_mean_ms: if counts.succeeded == 0 {
                f64::NAN
            } else {
                meter.latency_sum_ns as f64 / counts.succeeded as f64 / 1e6
            },
            latency_us: std::mem::replace(&mut meter.latency_us, new_latency_histogram()),
            peak_arrivals: meter.series.arrivals.iter().copied().max().unwrap_or(0),
            peak_retries: meter.series.retries.iter().copied().max().unwrap_or(0),
            makespan: meter.makespan,
            server_busy_share: if capacity_ns > 0.0 {
                (total_service / capacity_ns).min(1.0)
            } else {
                0.0
            },
            wasted_work_share: if total_service > 0.0 {
                meter.wasted_ns as f64 / total_service
            } else {
                0.0
            },
            retry_after_share: ratio(meter.hinted_answers, meter.error_answers),
            events: meter.events,
            by_attempt: std::mem::take(&mut meter.by_attempt),
            series: keep_series.then(|| std::mem::take(&mut meter.series)),
        }
    }
}
