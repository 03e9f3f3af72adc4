//! The `jitterlab delays` table: sleeps drawn by the backoff core, per jitter kind, sample
//! (one fresh request) and retry number, so a person can look at the distributions.
//!
//! Each jitter kind draws from its own stream `(seed, 0, Delays, kind)`, so adding a kind to
//! the list never changes the numbers of another.

use std::io::Write;

use crate::backoff::{Backoff, BackoffParams, BackoffState, Jitter};
use crate::error::{Error, Result};
use crate::param::{ParamError, ValueError};
use crate::rng::{StreamKind, stream};
use crate::time::millis_string;

/// What to draw.
#[derive(Debug, Clone)]
pub struct DelaysRequest {
    /// The kinds, in output order.
    pub jitters: Vec<Jitter>,
    /// Shared parameters (the `jitter` field is replaced by each kind in turn).
    pub params: BackoffParams,
    /// Retries per sample (`k = 1..=retries`).
    pub retries: u32,
    /// Fresh requests per kind.
    pub samples: u32,
    /// Master seed.
    pub seed: u64,
}

/// One drawn sleep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelaySample {
    /// The jitter kind.
    pub jitter: Jitter,
    /// Which fresh request (0-based).
    pub sample: u32,
    /// The retry number `k` (1-based).
    pub retry: u32,
    /// The sleep in nanoseconds.
    pub delay_ns: u64,
}

/// Most rows one `delays` call writes (kinds × samples × retries): about 300 MB of CSV.
pub const MAX_ROWS: u64 = 10_000_000;

/// Parses a `--jitter` list: names separated by commas, or `all`.
pub fn parse_jitters(text: &str) -> Result<Vec<Jitter>, ValueError> {
    if text.trim() == "all" {
        return Ok(Jitter::ALL.to_vec());
    }
    text.split(',').map(|name| name.trim().parse()).collect()
}

impl DelaysRequest {
    /// Validates every kind's policy and the size of the output before anything is drawn.
    /// Errors name the field of [`BackoffParams`] (`cap`), `jitter` for an empty list of kinds,
    /// or the larger of `retries` and `samples` for too many rows.
    pub fn policies(&self) -> Result<Vec<Backoff>, ParamError> {
        if self.jitters.is_empty() {
            return Err(ParamError::new(
                "jitter",
                "\"\"",
                format!("one or more of {}, or all", Jitter::names()),
            ));
        }
        let rows = self.jitters.len() as u64 * u64::from(self.samples) * u64::from(self.retries);
        if rows > MAX_ROWS {
            let (field, value) = if self.retries >= self.samples {
                ("retries", self.retries)
            } else {
                ("samples", self.samples)
            };
            return Err(ParamError::new(
                field,
                value,
                format!(
                    "a smaller number: {} kinds x {} samples x {} retries = {rows} rows, at most {MAX_ROWS} are written",
                    self.jitters.len(),
                    self.samples,
                    self.retries
                ),
            ));
        }
        self.jitters
            .iter()
            .map(|&jitter| {
                Backoff::from_params(BackoffParams {
                    jitter,
                    ..self.params
                })
            })
            .collect()
    }

    /// Calls `f` for every sample, in output order (kind, sample, retry).
    pub fn for_each(&self, mut f: impl FnMut(DelaySample) -> Result<()>) -> Result<()> {
        for (index, policy) in self.policies()?.iter().enumerate() {
            let mut rng = stream(self.seed, 0, StreamKind::Delays, index as u64);
            for sample in 0..self.samples {
                let mut state = BackoffState::new();
                for retry in 1..=self.retries {
                    let delay_ns = policy.next_delay_nanos(&mut state, &mut rng);
                    f(DelaySample {
                        jitter: policy.jitter(),
                        sample,
                        retry,
                        delay_ns,
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Writes the CSV `jitter,sample,retry,delay_ms` (exact decimal milliseconds).
    pub fn write_csv<W: Write>(&self, out: W) -> Result<()> {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        let io = |e| Error::io("<stdout>", e);
        writeln!(out, "jitter,sample,retry,delay_ms").map_err(io)?;
        self.for_each(|s| {
            writeln!(
                out,
                "{},{},{},{}",
                s.jitter.name(),
                s.sample,
                s.retry,
                millis_string(s.delay_ns)
            )
            .map_err(io)
        })?;
        out.flush().map_err(io)
    }
}
