//! `jitterlab recommend`: from a result folder, the (point, strategy) pairs that meet the
//! user's constraints, ranked by a stated objective, and the Pareto front of amplification
//! against p99 latency (`pareto.csv`).
//!
//! Constraints are checked on the means across replications; a candidate whose 95 % interval
//! crosses a limit is marked borderline, so a choice that only just passes is visible as such.
//! When nothing meets the constraints the answer lists every pair by how far it misses them.
//! The answer is data ([`Recommendation`]); the binary prints it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::metric::{Better, Metric, PerMetric, names};
use crate::output::csv::write_rows;
use crate::output::results::{ParetoRow, ResultFolder};
use crate::output::rows::Row;
use crate::output::rows::defined;
use crate::stats::pareto_front;
use crate::time::SimDuration;

/// What the recommendation optimises among the pairs that meet the constraints: one metric,
/// lowest or highest as the metric is better, ties broken by amplification (by p99 latency
/// when amplification is the objective).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Objective {
    metric: Metric,
}

impl Objective {
    /// Least load on the server: attempts per request (ties: lower p99).
    pub const AMPLIFICATION: Objective = Objective {
        metric: Metric::Amplification,
    };

    /// The objective of optimising `metric`; `None` for a metric that is neither better low
    /// nor high (`requests`, `events`).
    pub fn new(metric: Metric) -> Option<Objective> {
        (metric.better() != Better::Neither).then_some(Objective { metric })
    }

    /// The metric optimised.
    pub fn metric(self) -> Metric {
        self.metric
    }

    /// The metric that orders pairs equal on the objective.
    pub fn tie_break(self) -> Metric {
        if self.metric == Metric::Amplification {
            Metric::LatencyP99Ms
        } else {
            Metric::Amplification
        }
    }

    /// The name `--objective` knows a metric by: `p99` and `success` for the p99 latency and
    /// the success rate, the metric's own name otherwise.
    pub fn name_of(metric: Metric) -> &'static str {
        match metric {
            Metric::LatencyP99Ms => "p99",
            Metric::SuccessRate => "success",
            other => other.name(),
        }
    }

    /// How `candidate` ranks: lower is better, an undefined value last.
    fn key(self, candidate: &Candidate) -> (f64, f64) {
        let value = |m: Metric| {
            let mean = candidate.mean(m);
            let lower_is_better = if m.better() == Better::Higher {
                -mean
            } else {
                mean
            };
            if lower_is_better.is_finite() {
                lower_is_better
            } else {
                f64::INFINITY
            }
        };
        (value(self.metric), value(self.tie_break()))
    }
}

impl FromStr for Objective {
    type Err = Error;

    /// Parses `amplification`, `p99`, `success` or the name of any metric that is better low
    /// or high; anything else is an error that lists them.
    fn from_str(text: &str) -> Result<Objective> {
        let metric = match text {
            "p99" => Some(Metric::LatencyP99Ms),
            "success" => Some(Metric::SuccessRate),
            name => Metric::ALL.into_iter().find(|m| m.name() == name),
        };
        metric.and_then(Objective::new).ok_or_else(|| {
            let rankable = Metric::ALL
                .into_iter()
                .filter(|m| m.better() != Better::Neither);
            Error::invalid(
                "--objective",
                format!("{text:?}"),
                format!(
                    "amplification, p99, success or another metric to minimise or maximise: {}",
                    names(rankable)
                ),
            )
        })
    }
}

/// The user's constraints; `None` means unconstrained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constraints {
    /// p99 latency at most this.
    pub p99: Option<SimDuration>,
    /// Attempts per request at most this.
    pub max_amplification: Option<f64>,
    /// Success rate at least this.
    pub min_success: Option<f64>,
    /// 99.9 % of succeeded requests finish within this (p99.9 latency at most this).
    pub deadline: Option<SimDuration>,
}

impl Constraints {
    /// The constraints as limits on metrics, in the order they are checked and reported.
    pub fn limits(&self) -> Vec<Limit> {
        let ms = |d: SimDuration| d.as_millis_f64();
        [
            (Metric::LatencyP99Ms, self.p99.map(ms)),
            (Metric::LatencyP999Ms, self.deadline.map(ms)),
            (Metric::Amplification, self.max_amplification),
            (Metric::SuccessRate, self.min_success),
        ]
        .into_iter()
        .filter_map(|(metric, bound)| bound.map(|bound| Limit { metric, bound }))
        .collect()
    }
}

/// A limit on the mean of one metric: at most `bound` when lower is better, at least `bound`
/// when higher is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    /// The metric limited.
    pub metric: Metric,
    /// The limit, in the metric's own unit (ms for a latency).
    pub bound: f64,
}

impl Limit {
    /// True when the limit is a floor (higher is better).
    pub fn is_floor(&self) -> bool {
        self.metric.better() == Better::Higher
    }
}

/// A limit missed: the candidate's mean and by how much it misses, relative to the limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Miss {
    /// The limit.
    pub limit: Limit,
    /// The candidate's mean (NaN when undefined).
    pub mean: f64,
    /// `|mean - bound| / |bound|` (infinite for an undefined mean).
    pub excess: f64,
}

/// A mean across replications and its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The mean (NaN when no replication defines the metric).
    pub mean: f64,
    /// Lower end of the interval.
    pub low: Option<f64>,
    /// Upper end of the interval.
    pub high: Option<f64>,
}

impl Default for Interval {
    fn default() -> Self {
        Interval {
            mean: f64::NAN,
            low: None,
            high: None,
        }
    }
}

/// One (point, strategy) with every metric's mean and interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Sweep point.
    pub point: u32,
    /// `key=value, ...` of the point (empty without a sweep).
    pub label: String,
    /// The point's sweep values, in key order.
    pub values: Vec<String>,
    /// Strategy name.
    pub strategy: String,
    /// Every metric across replications, as in `aggregate.csv`.
    pub metrics: PerMetric<Interval>,
    /// True when no other candidate has both lower amplification and lower p99.
    pub on_front: bool,
}

impl Candidate {
    /// The mean of a metric (NaN when undefined).
    pub fn mean(&self, metric: Metric) -> f64 {
        self.metrics[metric].mean
    }

    /// The limits the candidate misses (empty: it meets them all), and whether an interval
    /// crosses a limit it meets.
    fn misses(&self, limits: &[Limit]) -> (Vec<Miss>, bool) {
        let mut misses = Vec::new();
        let mut borderline = false;
        for &limit in limits {
            let Interval { mean, low, high } = self.metrics[limit.metric];
            let (beyond, crossed) = if limit.is_floor() {
                (mean < limit.bound, low.is_some_and(|l| l < limit.bound))
            } else {
                (mean > limit.bound, high.is_some_and(|h| h > limit.bound))
            };
            if mean.is_nan() || beyond {
                let excess = if mean.is_finite() {
                    (mean - limit.bound).abs() / limit.bound.abs().max(1e-12)
                } else {
                    f64::INFINITY
                };
                misses.push(Miss {
                    limit,
                    mean,
                    excess,
                });
            } else if crossed {
                borderline = true;
            }
        }
        (misses, borderline)
    }
}

/// A candidate that meets every constraint, as ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranked {
    /// Index into [`Recommendation::candidates`].
    pub candidate: usize,
    /// An interval crosses a limit the mean meets.
    pub borderline: bool,
}

/// A candidate that misses a constraint, with what it misses.
#[derive(Debug, Clone, PartialEq)]
pub struct Closest {
    /// Index into [`Recommendation::candidates`].
    pub candidate: usize,
    /// The limits missed, in the order of [`Constraints::limits`].
    pub misses: Vec<Miss>,
}

/// The result of [`recommend`].
#[derive(Debug)]
pub struct Recommendation {
    /// Every (point, strategy), by point and then in strategy order, the front marked.
    pub candidates: Vec<Candidate>,
    /// The candidates that meet every constraint, best first.
    pub ranked: Vec<Ranked>,
    /// When none does: every candidate, the closest (least total excess) first.
    pub closest: Vec<Closest>,
    /// The `pareto.csv` written.
    pub pareto_csv: PathBuf,
}

impl Recommendation {
    /// The chosen pair, if any meets the constraints.
    pub fn best(&self) -> Option<&Candidate> {
        self.ranked.first().map(|r| &self.candidates[r.candidate])
    }
}

/// Every (point, strategy) pair of `folder` (read from `dir`) with its metrics, in point then
/// scenario order, each marked when it is on the Pareto front of amplification and p99.
fn candidates(dir: &Path, folder: &ResultFolder) -> Result<Vec<Candidate>> {
    let mut by_pair: BTreeMap<(u32, String), Candidate> = BTreeMap::new();
    for row in &folder.aggregate {
        let point = folder.point(row.point);
        let candidate = by_pair
            .entry((row.point, row.strategy.clone()))
            .or_insert_with(|| Candidate {
                point: row.point,
                label: point
                    .map(|p| p.label(&folder.sweep_keys))
                    .unwrap_or_default(),
                values: point.map(|p| p.values.clone()).unwrap_or_default(),
                strategy: row.strategy.clone(),
                metrics: PerMetric::default(),
                on_front: false,
            });
        candidate.metrics[row.metric] = Interval {
            mean: row.mean.unwrap_or(f64::NAN),
            low: row.ci95_low,
            high: row.ci95_high,
        };
    }
    let order = |s: &str| {
        folder
            .strategies
            .iter()
            .position(|x| x == s)
            .unwrap_or(usize::MAX)
    };
    let mut candidates: Vec<Candidate> = by_pair.into_values().collect();
    candidates.sort_by_key(|c| (c.point, order(&c.strategy)));
    if candidates.is_empty() {
        return Err(Error::ResultFolder {
            path: dir.into(),
            message: "aggregate.csv holds no rows".into(),
        });
    }
    let coords: Vec<(f64, f64)> = candidates
        .iter()
        .map(|c| (c.mean(Metric::Amplification), c.mean(Metric::LatencyP99Ms)))
        .collect();
    for (c, on) in candidates.iter_mut().zip(pareto_front(&coords)) {
        c.on_front = on;
    }
    Ok(candidates)
}

/// Reads `dir`, ranks the pairs that meet `constraints` by `objective`, writes `pareto.csv`.
pub fn recommend(
    dir: &Path,
    constraints: &Constraints,
    objective: Objective,
) -> Result<Recommendation> {
    crate::output::stage::recover(dir)?;
    let folder = ResultFolder::read(dir)?;
    crate::output::owned::guard(dir, [ParetoRow::FILE])?;
    let candidates = candidates(dir, &folder)?;
    let limits = constraints.limits();
    let checked: Vec<(Vec<Miss>, bool)> = candidates.iter().map(|c| c.misses(&limits)).collect();
    let mut ranked: Vec<Ranked> = checked
        .iter()
        .enumerate()
        .filter(|(_, (misses, _))| misses.is_empty())
        .map(|(candidate, &(_, borderline))| Ranked {
            candidate,
            borderline,
        })
        .collect();
    // Stable sorts: ties keep the order of the candidates.
    ranked.sort_by(|a, b| {
        objective
            .key(&candidates[a.candidate])
            .partial_cmp(&objective.key(&candidates[b.candidate]))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut closest: Vec<Closest> = Vec::new();
    if ranked.is_empty() {
        closest = checked
            .into_iter()
            .enumerate()
            .map(|(candidate, (misses, _))| Closest { candidate, misses })
            .collect();
        let total = |c: &Closest| c.misses.iter().map(|m| m.excess).sum::<f64>();
        closest.sort_by(|a, b| {
            total(a)
                .partial_cmp(&total(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }

    let best = ranked.first().map(|r| r.candidate);
    let rows: Vec<ParetoRow> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| ParetoRow {
            point: c.point,
            strategy: c.strategy.clone(),
            sweep: c.values.clone(),
            amplification: defined(c.mean(Metric::Amplification)),
            latency_p99_ms: defined(c.mean(Metric::LatencyP99Ms)),
            on_front: c.on_front,
            recommended: best == Some(i),
        })
        .collect();
    // Recorded before it is written: cut short, it is still proven jitterlab's.
    crate::output::owned::record(dir, &[dir.join(ParetoRow::FILE)], false)?;
    let pareto_csv = write_rows(dir, &folder.sweep_keys, &rows)?;
    Ok(Recommendation {
        candidates,
        ranked,
        closest,
        pareto_csv,
    })
}
