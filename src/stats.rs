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

/// The Pareto front within groups: a point is on its group's front when it is eligible and no
/// other eligible point of the same group beats it on both coordinates. `group[i]` names point
/// `i`'s group (a world point, for fronts that never compare across the world), `eligible[i]`
/// says whether it may be on a front at all (it reaches the success floor).
pub fn pareto_fronts(points: &[(f64, f64)], group: &[usize], eligible: &[bool]) -> Vec<bool> {
    (0..points.len())
        .map(|i| {
            let mine: Vec<(f64, f64)> = (0..points.len())
                .filter(|&j| group[j] == group[i] && eligible[j])
                .map(|j| points[j])
                .collect();
            eligible[i] && {
                let p = points[i];
                p.0.is_finite()
                    && p.1.is_finite()
                    && !mine
                        .iter()
                        .any(|q| q.0 <= p.0 && q.1 <= p.1 && (q.0 < p.0 || q.1 < p.1))
            }
        })
        .collect()
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
        assert_eq!(
            pareto_fronts(&pts, &group, &eligible),
            vec![true, true, true, false, false]
        );
        assert_eq!(
            pareto_fronts(&pts, &[0; 5], &[true; 5]),
            pareto_front(&pts),
            "one group of eligible points is the plain front"
        );
    }
}
