//! What a retrier can tell a metrics exporter (Prometheus, OpenTelemetry): a [`Metrics`]
//! snapshot of its counts, its budget's tokens and its breaker's state, read at any time, and
//! an [`Observer`] that sees every attempt of every call (an exporter's counters and
//! histograms), set once on the retrier.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::AttemptEvent;
use crate::policy::{BreakerState, Decision};

/// A retrier's state at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metrics {
    /// Calls begun (their first attempt sent).
    pub calls: u64,
    /// Attempts sent, retries and hedged copies included.
    pub attempts: u64,
    /// Retries decided (a sleep before another attempt) by calls without hedging.
    pub retries: u64,
    /// Calls that ended in a success.
    pub successes: u64,
    /// Calls without hedging that gave up (stopped by the policy, cancelled, refused by the
    /// breaker).
    pub gave_up: u64,
    /// What the retry budget has left (`None`: no budget): tokens for a token bucket,
    /// retries left for a ratio budget, as [`crate::policy::Budget::available`] says.
    pub budget_available: Option<f64>,
    /// The circuit breaker's state (`None`: no breaker).
    pub breaker: Option<BreakerState>,
}

/// A hook that sees every attempt's event of every call of a retrier, whatever the call's
/// error type (the event's `error` is always `None` here: it has no type to show): set it
/// with [`Retrier::with_observer`](super::Retrier::with_observer). It runs inside the call,
/// so it should be quick (increment a counter, observe a histogram).
pub trait Observer: Send + Sync {
    /// Called with each event, after the call's own `on_attempt`.
    fn on_attempt(&self, event: &AttemptEvent<'_, ()>);
}

impl<F: Fn(&AttemptEvent<'_, ()>) + Send + Sync> Observer for F {
    fn on_attempt(&self, event: &AttemptEvent<'_, ()>) {
        self(event)
    }
}

/// The counters a retrier keeps, and its observer.
#[derive(Default)]
pub(crate) struct Counts {
    calls: AtomicU64,
    attempts: AtomicU64,
    retries: AtomicU64,
    successes: AtomicU64,
    gave_up: AtomicU64,
    pub(crate) observer: Option<Arc<dyn Observer>>,
}

impl fmt::Debug for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Counts")
            .field("calls", &self.calls)
            .field("attempts", &self.attempts)
            .field("observer", &self.observer.is_some())
            .finish_non_exhaustive()
    }
}

impl Counts {
    /// Counts `event` (a sent attempt or copy, a retry, the call's end) and shows it to the
    /// observer.
    pub(crate) fn count<E>(&self, event: &AttemptEvent<'_, E>) {
        let add = |c: &AtomicU64| c.fetch_add(1, Ordering::Relaxed);
        let sent = match event.copy {
            Some(super::CopyEvent::Sent) => true,
            Some(_) => false,
            None => event.outcome.is_some() || event.dropped,
        };
        if sent {
            if event.attempt == 1 {
                add(&self.calls);
            }
            add(&self.attempts);
        }
        let success = event.outcome == Some(crate::policy::Outcome::Success);
        match (event.copy, event.decision) {
            (None, Decision::Retry { .. }) => add(&self.retries),
            (_, Decision::Done) if success => add(&self.successes),
            (None, Decision::Done | Decision::Stop(_)) => add(&self.gave_up),
            _ => 0,
        };
        if let Some(observer) = &self.observer {
            let erased = AttemptEvent {
                attempt: event.attempt,
                outcome: event.outcome,
                error: None,
                retry_after: event.retry_after,
                start: event.start,
                end: event.end,
                decision: event.decision,
                copy: event.copy,
                dropped: event.dropped,
            };
            observer.on_attempt(&erased);
        }
    }

    /// The counts now, with the budget's and the breaker's state.
    pub(crate) fn snapshot(
        &self,
        budget_available: Option<f64>,
        breaker: Option<BreakerState>,
    ) -> Metrics {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Metrics {
            calls: get(&self.calls),
            attempts: get(&self.attempts),
            retries: get(&self.retries),
            successes: get(&self.successes),
            gave_up: get(&self.gave_up),
            budget_available,
            breaker,
        }
    }
}
