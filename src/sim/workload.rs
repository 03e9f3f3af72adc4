//! Workloads: who sends requests, and when.
//!
//! - `burst`: `clients` clients, one request each, first sends uniform in `[start, start + spread]`;
//! - `poisson`: an open loop, `rate` requests per second from `start` for `duration`, each
//!   request its own client; the rate is a number, a number with a spike, or a piecewise
//!   profile ([`PoissonRate`], generated exactly by [`super::profile`]);
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
use crate::param::ParamError;
use crate::rng::{SimRng, StreamFamily, StreamKind};
use crate::time::{SimDuration, SimTime, f64_to_nanos};

/// The rate of a Poisson workload as written; times count from the workload's `start`.
#[derive(Debug, Clone, PartialEq)]
pub enum PoissonRate {
    /// Requests per second, constant.
    Constant(f64),
    /// `base` requests per second, stepping to `rate` at `at` for `length`.
    Spike {
        /// The rate before and after the spike.
        base: f64,
        /// When the spike begins.
        at: SimDuration,
        /// How long it lasts.
        length: SimDuration,
        /// The rate during the spike.
        rate: f64,
    },
    /// A piecewise-linear profile through these points (see [`super::profile`]).
    Profile(Vec<(SimDuration, f64)>),
}

impl PoissonRate {
    /// The points of the profile, times counted from the workload's start.
    pub fn points(&self) -> Vec<(SimDuration, f64)> {
        match self {
            PoissonRate::Constant(r) => vec![(SimDuration::ZERO, *r)],
            &PoissonRate::Spike {
                base,
                at,
                length,
                rate,
            } => vec![
                (SimDuration::ZERO, base),
                (at, base),
                (at, rate),
                (at + length, rate),
                (at + length, base),
            ],
            PoissonRate::Profile(points) => points.clone(),
        }
    }

    /// The rate profile on the run's clock: the points moved by `start`. Errors name the
    /// point (`rate[2]`).
    pub fn profile(&self, start: SimDuration) -> Result<RateProfile, ParamError> {
        RateProfile::new(
            self.points()
                .into_iter()
                .map(|(t, r)| (SimTime(start.as_nanos()) + t, r))
                .collect(),
        )
    }
}

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
        /// Requests per second (validated: its profile exists).
        rate: PoissonRate,
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
        /// Requests per second of each client: a constant or a profile, the same for every
        /// client, its times counted from `start`.
        rate: PoissonRate,
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
        match self {
            Workload::Burst { clients, .. } | Workload::Closed { clients, .. } => *clients as usize,
            Workload::Poisson { .. } | Workload::PoissonClients { .. } => {
                self.poisson_profile()
                    .map_or(0.0, |(p, start, end)| p.expected_arrivals(start, end))
                    .min(1e7) as usize
            }
        }
    }

    /// An open workload's offered rate profile on the run's clock (for `poisson_clients`, all
    /// clients together), and the span `[start, end)` of its arrivals; `None` for other kinds.
    pub fn poisson_profile(&self) -> Option<(RateProfile, SimTime, SimTime)> {
        let (rate, start, duration, clients) = match self {
            Workload::Poisson {
                rate,
                start,
                duration,
            } => (rate, start, duration, 1.0),
            Workload::PoissonClients {
                clients,
                rate,
                start,
                duration,
            } => (rate, start, duration, f64::from(*clients)),
            _ => return None,
        };
        // Checked when the scenario was: the profile exists.
        let from = SimTime(start.as_nanos());
        let profile = RateProfile::new(
            rate.points()
                .into_iter()
                .map(|(t, r)| (from + t, r * clients))
                .collect(),
        )
        .ok()?;
        Some((profile, from, from + *duration))
    }

    /// The spans where the offered rate is above its base (a Poisson workload's spikes and
    /// ramps), cut to its arrivals; empty for other kinds.
    pub fn trigger_windows(&self) -> Vec<(SimTime, SimTime)> {
        let Some((profile, _, end)) = self.poisson_profile() else {
            return Vec::new();
        };
        profile
            .trigger_windows()
            .into_iter()
            .filter(|w| w.0 < end)
            .map(|(a, b)| (a, b.min(end)))
            .collect()
    }
}

/// The rate profile of each source of a `poisson_clients` workload, its times counted from
/// the workload's start.
pub(crate) fn client_profile(rate: &PoissonRate) -> RateProfile {
    rate.profile(SimDuration::ZERO)
        .expect("workload.rate is checked by the scenario")
}

/// Draws an exponential gap with the given mean.
#[inline]
pub(crate) fn exponential(rng: &mut SimRng, mean_ns: f64) -> SimDuration {
    SimDuration(f64_to_nanos(
        mean_ns * rand_distr::Distribution::<f64>::sample(&rand_distr::Exp1, rng),
    ))
}

/// An open-loop source: the arrivals of a rate profile (exact, see [`super::profile`])
/// until `end`, drawn from `rng`.
pub(crate) struct PoissonSource {
    rng: SimRng,
    arrivals: super::profile::Arrivals,
}

impl PoissonSource {
    /// The arrivals of `profile` before `end`, drawn from `rng`.
    pub fn new(profile: &RateProfile, end: SimTime, rng: SimRng) -> Self {
        PoissonSource {
            rng,
            arrivals: profile.arrivals(end),
        }
    }

    /// The next arrival, or `None` once past the end. For a constant rate from `start`, the
    /// first is `start + gap` and each next `previous + gap`, one exponential gap per call,
    /// exactly as a plain exponential-gap loop would draw them.
    #[inline]
    pub fn next(&mut self) -> Option<SimTime> {
        self.arrivals.next_arrival(&mut self.rng)
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
