//! Fault windows: outages, error shares and slowdowns in `[start, end)`.
//!
//! Faults act on the server at the instant an attempt arrives (outage, errors) or starts
//! service (slow). Whether an `errors` fault hits an attempt is drawn from that attempt's own
//! `Faults` stream, so every strategy sees the same faults for the same request's attempt.

use crate::time::SimTime;

/// How an outage answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutageAnswer {
    /// An error status (e.g. 503), at once.
    Status(u16),
    /// No answer at all: the attempt times out at the client.
    Drop,
    /// A connection error (reset), at once.
    Reset,
}

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FaultKind {
    /// Every arriving attempt is answered this way.
    Outage(OutageAnswer),
    /// A `share` of arriving attempts get `status`.
    Errors {
        /// Probability that an attempt is hit (0 to 1).
        share: f64,
        /// The status they get.
        status: u16,
    },
    /// Service times are multiplied by `factor`.
    Slow {
        /// The slowdown (> 0; 3 means three times slower).
        factor: f64,
    },
}

/// One fault window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fault {
    /// What happens.
    pub kind: FaultKind,
    /// First instant affected.
    pub start: SimTime,
    /// First instant no longer affected.
    pub end: SimTime,
}

impl Fault {
    /// The scenario name of the kind.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            FaultKind::Outage(_) => "outage",
            FaultKind::Errors { .. } => "errors",
            FaultKind::Slow { .. } => "slow",
        }
    }

    /// True when `t` is inside the window.
    #[inline]
    pub fn active(&self, t: SimTime) -> bool {
        self.start <= t && t < self.end
    }
}
