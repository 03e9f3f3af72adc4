//! Hedged requests: copies of a request sent while none has answered, the first success
//! winning (gRFC A6 `hedgingPolicy`; Dean and Barroso, "The Tail at Scale", 2013).
//!
//! A hedged request sends its first copy; while no copy has succeeded and fewer than
//! `max_attempts` were sent, another copy leaves `delay` after the last one. A copy that fails
//! with a non-fatal outcome (`non_fatal`) sends the next copy at once, without waiting for the
//! delay; a fatal one ends the request and cancels the rest (A6 "Hedging policy"). The first
//! success ends the request: the client stops waiting for the other copies at once, and the
//! server drops a cancelled copy still in its queue (`cancel = "waiting"`) or serves it anyway
//! (`"never"`); a copy already in service is always finished (its work is wasted).
//!
//! Hedging replaces retries (A6: a method has a retry or a hedging policy, never both): the
//! strategy's backoff is not used. Budgets count copies as A6's throttling counts hedges:
//! each failed copy is a failure ([`crate::policy::Budget::on_failure`], a gRPC token), each
//! success a success, and every copy after the first asks the budget as a retry would; a
//! refusal (throttled) sends no more copies of that request.
//!
//! A percentile delay (`"p95"`) is that percentile of the latency of the *successful copies*
//! of the run's clients so far (send to answer, integer nanoseconds): the last [`WINDOW`]
//! of them, nearest rank, recomputed every [`REFRESH`] successes. One window for all clients,
//! because an open-loop workload makes every request a client of its own (a window per client
//! would never fill); it is the view a shared SDK client or sidecar has. Before [`WARM_UP`]
//! successes the delay is unknown and no copy beyond the first is sent.

use super::run_result::Ending;
pub use crate::policy::HedgeDelay;
use crate::policy::{AttemptKind, HedgingPolicy, Outcome, RetryClass};
use crate::time::{SimDuration, SimTime};

/// The most copies of one request (A6: "maxAttempts ... values greater than 5 are treated as
/// 5"): the engine's.
pub const MAX_COPIES: u32 = crate::policy::MAX_HEDGED_ATTEMPTS;

/// Successful copies a percentile delay is computed over: the most recent ones.
pub const WINDOW: usize = 1000;

/// A percentile delay is recomputed after this many new successes (and at the first
/// [`WARM_UP`]).
pub const REFRESH: u32 = 16;

/// Successes observed before a percentile delay is known (with fewer, the 99th percentile
/// would be the largest of a handful).
pub const WARM_UP: usize = 100;

/// What happens to a cancelled copy still waiting in the server's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel {
    /// The server drops it unserved (cancellation reaches the server).
    Waiting,
    /// The server serves it anyway (the cancel is never seen).
    Never,
}

impl Cancel {
    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            Cancel::Waiting => "waiting",
            Cancel::Never => "never",
        }
    }
}

/// A hedging policy, validated: the engine's (the one the async executor runs), and what the
/// server does with a cancelled copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HedgeConfig {
    /// The delay, the copies, the non-fatal failures.
    pub policy: HedgingPolicy,
    /// What the server does with a cancelled copy in its queue.
    pub cancel: Cancel,
}

/// What a hedged run measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HedgeCounts {
    /// Copies sent after the first.
    pub hedges: u64,
    /// Requests whose winning copy was not the first.
    pub won_by_hedge: u64,
    /// Copies the server served to the end whose answer nobody read (their request had
    /// ended, or the copy had timed out).
    pub unread_served: u64,
}

/// The copies of one client's current request.
#[derive(Debug, Clone, Copy, Default)]
struct Copies {
    /// Copies sent.
    sent: u8,
    /// Bit `n - 1`: copy `n` has failed (no longer awaited).
    failed: u8,
    /// No more copies: why (the budget, the throttle, the breaker or the deadline refused one).
    stopped: Option<Ending>,
    /// When each copy left, in nanoseconds.
    sent_at: [u64; MAX_COPIES as usize],
    /// No copy leaves before this time, in nanoseconds: a server's pushback (A6).
    not_before: u64,
}

/// What follows a copy's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopyNext {
    /// Other copies are still awaited: wait for them (or for the next delay).
    Wait,
    /// Send the next copy now.
    SendNow,
    /// Send the next copy after this pushback (A6: "the next hedged request (if any) will be
    /// issued after the given delay"), `latest` being the tag of the last copy sent.
    SendAfter { delay: SimDuration, latest: u32 },
    /// The request ends so.
    End(Ending),
}

/// The hedging state of a run: each client's copies, the latency window, the counts.
pub(crate) struct Hedging {
    pub config: HedgeConfig,
    copies: Vec<Copies>,
    /// The latest successful copies' latencies, a ring of up to [`WINDOW`].
    window: Vec<u64>,
    next: usize,
    since_refresh: u32,
    /// The current delay (`None`: a percentile not known yet).
    delay: Option<SimDuration>,
    pub counts: HedgeCounts,
}

impl Hedging {
    /// A policy for `clients` clients.
    pub fn new(config: HedgeConfig, clients: usize) -> Hedging {
        Hedging {
            config,
            copies: vec![Copies::default(); clients],
            window: Vec::new(),
            next: 0,
            since_refresh: 0,
            delay: match config.policy.delay {
                HedgeDelay::Fixed(d) => Some(SimDuration::from(d)),
                HedgeDelay::Percentile(_) => None,
            },
            counts: HedgeCounts::default(),
        }
    }

    /// Room for a client added during the run.
    pub fn add_client(&mut self) {
        self.copies.push(Copies::default());
    }

    /// The delay before the next copy, if one is known.
    #[inline]
    pub fn delay(&self) -> Option<SimDuration> {
        self.delay
    }

    /// Client `c` begins a request.
    pub fn begin(&mut self, c: u32) {
        self.copies[c as usize] = Copies::default();
    }

    /// True when copy `n` (1 = the first) of client `c`'s current request is still awaited,
    /// given that `n` copies or more were sent.
    #[inline]
    pub fn live(&self, c: u32, n: u32) -> bool {
        let copies = &self.copies[c as usize];
        n <= u32::from(copies.sent) && copies.failed & (1 << (n - 1)) == 0
    }

    /// True when client `c` may send another copy (not all sent, not stopped).
    #[inline]
    pub fn may_send(&self, c: u32) -> bool {
        let copies = &self.copies[c as usize];
        u32::from(copies.sent) < self.config.policy.max_attempts && copies.stopped.is_none()
    }

    /// True when some copy of client `c`'s request is still awaited.
    #[inline]
    pub fn any_live(&self, c: u32) -> bool {
        let copies = &self.copies[c as usize];
        let all = ((1u16 << copies.sent) - 1) as u8;
        copies.failed & all != all
    }

    /// Client `c`'s server pushed back: no copy leaves before `until`.
    pub fn hold(&mut self, c: u32, until: SimTime) {
        self.copies[c as usize].not_before = until.as_nanos();
    }

    /// True when client `c`'s next copy may leave at `now` (no pushback holds it).
    #[inline]
    pub fn released(&self, c: u32, now: SimTime) -> bool {
        now.as_nanos() >= self.copies[c as usize].not_before
    }

    /// Client `c` may send no more copies of its request: a refusal that ends it as `why`
    /// once no copy is awaited.
    pub fn stop(&mut self, c: u32, why: Ending) {
        self.copies[c as usize].stopped = Some(why);
    }

    /// Copy number `n` of client `c` left at `now`.
    pub fn sent(&mut self, c: u32, n: u32, now: SimTime) {
        let copies = &mut self.copies[c as usize];
        copies.sent = n as u8;
        copies.sent_at[n as usize - 1] = now.as_nanos();
        if n > 1 {
            self.counts.hedges += 1;
        }
    }

    /// The kind of attempt copy `n` is, for a budget's books: the first, or a retry.
    pub fn kind(n: u32) -> AttemptKind {
        if n == 1 {
            AttemptKind::First
        } else {
            AttemptKind::Retry(RetryClass::Transient)
        }
    }

    /// Copy `n` of client `c` ended at `now` with `outcome`: what follows.
    pub fn conclude(&mut self, c: u32, n: u32, now: SimTime, outcome: Outcome) -> CopyNext {
        let copies = &mut self.copies[c as usize];
        copies.failed |= 1 << (n - 1);
        if outcome == Outcome::Success {
            let latency = now.as_nanos() - copies.sent_at[n as usize - 1];
            if n > 1 {
                self.counts.won_by_hedge += 1;
            }
            self.observe(latency);
            return CopyNext::End(Ending::Succeeded);
        }
        if !self.config.policy.non_fatal.retries(outcome) {
            return CopyNext::End(Ending::Failed);
        }
        if self.may_send(c) {
            CopyNext::SendNow
        } else if self.any_live(c) {
            CopyNext::Wait
        } else {
            CopyNext::End(
                self.copies[c as usize]
                    .stopped
                    .unwrap_or(Ending::GaveUpAttempts),
            )
        }
    }

    /// A successful copy took `latency` nanoseconds: into the window.
    fn observe(&mut self, latency: u64) {
        let HedgeDelay::Percentile(p) = self.config.policy.delay else {
            return;
        };
        if self.window.len() < WINDOW {
            self.window.push(latency);
        } else {
            self.window[self.next] = latency;
            self.next = (self.next + 1) % WINDOW;
        }
        self.since_refresh += 1;
        let warm = self.window.len() >= WARM_UP;
        if warm && (self.delay.is_none() || self.since_refresh >= REFRESH) {
            self.since_refresh = 0;
            self.delay = Some(SimDuration(percentile(&self.window, p)));
        }
    }
}

/// The `p`th percentile of `values` by nearest rank: the smallest value with at least `p` %
/// of them at or below it.
pub fn percentile(values: &[u64], p: f64) -> u64 {
    let mut sorted = values.to_vec();
    let rank = ((p / 100.0 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    *sorted.select_nth_unstable(rank - 1).1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::RetryOn;
    use std::time::Duration;

    fn config(max_attempts: u32, delay: HedgeDelay) -> HedgeConfig {
        HedgeConfig {
            policy: HedgingPolicy::new(delay)
                .max_attempts(max_attempts)
                .non_fatal(RetryOn::none().with_status(503).unwrap()),
            cancel: Cancel::Waiting,
        }
    }

    const T0: SimTime = SimTime::ZERO;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&v, 99.5), 100);
        assert_eq!(percentile(&[7], 1.0), 7);
    }

    #[test]
    fn a_non_fatal_failure_sends_the_next_copy_and_a_fatal_one_ends() {
        let mut h = Hedging::new(config(3, HedgeDelay::Fixed(Duration::from_nanos(10))), 1);
        h.begin(0);
        h.sent(0, 1, T0);
        assert_eq!(
            h.conclude(0, 1, T0, Outcome::Status(503)),
            CopyNext::SendNow
        );
        assert!(!h.live(0, 1));
        h.sent(0, 2, T0);
        h.sent(0, 3, T0);
        assert!(h.live(0, 2) && h.live(0, 3));
        assert_eq!(h.conclude(0, 2, T0, Outcome::Status(503)), CopyNext::Wait);
        assert_eq!(
            h.conclude(0, 3, T0, Outcome::Status(503)),
            CopyNext::End(Ending::GaveUpAttempts)
        );
        h.begin(0);
        h.sent(0, 1, T0);
        assert_eq!(
            h.conclude(0, 1, T0, Outcome::Status(500)),
            CopyNext::End(Ending::Failed),
            "500 is not in non_fatal"
        );
        assert_eq!(h.counts.hedges, 2);
    }

    #[test]
    fn the_winner_is_counted_and_a_stopped_request_sends_nothing_more() {
        let mut h = Hedging::new(config(2, HedgeDelay::Fixed(Duration::from_nanos(10))), 1);
        h.begin(0);
        h.sent(0, 1, T0);
        h.sent(0, 2, T0 + SimDuration(10));
        assert!(!h.may_send(0));
        let at = T0 + SimDuration(15);
        assert_eq!(
            h.conclude(0, 2, at, Outcome::Success),
            CopyNext::End(Ending::Succeeded)
        );
        assert_eq!(h.counts.won_by_hedge, 1);
        h.begin(0);
        h.sent(0, 1, T0);
        h.stop(0, Ending::GaveUpBudget);
        assert_eq!(
            h.conclude(0, 1, T0, Outcome::Status(503)),
            CopyNext::End(Ending::GaveUpBudget)
        );
    }

    #[test]
    fn a_percentile_delay_is_known_after_the_warm_up() {
        let mut h = Hedging::new(config(2, HedgeDelay::Percentile(90.0)), 1);
        for i in 1..=WARM_UP as u64 {
            assert_eq!(h.delay(), None);
            h.begin(0);
            h.sent(0, 1, T0);
            h.conclude(0, 1, SimTime(i * 1000), Outcome::Success);
        }
        assert_eq!(h.delay(), Some(SimDuration(90_000)));
    }
}
