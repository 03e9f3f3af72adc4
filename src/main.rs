//! The `jitterlab` command line: parses arguments, calls the library, prints errors once.
//!
//! Exit codes: 0 success, 2 bad input (usage, scenario, values), 1 anything else.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use jitterlab::backoff::BackoffParams;
use jitterlab::delays::{DelaysRequest, parse_jitters};
use jitterlab::time::{SimDuration, parse_duration};
use jitterlab::{Error, Result};

/// Shows, with numbers and charts, what retry backoff does to a system under stress.
#[derive(Parser, Debug)]
#[command(name = "jitterlab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print sleeps drawn by the backoff engine as CSV (jitter,sample,retry,delay_ms).
    Delays(DelaysArgs),
}

#[derive(clap::Args, Debug)]
struct DelaysArgs {
    /// Jitter kinds, comma separated, or `all`: none, constant, no_jitter, full, equal,
    /// decorrelated, decorrelated_v2, proportional.
    #[arg(long, default_value = "full")]
    jitter: String,
    /// First nominal delay, with a unit (e.g. 50ms).
    #[arg(long, default_value = "50ms", allow_hyphen_values = true)]
    base: String,
    /// Growth of the nominal delay per retry (>= 1).
    #[arg(long, default_value_t = 2.0, allow_negative_numbers = true)]
    multiplier: f64,
    /// Largest sleep, with a unit (e.g. 2s).
    #[arg(long, default_value = "2s", allow_hyphen_values = true)]
    cap: String,
    /// Decorrelated jitter's growth g in U[base, g * previous] (>= 1).
    #[arg(long, default_value_t = 3.0, allow_negative_numbers = true)]
    growth: f64,
    /// Proportional jitter's spread f in U[1-f, 1+f] (0 to 1).
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    factor: f64,
    /// Retries per sample (k = 1..=retries).
    #[arg(long, default_value_t = 8)]
    retries: u32,
    /// Fresh requests per jitter kind.
    #[arg(long, default_value_t = 1000)]
    samples: u32,
    /// Master seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::from(if err.is_user_error() { 2 } else { 1 })
        }
    }
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Delays(args) => delays(args),
    }
}

/// Renames `backoff.x` keys to the flag `--x` that the user typed.
fn as_flag(err: Error) -> Error {
    match err {
        Error::InvalidValue { key, value, allowed } => Error::InvalidValue {
            key: key.replace("backoff.", "--"),
            value,
            allowed: allowed.replace("backoff.", "--"),
        },
        other => other,
    }
}

fn delays(args: DelaysArgs) -> Result<()> {
    let duration = |flag: &str, text: &str| -> Result<SimDuration> { parse_duration(flag, text) };
    let request = DelaysRequest {
        jitters: parse_jitters("--jitter", &args.jitter)?,
        params: BackoffParams {
            jitter: jitterlab::backoff::Jitter::Full,
            base: duration("--base", &args.base)?,
            multiplier: args.multiplier,
            cap: duration("--cap", &args.cap)?,
            growth: args.growth,
            factor: args.factor,
        },
        retries: args.retries,
        samples: args.samples,
        seed: args.seed,
    };
    request.policies().map_err(as_flag)?;
    let stdout = std::io::stdout().lock();
    match request.write_csv(stdout) {
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
