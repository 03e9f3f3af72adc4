//! Unit tests of the backoff core: validation, overflow, golden values, means, bounds.

use super::*;
use crate::test_rng;

/// An independent generator per sample `s` of a test seeded `seed`.
fn stream(seed: u64, s: u64) -> crate::random::Pcg64Mcg {
    test_rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ s)
}
use std::time::Duration;

/// Milliseconds as a float, exactly as the simulator's output writes them.
trait Ms {
    fn ms(self) -> f64;
    fn ns(self) -> u64;
}

impl Ms for Duration {
    fn ms(self) -> f64 {
        self.ns() as f64 / 1e6
    }
    fn ns(self) -> u64 {
        crate::time::to_nanos(self)
    }
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn policy(jitter: Jitter) -> Backoff {
    Backoff::new(jitter, ms(50), 2.0, ms(2000)).unwrap()
}

#[test]
fn nominal_is_capped_exponential_without_overflow() {
    let p = policy(Jitter::NoJitter);
    assert_eq!(p.nominal(1), ms(50));
    assert_eq!(p.nominal(2), ms(100));
    assert_eq!(p.nominal(6), ms(1600));
    assert_eq!(p.nominal(7), ms(2000));
    assert_eq!(p.nominal(u32::MAX), ms(2000));
    let big = Backoff::new(Jitter::NoJitter, ms(1), 10.0, Duration::from_secs(3600)).unwrap();
    assert_eq!(big.nominal(10_000), Duration::from_secs(3600));
    let mut state = BackoffState::new();
    let mut rng = test_rng(1);
    for _ in 0..10_000 {
        big.next_delay(&mut state, &mut rng);
    }
    assert_eq!(state.last_sleep(), Duration::from_secs(3600));
    // A slow multiplier past the table still reaches the cap exactly.
    let slow = Backoff::new(Jitter::NoJitter, ms(1), 1.01, ms(1000)).unwrap();
    assert!(slow.nominal(64) < ms(1000));
    assert_eq!(slow.nominal(100_000), ms(1000));
    assert_eq!(
        slow.nominal(300).ns(),
        (1e6f64 * 1.01f64.powi(299)).round() as u64
    );
}

#[test]
fn constructors_reject_bad_parameters_naming_them() {
    let with = |change: fn(&mut BackoffParams)| {
        let mut params = BackoffParams::default();
        change(&mut params);
        params
    };
    let cases: [(BackoffParams, &str); 7] = [
        (with(|p| p.base = Duration::ZERO), "base"),
        (with(|p| (p.base, p.cap) = (ms(50), ms(10))), "cap"),
        (with(|p| p.multiplier = 0.5), "multiplier"),
        (with(|p| p.multiplier = f64::NAN), "multiplier"),
        (with(|p| p.multiplier = f64::INFINITY), "multiplier"),
        (with(|p| p.growth = 0.9), "growth"),
        (with(|p| p.factor = 1.5), "factor"),
    ];
    for (params, field) in cases {
        let err = Backoff::from_params(params).unwrap_err();
        assert_eq!(err.field, field, "{err}");
    }
    // A cross-parameter rule names the other parameter by its field, not by a scenario key.
    let err = Backoff::new(Jitter::Full, ms(100), 2.0, ms(10)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value for `cap`: 10ms: a duration at least base (100ms)"
    );
}

/// First ten sleeps (ms, three decimals) of every kind for seed 42. They pin the engine: a
/// change here changes every published number, so it must be deliberate.
#[test]
fn golden_first_ten_sleeps_seed_42() {
    let golden: [(Jitter, [f64; 10]); 9] = GOLDEN;
    for (jitter, expected) in golden {
        let p = policy(jitter);
        let mut rng = test_rng(42);
        let got: Vec<f64> = p
            .sleeps(&mut rng)
            .take(10)
            .map(|d| (d.ms() * 1000.0).round() / 1000.0)
            .collect();
        assert_eq!(got, expected, "{jitter}");
    }
}

include!("golden.rs");

fn mean_per_retry(jitter: Jitter, retries: u32, samples: u32, seed: u64) -> Vec<f64> {
    let p = policy(jitter);
    let mut sums = vec![0.0; retries as usize];
    for s in 0..samples {
        let mut rng = stream(seed, s as u64);
        let mut state = BackoffState::new();
        for sum in sums.iter_mut() {
            *sum += p.next_delay(&mut state, &mut rng).ms();
        }
    }
    sums.iter().map(|s| s / samples as f64).collect()
}

#[test]
fn full_jitter_mean_is_half_the_nominal() {
    // 20 000 samples of U[0, d]: the standard error is d / sqrt(12 * 20000) ~ 0.2 % of d,
    // so 1 % of d/2 is five standard errors.
    let p = policy(Jitter::Full);
    for (i, m) in mean_per_retry(Jitter::Full, 8, 20_000, 3)
        .iter()
        .enumerate()
    {
        let half = p.nominal(i as u32 + 1).ms() / 2.0;
        assert!(
            (m - half).abs() < 0.01 * half,
            "retry {}: {m} vs {half}",
            i + 1
        );
    }
}

#[test]
fn equal_jitter_mean_is_three_quarters() {
    let p = policy(Jitter::Equal);
    for (i, m) in mean_per_retry(Jitter::Equal, 8, 20_000, 4)
        .iter()
        .enumerate()
    {
        let target = 0.75 * p.nominal(i as u32 + 1).ms();
        assert!(
            (m - target).abs() < 0.005 * target,
            "retry {}: {m} vs {target}",
            i + 1
        );
    }
}

#[test]
fn decorrelated_mean_grows_from_base() {
    // s_1 = U[50, 150] (mean 100); uncapped, E[s_k] = (base + 3 E[s_(k-1)]) / 2.
    let means = mean_per_retry(Jitter::Decorrelated, 3, 20_000, 5);
    let mut expected = 50.0;
    for (i, m) in means.iter().enumerate() {
        expected = (50.0 + 3.0 * expected) / 2.0;
        assert!(
            (m - expected).abs() < 0.02 * expected,
            "retry {}: {m} vs {expected}",
            i + 1
        );
    }
    // Later retries bunch at the cap but never exceed it.
    let late = mean_per_retry(Jitter::Decorrelated, 20, 2_000, 6);
    assert!(late[19] > 1000.0 && late[19] <= 2000.0, "{}", late[19]);
}

#[test]
fn proportional_mean_is_the_nominal() {
    let p = policy(Jitter::Proportional);
    for (i, m) in mean_per_retry(Jitter::Proportional, 5, 20_000, 7)
        .iter()
        .enumerate()
    {
        let d = p.nominal(i as u32 + 1).ms();
        assert!((m - d).abs() < 0.005 * d, "retry {}: {m} vs {d}", i + 1);
    }
}

#[test]
fn polly_v2_median_first_sleep_is_near_base() {
    let p = policy(Jitter::DecorrelatedV2);
    let mut firsts: Vec<f64> = (0..20_001)
        .map(|s| {
            let mut rng = stream(8, s);
            p.next_delay(&mut BackoffState::new(), &mut rng).ms()
        })
        .collect();
    firsts.sort_by(f64::total_cmp);
    let median = firsts[10_000];
    // Polly documents the first retry's median as "about" the base: within 15 %.
    assert!((median - 50.0).abs() < 7.5, "{median}");
}

#[test]
fn deterministic_kinds_use_no_randomness() {
    let mut a = test_rng(1);
    let mut b = test_rng(1);
    for j in [Jitter::None, Jitter::Constant, Jitter::NoJitter] {
        let got: Vec<Duration> = policy(j).sleeps(&mut a).take(4).collect();
        match j {
            Jitter::None => assert_eq!(got, vec![Duration::ZERO; 4]),
            Jitter::Constant => assert_eq!(got, vec![ms(50); 4]),
            _ => assert_eq!(got, vec![ms(50), ms(100), ms(200), ms(400)]),
        }
    }
    use crate::random::RandomSource;
    assert_eq!(a.next_u64(), b.next_u64());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn params() -> impl Strategy<Value = (Jitter, u64, f64, u64, f64, f64, u64)> {
        (
            proptest::sample::select(Jitter::ALL.to_vec()),
            1u64..10_000_000_000,
            1.0f64..20.0,
            0u64..100_000_000_000,
            1.0f64..10.0,
            0.0f64..=1.0,
            any::<u64>(),
        )
    }

    proptest! {
        #[test]
        fn every_kind_stays_in_its_bounds((jitter, base, multiplier, extra, growth, factor, seed) in params()) {
            let p = Backoff::from_params(BackoffParams {
                jitter,
                base: Duration::from_nanos(base),
                multiplier,
                cap: Duration::from_nanos(base + extra),
                growth,
                factor,
            }).unwrap();
            let mut rng = test_rng(seed);
            let mut state = BackoffState::new();
            for k in 1..=40u32 {
                let d = p.nominal(k).ns();
                let s = p.next_delay(&mut state, &mut rng).ns();
                // Additive jitter adds above the capped delay, as Go's wait.Backoff does.
                prop_assert!(s <= p.cap().ns() || jitter == Jitter::Additive);
                prop_assert!(d <= p.cap().ns() && d >= base);
                match jitter {
                    Jitter::None => prop_assert_eq!(s, 0),
                    Jitter::Constant => prop_assert_eq!(s, base),
                    Jitter::NoJitter => prop_assert_eq!(s, d),
                    Jitter::Full => prop_assert!(s <= d),
                    Jitter::Equal => prop_assert!(s >= d / 2 && s <= d),
                    Jitter::Decorrelated => prop_assert!(s >= base),
                    Jitter::DecorrelatedV2 => {}
                    Jitter::Proportional => {
                        let lo = ((d as f64) * (1.0 - factor)).floor() as u64;
                        let hi = ((d as f64) * (1.0 + factor)).ceil() as u64;
                        prop_assert!(s >= lo.min(p.cap().ns()) && s <= hi);
                    }
                    Jitter::Additive => {
                        let hi = ((d as f64) * (1.0 + factor)).ceil() as u64;
                        prop_assert!(s >= d && s <= hi);
                    }
                }
            }
        }

        #[test]
        fn nominal_is_monotone_and_never_overflows(base in 1u64..1_000_000_000, multiplier in 1.0f64..1000.0, k in 1u32..u32::MAX) {
            let p = Backoff::new(Jitter::NoJitter, Duration::from_nanos(base), multiplier, Duration::from_nanos(u64::MAX)).unwrap();
            prop_assert!(p.nominal(k) <= p.nominal(k.saturating_add(1)));
            prop_assert!(p.nominal(k).ns() >= base);
        }
    }
}
