//! The raw scenario file: the top struct, composed of each table's serde struct (in
//! [`super::table`]), and the value types several tables share.
//!
//! Every field is optional (defaults are applied when the file is checked, in
//! [`super::check`]) and unknown keys are refused (`deny_unknown_fields`), so a typo is an
//! error with its line and column, never a silently ignored key.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Unexpected, Visitor};

use super::playground::PlaygroundFile;
use super::table::backoff::BackoffFile;
use super::table::client::ClientFile;
use super::table::faults::FaultFile;
use super::table::layers::LayerFile;
use super::table::network::NetworkFile;
use super::table::output::OutputFile;
use super::table::passage::PassageFile;
use super::table::recommend::RecommendFile;
use super::table::recovery::RecoveryFile;
use super::table::server::ServerFile;
use super::table::workload::WorkloadFile;

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
    pub passage: Option<PassageFile>,
    pub recommend: Option<RecommendFile>,
    pub playground: Option<PlaygroundFile>,
    pub sweep: Option<toml::Table>,
}
