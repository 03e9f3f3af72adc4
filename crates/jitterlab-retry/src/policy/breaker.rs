//! A circuit breaker: stop sending to a server that keeps failing, then probe it.
//!
//! - **Closed**: attempts pass; their results are counted over a sliding `window` (a ring of
//!   time slots). When at least `min_requests` results are in the window and the share of
//!   failures reaches `failure_ratio`, the breaker opens.
//! - **Open** until `open_for` has passed: every attempt is refused.
//! - **Half-open**: exactly one probe attempt is let through; its success closes the breaker
//!   with an empty window, its failure opens it again for `open_for`.
//!
//! The breaker is pure: [`Breaker::allow`] before an attempt and [`Breaker::record`] after it,
//! both with `now` (a [`Duration`] since the caller's clock origin; a simulator uses the
//! `_nanos` twins). In half-open, the first result recorded decides (as in resilience4j, a
//! result of an attempt let through before the breaker opened counts too); results recorded
//! while open are ignored.

use crate::param::ParamError;
use crate::policy::window::SlidingWindow;
use std::time::Duration;

use crate::time::{Exact, from_nanos, to_nanos};

/// A circuit breaker's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerConfig {
    /// Share of failures in the window that opens the breaker, in (0, 1] (default 0.5).
    pub failure_ratio: f64,
    /// Results needed in the window before the breaker may open, at least 1 (default 20).
    pub min_requests: u32,
    /// Length of the sliding window, at least 1 ms (default 10 s).
    pub window: Duration,
    /// How long the breaker stays open before a probe, above 0 (default 5 s).
    pub open_for: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            failure_ratio: 0.5,
            min_requests: 20,
            window: Duration::from_secs(10),
            open_for: Duration::from_secs(5),
        }
    }
}

impl BreakerConfig {
    /// Checks the parameters; errors name the field (`window`).
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.failure_ratio.is_finite()
            && self.failure_ratio > 0.0
            && self.failure_ratio <= 1.0)
        {
            return Err(ParamError::new(
                "failure_ratio",
                self.failure_ratio,
                "a number above 0 and at most 1",
            ));
        }
        if self.min_requests == 0 {
            return Err(ParamError::new(
                "min_requests",
                self.min_requests,
                "an integer of at least 1",
            ));
        }
        if self.window < Duration::from_millis(1) {
            return Err(ParamError::new(
                "window",
                Exact(self.window),
                "a duration of at least 1ms",
            ));
        }
        if to_nanos(self.open_for) == 0 {
            return Err(ParamError::new(
                "open_for",
                Exact(self.open_for),
                "a duration greater than 0",
            ));
        }
        Ok(())
    }
}

/// The breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BreakerState {
    /// Attempts pass and are counted.
    Closed,
    /// Attempts are refused until `until`.
    Open {
        /// When the breaker lets a probe through.
        until: Duration,
    },
    /// One probe is allowed (`probing`: it has been let through and its result is awaited).
    HalfOpen {
        /// True once the probe has been let through.
        probing: bool,
    },
}

/// A circuit breaker.
#[derive(Debug, Clone)]
pub struct Breaker {
    config: BreakerConfig,
    state: Phase,
    /// `config.open_for` in nanoseconds.
    open_for: u64,
    /// Counts results (`a`) and failures (`b`) while closed.
    window: SlidingWindow,
}

/// [`BreakerState`] with the reopening instant in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Closed,
    Open { until: u64 },
    HalfOpen { probing: bool },
}

impl Breaker {
    /// A closed breaker, once `config` is validated.
    pub fn new(config: BreakerConfig) -> Result<Breaker, ParamError> {
        config.validate()?;
        Ok(Breaker {
            config,
            state: Phase::Closed,
            open_for: to_nanos(config.open_for),
            window: SlidingWindow::new(to_nanos(config.window)),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// The state at the last call (an open breaker whose time is up turns half-open at the
    /// next [`Breaker::allow`]).
    pub fn state(&self) -> BreakerState {
        match self.state {
            Phase::Closed => BreakerState::Closed,
            Phase::Open { until } => BreakerState::Open {
                until: from_nanos(until),
            },
            Phase::HalfOpen { probing } => BreakerState::HalfOpen { probing },
        }
    }

    /// True while half-open with the probe let through and its result awaited.
    pub fn is_probing(&self) -> bool {
        self.state == Phase::HalfOpen { probing: true }
    }

    /// May an attempt be sent at `now`? In half-open, true exactly once (the probe).
    #[inline]
    pub fn allow(&mut self, now: impl Into<Duration>) -> bool {
        self.allow_nanos(to_nanos(now.into()))
    }

    /// [`Breaker::allow`] with `now` in integer nanoseconds.
    #[inline]
    pub fn allow_nanos(&mut self, now: u64) -> bool {
        match self.state {
            Phase::Closed => true,
            Phase::Open { until } if now >= until => {
                self.state = Phase::HalfOpen { probing: true };
                true
            }
            Phase::Open { .. } => false,
            Phase::HalfOpen { probing: false } => {
                self.state = Phase::HalfOpen { probing: true };
                true
            }
            Phase::HalfOpen { probing: true } => false,
        }
    }

    /// Would an attempt sent at `at` be let through, the state staying as it is now? A retry
    /// due then is not worth sleeping for when this says no. Changes nothing.
    pub fn would_allow(&self, at: impl Into<Duration>) -> bool {
        self.would_allow_nanos(to_nanos(at.into()))
    }

    /// [`Breaker::would_allow`] with `at` in integer nanoseconds.
    #[inline]
    pub fn would_allow_nanos(&self, at: u64) -> bool {
        match self.state {
            Phase::Closed | Phase::HalfOpen { probing: false } => true,
            Phase::Open { until } => at >= until,
            Phase::HalfOpen { probing: true } => false,
        }
    }

    /// Records an attempt's result at `now`.
    #[inline]
    pub fn record(&mut self, now: impl Into<Duration>, success: bool) {
        self.record_nanos(to_nanos(now.into()), success);
    }

    /// [`Breaker::record`] with `now` in integer nanoseconds.
    #[inline]
    pub fn record_nanos(&mut self, now: u64, success: bool) {
        match self.state {
            Phase::Closed => {
                self.window.add(now, 1, u32::from(!success));
                let (results, failures) = self.window.sums(now);
                if !success
                    && results >= u64::from(self.config.min_requests)
                    && failures as f64 >= self.config.failure_ratio * results as f64
                {
                    self.open(now);
                }
            }
            Phase::HalfOpen { .. } => {
                if success {
                    self.state = Phase::Closed;
                    self.window.clear();
                } else {
                    self.open(now);
                }
            }
            Phase::Open { .. } => {}
        }
    }

    /// Gives back the probe [`Breaker::allow`] let through when its result will never come
    /// (its caller was cancelled): a half-open breaker lets the next attempt probe instead.
    /// Does nothing in any other state.
    pub fn abandon_probe(&mut self) {
        if self.is_probing() {
            self.state = Phase::HalfOpen { probing: false };
        }
    }

    fn open(&mut self, now: u64) {
        self.state = Phase::Open {
            until: now.saturating_add(self.open_for),
        };
        self.window.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    fn breaker() -> Breaker {
        Breaker::new(BreakerConfig::default()).unwrap()
    }

    #[test]
    fn opens_at_the_threshold_not_before() {
        let mut b = breaker();
        // 19 failures: below min_requests (20), stays closed.
        for i in 0..19 {
            assert!(b.allow(at_ms(i)));
            b.record(at_ms(i), false);
        }
        assert_eq!(b.state(), BreakerState::Closed);
        b.record(at_ms(19), false);
        assert_eq!(
            b.state(),
            BreakerState::Open {
                until: at_ms(5_019)
            }
        );
        assert!(!b.allow(at_ms(5_018)));
    }

    #[test]
    fn ratio_below_threshold_stays_closed() {
        let mut b = breaker();
        // 11 successes, 10 failures: 10/21 < 0.5.
        for i in 0..11 {
            b.record(at_ms(i), true);
        }
        for i in 0..10 {
            b.record(at_ms(100 + i), false);
        }
        assert_eq!(b.state(), BreakerState::Closed);
        // One more failure: 11/22 = 0.5 reaches the threshold.
        b.record(at_ms(200), false);
        assert!(matches!(b.state(), BreakerState::Open { .. }));
    }

    #[test]
    fn old_failures_leave_the_window() {
        let mut b = breaker();
        for i in 0..19 {
            b.record(at_ms(i), false);
        }
        // 11 s later the 19 failures are out of the 10 s window.
        b.record(at_ms(11_000), false);
        assert_eq!(b.state(), BreakerState::Closed);
    }

    fn opened() -> Breaker {
        let mut b = breaker();
        for _ in 0..20 {
            b.record(at_ms(0), false);
        }
        assert_eq!(
            b.state(),
            BreakerState::Open {
                until: at_ms(5_000)
            }
        );
        b
    }

    #[test]
    fn half_open_lets_exactly_one_probe_and_success_closes() {
        let mut b = opened();
        assert!(!b.allow(at_ms(4_999)));
        assert!(b.allow(at_ms(5_000)), "the probe");
        assert!(!b.allow(at_ms(5_001)), "only one probe");
        assert!(!b.allow(at_ms(9_000)));
        b.record(at_ms(9_000), true);
        assert_eq!(b.state(), BreakerState::Closed);
        // The window was cleared: 19 new failures do not reopen it.
        for _ in 0..19 {
            assert!(b.allow(at_ms(9_001)));
            b.record(at_ms(9_001), false);
        }
        assert_eq!(b.state(), BreakerState::Closed);
    }

    #[test]
    fn an_abandoned_probe_lets_the_next_attempt_probe() {
        let mut b = breaker();
        b.abandon_probe();
        assert_eq!(
            b.state(),
            BreakerState::Closed,
            "closed: nothing to give back"
        );
        for i in 0..20 {
            b.allow(at_ms(i));
            b.record(at_ms(i), false);
        }
        assert!(b.allow(at_ms(5_019)), "the probe");
        assert!(!b.allow(at_ms(5_020)), "only one probe");
        b.abandon_probe();
        assert!(b.allow(at_ms(5_021)), "the probe's slot was given back");
        assert!(!b.allow(at_ms(5_022)), "and taken again");
        b.record(at_ms(5_030), true);
        assert_eq!(b.state(), BreakerState::Closed);
    }

    #[test]
    fn would_allow_peeks_without_changing_the_state() {
        let mut b = opened();
        assert!(!b.would_allow(at_ms(4_999)));
        assert!(b.would_allow(at_ms(5_000)));
        assert_eq!(
            b.state(),
            BreakerState::Open {
                until: at_ms(5_000)
            }
        );
        assert!(b.allow(at_ms(5_000)), "the probe");
        assert!(!b.would_allow(at_ms(9_000)), "its result is awaited");
        b.abandon_probe();
        assert!(b.would_allow(at_ms(9_000)));
        assert!(breaker().would_allow(at_ms(0)));
    }

    #[test]
    fn failed_probe_reopens_for_open_for() {
        let mut b = opened();
        assert!(b.allow(at_ms(6_000)));
        b.record(at_ms(6_500), false);
        assert_eq!(
            b.state(),
            BreakerState::Open {
                until: at_ms(11_500)
            }
        );
        assert!(!b.allow(at_ms(11_499)));
        assert!(b.allow(at_ms(11_500)));
        // Results recorded while open are ignored.
        let mut c = opened();
        c.record(at_ms(1), true);
        assert_eq!(
            c.state(),
            BreakerState::Open {
                until: at_ms(5_000)
            }
        );
    }

    #[test]
    fn config_is_validated_naming_the_field() {
        let d = BreakerConfig::default();
        let cases = [
            (
                BreakerConfig {
                    failure_ratio: 0.0,
                    ..d
                },
                "failure_ratio",
            ),
            (
                BreakerConfig {
                    failure_ratio: 1.5,
                    ..d
                },
                "failure_ratio",
            ),
            (
                BreakerConfig {
                    failure_ratio: f64::NAN,
                    ..d
                },
                "failure_ratio",
            ),
            (
                BreakerConfig {
                    min_requests: 0,
                    ..d
                },
                "min_requests",
            ),
            (
                BreakerConfig {
                    window: Duration::ZERO,
                    ..d
                },
                "window",
            ),
            (
                BreakerConfig {
                    open_for: Duration::ZERO,
                    ..d
                },
                "open_for",
            ),
        ];
        for (config, field) in cases {
            let err = Breaker::new(config).unwrap_err();
            assert_eq!(err.field, field, "{err}");
        }
    }
}
