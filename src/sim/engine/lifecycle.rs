//! One request lifecycle for every layer: the steps a request and its attempts go through
//! (begin, send, arrive, served or turned away, answered or timed out, concluded, ended),
//! written once, generic over the [`Station`] they happen at.
//!
//! A station is a server and its callers. Layer 1 ([`Edge`]) is the engine's server, called
//! by the edge clients; layer `n` from 2 down ([`Below`]`(n - 1)`) is a chain station, called
//! by one caller slot per worker of the layer above. What differs between layers are the
//! station's parameters, the trait's methods: which events carry its steps, which streams key
//! an attempt, where it is tallied (the engine's recorder or a layer's tally), what a
//! propagated deadline cuts, and who is told when a request ends (an edge client thinks and
//! starts again; a caller slot's worker answers its own caller, one layer up).
//!
//! Stations are type parameters, not values matched at run time: layer 1's steps compile to
//! straight-line code over the engine's own fields, as fast as an edge-only engine.

use super::Sim;
use crate::policy::Outcome;
use crate::sim::answer::Answer;
use crate::sim::client::{Clients, Launch, Next, Request};
use crate::sim::event::Event;
use crate::sim::network::Network;
use crate::sim::run_result::Ending;
use crate::sim::server::{Admission, Server, Visit};
use crate::time::{SimDuration, SimTime};

/// The parts of a station that the lifecycle drives: its callers, the network between them
/// and its server.
pub(super) struct Parts<'s, 'a> {
    pub callers: &'s mut Clients,
    pub network: &'s mut Network,
    pub server: &'s mut Server<'a>,
}

/// Layer 1: the engine's server and the edge clients calling it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Edge;

/// Station `.0` of the chain (layer `.0 + 1`, 2 and up), called by the workers of the layer
/// above.
#[derive(Debug, Clone, Copy)]
pub(super) struct Below(pub usize);

/// What differs between the layers a request lifecycle runs at.
pub(super) trait Station: Copy {
    /// Its callers may hedge (only the edge clients do).
    const HEDGES: bool;

    /// The event of attempt `tag` of caller `c` reaching the server after its leg.
    fn arrive_event(self, c: u32, tag: u32) -> Event;
    /// The event of worker `w` finishing its own service.
    fn done_event(self, w: u32) -> Event;
    /// The event of an answer to attempt `tag` reaching caller `c`.
    fn reply_event(self, c: u32, tag: u32) -> Event;
    /// The event of attempt `tag` of caller `c` timing out.
    fn timeout_event(self, c: u32, tag: u32) -> Event;
    /// The event of caller `c` waking to send its next attempt.
    fn wake_event(self, c: u32) -> Event;
    /// The event of caller `c` launching on a limiter slot handed to it.
    fn launch_event(self, c: u32) -> Event;

    /// Its callers, network and server.
    fn parts<'s, 'a>(self, sim: &'s mut Sim<'a>) -> Parts<'s, 'a>;
    /// The per-attempt stream key of attempt `tag` of caller `c`.
    fn stream(self, sim: &Sim<'_>, c: u32, tag: u32) -> (u64, u64);
    /// The station its workers call after their own service, if any.
    fn below(self, sim: &Sim<'_>) -> Option<Below>;
    /// When caller `c`'s own caller stops waiting for it (`None`: no propagated deadline).
    fn deadline(self, sim: &Sim<'_>, c: u32) -> Option<SimTime>;
    /// When caller `c`'s current attempt times out (what a layer below may be told).
    fn expiry(self, sim: &Sim<'_>, c: u32) -> SimTime;

    /// A caller began a request.
    fn began(self, sim: &mut Sim<'_>);
    /// Caller `c` sent an attempt just now that times out after `timeout`; returns the
    /// timeout to arm (cut to a propagated deadline).
    fn sent(self, sim: &mut Sim<'_>, c: u32, timeout: Option<SimDuration>) -> Option<SimDuration>;
    /// Attempt `tag` of caller `c` reached the server.
    fn arrived(self, sim: &mut Sim<'_>, c: u32, tag: u32);
    /// The server dropped an arrival unanswered.
    fn dropped(self, sim: &mut Sim<'_>);
    /// The server turned an arrival away (`hinted`: with a Retry-After hint).
    fn rejected(self, sim: &mut Sim<'_>, hinted: bool);
    /// The server read a row's `version` for attempt `tag` of caller `c` (OCC).
    fn read(self, sim: &mut Sim<'_>, c: u32, tag: u32, version: u32);
    /// A worker is done with an attempt after `work` ns, answering `answer`; `awaited` when
    /// its caller still waits for it.
    fn worked(self, sim: &mut Sim<'_>, work: u64, awaited: bool, answer: Answer);
    /// Work that nobody will use (an answer on its way to a caller that timed out).
    fn wasted(self, sim: &mut Sim<'_>, work: u64);
    /// `answer` reached caller `c`, which awaited it.
    fn answered(self, sim: &mut Sim<'_>, c: u32, answer: Answer);
    /// Caller `c`'s attempt timed out.
    fn timed_out(self, sim: &mut Sim<'_>, c: u32);
    /// Caller `c`'s `request` ended with `ending`: who waits for it hears of it.
    fn ended(self, sim: &mut Sim<'_>, c: u32, ending: Ending, request: Request);
}

impl<'a> Sim<'a> {
    /// Caller `c` of `st` begins a new request.
    pub(super) fn begin<S: Station>(&mut self, st: S, c: u32) {
        let now = self.now;
        if !st.parts(self).callers.begin(c, now) {
            self.recorder.ledger_fault();
            return;
        }
        st.began(self);
        self.send_attempt(st, c);
    }

    /// Caller `c` wants to send its next attempt: a rate limiter's token first (waking again
    /// when it is due), then a limiter slot, then launch.
    #[inline]
    pub(super) fn send_attempt<S: Station>(&mut self, st: S, c: u32) {
        let now = self.now;
        let callers = st.parts(self).callers;
        if let Some(wait) = callers.token_wait(c, now) {
            self.after(wait, st.wake_event(c));
        } else if callers.acquire_slot(c) {
            self.launch(st, c);
        }
    }

    /// Caller `c`, holding its limiter slot if any, sends its next attempt: not when the
    /// deadline its own caller propagated has passed (a retry's budget token goes back, as
    /// for the caller's own deadline).
    pub(super) fn launch<S: Station>(&mut self, st: S, c: u32) {
        let now = self.now;
        let deadline = st.deadline(self, c);
        let callers = st.parts(self).callers;
        let launch = match deadline {
            Some(d) if now >= d => {
                callers.forgo_retry(c);
                Launch::Refused(Ending::GaveUpDeadline)
            }
            _ => callers.launch(c, now),
        };
        match launch {
            Launch::Sent { tag, timeout } => {
                let timeout = st.sent(self, c, timeout);
                self.send(st, c, tag);
                self.arm(st, c, tag, timeout);
            }
            Launch::Refused(ending) => {
                self.release_slot(st);
                self.end(st, c, ending);
            }
        }
    }

    /// Timers of attempt `tag` of caller `c`, just sent: its timeout, and with hedging the
    /// delay to the next copy. Armed after the send, so an attempt answered at once (a
    /// rejection with an instantaneous network) leaves no stale timer in the queue.
    #[inline]
    pub(super) fn arm<S: Station>(
        &mut self,
        st: S,
        c: u32,
        tag: u32,
        timeout: Option<SimDuration>,
    ) {
        let callers = st.parts(self).callers;
        if let Some(t) = timeout
            && callers.awaits(c, tag)
        {
            self.after(t, st.timeout_event(c, tag));
        }
        if S::HEDGES
            && let Some(d) = st.parts(self).callers.next_hedge(c, tag)
        {
            self.after(d, Event::Hedge(c, tag));
        }
    }

    /// Attempt `tag` leaves caller `c`: it reaches the server after one leg.
    #[inline]
    pub(super) fn send<S: Station>(&mut self, st: S, c: u32, tag: u32) {
        if st.parts(self).network.is_instant() {
            self.arrive(st, c, tag);
        } else {
            let stream = st.stream(self, c, tag);
            let d = st.parts(self).network.first_leg(c, stream);
            self.after(d, st.arrive_event(c, tag));
        }
    }

    /// Attempt `tag` of caller `c` reaches the server, which admits it.
    pub(super) fn arrive<S: Station>(&mut self, st: S, c: u32, tag: u32) {
        st.arrived(self, c, tag);
        let now = self.now;
        let visit = Visit {
            client: c,
            tag,
            stream: st.stream(self, c, tag),
        };
        match st.parts(self).server.admit(now, visit) {
            Admission::Serve { slot, service } => self.after(service, st.done_event(slot)),
            Admission::Wait => {}
            Admission::Reject { answer, hint } => self.reject(st, c, tag, answer, hint),
            Admission::Drop => st.dropped(self),
            Admission::Read { version } => st.read(self, c, tag, version),
        }
    }

    /// Worker `w` finished its own service: it calls the station below, if any, else it
    /// answers.
    pub(super) fn service_done<S: Station>(&mut self, st: S, w: u32) {
        match st.below(self) {
            Some(below) => self.call_down(st, below, w),
            None => self.release(st, w, Answer::OK, 0),
        }
    }

    /// Worker `w` is done with its attempt, `held` nanoseconds after its own service (the
    /// time it waited for the layer below): the answer goes back, then the worker takes the
    /// next waiting attempt.
    pub(super) fn release<S: Station>(&mut self, st: S, w: u32, answer: Answer, held: u64) {
        let parts = st.parts(self);
        let job = parts.server.depart(w);
        let work = job.work + held;
        let awaited = parts.callers.awaits(job.client, job.tag);
        if S::HEDGES && !awaited {
            parts.callers.unread_copy();
        }
        st.worked(self, work, awaited, answer);
        if awaited {
            self.answer(st, job.client, job.tag, answer, None, work);
        }
        self.serve_next(st, w);
    }

    /// Worker `w`, free, takes the next waiting attempt whose caller still waits for it
    /// (with hedging that cancels waiting copies, the others leave the waiting room).
    #[inline]
    fn serve_next<S: Station>(&mut self, st: S, w: u32) {
        let parts = st.parts(self);
        let callers = &*parts.callers;
        let cancels = S::HEDGES && callers.cancels_waiting();
        let Some((c, tag)) = parts
            .server
            .next_waiting(w, cancels, |c, tag| callers.awaits(c, tag))
        else {
            return;
        };
        let now = self.now;
        let visit = Visit {
            client: c,
            tag,
            stream: st.stream(self, c, tag),
        };
        let service = st.parts(self).server.serve(now, w, visit);
        self.after(service, st.done_event(w));
    }

    /// The server turns attempt `tag` of caller `c` away without serving it.
    pub(super) fn reject<S: Station>(
        &mut self,
        st: S,
        c: u32,
        tag: u32,
        answer: Answer,
        hint: Option<SimDuration>,
    ) {
        st.rejected(self, hint.is_some());
        self.answer(st, c, tag, answer, hint, 0);
    }

    /// Sends `answer` back to caller `c` over one leg, if it still waits for attempt `tag`.
    /// `work` is the service time spent on it (0 for an answer given without serving).
    pub(super) fn answer<S: Station>(
        &mut self,
        st: S,
        c: u32,
        tag: u32,
        answer: Answer,
        hint: Option<SimDuration>,
        work: u64,
    ) {
        let parts = st.parts(self);
        if !parts.callers.awaits(c, tag) {
            return;
        }
        if parts.network.is_instant() {
            self.receive(st, c, tag, answer, hint);
        } else {
            let d = parts.network.reply_leg(c, tag, work, answer, hint);
            self.after(d, st.reply_event(c, tag));
        }
    }

    /// An answer reaches caller `c` (inline when the network is instant).
    #[inline]
    pub(super) fn receive<S: Station>(
        &mut self,
        st: S,
        c: u32,
        tag: u32,
        answer: Answer,
        hint: Option<SimDuration>,
    ) {
        if !st.parts(self).callers.awaits(c, tag) {
            return;
        }
        st.answered(self, c, answer);
        self.conclude(st, c, tag, answer.outcome(), hint);
    }

    /// The timer of attempt `tag` of caller `c` fired.
    pub(super) fn timeout<S: Station>(&mut self, st: S, c: u32, tag: u32) {
        let parts = st.parts(self);
        if !parts.callers.awaits(c, tag) {
            return;
        }
        // A served answer already on its way back is now work nobody will use.
        if let Some(work) = parts.network.reply_work(c, tag) {
            st.wasted(self, work);
        }
        st.timed_out(self, c);
        self.conclude(st, c, tag, Outcome::Timeout, None);
    }

    /// Caller `c`'s current attempt `tag` ended with `outcome`: its limiter slot is freed,
    /// then it sleeps or its request ends (a hedged request: see `Sim::conclude_copy`). A
    /// retry that could not be sent before the propagated deadline is not taken, as with the
    /// caller's own deadline.
    pub(super) fn conclude<S: Station>(
        &mut self,
        st: S,
        c: u32,
        tag: u32,
        outcome: Outcome,
        hint: Option<SimDuration>,
    ) {
        if S::HEDGES && st.parts(self).callers.hedged() {
            return self.conclude_copy(c, tag, outcome, hint);
        }
        self.release_slot(st);
        let now = self.now;
        let deadline = st.deadline(self, c);
        let callers = st.parts(self).callers;
        match callers.conclude(c, now, outcome, hint) {
            Next::Sleep(sleep) if deadline.is_some_and(|d| now + sleep >= d) => {
                callers.forgo_retry(c);
                self.end(st, c, Ending::GaveUpDeadline)
            }
            Next::Sleep(sleep) => self.after(sleep, st.wake_event(c)),
            Next::End(ending) => self.end(st, c, ending),
        }
    }

    /// Frees a limiter slot of `st`'s callers; a waiter handed the slot launches through an
    /// event, which keeps the call stack flat.
    #[inline]
    pub(super) fn release_slot<S: Station>(&mut self, st: S) {
        if let Some(next) = st.parts(self).callers.release_slot() {
            self.after(SimDuration::ZERO, st.launch_event(next));
        }
    }

    /// Caller `c`'s request ends: whoever waits for it hears of it.
    pub(super) fn end<S: Station>(&mut self, st: S, c: u32, ending: Ending) {
        let Some(request) = st.parts(self).callers.end(c) else {
            self.recorder.ledger_fault();
            return;
        };
        st.ended(self, c, ending, request);
    }
}
