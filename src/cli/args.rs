//! What the user types: the commands and their flags (clap derive), and the parsers of the
//! values clap cannot check by type. `main` dispatches on [`Command`].

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Shows, with numbers and charts, what retry backoff does to a system under stress.
#[derive(Parser, Debug)]
#[command(name = "jitterlab", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run a scenario, a file or a built-in (the thundering herd without SCENARIO), into a
    /// result folder.
    Run(RunArgs),
    /// The playground: a local web page whose knobs re-simulate a scenario (the thundering
    /// herd without SCENARIO) as they move; the page's numbers are `run`'s.
    Serve(ServeArgs),
    /// Run a scenario for real against a loopback HTTP server, one strategy after another,
    /// and compare with the simulation (live_vs_sim.csv).
    Live(LiveArgs),
    /// Validate a scenario (a file or a built-in) and print it resolved, every default written
    /// out.
    Check(CheckArgs),
    /// List the built-in scenarios, and the local sims/*.toml files beside them.
    List(ListArgs),
    /// Print a built-in scenario's file, comments included.
    Show(ShowArgs),
    /// Write a built-in scenario to a file for editing; never overwrites.
    Init(InitArgs),
    /// Print sleeps drawn by the backoff engine as CSV (jitter,sample,retry,delay_ms).
    Delays(DelaysArgs),
    /// Combine shard folders into one result, identical to an unsharded run.
    Merge(MergeArgs),
    /// Redraw the charts and report.html from a result folder's CSVs.
    Plot(PlotArgs),
    /// Rank the (point, strategy) pairs that meet constraints; write pareto.csv.
    Recommend(RecommendArgs),
    /// List the SDK and library retry presets (`preset = "NAME"` in a strategy), or show one's
    /// keys.
    Presets(PresetsArgs),
}

#[derive(clap::Args, Debug)]
pub(crate) struct PresetsArgs {
    #[command(subcommand)]
    pub command: Option<PresetsCommand>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum PresetsCommand {
    /// Print a preset's keys as a strategy table (TOML), with its source.
    Show {
        /// A preset's name (`jitterlab presets`).
        name: String,
    },
}

#[derive(clap::Args, Debug)]
pub(crate) struct RecommendArgs {
    /// A result folder (as written by `jitterlab run`).
    pub dir: PathBuf,
    /// p99 latency at most this (e.g. 2s).
    #[arg(long, allow_hyphen_values = true)]
    pub p99: Option<String>,
    /// Attempts per request at most this (e.g. 1.5).
    #[arg(long, allow_hyphen_values = true)]
    pub max_amplification: Option<f64>,
    /// Success rate at least this (e.g. 0.999) [default: the scenario's
    /// recommend.min_success, else 0.999].
    #[arg(long, allow_hyphen_values = true)]
    pub min_success: Option<f64>,
    /// Only the points where a sweep key has this value (repeatable), e.g.
    /// --at workload.rate=50: one point of the world keys gets its full ranking.
    #[arg(long, value_name = "KEY=VALUE")]
    pub at: Vec<String>,
    /// 99.9 % of succeeded requests finish within this (p99.9 at most; e.g. 5s).
    #[arg(long, allow_hyphen_values = true)]
    pub deadline: Option<String>,
    /// What to optimise among the pairs that qualify: amplification, p99, success or another
    /// summary metric (e.g. latency_p999_ms), lowest or highest as it is better [default:
    /// amplification; for a folder that hedges, p99 within 1.25 copies per request unless
    /// --max-amplification sets another limit].
    #[arg(long)]
    pub objective: Option<String>,
    /// How many pairs to print.
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub top: usize,
    /// Do not redraw the charts and report.
    #[arg(long)]
    pub no_plots: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct PlotArgs {
    /// A result folder (as written by `jitterlab run`).
    pub dir: PathBuf,
    /// Draw nothing; check that every chart is legible (no text outside the canvas,
    /// overlapping, over a data line, below 10 pt or faint against its background; data
    /// reaching a fifth of each panel's value axis) and list what is not; exit 1 if anything
    /// is.
    #[arg(long)]
    pub check: bool,
    /// Also write herd.gif: the herd of point 0 drawn bucket by bucket as the clients return,
    /// a `no_jitter` strategy above a `full` jitter one, with the server's capacity.
    #[arg(long, conflicts_with = "check")]
    pub animate: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct RunArgs {
    /// Scenario file (TOML), or the name of a built-in scenario (`jitterlab list`), as NAME or
    /// NAME.toml; a file of that name wins. The built-in thundering herd when absent.
    pub scenario: Option<PathBuf>,
    /// Result folder [default: out/<name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Master seed, 0 to 18446744073709551615 (overrides the scenario's `seed`).
    #[arg(long, allow_negative_numbers = true, value_parser = whole::<u64>)]
    pub seed: Option<u64>,
    /// Replications per point and strategy (overrides `replications`).
    #[arg(long, allow_negative_numbers = true, value_parser = whole::<u32>)]
    pub replications: Option<u32>,
    /// Override any key: KEY=VALUE, VALUE read as TOML (a bare word is a string).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Worker threads, 1 to 1024 [default: one per core]; never more than the runs to do.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
    /// Run only shard I of N (I from 0); merge the shards with `jitterlab merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Continue a partial (interrupted) run in the result folder.
    #[arg(long)]
    pub resume: bool,
    /// Write no charts or report.
    #[arg(long)]
    pub no_plots: bool,
    /// Also write herd.gif (as `plot --animate`; with --no-plots too).
    #[arg(long, conflicts_with = "shard")]
    pub animate: bool,
    /// No progress bar or notes on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Lifts two refusals: write into an --out folder that holds other files (replacing only
    /// jitterlab's own), and run when the work estimate is over its limits.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct LiveArgs {
    /// Scenario file (TOML), or the name of a built-in scenario, as for `run`.
    pub scenario: PathBuf,
    /// Result folder [default: out/<name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Master seed, 0 to 18446744073709551615 (overrides the scenario's `seed`).
    #[arg(long, allow_negative_numbers = true, value_parser = whole::<u64>)]
    pub seed: Option<u64>,
    /// Override any key: KEY=VALUE, VALUE read as TOML (a bare word is a string).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Write no charts or report.
    #[arg(long)]
    pub no_plots: bool,
    /// No notes on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Write into an --out folder that holds other files, replacing only jitterlab's own.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ServeArgs {
    /// Scenario file (TOML), or the name of a built-in scenario, as for `run`. The built-in
    /// thundering herd when absent.
    pub scenario: Option<PathBuf>,
    /// The address to listen on; port 0 takes a free port. Another than loopback (127.0.0.1,
    /// ::1) lets anyone who reaches it run simulations on this machine: a warning says so.
    #[arg(long, default_value = jitterlab::serve::DEFAULT_ADDR)]
    pub addr: String,
    /// No notes on stderr (the URL is printed on stdout all the same).
    #[arg(long)]
    pub quiet: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct CheckArgs {
    /// Scenario file (TOML), or the name of a built-in scenario (`jitterlab list`), as NAME or
    /// NAME.toml; a file of that name wins.
    pub scenario: PathBuf,
    /// Override any key: KEY=VALUE.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ListArgs {
    /// Folder of local scenario files [default: sims, when it exists]. A local file is shown
    /// beside the built-in of its name, with `(differs)` when its text is not the built-in's.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ShowArgs {
    /// A built-in scenario's name (`jitterlab list`).
    pub name: String,
}

#[derive(clap::Args, Debug)]
pub(crate) struct InitArgs {
    /// A built-in scenario's name (`jitterlab list`).
    pub name: String,
    /// The file to write [default: NAME.toml]; an existing file is never replaced.
    pub file: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct MergeArgs {
    /// Shard result folders.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The merged result folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Write no charts or report.
    #[arg(long)]
    pub no_plots: bool,
    /// Write into an --out folder that holds other files, replacing only jitterlab's own.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct DelaysArgs {
    /// Jitter kinds, comma separated, or `all`: none, constant, no_jitter, full, equal,
    /// decorrelated, decorrelated_v2, proportional.
    #[arg(long, default_value = "full")]
    pub jitter: String,
    /// First nominal delay, with a unit (e.g. 50ms).
    #[arg(long, default_value = "50ms", allow_hyphen_values = true)]
    pub base: String,
    /// Growth of the nominal delay per retry (>= 1).
    #[arg(long, default_value_t = 2.0, allow_negative_numbers = true)]
    pub multiplier: f64,
    /// Largest nominal delay and sleep (additive adds up to factor x it), with a unit (e.g. 2s).
    #[arg(long, default_value = "2s", allow_hyphen_values = true)]
    pub cap: String,
    /// Decorrelated jitter's growth g in U[base, g * previous] (>= 1).
    #[arg(long, default_value_t = 3.0, allow_negative_numbers = true)]
    pub growth: f64,
    /// Proportional jitter's spread f in U[1-f, 1+f], additive's in d + U[0, f d] (0 to 1).
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    pub factor: f64,
    /// Retries per sample (k = 1..=retries).
    #[arg(long, default_value_t = 8, allow_negative_numbers = true, value_parser = whole::<u32>)]
    pub retries: u32,
    /// Fresh requests per jitter kind.
    #[arg(long, default_value_t = 1000, allow_negative_numbers = true, value_parser = whole::<u32>)]
    pub samples: u32,
    /// Master seed.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = whole::<u64>)]
    pub seed: u64,
    /// Also draw the distributions to this file (.png or .svg): one panel per jitter kind.
    /// An existing file is never replaced without --force.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Replace the --plot FILE when it exists (a link is replaced by the chart, never what it
    /// points at).
    #[arg(long)]
    pub force: bool,
}

/// A whole number of `T` for a flag: `-1` or `1.5` is refused naming the range, as any value
/// out of range is (clap would otherwise read `-1` as a flag of its own).
fn whole<T>(text: &str) -> std::result::Result<T, String>
where
    T: std::str::FromStr + num_range::Max,
{
    text.trim().parse().map_err(|_| {
        format!(
            "{}: a whole number from 0 to {}",
            jitterlab::text::shown(text),
            T::MAX_TEXT
        )
    })
}

/// The largest value of each integer type a flag takes, as text for [`whole`]'s message.
mod num_range {
    pub trait Max {
        const MAX_TEXT: &'static str;
    }
    impl Max for u32 {
        const MAX_TEXT: &'static str = "4294967295";
    }
    impl Max for u64 {
        const MAX_TEXT: &'static str = "18446744073709551615";
    }
    impl Max for usize {
        const MAX_TEXT: &'static str = "18446744073709551615";
    }
}
