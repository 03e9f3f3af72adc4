//! One client's state, one cache line: its jitter stream, backoff, the tags of its attempts
//! and where it is in its request.

use crate::backoff::BackoffState;
use crate::policy::RetryClass;
use crate::rng::SimRng;
use crate::time::SimTime;

/// Where a client is in its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
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
pub(super) struct Client {
    /// The client's own jitter stream.
    pub(super) rng: SimRng,
    pub(super) backoff: BackoffState,
    /// First send of the current request.
    pub(super) start: SimTime,
    /// Requests this client has started (closed loop: more than one).
    pub(super) requests: u32,
    /// Attempts this client has sent, over all its requests: the tag of its latest attempt.
    /// Events name an attempt by this tag, which never repeats for a client, so an event left
    /// over from an earlier request can never be mistaken for one of the current request.
    pub(super) sends: u32,
    /// `sends` when the current request began: its attempts are tags `first_send + 1 ..=`.
    pub(super) first_send: u32,
    pub(super) phase: Phase,
    /// The class of the previous attempt's failure (a token bucket's cost for the retry).
    pub(super) after: RetryClass,
}

impl Client {
    pub(super) fn new(rng: SimRng) -> Self {
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
    pub(super) fn attempts(&self) -> u32 {
        self.sends - self.first_send
    }

    /// True when the client is waiting for the answer to the attempt tagged `tag`.
    #[inline]
    pub(super) fn awaits(&self, tag: u32) -> bool {
        self.phase == Phase::Waiting && self.sends == tag
    }

    /// The attempt number (1 = first) of the attempt tagged `tag` within the current request,
    /// or `None` for an attempt of an earlier request.
    #[inline]
    pub(super) fn attempt_of(&self, tag: u32) -> Option<u32> {
        (tag > self.first_send && tag <= self.sends).then(|| tag - self.first_send)
    }

    /// The `(entity, sub)` of the per-attempt random streams of the attempt tagged `tag`:
    /// (request, attempt number), so that every strategy draws the same service demand,
    /// faults and network delays for the same request's same attempt. An attempt of an
    /// earlier request still at the server gets a stream of its own by tag.
    #[inline]
    pub(super) fn attempt_stream(&self, client: u32, tag: u32) -> (u64, u64) {
        match self.attempt_of(tag) {
            Some(a) => (self.request_key(client), a as u64),
            None => (client as u64, (1 << 40) | tag as u64),
        }
    }

    /// The key of the current request for per-attempt streams.
    #[inline]
    pub(super) fn request_key(&self, client: u32) -> u64 {
        request_key(client, self.requests)
    }
}

/// The per-attempt stream key of request `request` (1 = the first) of client `client` (also
/// used by the live mode, so that its attempts draw what the simulator's do).
#[inline]
pub(crate) fn request_key(client: u32, request: u32) -> u64 {
    ((client as u64) << 32) | request as u64
}
