//! The retry policy chosen in `notebooks/03-choosing-parameters.ipynb`, as real code.
//!
//! `jitterlab recommend` picked full jitter, base 200 ms, cap 2 s and at most 16 attempts for
//! clients with a 1 s attempt timeout and a 30 s deadline (the notebook checks that the
//! constants below are the ones it recommends). `main` sends one request to a service that
//! answers 503 for its first 5 seconds and prints every attempt:
//!
//! ```sh
//! cargo run --release --example chosen_policy                  # on a virtual clock: instant
//! cargo run --release --example chosen_policy -- --system-clock  # real sleeps, about 6 s
//! ```

use jitterlab::backoff::{Backoff, Jitter};
use jitterlab::exec::{CancelToken, Classify, Clock, Retrier, SystemClock, VirtualClock};
use jitterlab::policy::{Outcome, RetryPolicy};
use jitterlab::time::SimDuration;
use std::time::Duration;

const JITTER: Jitter = Jitter::Full;
const BASE: SimDuration = SimDuration::from_millis(200);
const MULTIPLIER: f64 = 2.0;
const CAP: SimDuration = SimDuration::from_secs(2);
/// Enough attempts to outlast a 5 s outage; the deadline bounds the time.
const MAX_ATTEMPTS: Option<u32> = Some(16);
const ATTEMPT_TIMEOUT: Option<SimDuration> = Some(SimDuration::from_secs(1));
const DEADLINE: Option<SimDuration> = Some(SimDuration::from_secs(30));

/// The policy; one `Retrier` per process runs it, shared by every call (`&Retrier` or
/// `Arc<Retrier>`).
fn policy() -> jitterlab::Result<RetryPolicy> {
    // The engine takes std durations; the constants are in the simulator's units, which the
    // notebook reads back.
    let mut policy = RetryPolicy::new(Backoff::new(JITTER, BASE, MULTIPLIER, CAP)?);
    policy.max_attempts = MAX_ATTEMPTS;
    policy.timeout = ATTEMPT_TIMEOUT.map(SimDuration::to_std);
    policy.deadline = DEADLINE.map(SimDuration::to_std);
    Ok(policy)
}

/// Jitter only spreads clients that draw *different* numbers: `Retrier::new` seeds every
/// process from the operating system's entropy; `Retrier::seeded` fixes the seed for demos and
/// tests.
fn retrier(seed: Option<u64>) -> jitterlab::Result<Retrier> {
    Ok(match seed {
        None => Retrier::new(policy()?)?,
        Some(seed) => Retrier::seeded(policy()?, seed)?,
    })
}

/// The error of the stand-in service: an HTTP status.
#[derive(Debug)]
struct Status(u16);

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {}", self.0)
    }
}

impl Classify for Status {
    fn outcome(&self) -> Outcome {
        Outcome::from_status(self.0)
    }
}

/// Calls a service that is down (503) until `up_at`, on `clock`.
fn call<C: Clock>(clock: &C, retrier: &Retrier, up_at: Duration) -> Result<(), String> {
    let secs = |t: Duration| t.as_secs_f64();
    let answer = retrier.retry(
        clock,
        &CancelToken::new(),
        |_attempt| {
            if clock.now() < up_at {
                Err(Status(503))
            } else {
                Ok("200 OK")
            }
        },
        |event| {
            let next = match event.decision.sleep() {
                Some(sleep) => format!("sleep {:.0} ms", sleep.as_secs_f64() * 1000.0),
                None => String::new(),
            };
            let line = format!(
                "attempt {:>2} at {:>6.3} s: {:<7} {next}",
                event.attempt,
                event.end.as_secs_f64(),
                event
                    .outcome
                    .map_or_else(|| "not sent".to_string(), |o| o.to_string())
            );
            println!("{}", line.trim_end());
        },
    );
    match answer {
        Ok(body) => {
            println!("{body} after {:.3} s", secs(clock.now()));
            Ok(())
        }
        Err(e) => Err(match e.last_error() {
            Some(last) => format!("{e}: {last}"),
            None => e.to_string(),
        }),
    }
}

fn main() -> Result<(), String> {
    let up_at = Duration::from_secs(5);
    if std::env::args().any(|a| a == "--system-clock") {
        // Production: real sleeps, and jitter that differs from process to process.
        let retrier = retrier(None).map_err(|e| e.to_string())?;
        call(&SystemClock::new(), &retrier, up_at)
    } else {
        // Tests and demos: virtual time (sleeps take no real time) and a fixed seed.
        let retrier = retrier(Some(42)).map_err(|e| e.to_string())?;
        call(&VirtualClock::new(), &retrier, up_at)
    }
}
