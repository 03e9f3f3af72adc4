//! The client: one request at a time, driven by the retry policy.
//!
//! A request's life: start → attempt → (answer | timeout) → [`RetryPolicy::decide`] → done,
//! or sleep and attempt again. Guards around it (circuit breaker, retry budget, concurrency
//! limiter) are the same `policy` state machines the executor uses, shared by all clients or
//! one per client (`scope`).

use std::collections::VecDeque;

use super::engine::Sim;
use super::event::Event;
use super::metrics::Ending;
use crate::backoff::{Backoff, BackoffState};
use crate::policy::ConcurrencyLimiter;
use crate::policy::RetryAfterPolicy;
use crate::policy::{AttemptReport, AttemptTimeout, Decision, RetryPolicy, StopReason};
use crate::policy::{Breaker, BreakerConfig};
use crate::policy::{Budget, BudgetConfig};
use crate::policy::{Idempotency, Outcome, RetryOn};
use crate::rng::SimRng;
use crate::time::{SimDuration, SimTime};

/// Whether a guard is one for all clients or one per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One shared by every client (a sidecar, a shared SDK client).
    Shared,
    /// One per client.
    Client,
}

impl Scope {
    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Shared => "shared",
            Scope::Client => "client",
        }
    }
}

/// The client side of a scenario, validated.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Per-attempt timeout (`None`: wait forever).
    pub timeout: Option<SimDuration>,
    /// Whole-request deadline, sleeps included.
    pub deadline: Option<SimDuration>,
    /// Attempts including the first (`None`: unlimited).
    pub max_attempts: Option<u32>,
    /// Which outcomes are retried.
    pub retry_on: RetryOn,
    /// How Retry-After hints are honoured.
    pub retry_after: RetryAfterPolicy,
    /// Whether requests may be retried at all.
    pub idempotency: Idempotency,
    /// A retry budget and its scope.
    pub budget: Option<(BudgetConfig, Scope)>,
    /// A circuit breaker and its scope.
    pub breaker: Option<(BreakerConfig, Scope)>,
    /// At most this many attempts in flight, shared by all clients.
    pub concurrency: Option<u32>,
}

impl ClientConfig {
    /// The retry policy for one backoff strategy.
    pub fn retry_policy(&self, backoff: Backoff) -> RetryPolicy {
        RetryPolicy {
            backoff,
            retry_on: self.retry_on,
            max_attempts: self.max_attempts,
            timeout: self.timeout,
            deadline: self.deadline,
            retry_after: self.retry_after,
        }
    }
}

/// Where a client is in its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// No request (not started, thinking, or done).
    Idle,
    /// An attempt is in flight.
    Waiting,
    /// Sleeping before the next attempt.
    Sleeping,
    /// Waiting for a concurrency-limiter slot.
    Queued,
}

/// The answer to an attempt as it travels back: a status, or a connection reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    Status(u16),
    Reset,
}

impl Answer {
    pub fn outcome(self) -> Outcome {
        match self {
            Answer::Status(s) if s < 400 => Outcome::Success,
            Answer::Status(s) => Outcome::Status(s),
            Answer::Reset => Outcome::Connection,
        }
    }
}

/// `Client::reply_hint` when the answer carries no Retry-After.
pub(super) const NO_HINT: u64 = u64::MAX;

/// One client's state.
#[derive(Debug, Clone)]
pub(super) struct Client {
    /// The client's own jitter stream.
    pub rng: SimRng,
    pub backoff: BackoffState,
    /// First send of the current request.
    pub start: SimTime,
    /// Requests this client has started (closed loop: more than one).
    pub requests: u32,
    /// Attempts this client has sent, over all its requests: the tag of its latest attempt.
    /// Events name an attempt by this tag, which never repeats for a client, so an event left
    /// over from an earlier request can never be mistaken for one of the current request.
    pub sends: u32,
    /// `sends` when the current request began: its attempts are tags `first_send + 1 ..=`.
    pub first_send: u32,
    pub phase: Phase,
    /// The answer in flight to the current attempt, when it travels as a `Reply` event.
    pub reply: Answer,
    /// Its Retry-After hint in nanoseconds, [`NO_HINT`] for none (kept small: the client
    /// array is the simulator's largest and most randomly accessed structure).
    pub reply_hint: u64,
    /// OCC: the row version this attempt read.
    pub version: u32,
    /// The previous attempt timed out (a token bucket charges more for the retry).
    pub after_timeout: bool,
}

impl Client {
    pub fn new(rng: SimRng) -> Self {
        Client {
            rng,
            backoff: BackoffState::new(),
            start: SimTime::ZERO,
            requests: 0,
            sends: 0,
            first_send: 0,
            phase: Phase::Idle,
            reply: Answer::Status(200),
            reply_hint: NO_HINT,
            version: 0,
            after_timeout: false,
        }
    }

    /// Attempts of the current request so far.
    #[inline]
    pub fn attempts(&self) -> u32 {
        self.sends - self.first_send
    }

    /// True when the client is waiting for the answer to the attempt tagged `tag`.
    #[inline]
    pub fn awaits(&self, tag: u32) -> bool {
        self.phase == Phase::Waiting && self.sends == tag
    }

    /// The attempt number (1 = first) of the attempt tagged `tag` within the current request,
    /// or `None` for an attempt of an earlier request.
    #[inline]
    pub fn attempt_of(&self, tag: u32) -> Option<u32> {
        (tag > self.first_send && tag <= self.sends).then(|| tag - self.first_send)
    }

    /// The `(entity, sub)` of the per-attempt random streams of the attempt tagged `tag`:
    /// (request, attempt number), so that every strategy draws the same service demand,
    /// faults and network delays for the same request's same attempt. An attempt of an
    /// earlier request still at the server gets a stream of its own by tag.
    #[inline]
    pub fn attempt_stream(&self, client: u32, tag: u32) -> (u64, u64) {
        match self.attempt_of(tag) {
            Some(a) => (self.request_key(client), a as u64),
            None => (client as u64, (1 << 40) | tag as u64),
        }
    }

    /// The key of the current request for per-attempt streams.
    #[inline]
    pub fn request_key(&self, client: u32) -> u64 {
        ((client as u64) << 32) | self.requests as u64
    }
}

/// Breakers, budgets and the concurrency limiter.
pub(super) struct Guards {
    pub budgets: Vec<Budget>,
    budget: Option<(BudgetConfig, Scope)>,
    pub breakers: Vec<Breaker>,
    breaker: Option<(BreakerConfig, Scope)>,
    pub limiter: Option<ConcurrencyLimiter>,
    pub waiters: VecDeque<u32>,
}

impl Guards {
    pub fn new(config: &ClientConfig, clients: usize) -> Self {
        let count = |scope: Scope| if scope == Scope::Shared { 1 } else { clients };
        Guards {
            budgets: config.budget.map_or_else(Vec::new, |(b, s)| {
                (0..count(s)).map(|_| new_budget(b)).collect()
            }),
            budget: config.budget,
            breakers: config.breaker.map_or_else(Vec::new, |(b, s)| {
                (0..count(s)).map(|_| new_breaker(b)).collect()
            }),
            breaker: config.breaker,
            limiter: config.concurrency.map(|n| {
                ConcurrencyLimiter::new(n).expect("client.concurrency is checked by the scenario")
            }),
            waiters: VecDeque::new(),
        }
    }

    /// Grows per-client guards for an open-loop client created during the run.
    pub fn add_client(&mut self) {
        if let Some((b, Scope::Client)) = self.budget {
            self.budgets.push(new_budget(b));
        }
        if let Some((b, Scope::Client)) = self.breaker {
            self.breakers.push(new_breaker(b));
        }
    }

    #[inline]
    fn budget_index(&self, c: u32) -> Option<usize> {
        match self.budget {
            None => None,
            Some((_, Scope::Shared)) => Some(0),
            Some((_, Scope::Client)) => Some(c as usize),
        }
    }

    #[inline]
    fn breaker_index(&self, c: u32) -> Option<usize> {
        match self.breaker {
            None => None,
            Some((_, Scope::Shared)) => Some(0),
            Some((_, Scope::Client)) => Some(c as usize),
        }
    }
}

fn new_budget(config: BudgetConfig) -> Budget {
    Budget::new(config).expect("client.budget is checked by the scenario")
}

fn new_breaker(config: BreakerConfig) -> Breaker {
    Breaker::new(config).expect("client.breaker is checked by the scenario")
}

impl Sim<'_> {
    /// Client `c` begins a new request.
    pub(super) fn start_request(&mut self, c: u32) {
        let now = self.now;
        let client = &mut self.clients[c as usize];
        client.requests += 1;
        client.start = now;
        client.first_send = client.sends;
        client.backoff.reset();
        client.after_timeout = false;
        self.meter.counts.requests += 1;
        self.send_attempt(c);
    }

    /// Client `c` wants to send its next attempt: a limiter slot first, then launch.
    pub(super) fn send_attempt(&mut self, c: u32) {
        if let Some(limiter) = self.guards.limiter.as_mut()
            && !limiter.try_acquire()
        {
            self.clients[c as usize].phase = Phase::Queued;
            self.guards.waiters.push_back(c);
            return;
        }
        self.launch(c);
    }

    /// Sends the next attempt of client `c` (its limiter slot, if any, is held).
    pub(super) fn launch(&mut self, c: u32) {
        let now = self.now;
        let client = &mut self.clients[c as usize];
        let timeout = match self.policy.attempt_timeout(client.start, now) {
            AttemptTimeout::Expired => {
                self.release_slot();
                self.end(c, Ending::GaveUpDeadline);
                return;
            }
            AttemptTimeout::Unbounded => None,
            AttemptTimeout::After(t) => Some(t),
        };
        // The breaker is asked last, as the attempt leaves: a half-open breaker's one probe is
        // then always an attempt that is really sent, never one that expires in the limiter's
        // queue and leaves the breaker waiting for a result that never comes.
        if let Some(i) = self.guards.breaker_index(c)
            && !self.guards.breakers[i].allow(now)
        {
            self.release_slot();
            self.end(c, Ending::RejectedByBreaker);
            return;
        }
        let client = &mut self.clients[c as usize];
        client.sends += 1;
        client.phase = Phase::Waiting;
        let tag = client.sends;
        self.meter.counts.attempts += 1;
        self.server_receive(c, tag);
        // Armed after the send, so an attempt answered at once (a rejection with an
        // instantaneous network) leaves no stale timer in the queue.
        if let Some(t) = timeout
            && self.clients[c as usize].awaits(tag)
        {
            self.after(t, Event::Timeout(c, tag));
        }
    }

    /// The attempt's timer fired.
    pub(super) fn timeout(&mut self, c: u32, tag: u32) {
        if self.clients[c as usize].awaits(tag) {
            // A served answer already on its way back is now work nobody will use.
            if let Some(net) = self.network.get(c as usize)
                && net.reply_tag == tag
            {
                self.meter.wasted_ns += net.reply_work as u128;
            }
            let b = self.meter.bucket;
            self.meter.series.timeouts[b] += 1;
            self.conclude(c, Outcome::Timeout, None);
        }
    }

    /// An answer reaches client `c` (inline when the network is instantaneous).
    #[inline]
    pub(super) fn receive(&mut self, c: u32, tag: u32, answer: Answer, hint: Option<SimDuration>) {
        if !self.clients[c as usize].awaits(tag) {
            return;
        }
        let outcome = answer.outcome();
        if outcome == Outcome::Success {
            let b = self.meter.bucket;
            self.meter.series.successes[b] += 1;
        }
        self.conclude(c, outcome, hint);
    }

    /// A `Reply` event: the stored answer arrives.
    pub(super) fn reply_arrives(&mut self, c: u32, tag: u32) {
        let client = &self.clients[c as usize];
        let (answer, hint) = (
            client.reply,
            (client.reply_hint != NO_HINT).then_some(SimDuration(client.reply_hint)),
        );
        self.receive(c, tag, answer, hint);
    }

    /// The current attempt of `c` ended with `outcome`: guards learn of it, the policy decides.
    fn conclude(&mut self, c: u32, outcome: Outcome, hint: Option<SimDuration>) {
        let now = self.now;
        self.release_slot();
        if let Some(i) = self.guards.breaker_index(c) {
            // Only failures that speak of the server's health count (timeouts, connection
            // errors, 429, 5xx); a 409 or 400 says nothing about it.
            self.guards.breakers[i].record(now, !outcome.is_server_failure());
        }
        let budget_index = self.guards.budget_index(c);
        let client = &mut self.clients[c as usize];
        let report = AttemptReport {
            attempt: client.attempts(),
            start: client.start,
            now,
            outcome,
            retry_after: hint,
            idempotency: self.model.client.idempotency,
            follows_timeout: client.after_timeout,
        };
        client.after_timeout = outcome == Outcome::Timeout;
        let budget = budget_index.map(|i| &mut self.guards.budgets[i]);
        let decision = self
            .policy
            .decide(&report, &mut client.backoff, budget, &mut client.rng);
        match decision {
            Decision::Done => self.end(c, Ending::Succeeded),
            Decision::Retry { sleep } => {
                self.clients[c as usize].phase = Phase::Sleeping;
                self.after(sleep, Event::Wake(c));
            }
            Decision::Stop(reason) => self.end(
                c,
                match reason {
                    StopReason::NotRetryable => Ending::Failed,
                    StopReason::Attempts => Ending::GaveUpAttempts,
                    StopReason::Deadline => Ending::GaveUpDeadline,
                    StopReason::Budget => Ending::GaveUpBudget,
                },
            ),
        }
    }

    /// Frees the caller's limiter slot, handing it straight to the next waiter if any.
    fn release_slot(&mut self) {
        let Some(limiter) = self.guards.limiter.as_mut() else {
            return;
        };
        match self.guards.waiters.pop_front() {
            // The slot passes on without being released, so nobody can jump the queue; the
            // waiter launches through an event to keep the call stack flat.
            Some(next) => self.after(SimDuration::ZERO, Event::Launch(next)),
            None => limiter.release(),
        }
    }

    /// Request of client `c` ends.
    pub(super) fn end(&mut self, c: u32, ending: Ending) {
        let now = self.now;
        let client = &mut self.clients[c as usize];
        client.phase = Phase::Idle;
        let meter = &mut self.meter;
        meter.counts.record(ending);
        meter.makespan = now;
        if ending == Ending::Succeeded {
            let latency_ns = now.saturating_since(client.start).as_nanos();
            meter.latency_sum_ns += latency_ns as u128;
            let latency_us = latency_ns / 1_000;
            // Values beyond the histogram's range (12 days) are clamped to it.
            meter.latency_us.saturating_record(latency_us.max(1));
            let n = client.attempts() as usize;
            if meter.by_attempt.len() < n {
                meter.by_attempt.resize(n, 0);
            }
            meter.by_attempt[n - 1] += 1;
        }
        if let super::workload::Workload::Closed { think, .. } = self.model.workload {
            let mut rng = self.streams.think.get(c as u64, client.requests as u64);
            let gap = super::workload::exponential(&mut rng, think.as_nanos() as f64);
            self.after(gap, Event::Start(c));
        }
    }
}

#[cfg(test)]
mod tests {
    /// The client array is touched on nearly every event: keep a client small.
    #[test]
    fn a_client_fits_in_80_bytes() {
        assert!(
            std::mem::size_of::<super::Client>() <= 80,
            "{}",
            std::mem::size_of::<super::Client>()
        );
    }
}
