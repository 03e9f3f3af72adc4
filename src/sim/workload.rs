//! Workloads: who sends requests, and when.
//!
//! - `burst`: `clients` clients, one request each, first sends uniform in `[start, start + spread]`;
//! - `poisson`: an open loop, `rate` requests per second from `start` for `duration`, each
//!   request its own client;
//! - `closed`: `clients` clients that loop forever: think (exponential, mean `think`), request,
//!   outcome, think again;
//! - `poisson_clients`: `clients` persistent open-loop clients, each an independent Poisson
//!   source of `rate` requests per second from `start` for `duration`. A client's requests may
//!   overlap (open loop), and its per-client guards (budget, breaker, throttle with `scope =
//!   "client"`) carry across all of them.
//!
//! Arrival times come from the `Arrivals` stream (source `s` of `poisson_clients`: its entity
//! `(s, 1)`) and think times from each client's `Think` stream, so every strategy at a point
//! sees the same arrivals.

use rand::RngExt;

use super::profile::RateProfile;
use crate::rng::{SimRng, StreamFamily, StreamKind};
use crate::time::{SimDuration, SimTime, f64_to_nanos};

/// A workload, validated.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// A burst of one-shot clients.
    Burst {
        /// How many clients (one request each).
        clients: u32,
        /// When the first may send.
        start: SimDuration,
        /// First sends are uniform over `[start, start + spread]`.
        spread: SimDuration,
    },
    /// Open-loop Poisson arrivals.
    Poisson {
        /// Requests per second.
        rate: f64,
        /// When arrivals begin.
        start: SimDuration,
        /// How long arrivals go on.
        duration: SimDuration,
    },
    /// Closed-loop clients.
    Closed {
        /// How many clients.
        clients: u32,
        /// Mean think time between a request's outcome and the next request (exponential).
        think: SimDuration,
        /// When the clients begin thinking.
        start: SimDuration,
    },
    /// Persistent open-loop clients, each its own Poisson source.
    PoissonClients {
        /// How many clients (sources).
        clients: u32,
        /// Requests per second of each client.
        rate: f64,
        /// When arrivals begin.
        start: SimDuration,
        /// How long arrivals go on.
        duration: SimDuration,
    },
}

impl Workload {
    /// The scenario name of the kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Burst { .. } => "burst",
            Workload::Poisson { .. } => "poisson",
            Workload::Closed { .. } => "closed",
            Workload::PoissonClients { .. } => "poisson_clients",
        }
    }

    /// How many clients exist from the start (open-loop requests are created as they arrive).
    pub fn initial_clients(&self) -> u32 {
        match *self {
            Workload::Burst { clients, .. } | Workload::Closed { clients, .. } => clients,
            Workload::Poisson { .. } | Workload::PoissonClients { .. } => 0,
        }
    }

    /// How many owners of per-client guards exist from the start: the initial clients, or the
    /// persistent sources of `poisson_clients`.
    pub fn owners(&self) -> u32 {
        match *self {
            Workload::PoissonClients { clients, .. } => clients,
            _ => self.initial_clients(),
        }
    }

    /// Expected number of Poisson arrivals (for sizing buffers).
    pub fn expected_requests(&self) -> usize {
        match *self {
            Workload::Burst { clients, .. } | Workload::Closed { clients, .. } => clients as usize,
            Workload::Poisson { rate, duration, .. } => {
                (rate * duration.as_secs_f64()).min(1e7) as usize
            }
            Workload::PoissonClients {
                clients,
                rate,
                duration,
                ..
            } => (f64::from(clients) * rate * duration.as_secs_f64()).min(1e7) as usize,
        }
    }
}

/// The rate profile of source `client` of a `poisson_clients` workload of `rate` requests per
/// second per client, from its start: the one place that reads a client's rate (the same
/// constant for every client today; a per-client profile can come here).
pub(crate) fn client_profile(rate: f64, _client: u32) -> RateProfile {
    RateProfile::constant(rate).expect("workload.rate is checked by the scenario")
}

/// Draws an exponential gap with the given mean.
#[inline]
pub(crate) fn exponential(rng: &mut SimRng, mean_ns: f64) -> SimDuration {
    SimDuration(f64_to_nanos(
        mean_ns * rand_distr::Distribution::<f64>::sample(&rand_distr::Exp1, rng),
    ))
}

/// An open-loop source: Poisson arrivals (exponential gaps) until `end`.
pub(crate) struct PoissonSource {
    rng: SimRng,
    mean_gap_ns: f64,
    end: SimTime,
}

impl PoissonSource {
    /// `rate` arrivals per second from `start` for `duration`, drawn from `rng`.
    pub fn new(rate: f64, start: SimDuration, duration: SimDuration, rng: SimRng) -> Self {
        PoissonSource {
            rng,
            mean_gap_ns: 1e9 / rate,
            end: SimTime(start.as_nanos()) + duration,
        }
    }

    /// The arrival that follows one at `t` (the first follows the start), or `None` when it
    /// falls past the end. Draws one gap either way.
    #[inline]
    pub fn next_after(&mut self, t: SimTime) -> Option<SimTime> {
        let next = t + exponential(&mut self.rng, self.mean_gap_ns);
        (next < self.end).then_some(next)
    }
}

/// First sends of a burst, in client order.
pub(crate) fn burst_times(
    clients: u32,
    start: SimDuration,
    spread: SimDuration,
    seed: u64,
    rep: u32,
) -> Vec<SimTime> {
    let mut rng = StreamFamily::new(seed, rep, StreamKind::Arrivals).get(0, 0);
    (0..clients)
        .map(|_| {
            let offset = if spread == SimDuration::ZERO {
                0
            } else {
                rng.random_range(0..=spread.as_nanos())
            };
            SimTime(start.as_nanos()) + SimDuration(offset)
        })
        .collect()
}
