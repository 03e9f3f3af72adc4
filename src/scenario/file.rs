//! The raw scenario file: serde structs that mirror docs/scenario.md key for key.
//!
//! Every field is optional (defaults are applied when the file is checked, in
//! [`super::check`]) and unknown keys are refused (`deny_unknown_fields`), so a typo is an
//! error with its line and column, never a silently ignored key.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Unexpected, Visitor};

use crate::policy::RetryOnItem;

/// A count or a word (`"unbounded"`, `"unlimited"`, `"off"`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum CountOr {
    /// A number.
    Count(i64),
    /// A word.
    Word(String),
}

/// `seed`: an integer from 0 to 2^64 - 1. TOML integers stop at 2^63 - 1, so a larger seed
/// is written as its digits in quotes (`seed = "18446744073709551615"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seed(pub u64);

impl<'de> Deserialize<'de> for Seed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Seed, D::Error> {
        d.deserialize_any(SeedVisitor)
    }
}

struct SeedVisitor;

impl Visitor<'_> for SeedVisitor {
    type Value = Seed;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(
            "an integer from 0 to 18446744073709551615 (above 9223372036854775807, in quotes)",
        )
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Seed, E> {
        u64::try_from(v)
            .map(Seed)
            .map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Seed, E> {
        Ok(Seed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Seed, E> {
        v.trim()
            .parse()
            .map(Seed)
            .map_err(|_| E::invalid_value(Unexpected::Str(v), &self))
    }
}

/// A status code or a word (`"drop"`, `"reset"`).
pub type StatusOr = CountOr;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScenarioFile {
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: Option<Seed>,
    pub horizon: Option<String>,
    pub replications: Option<u32>,
    pub workload: WorkloadFile,
    pub server: ServerFile,
    pub network: NetworkFile,
    pub client: ClientFile,
    pub backoff: BackoffFile,
    pub faults: Vec<FaultFile>,
    /// `None` when absent: `layers = []` is refused, not read as no chain.
    pub layers: Option<Vec<LayerFile>>,
    pub output: OutputFile,
    pub recovery: RecoveryFile,
    pub recommend: Option<RecommendFile>,
    pub playground: Option<PlaygroundFile>,
    pub sweep: Option<toml::Table>,
}

/// `[playground]`: the knobs `jitterlab serve` shows (no effect on the runs).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlaygroundFile {
    pub knobs: Option<Vec<KnobFile>>,
}

/// One `playground.knobs` entry: a key and the values its control offers. The values stay
/// TOML values here; [`super::playground`] reads them by the key's kind.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KnobFile {
    pub key: Option<String>,
    pub label: Option<String>,
    pub min: Option<toml::Value>,
    pub max: Option<toml::Value>,
    pub step: Option<toml::Value>,
    pub choices: Option<Vec<toml::Value>>,
    pub subset: Option<Vec<toml::Value>>,
}

/// `[recommend]`: what the results are read against (no effect on the runs).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecommendFile {
    pub min_success: Option<f64>,
}

/// One `[[layers]]` entry: a service of a chain, in call order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LayerFile {
    pub name: Option<String>,
    pub server: ServerFile,
    /// Its outbound calls' policy (a calling layer only).
    pub client: Option<ClientFile>,
    /// Its outbound calls' backoff: a strategy table without a name; read by hand.
    pub backoff: Option<toml::Table>,
    pub on_give_up: Option<String>,
    pub propagate_deadline: Option<bool>,
    pub faults: Vec<FaultFile>,
}

/// `[workload]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadFile {
    pub kind: Option<String>,
    pub clients: Option<i64>,
    pub start: Option<String>,
    pub spread: Option<String>,
    /// A number or a profile `[["0s", 40], ["20s", 80]]`; read by hand.
    pub rate: Option<toml::Value>,
    pub spike: Option<SpikeFile>,
    pub duration: Option<String>,
    pub think: Option<String>,
}

/// `workload.spike`: the base rate steps to `rate` at `at` for `length`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpikeFile {
    pub at: String,
    pub length: String,
    pub rate: f64,
}

/// A distribution table: `{ dist = "exponential", mean = "10ms", sd = "2ms" }`, or
/// `{ dist = "empirical", file = "samples.txt" }`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistFile {
    pub dist: String,
    #[serde(default)]
    pub mean: Option<String>,
    #[serde(default)]
    pub sd: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
}

/// `server.rate_limit`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitFile {
    pub rate: f64,
    pub burst: i64,
}

/// `[server]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerFile {
    pub kind: Option<String>,
    pub workers: Option<CountOr>,
    pub queue: Option<CountOr>,
    pub service: Option<DistFile>,
    pub contention: Option<String>,
    pub overload_status: Option<i64>,
    pub retry_after: Option<String>,
    pub retry_after_header: Option<String>,
    pub rate_limit: Option<RateLimitFile>,
    pub drop_expired: Option<bool>,
}

/// `[network]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkFile {
    pub latency: Option<DistFile>,
}

/// `client.budget`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetFile {
    pub kind: String,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub capacity: Option<i64>,
    #[serde(default)]
    pub retry_cost: Option<i64>,
    #[serde(default)]
    pub timeout_cost: Option<i64>,
    #[serde(default)]
    pub throttling_cost: Option<i64>,
    #[serde(default)]
    pub success_refund: Option<i64>,
    #[serde(default)]
    pub percent: Option<f64>,
    #[serde(default)]
    pub min_per_sec: Option<f64>,
    #[serde(default)]
    pub window: Option<String>,
    #[serde(default)]
    pub deposit: Option<String>,
    #[serde(default)]
    pub max_tokens: Option<f64>,
    #[serde(default)]
    pub token_ratio: Option<f64>,
    #[serde(default)]
    pub size: Option<f64>,
    #[serde(default)]
    pub fill: Option<f64>,
    #[serde(default)]
    pub ratio: Option<f64>,
    #[serde(default)]
    pub min_concurrency: Option<i64>,
}

/// `client.throttle`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThrottleFile {
    pub k: Option<f64>,
    pub window: Option<String>,
    pub scope: Option<String>,
}

/// `client.adaptive_rate`: the AWS adaptive mode's rate limiter, every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AdaptiveRateFile {
    pub beta: Option<f64>,
    pub scale: Option<f64>,
    pub smoothing: Option<f64>,
    pub bucket: Option<String>,
    pub min_fill_rate: Option<f64>,
    pub max_rate_scale: Option<f64>,
    pub scope: Option<String>,
}

/// `client.breaker`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerFile {
    pub failure_ratio: Option<f64>,
    pub min_requests: Option<i64>,
    pub window: Option<String>,
    pub open_for: Option<String>,
    pub scope: Option<String>,
}

/// `client.hedging`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HedgingFile {
    pub delay: Option<String>,
    pub max_attempts: Option<i64>,
    pub non_fatal: Option<Vec<RetryOnItem>>,
    pub cancel: Option<String>,
}

/// `[client]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClientFile {
    pub timeout: Option<String>,
    pub deadline: Option<String>,
    pub max_attempts: Option<CountOr>,
    pub retry_on: Option<Vec<RetryOnItem>>,
    pub retry_after: Option<String>,
    pub retry_after_max: Option<String>,
    pub retry_after_max_extra: Option<String>,
    pub retry_after_header: Option<String>,
    pub throttling_on: Option<Vec<RetryOnItem>>,
    pub idempotent: Option<bool>,
    pub idempotency_key: Option<bool>,
    pub budget: Option<BudgetFile>,
    pub breaker: Option<BreakerFile>,
    pub throttle: Option<ThrottleFile>,
    pub concurrency: Option<CountOr>,
    pub adaptive_rate: Option<AdaptiveRateFile>,
    pub hedging: Option<HedgingFile>,
}

/// `[backoff]`; strategies are read by hand for errors that name `backoff.strategies[i]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BackoffFile {
    pub strategies: Option<Vec<toml::Value>>,
    pub base: Option<String>,
    pub multiplier: Option<f64>,
    pub cap: Option<String>,
    pub growth: Option<f64>,
    pub factor: Option<f64>,
}

/// One `[[faults]]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    pub kind: String,
    pub start: String,
    pub end: String,
    #[serde(default)]
    pub status: Option<StatusOr>,
    #[serde(default)]
    pub share: Option<f64>,
    #[serde(default)]
    pub factor: Option<f64>,
}

/// `[recovery]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecoveryFile {
    pub window: Option<String>,
    pub tolerance: Option<f64>,
}

/// `[output]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputFile {
    pub bucket: Option<String>,
}
