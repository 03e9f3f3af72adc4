//! Re-synchronisation: do retries arrive at random, or in clumps (a herd that re-forms)?
//!
//! The measure is the *index of dispersion* (variance over mean) of the retries reaching the
//! server per output bucket, over a trailing window of [`WINDOW`] (one second): at bucket `i`,
//! over the counts `x` of buckets `i − W + 1 ..= i` (fewer at the start of the run, at least
//! two), `D = var(x) / mean(x)` with the population variance. Retries sent independently at
//! random times (a Poisson stream) give D ≈ 1 whatever their rate; a herd that comes back as
//! one wave of `n` retries in a single bucket of the window gives D ≈ n. So D reads as "retries
//! arrive in clumps of about D". It is undefined (an empty cell) where the window holds no
//! retry.
//!
//! Computed exactly from integer sums, `D = (n Σx² − (Σx)²) / (n Σx)`, so it is the same on
//! every machine. Only retries count: first attempts are the workload's (a burst of clients
//! all starting at once is the same for every strategy), retries are the policy's.

use crate::time::SimDuration;

/// Length of the trailing window.
pub const WINDOW: SimDuration = SimDuration::from_secs(1);

/// Buckets of width `bucket` in [`WINDOW`], rounded, at least 2.
pub fn window_buckets(bucket: SimDuration) -> usize {
    let b = bucket.as_nanos().max(1);
    ((WINDOW.as_nanos() + b / 2) / b).max(2) as usize
}

/// The index of dispersion of `counts` over a trailing window of `window` buckets (see the
/// module docs), one value per bucket; `None` where it is undefined.
pub fn dispersion(counts: &[u32], window: usize) -> Vec<Option<f64>> {
    let window = window.max(2);
    let (mut sum, mut squares) = (0u64, 0u128);
    let mut out = Vec::with_capacity(counts.len());
    for (i, &x) in counts.iter().enumerate() {
        sum += u64::from(x);
        squares += u128::from(x) * u128::from(x);
        if i >= window {
            let old = counts[i - window];
            sum -= u64::from(old);
            squares -= u128::from(old) * u128::from(old);
        }
        let n = (i + 1).min(window) as u128;
        out.push((n >= 2 && sum > 0).then(|| {
            let s = u128::from(sum);
            (n * squares - s * s) as f64 / (n * s) as f64
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wave_scores_its_size_and_an_even_stream_zero() {
        // Four buckets: one wave of 8 retries. mean 2, variance (36 + 3 * 4) / 4 = 12: D = 6.
        let d = dispersion(&[8, 0, 0, 0], 4);
        assert_eq!(d[0], None, "one bucket is not a window");
        assert_eq!(d[3], Some(6.0));
        // The same 8 retries spread evenly: no variance at all.
        assert_eq!(dispersion(&[2, 2, 2, 2], 4)[3], Some(0.0));
        // Nothing in the window: undefined; the wave leaves the window after 4 buckets.
        let d = dispersion(&[0, 0, 8, 0, 0, 0, 0, 0], 4);
        assert_eq!(d[1], None);
        // Three buckets so far: (3 * 64 - 8^2) / (3 * 8).
        assert_eq!(d[2], Some(128.0 / 24.0));
        assert_eq!(d[5], Some(6.0));
        assert_eq!(d[6], None);
    }

    #[test]
    fn poisson_counts_score_about_one() {
        use rand_distr::{Distribution, Poisson};
        let mut rng = crate::rng::from_seed(4);
        let poisson = Poisson::new(7.0).unwrap();
        let counts: Vec<u32> = (0..20_000)
            .map(|_| poisson.sample(&mut rng) as u32)
            .collect();
        let d = dispersion(&counts, 100);
        let tail: Vec<f64> = d[100..].iter().map(|x| x.unwrap()).collect();
        let mean = tail.iter().sum::<f64>() / tail.len() as f64;
        assert!((mean - 1.0).abs() < 0.05, "{mean}");
    }

    #[test]
    fn window_is_one_second_of_buckets() {
        assert_eq!(window_buckets(SimDuration::from_millis(10)), 100);
        assert_eq!(window_buckets(SimDuration::from_millis(100)), 10);
        assert_eq!(window_buckets(SimDuration::from_secs(5)), 2);
        assert_eq!(window_buckets(SimDuration::from_millis(3)), 333);
    }
}
