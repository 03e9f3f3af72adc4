//! Each peer crate's defaults as a [`DelaySource`]: any scenario runs them through
//! [`jitterlab::runner::run_with_sources`], into the same result files as jitterlab's kinds.
//!
//! A client's state is the crate's per-request object, built again as each request begins.
//! Seeded crates are seeded from the client's seed (a new seed per request, drawn from it);
//! backoff 0.4 runs on a [`VirtualClock`](crate::idiom::VirtualClock) so that its 15-minute
//! limit counts simulated time; backoff and retry-policies draw from the thread-local
//! generator, so their runs are not reproducible to the byte.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use jitterlab::rng::SimRng;
use jitterlab::sim::{ClientDelays, DelaySource, RetryAt};
use jitterlab::time::{SimDuration, SimTime};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::idiom::{Config, Delays, backoff_virtual, tokio_retry_example_seeded};

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
    /// builder's defaults: 1 s x2, full jitter; it has no default limit: 3 is the example of
    /// reqwest-retry 0.9.1, its main user, `src/lib.rs`: "Retry up to 3 times").
    RetryPolicies,
    /// tokio-retry 0.3 has no defaults: its docs example, `from_millis(10).map(jitter)
    /// .take(3)`, with its formula on our generator ([`tokio_retry_example_seeded`]).
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

    /// What runs, as the herd table labels it.
    pub fn configuration(self) -> &'static str {
        match self {
            Defaults::Backon => "`ExponentialBuilder::default()`",
            Defaults::Backoff => "`ExponentialBackoff::default()`",
            Defaults::ExponentialBackoff => "`Backoff::default()`",
            Defaults::RetryPolicies => {
                "`builder().build_with_max_retries(3)` (3: reqwest-retry 0.9.1's example)"
            }
            Defaults::TokioRetry => {
                "docs example `from_millis(10).map(jitter).take(3)` (its formula, our generator)"
            }
        }
    }

    /// The longest a request can sleep in all before the crate gives up, in seconds (`None`:
    /// bounded by time, not by retries: backoff's 15 minutes of elapsed time), from each
    /// configuration's largest delays.
    pub fn max_total_sleep(self) -> Option<f64> {
        match self {
            // 1 + 2 + 4 s, no jitter.
            Defaults::Backon => Some(7.0),
            Defaults::Backoff => None,
            // Two sleeps, 100 ms and 200 ms, at most 1.3 times each.
            Defaults::ExponentialBackoff => Some(0.39),
            // Full jitter below 1, 2 and 4 s.
            Defaults::RetryPolicies => Some(7.0),
            // Below 10 ms, 100 ms and 1 s.
            Defaults::TokioRetry => Some(1.11),
        }
    }

    /// The configuration of [`Config`] these defaults are (the herd may bound its retries or
    /// seed it differently: [`ClientDelays::reset`] below).
    pub fn config(self) -> Config {
        match self {
            Defaults::Backon => Config::BackonDefault,
            Defaults::Backoff => Config::BackoffDefault,
            Defaults::ExponentialBackoff => Config::ExpoDefault,
            Defaults::RetryPolicies => Config::RetryPoliciesFull,
            Defaults::TokioRetry => Config::TokioRetryExample,
        }
    }

    /// The crate and its version.
    pub fn krate(self) -> &'static str {
        self.config().krate()
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

    fn describe(&self) -> String {
        format!("{} {}", self.krate(), self.configuration())
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
            Defaults::Backon | Defaults::ExponentialBackoff => self.peer.config().start(seed, None),
            Defaults::Backoff => {
                let (delays, clock) = backoff_virtual(now.as_nanos());
                self.clock = Some(clock);
                delays
            }
            Defaults::RetryPolicies => self.peer.config().start(seed, Some(3)),
            Defaults::TokioRetry => tokio_retry_example_seeded(seed),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every retry a request of `peer` makes before it gives up, from a fresh client.
    fn total_sleep(peer: Defaults, seed: u64) -> (u32, f64) {
        let mut client = peer.client(0, seed);
        client.reset(SimTime::ZERO);
        let mut rng = SimRng::seed_from_u64(seed);
        let (mut retries, mut total) = (0, 0.0);
        let at = |retry| RetryAt::new(retry, SimTime::ZERO, SimTime::ZERO);
        while let Some(d) = client.next_delay(at(retries + 1), &mut rng) {
            retries += 1;
            total += d.as_secs_f64();
        }
        (retries, total)
    }

    #[test]
    fn the_versions_named_are_the_ones_cargo_lock_pins() {
        let lock = include_str!("../../../Cargo.lock");
        for config in crate::idiom::Config::ALL {
            let (name, version) = config.krate().split_once(' ').unwrap();
            let entry = format!("name = \"{name}\"\nversion = \"{version}\"\n");
            assert!(lock.contains(&entry), "Cargo.lock does not pin {config:?}");
        }
    }

    #[test]
    fn each_peer_stops_within_its_max_total_sleep() {
        for peer in Defaults::ALL {
            let Some(max) = peer.max_total_sleep() else {
                continue;
            };
            let totals: Vec<f64> = (0..2_000).map(|s| total_sleep(peer, s).1).collect();
            let top = totals.iter().copied().fold(0.0, f64::max);
            // The bound is never passed, and approached (the sum of uniforms rarely nears it).
            assert!(
                top <= max + 1e-6 && top > 0.8 * max,
                "{peer:?}: {top} of {max}"
            );
        }
    }
}
