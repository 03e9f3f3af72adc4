//! The runs the time-series charts draw (`goodput`, `herd`, `resync`, `herd_layer<N>`): at one
//! world point, one panel per candidate, and where its replications differ in kind (some stuck
//! after the trigger, some recovered) a stuck and a recovered replication side by side.
//!
//! `timeseries.csv` holds replication 0. Another replication's series is run again from the
//! folder's `scenario.toml` and seed (the simulator gives the same run for the same unit, on
//! any machine) and used only if the run's counts equal its row of `summary.csv`; a folder
//! written by a version whose runs differ keeps replication 0 alone.

use crate::metric::{Metric, PerMetric};
use crate::output::design::{Candidate, Design};
use crate::output::results::ResultFolder;
use crate::output::rows::SummaryRow;
use crate::scenario::ScenarioDoc;
use crate::sim::{self, RunResult, RunSpec};
use crate::sweep::Unit;
use crate::sweep::journal::UnitRecord;

/// At most this many candidates in a time-series chart (a candidate whose replications differ
/// in kind takes a row of two panels; the chart grows to hold them).
pub(crate) const MAX_PANELS: usize = 8;

/// One run's series: a candidate's replication, in ms buckets.
#[derive(Debug, Clone)]
pub(crate) struct Trace {
    pub candidate: Candidate,
    /// The panel's caption: the candidate, and which replication when it is one of a pair.
    pub label: String,
    pub replication: u32,
    /// `Some(true)`: this run recovered from the trigger; `Some(false)`: stuck.
    pub recovered: Option<bool>,
    /// Bucket starts, ms.
    pub t_ms: Vec<f64>,
    pub first_attempts: Vec<f64>,
    pub retries: Vec<f64>,
    pub successes: Vec<f64>,
    pub dispersion: Vec<Option<f64>>,
    /// A chain's layers 2 and up: (layer, first attempts, retries) per bucket.
    pub layers: Vec<(u32, Vec<f64>, Vec<f64>)>,
}

/// The traces of a folder's time-series charts and where they come from.
#[derive(Debug, Clone)]
pub(crate) struct Traces {
    /// The world point shown.
    pub world: usize,
    /// Panels in order; a candidate's pair is adjacent, stuck first.
    pub traces: Vec<Trace>,
    /// True when some candidate shows a pair: panels go two to a row, a pair on one row.
    pub paired: bool,
    /// Candidates whose replications differ but whose other run could not be re-run
    /// identically (a folder of another version), for the guide.
    pub not_rerun: Vec<String>,
}

/// The runs of each replication of a candidate: recovered (1), stuck (0) or not measured.
fn kinds(f: &ResultFolder, c: &Candidate) -> Vec<(u32, Option<bool>)> {
    f.summary
        .iter()
        .filter(|r| r.point == c.point && r.strategy == c.strategy)
        .map(|r| {
            let v = r.metrics[Metric::Recovered];
            (r.replication, v.is_finite().then_some(v > 0.5))
        })
        .collect()
}

/// Replication 0 of a candidate from the CSV files.
fn from_csv(f: &ResultFolder, c: &Candidate) -> Option<Trace> {
    let mut rows: Vec<_> = (f.timeseries.iter())
        .filter(|r| r.point == c.point && r.strategy == c.strategy)
        .collect();
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
    let mut layers: Vec<(u32, Vec<f64>, Vec<f64>)> = Vec::new();
    for r in (f.layer_timeseries.iter().flatten())
        .filter(|r| r.point == c.point && r.strategy == c.strategy && r.layer >= 2)
    {
        let at = match layers.iter().position(|l| l.0 == r.layer) {
            Some(i) => i,
            None => {
                layers.push((r.layer, Vec::new(), Vec::new()));
                layers.len() - 1
            }
        };
        let i = ((r.t_ms - rows[0].t_ms) / f.bucket_ms().unwrap_or(1.0)).round() as usize;
        let l = &mut layers[at];
        if l.1.len() <= i {
            l.1.resize(i + 1, 0.0);
            l.2.resize(i + 1, 0.0);
        }
        l.1[i] = f64::from(r.first_attempts);
        l.2[i] = f64::from(r.retries);
    }
    layers.sort_by_key(|l| l.0);
    Some(Trace {
        candidate: c.clone(),
        label: String::new(),
        replication: 0,
        recovered: None,
        t_ms: rows.iter().map(|r| r.t_ms).collect(),
        first_attempts: rows.iter().map(|r| f64::from(r.first_attempts)).collect(),
        retries: rows.iter().map(|r| f64::from(r.retries)).collect(),
        successes: rows.iter().map(|r| f64::from(r.successes)).collect(),
        dispersion: rows.iter().map(|r| r.retry_dispersion).collect(),
        layers,
    })
}

/// Runs replication `replication` of a candidate again from `scenario.toml`; `None` unless the
/// run's counts equal its row of `summary.csv`.
fn rerun(f: &ResultFolder, c: &Candidate, replication: u32) -> Option<Trace> {
    let text = &f.scenario.as_ref()?.text;
    let doc = ScenarioDoc::parse(text, crate::folder::names::SCENARIO, "rerun").ok()?;
    let points = doc.points().ok()?;
    let scenario = &points.get(c.point as usize)?.scenario;
    let strategy = scenario.strategies.iter().find(|s| s.name == c.strategy)?;
    let row = f
        .summary
        .iter()
        .find(|r| r.point == c.point && r.strategy == c.strategy && r.replication == replication)?;
    let result = sim::run(RunSpec {
        model: &scenario.model,
        strategy,
        seed: row.seed,
        replication,
        keep_series: true,
    });
    let series = result.series.as_ref()?;
    let bucket_ms = series.bucket.as_millis_f64();
    if !same_run(row, &result) || f.bucket_ms() != Some(bucket_ms) {
        return None;
    }
    let floats = |v: &Vec<u32>| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let layers = (result.layers.iter().enumerate().skip(1))
        .filter_map(|(i, l)| {
            let s = l.series.as_ref()?;
            let first = s
                .arrivals
                .iter()
                .zip(&s.retries)
                .map(|(&a, &r)| f64::from(a - r.min(a)))
                .collect();
            Some((i as u32 + 1, first, floats(&s.retries)))
        })
        .collect();
    Some(Trace {
        candidate: c.clone(),
        label: String::new(),
        replication,
        recovered: None,
        t_ms: (0..series.arrivals.len())
            .map(|i| i as f64 * bucket_ms)
            .collect(),
        first_attempts: floats(&series.first_attempts),
        retries: floats(&series.retries),
        successes: floats(&series.successes),
        dispersion: series.retry_dispersion(),
        layers,
    })
}

/// Whether a run gives every metric of `row` (its `summary.csv` row) exactly: the CSV's
/// numbers are the shortest text that reads back as the same `f64`, an empty cell NaN.
fn same_run(row: &SummaryRow, result: &RunResult) -> bool {
    let unit = Unit {
        // The unit's place in the sweep and its strategy's: no metric depends on them.
        index: 0,
        point: row.point as usize,
        strategy: 0,
        replication: row.replication,
    };
    let record = UnitRecord::new(unit, row.seed, result);
    let again = PerMetric::measure(&record);
    (row.metrics.iter().zip(again.iter()))
        .all(|((_, a), (_, b))| a == b || (a.is_nan() && b.is_nan()))
}

/// The traces at the folder's showcase world point ([`Design::showcase`]): at most
/// [`MAX_PANELS`] candidates, each with replication 0 and, where its replications differ in
/// kind, a run of the other kind beside it (the chart grows a row for each pair rather than
/// leave one out). Every panel of such a candidate names its replication and kind
/// (`replication 3, stuck (5 of 10)`), also when the other run could not be re-run.
pub(crate) fn select(f: &ResultFolder, design: &Design) -> Option<Traces> {
    let world = design.showcase();
    let candidates = design.shown(f, world, MAX_PANELS);
    let mut groups: Vec<Vec<Trace>> = Vec::new();
    let mut not_rerun = Vec::new();
    for c in &candidates {
        let Some(mut zero) = from_csv(f, c) else {
            continue;
        };
        let kinds = kinds(f, c);
        zero.recovered = kinds.iter().find(|k| k.0 == 0).and_then(|k| k.1);
        let name = design.candidate_label(f, c);
        let other = zero
            .recovered
            .and_then(|r0| kinds.iter().find(|k| k.1 == Some(!r0)).map(|k| (k.0, !r0)));
        let mut group = vec![zero];
        if let Some((rep, recovered)) = other {
            match rerun(f, c, rep) {
                Some(mut t) => {
                    t.recovered = Some(recovered);
                    group.push(t);
                    group.sort_by_key(|t| t.recovered);
                }
                None => not_rerun.push(name.clone()),
            }
        }
        let runs = kinds.len();
        let stuck = kinds.iter().filter(|k| k.1 == Some(false)).count();
        let recovered = kinds.iter().filter(|k| k.1 == Some(true)).count();
        for t in &mut group {
            t.label = if other.is_some() {
                let what = match t.recovered {
                    Some(true) => format!("recovered ({recovered} of {runs})"),
                    _ => format!("stuck ({stuck} of {runs})"),
                };
                format!("{name}: replication {}, {what}", t.replication)
            } else {
                name.clone()
            };
        }
        groups.push(group);
    }
    if groups.is_empty() {
        return None;
    }
    let paired = groups.iter().any(|g| g.len() == 2);
    // Pairs take a row each; singles fill rows of two after them.
    if paired {
        groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    }
    Some(Traces {
        world,
        traces: groups.into_iter().flatten().collect(),
        paired,
        not_rerun,
    })
}
