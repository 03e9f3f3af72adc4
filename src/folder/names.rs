//! The names of the files a result folder holds: each spelled here once, and named by every
//! module that writes, reads, lists or removes one. A leaf: it names no other module, so any
//! module may name it (the journal's format in `sweep`, the size limits in `input` included).

/// The scenario as run, resolved (every default written out).
pub const SCENARIO: &str = "scenario.toml";
/// The journal: one line per finished unit, after a header (`sweep::journal`).
pub const JOURNAL: &str = "units.jsonl";
/// The journal as errors about its size describe it.
pub const JOURNAL_DESCRIBED: &str = "a journal (units.jsonl)";
/// The run's record: its command, figures and the files jitterlab wrote (`files`).
pub const META: &str = "meta.json";
/// The colour of each strategy (`output::palette`).
pub const PALETTE: &str = "palette.json";
/// The HTML report (`output::report`).
pub const REPORT: &str = "report.html";
/// The herd animation (`--animate`).
pub const ANIMATION: &str = "herd.gif";

/// One row per unit.
pub const SUMMARY: &str = "summary.csv";
/// Means and intervals across replications.
pub const AGGREGATE: &str = "aggregate.csv";
/// Paired differences between strategies.
pub const COMPARE: &str = "compare.csv";
/// The time series of every unit.
pub const TIMESERIES: &str = "timeseries.csv";
/// The attempts histogram.
pub const ATTEMPTS: &str = "attempts.csv";
/// Latency quantiles.
pub const LATENCY: &str = "latency.csv";
/// One row per (unit, layer).
pub const LAYERS: &str = "layers.csv";
/// The time series of every layer.
pub const LAYER_TIMESERIES: &str = "layer_timeseries.csv";
/// Hedged requests.
pub const HEDGING: &str = "hedging.csv";
/// First passages, Kaplan–Meier per point and strategy (scenarios with `[passage]`).
pub const PASSAGE: &str = "passage.csv";
/// The Pareto front (`recommend`).
pub const PARETO: &str = "pareto.csv";
/// The answer `recommend` printed last, kept for the report.
pub const RECOMMENDATION: &str = "recommendation.txt";
/// The live run against its simulation (`jitterlab live`).
pub const LIVE_VS_SIM: &str = "live_vs_sim.csv";
/// Service times a live run observed (milliseconds, one per line).
pub const OBSERVED_SERVICE: &str = "observed_service_ms.txt";
/// One-way latencies a live run observed (milliseconds, one per line).
pub const OBSERVED_LATENCY: &str = "observed_latency_ms.txt";

/// The staging folder inside a result folder: a run writes its files there, and they are
/// moved into the folder only once all are written ([`super::stage`]).
pub const STAGE: &str = ".jitterlab-partial";
/// The folder inside the staging folder where a commit moves the files it replaces, until it
/// ends: undone, they move back ([`super::commit`]).
pub const REPLACED: &str = "replaced";

#[cfg(test)]
mod tests {
    #[test]
    fn the_journal_is_described_by_its_name() {
        assert!(super::JOURNAL_DESCRIBED.contains(&format!("({})", super::JOURNAL)));
    }
}
