//! Piecewise rate profiles for open (Poisson) workloads, and their exact arrival times.
//!
//! A profile is a list of points `[(t0, r0), (t1, r1), ...]`: times in integer nanoseconds,
//! rates in requests per second. The rate is
//!
//! - **linear between consecutive points**: two points with equal rates make a constant
//!   segment, two with different rates a ramp, and two points at the same time a step (the
//!   rate jumps there; it is right-continuous: at the step's time it already has the later
//!   point's value);
//! - **zero before the first point** (a profile starting at `5s` sends nothing before 5 s, as
//!   the constant workload's `start` does);
//! - **the last point's rate after the last point**, forever (arrivals stop at the horizon
//!   given to [`RateProfile::arrivals`]).
//!
//! So a 5 s spike from 40/s to 80/s at t = 20 s is
//! `[(0s, 40), (20s, 40), (20s, 80), (25s, 80), (25s, 40)]`, and `[(0s, 40), (20s, 80),
//! (25s, 40)]` is a ramp up over 20 s and down over 5 s.
//!
//! **Arrivals** are a non-homogeneous Poisson process generated exactly by inverting the
//! integrated rate Λ (no thinning, no clock stepping): from the previous arrival `p`, one
//! unit-rate exponential `E` is drawn and the next arrival solves `Λ(t) - Λ(p) = E`, segment by
//! segment in closed form — in a constant segment `t = p + E / r`, in a ramp the root of a
//! quadratic in its cancellation-free form, zero-rate segments are skipped — then rounded to
//! the nearest nanosecond (the next gap starts from the rounded time, as the constant-rate
//! workload's do). Exactly one draw per call of [`Arrivals::next_arrival`] until it returns
//! `None`, none after. In a constant segment the computation is the constant-rate workload's,
//! operation for operation (`round((1e9 / r) * E)` nanoseconds after the previous arrival,
//! from the same stream): a constant profile, or a stepped one up to its first change of rate,
//! gives the same arrival times bit for bit. Adjacent constant segments of equal rate are
//! merged first, so that points which do not change the rate do not change the arrivals.
//!
//! **Base and triggers.** [`RateProfile::base`] is the rate at which the profile begins (the
//! rate at its first point, which is the rate at time 0 for profiles starting at 0);
//! [`RateProfile::trigger_windows`] are the spans where the rate is above the base: a load
//! spike or ramp used as the trigger of a recovery measurement.

use rand::Rng;
use rand_distr::{Distribution, Exp1};

use crate::param::ParamError;
use crate::time::{NANOS_PER_SEC, SimTime, f64_to_nanos};

/// Nanoseconds per second, as a float (exact).
const NS: f64 = NANOS_PER_SEC as f64;

/// One piece of the rate function: linear from `r0` at `start` to `r1` at `end` (exclusive);
/// `end` is `u64::MAX` for the last piece, which is constant.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Segment {
    start: u64,
    end: u64,
    r0: f64,
    r1: f64,
}

impl Segment {
    fn is_constant(&self) -> bool {
        self.r0 == self.r1
    }

    /// The rate at `t` in `[start, end]`.
    fn rate_at(&self, t: u64) -> f64 {
        if self.is_constant() {
            self.r0
        } else {
            let f = (t - self.start) as f64 / (self.end - self.start) as f64;
            self.r0 + (self.r1 - self.r0) * f
        }
    }

    /// Expected arrivals in `[a, b)`, `start <= a <= b <= end` (exact for a linear rate).
    fn mass(&self, a: u64, b: u64) -> f64 {
        if b <= a {
            return 0.0;
        }
        let width = (b - a) as f64 / NS;
        if self.is_constant() {
            self.r0 * width
        } else {
            (self.rate_at(a) + self.rate_at(b)) * 0.5 * width
        }
    }
}

/// A validated piecewise-linear rate profile (see the module docs for the rule).
#[derive(Debug, Clone, PartialEq)]
pub struct RateProfile {
    points: Vec<(SimTime, f64)>,
    /// Covers `[0, u64::MAX)` without gaps; no empty segment; no two adjacent constant
    /// segments of equal rate.
    segments: Vec<Segment>,
}

impl RateProfile {
    /// A profile through `points`: at least one; times non-decreasing; rates finite and >= 0
    /// (requests per second). Errors name the point: `rate[2]`.
    pub fn new(points: Vec<(SimTime, f64)>) -> Result<RateProfile, ParamError> {
        if points.is_empty() {
            return Err(ParamError::new(
                "rate",
                "[]",
                "at least one [time, rate] point",
            ));
        }
        for (i, &(t, r)) in points.iter().enumerate() {
            if !(r.is_finite() && r >= 0.0) {
                return Err(ParamError::new(
                    format!("rate[{i}]"),
                    r,
                    "a finite rate of at least 0 requests per second",
                ));
            }
            if i > 0 && t < points[i - 1].0 {
                return Err(ParamError::new(
                    format!("rate[{i}]"),
                    t,
                    format!(
                        "a time at or after the previous point's ({})",
                        points[i - 1].0
                    ),
                ));
            }
        }
        let segments = segments(&points);
        Ok(RateProfile { points, segments })
    }

    /// `rate` requests per second from time 0 on.
    pub fn constant(rate: f64) -> Result<RateProfile, ParamError> {
        RateProfile::new(vec![(SimTime::ZERO, rate)])
    }

    /// The points, as given.
    pub fn points(&self) -> &[(SimTime, f64)] {
        &self.points
    }

    fn segment_at(&self, t: u64) -> &Segment {
        // Segments cover [0, MAX) and the first starts at 0, so the index is at least 0.
        let i = self.segments.partition_point(|s| s.start <= t) - 1;
        &self.segments[i]
    }

    /// The rate at `t`, in requests per second.
    pub fn rate_at(&self, t: SimTime) -> f64 {
        self.segment_at(t.as_nanos()).rate_at(t.as_nanos())
    }

    /// Expected arrivals in `[from, to)`: Λ(to) - Λ(from), summed in closed form per segment.
    pub fn expected_arrivals(&self, from: SimTime, to: SimTime) -> f64 {
        let (a, b) = (from.as_nanos(), to.as_nanos());
        self.segments
            .iter()
            .filter(|s| s.start < b && s.end > a)
            .map(|s| s.mass(s.start.max(a), s.end.min(b)))
            .sum()
    }

    /// The integrated rate Λ(t): expected arrivals in `[0, t)`.
    pub fn integral(&self, t: SimTime) -> f64 {
        self.expected_arrivals(SimTime::ZERO, t)
    }

    /// The rate at which the profile begins: its rate at the first point's time (after a step
    /// there, if any). For a profile starting at 0 this is the rate at time 0.
    pub fn base(&self) -> f64 {
        self.rate_at(self.points[0].0)
    }

    /// The spans `[start, end)` from the first point on where the rate is above
    /// [`RateProfile::base`], in order and merged; `end` is [`SimTime::NEVER`] when the rate
    /// stays above the base for good. Where a ramp crosses the base, the span starts or ends
    /// at the crossing, rounded to the nearest nanosecond.
    pub fn trigger_windows(&self) -> Vec<(SimTime, SimTime)> {
        let base = self.base();
        let first = self.points[0].0.as_nanos();
        let mut out: Vec<(u64, u64)> = Vec::new();
        for s in self.segments.iter().filter(|s| s.end > first) {
            let start = s.start.max(first);
            let span = if s.is_constant() {
                (s.r0 > base).then_some((start, s.end))
            } else {
                let cross = f64_to_nanos(
                    s.start as f64 + (base - s.r0) / (s.r1 - s.r0) * (s.end - s.start) as f64,
                );
                if s.r1 > s.r0 {
                    (s.r1 > base).then_some((start.max(cross), s.end))
                } else {
                    (s.r0 > base).then_some((start, s.end.min(cross)))
                }
            };
            let Some((a, b)) = span.filter(|(a, b)| a < b) else {
                continue;
            };
            match out.last_mut() {
                Some(last) if last.1 >= a => last.1 = last.1.max(b),
                _ => out.push((a, b)),
            }
        }
        out.into_iter()
            .map(|(a, b)| (SimTime(a), SimTime(b)))
            .collect()
    }

    /// The arrival times of this profile strictly before `end`, from time 0.
    pub fn arrivals(&self, end: SimTime) -> Arrivals {
        Arrivals {
            segments: self.segments.clone(),
            seg: 0,
            pos: 0,
            end: end.as_nanos(),
            done: false,
        }
    }
}

/// The segments of validated `points`: a silent one before the first point, one per pair of
/// points at different times, the constant tail; adjacent constant ones of equal rate merged.
fn segments(points: &[(SimTime, f64)]) -> Vec<Segment> {
    let first = points[0].0.as_nanos();
    let last = points[points.len() - 1];
    let silent = (first > 0).then_some(Segment {
        start: 0,
        end: first,
        r0: 0.0,
        r1: 0.0,
    });
    let inner = points.windows(2).filter_map(|w| {
        let ((ta, ra), (tb, rb)) = (w[0], w[1]);
        (ta < tb).then_some(Segment {
            start: ta.as_nanos(),
            end: tb.as_nanos(),
            r0: ra,
            r1: rb,
        })
    });
    let tail = Segment {
        start: last.0.as_nanos(),
        end: u64::MAX,
        r0: last.1,
        r1: last.1,
    };
    let mut merged: Vec<Segment> = Vec::with_capacity(points.len() + 1);
    for s in silent.into_iter().chain(inner).chain([tail]) {
        match merged.last_mut() {
            Some(prev) if prev.is_constant() && s.is_constant() && prev.r0 == s.r0 => {
                prev.end = s.end;
            }
            _ => merged.push(s),
        }
    }
    merged
}

/// Offset in nanoseconds, from a point where the rate is `a` (per second) and grows by
/// `slope` per second per nanosecond, at which `m` expected arrivals have accumulated:
/// the root of `a x + slope x^2 / 2 = m * 1e9` written as `2M / (a + sqrt(a^2 + 2 slope M))`,
/// which never subtracts nearly equal numbers (callers ensure the root exists).
fn ramp_offset(a: f64, slope: f64, m: f64) -> f64 {
    let big_m = m * NS;
    if big_m <= 0.0 {
        return 0.0;
    }
    let disc = (a * a + 2.0 * slope * big_m).max(0.0);
    2.0 * big_m / (a + disc.sqrt())
}

/// The arrival times of a [`RateProfile`] before a horizon; see the module docs.
#[derive(Debug, Clone)]
pub struct Arrivals {
    segments: Vec<Segment>,
    /// Index of the segment holding `pos`.
    seg: usize,
    /// The previous arrival (or the start, 0), in nanoseconds.
    pos: u64,
    end: u64,
    done: bool,
}

impl Arrivals {
    /// The next arrival time, or `None` once it would be at or past the horizon (and for
    /// ever after). Draws exactly one unit exponential from `rng` per call until then.
    pub fn next_arrival<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Option<SimTime> {
        if self.done {
            return None;
        }
        let mut m: f64 = Exp1.sample(rng);
        while let Some(&s) = self.segments.get(self.seg) {
            if self.pos >= self.end {
                break;
            }
            if self.pos >= s.end {
                self.seg += 1;
                continue;
            }
            let found = if s.is_constant() {
                // The constant-rate workload's exact expression: mean gap times E, rounded.
                (s.r0 > 0.0)
                    .then(|| self.pos.saturating_add(f64_to_nanos((NS / s.r0) * m)))
                    .filter(|&t| t < s.end)
            } else {
                let a = s.rate_at(self.pos);
                (m < s.mass(self.pos, s.end)).then(|| {
                    let slope = (s.r1 - s.r0) / (s.end - s.start) as f64;
                    // The root lies in the segment (m is below its mass): the clamp only
                    // guards against rounding.
                    let x = f64_to_nanos(ramp_offset(a, slope, m));
                    self.pos + x.min(s.end - self.pos)
                })
            };
            match found {
                Some(t) if t < self.end => {
                    self.pos = t;
                    return Some(SimTime(t));
                }
                Some(_) => break,
                None => {
                    m = (m - s.mass(self.pos, s.end)).max(0.0);
                    self.pos = s.end;
                    self.seg += 1;
                }
            }
        }
        self.done = true;
        None
    }
}

#[cfg(test)]
mod tests;
