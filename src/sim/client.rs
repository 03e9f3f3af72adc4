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

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use rand::Rng;

use super::run_result::Ending;
use crate::backoff::{Backoff, BackoffParams, BackoffState};
use crate::policy::throttle::{Throttle, ThrottleConfig};
use crate::policy::{AdaptiveRateConfig, AdaptiveRateLimiter, ConcurrencyLimiter};
use crate::policy::{
    AttemptReport, AttemptTimeout, Decision, NanosPolicy, RetryPolicy, StopReason,
};
use crate::policy::{Breaker, BreakerConfig};
use crate::policy::{Budget, BudgetConfig};
use crate::policy::{Idempotency, Outcome, RetryOn};
use crate::policy::{RetryAfterHeader, RetryAfterPolicy, RetryClass, Throttling};
use crate::rng::{SimRng, StreamFamily};
use crate::time::{SimDuration, SimTime};

use super::hedge::{Cancel, CopyNext, HedgeConfig, HedgeCounts, Hedging};
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

/// Where a client is in its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No request (not started, thinking, or done). Every other phase is a request in
    /// flight: the ledger of requests begun and ended is these phases.
    Idle,
    /// An attempt is in flight.
    Waiting,
    /// Between attempts: sleeping before the next, or about to send the first.
    Sleeping,
    /// Waiting for a concurrency-limiter slot.
    Queued,
}

/// One client's state: one cache line, aligned to one. The client array is the simulator's
/// largest and most randomly accessed structure (with a million clients, most events begin
/// with a cache miss on it); what only travels with an attempt lives on its network link.
#[derive(Debug, Clone)]
#[repr(align(64))]
struct Client {
    /// The client's own jitter stream.
    rng: SimRng,
    backoff: BackoffState,
    /// First send of the current request.
    start: SimTime,
    /// Requests this client has started (closed loop: more than one).
    requests: u32,
    /// Attempts this client has sent, over all its requests: the tag of its latest attempt.
    /// Events name an attempt by this tag, which never repeats for a client, so an event left
    /// over from an earlier request can never be mistaken for one of the current request.
    sends: u32,
    /// `sends` when the current request began: its attempts are tags `first_send + 1 ..=`.
    first_send: u32,
    phase: Phase,
    /// The class of the previous attempt's failure (a token bucket's cost for the retry).
    after: RetryClass,
}

impl Client {
    fn new(rng: SimRng) -> Self {
        Client {
            rng,
            backoff: BackoffState::new(),
            start: SimTime::ZERO,
            requests: 0,
            sends: 0,
            first_send: 0,
            phase: Phase::Idle,
            after: RetryClass::Transient,
        }
    }

    /// Attempts of the current request so far.
    #[inline]
    fn attempts(&self) -> u32 {
        self.sends - self.first_send
    }

    /// True when the client is waiting for the answer to the attempt tagged `tag`.
    #[inline]
    fn awaits(&self, tag: u32) -> bool {
        self.phase == Phase::Waiting && self.sends == tag
    }

    /// The attempt number (1 = first) of the attempt tagged `tag` within the current request,
    /// or `None` for an attempt of an earlier request.
    #[inline]
    fn attempt_of(&self, tag: u32) -> Option<u32> {
        (tag > self.first_send && tag <= self.sends).then(|| tag - self.first_send)
    }

    /// The `(entity, sub)` of the per-attempt random streams of the attempt tagged `tag`:
    /// (request, attempt number), so that every strategy draws the same service demand,
    /// faults and network delays for the same request's same attempt. An attempt of an
    /// earlier request still at the server gets a stream of its own by tag.
    #[inline]
    fn attempt_stream(&self, client: u32, tag: u32) -> (u64, u64) {
        match self.attempt_of(tag) {
            Some(a) => (self.request_key(client), a as u64),
            None => (client as u64, (1 << 40) | tag as u64),
        }
    }

    /// The key of the current request for per-attempt streams.
    #[inline]
    fn request_key(&self, client: u32) -> u64 {
        request_key(client, self.requests)
    }
}

/// The per-attempt stream key of request `request` (1 = the first) of client `client` (also
/// used by the live mode, so that its attempts draw what the simulator's do).
#[inline]
pub(crate) fn request_key(client: u32, request: u32) -> u64 {
    ((client as u64) << 32) | request as u64
}

/// Breakers, budgets, throttles and the concurrency limiter. Per-client guards are indexed
/// by owner.
struct Guards {
    budgets: Vec<Budget>,
    budget: Option<(BudgetConfig, Scope)>,
    breakers: Vec<Breaker>,
    breaker: Option<(BreakerConfig, Scope)>,
    /// Each throttle with its own generator: stream `(index, 0)` of the `Throttle` family.
    throttles: Vec<(Throttle, SimRng)>,
    throttle: Option<(ThrottleConfig, Scope)>,
    throttle_streams: StreamFamily,
    limiter: Option<ConcurrencyLimiter>,
    waiters: VecDeque<u32>,
    /// Each adaptive rate limiter, made when first asked (it measures from then on).
    rates: Vec<Option<AdaptiveRateLimiter>>,
    rate: Option<(AdaptiveRateConfig, Scope)>,
}

impl Guards {
    fn new(config: &ClientConfig, owners: usize, throttle_streams: StreamFamily) -> Self {
        let count = |scope: Scope| if scope == Scope::Shared { 1 } else { owners };
        let mut guards = Guards {
            budgets: config.budget.map_or_else(Vec::new, |(b, s)| {
                (0..count(s)).map(|_| new_budget(b)).collect()
            }),
            budget: config.budget,
            breakers: config.breaker.map_or_else(Vec::new, |(b, s)| {
                (0..count(s)).map(|_| new_breaker(b)).collect()
            }),
            breaker: config.breaker,
            throttles: Vec::new(),
            throttle: config.throttle,
            throttle_streams,
            limiter: config.concurrency.map(|n| {
                ConcurrencyLimiter::new(n).expect("client.concurrency is checked by the scenario")
            }),
            waiters: VecDeque::new(),
            rates: config
                .adaptive_rate
                .map_or_else(Vec::new, |(_, s)| vec![None; count(s)]),
            rate: config.adaptive_rate,
        };
        if let Some((_, s)) = config.throttle {
            for _ in 0..count(s) {
                guards.push_throttle();
            }
        }
        guards
    }

    fn push_throttle(&mut self) {
        if let Some((t, _)) = self.throttle {
            let rng = self.throttle_streams.get(self.throttles.len() as u64, 0);
            let throttle = Throttle::new(t).expect("client.throttle is checked by the scenario");
            self.throttles.push((throttle, rng));
        }
    }

    /// Grows per-client guards for an open-loop client created during the run (its own owner).
    fn add_client(&mut self) {
        if let Some((b, Scope::Client)) = self.budget {
            self.budgets.push(new_budget(b));
        }
        if let Some((b, Scope::Client)) = self.breaker {
            self.breakers.push(new_breaker(b));
        }
        if let Some((_, Scope::Client)) = self.throttle {
            self.push_throttle();
        }
        if let Some((_, Scope::Client)) = self.rate {
            self.rates.push(None);
        }
    }

    /// The index of owner `o`'s guard of a kind configured with `scope`.
    #[inline]
    fn index(scope: Option<Scope>, o: u32) -> Option<usize> {
        match scope? {
            Scope::Shared => Some(0),
            Scope::Client => Some(o as usize),
        }
    }

    #[inline]
    fn budget_index(&self, o: u32) -> Option<usize> {
        Guards::index(self.budget.map(|b| b.1), o)
    }

    #[inline]
    fn breaker_index(&self, o: u32) -> Option<usize> {
        Guards::index(self.breaker.map(|b| b.1), o)
    }

    #[inline]
    fn throttle_index(&self, o: u32) -> Option<usize> {
        Guards::index(self.throttle.map(|t| t.1), o)
    }

    /// Owner `o`'s adaptive rate limiter at `now`, made now if it is the first ask.
    #[inline]
    fn rate(&mut self, o: u32, now: SimTime) -> Option<&mut AdaptiveRateLimiter> {
        let (config, scope) = self.rate?;
        let i = Guards::index(Some(scope), o)?;
        Some(self.rates[i].get_or_insert_with(|| AdaptiveRateLimiter::new(config, now.into())))
    }
}

/// True when the backend *accepted* an attempt, for the adaptive throttle: it answered, and not
/// with an overload rejection (429 or 503). A timeout or a connection error (a dropped or
/// reset attempt) is not an accept: from the client's side the backend did not take it; nor is
/// a fatal failure (which the simulator never produces), since nothing says the backend took it.
#[inline]
pub(super) fn accepted(outcome: Outcome) -> bool {
    match outcome {
        Outcome::Success => true,
        Outcome::Status(code) => code != 429 && code != 503,
        Outcome::Timeout | Outcome::Connection | Outcome::Fatal | Outcome::Invalid => false,
    }
}

fn new_budget(config: BudgetConfig) -> Budget {
    Budget::new(config).expect("client.budget is checked by the scenario")
}

fn new_breaker(config: BreakerConfig) -> Breaker {
    Breaker::new(config).expect("client.breaker is checked by the scenario")
}

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

    /// True when the clients hedge their requests instead of retrying.
    #[inline]
    pub fn hedged(&self) -> bool {
        self.hedging.is_some()
    }

    /// What hedged requests measured (`None` without hedging).
    pub fn hedge_counts(&self) -> Option<HedgeCounts> {
        self.hedging.as_ref().map(|h| h.counts)
    }

    /// True when the server drops the cancelled copies waiting in its queue.
    pub fn cancels_waiting(&self) -> bool {
        self.hedging
            .as_ref()
            .is_some_and(|h| h.config.cancel == Cancel::Waiting)
    }

    /// After client `c` sent its copy `tag`: the delay to the next copy, when one may follow
    /// (the request still waits for `tag`, copies are left, and the delay is known).
    #[inline]
    pub fn next_hedge(&self, c: u32, tag: u32) -> Option<SimDuration> {
        let h = self.hedging.as_ref()?;
        (self.awaits(c, tag) && h.may_send(c)).then(|| h.delay())?
    }

    /// True when `tag` is still client `c`'s latest copy and its request waits (the delay
    /// timer set when `tag` left is the current one), and no pushback holds the next copy
    /// past `now` (its own timer comes then).
    #[inline]
    pub fn hedge_due(&self, c: u32, tag: u32, now: SimTime) -> bool {
        let client = &self.clients[c as usize];
        client.phase == Phase::Waiting
            && client.sends == tag
            && self
                .hedging
                .as_ref()
                .is_some_and(|h| h.may_send(c) && h.released(c, now))
    }

    /// Client `c` sends another copy of its request at `now`: its tag and timeout, or why
    /// not. A copy after the first asks what a retry would (the deadline, the budget as a
    /// transient retry, the throttle, the breaker); a refusal sends no more copies.
    pub fn launch_copy(
        &mut self,
        c: u32,
        now: SimTime,
    ) -> Result<(u32, Option<SimDuration>), Ending> {
        let owner = self.owner(c);
        let client = &self.clients[c as usize];
        let refused = 'check: {
            let Some(tag) = client.sends.checked_add(1) else {
                break 'check Ending::GaveUpAttempts;
            };
            let timeout = match self
                .policy
                .attempt_timeout(client.start.as_nanos(), now.as_nanos())
            {
                AttemptTimeout::Expired => break 'check Ending::GaveUpDeadline,
                AttemptTimeout::Unbounded => None,
                AttemptTimeout::After(t) => Some(SimDuration(t)),
            };
            if let Some(i) = self.guards.budget_index(owner)
                && !self.guards.budgets[i]
                    .try_retry(Duration::from_nanos(now.as_nanos()), RetryClass::Transient)
            {
                break 'check Ending::GaveUpBudget;
            }
            // A copy the throttle or the breaker refuses gives the budget's grant back, as
            // a refused retry does (`Clients::refuse`).
            let throttled = self.guards.throttle_index(owner).is_some_and(|i| {
                let (throttle, rng) = &mut self.guards.throttles[i];
                !throttle.admit_nanos(now.as_nanos(), rng)
            });
            let refused = if throttled {
                Some(Ending::Throttled)
            } else if let Some(i) = self.guards.breaker_index(owner)
                && !self.guards.breakers[i].allow_nanos(now.as_nanos())
            {
                Some(Ending::RejectedByBreaker)
            } else {
                None
            };
            if let Some(i) = self.guards.budget_index(owner) {
                let budget = &mut self.guards.budgets[i];
                match refused {
                    Some(_) => budget.refund_retry_nanos(now.as_nanos(), RetryClass::Transient),
                    // A concurrency budget counts the copy in flight until it ends.
                    None => budget.on_send(),
                }
            }
            if let Some(refused) = refused {
                break 'check refused;
            }
            let client = &mut self.clients[c as usize];
            client.sends = tag;
            let h = self
                .hedging
                .as_mut()
                .expect("only a hedged client sends copies");
            h.sent(c, client.attempts(), now);
            return Ok((tag, timeout));
        };
        if let Some(h) = self.hedging.as_mut() {
            h.stop(c, refused);
        }
        Err(refused)
    }

    /// True when some copy of client `c`'s request is still awaited.
    pub fn any_copy_live(&self, c: u32) -> bool {
        self.hedging.as_ref().is_some_and(|h| h.any_live(c))
    }

    /// Copy `tag` of client `c` ended at `now` with `outcome` (and a Retry-After `hint`): the
    /// guards learn of it as of an attempt (the budget's success or failure, gRPC's token),
    /// then the policy says what follows. The request's phase is left to the engine
    /// ([`Clients::end`]).
    pub fn conclude_copy(
        &mut self,
        c: u32,
        tag: u32,
        now: SimTime,
        outcome: Outcome,
        hint: Option<SimDuration>,
    ) -> CopyNext {
        let owner = self.owner(c);
        let hint = self.heard(hint);
        let n = self.clients[c as usize]
            .attempt_of(tag)
            .expect("only an awaited copy is concluded");
        if let Some(i) = self.guards.throttle_index(owner)
            && accepted(outcome)
        {
            self.guards.throttles[i].0.on_accept_nanos(now.as_nanos());
        }
        if let Some(i) = self.guards.breaker_index(owner) {
            self.guards.breakers[i].record_nanos(now.as_nanos(), !outcome.is_server_failure());
        }
        let h = self
            .hedging
            .as_mut()
            .expect("only a hedged client has copies");
        if let Some(i) = self.guards.budget_index(owner) {
            let budget = &mut self.guards.budgets[i];
            // The copy is no longer in flight (a concurrency budget's books; `decide`'s
            // `on_attempt_end` for a retried attempt).
            budget.on_abandon(n);
            if outcome == Outcome::Success {
                budget.on_success_at(Duration::from_nanos(now.as_nanos()), Hedging::kind(n));
            } else if h.config.policy.non_fatal.retries(outcome) || outcome == Outcome::Fatal {
                budget.on_failure();
            }
        }
        let next = h.conclude(c, n, now, outcome);
        // A copy timed out by the request's deadline: the request fails as out of time
        // whatever copies are still out (A6: "Once a deadline has passed, the operation
        // fails regardless of in-flight RPCs"), as a retried one does.
        let start = self.clients[c as usize].start.as_nanos();
        if outcome == Outcome::Timeout
            && matches!(
                self.policy.attempt_timeout(start, now.as_nanos()),
                AttemptTimeout::Expired
            )
        {
            return CopyNext::End(Ending::GaveUpDeadline);
        }
        match (next, hint) {
            (CopyNext::SendNow, Some(hint)) => self.pushback(c, now, hint),
            _ => next,
        }
    }

    /// A non-fatal copy of client `c` answered at `now` with a Retry-After `hint`: the next
    /// copy waits what `client.retry_after` makes of the hint after a zero backoff (A6's
    /// pushback; `ignore`: at once), never past the deadline (it then gives up there).
    fn pushback(&mut self, c: u32, now: SimTime, hint: SimDuration) -> CopyNext {
        let client = &mut self.clients[c as usize];
        let policy = self.policy.policy();
        let hint = Duration::from_nanos(hint.as_nanos());
        let wait = SimDuration::from(policy.retry_after.sleep(
            Duration::ZERO,
            Some(hint),
            &mut client.rng,
        ));
        let left = policy
            .deadline
            .map(|d| (client.start + SimDuration::from(d)) - now);
        let delay = left.map_or(wait, |left| wait.min(left));
        if delay == SimDuration::ZERO {
            return CopyNext::SendNow;
        }
        let h = self
            .hedging
            .as_mut()
            .expect("only a hedged client has copies");
        h.hold(c, now + delay);
        CopyNext::SendAfter {
            delay,
            latest: client.sends,
        }
    }

    /// Served copies whose answer nobody read: one more.
    pub fn unread_copy(&mut self) {
        if let Some(h) = self.hedging.as_mut() {
            h.counts.unread_served += 1;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::Jitter;
    use crate::rng::StreamKind;

    #[test]
    fn a_client_is_one_cache_line() {
        // A field more and a million clients need twice the lines (and 64 MB more).
        assert_eq!(std::mem::size_of::<Client>(), 64);
        assert_eq!(std::mem::align_of::<Client>(), 64);
    }

    /// Two idle clients with unlimited attempts and a constant 1 ms backoff.
    fn clients() -> Clients {
        clients_with(ClientConfig::bare(None))
    }

    #[test]
    fn the_ledger_refuses_a_second_ending_and_a_second_beginning() {
        let mut c = clients();
        assert_eq!(c.in_flight(), 0);
        assert_eq!(c.end(0), None, "an idle client has nothing to end");
        assert!(c.begin(0, SimTime::ZERO));
        assert!(!c.begin(0, SimTime::ZERO), "a request is already in flight");
        assert_eq!(c.in_flight(), 1);
        assert!(matches!(
            c.launch(0, SimTime::ZERO),
            Launch::Sent { tag: 1, .. }
        ));
        let ended = c.end(0).expect("the request in flight ends");
        assert_eq!((ended.attempts, ended.number), (1, 1));
        assert_eq!(c.end(0), None, "a request ends once");
        assert_eq!(c.in_flight(), 0);
    }

    #[test]
    fn the_last_tag_ends_the_request_instead_of_wrapping() {
        let mut c = clients();
        c.clients[1].sends = u32::MAX - 1;
        assert!(c.begin(1, SimTime::ZERO));
        let sent = c.launch(1, SimTime::ZERO);
        assert_eq!(
            sent,
            Launch::Sent {
                tag: u32::MAX,
                timeout: None
            }
        );
        let next = c.conclude(1, SimTime::ZERO, Outcome::Status(503), None);
        assert!(matches!(next, Next::Sleep(_)));
        assert_eq!(
            c.launch(1, SimTime::ZERO),
            Launch::Refused(Ending::GaveUpAttempts)
        );
        assert!(
            !c.awaits(1, 0),
            "tag 0 of a wrapped counter is never awaited"
        );
    }

    /// Clients under `config` (a constant 1 ms backoff), two of them.
    fn clients_with(config: ClientConfig) -> Clients {
        let ms = SimDuration::from_millis(1);
        let policy = config.retry_policy(Backoff::new(Jitter::Constant, ms, 2.0, ms).unwrap());
        Clients::new(
            &config,
            policy,
            (
                StreamFamily::new(1, 0, StreamKind::Jitter),
                StreamFamily::new(1, 0, StreamKind::Throttle),
            ),
            2,
            2,
        )
    }

    /// A shared token bucket of 10 (a retry costs 5) and a shared breaker.
    fn budget_and_breaker(min_requests: u32) -> ClientConfig {
        ClientConfig {
            budget: Some((
                BudgetConfig::TokenBucket {
                    capacity: 10,
                    retry_cost: 5,
                    timeout_cost: 5,
                    throttling_cost: 5,
                    success_refund: 0,
                },
                Scope::Shared,
            )),
            breaker: Some((
                BreakerConfig {
                    failure_ratio: 1.0,
                    min_requests,
                    window: std::time::Duration::from_secs(10),
                    open_for: std::time::Duration::from_secs(1),
                },
                Scope::Shared,
            )),
            ..ClientConfig::bare(None)
        }
    }

    /// A shared concurrency budget (Envoy's 20 %, at least 3) over `n` clients, each with a
    /// request whose first attempt is out: its limit is then max(3, ⌊n / 5⌋).
    fn envoy_cluster(n: u32) -> Clients {
        let ms = SimDuration::from_millis(1);
        let config = ClientConfig {
            budget: Some((BudgetConfig::concurrency(), Scope::Shared)),
            ..ClientConfig::bare(None)
        };
        let policy = config.retry_policy(Backoff::new(Jitter::Constant, ms, 2.0, ms).unwrap());
        let streams = (
            StreamFamily::new(1, 0, StreamKind::Jitter),
            StreamFamily::new(1, 0, StreamKind::Throttle),
        );
        let mut c = Clients::new(&config, policy, streams, n, n);
        for i in 0..n {
            assert!(c.begin(i, SimTime::ZERO));
            assert!(matches!(c.launch(i, SimTime::ZERO), Launch::Sent { .. }));
        }
        c
    }

    #[test]
    fn a_shared_concurrency_budget_counts_the_clusters_attempts_in_flight() {
        // Hand-computed: 100 attempts out; each failure ends one and asks for a retry. The
        // k-th asks with 100 - k active and k - 1 retries in flight: allowed while k - 1 <
        // max(3, ⌊(100 - k) / 5⌋): k = 16 (15 < 16) is, k = 17 (16 < ⌊83 / 5⌋ = 16) is not.
        let mut c = envoy_cluster(100);
        let now = SimTime::ZERO;
        let granted = (0..100)
            .take_while(|&i| {
                matches!(
                    c.conclude(i, now, Outcome::Status(503), None),
                    Next::Sleep(_)
                )
            })
            .count();
        assert_eq!(granted, 16);
        assert_eq!(c.guards.budgets[0].max_concurrent_retries(), Some(16));
        // The 16 retries go out: 83 + 16 = 99 active, limit ⌊99 / 5⌋ = 19, three places free.
        for i in 0..16 {
            assert!(matches!(c.launch(i, now), Launch::Sent { .. }));
        }
        assert_eq!(tokens(&c), 3.0);
        // A retry that fails frees its place (98 active, 15 in flight, limit 19), and its own
        // next retry takes one.
        assert!(matches!(
            c.conclude(0, now, Outcome::Status(503), None),
            Next::Sleep(_)
        ));
        assert_eq!(tokens(&c), 3.0);
        assert!(matches!(
            c.conclude(1, now, Outcome::Success, None),
            Next::End(Ending::Succeeded)
        ));
        assert_eq!(tokens(&c), 4.0, "97 active, 15 in flight, limit 19");
    }

    fn tokens(c: &Clients) -> f64 {
        c.guards.budgets[0].available(std::time::Duration::ZERO)
    }

    /// The engine's books in the simulator: a retry the breaker would refuse is not slept for
    /// (the request ends at once, as the executor's call does) and costs no token; a retry
    /// refused as it leaves (the breaker opened meanwhile) gives its token back.
    #[test]
    fn a_retry_the_breaker_refuses_costs_no_token() {
        // The breaker opens on the first failure: the retry is never scheduled.
        let mut c = clients_with(budget_and_breaker(1));
        assert!(c.begin(0, SimTime::ZERO));
        assert!(matches!(c.launch(0, SimTime::ZERO), Launch::Sent { .. }));
        let next = c.conclude(0, SimTime::ZERO, Outcome::Status(503), None);
        assert_eq!(next, Next::End(Ending::RejectedByBreaker));
        assert_eq!(tokens(&c), 10.0);
        // Two failures open it: client 0's retry is granted, then refused as it leaves.
        let mut c = clients_with(budget_and_breaker(2));
        for client in [0, 1] {
            assert!(c.begin(client, SimTime::ZERO));
            assert!(matches!(
                c.launch(client, SimTime::ZERO),
                Launch::Sent { .. }
            ));
        }
        let next = c.conclude(0, SimTime::ZERO, Outcome::Status(503), None);
        assert_eq!(next, Next::Sleep(SimDuration::from_millis(1)));
        assert_eq!(tokens(&c), 5.0);
        let next = c.conclude(1, SimTime::ZERO, Outcome::Status(503), None);
        assert_eq!(next, Next::End(Ending::RejectedByBreaker));
        let at = SimTime::ZERO + SimDuration::from_millis(1);
        assert_eq!(c.launch(0, at), Launch::Refused(Ending::RejectedByBreaker));
        assert_eq!(tokens(&c), 10.0, "both tokens back");
    }

    /// One hedge after 4 ms, 503 non-fatal: a hedged client of `budget` (shared).
    fn hedged_with(budget: BudgetConfig) -> ClientConfig {
        ClientConfig {
            budget: Some((budget, Scope::Shared)),
            hedging: Some(HedgeConfig {
                policy: crate::policy::HedgingPolicy::fixed(Duration::from_millis(4))
                    .non_fatal(RetryOn::none().with_status(503).unwrap()),
                cancel: Cancel::Waiting,
            }),
            ..ClientConfig::bare(None)
        }
    }

    /// Client 0 begins a request and sends its first copy at `now`: its tag.
    fn first_copy(c: &mut Clients, now: SimTime) -> u32 {
        assert!(c.begin(0, now));
        match c.launch(0, now) {
            Launch::Sent { tag, .. } => tag,
            refused => panic!("{refused:?}"),
        }
    }

    #[test]
    fn a_concurrency_budget_frees_a_hedge_when_its_request_ends() {
        // Envoy's budget allows max(3, 20 % of active) retries in flight. One client, ten
        // requests one after the other, each hedged and won by its first copy (the hedge is
        // cancelled): every hedge is allowed, since the last one is no longer in flight.
        let mut c = clients_with(hedged_with(BudgetConfig::concurrency()));
        for k in 0..10 {
            let now = SimTime::ZERO + SimDuration::from_millis(10 * k);
            let first = first_copy(&mut c, now);
            let hedge = c.launch_copy(0, now + SimDuration::from_millis(4));
            assert!(hedge.is_ok(), "request {k}: {hedge:?}");
            let done = now + SimDuration::from_millis(5);
            assert_eq!(
                c.conclude_copy(0, first, done, Outcome::Success, None),
                CopyNext::End(Ending::Succeeded)
            );
            assert!(c.end(0).is_some());
            assert_eq!(tokens(&c), 3.0, "request {k}: nothing left in flight");
        }
    }

    #[test]
    fn a_ratio_budget_counting_successes_counts_a_hedged_success() {
        // 100 % of the requests that succeeded, no reserve: the first request's hedge is
        // refused (no success yet), the second's allowed by the first's success.
        let budget = BudgetConfig::Ratio {
            percent: 100.0,
            min_per_sec: 0.0,
            window: std::time::Duration::from_secs(10),
            deposit: crate::policy::RatioDeposit::Success,
        };
        let mut c = clients_with(hedged_with(budget));
        let at = |ms| SimTime::ZERO + SimDuration::from_millis(ms);
        let first = first_copy(&mut c, at(0));
        assert_eq!(c.launch_copy(0, at(4)), Err(Ending::GaveUpBudget));
        let next = c.conclude_copy(0, first, at(5), Outcome::Success, None);
        assert_eq!(next, CopyNext::End(Ending::Succeeded));
        assert!(c.end(0).is_some());
        first_copy(&mut c, at(10));
        assert!(c.launch_copy(0, at(14)).is_ok(), "one success deposited");
    }

    #[test]
    fn a_hedge_the_breaker_refuses_gives_its_token_back() {
        // A token bucket of 10 (a retry costs 5) and a breaker opening on two failures: both
        // first copies fail (503, non-fatal), the breaker opens, and client 0's hedge, granted
        // by the budget, is refused by the breaker: its 5 tokens go back.
        let mut config = budget_and_breaker(2);
        config.hedging = hedged_with(BudgetConfig::grpc()).hedging;
        let mut c = clients_with(config);
        let now = SimTime::ZERO;
        for client in [0, 1] {
            assert!(c.begin(client, now));
            assert!(matches!(c.launch(client, now), Launch::Sent { .. }));
        }
        for client in [0, 1] {
            let tag = c.clients[client as usize].sends;
            let next = c.conclude_copy(client, tag, now, Outcome::Status(503), None);
            assert_eq!(next, CopyNext::SendNow);
        }
        assert_eq!(c.launch_copy(0, now), Err(Ending::RejectedByBreaker));
        assert_eq!(tokens(&c), 10.0);
    }

    /// What the adaptive throttle counts as accepted: any answer but an overload rejection.
    #[test]
    fn accepts_are_answers_other_than_overload() {
        for (outcome, yes) in [
            (Outcome::Success, true),
            (Outcome::Status(500), true),
            (Outcome::Status(409), true),
            (Outcome::Status(502), true),
            (Outcome::Status(429), false),
            (Outcome::Status(503), false),
            (Outcome::Timeout, false),
            (Outcome::Connection, false),
            (Outcome::Fatal, false),
            (Outcome::Invalid, false),
        ] {
            assert_eq!(accepted(outcome), yes, "{outcome:?}");
        }
    }

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
