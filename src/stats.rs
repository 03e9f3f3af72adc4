//! Statistics across replications: mean, standard deviation and Student-t confidence
//! intervals (statrs), for single metrics and for paired differences between strategies; and
//! the Pareto front of pairs of means where lower is better on both.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Mean, sample standard deviation and a 95 % Student-t interval of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Sample mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1); `None` for fewer than two values.
    pub sd: Option<f64>,
    /// Lower end of the 95 % interval; `None` for fewer than two values.
    pub ci95_low: Option<f64>,
    /// Upper end of the 95 % interval.
    pub ci95_high: Option<f64>,
    /// Sample size.
    pub n: usize,
}

/// The two-sided 95 % Student-t quantile for `n - 1` degrees of freedom.
pub fn t95(n: usize) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).ok()?;
    Some(t.inverse_cdf(0.975))
}

/// Estimates from a sample (an empty sample gives a NaN mean and n = 0).
pub fn estimate(values: &[f64]) -> Estimate {
    let n = values.len();
    if n == 0 {
        return Estimate {
            mean: f64::NAN,
            sd: None,
            ci95_low: None,
            ci95_high: None,
            n,
        };
    }
    // Summed in order: the same inputs give the same bits.
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return Estimate {
            mean,
            sd: None,
            ci95_low: None,
            ci95_high: None,
            n,
        };
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
    let sd = var.sqrt();
    let half = t95(n).unwrap_or(f64::NAN) * sd / (n as f64).sqrt();
    Estimate {
        mean,
        sd: Some(sd),
        ci95_low: Some(mean - half),
        ci95_high: Some(mean + half),
        n,
    }
}

/// Paired differences `a[i] - b[i]` (same replication, common random numbers).
pub fn paired_difference(a: &[f64], b: &[f64]) -> Estimate {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    estimate(&diffs)
}

/// The `q`-quantile (0..=1) of sorted values, by linear interpolation.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Marks the points that no other point beats on both coordinates (lower is better on both);
/// a point with a coordinate that is not finite is never on the front.
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<bool> {
    points
        .iter()
        .map(|p| {
            p.0.is_finite()
                && p.1.is_finite()
                && !points
                    .iter()
                    .any(|q| q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1))
        })
        .collect()
}

/// The Pareto front within groups: a point is on its group's front when it is eligible, no
/// other eligible point of the same group beats it on both coordinates' means, and none
/// beats it on one beyond the replications' noise while the other is within it
/// ([`noise_beats`]): a lower p99 by less than its intervals' overlap is no trade-off for
/// more load. `spans[i]` holds point `i`'s 95 % intervals `[(low, high); 2]` (NaN where
/// there is none: then its mean is all there is). `group[i]` names point `i`'s group (a
/// world point, for fronts that never compare across the world), `eligible[i]` says whether
/// it may be on a front at all (it reaches the success floor). A group whose every front
/// point the noise rule would remove keeps the means' front.
pub fn pareto_fronts(
    points: &[(f64, f64)],
    spans: &[[(f64, f64); 2]],
    group: &[usize],
    eligible: &[bool],
) -> Vec<bool> {
    let on_means = |i: usize| {
        let p = points[i];
        eligible[i]
            && p.0.is_finite()
            && p.1.is_finite()
            && !(0..points.len()).any(|j| {
                let q = points[j];
                group[j] == group[i]
                    && eligible[j]
                    && q.0 <= p.0
                    && q.1 <= p.1
                    && (q.0 < p.0 || q.1 < p.1)
            })
    };
    let means: Vec<bool> = (0..points.len()).map(on_means).collect();
    let noisy: Vec<bool> = (0..points.len())
        .map(|i| {
            means[i]
                && !(0..points.len()).any(|j| {
                    group[j] == group[i] && eligible[j] && noise_beats(j, i, points, spans)
                })
        })
        .collect();
    (0..points.len())
        .map(|i| {
            let group_kept = (0..points.len()).any(|j| group[j] == group[i] && noisy[j]);
            if group_kept { noisy[i] } else { means[i] }
        })
        .collect()
}

/// True when point `q` beats point `p` beyond the noise on one coordinate (its interval
/// lies wholly below `p`'s) and is no worse within it on the other (lower, or their
/// intervals overlap).
fn noise_beats(q: usize, p: usize, points: &[(f64, f64)], spans: &[[(f64, f64); 2]]) -> bool {
    let (a, b) = (points[q], points[p]);
    let coord = |pt: (f64, f64), k: usize| if k == 0 { pt.0 } else { pt.1 };
    let span = |i: usize, k: usize| {
        let (lo, hi) = spans[i][k];
        let mean = coord(points[i], k);
        (
            if lo.is_finite() { lo } else { mean },
            if hi.is_finite() { hi } else { mean },
        )
    };
    let below = |k: usize| span(q, k).1 < span(p, k).0;
    let no_worse = |k: usize| coord(a, k) <= coord(b, k) || span(q, k).0 <= span(p, k).1;
    (below(0) && no_worse(1)) || (below(1) && no_worse(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // Student-t 0.975 quantiles: df 1 = 12.706, df 4 = 2.776, df 19 = 2.093, df 99 = 1.984.
        for (n, t) in [(2, 12.706), (5, 2.776), (20, 2.093), (100, 1.984)] {
            assert!((t95(n).unwrap() - t).abs() < 1e-3, "n={n}");
        }
        assert!(t95(1).is_none());
    }

    #[test]
    fn estimate_of_a_known_sample() {
        let e = estimate(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(e.mean, 3.0);
        assert!((e.sd.unwrap() - 2.5f64.sqrt()).abs() < 1e-12);
        let half = 2.776445 * 2.5f64.sqrt() / 5f64.sqrt();
        assert!((e.ci95_high.unwrap() - (3.0 + half)).abs() < 1e-5);
        assert_eq!(estimate(&[7.0]).sd, None);
    }

    #[test]
    fn paired_differences_cancel_common_noise() {
        let a = [10.0, 20.0, 30.0];
        let b = [9.0, 19.0, 29.0];
        let e = paired_difference(&a, &b);
        assert_eq!(e.mean, 1.0);
        assert_eq!(e.sd, Some(0.0));
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_sorted(&v, 1.0), 4.0);
        assert_eq!(quantile_sorted(&v, 0.5), 2.5);
    }

    #[test]
    fn front_is_the_non_dominated_set() {
        let front = pareto_front(&[
            (1.0, 5.0),
            (2.0, 2.0),
            (3.0, 3.0),
            (5.0, 1.0),
            (f64::NAN, 0.0),
        ]);
        assert_eq!(front, vec![true, true, false, true, false]);
        // A tie on one coordinate: only the one better on the other is on the front.
        let pts = [(1.0, 10.0), (2.0, 5.0), (3.0, 6.0), (1.5, 10.0), (4.0, 1.0)];
        assert_eq!(pareto_front(&pts), vec![true, true, false, false, true]);
    }

    #[test]
    fn fronts_stay_within_their_group_and_skip_the_ineligible() {
        // Two groups (two loads): the cheap point of group 1 does not dominate group 0's, and
        // an ineligible point (below the success floor) is neither on a front nor beats one.
        let pts = [(1.0, 5.0), (2.0, 2.0), (0.5, 1.0), (3.0, 3.0), (0.1, 0.1)];
        let group = [0, 0, 1, 1, 0];
        let eligible = [true, true, true, true, false];
        let none = [[(f64::NAN, f64::NAN); 2]; 5];
        assert_eq!(
            pareto_fronts(&pts, &none, &group, &eligible),
            vec![true, true, true, false, false]
        );
        assert_eq!(
            pareto_fronts(&pts, &none, &[0; 5], &[true; 5]),
            pareto_front(&pts),
            "one group of eligible points is the plain front"
        );
    }

    #[test]
    fn a_lower_p99_within_the_noise_is_no_trade_off() {
        // (amplification, p99): b's p99 is 9 ms lower inside intervals of ±10 ms, for
        // clearly more load; c's p99 is lower beyond the noise. b is not on the front.
        let pts = [(1.0, 100.0), (1.5, 91.0), (2.0, 50.0)];
        let spans = [
            [(0.99, 1.01), (90.0, 110.0)],
            [(1.49, 1.51), (81.0, 101.0)],
            [(1.99, 2.01), (45.0, 55.0)],
        ];
        let on = pareto_fronts(&pts, &spans, &[0; 3], &[true; 3]);
        assert_eq!(on, vec![true, false, true]);
        // Without intervals, the means decide: b is on the front.
        let none = [[(f64::NAN, f64::NAN); 2]; 3];
        assert_eq!(
            pareto_fronts(&pts, &none, &[0; 3], &[true; 3]),
            vec![true; 3]
        );
    }
}
