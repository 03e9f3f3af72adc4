//! The clients: one request at a time each, driven by the retry policy.
//!
//! A request's life: start → attempt → (answer | timeout) → [`RetryPolicy::decide`] → done,
//! or sleep and attempt again. Guards around it (circuit breaker, retry budget, adaptive
//! throttle, AWS adaptive rate limiter, concurrency limiter) are the same `policy` state
//! machines the executor uses, shared by all clients or one per client (`scope`). [`Clients`]
//! holds them all; its calls move one request along and return what follows ([`Launch`],
//! [`Next`]), which the engine turns into events.
//!
//! A client here is one request slot. Its *owner* is the client whose per-client guards it
//! uses: itself, except in the `poisson_clients` workload, where every request of a persistent
//! source is a slot of its own (so that a source's requests may overlap) and the source is the
//! owner, so that its budget and throttle carry across its requests.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;

use super::run_result::Ending;
use crate::backoff::{Backoff, BackoffParams};
use crate::policy::AdaptiveRateConfig;
use crate::policy::BreakerConfig;
use crate::policy::BudgetConfig;
use crate::policy::throttle::ThrottleConfig;
use crate::policy::{
    AttemptReport, AttemptTimeout, Decision, NanosPolicy, RetryPolicy, StopReason,
};
use crate::policy::{Idempotency, Outcome, RetryOn};
use crate::policy::{RetryAfterHeader, RetryAfterPolicy, RetryClass, Throttling};
use crate::rng::{SimRng, StreamFamily};
use crate::time::{SimDuration, SimTime};

use super::hedge::{HedgeConfig, Hedging};
use super::source::{ClientDelays, DelaySource, RetryAt};

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
    /// How Retry-After hints are honoured, and which header is read.
    pub retry_after: RetryAfterPolicy,
    /// The outcomes that are throttling answers (their own backoff and budget cost).
    pub throttling_on: RetryOn,
    /// The backoff after a throttling answer (`None`: the strategy's own).
    pub throttling_backoff: Option<BackoffParams>,
    /// Whether requests may be retried at all.
    pub idempotency: Idempotency,
    /// A retry budget and its scope.
    pub budget: Option<(BudgetConfig, Scope)>,
    /// A circuit breaker and its scope.
    pub breaker: Option<(BreakerConfig, Scope)>,
    /// Client-side adaptive throttling (SRE book) and its scope.
    pub throttle: Option<(ThrottleConfig, Scope)>,
    /// At most this many attempts in flight, shared by all clients.
    pub concurrency: Option<u32>,
    /// The AWS adaptive mode's rate limiter (a token before every attempt) and its scope.
    pub adaptive_rate: Option<(AdaptiveRateConfig, Scope)>,
    /// Hedged requests in place of retries (see [`super::hedge`]).
    pub hedging: Option<HedgeConfig>,
}

#[cfg(test)]
impl ClientConfig {
    /// A client with `max_attempts` and nothing else: no timeout, deadline, budget, breaker,
    /// throttle or limiter, every retryable answer retried, idempotent requests.
    pub(crate) fn bare(max_attempts: Option<u32>) -> ClientConfig {
        ClientConfig {
            timeout: None,
            deadline: None,
            max_attempts,
            retry_on: RetryOn::default(),
            retry_after: RetryAfterPolicy::default(),
            throttling_on: RetryOn::none(),
            throttling_backoff: None,
            idempotency: Idempotency::Idempotent,
            budget: None,
            breaker: None,
            throttle: None,
            concurrency: None,
            adaptive_rate: None,
            hedging: None,
        }
    }
}

impl ClientConfig {
    /// The retry policy for one backoff strategy.
    pub fn retry_policy(&self, backoff: Backoff) -> RetryPolicy {
        RetryPolicy {
            backoff,
            retry_on: self.retry_on,
            max_attempts: self.max_attempts,
            timeout: self.timeout.map(SimDuration::to_std),
            deadline: self.deadline.map(SimDuration::to_std),
            retry_after: self.retry_after,
            // Scenarios have no key for it (yet): a sleep past the deadline ends the request.
            fit_last_attempt: None,
            throttling: Some(Throttling {
                on: self.throttling_on,
                backoff: self.throttling_backoff.map(|p| {
                    Backoff::from_params(p).expect("throttling_backoff is checked by the scenario")
                }),
            }),
            hedging: self.hedging.map(|h| h.policy),
        }
    }
}

mod guards;
mod hedging;
mod state;
#[cfg(test)]
mod tests;

use guards::Guards;
pub(super) use guards::accepted;
// The live mode keys its attempts as the simulator does.
#[cfg(feature = "live")]
pub(crate) use state::request_key;
use state::{Client, Phase};

/// What a client's attempt to send came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Launch {
    /// Attempt `tag` left for the server; its timer fires after `timeout`.
    Sent {
        tag: u32,
        timeout: Option<SimDuration>,
    },
    /// Nothing was sent (deadline passed, throttled, breaker open): the request ends.
    Refused(Ending),
}

/// What follows an attempt's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Sleep this long, then send the next attempt.
    Sleep(SimDuration),
    /// The request ends.
    End(Ending),
}

/// A request as it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Request {
    /// Its first send.
    pub start: SimTime,
    /// Attempts it made.
    pub attempts: u32,
    /// Its number at its client (1 = the client's first request).
    pub number: u32,
}

/// All clients of a run, their guards and their retry policy.
///
/// Each call moves one client's request along and says what the engine must do next; no
/// call schedules events, measures, or knows the server.
pub(crate) struct Clients {
    clients: Vec<Client>,
    /// The owner of each client when it is not the client itself (`poisson_clients`: the
    /// source); empty otherwise.
    owners: Vec<u32>,
    guards: Guards,
    /// In integer nanoseconds: the hot path converts nothing.
    policy: NanosPolicy,
    /// The header the server's hints travel in: a client reading another header never
    /// hears them.
    server_header: RetryAfterHeader,
    idempotency: Idempotency,
    /// Each client's jitter stream is this family's `(client, 0)`.
    jitter: StreamFamily,
    /// When each client's pending retry was granted by the budget, in nanoseconds (what a
    /// refund needs); empty without a budget. Kept beside the clients, not in them, so that a
    /// client stays one cache line.
    granted: Vec<u64>,
    /// A user-supplied backoff in place of the policy's, with each client's state; `None`
    /// for the built-in kinds (kept beside the clients, as `granted`).
    custom: Option<Custom>,
    /// Hedged requests: each client's copies (kept beside the clients, as `granted`).
    hedging: Option<Hedging>,
}

/// A strategy's [`DelaySource`] and the state it made for each client.
struct Custom {
    source: Arc<dyn DelaySource>,
    /// `states[c]`: client `c`'s.
    states: Vec<Box<dyn ClientDelays>>,
}

impl Custom {
    /// Client `c`'s state, seeded from stream `(c, 1)` of the jitter family (the built-in
    /// kinds draw from `(c, 0)` only).
    fn push(&mut self, jitter: &StreamFamily) {
        let c = self.states.len() as u32;
        let seed = jitter.get(c as u64, 1).next_u64();
        self.states.push(self.source.client(c, seed));
    }
}

impl Clients {
    /// `initial` idle clients under `policy`, and per-client guards for `owners` owners
    /// (`initial`, or the sources of `poisson_clients`). Throttles draw from `throttle`.
    pub fn new(
        config: &ClientConfig,
        policy: RetryPolicy,
        streams: (StreamFamily, StreamFamily),
        initial: u32,
        owners: u32,
    ) -> Clients {
        let (jitter, throttle) = streams;
        let granted = if config.budget.is_some() {
            vec![0; initial as usize]
        } else {
            Vec::new()
        };
        Clients {
            clients: (0..initial)
                .map(|c| Client::new(jitter.get(c as u64, 0)))
                .collect(),
            owners: Vec::new(),
            guards: Guards::new(config, owners as usize, throttle),
            policy: policy.nanos(),
            server_header: RetryAfterHeader::RetryAfter,
            idempotency: config.idempotency,
            jitter,
            granted,
            custom: None,
            hedging: config.hedging.map(|h| Hedging::new(h, initial as usize)),
        }
    }

    /// The same clients, told that the server sends its Retry-After hints in `header`.
    pub fn hearing(mut self, header: RetryAfterHeader) -> Clients {
        self.server_header = header;
        self
    }

    /// A server's `hint` as the client reads it: nothing when the client reads another
    /// header, whole milliseconds in `x-amz-retry-after`.
    #[inline]
    fn heard(&self, hint: Option<SimDuration>) -> Option<SimDuration> {
        let read = self.policy.policy().retry_after.header;
        if read != self.server_header {
            return None;
        }
        match read {
            RetryAfterHeader::RetryAfter => hint,
            RetryAfterHeader::AmzMillis => {
                hint.map(|h| SimDuration(h.as_nanos() / 1_000_000 * 1_000_000))
            }
        }
    }

    /// The clients draw their sleeps from `source` instead of the policy's backoff: a state
    /// for each client, now and as clients are added.
    pub fn use_source(&mut self, source: Arc<dyn DelaySource>) {
        let mut custom = Custom {
            source,
            states: Vec::with_capacity(self.clients.capacity()),
        };
        for _ in 0..self.clients.len() {
            custom.push(&self.jitter);
        }
        self.custom = Some(custom);
    }

    /// True when the clients' states are too many to stay in a core's cache (32 768 clients,
    /// 2 MB): each event's client is then worth fetching ahead ([`Clients::prefetch`]). Below,
    /// the lookahead would only cost time.
    #[inline]
    pub fn outgrow_the_cache(&self) -> bool {
        self.clients.len() >= 1 << 15
    }

    /// Asks the CPU to fetch client `c`'s state into the cache, without waiting for it: with a
    /// million clients most events began with a cache miss on their client (half of the
    /// run's time), which the fetch now overlaps with the event before.
    #[inline]
    pub fn prefetch(&self, c: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(client) = self.clients.get(c as usize) {
            // SAFETY: a prefetch is a hint; it never faults and reads nothing into the program.
            unsafe {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                _mm_prefetch::<_MM_HINT_T0>((client as *const Client).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = c;
    }

    /// Makes room for `additional` more clients.
    pub fn reserve(&mut self, additional: usize) {
        self.clients.reserve(additional);
        if self.guards.budget.is_some() {
            self.granted.reserve(additional);
        }
        if let Some(custom) = self.custom.as_mut() {
            custom.states.reserve(additional);
        }
    }

    /// A new idle client (an open-loop arrival); returns its index.
    pub fn add(&mut self) -> u32 {
        let c = self.clients.len() as u32;
        self.clients.push(Client::new(self.jitter.get(c as u64, 0)));
        self.guards.add_client();
        if self.guards.budget.is_some() {
            self.granted.push(0);
        }
        if let Some(custom) = self.custom.as_mut() {
            custom.push(&self.jitter);
        }
        if let Some(h) = self.hedging.as_mut() {
            h.add_client();
        }
        c
    }

    /// A new idle client for one request of persistent source `owner`, whose per-client
    /// guards it uses; returns its index.
    pub fn add_owned(&mut self, owner: u32) -> u32 {
        let c = self.clients.len() as u32;
        self.clients.push(Client::new(self.jitter.get(c as u64, 0)));
        // Every client of such a run is added here, so `owners[c]` is client `c`'s.
        debug_assert_eq!(self.owners.len(), c as usize);
        self.owners.push(owner);
        if self.guards.budget.is_some() {
            self.granted.push(0);
        }
        if let Some(custom) = self.custom.as_mut() {
            custom.push(&self.jitter);
        }
        if let Some(h) = self.hedging.as_mut() {
            h.add_client();
        }
        c
    }

    /// The owner of client `c` (see the module docs).
    #[inline]
    fn owner(&self, c: u32) -> u32 {
        self.owners.get(c as usize).copied().unwrap_or(c)
    }

    /// True when client `c` is waiting for the answer to its attempt tagged `tag`.
    #[inline]
    pub fn awaits(&self, c: u32, tag: u32) -> bool {
        let client = &self.clients[c as usize];
        match &self.hedging {
            None => client.awaits(tag),
            Some(h) => {
                client.phase == Phase::Waiting
                    && client.attempt_of(tag).is_some_and(|n| h.live(c, n))
            }
        }
    }

    /// True when the attempt tagged `tag` is the first of client `c`'s current request.
    #[inline]
    pub fn is_first(&self, c: u32, tag: u32) -> bool {
        self.clients[c as usize].attempt_of(tag) == Some(1)
    }

    /// The attempt number (1 = first) of the attempt tagged `tag` within client `c`'s current
    /// request, or `None` for an attempt of an earlier request.
    #[inline]
    pub fn attempt(&self, c: u32, tag: u32) -> Option<u32> {
        self.clients[c as usize].attempt_of(tag)
    }

    /// The key of the per-attempt random streams of attempt `tag` of client `c` (see
    /// [`Client::attempt_stream`]).
    #[inline]
    pub fn stream(&self, c: u32, tag: u32) -> (u64, u64) {
        self.clients[c as usize].attempt_stream(c, tag)
    }

    /// Client `c` begins a new request at `now` (a budget that counts requests as they begin
    /// hears of it); false (and nothing begins) when it already has one in flight, which the
    /// engine must never ask.
    #[inline]
    pub fn begin(&mut self, c: u32, now: SimTime) -> bool {
        if self.clients[c as usize].phase != Phase::Idle {
            return false;
        }
        if let Some(i) = self.guards.budget_index(self.owner(c)) {
            self.guards.budgets[i].on_begin_nanos(now.as_nanos());
        }
        let client = &mut self.clients[c as usize];
        client.phase = Phase::Sleeping;
        client.requests += 1;
        client.start = now;
        client.first_send = client.sends;
        client.backoff.reset();
        client.after = RetryClass::Transient;
        if let Some(custom) = self.custom.as_mut() {
            custom.states[c as usize].reset(now);
        }
        if let Some(h) = self.hedging.as_mut() {
            h.begin(c);
        }
        true
    }

    /// Client `c` wants to send at `now`: the wait for its adaptive rate limiter's token, if
    /// there is one to wait (then ask again), never past the request's deadline; `None` when
    /// the token is taken, without a limiter, or at the deadline (no token is taken then:
    /// [`Clients::launch`] ends the request). A token comes before a concurrency slot, as in
    /// the executors.
    #[inline]
    pub fn token_wait(&mut self, c: u32, now: SimTime) -> Option<SimDuration> {
        let owner = self.owner(c);
        let start = self.clients[c as usize].start;
        let left = (self.policy.policy().deadline).map(|d| (start + SimDuration::from(d)) - now);
        if left == Some(SimDuration::ZERO) {
            return None;
        }
        let rate = self.guards.rate(owner, now)?;
        let wait = SimDuration::from(rate.try_acquire(now.into()).err()?);
        Some(left.map_or(wait, |left| wait.min(left)))
    }

    /// Client `c` wants to send: true when it may launch now (it holds a limiter slot, or
    /// there is no limiter); false when it queues for a slot, to be handed one later.
    #[inline]
    pub fn acquire_slot(&mut self, c: u32) -> bool {
        if let Some(limiter) = self.guards.limiter.as_mut()
            && !limiter.try_acquire()
        {
            self.clients[c as usize].phase = Phase::Queued;
            self.guards.waiters.push_back(c);
            return false;
        }
        true
    }

    /// Frees a limiter slot: `Some(waiter)` when it passes straight to the next waiter, who
    /// must launch.
    #[inline]
    pub fn release_slot(&mut self) -> Option<u32> {
        let limiter = self.guards.limiter.as_mut()?;
        // The slot passes on without being released, so nobody can jump the queue.
        let next = self.guards.waiters.pop_front();
        if next.is_none() {
            limiter.release();
        }
        next
    }

    /// Client `c`, holding its limiter slot if any, sends its next attempt at `now`. A retry
    /// refused here (the deadline passed, throttled, the breaker open) gives its budget token
    /// back, as the executor's does.
    #[inline]
    pub fn launch(&mut self, c: u32, now: SimTime) -> Launch {
        let client = &self.clients[c as usize];
        // Tags never repeat for a client: the last one it can send ends its request instead of
        // wrapping to a tag an earlier attempt had.
        let Some(tag) = client.sends.checked_add(1) else {
            return self.refuse(c, Ending::GaveUpAttempts);
        };
        let timeout = match self
            .policy
            .attempt_timeout(client.start.as_nanos(), now.as_nanos())
        {
            AttemptTimeout::Expired => return self.refuse(c, Ending::GaveUpDeadline),
            AttemptTimeout::Unbounded => None,
            AttemptTimeout::After(t) => Some(SimDuration(t)),
        };
        let owner = self.owner(c);
        // The throttle is asked for every attempt, first or retry, before the breaker (an
        // attempt the breaker refuses was still one the client wanted to send).
        if let Some(i) = self.guards.throttle_index(owner) {
            let (throttle, rng) = &mut self.guards.throttles[i];
            if !throttle.admit_nanos(now.as_nanos(), rng) {
                return self.refuse(c, Ending::Throttled);
            }
        }
        // The breaker is asked last, as the attempt leaves: a half-open breaker's one probe is
        // then always an attempt that is really sent, never one that expires in the limiter's
        // queue and leaves the breaker waiting for a result that never comes.
        if let Some(i) = self.guards.breaker_index(owner)
            && !self.guards.breakers[i].allow_nanos(now.as_nanos())
        {
            return self.refuse(c, Ending::RejectedByBreaker);
        }
        // A concurrency budget counts the attempt active until `conclude` reports its end.
        if let Some(i) = self.guards.budget_index(owner) {
            self.guards.budgets[i].on_send();
        }
        let client = &mut self.clients[c as usize];
        client.sends = tag;
        client.phase = Phase::Waiting;
        if let Some(h) = self.hedging.as_mut() {
            h.sent(c, 1, now);
            // A hedged request is counted as it leaves: its first copy may never conclude.
            if let Some(i) = self.guards.budget_index(owner) {
                self.guards.budgets[i].on_request(Duration::from_nanos(now.as_nanos()));
            }
        }
        Launch::Sent { tag, timeout }
    }

    /// Client `c`'s next attempt is not sent: the request ends with `ending`.
    #[inline]
    fn refuse(&mut self, c: u32, ending: Ending) -> Launch {
        self.forgo_retry(c);
        Launch::Refused(ending)
    }

    /// Client `c` will not send the retry its budget granted (a refusal as it leaves, or a
    /// layer's propagated deadline): the budget is given the retry back. Nothing for a first
    /// attempt, or without a budget.
    #[inline]
    pub fn forgo_retry(&mut self, c: u32) {
        let client = &self.clients[c as usize];
        if client.attempts() == 0 {
            return;
        }
        if let Some(i) = self.guards.budget_index(self.owner(c)) {
            let at = self.granted[c as usize];
            self.guards.budgets[i].refund_retry_nanos(at, client.after);
        }
    }

    /// Client `c`'s current attempt ended at `now` with `outcome` (and a Retry-After `hint`):
    /// the breaker learns of it, the policy decides (with the budget). As in the executor, a
    /// retry the breaker as it stands would refuse when its sleep ends is not slept for: the
    /// request ends now, and its token goes back.
    #[inline]
    pub fn conclude(
        &mut self,
        c: u32,
        now: SimTime,
        outcome: Outcome,
        hint: Option<SimDuration>,
    ) -> Next {
        let owner = self.owner(c);
        let throttled = self.policy.policy().class_of(outcome) == RetryClass::Throttling;
        if let Some(rate) = self.guards.rate(owner, now) {
            // Every answer is measured, a timeout too (as botocore's `needs-retry` hook).
            rate.on_answer(now.into(), throttled);
        }
        if let Some(i) = self.guards.throttle_index(owner)
            && accepted(outcome)
        {
            self.guards.throttles[i].0.on_accept_nanos(now.as_nanos());
        }
        let breaker_index = self.guards.breaker_index(owner);
        if let Some(i) = breaker_index {
            // Only failures that speak of the server's health count (timeouts, connection
            // errors, 429, 5xx); a 409 or 400 says nothing about it.
            self.guards.breakers[i].record_nanos(now.as_nanos(), !outcome.is_server_failure());
        }
        let budget_index = self.guards.budget_index(owner);
        let hint = self.heard(hint);
        let client = &mut self.clients[c as usize];
        let report = AttemptReport {
            attempt: client.attempts(),
            start: client.start.as_nanos(),
            now: now.as_nanos(),
            outcome,
            retry_after: hint.map(SimDuration::as_nanos),
            idempotency: self.idempotency,
            follows: client.after,
        };
        client.after = self.policy.policy().class_of(outcome);
        let budget = budget_index.map(|i| &mut self.guards.budgets[i]);
        let decision = match self.custom.as_mut() {
            None => self
                .policy
                .decide(&report, &mut client.backoff, budget, &mut client.rng),
            Some(custom) => {
                let delays = &mut custom.states[c as usize];
                let at = RetryAt::new(report.attempt, client.start, now);
                let draw = |rng: &mut SimRng| delays.next_delay(at, rng).map(|d| d.as_nanos());
                self.policy
                    .decide_with(&report, budget, &mut client.rng, draw)
            }
        };
        match decision {
            Decision::Done => Next::End(Ending::Succeeded),
            Decision::Retry { sleep } => {
                let wake = now.as_nanos().saturating_add(sleep);
                if let Some(i) = breaker_index
                    && !self.guards.breakers[i].would_allow_nanos(wake)
                {
                    if let Some(b) = budget_index {
                        self.guards.budgets[b].refund_retry_nanos(now.as_nanos(), client.after);
                    }
                    return Next::End(Ending::RejectedByBreaker);
                }
                if budget_index.is_some() {
                    self.granted[c as usize] = now.as_nanos();
                }
                client.phase = Phase::Sleeping;
                Next::Sleep(SimDuration(sleep))
            }
            Decision::Stop(reason) => Next::End(match reason {
                StopReason::NotRetryable => Ending::Failed,
                StopReason::Attempts => Ending::GaveUpAttempts,
                StopReason::Budget => Ending::GaveUpBudget,
                // `decide` knows no breaker and no cancellation: only the deadline is left.
                _ => Ending::GaveUpDeadline,
            }),
        }
    }

    /// Client `c`'s request ends; the client is idle. The one place a request ends: `None`
    /// (and nothing changes) when client `c` has no request in flight, i.e. a second ending.
    #[inline]
    pub fn end(&mut self, c: u32) -> Option<Request> {
        let client = &mut self.clients[c as usize];
        if client.phase == Phase::Idle {
            return None;
        }
        client.phase = Phase::Idle;
        let attempts = client.attempts();
        // The copies still awaited are cancelled: a concurrency budget no longer counts them.
        if let Some(h) = self.hedging.as_ref()
            && let Some(i) = self.guards.budget_index(self.owner(c))
        {
            for n in (1..=attempts).filter(|&n| h.live(c, n)) {
                self.guards.budgets[i].on_abandon(n);
            }
        }
        let client = &self.clients[c as usize];
        Some(Request {
            start: client.start,
            attempts,
            number: client.requests,
        })
    }

    /// Requests in flight: clients not idle, counted one by one (for the tally at the horizon).
    pub fn in_flight(&self) -> u64 {
        self.clients
            .iter()
            .filter(|c| c.phase != Phase::Idle)
            .count() as u64
    }
}
