//! The guards around the clients' requests: breakers, budgets, throttles, the AWS adaptive
//! rate limiter and the concurrency limiter, one for all clients or one per owner.

use std::collections::VecDeque;

use crate::policy::throttle::{Throttle, ThrottleConfig};
use crate::policy::{AdaptiveRateConfig, AdaptiveRateLimiter, ConcurrencyLimiter, Outcome};
use crate::policy::{Breaker, BreakerConfig, Budget, BudgetConfig};
use crate::rng::{SimRng, StreamFamily};
use crate::time::SimTime;

use super::{ClientConfig, Scope};

/// Breakers, budgets, throttles and the concurrency limiter. Per-client guards are indexed
/// by owner.
pub(super) struct Guards {
    pub(super) budgets: Vec<Budget>,
    pub(super) budget: Option<(BudgetConfig, Scope)>,
    pub(super) breakers: Vec<Breaker>,
    pub(super) breaker: Option<(BreakerConfig, Scope)>,
    /// Each throttle with its own generator: stream `(index, 0)` of the `Throttle` family.
    pub(super) throttles: Vec<(Throttle, SimRng)>,
    pub(super) throttle: Option<(ThrottleConfig, Scope)>,
    pub(super) throttle_streams: StreamFamily,
    pub(super) limiter: Option<ConcurrencyLimiter>,
    pub(super) waiters: VecDeque<u32>,
    /// Each adaptive rate limiter, made when first asked (it measures from then on).
    pub(super) rates: Vec<Option<AdaptiveRateLimiter>>,
    pub(super) rate: Option<(AdaptiveRateConfig, Scope)>,
}

impl Guards {
    pub(super) fn new(
        config: &ClientConfig,
        owners: usize,
        throttle_streams: StreamFamily,
    ) -> Self {
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

    pub(super) fn push_throttle(&mut self) {
        if let Some((t, _)) = self.throttle {
            let rng = self.throttle_streams.get(self.throttles.len() as u64, 0);
            let throttle = Throttle::new(t).expect("client.throttle is checked by the scenario");
            self.throttles.push((throttle, rng));
        }
    }

    /// Grows per-client guards for an open-loop client created during the run (its own owner).
    pub(super) fn add_client(&mut self) {
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
    pub(super) fn index(scope: Option<Scope>, o: u32) -> Option<usize> {
        match scope? {
            Scope::Shared => Some(0),
            Scope::Client => Some(o as usize),
        }
    }

    #[inline]
    pub(super) fn budget_index(&self, o: u32) -> Option<usize> {
        Guards::index(self.budget.map(|b| b.1), o)
    }

    #[inline]
    pub(super) fn breaker_index(&self, o: u32) -> Option<usize> {
        Guards::index(self.breaker.map(|b| b.1), o)
    }

    #[inline]
    pub(super) fn throttle_index(&self, o: u32) -> Option<usize> {
        Guards::index(self.throttle.map(|t| t.1), o)
    }

    /// Owner `o`'s adaptive rate limiter at `now`, made now if it is the first ask.
    #[inline]
    pub(super) fn rate(&mut self, o: u32, now: SimTime) -> Option<&mut AdaptiveRateLimiter> {
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
pub(in crate::sim) fn accepted(outcome: Outcome) -> bool {
    match outcome {
        Outcome::Success => true,
        Outcome::Status(code) => code != 429 && code != 503,
        Outcome::Timeout
        | Outcome::Connection
        | Outcome::Fatal
        | Outcome::Invalid
        | Outcome::Transient
        | Outcome::Permanent => false,
    }
}

fn new_budget(config: BudgetConfig) -> Budget {
    Budget::new(config).expect("client.budget is checked by the scenario")
}

fn new_breaker(config: BreakerConfig) -> Breaker {
    Breaker::new(config).expect("client.breaker is checked by the scenario")
}
