//! `jitterlab recommend`: from a result folder, the (point, strategy) pairs that meet the
//! user's constraints, ranked by a stated objective, and the Pareto front of amplification
//! against p99 latency (`pareto.csv`).
//!
//! Constraints are checked on the means across replications; each candidate is printed with
//! its 95 % intervals, and one whose interval crosses a limit is marked `borderline`, so a
//! choice that only just passes is visible as such. When nothing meets the constraints the
//! answer names the pairs that come closest, with by how much they miss.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::atomic::write_atomic;
use crate::error::{Error, Result};
use crate::output::csv::number;
use crate::output::results::ResultFolder;
use crate::stats::pareto_front;
use crate::time::SimDuration;

/// What the recommendation optimises among the pairs that meet the constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// Least load on the server: attempts per request (ties: lower p99).
    Amplification,
    /// Lowest p99 latency (ties: lower amplification).
    P99,
    /// Highest success rate (ties: lower amplification).
    Success,
}

impl Objective {
    /// Parses `amplification`, `p99` or `success`.
    pub fn parse(text: &str) -> Result<Objective> {
        match text {
            "amplification" => Ok(Objective::Amplification),
            "p99" => Ok(Objective::P99),
            "success" => Ok(Objective::Success),
            other => Err(Error::invalid(
                "--objective",
                format!("{other:?}"),
                "amplification, p99 or success",
            )),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Objective::Amplification => {
                "lowest amplification (attempts per request), then lowest p99"
            }
            Objective::P99 => "lowest p99 latency, then lowest amplification",
            Objective::Success => "highest success rate, then lowest amplification",
        }
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

/// One (point, strategy) with the means and intervals the recommendation uses.
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
    /// `(mean, ci95_low, ci95_high)` per metric used.
    pub metrics: BTreeMap<&'static str, Interval>,
    /// True when no other candidate has both lower amplification and lower p99.
    pub on_front: bool,
}

/// `(mean, ci95_low, ci95_high)`.
pub type Interval = (f64, Option<f64>, Option<f64>);

/// A candidate, how far it misses the constraints in total, and the misses spelled out.
type Miss<'a> = (&'a Candidate, f64, Vec<(String, f64)>);

const USED: [&str; 4] = [
    "amplification",
    "latency_p99_ms",
    "success_rate",
    "latency_p999_ms",
];

impl Candidate {
    fn mean(&self, metric: &str) -> f64 {
        self.metrics.get(metric).map_or(f64::NAN, |m| m.0)
    }

    /// How far the candidate misses each constraint, as relative excesses (empty: it meets
    /// them all), and whether any interval crosses a limit.
    fn misses(&self, c: &Constraints) -> (Vec<(String, f64)>, bool) {
        let mut misses = Vec::new();
        let mut borderline = false;
        let mut at_most = |name: &str, metric: &str, limit: f64| {
            let (mean, _, high) =
                self.metrics
                    .get(metric)
                    .copied()
                    .unwrap_or((f64::NAN, None, None));
            if mean.is_nan() || mean > limit {
                let excess = if mean.is_finite() {
                    (mean - limit) / limit.abs().max(1e-12)
                } else {
                    f64::INFINITY
                };
                misses.push((
                    format!("{name} {} > {}", number_short(mean), number_short(limit)),
                    excess,
                ));
            } else if high.is_some_and(|h| h > limit) {
                borderline = true;
            }
        };
        if let Some(p99) = c.p99 {
            at_most("p99_ms", "latency_p99_ms", p99.as_millis_f64());
        }
        if let Some(d) = c.deadline {
            at_most("p999_ms", "latency_p999_ms", d.as_millis_f64());
        }
        if let Some(a) = c.max_amplification {
            at_most("amplification", "amplification", a);
        }
        if let Some(s) = c.min_success {
            let (mean, low, _) =
                self.metrics
                    .get("success_rate")
                    .copied()
                    .unwrap_or((f64::NAN, None, None));
            if mean.is_nan() || mean < s {
                let excess = if mean.is_finite() {
                    (s - mean) / s.max(1e-12)
                } else {
                    f64::INFINITY
                };
                misses.push((
                    format!("success {} < {}", number_short(mean), number_short(s)),
                    excess,
                ));
            } else if low.is_some_and(|l| l < s) {
                borderline = true;
            }
        }
        (misses, borderline)
    }
}

fn number_short(x: f64) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

/// The result of [`recommend`].
#[derive(Debug)]
pub struct Recommendation {
    /// Human-readable answer for stdout.
    pub text: String,
    /// The chosen pair, if any meets the constraints.
    pub best: Option<Candidate>,
    /// The `pareto.csv` written.
    pub pareto_csv: PathBuf,
}

/// Reads `dir`, ranks the pairs that meet `constraints` by `objective`, writes `pareto.csv`.
pub fn recommend(
    dir: &Path,
    constraints: &Constraints,
    objective: Objective,
    top: usize,
) -> Result<Recommendation> {
    let folder = ResultFolder::read(dir)?;
    let mut by_pair: BTreeMap<(u32, String), Candidate> = BTreeMap::new();
    let order = |s: &str| {
        folder
            .strategies
            .iter()
            .position(|x| x == s)
            .unwrap_or(usize::MAX)
    };
    for row in &folder.aggregate {
        let Some(&metric) = USED.iter().find(|m| **m == row.metric) else {
            continue;
        };
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
                metrics: BTreeMap::new(),
                on_front: false,
            });
        candidate.metrics.insert(
            metric,
            (row.mean.unwrap_or(f64::NAN), row.ci95_low, row.ci95_high),
        );
    }
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
        .map(|c| (c.mean("amplification"), c.mean("latency_p99_ms")))
        .collect();
    for (c, on) in candidates.iter_mut().zip(pareto_front(&coords)) {
        c.on_front = on;
    }

    let key = |c: &Candidate| -> (f64, f64) {
        let (a, p, s) = (
            c.mean("amplification"),
            c.mean("latency_p99_ms"),
            c.mean("success_rate"),
        );
        let nan_last = |x: f64| if x.is_finite() { x } else { f64::INFINITY };
        match objective {
            Objective::Amplification => (nan_last(a), nan_last(p)),
            Objective::P99 => (nan_last(p), nan_last(a)),
            Objective::Success => (nan_last(-s), nan_last(a)),
        }
    };
    let mut feasible: Vec<(&Candidate, bool)> = candidates
        .iter()
        .filter_map(|c| {
            let (misses, borderline) = c.misses(constraints);
            misses.is_empty().then_some((c, borderline))
        })
        .collect();
    feasible.sort_by(|a, b| {
        key(a.0)
            .partial_cmp(&key(b.0))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let best = feasible.first().map(|(c, _)| (*c).clone());

    let mut text = String::new();
    let _ = writeln!(text, "objective: {}", objective.describe());
    let _ = writeln!(text, "constraints: {}", describe_constraints(constraints));
    if feasible.is_empty() {
        let mut closest: Vec<Miss<'_>> = candidates
            .iter()
            .map(|c| {
                let (misses, _) = c.misses(constraints);
                let total: f64 = misses.iter().map(|m| m.1).sum();
                (c, total, misses)
            })
            .collect();
        closest.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal));
        let _ = writeln!(
            text,
            "\nno (point, strategy) meets every constraint; the closest are:"
        );
        for (c, _, misses) in closest.iter().take(top.max(1)) {
            let what = misses
                .iter()
                .map(|m| m.0.clone())
                .collect::<Vec<_>>()
                .join("; ");
            let _ = writeln!(text, "  {:<40} misses: {what}", pair_name(c));
        }
        let _ = writeln!(
            text,
            "relax the constraint they miss most, or widen the sweep."
        );
    } else {
        let _ = writeln!(
            text,
            "\n{} of {} (point, strategy) pairs meet the constraints; best first:",
            feasible.len(),
            candidates.len()
        );
        let _ = writeln!(
            text,
            "  {:<4} {:<40} {:>26} {:>30} {:>24}",
            "rank",
            "point / strategy",
            "amplification [95% CI]",
            "p99_ms [95% CI]",
            "success [95% CI]"
        );
        for (rank, (c, borderline)) in feasible.iter().take(top.max(1)).enumerate() {
            let cell = |m: &str| {
                let (mean, low, high) = c.metrics.get(m).copied().unwrap_or((f64::NAN, None, None));
                let f = |x: f64| {
                    if m == "success_rate" {
                        format!("{x:.4}")
                    } else {
                        number_short(x)
                    }
                };
                match (low, high) {
                    (Some(l), Some(h)) => format!("{} [{}, {}]", f(mean), f(l), f(h)),
                    _ => f(mean),
                }
            };
            let _ = writeln!(
                text,
                "  {:<4} {:<40} {:>26} {:>30} {:>24}{}",
                rank + 1,
                pair_name(c),
                cell("amplification"),
                cell("latency_p99_ms"),
                cell("success_rate"),
                if *borderline { "  borderline" } else { "" }
            );
        }
        if let Some(b) = &best {
            let _ = writeln!(text, "\nrecommended: {}", pair_name(b));
        }
    }

    let mut out = ::csv::Writer::from_writer(Vec::new());
    let header: Vec<String> = ["point", "strategy"]
        .iter()
        .map(|s| s.to_string())
        .chain(folder.sweep_keys.iter().cloned())
        .chain(
            ["amplification", "latency_p99_ms", "on_front", "recommended"]
                .iter()
                .map(|s| s.to_string()),
        )
        .collect();
    let path = dir.join("pareto.csv");
    let csv_err = |source| Error::Csv {
        path: path.clone(),
        source,
    };
    out.write_record(&header).map_err(csv_err)?;
    for c in &candidates {
        let recommended = best
            .as_ref()
            .is_some_and(|b| b.point == c.point && b.strategy == c.strategy);
        let mut row = vec![c.point.to_string(), c.strategy.clone()];
        row.extend(c.values.iter().cloned());
        row.extend([
            number(c.mean("amplification")),
            number(c.mean("latency_p99_ms")),
            c.on_front.to_string(),
            recommended.to_string(),
        ]);
        out.write_record(&row).map_err(csv_err)?;
    }
    let bytes = out
        .into_inner()
        .map_err(|e| Error::io(&path, e.into_error()))?;
    write_atomic(&path, &bytes)?;
    Ok(Recommendation {
        text,
        best,
        pareto_csv: path,
    })
}

fn pair_name(c: &Candidate) -> String {
    if c.label.is_empty() {
        c.strategy.clone()
    } else {
        format!("{} / {}", c.label, c.strategy)
    }
}

fn describe_constraints(c: &Constraints) -> String {
    let mut parts = Vec::new();
    if let Some(p) = c.p99 {
        parts.push(format!("p99 <= {p}"));
    }
    if let Some(d) = c.deadline {
        parts.push(format!("p99.9 <= {d} (deadline)"));
    }
    if let Some(a) = c.max_amplification {
        parts.push(format!("amplification <= {a}"));
    }
    if let Some(s) = c.min_success {
        parts.push(format!("success >= {s}"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}
