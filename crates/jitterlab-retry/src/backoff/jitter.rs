//! The jitter kinds: how a nominal exponential delay becomes a sleep.

use std::fmt;
use std::str::FromStr;

use crate::param::ValueError;

/// How the sleep before retry `k` is drawn. `d_k = min(cap, base * multiplier^(k-1))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Jitter {
    /// Sleep 0: retry immediately (the "no backoff" baseline).
    None,
    /// Sleep `base` every time.
    Constant,
    /// Sleep `d_k`: plain capped exponential, no randomness.
    NoJitter,
    /// Sleep `U[0, d_k]` (AWS "full jitter").
    Full,
    /// Sleep `d_k/2 + U[0, d_k/2]` (AWS "equal jitter").
    Equal,
    /// `s_k = min(cap, U[base, growth * s_(k-1)])`, `s_0 = base` (AWS "decorrelated jitter",
    /// clamp included).
    Decorrelated,
    /// Polly's smooth decorrelated jitter (`DecorrelatedJitterBackoffV2`): median first sleep
    /// `base`, growing about 2x per retry, capped at `cap`.
    DecorrelatedV2,
    /// `min(cap, d_k * U[1 - factor, 1 + factor])` (gRPC: ±20 %, Go's backoff: ±50 %).
    Proportional,
    /// `d_k + U[0, factor * d_k]`: jitter only above the delay, never capped (Kubernetes'
    /// `wait.Jitter`, client-go's retry backoffs: factor 0.1). `cap` bounds `d_k`, so a sleep
    /// may reach `cap * (1 + factor)`, as in `wait.Backoff`.
    Additive,
}

impl Jitter {
    /// Every kind, from no sleep to additive jitter.
    pub const ALL: [Jitter; 9] = [
        Jitter::None,
        Jitter::Constant,
        Jitter::NoJitter,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::DecorrelatedV2,
        Jitter::Proportional,
        Jitter::Additive,
    ];

    /// The name used in scenario files, the CLI and output columns.
    pub const fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Constant => "constant",
            Jitter::NoJitter => "no_jitter",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::DecorrelatedV2 => "decorrelated_v2",
            Jitter::Proportional => "proportional",
            Jitter::Additive => "additive",
        }
    }

    /// True when the kind draws random numbers.
    pub const fn is_random(self) -> bool {
        !matches!(self, Jitter::None | Jitter::Constant | Jitter::NoJitter)
    }

    /// The allowed names, comma separated.
    pub fn names() -> String {
        let mut names = String::new();
        for (i, jitter) in Jitter::ALL.into_iter().enumerate() {
            if i > 0 {
                names.push_str(", ");
            }
            names.push_str(jitter.name());
        }
        names
    }
}

impl fmt::Display for Jitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Jitter {
    type Err = ValueError;

    /// Parses a name; the error lists the allowed names.
    fn from_str(text: &str) -> Result<Jitter, ValueError> {
        Jitter::ALL
            .into_iter()
            .find(|j| j.name() == text)
            .ok_or_else(|| {
                ValueError::new(format!("{text:?}"), format!("one of {}", Jitter::names()))
            })
    }
}
