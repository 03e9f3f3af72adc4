//! What one run simulates: the validated [`Model`] of a point, the [`Strategy`] under
//! comparison, and the [`RunSpec`] that names a (point, strategy, replication).

use super::client::{ClientConfig, Scope};
use super::dist::Dist;
use super::faults::Fault;
use super::hedge::HedgeConfig;
use super::passage::PassageConfig;
use super::recovery::RecoveryConfig;
use super::server::ServerConfig;
use super::workload::Workload;
use std::sync::Arc;

use super::source::DelaySource;
use crate::backoff::{Backoff, BackoffParams};
use crate::policy::AdaptiveRateConfig;
use crate::policy::throttle::ThrottleConfig;
use crate::policy::{BreakerConfig, BudgetConfig, RetryAfterHeader, RetryAfterMode, RetryOn};
use crate::time::{SimDuration, SimTime};

/// Everything about a point except the backoff strategy: validated, ready to run.
#[derive(Debug, Clone)]
pub struct Model {
    /// The clock stops here; unfinished requests are counted.
    pub horizon: SimDuration,
    /// Who sends requests, and when.
    pub workload: Workload,
    /// The server.
    pub server: ServerConfig,
    /// One-way network latency, drawn for each leg.
    pub latency: Dist,
    /// Timeouts, deadline, attempts, what to retry, Retry-After, budget, breaker, limiter.
    pub client: ClientConfig,
    /// Fault windows.
    pub faults: Vec<Fault>,
    /// Time-series resolution.
    pub bucket: SimDuration,
    /// The trigger `[start, end)` whose recovery is measured (the fault windows, or the
    /// workload's load spikes); `None`: nothing is measured.
    pub trigger: Option<(SimTime, SimTime)>,
    /// How recovery from the trigger is judged.
    pub recovery: RecoveryConfig,
    /// The levels of attempts at the server whose first passages are measured.
    pub passage: PassageConfig,
    /// A chain of services behind the server (which is then layer 1); `None`: one server.
    pub chain: Option<Chain>,
}

/// A chain of services: layer 1 is the model's `server` (under its `faults`); each hop adds
/// the next layer, called by the workers of the one before.
#[derive(Debug, Clone)]
pub struct Chain {
    /// Each layer's name, layer 1 first (one more than the hops).
    pub names: Vec<String>,
    /// `hops[j]`: how layer `j + 1` calls layer `j + 2`, and layer `j + 2` itself.
    pub hops: Vec<Hop>,
}

/// The most layers a chain may have (a layer's number fits in the 8 bits of an event that
/// name it).
pub const MAX_LAYERS: usize = 16;

/// The most workers a calling layer may have: its workers are the caller slots of the layer
/// below, named in 24 bits of an event.
pub const MAX_CALLING_WORKERS: u32 = 1 << 24;

/// One hop of a chain: the calling layer's outbound policy and the layer it calls.
#[derive(Debug, Clone)]
pub struct Hop {
    /// The calling layer's timeouts, deadline, attempts, retry_on, budget, breaker...
    pub client: ClientConfig,
    /// The calling layer's backoff.
    pub backoff: Backoff,
    /// The backoff keys the layer's own table set (`base`, `cap`...; the others followed
    /// `[backoff]`): the resolved scenario writes back only these.
    pub backoff_keys: Vec<&'static str>,
    /// What the calling layer answers upstream when its outbound request did not succeed.
    pub on_give_up: GiveUp,
    /// An outbound request's deadline is also what remains of the caller's attempt (the
    /// layer never works for a caller that has stopped waiting).
    pub propagate_deadline: bool,
    /// The called layer's server (a queue).
    pub server: ServerConfig,
    /// The called layer's fault windows.
    pub faults: Vec<Fault>,
}

/// What a layer whose outbound request failed answers its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUp {
    /// The last status it received (a timeout as 504, a connection error as 502).
    Pass,
    /// That status marked "do not retry": callers above never retry it.
    DoNotRetry,
}

/// One backoff strategy under comparison. Made by [`Strategy::new`] or
/// [`Strategy::with_source`] (or read from a scenario); its fields stay public to read and
/// change, and `#[non_exhaustive]` lets it gain more without breaking code outside the crate.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Strategy {
    /// Its name in outputs (`full`, or an override table's `name`).
    pub name: String,
    /// The validated backoff policy.
    pub backoff: Backoff,
    /// Client keys this strategy sets for itself, over the point's `[client]`.
    pub client: ClientOverrides,
    /// In a chain of services: `layers[j]` overrides how layer `j + 1` calls layer `j + 2`
    /// (fewer entries than hops leave the rest as the scenario has them).
    pub layers: Vec<LayerOverrides>,
    /// A user-supplied backoff that the edge clients draw their sleeps from instead of
    /// `backoff` (which then only sizes the work estimate); `None`: the built-in kind. Layers
    /// of a chain keep their own backoff.
    pub source: Option<Arc<dyn DelaySource>>,
}

/// What a strategy changes in one calling layer of a chain: its client keys, what it answers
/// upstream when it gives up, and whether it propagates its caller's deadline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayerOverrides {
    /// Client keys, as a strategy overrides the edge's.
    pub client: ClientOverrides,
    /// `on_give_up` (`None`: the layer's own).
    pub on_give_up: Option<GiveUp>,
    /// `propagate_deadline` (`None`: the layer's own).
    pub propagate_deadline: Option<bool>,
}

impl LayerOverrides {
    /// The hop as this strategy runs it: client, give-up answer, propagation.
    pub fn apply(&self, hop: &Hop) -> (ClientConfig, GiveUp, bool) {
        (
            self.client.apply(&hop.client),
            self.on_give_up.unwrap_or(hop.on_give_up),
            self.propagate_deadline.unwrap_or(hop.propagate_deadline),
        )
    }
}

/// Client keys a strategy sets for itself (`max_attempts`, `budget`, `throttle`, `breaker`,
/// `timeout`, `deadline` in its `[[backoff.strategies]]` table), so that policies differing in
/// more than their backoff can be compared at one point (a phase map's policies). `None` keeps
/// the point's value; `Some(None)` turns the point's setting off.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientOverrides {
    /// Attempts including the first (`Some(None)`: unlimited).
    pub max_attempts: Option<Option<u32>>,
    /// A retry budget and its scope (`Some(None)`: none).
    pub budget: Option<Option<(BudgetConfig, Scope)>>,
    /// Adaptive throttling and its scope (`Some(None)`: none).
    pub throttle: Option<Option<(ThrottleConfig, Scope)>>,
    /// The AWS adaptive rate limiter and its scope (`Some(None)`: none).
    pub adaptive_rate: Option<Option<(AdaptiveRateConfig, Scope)>>,
    /// A circuit breaker and its scope (`Some(None)`: none).
    pub breaker: Option<Option<(BreakerConfig, Scope)>>,
    /// Per-attempt timeout (`Some(None)`: wait forever).
    pub timeout: Option<Option<SimDuration>>,
    /// Whole-request deadline (`Some(None)`: none).
    pub deadline: Option<Option<SimDuration>>,
    /// Which outcomes are retried.
    pub retry_on: Option<RetryOn>,
    /// Which outcomes are throttling answers.
    pub throttling_on: Option<RetryOn>,
    /// What is done with a Retry-After hint.
    pub retry_after: Option<RetryAfterMode>,
    /// The largest hint honoured (`Some(None)`: any).
    pub retry_after_max: Option<Option<SimDuration>>,
    /// The most a hint may add to the backoff (`Some(None)`: no limit).
    pub retry_after_max_extra: Option<Option<SimDuration>>,
    /// The header the hint is read from.
    pub retry_after_header: Option<RetryAfterHeader>,
    /// The backoff after a throttling answer (`Some(None)`: the strategy's own).
    pub throttling_backoff: Option<Option<BackoffParams>>,
    /// Hedged requests (`Some(None)`: none).
    pub hedging: Option<Option<HedgeConfig>>,
}

impl ClientOverrides {
    /// True when the strategy overrides nothing.
    pub fn is_empty(&self) -> bool {
        *self == ClientOverrides::default()
    }

    /// `base` with these overrides applied.
    pub fn apply(&self, base: &ClientConfig) -> ClientConfig {
        let mut c = base.clone();
        if let Some(max) = self.max_attempts {
            c.max_attempts = max;
        }
        if let Some(budget) = self.budget {
            c.budget = budget;
        }
        if let Some(throttle) = self.throttle {
            c.throttle = throttle;
        }
        if let Some(rate) = self.adaptive_rate {
            c.adaptive_rate = rate;
        }
        if let Some(breaker) = self.breaker {
            c.breaker = breaker;
        }
        if let Some(timeout) = self.timeout {
            c.timeout = timeout;
        }
        if let Some(deadline) = self.deadline {
            c.deadline = deadline;
        }
        if let Some(on) = self.retry_on {
            c.retry_on = on;
        }
        if let Some(on) = self.throttling_on {
            c.throttling_on = on;
        }
        let ra = &mut c.retry_after;
        if let Some(mode) = self.retry_after {
            ra.mode = mode;
        }
        if let Some(max) = self.retry_after_max {
            ra.max = max.map(SimDuration::to_std);
        }
        if let Some(extra) = self.retry_after_max_extra {
            ra.max_extra = extra.map(SimDuration::to_std);
        }
        if let Some(header) = self.retry_after_header {
            ra.header = header;
        }
        if let Some(backoff) = self.throttling_backoff {
            c.throttling_backoff = backoff;
        }
        if let Some(hedging) = self.hedging {
            c.hedging = hedging;
        }
        c
    }
}

impl Strategy {
    /// A strategy that differs from the others in its backoff only.
    pub fn new(name: impl Into<String>, backoff: Backoff) -> Strategy {
        Strategy {
            name: name.into(),
            backoff,
            client: ClientOverrides::default(),
            layers: Vec::new(),
            source: None,
        }
    }

    /// A strategy whose clients draw their sleeps from `source` (see [`crate::sim::source`]);
    /// its `backoff` is the scenario default, used only to estimate the work.
    pub fn with_source(name: impl Into<String>, source: Arc<dyn DelaySource>) -> Strategy {
        let backoff = Backoff::from_params(BackoffParams::default())
            .expect("the default parameters are valid");
        Strategy {
            source: Some(source),
            ..Strategy::new(name, backoff)
        }
    }

    /// The client side this strategy runs with: `base` with its overrides applied.
    pub fn client_config(&self, base: &ClientConfig) -> ClientConfig {
        self.client.apply(base)
    }

    /// The overrides of hop `j` of a chain, if this strategy has any.
    pub fn layer(&self, j: usize) -> LayerOverrides {
        self.layers.get(j).cloned().unwrap_or_default()
    }
}

/// What [`run`](crate::sim::run) simulates.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec<'a> {
    /// The point's model.
    pub model: &'a Model,
    /// The strategy.
    pub strategy: &'a Strategy,
    /// The master seed.
    pub seed: u64,
    /// The replication (0-based); part of every stream's seed.
    pub replication: u32,
    /// Keep the per-bucket time series in the result (peaks are computed either way).
    pub keep_series: bool,
}
