//! The one-sample Kolmogorov–Smirnov test against a continuous uniform law, and against one
//! clamped to an interval (atoms at its bounds; the test is then conservative).

/// The statistic `D = sup |F_n(x) - F(x)|` of `sorted` (ascending) against `U[lo, hi]`.
pub fn statistic_uniform(sorted: &[f64], lo: f64, hi: f64) -> f64 {
    let n = sorted.len() as f64;
    let cdf = |x: f64| ((x - lo) / (hi - lo)).clamp(0.0, 1.0);
    sorted
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).max((i + 1) as f64 / n - f)
        })
        .fold(0.0, f64::max)
}

/// The statistic of `sorted` (ascending) against `U[lo, hi]` clamped to `[min, max]`: the
/// law of `x.clamp(min, max)`, with an atom at `min` (mass `F(min)`) and at `max`. Tied
/// values are one step of the empirical CDF, compared below and at the step.
pub fn statistic_clamped(sorted: &[f64], lo: f64, hi: f64, min: f64, max: f64) -> f64 {
    let n = sorted.len() as f64;
    let uniform = |x: f64| ((x - lo) / (hi - lo)).clamp(0.0, 1.0);
    // F(x), and F just below x.
    let at = |x: f64| {
        if x >= max {
            1.0
        } else if x < min {
            0.0
        } else {
            uniform(x)
        }
    };
    let below = |x: f64| {
        if x > max {
            1.0
        } else if x <= min {
            0.0
        } else {
            uniform(x)
        }
    };
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let x = sorted[i];
        let j = i + sorted[i..].iter().take_while(|&&v| v == x).count();
        d = d
            .max((below(x) - i as f64 / n).abs())
            .max((j as f64 / n - at(x)).abs());
        i = j;
    }
    d
}

/// The asymptotic p-value of `d` for a sample of `n` (the Kolmogorov distribution with
/// Stephens' small-sample correction, as in Numerical Recipes' `probks`).
pub fn p_value(d: f64, n: usize) -> f64 {
    let sqrt_n = (n as f64).sqrt();
    let lambda = (sqrt_n + 0.12 + 0.11 / sqrt_n) * d;
    if lambda < 0.2 {
        return 1.0;
    }
    let mut sum = 0.0;
    for j in 1..=100 {
        let term = (-2.0 * (j * j) as f64 * lambda * lambda).exp();
        sum += if j % 2 == 1 { term } else { -term };
        if term < 1e-16 {
            break;
        }
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uniform_sample_passes_and_a_shifted_one_fails() {
        let n = 10_000;
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 + 0.5) / n as f64).collect();
        let d = statistic_uniform(&xs, 0.0, 1.0);
        assert!(d < 1e-3 && p_value(d, n) > 0.99, "{d}");
        let d = statistic_uniform(&xs, 0.1, 1.1);
        assert!((d - 0.1).abs() < 1e-3 && p_value(d, n) < 1e-6, "{d}");
    }

    #[test]
    fn a_clamped_uniform_sample_passes_and_an_unclamped_one_fails() {
        // U[0, 2] clamped to [0.5, 1.5]: a quarter on each bound, the rest spread between.
        let n = 10_000;
        let raw: Vec<f64> = (0..n).map(|i| 2.0 * (i as f64 + 0.5) / n as f64).collect();
        let clamped: Vec<f64> = raw.iter().map(|x| x.clamp(0.5, 1.5)).collect();
        let d = statistic_clamped(&clamped, 0.0, 2.0, 0.5, 1.5);
        assert!(d < 1e-3 && p_value(d, n) > 0.99, "{d}");
        let d = statistic_clamped(&raw, 0.0, 2.0, 0.5, 1.5);
        assert!((d - 0.25).abs() < 1e-3 && p_value(d, n) < 1e-6, "{d}");
    }

    #[test]
    fn the_p_value_matches_the_kolmogorov_quantiles() {
        // P(sqrt(n) D > 1.358) = 0.05 and P(> 1.628) = 0.01, for large n.
        let n = 1_000_000;
        assert!((p_value(1.358 / (n as f64).sqrt(), n) - 0.05).abs() < 1e-3);
        assert!((p_value(1.628 / (n as f64).sqrt(), n) - 0.01).abs() < 1e-3);
    }
}
