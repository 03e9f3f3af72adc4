//! An experiment as its results are read: what the reader chooses, what the world gives, and
//! what counts as good enough.
//!
//! A *world point* is one combination of the sweep keys that describe the world (load, faults,
//! servers: [`crate::scenario::roles`]); every point of the sweep belongs to one. At a world
//! point, the *candidates* are the (point, strategy) pairs the reader could pick: each strategy
//! at each combination of the sweep keys that are choices. Fronts, recommendations and
//! single-point charts compare candidates of one world point only. The *success target* is
//! the scenario's `recommend.min_success`, else [`DEFAULT_TARGET`].

use std::collections::HashMap;

use crate::metric::Metric;
use crate::output::labels;
use crate::output::results::ResultFolder;
use crate::scenario::Role;
use crate::scenario::roles::default_role;

/// The success target when the scenario sets none.
pub const DEFAULT_TARGET: f64 = 0.999;

/// A world point: its values of the world keys and the sweep points that share them.
#[derive(Debug, Clone, PartialEq)]
pub struct World {
    /// One value per world key, in sweep order, as written.
    pub values: Vec<String>,
    /// The sweep points at this world point, in grid order.
    pub points: Vec<u32>,
}

/// A (point, strategy) pair a reader could choose.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The sweep point.
    pub point: u32,
    /// The strategy's name.
    pub strategy: String,
    /// The strategy's colour: its palette slot, from its name.
    pub color: usize,
}

/// The design of a result folder.
#[derive(Debug, Clone)]
pub struct Design {
    /// The sweep keys (indices into the folder's `sweep_keys`) that describe the world.
    pub world_keys: Vec<usize>,
    /// The sweep keys that are the reader's choice.
    pub choice_keys: Vec<usize>,
    /// The world points, in the order of their first sweep point.
    pub worlds: Vec<World>,
    /// The success target.
    pub target: f64,
    /// The world point of each sweep point, by point index.
    world_by_point: HashMap<u32, usize>,
    /// The candidates of each world point ([`Design::candidates`]).
    candidates: Vec<Vec<Candidate>>,
    /// The world point single-point charts show ([`Design::showcase`]).
    showcase: usize,
}

impl Design {
    /// The design of `folder`: roles from its `scenario.toml` (the default table without one).
    pub fn of(folder: &ResultFolder) -> Design {
        let roles: Vec<Role> = match &folder.scenario {
            Some(s) if s.roles.len() == folder.sweep_keys.len() => s.roles.clone(),
            _ => folder.sweep_keys.iter().map(|k| default_role(k)).collect(),
        };
        let (world_keys, choice_keys): (Vec<usize>, Vec<usize>) =
            (0..roles.len()).partition(|&i| roles[i] == Role::World);
        // Each point's world point, found through a map of the world values seen so far.
        let mut worlds: Vec<World> = Vec::new();
        let mut by_values: HashMap<Vec<String>, usize> = HashMap::new();
        let mut world_by_point = HashMap::with_capacity(folder.points.len());
        for p in &folder.points {
            let values: Vec<String> = world_keys.iter().map(|&k| p.values[k].clone()).collect();
            let w = *by_values.entry(values.clone()).or_insert_with(|| {
                worlds.push(World {
                    values,
                    points: Vec::new(),
                });
                worlds.len() - 1
            });
            worlds[w].points.push(p.index);
            world_by_point.insert(p.index, w);
        }
        let slots = crate::output::palette::slots(&folder.strategies);
        let candidates = (worlds.iter())
            .map(|w| {
                let mut out = Vec::new();
                for &point in &w.points {
                    for (&color, s) in slots.iter().zip(&folder.strategies) {
                        if folder.aggregate_of(point, s, Metric::Requests).is_some() {
                            out.push(Candidate {
                                point,
                                strategy: s.clone(),
                                color,
                            });
                        }
                    }
                }
                out
            })
            .collect();
        let target = folder
            .scenario
            .as_ref()
            .and_then(|s| s.min_success)
            .unwrap_or(DEFAULT_TARGET);
        let mut design = Design {
            world_keys,
            choice_keys,
            worlds,
            target,
            world_by_point,
            candidates,
            showcase: 0,
        };
        design.showcase = design.pick_showcase(folder);
        design
    }

    /// The world point of a sweep point.
    pub fn world_of(&self, point: u32) -> Option<usize> {
        self.world_by_point.get(&point).copied()
    }

    /// The candidates of world point `world`: each of its points × each strategy with results
    /// there, point-major in strategy order.
    pub fn candidates(&self, world: usize) -> &[Candidate] {
        self.candidates.get(world).map_or(&[], Vec::as_slice)
    }

    /// Every candidate of every world point, world by world.
    pub fn all_candidates(&self) -> impl Iterator<Item = (usize, &Candidate)> {
        (self.candidates.iter().enumerate()).flat_map(|(w, cs)| cs.iter().map(move |c| (w, c)))
    }

    /// A candidate's name: the strategy, and its choice values when the sweep has choice keys
    /// (`full (backoff base 50 ms, backoff cap 2 s)`).
    pub fn candidate_label(&self, folder: &ResultFolder, c: &Candidate) -> String {
        let choices = self.values_label(folder, c.point, &self.choice_keys);
        if choices.is_empty() {
            c.strategy.clone()
        } else {
            format!("{} ({choices})", c.strategy)
        }
    }

    /// The world point's values as a reader reads them (`offered load 27/s, spike length
    /// 1 s`), empty when the sweep has no world key.
    pub fn world_label(&self, folder: &ResultFolder, world: usize) -> String {
        self.worlds
            .get(world)
            .and_then(|w| w.points.first())
            .map(|&p| self.values_label(folder, p, &self.world_keys))
            .unwrap_or_default()
    }

    /// `--at` arguments that name world point `world` (`workload.rate=27.0`).
    pub fn world_assignments(&self, folder: &ResultFolder, world: usize) -> Vec<String> {
        let Some(w) = self.worlds.get(world) else {
            return Vec::new();
        };
        self.world_keys
            .iter()
            .zip(&w.values)
            .map(|(&k, v)| format!("{}={v}", folder.sweep_keys[k]))
            .collect()
    }

    fn values_label(&self, folder: &ResultFolder, point: u32, keys: &[usize]) -> String {
        let Some(p) = folder.point(point) else {
            return String::new();
        };
        keys.iter()
            .map(|&k| labels::Reading::of(folder).assignment(&folder.sweep_keys[k], &p.values[k]))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The mean of a metric of a candidate (NaN when undefined).
    pub fn mean(folder: &ResultFolder, c: &Candidate, metric: Metric) -> f64 {
        folder
            .aggregate_of(c.point, &c.strategy, metric)
            .and_then(|r| r.mean)
            .unwrap_or(f64::NAN)
    }

    /// True when a candidate's mean success rate reaches the target.
    pub fn meets_target(&self, folder: &ResultFolder, c: &Candidate) -> bool {
        Design::mean(folder, c, Metric::SuccessRate) >= self.target
    }

    /// The world point single-point charts show: one where some candidate reaches the success
    /// target (a choice that works, to set beside those that do not), and among those the one
    /// where the candidates differ most in the share of runs that recovered, then in success
    /// rate, then in amplification (relative); the first such in grid order. World point 0
    /// without a world key.
    pub fn showcase(&self) -> usize {
        self.showcase
    }

    fn pick_showcase(&self, folder: &ResultFolder) -> usize {
        let spread = |w: usize, metric: Metric| {
            let values: Vec<f64> = self
                .candidates(w)
                .iter()
                .map(|c| Design::mean(folder, c, metric))
                .filter(|v| v.is_finite())
                .collect();
            let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            match (values.len() > 1, metric) {
                (false, _) => 0.0,
                (true, m) if m.unit() == crate::metric::Unit::Times && lo > 0.0 => hi / lo - 1.0,
                (true, _) => hi - lo,
            }
        };
        let works = |w: usize| {
            let any = (self.candidates(w).iter()).any(|c| self.meets_target(folder, c));
            if any { 1.0 } else { 0.0 }
        };
        let score = |w: usize| {
            [
                works(w),
                spread(w, Metric::Recovered),
                spread(w, Metric::SuccessRate),
                spread(w, folder.load_metric()),
            ]
        };
        let mut best = 0;
        let mut best_score = score(0);
        for w in 1..self.worlds.len() {
            let s = score(w);
            // Lexicographic, with a tolerance so that noise does not pick a later point.
            let better = s
                .iter()
                .zip(&best_score)
                .find(|(a, b)| (*a - *b).abs() > 1e-9)
                .is_some_and(|(a, b)| a > b);
            if better {
                best = w;
                best_score = s;
            }
        }
        best
    }

    /// The candidates single-point charts draw at world point `world`: all of them when
    /// there are at most `max`, else each strategy at its best choice values (the first of
    /// [`Design::rank`]); the strategy `recommend` chose there (`pareto.csv`) at the values
    /// it chose, so that the charts show the pair the user asked for, under the constraints
    /// asked.
    pub fn shown(&self, folder: &ResultFolder, world: usize, max: usize) -> Vec<Candidate> {
        let all = self.candidates(world);
        if all.len() <= max {
            return all.to_vec();
        }
        let recommended = |c: &Candidate| {
            (folder.pareto.iter().flatten())
                .any(|r| r.recommended && r.point == c.point && r.strategy == c.strategy)
        };
        let mut out = Vec::new();
        for s in &folder.strategies {
            let mine: Vec<Candidate> = all.iter().filter(|c| &c.strategy == s).cloned().collect();
            let chosen = mine.iter().find(|c| recommended(c)).cloned();
            if let Some(best) = chosen.or_else(|| self.rank(folder, &mine).into_iter().next()) {
                out.push(best);
            }
        }
        out.truncate(max);
        out
    }

    /// Candidates best first by `recommend`'s default: those that reach the success target
    /// first, by lowest amplification, then lowest p99; the others by highest success.
    pub fn rank(&self, folder: &ResultFolder, candidates: &[Candidate]) -> Vec<Candidate> {
        let key = |c: &Candidate| {
            let m = |metric| {
                let v = Design::mean(folder, c, metric);
                if v.is_finite() { v } else { f64::INFINITY }
            };
            if self.meets_target(folder, c) {
                (0, m(folder.load_metric()), m(Metric::LatencyP99Ms))
            } else {
                (
                    1,
                    -Design::mean(folder, c, Metric::SuccessRate).max(-1.0),
                    0.0,
                )
            }
        };
        let mut out = candidates.to_vec();
        out.sort_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            ka.0.cmp(&kb.0)
                .then(ka.1.total_cmp(&kb.1))
                .then(ka.2.total_cmp(&kb.2))
        });
        out
    }
}
