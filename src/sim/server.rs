//! The servers: a capacity-limited queue, or one optimistic-concurrency row.
//!
//! **queue**: `workers` attempts are served at once, FIFO, with a waiting room of `queue`
//! places (or unbounded); an arrival that finds it full is answered `overload_status` with an
//! optional Retry-After hint. An optional token-bucket rate limiter in front answers 429 with
//! the time until its next token. With `drop_expired`, a waiting attempt whose client stopped
//! waiting is discarded instead of served. Service spent on attempts nobody waits for any
//! more is counted as wasted work.
//!
//! **occ** (Brooker 2015): one row with a version. An attempt reads the version (one round
//! trip), then writes it back (one more leg); the write fails with 409 when another write
//! landed in between. No capacity limit, no service time: contention, not overload.

use std::collections::VecDeque;

use rand::RngExt;
use rand::distr::Distribution;

use super::client::Answer;
use super::dist::Dist;
use super::engine::Sim;
use super::event::Event;
use super::faults::{FaultKind, OutageAnswer};
use crate::time::{SimDuration, SimTime};

/// The Retry-After hint the queue server sends when it turns an arrival away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfterHint {
    /// No hint.
    Off,
    /// Always this long.
    Fixed(SimDuration),
    /// The estimated time for the waiting room to drain (queue length × mean service /
    /// workers): when a place will surely be free.
    Drain,
}

/// A token bucket in front of the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// Tokens per second.
    pub rate: f64,
    /// Bucket size (the burst let through at once).
    pub burst: u32,
}

/// The queue server's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueConfig {
    /// Attempts served at once.
    pub workers: u32,
    /// Waiting-room places (`None`: unbounded).
    pub queue: Option<u32>,
    /// Service time of one attempt.
    pub service: Dist,
    /// The status for an arrival that finds the waiting room full.
    pub overload_status: u16,
    /// The hint sent with overload answers.
    pub retry_after: RetryAfterHint,
    /// An optional rate limiter.
    pub rate_limit: Option<RateLimit>,
    /// Discard waiting attempts whose client already gave up on them.
    pub drop_expired: bool,
}

/// Which server.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerConfig {
    /// A capacity-limited queue.
    Queue(QueueConfig),
    /// One optimistic-concurrency row.
    Occ,
}

impl ServerConfig {
    /// The scenario name of the kind.
    pub fn kind(&self) -> &'static str {
        match self {
            ServerConfig::Queue(_) => "queue",
            ServerConfig::Occ => "occ",
        }
    }
}

/// An attempt in service.
#[derive(Debug, Clone, Copy)]
pub(super) struct InService {
    client: u32,
    tag: u32,
    duration: u64,
}

/// The queue server's state.
pub(super) struct QueueState {
    workers: Vec<InService>,
    free: Vec<u32>,
    waiting: VecDeque<(u32, u32)>,
    capacity: usize,
    mean_service_ns: f64,
    tokens: f64,
    refilled: SimTime,
}

/// Server state of either kind.
pub(super) enum ServerState {
    Queue(QueueState),
    Occ { version: u32 },
}

impl ServerState {
    pub fn new(config: &ServerConfig) -> Self {
        match config {
            ServerConfig::Queue(q) => ServerState::Queue(QueueState {
                workers: vec![
                    InService {
                        client: 0,
                        tag: 0,
                        duration: 0
                    };
                    q.workers as usize
                ],
                free: (0..q.workers).rev().collect(),
                waiting: VecDeque::new(),
                capacity: q.queue.map_or(usize::MAX, |n| n as usize),
                mean_service_ns: q.service.mean_nanos(),
                tokens: q.rate_limit.map_or(0.0, |r| r.burst as f64),
                refilled: SimTime::ZERO,
            }),
            ServerConfig::Occ => ServerState::Occ { version: 0 },
        }
    }

    /// Workers (1 for the OCC row, for the busy share).
    pub fn workers(&self) -> usize {
        match self {
            ServerState::Queue(q) => q.workers.len(),
            ServerState::Occ { .. } => 1,
        }
    }
}

impl Sim<'_> {
    /// The next network leg of client `c`'s current attempt. The attempt's legs are drawn in
    /// order from its own stream, seeded when it leaves the client (`first`): every strategy
    /// sees the same delays for the same request's same attempt.
    #[inline]
    fn leg(&mut self, c: u32, tag: u32, first: bool) -> SimDuration {
        let net = &mut self.network[c as usize];
        if first {
            let (key, sub) = self.clients[c as usize].attempt_stream(c, tag);
            net.rng = self.streams.network.get(key, sub);
        }
        SimDuration(self.model.latency.sample(&mut net.rng))
    }

    /// The attempt leaves the client: it reaches the server after one leg.
    pub(super) fn server_receive(&mut self, c: u32, tag: u32) {
        let occ = matches!(self.server, ServerState::Occ { .. });
        if self.zero_latency {
            if occ {
                self.read_arrive(c, tag)
            } else {
                self.arrive(c, tag)
            }
        } else {
            let d = self.leg(c, tag, true);
            self.after(
                d,
                if occ {
                    Event::ReadArrive(c, tag)
                } else {
                    Event::Arrive(c, tag)
                },
            );
        }
    }

    /// Sends `answer` back to client `c` over one leg, if it still waits for that attempt.
    /// `work` is the service time spent on it (0 for an answer given without serving).
    fn answer(&mut self, c: u32, tag: u32, answer: Answer, hint: Option<SimDuration>, work: u64) {
        if !self.clients[c as usize].awaits(tag) {
            return;
        }
        if self.zero_latency {
            self.receive(c, tag, answer, hint);
        } else {
            let d = self.leg(c, tag, false);
            let net = &mut self.network[c as usize];
            net.reply_tag = tag;
            net.reply_work = work;
            let client = &mut self.clients[c as usize];
            client.reply = answer;
            client.reply_hint = hint.map_or(super::client::NO_HINT, SimDuration::as_nanos);
            self.after(d, Event::Reply(c, tag));
        }
    }

    /// Turns an attempt away without serving it.
    fn reject(&mut self, c: u32, tag: u32, answer: Answer, hint: Option<SimDuration>) {
        let b = self.meter.bucket;
        self.meter.series.rejections[b] += 1;
        self.meter.error_answers += 1;
        self.meter.hinted_answers += hint.is_some() as u64;
        self.answer(c, tag, answer, hint, 0);
    }

    /// Applies outage and error faults at an arrival; true when the attempt was answered.
    fn apply_faults(&mut self, c: u32, tag: u32) -> bool {
        let now = self.now;
        for (i, fault) in self.model.faults.iter().enumerate() {
            if !fault.active(now) {
                continue;
            }
            match fault.kind {
                FaultKind::Outage(OutageAnswer::Status(s)) => {
                    self.reject(c, tag, Answer::Status(s), None);
                    return true;
                }
                FaultKind::Outage(OutageAnswer::Reset) => {
                    self.reject(c, tag, Answer::Reset, None);
                    return true;
                }
                FaultKind::Outage(OutageAnswer::Drop) => {
                    let b = self.meter.bucket;
                    self.meter.series.rejections[b] += 1;
                    return true;
                }
                FaultKind::Errors { share, status } => {
                    let (key, sub) = self.clients[c as usize].attempt_stream(c, tag);
                    let mut rng = self.streams.faults.get(key, (sub << 8) | i as u64);
                    if rng.random::<f64>() < share {
                        self.reject(c, tag, Answer::Status(status), None);
                        return true;
                    }
                }
                FaultKind::Slow { .. } => {}
            }
        }
        false
    }

    /// Queue server: an attempt arrives.
    pub(super) fn arrive(&mut self, c: u32, tag: u32) {
        let first = self.clients[c as usize].attempt_of(tag) == Some(1);
        self.meter.arrival(first);
        if !self.model.faults.is_empty() && self.apply_faults(c, tag) {
            return;
        }
        let ServerState::Queue(q) = &mut self.server else {
            return;
        };
        let ServerConfig::Queue(config) = &self.model.server else {
            return;
        };
        if let Some(limit) = config.rate_limit {
            let elapsed = self.now.saturating_since(q.refilled).as_secs_f64();
            q.tokens = (q.tokens + elapsed * limit.rate).min(limit.burst as f64);
            q.refilled = self.now;
            if q.tokens >= 1.0 {
                q.tokens -= 1.0;
            } else {
                let wait = SimDuration::from_secs_f64((1.0 - q.tokens) / limit.rate);
                self.reject(c, tag, Answer::Status(429), Some(wait));
                return;
            }
        }
        if let Some(slot) = q.free.pop() {
            self.meter.in_system += 1;
            self.start_service(c, tag, slot);
        } else if q.waiting.len() < q.capacity {
            q.waiting.push_back((c, tag));
            self.meter.in_system += 1;
        } else {
            let hint = match config.retry_after {
                RetryAfterHint::Off => None,
                RetryAfterHint::Fixed(d) => Some(d),
                RetryAfterHint::Drain => Some(SimDuration::from_secs_f64(
                    q.waiting.len() as f64 * q.mean_service_ns / q.workers.len() as f64 / 1e9,
                )),
            };
            self.reject(c, tag, Answer::Status(config.overload_status), hint);
        }
    }

    fn start_service(&mut self, c: u32, tag: u32, slot: u32) {
        let ServerConfig::Queue(config) = &self.model.server else {
            return;
        };
        let (key, sub) = self.clients[c as usize].attempt_stream(c, tag);
        let mut rng = self.streams.service.get(key, sub);
        let mut duration = config.service.sample(&mut rng);
        for fault in &self.model.faults {
            if let FaultKind::Slow { factor } = fault.kind
                && fault.active(self.now)
            {
                duration = SimDuration(duration).mul_f64(factor).as_nanos();
            }
        }
        if let ServerState::Queue(q) = &mut self.server {
            q.workers[slot as usize] = InService {
                client: c,
                tag,
                duration,
            };
        }
        self.after(SimDuration(duration), Event::ServiceDone(slot));
    }

    /// Queue server: worker `slot` finished; answer, then take the next waiting attempt.
    pub(super) fn service_done(&mut self, slot: u32) {
        let ServerState::Queue(q) = &mut self.server else {
            return;
        };
        let done = q.workers[slot as usize];
        self.meter.in_system -= 1;
        self.meter.busy_ns += done.duration as u128;
        if self.clients[done.client as usize].awaits(done.tag) {
            self.answer(
                done.client,
                done.tag,
                Answer::Status(200),
                None,
                done.duration,
            );
        } else {
            self.meter.wasted_ns += done.duration as u128;
        }
        let drop_expired = matches!(&self.model.server, ServerConfig::Queue(c) if c.drop_expired);
        loop {
            let ServerState::Queue(q) = &mut self.server else {
                return;
            };
            let Some((c, a)) = q.waiting.pop_front() else {
                q.free.push(slot);
                return;
            };
            if drop_expired && !self.clients[c as usize].awaits(a) {
                self.meter.in_system -= 1;
                continue;
            }
            self.start_service(c, a, slot);
            return;
        }
    }

    /// OCC: the read reaches the row; the version travels back.
    pub(super) fn read_arrive(&mut self, c: u32, tag: u32) {
        let first = self.clients[c as usize].attempt_of(tag) == Some(1);
        self.meter.arrival(first);
        if !self.model.faults.is_empty() && self.apply_faults(c, tag) {
            return;
        }
        let ServerState::Occ { version } = self.server else {
            return;
        };
        self.clients[c as usize].version = version;
        if self.zero_latency {
            self.read_reply(c, tag);
        } else {
            let d = self.leg(c, tag, false);
            self.after(d, Event::ReadReply(c, tag));
        }
    }

    /// OCC: the version reaches the client, which sends its conditional write.
    pub(super) fn read_reply(&mut self, c: u32, tag: u32) {
        if !self.clients[c as usize].awaits(tag) {
            return;
        }
        if self.zero_latency {
            self.write_arrive(c, tag);
        } else {
            let d = self.leg(c, tag, false);
            self.after(d, Event::WriteArrive(c, tag));
        }
    }

    /// OCC: the write lands if the version is unchanged, else fails with 409.
    pub(super) fn write_arrive(&mut self, c: u32, tag: u32) {
        let ServerState::Occ { version } = &mut self.server else {
            return;
        };
        if self.clients[c as usize].version == *version {
            *version += 1;
            self.answer(c, tag, Answer::Status(200), None, 0);
        } else {
            self.reject(c, tag, Answer::Status(409), None);
        }
    }
}
