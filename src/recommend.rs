//! `jitterlab recommend`: from a result folder, the (point, strategy) pairs that meet the
//! user's constraints, ranked by a stated objective, and the Pareto front of amplification
//! against p99 latency (`pareto.csv`).
//!
//! Only what a user chooses is compared: the strategies and the sweep keys that are choices
//! ([`crate::scenario::roles`]), at one point of the keys that describe the world (load,
//! faults) at a time, never across them: each world point gets its own ranking, front and
//! recommendation, and `--at KEY=VALUE` narrows the folder to some of them. A success floor
//! always applies: `--min-success`, else the scenario's `recommend.min_success`, else 0.999,
//! so that a policy that drops requests is never the cheap answer.
//!
//! Constraints are checked on the means across replications; a candidate whose 95 % interval
//! crosses a limit is marked borderline, so a choice that only just passes is visible as such.
//! When nothing meets the constraints at a world point the answer lists its pairs by how far
//! they miss them. The answer is data ([`Recommendation`]); the binary prints it.
//!
//! Without an objective named, the answer is the fewest attempts per request; for a folder
//! where some strategy hedges (`hedging.csv`) it is the lowest p99 within
//! [`HEDGING_MAX_AMPLIFICATION`] copies per request ([`recommend_for`]): a hedge is sent to cut
//! the tail, and the fewest copies would always be not to hedge.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::folder::Folder;
use crate::metric::{Better, Metric, PerMetric, names};
use crate::output::csv::write_rows;
use crate::output::design::Design;
use crate::output::results::{ParetoRow, ResultFolder, sweep_value_number};
use crate::output::rows::defined;
use crate::output::rows::{HedgingRow, Row};
use crate::stats::pareto_fronts;
use crate::time::SimDuration;

/// What the recommendation optimises among the pairs that meet the constraints: one metric,
/// lowest or highest as the metric is better, ties broken by amplification (by p99 latency
/// when amplification is the objective).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Objective {
    metric: Metric,
    /// The folder's load per request ([`ResultFolder::load_metric`]): the tie-break, and
    /// what `amplification` names in a chain.
    load: Metric,
}

impl Objective {
    /// Least load on the server: attempts per request (ties: lower p99).
    pub const AMPLIFICATION: Objective = Objective {
        metric: Metric::Amplification,
        load: Metric::Amplification,
    };

    /// The lowest p99 latency (ties: lower amplification): what hedging is for.
    pub const P99: Objective = Objective {
        metric: Metric::LatencyP99Ms,
        load: Metric::Amplification,
    };

    /// The objective of optimising `metric`; `None` for a metric that is neither better low
    /// nor high (`requests`, `events`).
    pub fn new(metric: Metric) -> Option<Objective> {
        (metric.better() != Better::Neither).then_some(Objective {
            metric,
            load: Metric::Amplification,
        })
    }

    /// The objective on `folder`: in a chain, whose edge `amplification` counts only the
    /// clients' own attempts, the least load is the whole chain's ([`Metric::load`]).
    pub fn for_folder(self, folder: &ResultFolder) -> Objective {
        let load = folder.load_metric();
        Objective {
            metric: match self.metric {
                Metric::Amplification => load,
                other => other,
            },
            load,
        }
    }

    /// The metric optimised.
    pub fn metric(self) -> Metric {
        self.metric
    }

    /// The load per request weighed: `amplification`, a chain's `chain_amplification`.
    pub fn load(self) -> Metric {
        self.load
    }

    /// The metric that orders pairs equal on the objective.
    pub fn tie_break(self) -> Metric {
        if self.metric == self.load {
            Metric::LatencyP99Ms
        } else {
            self.load
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
    /// Success rate at least this (`None`: the scenario's success target, else 0.999).
    pub min_success: Option<f64>,
    /// 99.9 % of succeeded requests finish within this (p99.9 latency at most this).
    pub deadline: Option<SimDuration>,
}

impl Constraints {
    /// The constraints as limits on metrics, in the order they are checked and reported.
    pub fn limits(&self) -> Vec<Limit> {
        self.limits_on(Metric::Amplification)
    }

    /// [`Constraints::limits`], the limit on amplification put on `load` (a chain's
    /// [`Metric::ChainAmplification`]).
    pub fn limits_on(&self, load: Metric) -> Vec<Limit> {
        let ms = |d: SimDuration| d.as_millis_f64();
        [
            (Metric::LatencyP99Ms, self.p99.map(ms)),
            (Metric::LatencyP999Ms, self.deadline.map(ms)),
            (load, self.max_amplification),
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

impl Interval {
    /// `(low, high)`, NaN where there is no interval.
    pub fn span(self) -> (f64, f64) {
        (self.low.unwrap_or(f64::NAN), self.high.unwrap_or(f64::NAN))
    }
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
    /// `key=value, ...` of the sweep keys that are choices (empty when none are swept).
    pub choice: String,
    /// Strategy name.
    pub strategy: String,
    /// Every metric across replications, as in `aggregate.csv`.
    pub metrics: PerMetric<Interval>,
    /// Its world point (an index into [`Recommendation::worlds`]' numbering of the folder's
    /// world points, [`crate::output::design::Design::worlds`]).
    pub world: usize,
    /// Meets every constraint (the success floor among them).
    pub eligible: bool,
    /// True when no other eligible candidate of its world point has both lower (or equal, one
    /// lower) amplification and p99.
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

/// Where the success floor came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloorSource {
    /// `--min-success`.
    Flag,
    /// The scenario's `recommend.min_success`.
    Scenario,
    /// The default, [`crate::output::design::DEFAULT_TARGET`].
    Default,
}

/// The answer at one world point.
#[derive(Debug, Clone)]
pub struct WorldAnswer {
    /// The world point's index among the folder's world points.
    pub world: usize,
    /// Its values as a reader reads them (`offered load 27/s, spike length 1 s`); empty
    /// without world keys.
    pub label: String,
    /// `KEY=VALUE` of each world key, as `--at` takes them.
    pub at: Vec<String>,
    /// The candidates that meet every constraint, best first.
    pub ranked: Vec<Ranked>,
    /// When none does: the candidates, the closest (least total excess) first.
    pub closest: Vec<Closest>,
    /// The choice keys whose value at the chosen pair is the smallest or the largest swept:
    /// the best may lie beyond the grid.
    pub edges: Vec<Edge>,
    /// The other pairs that meet the constraints and the replications do not tell apart from
    /// the chosen one on the objective (the paired difference's 95 % interval holds 0, or
    /// for pairs at different points their own intervals overlap the first-ranked's),
    /// best first; the choice among them went to the better on the tie-break.
    pub tied: Vec<usize>,
    /// Where the chosen pair is far from the other pairs of its world point.
    pub far: Vec<Far>,
    /// True when a tie was decided by the tie-break beyond the replications' noise (the pick
    /// is not the first on the objective); false when the first-ranked was kept.
    pub tie_decided: bool,
}

/// The chosen pair far from the others on a metric it was not chosen for: its p99 more than
/// [`FAR_P99`] times the others' median, or its success more than [`FAR_SUCCESS`] below
/// the best of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Far {
    /// `latency_p99_ms` or `success_rate`.
    pub metric: Metric,
    /// The chosen pair's mean.
    pub value: f64,
    /// The others': the median p99, or the best success.
    pub others: f64,
}

/// A chosen p99 this many times the median of the other pairs' is worth a word.
pub const FAR_P99: f64 = 2.0;
/// A chosen success this far (absolute) below the best of the other pairs' is worth a word.
pub const FAR_SUCCESS: f64 = 0.05;

/// A choice key at the edge of its swept values at the chosen pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The sweep key.
    pub key: String,
    /// Its value at the chosen pair, as written.
    pub value: String,
    /// The largest value swept (else the smallest).
    pub largest: bool,
}

impl WorldAnswer {
    /// The chosen pair's index into [`Recommendation::candidates`], if any meets the
    /// constraints.
    pub fn best(&self) -> Option<usize> {
        self.ranked.first().map(|r| r.candidate)
    }
}

/// The copies per request a hedge may cost when the user names neither an objective nor
/// `--max-amplification` on a folder that hedges: 1.25, a quarter more load on the server,
/// the extra load a hedge after about the service time's p75 sends at light load (one copy
/// more for each request slower than the delay) and well short of the 2× that every request
/// hedged would send.
pub const HEDGING_MAX_AMPLIFICATION: f64 = 1.25;

/// What [`recommend_for`] filled in for a folder that hedges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HedgingDefaults {
    /// The objective became [`Objective::P99`] (none was named).
    pub objective: bool,
    /// The amplification limit became [`HEDGING_MAX_AMPLIFICATION`] (none was given).
    pub max_amplification: bool,
}

/// The result of [`recommend`].
#[derive(Debug)]
pub struct Recommendation {
    /// The objective ranked by.
    pub objective: Objective,
    /// What was filled in because the folder hedges ([`recommend_for`]); `None` otherwise.
    pub hedging_defaults: Option<HedgingDefaults>,
    /// Every (point, strategy) selected (all of them without `--at`), by point and then in
    /// strategy order, each with its world point and the front of its world point marked.
    pub candidates: Vec<Candidate>,
    /// One answer per world point selected, in grid order.
    pub worlds: Vec<WorldAnswer>,
    /// The sweep keys that describe the world (none: one world point).
    pub world_keys: Vec<String>,
    /// The sweep keys that are the user's choice besides the strategy.
    pub choice_keys: Vec<String>,
    /// The constraints applied, the success floor filled in.
    pub constraints: Constraints,
    /// Where the success floor came from.
    pub floor: FloorSource,
    /// The `pareto.csv` written.
    pub pareto_csv: PathBuf,
}

impl Recommendation {
    /// The chosen pair when the selection is one world point and a pair meets the
    /// constraints there.
    pub fn best(&self) -> Option<&Candidate> {
        match &self.worlds[..] {
            [one] => one.best().map(|i| &self.candidates[i]),
            _ => None,
        }
    }
}

/// `--at KEY=VALUE`: keep the points whose sweep value of `KEY` is `VALUE` (as written, or
/// the same number or duration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    /// The sweep key.
    pub key: String,
    /// The value, as typed.
    pub value: String,
}

impl FromStr for At {
    type Err = Error;

    fn from_str(text: &str) -> Result<At> {
        let (key, value) = text.split_once('=').ok_or_else(|| {
            Error::invalid(
                "--at",
                format!("{text:?}"),
                "KEY=VALUE, a sweep key and one of its values (--at workload.rate=50)",
            )
        })?;
        Ok(At {
            key: key.trim().to_string(),
            value: value.trim().to_string(),
        })
    }
}

/// True when a sweep value as written and a value as typed are the same.
fn same_value(written: &str, typed: &str) -> bool {
    let bare = |t: &str| t.trim().trim_matches('"').to_string();
    if bare(written) == bare(typed) {
        return true;
    }
    match (sweep_value_number(written), sweep_value_number(typed)) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
        _ => false,
    }
}

/// The points `at` keeps, or an error naming the `--at` that names no sweep key or value.
fn select(folder: &ResultFolder, at: &[At]) -> Result<Vec<u32>> {
    for (i, a) in at.iter().enumerate() {
        if let Some(b) =
            (at[..i].iter()).find(|b| b.key == a.key && !same_value(&b.value, &a.value))
        {
            return Err(Error::invalid(
                "--at",
                format!("{:?}", format!("{}={}", a.key, a.value)),
                format!(
                    "one value per key: {} is already given as {} (a world point has one value of each key; \
                     leave --at out to see every point)",
                    a.key, b.value
                ),
            ));
        }
    }
    for a in at {
        let text = format!("{}={}", a.key, a.value);
        let Some(k) = folder.sweep_keys.iter().position(|s| *s == a.key) else {
            let allowed = if folder.sweep_keys.is_empty() {
                "nothing: this folder has no sweep".to_string()
            } else {
                format!(
                    "KEY=VALUE with a sweep key of this folder: {}",
                    folder.sweep_keys.join(", ")
                )
            };
            return Err(Error::invalid("--at", format!("{text:?}"), allowed));
        };
        if !folder
            .points
            .iter()
            .any(|p| same_value(&p.values[k], &a.value))
        {
            let mut values: Vec<&str> = Vec::new();
            for p in &folder.points {
                if !values.contains(&p.values[k].as_str()) {
                    values.push(&p.values[k]);
                }
            }
            return Err(Error::invalid(
                "--at",
                format!("{text:?}"),
                format!("a value of {} in this folder: {}", a.key, values.join(", ")),
            ));
        }
    }
    Ok((folder.points.iter())
        .filter(|p| {
            at.iter().all(|a| {
                let k = folder.sweep_keys.iter().position(|s| *s == a.key);
                k.is_some_and(|k| same_value(&p.values[k], &a.value))
            })
        })
        .map(|p| p.index)
        .collect())
}

/// Reads `dir`, ranks the pairs that meet `constraints` by `objective` at each world point,
/// writes `pareto.csv`. The same as [`recommend_at`] without `--at`.
pub fn recommend(
    dir: &Path,
    constraints: &Constraints,
    objective: Objective,
) -> Result<Recommendation> {
    recommend_at(dir, constraints, objective, &[])
}

/// [`recommend_at`] with the objective the user named, else the default for the folder: for
/// a folder where some strategy hedges (`hedging.csv`), [`Objective::P99`] within
/// [`HEDGING_MAX_AMPLIFICATION`] copies per request (unless `constraints` limits the
/// amplification itself), recorded in [`Recommendation::hedging_defaults`]; else
/// [`Objective::AMPLIFICATION`].
pub fn recommend_for(
    dir: &Path,
    constraints: &Constraints,
    objective: Option<Objective>,
    at: &[At],
) -> Result<Recommendation> {
    // A commit cut short is finished (under the lock, released before recommend_at takes it).
    drop(Folder::open(dir)?);
    let hedges = objective.is_none() && dir.join(HedgingRow::FILE).is_file();
    if !hedges {
        let objective = objective.unwrap_or(Objective::AMPLIFICATION);
        return recommend_at(dir, constraints, objective, at);
    }
    let defaults = HedgingDefaults {
        objective: true,
        max_amplification: constraints.max_amplification.is_none(),
    };
    let constraints = Constraints {
        max_amplification: (constraints.max_amplification).or(Some(HEDGING_MAX_AMPLIFICATION)),
        ..*constraints
    };
    let mut answer = recommend_at(dir, &constraints, Objective::P99, at)?;
    answer.hedging_defaults = Some(defaults);
    Ok(answer)
}

/// Reads `dir`, keeps the points `at` selects, and at each of their world points ranks the
/// pairs that meet `constraints` (the success floor filled in from the scenario or the
/// default) by `objective`; writes `pareto.csv` for the pairs kept.
pub fn recommend_at(
    dir: &Path,
    constraints: &Constraints,
    objective: Objective,
    at: &[At],
) -> Result<Recommendation> {
    let result = Folder::open(dir)?;
    let folder = ResultFolder::read(dir)?;
    // Both files it writes, before either: a foreign recommendation.txt refuses the whole call.
    result.guard([ParetoRow::FILE, crate::folder::names::RECOMMENDATION])?;
    let design = Design::of(&folder);
    let objective = objective.for_folder(&folder);
    let load = folder.load_metric();
    let kept = select(&folder, at)?;
    let (constraints, floor) = fill_success_floor(constraints, &folder, &design);
    if kept.is_empty() {
        let given: Vec<String> = at
            .iter()
            .map(|a| format!("{}={}", a.key, a.value))
            .collect();
        return Err(Error::invalid(
            "--at",
            given.join(" "),
            "values that some point of the sweep has together (each exists, but no point has all of them)",
        ));
    }
    let mut candidates = candidates(&folder, &design, &kept);
    if candidates.is_empty() {
        return Err(Error::ResultFolder {
            path: dir.into(),
            message: "aggregate.csv holds no rows".into(),
        });
    }
    let limits = constraints.limits_on(load);
    let checked = mark_eligible_and_fronts(&mut candidates, &limits, load);
    let mut worlds: Vec<usize> = candidates.iter().map(|c| c.world).collect();
    worlds.dedup();
    let answers: Vec<WorldAnswer> = worlds
        .into_iter()
        .map(|w| answer(&folder, &design, w, &candidates, &checked, objective))
        .collect();
    let best: Vec<usize> = answers.iter().filter_map(WorldAnswer::best).collect();
    let rows = pareto_rows(&candidates, &best, folder.layered());
    // Recorded before it is written: cut short, it is still proven jitterlab's.
    result.record(&[dir.join(ParetoRow::FILE)], false)?;
    let pareto_csv = write_rows(dir, &folder.sweep_keys, &rows)?;
    let names = |keys: &[usize]| keys.iter().map(|&k| folder.sweep_keys[k].clone()).collect();
    Ok(Recommendation {
        objective,
        hedging_defaults: None,
        candidates,
        worlds: answers,
        world_keys: names(&design.world_keys),
        choice_keys: names(&design.choice_keys),
        constraints,
        floor,
        pareto_csv,
    })
}

/// Keeps `text`, the answer as `recommend` printed it, in `dir`'s `recommendation.txt` for
/// the report: never over a file jitterlab did not write, recorded in `meta.json` before it
/// is written, and written whole.
pub fn keep_answer(dir: &Path, text: &str) -> Result<PathBuf> {
    let result = Folder::open(dir)?;
    let path = dir.join(crate::folder::names::RECOMMENDATION);
    result.guard([crate::folder::names::RECOMMENDATION])?;
    result.record(std::slice::from_ref(&path), false)?;
    crate::atomic::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// The constraints with the success floor filled in with the design's target when no
/// `--min-success` was given, and where the floor came from (the flag, the scenario's
/// `min_success`, the default).
fn fill_success_floor(
    constraints: &Constraints,
    folder: &ResultFolder,
    design: &Design,
) -> (Constraints, FloorSource) {
    match constraints.min_success {
        Some(_) => (*constraints, FloorSource::Flag),
        None => {
            let from_scenario = folder.scenario.as_ref().and_then(|s| s.min_success);
            let source = if from_scenario.is_some() {
                FloorSource::Scenario
            } else {
                FloorSource::Default
            };
            let filled = Constraints {
                min_success: Some(design.target),
                ..*constraints
            };
            (filled, source)
        }
    }
}

/// Marks the candidates that meet `limits` eligible and those on their world's Pareto front
/// of `load` (attempts per request) and p99 latency among the eligible; returns what each
/// one misses.
fn mark_eligible_and_fronts(
    candidates: &mut [Candidate],
    limits: &[Limit],
    load: Metric,
) -> Vec<(Vec<Miss>, bool)> {
    let checked: Vec<(Vec<Miss>, bool)> = candidates.iter().map(|c| c.misses(limits)).collect();
    for (c, (misses, _)) in candidates.iter_mut().zip(&checked) {
        c.eligible = misses.is_empty();
    }
    let coords: Vec<(f64, f64)> = (candidates.iter())
        .map(|c| (c.mean(load), c.mean(Metric::LatencyP99Ms)))
        .collect();
    let spans: Vec<[(f64, f64); 2]> = (candidates.iter())
        .map(|c| [load, Metric::LatencyP99Ms].map(|m| c.metrics[m].span()))
        .collect();
    let groups: Vec<usize> = candidates.iter().map(|c| c.world).collect();
    let eligible: Vec<bool> = candidates.iter().map(|c| c.eligible).collect();
    for (c, on) in candidates
        .iter_mut()
        .zip(pareto_fronts(&coords, &spans, &groups, &eligible))
    {
        c.on_front = on;
    }
    checked
}

/// The rows of `pareto.csv`: every candidate, those at `best` recommended; the chain's
/// amplification too when `layered`.
fn pareto_rows(candidates: &[Candidate], best: &[usize], layered: bool) -> Vec<ParetoRow> {
    (candidates.iter().enumerate())
        .map(|(i, c)| ParetoRow {
            point: c.point,
            strategy: c.strategy.clone(),
            sweep: c.values.clone(),
            amplification: defined(c.mean(Metric::Amplification)),
            latency_p99_ms: defined(c.mean(Metric::LatencyP99Ms)),
            on_front: c.on_front,
            recommended: best.contains(&i),
            success_rate: defined(c.mean(Metric::SuccessRate)),
            eligible: Some(c.eligible),
            chain_amplification: defined(c.mean(Metric::ChainAmplification)).filter(|_| layered),
        })
        .collect()
}

/// Every (point, strategy) of the points kept, by point and then in strategy order.
fn candidates(folder: &ResultFolder, design: &Design, kept: &[u32]) -> Vec<Candidate> {
    let mut by_pair: BTreeMap<(u32, String), Candidate> = BTreeMap::new();
    for row in folder.aggregate.iter().filter(|r| kept.contains(&r.point)) {
        let point = folder.point(row.point);
        let candidate = by_pair
            .entry((row.point, row.strategy.clone()))
            .or_insert_with(|| Candidate {
                point: row.point,
                label: point
                    .map(|p| p.label(&folder.sweep_keys))
                    .unwrap_or_default(),
                values: point.map(|p| p.values.clone()).unwrap_or_default(),
                choice: point.map_or_else(String::new, |p| {
                    (design.choice_keys.iter())
                        .map(|&k| format!("{}={}", folder.sweep_keys[k], p.values[k]))
                        .collect::<Vec<_>>()
                        .join(", ")
                }),
                strategy: row.strategy.clone(),
                metrics: PerMetric::default(),
                world: design.world_of(row.point).unwrap_or(0),
                eligible: false,
                on_front: false,
            });
        candidate.metrics[row.metric] = Interval {
            mean: row.mean.unwrap_or(f64::NAN),
            low: row.ci95_low,
            high: row.ci95_high,
        };
    }
    let order = |s: &str| {
        (folder.strategies.iter())
            .position(|x| x == s)
            .unwrap_or(usize::MAX)
    };
    let mut candidates: Vec<Candidate> = by_pair.into_values().collect();
    candidates.sort_by_key(|c| (c.world, c.point, order(&c.strategy)));
    candidates
}

/// The ranking (or the closest misses) at world point `world`.
fn answer(
    folder: &ResultFolder,
    design: &Design,
    world: usize,
    candidates: &[Candidate],
    checked: &[(Vec<Miss>, bool)],
    objective: Objective,
) -> WorldAnswer {
    let mine: Vec<usize> = (0..candidates.len())
        .filter(|&i| candidates[i].world == world)
        .collect();
    let mut ranked: Vec<Ranked> = (mine.iter())
        .filter(|&&i| checked[i].0.is_empty())
        .map(|&i| Ranked {
            candidate: i,
            borderline: checked[i].1,
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
        closest = (mine.iter())
            .map(|&i| Closest {
                candidate: i,
                misses: checked[i].0.clone(),
            })
            .collect();
        // Equally short of the constraints (every candidate fails outright when the server
        // is down), the better on the objective is the closer.
        let total = |c: &Closest| c.misses.iter().map(|m| m.excess).sum::<f64>();
        let key = |c: &Closest| (total(c), objective.key(&candidates[c.candidate]));
        closest.sort_by(|a, b| {
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        // Short by amounts the replications do not tell apart, the better on the objective
        // is the closer too.
        let near = |c: &Closest| {
            let (first, other) = (&closest[0], &candidates[c.candidate]);
            let metrics = |m: &[Miss]| m.iter().map(|m| m.limit.metric).collect::<Vec<_>>();
            metrics(&first.misses) == metrics(&c.misses)
                && (first.misses.iter())
                    .all(|m| overlap(folder, &candidates[first.candidate], other, m.limit.metric))
        };
        let tied = closest.iter().take_while(|c| near(c)).count().max(1);
        closest[..tied].sort_by(|a, b| {
            let key = |c: &Closest| objective.key(&candidates[c.candidate]);
            key(a)
                .partial_cmp(&key(b))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    let (tied, tie_decided) = break_ties(folder, &mut ranked, candidates, objective);
    let edges = ranked.first().map_or(Vec::new(), |r| {
        edges(folder, design, &candidates[r.candidate], &mine, candidates)
    });
    let far = ranked.first().map_or(Vec::new(), |r| {
        far_from_the_others(r.candidate, &mine, candidates, objective)
    });
    WorldAnswer {
        world,
        label: design.world_label(folder, world),
        at: design.world_assignments(folder, world),
        ranked,
        closest,
        edges,
        tied,
        far,
        tie_decided,
    }
}

/// True when the replications do not tell `a` and `b` apart on `metric`. Two strategies at
/// one point ran on common random numbers: their paired difference (`compare.csv`) decides,
/// tied when its 95 % interval holds 0. Otherwise their own 95 % intervals overlap (or,
/// without intervals, their means are equal).
fn overlap(folder: &ResultFolder, a: &Candidate, b: &Candidate, metric: Metric) -> bool {
    if a.point == b.point && a.strategy != b.strategy {
        let paired = (folder.compare.iter().flatten()).find(|r| {
            r.point == a.point
                && r.metric == metric
                && ((r.strategy_a == a.strategy && r.strategy_b == b.strategy)
                    || (r.strategy_a == b.strategy && r.strategy_b == a.strategy))
        });
        if let Some((Some(lo), Some(hi))) = paired.map(|r| (r.ci95_low, r.ci95_high)) {
            return lo <= 0.0 && 0.0 <= hi;
        }
    }
    let (x, y) = (a.metrics[metric], b.metrics[metric]);
    match (x.low, x.high, y.low, y.high) {
        (Some(xl), Some(xh), Some(yl), Some(yh)) => xl <= yh && yl <= xh,
        _ => x.mean == y.mean,
    }
}

/// Among the ranked pairs tied with the first on the objective ([`overlap`]), puts first
/// the one better on the tie-break beyond the noise (else the first-ranked stays), and
/// returns the others tied, in order, and whether the tie-break moved the pick: a difference
/// the replications do not support decides nothing.
fn break_ties(
    folder: &ResultFolder,
    ranked: &mut [Ranked],
    candidates: &[Candidate],
    objective: Objective,
) -> (Vec<usize>, bool) {
    let Some(first) = ranked.first().map(|r| &candidates[r.candidate]) else {
        return (Vec::new(), false);
    };
    let metric = objective.metric();
    let tied = ranked
        .iter()
        .take_while(|r| overlap(folder, first, &candidates[r.candidate], metric))
        .count()
        .max(1); // the first is tied with itself, even where its mean is undefined
    let tie_break = Objective {
        metric: objective.tie_break(),
        load: objective.load,
    };
    // The pick moves off the first-ranked only for a pair better on the tie-break by more
    // than the replications' noise: a hair's difference decides nothing either.
    let key = |i: usize| tie_break.key(&candidates[ranked[i].candidate]);
    let mut pick = 0;
    for i in 1..tied {
        let (a, b) = (
            &candidates[ranked[pick].candidate],
            &candidates[ranked[i].candidate],
        );
        if key(i) < key(pick) && !overlap(folder, a, b, tie_break.metric) {
            pick = i;
        }
    }
    ranked[..=pick].rotate_right(1);
    (
        ranked[1..tied].iter().map(|r| r.candidate).collect(),
        pick > 0,
    )
}

/// Where the pick is far from the other pairs of its world point `mine` on the p99 and the
/// success rate, when neither is the objective (see [`Far`]).
fn far_from_the_others(
    pick: usize,
    mine: &[usize],
    candidates: &[Candidate],
    objective: Objective,
) -> Vec<Far> {
    let others = |m: Metric| -> Vec<f64> {
        let mut v: Vec<f64> = (mine.iter().filter(|&&i| i != pick))
            .map(|&i| candidates[i].mean(m))
            .filter(|x| x.is_finite())
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let mut out = Vec::new();
    let value = |m: Metric| candidates[pick].mean(m);
    let p99 = others(Metric::LatencyP99Ms);
    if objective.metric() != Metric::LatencyP99Ms && !p99.is_empty() {
        let median = p99[p99.len() / 2];
        if value(Metric::LatencyP99Ms) > FAR_P99 * median && median > 0.0 {
            out.push(Far {
                metric: Metric::LatencyP99Ms,
                value: value(Metric::LatencyP99Ms),
                others: median,
            });
        }
    }
    let success = others(Metric::SuccessRate);
    if let Some(&best) = success.last()
        && objective.metric() != Metric::SuccessRate
        && value(Metric::SuccessRate) < best - FAR_SUCCESS
    {
        out.push(Far {
            metric: Metric::SuccessRate,
            value: value(Metric::SuccessRate),
            others: best,
        });
    }
    out
}

/// The numeric choice keys (two values or more among the candidates `mine`) whose value at
/// `pick` is the smallest or the largest of them.
fn edges(
    folder: &ResultFolder,
    design: &Design,
    pick: &Candidate,
    mine: &[usize],
    candidates: &[Candidate],
) -> Vec<Edge> {
    let mut out = Vec::new();
    for &k in &design.choice_keys {
        let number = |c: &Candidate| c.values.get(k).and_then(|v| sweep_value_number(v));
        let Some(at) = number(pick) else { continue };
        let values: Vec<f64> = mine
            .iter()
            .filter_map(|&i| number(&candidates[i]))
            .collect();
        let (lo, hi) = values
            .iter()
            .fold((at, at), |(l, h), &v| (l.min(v), h.max(v)));
        if lo == hi {
            continue;
        }
        if at == hi || at == lo {
            out.push(Edge {
                key: folder.sweep_keys[k].clone(),
                value: pick.values[k].clone(),
                largest: at == hi,
            });
        }
    }
    out
}
