//! Distributions of durations: service times and network legs.
//!
//! Each is validated once ([`Dist::new`]) and sampled in integer nanoseconds through rand's
//! [`Distribution`] trait, like any other rand distribution: `dist.sample(&mut rng)`.
//! Exponential and normal variates come from rand_distr's ziggurat samplers (`Exp1`,
//! `StandardNormal`): a few nanoseconds each, where a logarithm or a cosine would cost several
//! times more on the simulator's hottest path (every service time and every network leg).
//!
//! ```
//! use jitterlab::rng::from_seed;
//! use jitterlab::sim::dist::Dist;
//! use jitterlab::time::SimDuration;
//! use rand::distr::Distribution;
//!
//! let service = Dist::Exponential { mean: SimDuration::from_millis(10) };
//! // Nanoseconds; the same seed gives the same draws.
//! let a: Vec<u64> = (&service).sample_iter(from_seed(7)).take(3).collect();
//! let b: Vec<u64> = (&service).sample_iter(from_seed(7)).take(3).collect();
//! assert_eq!(a, b);
//! ```
//!
//! `empirical` draws from measured samples ([`Empirical`]: a file of milliseconds, such as
//! the `observed_*_ms.txt` files `jitterlab live` writes), each sample equally likely: one
//! uniform index per draw from the same seeded stream, so draws are as reproducible as the
//! parametric ones.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::distr::Distribution;
use rand::{Rng, RngExt};
use rand_distr::{Exp1, StandardNormal};

use crate::param::ParamError;
use crate::time::{SimDuration, f64_to_nanos};

/// A distribution of durations.
#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    /// Always `mean`.
    Constant {
        /// The value.
        mean: SimDuration,
    },
    /// Exponential with the given mean (memoryless: M/M/c service).
    Exponential {
        /// The mean.
        mean: SimDuration,
    },
    /// Log-normal with the given mean and standard deviation (of the variable itself).
    LogNormal {
        /// The mean.
        mean: SimDuration,
        /// The standard deviation.
        sd: SimDuration,
        /// `mu` of the underlying normal.
        mu: f64,
        /// `sigma` of the underlying normal.
        sigma: f64,
    },
    /// `|N(mean, sd)|`, the network model of Brooker's 2015 simulator.
    NormalAbs {
        /// The mean of the normal before folding.
        mean: SimDuration,
        /// Its standard deviation.
        sd: SimDuration,
    },
    /// Measured samples, each equally likely.
    Empirical(Empirical),
}

/// The allowed `dist` names.
pub const DIST_NAMES: &str = "constant, exponential, lognormal, normal_abs, empirical";

/// Most samples an empirical file may hold (8 bytes each in memory).
pub const MAX_SAMPLES: usize = 10_000_000;

/// The samples of an `empirical` distribution, read from a file of milliseconds.
///
/// The format: one sample per line, a decimal number of milliseconds (`12.5`); blank lines
/// and lines starting with `#` are skipped. Samples must be finite and not negative, and at
/// least one is required. They are kept in file order, in integer nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Empirical {
    /// The file they came from (as resolved: relative to the scenario file).
    pub file: PathBuf,
    samples: Arc<[u64]>,
    mean_ns: f64,
}

impl Empirical {
    /// Parses `text`, the content of `file`. Errors name the field `file` and say which line
    /// is wrong and why.
    pub fn parse(file: &Path, text: &str) -> Result<Empirical, ParamError> {
        let bad = |message: String| {
            ParamError::new("file", format!("{:?}", file.display().to_string()), message)
        };
        let mut samples = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let ms: f64 = line.parse().map_err(|_| {
                bad(format!(
                    "a file of samples in milliseconds, one number per line; line {} is {line:?}, not a number",
                    i + 1
                ))
            })?;
            if !ms.is_finite() || ms < 0.0 {
                return Err(bad(format!(
                    "samples that are finite and not negative; line {} is {line}",
                    i + 1
                )));
            }
            if samples.len() == MAX_SAMPLES {
                return Err(bad(format!("at most {MAX_SAMPLES} samples")));
            }
            samples.push(f64_to_nanos(ms * 1e6));
        }
        if samples.is_empty() {
            return Err(bad(
                "a file with at least one sample (a number of milliseconds per line); it has none"
                    .into(),
            ));
        }
        let mean_ns = samples.iter().map(|&s| s as f64).sum::<f64>() / samples.len() as f64;
        Ok(Empirical {
            file: file.to_path_buf(),
            samples: samples.into(),
            mean_ns,
        })
    }

    /// The samples in nanoseconds, in file order.
    pub fn samples(&self) -> &[u64] {
        &self.samples
    }
}

impl Dist {
    /// Builds the distribution named `dist` (one of [`DIST_NAMES`]) from its mean and, for
    /// `lognormal` and `normal_abs`, its standard deviation. Errors name the field (`sd`).
    pub fn new(dist: &str, mean: SimDuration, sd: Option<SimDuration>) -> Result<Dist, ParamError> {
        let need_sd = |sd: Option<SimDuration>| {
            sd.ok_or_else(|| {
                ParamError::new("sd", "missing", format!("a duration: `{dist}` needs `sd`"))
            })
        };
        let positive_mean = || {
            if mean == SimDuration::ZERO {
                Err(ParamError::new(
                    "mean",
                    mean,
                    format!("a duration greater than 0 for `{dist}`"),
                ))
            } else {
                Ok(mean)
            }
        };
        match dist {
            "constant" | "exponential" if sd.is_some() => Err(ParamError::new(
                "sd",
                sd.unwrap_or_default(),
                format!("no `sd` for `{dist}` (only lognormal and normal_abs take one)"),
            )),
            "constant" => Ok(Dist::Constant { mean }),
            "exponential" => Ok(Dist::Exponential {
                mean: positive_mean()?,
            }),
            "lognormal" => {
                let sd = need_sd(sd)?;
                let m = positive_mean()?.as_nanos() as f64;
                let s = sd.as_nanos() as f64;
                let sigma2 = (1.0 + (s / m).powi(2)).ln();
                Ok(Dist::LogNormal {
                    mean,
                    sd,
                    mu: m.ln() - sigma2 / 2.0,
                    sigma: sigma2.sqrt(),
                })
            }
            "normal_abs" => Ok(Dist::NormalAbs {
                mean,
                sd: need_sd(sd)?,
            }),
            other => Err(ParamError::new(
                "dist",
                format!("{other:?}"),
                format!("one of {DIST_NAMES}"),
            )),
        }
    }

    /// The name used in scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            Dist::Constant { .. } => "constant",
            Dist::Exponential { .. } => "exponential",
            Dist::LogNormal { .. } => "lognormal",
            Dist::NormalAbs { .. } => "normal_abs",
            Dist::Empirical(_) => "empirical",
        }
    }

    /// The `mean` parameter as written (for `empirical`, the samples' mean).
    pub fn mean_param(&self) -> SimDuration {
        match *self {
            Dist::Constant { mean }
            | Dist::Exponential { mean }
            | Dist::LogNormal { mean, .. }
            | Dist::NormalAbs { mean, .. } => mean,
            Dist::Empirical(ref e) => SimDuration(f64_to_nanos(e.mean_ns)),
        }
    }

    /// The `sd` parameter, for the kinds that take one.
    pub fn sd_param(&self) -> Option<SimDuration> {
        match *self {
            Dist::LogNormal { sd, .. } | Dist::NormalAbs { sd, .. } => Some(sd),
            _ => None,
        }
    }

    /// The true mean of the samples in nanoseconds (the folded normal's mean for `normal_abs`).
    pub fn mean_nanos(&self) -> f64 {
        match *self {
            Dist::Constant { mean } | Dist::Exponential { mean } | Dist::LogNormal { mean, .. } => {
                mean.as_nanos() as f64
            }
            Dist::Empirical(ref e) => e.mean_ns,
            Dist::NormalAbs { mean, sd } => {
                let (m, s) = (mean.as_nanos() as f64, sd.as_nanos() as f64);
                if s == 0.0 {
                    return m;
                }
                let z = m / s;
                s * (2.0 / std::f64::consts::PI).sqrt() * (-z * z / 2.0).exp()
                    + m * erf(z / std::f64::consts::SQRT_2)
            }
        }
    }

    /// True when every sample is zero.
    pub fn is_zero(&self) -> bool {
        match *self {
            Dist::Constant { mean } => mean == SimDuration::ZERO,
            Dist::NormalAbs { mean, sd } => mean == SimDuration::ZERO && sd == SimDuration::ZERO,
            Dist::Exponential { .. } | Dist::LogNormal { .. } => false,
            Dist::Empirical(ref e) => e.samples.iter().all(|&s| s == 0),
        }
    }

    /// The scenario form: `{ dist = "...", mean = "...", sd = "..." }`, or for `empirical`
    /// `{ dist = "empirical", file = "..." }` with the file's path as resolved.
    pub fn to_toml(&self) -> toml::Value {
        let mut t = toml::Table::new();
        t.insert("dist".into(), self.name().into());
        if let Dist::Empirical(e) = self {
            t.insert("file".into(), e.file.display().to_string().into());
            return toml::Value::Table(t);
        }
        t.insert("mean".into(), self.mean_param().to_string().into());
        if let Some(sd) = self.sd_param() {
            t.insert("sd".into(), sd.to_string().into());
        }
        toml::Value::Table(t)
    }
}

impl Distribution<u64> for Dist {
    /// Draws one duration in nanoseconds (exponential: one `Exp1` draw; lognormal and
    /// normal_abs: one `StandardNormal` draw; empirical: one uniform index; constant: none).
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match *self {
            Dist::Empirical(ref e) => e.samples[rng.random_range(0..e.samples.len())],
            Dist::Constant { mean } => mean.as_nanos(),
            Dist::Exponential { mean } => {
                f64_to_nanos(mean.as_nanos() as f64 * Distribution::<f64>::sample(&Exp1, rng))
            }
            Dist::LogNormal { mu, sigma, .. } => f64_to_nanos((mu + sigma * std_normal(rng)).exp()),
            Dist::NormalAbs { mean, sd } => f64_to_nanos(
                (mean.as_nanos() as f64 + sd.as_nanos() as f64 * std_normal(rng)).abs(),
            ),
        }
    }
}

/// A standard normal variate.
#[inline]
pub(crate) fn std_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    Distribution::<f64>::sample(&StandardNormal, rng)
}

/// The error function (Abramowitz–Stegun 7.1.26, |error| < 1.5e-7), for the folded normal's mean.
fn erf(x: f64) -> f64 {
    let sign = x.signum();
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    sign * (1.0 - poly * (-x * x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::from_seed;

    fn mean_of(d: &Dist, n: u32) -> f64 {
        let mut rng = from_seed(11);
        (0..n).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match_the_parameters() {
        let ms = SimDuration::from_millis;
        let cases = [
            Dist::new("constant", ms(10), None).unwrap(),
            Dist::new("exponential", ms(10), None).unwrap(),
            Dist::new("lognormal", ms(10), Some(ms(5))).unwrap(),
            Dist::new("normal_abs", ms(10), Some(ms(2))).unwrap(),
            Dist::new("normal_abs", ms(1), Some(ms(2))).unwrap(),
        ];
        for d in cases {
            let m = mean_of(&d, 200_000);
            assert!(
                (m - d.mean_nanos()).abs() < 0.01 * d.mean_nanos(),
                "{d:?}: {m} vs {}",
                d.mean_nanos()
            );
        }
    }

    /// The first six draws of `d` from seed 2024 must be `want`. The golden numbers were
    /// computed once from the sampling code as it stood when these tests were written: any
    /// change of sampling algorithm (and so of every simulated result) fails here first.
    fn assert_first_draws(d: Dist, want: [u64; 6]) {
        let mut rng = from_seed(2024);
        let got: Vec<u64> = (0..6).map(|_| d.sample(&mut rng)).collect();
        assert_eq!(got, want, "{d:?}");
    }

    #[test]
    fn constant_draws_are_stable() {
        let d = Dist::new("constant", SimDuration::from_millis(10), None).unwrap();
        assert_first_draws(d, [10_000_000; 6]);
    }

    #[test]
    fn exponential_draws_are_stable() {
        let d = Dist::new("exponential", SimDuration::from_millis(10), None).unwrap();
        assert_first_draws(
            d,
            [
                5_853_680, 627_140, 13_475_915, 16_360_483, 1_285_300, 1_972_758,
            ],
        );
    }

    #[test]
    fn lognormal_draws_are_stable() {
        let ms = SimDuration::from_millis;
        let d = Dist::new("lognormal", ms(10), Some(ms(5))).unwrap();
        assert_first_draws(
            d,
            [
                6_112_374, 3_064_506, 14_847_967, 9_086_813, 6_745_325, 9_622_369,
            ],
        );
    }

    #[test]
    fn normal_abs_draws_are_stable() {
        let ms = SimDuration::from_millis;
        let d = Dist::new("normal_abs", ms(10), Some(ms(2))).unwrap();
        assert_first_draws(
            d,
            [
                8_388_173, 5_464_984, 12_145_937, 10_066_941, 8_805_355, 10_309_399,
            ],
        );
        // Centred on zero, every negative draw is folded: the same normals, mirrored.
        let d = Dist::new("normal_abs", ms(0), Some(ms(2))).unwrap();
        assert_first_draws(
            d,
            [1_611_827, 4_535_016, 2_145_937, 66_941, 1_194_645, 309_399],
        );
    }

    fn empirical(text: &str) -> Result<Dist, ParamError> {
        Empirical::parse(Path::new("samples.txt"), text).map(Dist::Empirical)
    }

    #[test]
    fn empirical_draws_are_stable() {
        let d = empirical("# measured\n1\n2.5\n\n10\n0.001\n").unwrap();
        assert_eq!(d.name(), "empirical");
        assert_eq!(d.mean_nanos(), 13_501_000.0 / 4.0);
        assert_first_draws(
            d,
            [
                1_000_000, 2_500_000, 10_000_000, 2_500_000, 1_000_000, 1_000_000,
            ],
        );
        // Every sample is drawn about equally often.
        let d = empirical("1\n2\n3\n4\n").unwrap();
        assert!((mean_of(&d, 100_000) - 2.5e6).abs() < 0.01 * 2.5e6);
        assert!(empirical("0\n0\n").unwrap().is_zero());
    }

    #[test]
    fn empirical_files_must_hold_non_negative_numbers() {
        let message = |text: &str| {
            let e = empirical(text).unwrap_err();
            assert_eq!(e.field, "file");
            e.to_string()
        };
        assert!(message("").contains("it has none"), "{}", message(""));
        assert!(message("# only a comment\n\n").contains("it has none"));
        let m = message("1\n2ms\n");
        assert!(m.contains("line 2 is \"2ms\", not a number"), "{m}");
        let m = message("1\n\n-3\n");
        assert!(m.contains("finite and not negative; line 3 is -3"), "{m}");
        assert!(message("inf\n").contains("line 1 is inf"));
    }

    #[test]
    fn rejects_bad_shapes() {
        let ms = SimDuration::from_millis;
        let field = |dist: &str, mean: u64, sd: Option<u64>| {
            Dist::new(dist, ms(mean), sd.map(ms)).unwrap_err().field
        };
        assert_eq!(field("gamma", 1, None), "dist");
        assert_eq!(field("lognormal", 1, None), "sd");
        assert_eq!(field("lognormal", 0, Some(1)), "mean");
        assert_eq!(field("exponential", 0, None), "mean");
        assert_eq!(field("constant", 1, Some(1)), "sd");
        assert_eq!(field("normal_abs", 1, None), "sd");
    }
}
