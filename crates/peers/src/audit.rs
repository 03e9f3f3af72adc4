//! The distribution audit: each configuration's delays, from retry 1 to two retries past the
//! one where its cap is reached, against what its crate's docs state.
//!
//! For every retry `k`, `n` fresh requests are drawn ([`Config::start`], the crate's own retry
//! limit lifted to the retries looked at) and the sample is tested against the documented law: a
//! Kolmogorov–Smirnov test at `ALPHA` for a continuous law, equality for a fixed delay. A
//! crate that documents no law is tested against the plain reading of its docs, and the line
//! says so. Beside the verdict: the largest share of delays exactly at the configured maximum
//! (bunching at the cap), above it, exactly zero, and of requests whose delay fell from one
//! retry to the next (monotone growth).

use std::time::Duration;

use crate::idiom::Config;
use crate::ks;

/// The per-test level: with about 100 tests a run, a level of 0.05 would fail about five
/// lines by chance; at 1e-6 a correct crate fails a line about once in 10 000 runs, and
/// the deviations found are far larger.
pub const ALPHA: f64 = 1e-6;
/// Retries looked at for a configuration without a cap: 1 to `RETRIES`.
pub const RETRIES: u32 = 10;

/// What the docs say the delay before retry `k` is (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Law {
    /// Exactly this.
    Point(f64),
    /// Uniform on `[lo, hi]`.
    Uniform(f64, f64),
    /// Not documented; the plain reading of the docs, uniform on `[lo, hi]` clamped to
    /// `[min, max]` (an atom at each bound the clamp reaches).
    Clamped {
        /// The unclamped law, `U[lo, hi]`.
        lo: f64,
        /// Its top.
        hi: f64,
        /// The floor.
        min: f64,
        /// The cap.
        max: f64,
    },
    /// Not documented; `Some`: the plain reading of the docs, uniform on `[lo, hi]`, where
    /// the crate's clamps cannot bite; `None`: no reading is tested at this retry.
    Undocumented(Option<(f64, f64)>),
}

/// Where each configuration's law comes from, and the law at retry `k`.
pub struct Documented {
    /// The doc text the law is read from (file of the published crate).
    pub source: &'static str,
    /// The configured maximum delay (seconds), if any.
    pub max: Option<f64>,
    /// The retries looked at, 1 to this: the first retry whose (unjittered) delay reaches the
    /// cap, plus 2; [`RETRIES`] without a cap.
    pub retries: u32,
    /// The law at retry `k`.
    pub law: fn(u32) -> Law,
}

fn exp(first: f64, ratio: f64, k: u32, max: f64) -> f64 {
    (first * ratio.powi(k as i32 - 1)).min(max)
}

/// The documented law of `config`.
pub fn documented(config: Config) -> Documented {
    let (source, max, law): (&'static str, Option<f64>, fn(u32) -> Law) = match config {
        Config::BackonDefault => (
            "exponential.rs: jitter false, min 1s, factor 2, max 60s",
            Some(60.0),
            |k| Law::Point(exp(1.0, 2.0, k, 60.0)),
        ),
        Config::BackonJitter => (
            "exponential.rs: \"add a random jitter within (0, current_delay)\"",
            Some(60.0),
            |k| {
                let d = exp(1.0, 2.0, k, 60.0);
                Law::Uniform(d, 2.0 * d)
            },
        ),
        Config::BackoffDefault => (
            "lib.rs: interval * U[1 - f, 1 + f]; max caps the interval, not the randomized one",
            Some(60.0),
            |k| {
                let d = exp(0.5, 1.5, k, 60.0);
                Law::Uniform(0.5 * d, 1.5 * d)
            },
        ),
        Config::BackoffFactorOne => ("lib.rs, as above with f = 1", Some(60.0), |k| {
            Law::Uniform(0.0, 2.0 * exp(0.5, 1.5, k, 60.0))
        }),
        Config::ExpoDefault => (
            "none (\"jitter factor\"); reading d * U[0.7, 1.3]",
            Some(10.0),
            |k| {
                let d = exp(0.1, 2.0, k, f64::INFINITY);
                let (lo, hi) = (0.7 * d, 1.3 * d);
                Law::Undocumented((lo >= 0.1 && hi <= 10.0).then_some((lo, hi)))
            },
        ),
        Config::ExpoJitterOne => (
            "none; reading d * U[0, 2] clamped to [0.1 s, 10 s]",
            Some(10.0),
            |k| {
                let d = exp(0.1, 2.0, k, f64::INFINITY);
                Law::Clamped {
                    lo: 0.0,
                    hi: 2.0 * d,
                    min: 0.1,
                    max: 10.0,
                }
            },
        ),
        Config::RetryPoliciesFull => (
            "retry_policy.rs: Full, \"between 0 and the calculated backoff\"",
            Some(1800.0),
            |k| Law::Uniform(0.0, exp(1.0, 2.0, k, 1800.0)),
        ),
        Config::RetryPoliciesBounded => (
            "retry_policy.rs: Bounded, \"between 50% of min and the calculated backoff\"",
            Some(1800.0),
            |k| Law::Uniform(0.5, exp(1.0, 2.0, k, 1800.0)),
        ),
        Config::TokioRetryExample => (
            "none (\"add jitter to delays\"); reading d * U[0, 1), d = 10^k ms; the crate's `jitter`, unseeded",
            None,
            |k| Law::Undocumented(Some((0.0, 0.01 * 10f64.powi(k as i32 - 1)))),
        ),
        Config::TokioRetryCapped => (
            "none for jitter; max_delay: \"no retry delay will be longer\"; reading d * U[0, 1); the crate's `jitter`, unseeded",
            Some(60.0),
            |k| Law::Undocumented(Some((0.0, exp(1.0, 2.0, k, 60.0)))),
        ),
    };
    // The first retry at the cap (the schedule's first delay and ratio), plus 2.
    let capped = |first: f64, ratio: f64, max: f64| {
        (1..)
            .find(|&k| first * ratio.powi(k as i32 - 1) >= max)
            .unwrap_or(1)
            + 2
    };
    let retries = match config {
        Config::BackonDefault | Config::BackonJitter => capped(1.0, 2.0, 60.0),
        Config::BackoffDefault | Config::BackoffFactorOne => capped(0.5, 1.5, 60.0),
        Config::ExpoDefault | Config::ExpoJitterOne => capped(0.1, 2.0, 10.0),
        Config::RetryPoliciesFull | Config::RetryPoliciesBounded => capped(1.0, 2.0, 1800.0),
        Config::TokioRetryExample => RETRIES,
        Config::TokioRetryCapped => capped(1.0, 2.0, 60.0),
    };
    Documented {
        source,
        max,
        retries,
        law,
    }
}

/// One configuration's audit.
#[derive(Debug, Clone)]
pub struct Line {
    /// The configuration.
    pub config: Config,
    /// Requests drawn per retry.
    pub n: usize,
    /// The retries whose sample fails the documented law (or its reading), with `D` and p.
    pub failures: Vec<(u32, f64, f64)>,
    /// The retries tested.
    pub tested: u32,
    /// The smallest p-value over the tested retries (1 for fixed delays that all match).
    pub min_p: f64,
    /// Largest share, over the retries, of delays exactly at the configured maximum.
    pub at_max: f64,
    /// Largest share of delays above the configured maximum.
    pub above_max: f64,
    /// Largest share of delays shorter than 1 us (exactly zero but for retry-policies, whose
    /// delays are read back against the wall clock).
    pub zeros: f64,
    /// Largest share of requests whose delay fell from the retry before.
    pub fell: f64,
}

impl Line {
    /// The verdict, decided by the test of each retry.
    pub fn verdict(&self) -> String {
        let documented = matches!(
            (documented(self.config).law)(1),
            Law::Point(_) | Law::Uniform(..)
        );
        let worst = self
            .failures
            .iter()
            .map(|&(k, d, _)| format!("k={k} D={d:.3}"))
            .take(3)
            .collect::<Vec<_>>()
            .join(", ");
        match (documented, self.tested, self.failures.is_empty()) {
            (_, 0, _) => "undocumented; nothing to test against".into(),
            (true, _, true) => "as documented".into(),
            (true, _, false) => format!("NOT as documented ({worst})"),
            (false, _, true) => "undocumented; behaves as the reading".into(),
            (false, _, false) => format!("undocumented; NOT the reading ({worst})"),
        }
    }
}

/// Audits `config` with `n` requests per retry, seeds `seed..seed + n`.
pub fn audit(config: Config, n: usize, seed: u64) -> Line {
    let doc = documented(config);
    let paths: Vec<Vec<Option<Duration>>> = (0..n as u64)
        .map(|i| {
            let mut delays = config.start(seed + i, Some(doc.retries));
            (0..doc.retries).map(|_| delays.next_delay()).collect()
        })
        .collect();
    let mut line = Line {
        config,
        n,
        failures: Vec::new(),
        tested: 0,
        min_p: 1.0,
        at_max: 0.0,
        above_max: 0.0,
        zeros: 0.0,
        fell: 0.0,
    };
    for k in 1..=doc.retries {
        let i = k as usize - 1;
        let mut xs: Vec<f64> = paths
            .iter()
            .filter_map(|p| p[i])
            .map(|d| d.as_secs_f64())
            .collect();
        assert_eq!(xs.len(), n, "{config:?} stopped before retry {k}");
        xs.sort_by(f64::total_cmp);
        let share =
            |f: &dyn Fn(f64) -> bool| xs.iter().filter(|&&x| f(x)).count() as f64 / n as f64;
        if let Some(max) = doc.max {
            line.at_max = line.at_max.max(share(&|x| x == max));
            line.above_max = line.above_max.max(share(&|x| x > max));
        }
        line.zeros = line.zeros.max(share(&|x| x < 1e-6));
        if k > 1 {
            let fell = paths.iter().filter(|p| p[i] < p[i - 1]).count() as f64 / n as f64;
            line.fell = line.fell.max(fell);
        }
        let uniform = match (doc.law)(k) {
            Law::Point(x) => {
                line.tested += 1;
                // retry-policies' read-back adds nanoseconds; a fixed delay is exact.
                let off = xs.iter().filter(|&&v| (v - x).abs() > 1e-6).count();
                if off > 0 {
                    line.failures.push((k, off as f64 / n as f64, 0.0));
                    line.min_p = 0.0;
                }
                None
            }
            Law::Uniform(lo, hi) | Law::Undocumented(Some((lo, hi))) => Some((lo, hi)),
            Law::Undocumented(None) => None,
            Law::Clamped { lo, hi, min, max } => {
                line.tested += 1;
                let d = ks::statistic_clamped(&xs, lo, hi, min, max);
                let p = ks::p_value(d, n);
                line.min_p = line.min_p.min(p);
                if p < ALPHA {
                    line.failures.push((k, d, p));
                }
                None
            }
        };
        if let Some((lo, hi)) = uniform {
            line.tested += 1;
            let d = ks::statistic_uniform(&xs, lo, hi);
            let p = ks::p_value(d, n);
            line.min_p = line.min_p.min(p);
            if p < ALPHA {
                line.failures.push((k, d, p));
            }
        }
    }
    line
}

/// The audit of every configuration as a Markdown table.
pub fn table(lines: &[Line]) -> String {
    let pct = |x: f64| format!("{:.1} %", 100.0 * x);
    let mut out = String::from(
        "| crate | configuration | documented law (source) | retries | tested | min p | at max | above max | zero | paths falling | verdict |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for l in lines {
        let doc = documented(l.config);
        let max = |x: f64| {
            if doc.max.is_some() {
                pct(x)
            } else {
                "no max".into()
            }
        };
        out.push_str(&format!(
            "| {} | `{}` | {} | 1–{} | {} | {:.2e} | {} | {} | {} | {} | {} |\n",
            l.config.krate(),
            l.config.code(),
            doc.source,
            doc.retries,
            l.tested,
            l.min_p,
            max(l.at_max),
            max(l.above_max),
            pct(l.zeros),
            pct(l.fell),
            l.verdict()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each line's verdict, as the audit decides it (n = 20 000 per retry; see `ALPHA`).
    #[test]
    fn each_crate_does_what_the_audit_table_says() {
        let expected = [
            (Config::BackonDefault, "as documented"),
            (Config::BackonJitter, "as documented"),
            (Config::BackoffDefault, "as documented"),
            (Config::BackoffFactorOne, "as documented"),
            (Config::ExpoDefault, "undocumented; NOT the reading"),
            (Config::ExpoJitterOne, "undocumented; NOT the reading"),
            (Config::RetryPoliciesFull, "as documented"),
            (Config::RetryPoliciesBounded, "as documented"),
            (
                Config::TokioRetryExample,
                "undocumented; behaves as the reading",
            ),
            (
                Config::TokioRetryCapped,
                "undocumented; behaves as the reading",
            ),
        ];
        for (config, verdict) in expected {
            let line = audit(config, 20_000, 1);
            assert!(
                line.verdict().starts_with(verdict),
                "{config:?}: {}",
                line.verdict()
            );
        }
    }

    /// exponential-backoff's widest jitter, tested against the clamped reading: it fails,
    /// as the default does (no delay between d and 1.5 d), and the clamp's atoms are there.
    #[test]
    fn the_widest_exponential_backoff_jitter_is_tested_clamped() {
        let line = audit(Config::ExpoJitterOne, 20_000, 1);
        assert_eq!(line.tested, documented(Config::ExpoJitterOne).retries);
        assert!(
            line.failures.iter().any(|f| f.0 == 1),
            "{:?}",
            line.failures
        );
        assert!(line.at_max > 0.9, "{}", line.at_max);
        // And a sample drawn from the reading itself passes the same test at every retry.
        let mut rng = <rand_pcg::Pcg64Mcg as rand::SeedableRng>::seed_from_u64(7);
        for k in 1..=documented(Config::ExpoJitterOne).retries {
            let Law::Clamped { lo, hi, min, max } = (documented(Config::ExpoJitterOne).law)(k)
            else {
                panic!("retry {k} is not clamped");
            };
            let mut xs: Vec<f64> = (0..20_000)
                .map(|_| (lo + (hi - lo) * rand::RngExt::random::<f64>(&mut rng)).clamp(min, max))
                .collect();
            xs.sort_by(f64::total_cmp);
            let d = ks::statistic_clamped(&xs, lo, hi, min, max);
            assert!(ks::p_value(d, xs.len()) > ALPHA, "retry {k}: D = {d}");
        }
    }

    #[test]
    fn bunching_and_overshoot_are_measured() {
        // exponential-backoff clamps after jitter: all of retry 9's delays sit on the 10 s max.
        assert_eq!(audit(Config::ExpoDefault, 2_000, 1).at_max, 1.0);
        // backon jitters after capping: from retry 7 on, every delay is above its 60 s max.
        let backon = audit(Config::BackonJitter, 2_000, 1);
        assert_eq!((backon.at_max, backon.above_max), (0.0, 1.0));
        // Its default clamps from below too: about half of retry 1's delays sit on 100 ms;
        // and it is a ±percent law with nothing between d and 1.15 d (retry 4: d = 0.8 s).
        let (mut floor, mut gap) = (0, 0);
        for seed in 0..20_000 {
            let mut delays = Config::ExpoDefault.start(seed, Some(4));
            let first = delays.next_delay().unwrap();
            floor += usize::from(first == Duration::from_millis(100));
            let fourth = (0..3).map(|_| delays.next_delay().unwrap()).last().unwrap();
            let d = 0.8;
            gap += usize::from(fourth.as_secs_f64() > d && fourth.as_secs_f64() < 1.15 * d);
        }
        assert!((floor as f64 / 20_000.0 - 0.5).abs() < 0.02, "{floor}");
        assert_eq!(gap, 0);
        // backoff caps the interval, not the randomized one: from retry 13 (interval 60 s)
        // half its delays are above the 60 s max.
        let backoff = audit(Config::BackoffDefault, 20_000, 1);
        assert_eq!(documented(Config::BackoffDefault).retries, 15);
        assert!(
            (backoff.above_max - 0.5).abs() < 0.02,
            "{}",
            backoff.above_max
        );
        // retry-policies reaches its 30 min cap at retry 12 (2048 s): looked at up to 14.
        assert_eq!(documented(Config::RetryPoliciesFull).retries, 14);
        // Full jitter at the cap falls from one retry to the next for half the requests.
        let tokio = audit(Config::TokioRetryCapped, 20_000, 1);
        assert!((tokio.fell - 0.5).abs() < 0.02, "{}", tokio.fell);
    }
}
