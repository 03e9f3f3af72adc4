//! Each peer crate's defaults as a [`DelaySource`]: any scenario runs them through
//! [`jitterlab::runner::run_with_sources`], into the same result files as jitterlab's kinds.
//!
//! A client's state is the crate's per-request object, built again as each request begins.
//! Seeded crates are seeded from the client's seed (a new seed per request, drawn from it);
//! backoff 0.4 runs on a [`VirtualClock`](crate::peers::VirtualClock) so that its 15-minute
//! limit counts simulated time; backoff and retry-policies draw from the thread-local
//! generator, so their runs are not reproducible to the byte.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use jitterlab::rng::SimRng;
use jitterlab::sim::{ClientDelays, DelaySource, RetryAt};
use jitterlab::time::{SimDuration, SimTime};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::peers::{Config, Delays, backoff_virtual};

/// A peer crate's defaults, as a user who adds it writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defaults {
    /// backon 1.6 `ExponentialBuilder::default()`: 1 s, 2 s, 4 s, then gives up; no jitter.
    Backon,
    /// backoff 0.4 `ExponentialBackoff::default()`: 0.5 s x1.5, ±50 %, 15 minutes.
    Backoff,
    /// exponential-backoff 2.1 `Backoff::default()`: 3 attempts (two sleeps), 100 ms x2,
    /// jitter 0.3.
    ExponentialBackoff,
    /// retry-policies 0.5 `ExponentialBackoff::builder().build_with_max_retries(3)` (the
    /// builder's defaults: 1 s x2, full jitter; it has no default limit, and 3 is the value
    /// code calling it commonly picks).
    RetryPolicies,
    /// tokio-retry 0.3, its docs' `from_millis(10).map(jitter).take(3)`.
    TokioRetry,
}

impl Defaults {
    /// Every peer.
    pub const ALL: [Defaults; 5] = [
        Defaults::Backon,
        Defaults::Backoff,
        Defaults::ExponentialBackoff,
        Defaults::RetryPolicies,
        Defaults::TokioRetry,
    ];

    /// The strategy name in the result files.
    pub fn name(self) -> &'static str {
        match self {
            Defaults::Backon => "backon",
            Defaults::Backoff => "backoff",
            Defaults::ExponentialBackoff => "exponential-backoff",
            Defaults::RetryPolicies => "retry-policies",
            Defaults::TokioRetry => "tokio-retry",
        }
    }

    /// True when the same scenario and seed give the same bytes.
    pub fn reproducible(self) -> bool {
        !matches!(self, Defaults::Backoff | Defaults::RetryPolicies)
    }
}

impl DelaySource for Defaults {
    fn client(&self, _client: u32, seed: u64) -> Box<dyn ClientDelays> {
        Box::new(Client {
            peer: *self,
            seeds: Pcg64Mcg::seed_from_u64(seed),
            delays: None,
            clock: None,
        })
    }
}

/// One client: its current request's delays.
struct Client {
    peer: Defaults,
    /// A seed per request.
    seeds: Pcg64Mcg,
    delays: Option<Box<dyn Delays>>,
    /// backoff 0.4's virtual clock, in nanoseconds.
    clock: Option<Arc<AtomicU64>>,
}

impl ClientDelays for Client {
    fn reset(&mut self, now: SimTime) {
        let seed = self.seeds.next_u64();
        self.delays = Some(match self.peer {
            Defaults::Backon => Config::BackonDefault.start(seed, None),
            Defaults::Backoff => {
                let (delays, clock) = backoff_virtual(now.as_nanos());
                self.clock = Some(clock);
                delays
            }
            Defaults::ExponentialBackoff => Config::ExpoDefault.start(seed, None),
            Defaults::RetryPolicies => Config::RetryPoliciesFull.start(seed, Some(3)),
            Defaults::TokioRetry => Config::TokioRetryExample.start(seed, None),
        });
    }

    fn next_delay(&mut self, at: RetryAt, _rng: &mut SimRng) -> Option<SimDuration> {
        if let Some(clock) = &self.clock {
            clock.store(at.now.as_nanos(), Ordering::Relaxed);
        }
        let delays = self.delays.as_mut()?;
        delays.next_delay().map(SimDuration::from_std)
    }
}

/// Every peer's defaults, named, for [`jitterlab::runner::run_with_sources`].
pub fn sources() -> Vec<(&'static str, Arc<dyn DelaySource>)> {
    Defaults::ALL
        .into_iter()
        .map(|d| (d.name(), Arc::new(d) as Arc<dyn DelaySource>))
        .collect()
}
