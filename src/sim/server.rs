//! The servers: a capacity-limited queue, or one optimistic-concurrency row.
//!
//! **queue**: `workers` attempts are served at once, FIFO, with a waiting room of `queue`
//! places (or unbounded); an arrival that finds it full is answered `overload_status` with an
//! optional Retry-After hint. An optional token-bucket rate limiter in front answers 429 with
//! the time until its next token. With `drop_expired`, a waiting attempt whose client stopped
//! waiting is discarded instead of served.
//!
//! **occ** (Brooker 2015): one row with a version. An attempt reads the version (one round
//! trip), then writes it back (one more leg); the write fails with 409 when another write
//! landed in between. No capacity limit, no service time: contention, not overload.
//!
//! The server is state with calls that say what happened: [`Server::admit`] for an arriving
//! attempt (serve now, wait, reject with an answer and hint, drop, or the OCC read),
//! [`Server::depart`] and [`Server::next_waiting`] when a worker finishes, [`Server::serve`]
//! to start serving, [`Server::write`] for the OCC write. It never sees clients, the clock's
//! queue or the recorder: the engine routes what it returns. Faults act here, at the instant an
//! attempt arrives (outage, errors) or starts service (slow).

use std::collections::VecDeque;

use rand::RngExt;
use rand::distr::Distribution;

use super::answer::Answer;
use super::dist::Dist;
use super::faults::{Fault, FaultKind, OutageAnswer};
use crate::policy::RetryAfterHeader;
use crate::rng::{SimRng, StreamFamily};
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

/// `workers` of a server with no capacity limit: every arrival is served at once.
pub const UNLIMITED_WORKERS: u32 = u32::MAX;

/// The queue server's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueConfig {
    /// Attempts served at once ([`UNLIMITED_WORKERS`]: no limit).
    pub workers: u32,
    /// Waiting-room places (`None`: unbounded).
    pub queue: Option<u32>,
    /// Service time of one attempt on an otherwise empty server.
    pub service: Dist,
    /// Load-dependent service: added to an attempt's service time per *other* attempt at the
    /// server (waiting or in service) when its service starts.
    pub contention: SimDuration,
    /// The status for an arrival that finds the waiting room full.
    pub overload_status: u16,
    /// The hint sent with overload answers.
    pub retry_after: RetryAfterHint,
    /// The header that carries it (`x-amz-retry-after`: whole milliseconds).
    pub retry_after_header: RetryAfterHeader,
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
    /// The attempts at which the server is full (every worker and waiting place taken);
    /// `None` when it has no limit.
    pub fn full_at(&self) -> Option<u32> {
        match self {
            ServerConfig::Queue(q) if q.workers != UNLIMITED_WORKERS => {
                q.queue.map(|room| q.workers.saturating_add(room))
            }
            _ => None,
        }
    }

    /// The scenario name of the kind.
    pub fn kind(&self) -> &'static str {
        match self {
            ServerConfig::Queue(_) => "queue",
            ServerConfig::Occ => "occ",
        }
    }

    /// The header of the server's Retry-After hints (an OCC row sends none).
    pub fn retry_after_header(&self) -> RetryAfterHeader {
        match self {
            ServerConfig::Queue(q) => q.retry_after_header,
            ServerConfig::Occ => RetryAfterHeader::RetryAfter,
        }
    }
}

/// The status of an OCC write that lost the race.
const CONFLICT: u16 = 409;
/// The status of an arrival the rate limiter turns away.
const TOO_MANY_REQUESTS: u16 = 429;

/// An attempt as the server sees it: who sent it, and the key `(entity, sub)` of its
/// per-attempt random streams (service demand, fault draws).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Visit {
    pub client: u32,
    pub tag: u32,
    pub stream: (u64, u64),
}

/// What the server does with an arriving attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Worker `slot` serves it at once; it is done after `service`.
    Serve { slot: u32, service: SimDuration },
    /// Every worker is busy: it waits its turn.
    Wait,
    /// Turned away unserved with this answer and Retry-After hint.
    Reject {
        answer: Answer,
        hint: Option<SimDuration>,
    },
    /// Swallowed without any answer (an outage that drops): it times out at its client.
    Drop,
    /// OCC: the read returns the row's current version.
    Read { version: u32 },
}

/// An attempt a worker serves (or served): whose, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Job {
    pub client: u32,
    pub tag: u32,
    /// Service time in nanoseconds.
    pub work: u64,
}

/// The queue server's state.
struct Queue<'a> {
    config: &'a QueueConfig,
    /// The workers used so far: created on first use, lowest first, up to `config.workers`
    /// (so a server with no limit holds only as many as were ever busy at once).
    workers: Vec<Job>,
    /// Idle workers among those used, the next to take work last.
    free: Vec<u32>,
    /// Waiting attempts `(client, tag)`, first come first.
    waiting: VecDeque<(u32, u32)>,
    capacity: usize,
    mean_service_ns: f64,
    /// The rate limiter's bucket, as of `refilled`.
    tokens: f64,
    refilled: SimTime,
}

impl Queue<'_> {
    /// An idle worker, taking it: a freed one first, else a new one while under the limit.
    /// Workers are numbered in the order of first use, so the lowest idle one is taken first
    /// until all have been used, as if all had existed from the start.
    #[inline]
    fn idle_worker(&mut self) -> Option<u32> {
        if let Some(slot) = self.free.pop() {
            return Some(slot);
        }
        let next = self.workers.len() as u32;
        (next < self.config.workers).then(|| {
            self.workers.push(Job {
                client: 0,
                tag: 0,
                work: 0,
            });
            next
        })
    }
}

enum Kind<'a> {
    Queue(Queue<'a>),
    Occ { version: u32 },
}

/// One server's state during a run.
pub(crate) struct Server<'a> {
    /// Attempts at the server now (waiting or in service).
    in_flight: u32,
    kind: Kind<'a>,
    faults: &'a [Fault],
    service_streams: StreamFamily,
    fault_streams: StreamFamily,
}

impl<'a> Server<'a> {
    /// An idle server under `faults`, drawing service demands and fault decisions from the
    /// per-attempt streams of the two families.
    pub fn new(
        config: &'a ServerConfig,
        faults: &'a [Fault],
        service_streams: StreamFamily,
        fault_streams: StreamFamily,
    ) -> Self {
        let kind = match config {
            ServerConfig::Queue(q) => Kind::Queue(Queue {
                config: q,
                workers: Vec::new(),
                free: Vec::new(),
                waiting: VecDeque::new(),
                capacity: q.queue.map_or(usize::MAX, |n| n as usize),
                mean_service_ns: q.service.mean_nanos(),
                tokens: q.rate_limit.map_or(0.0, |r| r.burst as f64),
                refilled: SimTime::ZERO,
            }),
            ServerConfig::Occ => Kind::Occ { version: 0 },
        };
        Server {
            in_flight: 0,
            kind,
            faults,
            service_streams,
            fault_streams,
        }
    }

    /// Workers (1 for the OCC row, for the busy share); with no limit, the most that were
    /// ever busy at once.
    pub fn workers(&self) -> usize {
        match &self.kind {
            Kind::Queue(q) if q.config.workers == UNLIMITED_WORKERS => q.workers.len().max(1),
            Kind::Queue(q) => q.config.workers as usize,
            Kind::Occ { .. } => 1,
        }
    }

    /// Attempts at the server now, waiting or in service (always 0 for the OCC row).
    #[inline]
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// An attempt arrives at `now`: faults first, then the rate limiter, a free worker, the
    /// waiting room, in that order; the OCC row answers with its version.
    #[inline]
    pub fn admit(&mut self, now: SimTime, visit: Visit) -> Admission {
        if !self.faults.is_empty()
            && let Some(hit) = self.fault(now, visit)
        {
            return hit;
        }
        let q = match &mut self.kind {
            Kind::Queue(q) => q,
            Kind::Occ { version } => return Admission::Read { version: *version },
        };
        if let Some(limit) = q.config.rate_limit {
            let elapsed = now.saturating_since(q.refilled).as_secs_f64();
            q.tokens = (q.tokens + elapsed * limit.rate).min(limit.burst as f64);
            q.refilled = now;
            if q.tokens >= 1.0 {
                q.tokens -= 1.0;
            } else {
                let wait = SimDuration::from_secs_f64((1.0 - q.tokens) / limit.rate);
                return Admission::Reject {
                    answer: Answer::Status(TOO_MANY_REQUESTS),
                    hint: Some(wait),
                };
            }
        }
        if let Some(slot) = q.idle_worker() {
            self.in_flight += 1;
            let service = self.serve(now, slot, visit);
            Admission::Serve { slot, service }
        } else if q.waiting.len() < q.capacity {
            q.waiting.push_back((visit.client, visit.tag));
            self.in_flight += 1;
            Admission::Wait
        } else {
            let hint = match q.config.retry_after {
                RetryAfterHint::Off => None,
                RetryAfterHint::Fixed(d) => Some(d),
                RetryAfterHint::Drain => Some(SimDuration::from_secs_f64(
                    q.waiting.len() as f64 * q.mean_service_ns / q.config.workers as f64 / 1e9,
                )),
            };
            Admission::Reject {
                answer: Answer::Status(q.config.overload_status),
                hint,
            }
        }
    }

    /// The first active outage or error fault that hits the arriving attempt, if any.
    #[inline]
    fn fault(&self, now: SimTime, visit: Visit) -> Option<Admission> {
        let reject = |answer| Admission::Reject { answer, hint: None };
        for (i, fault) in self.faults.iter().enumerate() {
            if !fault.active(now) {
                continue;
            }
            match fault.kind {
                FaultKind::Outage(OutageAnswer::Status(s)) => {
                    return Some(reject(Answer::Status(s)));
                }
                FaultKind::Outage(OutageAnswer::Reset) => return Some(reject(Answer::Reset)),
                FaultKind::Outage(OutageAnswer::Drop) => return Some(Admission::Drop),
                FaultKind::Errors { share, status } => {
                    if fault_rng(&self.fault_streams, visit.stream, i).random::<f64>() < share {
                        return Some(reject(Answer::Status(status)));
                    }
                }
                FaultKind::Slow { .. } => {}
            }
        }
        None
    }

    /// Worker `slot` starts serving `visit` at `now`: its service demand is drawn from its
    /// own stream, plus `contention` per other attempt at the server, then slowed by active
    /// `slow` faults. The worker is done after the returned time (the engine schedules that).
    pub fn serve(&mut self, now: SimTime, slot: u32, visit: Visit) -> SimDuration {
        let Kind::Queue(q) = &mut self.kind else {
            unreachable!("only a queue server has workers");
        };
        let (key, sub) = visit.stream;
        let mut work = q
            .config
            .service
            .sample(&mut self.service_streams.get(key, sub));
        if q.config.contention > SimDuration::ZERO {
            // `in_flight` counts the starting attempt too: it is already at the server.
            let others = u64::from(self.in_flight.saturating_sub(1));
            work = work.saturating_add(q.config.contention.as_nanos().saturating_mul(others));
        }
        for fault in self.faults {
            if let FaultKind::Slow { factor } = fault.kind
                && fault.active(now)
            {
                work = SimDuration(work).mul_f64(factor).as_nanos();
            }
        }
        q.workers[slot as usize] = Job {
            client: visit.client,
            tag: visit.tag,
            work,
        };
        SimDuration(work)
    }

    /// The attempt worker `slot` serves (or served last).
    #[inline]
    pub fn job(&self, slot: u32) -> Job {
        let Kind::Queue(q) = &self.kind else {
            unreachable!("only a queue server has workers");
        };
        q.workers[slot as usize]
    }

    /// Worker `slot` finished: its attempt leaves the server.
    #[inline]
    pub fn depart(&mut self, slot: u32) -> Job {
        let Kind::Queue(q) = &self.kind else {
            unreachable!("only a queue server has workers");
        };
        self.in_flight -= 1;
        q.workers[slot as usize]
    }

    /// The next attempt for the idle worker `slot`, first come first; with `drop_expired`
    /// (or `cancelled`: the clients cancel what they stop waiting for, as hedged requests
    /// with `cancel = "waiting"` do), waiting attempts for which `awaited(client, tag)` is
    /// false leave unserved. `None`: no attempt waits, and the worker stays idle until an
    /// arrival.
    #[inline]
    pub fn next_waiting(
        &mut self,
        slot: u32,
        cancelled: bool,
        mut awaited: impl FnMut(u32, u32) -> bool,
    ) -> Option<(u32, u32)> {
        let Kind::Queue(q) = &mut self.kind else {
            unreachable!("only a queue server has workers");
        };
        loop {
            let Some((c, tag)) = q.waiting.pop_front() else {
                q.free.push(slot);
                return None;
            };
            if (q.config.drop_expired || cancelled) && !awaited(c, tag) {
                self.in_flight -= 1;
                continue;
            }
            return Some((c, tag));
        }
    }

    /// OCC: a write of the version `read` reaches the row. `Ok`: it landed and the version
    /// moved on; `Err`: another write landed since the read, answered with this status.
    #[inline]
    pub fn write(&mut self, read: u32) -> Result<(), Answer> {
        let Kind::Occ { version } = &mut self.kind else {
            unreachable!("only the OCC row takes writes");
        };
        if read == *version {
            *version += 1;
            Ok(())
        } else {
            Err(Answer::Status(CONFLICT))
        }
    }
}

/// The stream that decides whether `errors` fault `i` hits the attempt whose per-attempt
/// stream key is `(key, sub)`. The first 256 faults pack their index under the attempt number
/// (the streams of scenarios written before more were possible); beyond, where that packing
/// would collide with the next attempt's, the index is mixed in on its own.
#[inline]
fn fault_rng(family: &StreamFamily, (key, sub): (u64, u64), i: usize) -> SimRng {
    if i < 256 {
        family.get(key, (sub << 8) | i as u64)
    } else {
        family.get3(key, sub, i as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;

    const T0: SimTime = SimTime::ZERO;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn at(n: u64) -> SimTime {
        SimTime::ZERO + ms(n)
    }

    /// A queue of `workers` with `room` waiting places and a constant 10 ms service.
    fn queue(workers: u32, room: Option<u32>) -> QueueConfig {
        QueueConfig {
            workers,
            queue: room,
            service: Dist::Constant { mean: ms(10) },
            contention: SimDuration::ZERO,
            overload_status: 503,
            retry_after: RetryAfterHint::Off,
            retry_after_header: RetryAfterHeader::RetryAfter,
            rate_limit: None,
            drop_expired: false,
        }
    }

    fn server<'a>(config: &'a ServerConfig, faults: &'a [Fault]) -> Server<'a> {
        Server::new(
            config,
            faults,
            StreamFamily::new(1, 0, StreamKind::Service),
            StreamFamily::new(1, 0, StreamKind::Faults),
        )
    }

    /// The first attempt of client `c`.
    fn visit(c: u32) -> Visit {
        Visit {
            client: c,
            tag: 1,
            stream: ((c as u64) << 32, 1),
        }
    }

    fn serve(slot: u32, service: SimDuration) -> Admission {
        Admission::Serve { slot, service }
    }

    fn reject(status: u16, hint: Option<SimDuration>) -> Admission {
        Admission::Reject {
            answer: Answer::Status(status),
            hint,
        }
    }

    #[test]
    fn free_workers_serve_then_arrivals_wait_then_a_full_room_rejects() {
        let config = ServerConfig::Queue(queue(2, Some(1)));
        let mut s = server(&config, &[]);
        assert_eq!(s.admit(T0, visit(0)), serve(0, ms(10)));
        assert_eq!(s.admit(T0, visit(1)), serve(1, ms(10)));
        assert_eq!(s.admit(T0, visit(2)), Admission::Wait);
        assert_eq!(s.in_flight(), 3);
        assert_eq!(s.admit(T0, visit(3)), reject(503, None));
        assert_eq!(s.in_flight(), 3, "a rejected attempt never enters");
        assert_eq!(s.workers(), 2);
    }

    #[test]
    fn contention_adds_per_other_attempt_at_the_server_when_service_starts() {
        let config = ServerConfig::Queue(QueueConfig {
            contention: ms(1),
            ..queue(1, None)
        });
        let mut s = server(&config, &[]);
        // Alone: the plain 10 ms. The next two wait, so the server holds three.
        assert_eq!(s.admit(T0, visit(0)), serve(0, ms(10)));
        assert_eq!(s.admit(T0, visit(1)), Admission::Wait);
        assert_eq!(s.admit(T0, visit(2)), Admission::Wait);
        s.depart(0);
        // Client 1 starts with client 2 still waiting: one other, 11 ms.
        assert_eq!(s.next_waiting(0, false, |_, _| true), Some((1, 1)));
        assert_eq!(s.serve(at(10), 0, visit(1)), ms(11));
        s.depart(0);
        assert_eq!(s.next_waiting(0, false, |_, _| true), Some((2, 1)));
        assert_eq!(s.serve(at(21), 0, visit(2)), ms(10));
    }

    #[test]
    fn unlimited_workers_serve_every_arrival_at_once() {
        let config = ServerConfig::Queue(QueueConfig {
            contention: ms(1),
            ..queue(UNLIMITED_WORKERS, Some(0))
        });
        let mut s = server(&config, &[]);
        for c in 0..50 {
            assert_eq!(s.admit(T0, visit(c)), serve(c, ms(10 + c as u64)));
        }
        assert_eq!((s.in_flight(), s.workers()), (50, 50));
        s.depart(7);
        assert_eq!(s.next_waiting(7, false, |_, _| true), None);
        assert_eq!(
            s.admit(at(1), visit(50)),
            serve(7, ms(59)),
            "a freed worker first"
        );
        assert_eq!(s.workers(), 50, "the most busy at once");
    }

    #[test]
    fn overload_answers_carry_the_configured_hint() {
        let with_hint = |hint, overload_status| {
            let config = ServerConfig::Queue(QueueConfig {
                retry_after: hint,
                retry_after_header: RetryAfterHeader::RetryAfter,
                overload_status,
                ..queue(2, Some(4))
            });
            let mut s = server(&config, &[]);
            for c in 0..6 {
                assert_ne!(s.admit(T0, visit(c)), reject(overload_status, None));
            }
            s.admit(T0, visit(6))
        };
        assert_eq!(with_hint(RetryAfterHint::Off, 503), reject(503, None));
        assert_eq!(
            with_hint(RetryAfterHint::Fixed(ms(2000)), 429),
            reject(429, Some(ms(2000)))
        );
        // Drain: 4 waiting x 10 ms mean service / 2 workers.
        assert_eq!(
            with_hint(RetryAfterHint::Drain, 503),
            reject(503, Some(ms(20)))
        );
    }

    #[test]
    fn departures_hand_the_worker_to_the_waiting_attempts_in_arrival_order() {
        let config = ServerConfig::Queue(queue(1, None));
        let mut s = server(&config, &[]);
        assert_eq!(s.admit(T0, visit(0)), serve(0, ms(10)));
        assert_eq!(s.admit(T0, visit(1)), Admission::Wait);
        assert_eq!(s.admit(T0, visit(2)), Admission::Wait);
        let job = |c| Job {
            client: c,
            tag: 1,
            work: ms(10).as_nanos(),
        };
        assert_eq!(s.depart(0), job(0));
        assert_eq!(s.in_flight(), 2);
        assert_eq!(s.next_waiting(0, false, |_, _| true), Some((1, 1)));
        assert_eq!(s.serve(at(10), 0, visit(1)), ms(10));
        assert_eq!(s.depart(0), job(1));
        assert_eq!(s.next_waiting(0, false, |_, _| true), Some((2, 1)));
        assert_eq!(s.serve(at(20), 0, visit(2)), ms(10));
        assert_eq!(s.depart(0), job(2));
        assert_eq!(s.next_waiting(0, false, |_, _| true), None);
        assert_eq!(s.in_flight(), 0);
        // The worker is idle again: the next arrival is served at once.
        assert_eq!(s.admit(at(30), visit(3)), serve(0, ms(10)));
    }

    #[test]
    fn drop_expired_and_cancels_discard_waiting_attempts_nobody_awaits() {
        let awaited = |c: u32, _| c == 0 || c == 3;
        // (server.drop_expired, hedged copies cancelled while waiting)
        for (drop_expired, cancelled) in [(false, false), (true, false), (false, true)] {
            let config = ServerConfig::Queue(QueueConfig {
                drop_expired,
                ..queue(1, None)
            });
            let mut s = server(&config, &[]);
            for c in 0..4 {
                s.admit(T0, visit(c));
            }
            s.depart(0);
            if drop_expired || cancelled {
                assert_eq!(s.next_waiting(0, cancelled, awaited), Some((3, 1)));
                assert_eq!(s.in_flight(), 1, "the two dropped attempts left");
            } else {
                assert_eq!(s.next_waiting(0, cancelled, awaited), Some((1, 1)));
                assert_eq!(s.in_flight(), 3);
            }
        }
    }

    #[test]
    fn the_rate_limiter_answers_429_with_the_time_to_the_next_token() {
        let config = ServerConfig::Queue(QueueConfig {
            rate_limit: Some(RateLimit {
                rate: 10.0,
                burst: 2,
            }),
            ..queue(10, None)
        });
        let mut s = server(&config, &[]);
        assert_eq!(s.admit(T0, visit(0)), serve(0, ms(10)));
        assert_eq!(s.admit(T0, visit(1)), serve(1, ms(10)));
        // The burst is spent: one token every 100 ms.
        assert_eq!(s.admit(T0, visit(2)), reject(429, Some(ms(100))));
        assert_eq!(s.admit(at(50), visit(3)), reject(429, Some(ms(50))));
        assert_eq!(s.admit(at(100), visit(4)), serve(2, ms(10)));
        assert_eq!(s.in_flight(), 3);
    }

    #[test]
    fn occ_reads_the_version_and_a_write_after_another_conflicts() {
        let config = ServerConfig::Occ;
        let mut s = server(&config, &[]);
        assert_eq!(s.admit(T0, visit(0)), Admission::Read { version: 0 });
        assert_eq!(s.admit(T0, visit(1)), Admission::Read { version: 0 });
        assert_eq!(s.write(0), Ok(()));
        assert_eq!(s.write(0), Err(Answer::Status(409)));
        assert_eq!(s.admit(at(1), visit(1)), Admission::Read { version: 1 });
        assert_eq!(s.write(1), Ok(()));
        assert_eq!((s.in_flight(), s.workers()), (0, 1));
    }

    #[test]
    fn fault_streams_are_distinct_beyond_256_faults() {
        use rand::RngExt;
        let family = StreamFamily::new(1, 0, StreamKind::Faults);
        let mut seen = std::collections::HashMap::new();
        for i in 0..600 {
            for sub in 1..4 {
                let draw: u64 = fault_rng(&family, (7, sub), i).random();
                if let Some(other) = seen.insert(draw, (i, sub)) {
                    panic!("fault {i}, attempt {sub} shares the stream of {other:?}");
                }
            }
        }
        // The first 256 keep the streams they always had.
        let old: u64 = family.get(7, (2 << 8) | 255).random();
        assert_eq!(old, fault_rng(&family, (7, 2), 255).random::<u64>());
    }

    #[test]
    fn faults_act_only_inside_their_windows() {
        let window = |kind, from: u64| Fault {
            kind,
            start: at(from),
            end: at(from + 100),
        };
        let faults = [
            window(FaultKind::Outage(OutageAnswer::Status(503)), 0),
            window(FaultKind::Outage(OutageAnswer::Reset), 100),
            window(FaultKind::Outage(OutageAnswer::Drop), 200),
            window(
                FaultKind::Errors {
                    share: 1.0,
                    status: 502,
                },
                300,
            ),
            window(
                FaultKind::Errors {
                    share: 0.0,
                    status: 500,
                },
                400,
            ),
            window(FaultKind::Slow { factor: 3.0 }, 400),
        ];
        let config = ServerConfig::Queue(queue(1, None));
        let mut s = server(&config, &faults);
        assert_eq!(s.admit(at(50), visit(0)), reject(503, None));
        assert_eq!(
            s.admit(at(150), visit(1)),
            Admission::Reject {
                answer: Answer::Reset,
                hint: None
            }
        );
        assert_eq!(s.admit(at(250), visit(2)), Admission::Drop);
        assert_eq!(s.admit(at(350), visit(3)), reject(502, None));
        assert_eq!(s.in_flight(), 0);
        // A 0 share never hits; the slowdown triples the service.
        assert_eq!(s.admit(at(450), visit(4)), serve(0, ms(30)));
        assert_eq!(s.admit(at(550), visit(5)), Admission::Wait);
        s.depart(0);
        assert_eq!(s.next_waiting(0, false, |_, _| true), Some((5, 1)));
        assert_eq!(s.serve(at(550), 0, visit(5)), ms(10));
    }

    #[test]
    fn service_demand_depends_on_the_attempt_not_on_the_order_of_arrival() {
        let config = ServerConfig::Queue(QueueConfig {
            service: Dist::Exponential { mean: ms(10) },
            ..queue(2, None)
        });
        let service = |order: [u32; 2]| {
            let mut s = server(&config, &[]);
            let mut demand = [SimDuration::ZERO; 2];
            for c in order {
                let Admission::Serve { service, .. } = s.admit(T0, visit(c)) else {
                    panic!("two free workers");
                };
                demand[c as usize] = service;
            }
            demand
        };
        let d = service([0, 1]);
        assert_ne!(d[0], d[1]);
        assert_eq!(service([1, 0]), d);
    }
}
