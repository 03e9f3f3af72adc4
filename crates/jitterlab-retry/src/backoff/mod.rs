//! The backoff core: one validated policy, a small per-request state, one sampling step.
//!
//! This module is pure (no I/O, no clock, no global RNG) and is called unchanged by the
//! simulator, the blocking executor ([`crate::exec`]) and the benches. The call shape follows
//! rand's `Distribution::sample`: an immutable, shareable [`Backoff`], with the per-request
//! [`BackoffState`] and the generator passed in.
//!
//! A retry number `k` counts retries: `k = 1` is the sleep before the second attempt. The
//! nominal delay `d_k = min(cap, base * multiplier^(k-1))` is computed without overflow for
//! any `k`, so that retry 10 000 with multiplier 10 simply returns the cap.
//!
//! ```
//! use jitterlab_retry::backoff::{Backoff, BackoffState, Jitter};
//! use std::time::Duration;
//!
//! let policy = Backoff::new(Jitter::Full, Duration::from_millis(50), 2.0, Duration::from_secs(2))?;
//! let mut rng = <rand_pcg::Pcg64Mcg as rand::SeedableRng>::seed_from_u64(42);
//! let mut state = BackoffState::new();
//! for k in 1..=8 {
//!     let sleep = policy.next_delay(&mut state, &mut rng);
//!     assert!(sleep <= policy.nominal(k)); // full jitter: U[0, d_k]
//! }
//! # Ok::<(), jitterlab_retry::Error>(())
//! ```

mod jitter;

pub use jitter::Jitter;

use rand_core::Rng;

use crate::draw::{u64_inclusive, unit_f64};

use crate::param::ParamError;
use std::time::Duration;

use crate::time::{Exact, f64_to_nanos, from_nanos, to_nanos};

/// Default growth factor of decorrelated jitter (AWS 2015: `U[base, 3 * prev]`).
pub const DEFAULT_GROWTH: f64 = 3.0;
/// Default spread of proportional jitter (gRPC's ±20 %).
pub const DEFAULT_FACTOR: f64 = 0.2;

/// Nominal delays precomputed for the first retries, so the hot path is a table look-up.
const TABLE: usize = 64;

/// The parameters of a backoff policy, before validation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffParams {
    /// How the sleep is drawn from the nominal delay.
    pub jitter: Jitter,
    /// First nominal delay (`d_1`); the lower bound of decorrelated jitter; Polly's median
    /// first sleep for `decorrelated_v2`.
    pub base: Duration,
    /// Growth of the nominal delay per retry (>= 1).
    pub multiplier: f64,
    /// Largest sleep.
    pub cap: Duration,
    /// Decorrelated jitter's growth `g` in `U[base, g * s_(k-1)]` (>= 1).
    pub growth: f64,
    /// Proportional jitter's spread `f` in `U[1-f, 1+f]`, additive jitter's `f` in
    /// `d_k + U[0, f d_k]` (0 to 1).
    pub factor: f64,
}

impl Default for BackoffParams {
    /// `full` jitter, base 50 ms, multiplier 2, cap 2 s (the scenario defaults).
    fn default() -> Self {
        BackoffParams {
            jitter: Jitter::Full,
            base: Duration::from_millis(50),
            multiplier: 2.0,
            cap: Duration::from_secs(2),
            growth: DEFAULT_GROWTH,
            factor: DEFAULT_FACTOR,
        }
    }
}

/// A validated backoff policy. Cheap to share (`&Backoff` across threads); sampling never
/// fails and never panics.
#[derive(Debug, Clone)]
pub struct Backoff {
    params: BackoffParams,
    /// `nominal[k-1] = d_k` in nanoseconds for `k <= TABLE`.
    nominal: [u64; TABLE],
    /// `base` and `cap` in nanoseconds.
    base: u64,
    cap: u64,
    /// `growth` when it is a whole number (3, as in AWS), else 0. Decorrelated jitter's steps
    /// form a dependency chain through the previous sleep; an integer multiply keeps that
    /// chain short where float conversions would double it.
    growth_whole: u64,
}

/// Per-request backoff state: how many retries so far and what the last sleep was.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BackoffState {
    retries: u32,
    /// The previous sleep in nanoseconds (decorrelated jitter's `s_(k-1)`).
    prev_sleep: u64,
    /// Polly's running formula value (`decorrelated_v2`).
    prev_formula: f64,
}

impl BackoffState {
    /// A fresh state: no retries yet.
    pub const fn new() -> Self {
        BackoffState {
            retries: 0,
            prev_sleep: 0,
            prev_formula: 0.0,
        }
    }
    /// Retries taken so far (the `k` of the last sleep drawn).
    pub const fn retries(&self) -> u32 {
        self.retries
    }
    /// The last sleep drawn, zero before the first.
    pub const fn last_sleep(&self) -> Duration {
        from_nanos(self.prev_sleep)
    }
    /// Back to a fresh state.
    pub fn reset(&mut self) {
        *self = BackoffState::new();
    }
}

fn check_at_least_one(field: &'static str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && value >= 1.0 {
        Ok(())
    } else {
        Err(ParamError::new(field, value, "a finite number >= 1"))
    }
}

impl Backoff {
    /// A policy with the default growth (3) and factor (0.2); see [`Backoff::from_params`].
    /// `base` and `cap` are [`Duration`]s or anything that converts into one (jitterlab's
    /// `SimDuration`).
    pub fn new(
        jitter: Jitter,
        base: impl Into<Duration>,
        multiplier: f64,
        cap: impl Into<Duration>,
    ) -> Result<Backoff, ParamError> {
        Backoff::from_params(BackoffParams {
            jitter,
            base: base.into(),
            multiplier,
            cap: cap.into(),
            ..BackoffParams::default()
        })
    }

    /// Validates `params`: base > 0, cap >= base, multiplier finite and >= 1, growth finite
    /// and >= 1, factor in [0, 1]. Errors name the field (`cap`). Durations are kept to the
    /// nanosecond, saturating at `u64::MAX` nanoseconds (about 584 years).
    pub fn from_params(params: BackoffParams) -> Result<Backoff, ParamError> {
        let (base, cap) = (to_nanos(params.base), to_nanos(params.cap));
        if base == 0 {
            return Err(ParamError::new(
                "base",
                Exact(params.base),
                "a duration greater than 0",
            ));
        }
        if cap < base {
            return Err(ParamError::new(
                "cap",
                Exact(params.cap),
                format!("a duration at least base ({})", Exact(params.base)),
            ));
        }
        check_at_least_one("multiplier", params.multiplier)?;
        check_at_least_one("growth", params.growth)?;
        if !(params.factor.is_finite() && (0.0..=1.0).contains(&params.factor)) {
            return Err(ParamError::new(
                "factor",
                params.factor,
                "a number from 0 to 1",
            ));
        }
        let mut nominal = [0u64; TABLE];
        for (i, slot) in nominal.iter_mut().enumerate() {
            *slot = nominal_exact(base, params.multiplier, cap, i as u32);
        }
        let g = params.growth;
        let growth_whole = if g.fract() == 0.0 && g <= u32::MAX as f64 {
            g as u64
        } else {
            0
        };
        Ok(Backoff {
            params,
            nominal,
            base,
            cap,
            growth_whole,
        })
    }

    /// The parameters this policy was built from.
    pub fn params(&self) -> &BackoffParams {
        &self.params
    }
    /// The jitter kind.
    pub fn jitter(&self) -> Jitter {
        self.params.jitter
    }
    /// The base delay.
    pub fn base(&self) -> Duration {
        self.params.base
    }
    /// The cap.
    pub fn cap(&self) -> Duration {
        self.params.cap
    }

    /// The nominal delay `d_k = min(cap, base * multiplier^(k-1))` for retry `k >= 1`
    /// (`k = 0` is treated as 1).
    #[inline]
    pub fn nominal(&self, k: u32) -> Duration {
        from_nanos(self.nominal_ns(k))
    }

    #[inline]
    fn nominal_ns(&self, k: u32) -> u64 {
        let i = k.saturating_sub(1) as usize;
        if i < TABLE {
            self.nominal[i]
        } else if self.nominal[TABLE - 1] == self.cap {
            self.cap
        } else {
            nominal_exact(self.base, self.params.multiplier, self.cap, i as u32)
        }
    }

    /// Draws the sleep before the next retry and advances `state`. The first call gives the
    /// sleep before retry 1 (the second attempt).
    #[inline]
    pub fn next_delay<R: Rng + ?Sized>(&self, state: &mut BackoffState, rng: &mut R) -> Duration {
        from_nanos(self.next_delay_nanos(state, rng))
    }

    /// [`Backoff::next_delay`] in integer nanoseconds: the same draw, for simulators (see
    /// [`crate::time`]).
    #[inline]
    pub fn next_delay_nanos<R: Rng + ?Sized>(&self, state: &mut BackoffState, rng: &mut R) -> u64 {
        state.retries = state.retries.saturating_add(1);
        let k = state.retries;
        let base = self.base;
        let cap = self.cap;
        let sleep = match self.params.jitter {
            Jitter::None => 0,
            Jitter::Constant => base,
            Jitter::NoJitter => self.nominal_ns(k),
            Jitter::Full => uniform_inclusive(rng, self.nominal_ns(k)),
            Jitter::Equal => {
                let d = self.nominal_ns(k);
                let half = d / 2;
                half + uniform_inclusive(rng, d - half)
            }
            Jitter::Decorrelated => {
                let prev = if k == 1 { base } else { state.prev_sleep };
                let high = if self.growth_whole != 0 {
                    prev.saturating_mul(self.growth_whole)
                } else {
                    f64_to_nanos(prev as f64 * self.params.growth).max(base)
                };
                (base + uniform_inclusive(rng, high - base)).min(cap)
            }
            Jitter::DecorrelatedV2 => self.polly_v2(state, k, rng),
            Jitter::Proportional => {
                let d = self.nominal_ns(k) as f64;
                let f = self.params.factor;
                let scale = 1.0 - f + 2.0 * f * unit_f64(rng);
                f64_to_nanos(d * scale).min(cap)
            }
            Jitter::Additive => {
                // Go's `wait.Jitter`: `d + time.Duration(rand * f * d)`, truncated.
                let d = self.nominal_ns(k);
                let extra = unit_f64(rng) * self.params.factor * d as f64;
                d.saturating_add(extra as u64)
            }
        };
        state.prev_sleep = sleep;
        sleep
    }

    /// Polly's `DecorrelatedJitterBackoffV2` (Polly.Core `RetryHelper`): with `t = (k-1) + U[0,1)`,
    /// `f(t) = 2^t * tanh(sqrt(4 t))`, the sleep is `(f(t) - f_prev) / 1.4 * base`, capped.
    fn polly_v2<R: Rng + ?Sized>(&self, state: &mut BackoffState, k: u32, rng: &mut R) -> u64 {
        const P_FACTOR: f64 = 4.0;
        const RP_SCALING: f64 = 1.0 / 1.4;
        let t = (k - 1) as f64 + unit_f64(rng);
        let next = t.exp2() * (P_FACTOR * t).sqrt().tanh();
        let prev = state.prev_formula;
        state.prev_formula = next;
        if !next.is_finite() || !prev.is_finite() {
            return self.cap;
        }
        let sleep = (next - prev) * RP_SCALING * self.base as f64;
        f64_to_nanos(sleep).min(self.cap)
    }

    /// An endless iterator of sleeps for one fresh request (retry 1, 2, ...).
    pub fn sleeps<'a, R: Rng + ?Sized>(
        &'a self,
        rng: &'a mut R,
    ) -> impl Iterator<Item = Duration> + 'a {
        let mut state = BackoffState::new();
        std::iter::repeat_with(move || self.next_delay(&mut state, rng))
    }
}

/// `min(cap, base * multiplier^i)` in nanoseconds without overflow (`i = k - 1`).
fn nominal_exact(base: u64, multiplier: f64, cap: u64, i: u32) -> u64 {
    let value = base as f64 * multiplier.powi(i.min(i32::MAX as u32) as i32);
    if value.is_finite() && value < cap as f64 {
        f64_to_nanos(value).min(cap)
    } else {
        cap
    }
}

/// A uniform integer in `[0, n]`.
#[inline]
fn uniform_inclusive<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
    u64_inclusive(rng, 0, n)
}

#[cfg(test)]
mod tests;
