//! Client-side adaptive throttling (Google SRE book, "Handling Overload", ch. 21).
//!
//! Each client (or a shared scope) remembers, over a sliding `window`, how many attempts it
//! was asked to send (`requests`) and how many the backend accepted (`accepts`). While the
//! backend accepts everything the two stay equal and nothing is rejected; once fewer than
//! `requests / K` are accepted, the client rejects new attempts itself, before they reach the
//! network, with probability
//!
//! ```text
//! p = max(0, (requests - K * accepts) / (requests + 1))
//! ```
//!
//! so that roughly `K` attempts per accepted one still go out (`K = 2` by default; smaller is
//! more aggressive, and `K = 1` keeps sending only what was accepted).
//!
//! Decisions this module makes where the book is terse:
//!
//! - **A locally rejected attempt counts in `requests`.** `requests` is everything the
//!   application layer asked the throttle to send, as in the book. This is what lets the
//!   throttle open again: rejections keep `requests` growing while accepts stay put, so the
//!   probability approaches but never reaches 1 and a few attempts still probe the backend.
//! - **Order within [`Throttle::admit`]:** the probability is computed from the window *before*
//!   this attempt is counted (an empty window gives 0, not 1/2 for the very first attempt);
//!   then one uniform `u` in [0, 1) is drawn *only if* `p > 0`, and the attempt is rejected when
//!   `u < p`; then the attempt is counted in `requests`, admitted or not. While the backend
//!   keeps up, `p` is 0 and no random number is drawn, so adding a throttle to a healthy run
//!   leaves every random stream where it was.
//! - **What "accepted" means is the caller's:** [`Throttle::on_accept`] is called when the
//!   backend took the attempt (in the simulator: any answer that is not an overload rejection
//!   such as 429 or 503, and not a timeout).
//!
//! Pure state: every method takes `now`, the generator is passed in; nothing here knows the
//! simulator.

use rand_core::Rng;

use crate::draw::unit_f64;

use crate::param::ParamError;
use crate::policy::window::SlidingWindow;
use std::time::Duration;

use crate::time::{Exact, to_nanos};

/// Adaptive throttling parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThrottleConfig {
    /// Attempts allowed per accepted attempt before rejecting locally, at least 1 (default 2).
    pub k: f64,
    /// Length of the sliding window, at least 1 ms (default 2 minutes, the book's history).
    pub window: Duration,
}

impl Default for ThrottleConfig {
    fn default() -> Self {
        ThrottleConfig {
            k: 2.0,
            window: Duration::from_secs(120),
        }
    }
}

impl ThrottleConfig {
    /// Checks the parameters: `k` finite and at least 1, `window` at least 1 ms (like the
    /// ratio budget's and the breaker's windows: the window is kept in ten slots).
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.k.is_finite() && self.k >= 1.0) {
            return Err(ParamError::new(
                "k",
                self.k,
                "a finite number of at least 1",
            ));
        }
        if self.window < Duration::from_millis(1) {
            return Err(ParamError::new(
                "window",
                Exact(self.window),
                "a duration of at least 1ms",
            ));
        }
        Ok(())
    }
}

/// The state of an adaptive throttle: requests (`a`) and accepts (`b`) over the window.
#[derive(Debug, Clone)]
pub struct Throttle {
    config: ThrottleConfig,
    window: SlidingWindow,
}

impl Throttle {
    /// An empty throttle (it rejects nothing until the backend stops accepting).
    pub fn new(config: ThrottleConfig) -> Result<Throttle, ParamError> {
        config.validate()?;
        Ok(Throttle {
            config,
            window: SlidingWindow::new(to_nanos(config.window)),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ThrottleConfig {
        &self.config
    }

    /// `(requests, accepts)` in the window at `now`.
    pub fn counts(&self, now: impl Into<Duration>) -> (u64, u64) {
        self.window.sums(to_nanos(now.into()))
    }

    /// The probability that an attempt made at `now` is rejected locally:
    /// `max(0, (requests - K * accepts) / (requests + 1))` over the window.
    #[inline]
    pub fn reject_probability(&self, now: impl Into<Duration>) -> f64 {
        self.reject_probability_nanos(to_nanos(now.into()))
    }

    #[inline]
    fn reject_probability_nanos(&self, now: u64) -> f64 {
        let (requests, accepts) = self.window.sums(now);
        let requests = requests as f64;
        ((requests - self.config.k * accepts as f64) / (requests + 1.0)).max(0.0)
    }

    /// Asks to send an attempt at `now`: true to send it, false when it is rejected locally
    /// (it then fails fast, without reaching the network). Either way it counts as a request.
    /// Draws one uniform number from `rng` only when the rejection probability is above 0.
    #[inline]
    pub fn admit<R: Rng + ?Sized>(&mut self, now: impl Into<Duration>, rng: &mut R) -> bool {
        self.admit_nanos(to_nanos(now.into()), rng)
    }

    /// [`Throttle::admit`] with `now` in integer nanoseconds.
    #[inline]
    pub fn admit_nanos<R: Rng + ?Sized>(&mut self, now: u64, rng: &mut R) -> bool {
        let p = self.reject_probability_nanos(now);
        let admitted = p <= 0.0 || unit_f64(rng) >= p;
        self.window.add(now, 1, 0);
        admitted
    }

    /// The backend accepted an attempt (its answer reached the client at `now`).
    #[inline]
    pub fn on_accept(&mut self, now: impl Into<Duration>) {
        self.on_accept_nanos(to_nanos(now.into()));
    }

    /// [`Throttle::on_accept`] with `now` in integer nanoseconds.
    #[inline]
    pub fn on_accept_nanos(&mut self, now: u64) {
        self.window.add(now, 0, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng;

    fn at_ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    fn throttle(k: f64) -> Throttle {
        Throttle::new(ThrottleConfig {
            k,
            window: Duration::from_secs(10),
        })
        .unwrap()
    }

    /// Counts `requests` admitted attempts and `accepts` accepts at `now` (a backend that
    /// answered; no random numbers are needed while the probability stays 0, and this test
    /// helper adds straight to the window so that the counts are exact).
    fn seed_counts(t: &mut Throttle, now: Duration, requests: u32, accepts: u32) {
        t.window.add(to_nanos(now), requests, accepts);
    }

    #[test]
    fn probability_is_the_book_formula() {
        let mut t = throttle(2.0);
        assert_eq!(t.reject_probability(at_ms(0)), 0.0, "empty window");
        // 10 requests, 2 accepts, K = 2: (10 - 4) / 11.
        seed_counts(&mut t, at_ms(0), 10, 2);
        assert_eq!(t.reject_probability(at_ms(1)), 6.0 / 11.0);
        // Exactly half accepted with K = 2: nothing rejected; one accept fewer: (10 - 8) / 11.
        let mut t = throttle(2.0);
        seed_counts(&mut t, at_ms(0), 10, 5);
        assert_eq!(t.reject_probability(at_ms(1)), 0.0);
        let mut t = throttle(2.0);
        seed_counts(&mut t, at_ms(0), 10, 4);
        assert_eq!(t.reject_probability(at_ms(1)), 2.0 / 11.0);
        // K = 1.5, nothing accepted: 99 / 100 (never 1).
        let mut t = throttle(1.5);
        seed_counts(&mut t, at_ms(0), 99, 0);
        assert_eq!(t.reject_probability(at_ms(1)), 0.99);
    }

    #[test]
    fn rejected_attempts_count_as_requests() {
        let mut t = throttle(2.0);
        seed_counts(&mut t, at_ms(0), 4, 0);
        let mut rng = test_rng(3);
        let mut rejected = 0;
        for i in 0..100 {
            let before = t.counts(at_ms(1)).0;
            let p = t.reject_probability(at_ms(1));
            assert_eq!(p, before as f64 / (before as f64 + 1.0));
            if !t.admit(at_ms(1), &mut rng) {
                rejected += 1;
            }
            assert_eq!(t.counts(at_ms(1)), (5 + i, 0), "admitted or not, it counts");
        }
        assert!(rejected > 90, "{rejected}");
    }

    #[test]
    fn draw_happens_only_when_probability_is_positive_and_rejects_below_p() {
        let mut t = throttle(2.0);
        let mut rng = test_rng(9);
        let untouched = rng.clone();
        // Healthy: each request accepted, p stays 0, the stream is not advanced.
        for i in 0..50 {
            assert!(t.admit(at_ms(i), &mut rng));
            t.on_accept(at_ms(i));
        }
        assert_eq!(rng, untouched, "no draw while p = 0");
        // Now p = (n - 2a) / (n + 1) > 0: exactly one draw per admit, rejected iff u < p.
        let mut t = throttle(2.0);
        seed_counts(&mut t, at_ms(0), 10, 2);
        for _ in 0..200 {
            let p = t.reject_probability(at_ms(1));
            let u = unit_f64(&mut rng.clone());
            let admitted = t.admit(at_ms(1), &mut rng);
            assert_eq!(admitted, u >= p, "u = {u}, p = {p}");
        }
    }

    #[test]
    fn rejection_frequency_matches_probability() {
        // From the same counts (10 requests, 2 accepts) every time: p = 6/11.
        let mut base = throttle(2.0);
        seed_counts(&mut base, at_ms(0), 10, 2);
        let mut rng = test_rng(11);
        let n = 200_000;
        let rejected = (0..n)
            .filter(|_| !base.clone().admit(at_ms(1), &mut rng))
            .count() as f64;
        let p = 6.0 / 11.0;
        let sigma = (n as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (rejected - n as f64 * p).abs() < 4.0 * sigma,
            "{rejected} vs {}",
            n as f64 * p
        );
    }

    #[test]
    fn capacity_limited_backend_gets_k_attempts_per_accept() {
        // The client is asked for 1000 attempts/s; the backend accepts 100/s (a token bucket,
        // burst 10). In steady state p = (R - K A) / (R + 1) with R = 1000 and A = 100 per
        // second of window, so R (1 - p) ~ K A = 200 attempts/s go out: 2 per accept.
        let mut t = Throttle::new(ThrottleConfig {
            k: 2.0,
            window: Duration::from_secs(10),
        })
        .unwrap();
        let mut rng = test_rng(5);
        let (mut tokens, mut sent, mut accepted) = (10.0f64, 0u64, 0u64);
        for ms in 0..60_000u64 {
            tokens = (tokens + 0.1).min(10.0);
            if !t.admit(at_ms(ms), &mut rng) {
                continue;
            }
            let accept = tokens >= 1.0;
            if accept {
                tokens -= 1.0;
                t.on_accept(at_ms(ms));
            }
            // Measure the second half only (the first window is a transient).
            if ms >= 30_000 {
                sent += 1;
                accepted += u64::from(accept);
            }
        }
        let per_accept = sent as f64 / accepted as f64;
        assert!((per_accept - 2.0).abs() < 0.05, "{sent} / {accepted}");
        assert!((accepted as f64 / 30.0 - 100.0).abs() < 2.0, "{accepted}");
    }

    #[test]
    fn old_counts_leave_the_window() {
        let mut t = throttle(2.0);
        seed_counts(&mut t, at_ms(0), 100, 0);
        assert!(t.reject_probability(at_ms(9_999)) > 0.99);
        assert_eq!(t.reject_probability(at_ms(10_000)), 0.0);
        let mut rng = test_rng(1);
        assert!(t.admit(at_ms(10_000), &mut rng));
    }

    #[test]
    fn parameters_are_validated_naming_the_field() {
        assert_eq!(ThrottleConfig::default().k, 2.0);
        assert!(Throttle::new(ThrottleConfig::default()).is_ok());
        for (config, field) in [
            (
                ThrottleConfig {
                    k: 0.99,
                    ..Default::default()
                },
                "k",
            ),
            (
                ThrottleConfig {
                    k: f64::NAN,
                    ..Default::default()
                },
                "k",
            ),
            (
                ThrottleConfig {
                    k: f64::INFINITY,
                    ..Default::default()
                },
                "k",
            ),
            (
                ThrottleConfig {
                    window: Duration::ZERO,
                    ..Default::default()
                },
                "window",
            ),
        ] {
            assert_eq!(
                Throttle::new(config).unwrap_err().field,
                field,
                "{config:?}"
            );
        }
        assert!(
            Throttle::new(ThrottleConfig {
                k: 1.0,
                window: Duration::from_millis(1)
            })
            .is_ok()
        );
    }
}
