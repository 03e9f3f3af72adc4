//! Sweeps: points × strategies × replications, run in parallel on rayon.
//!
//! The work is split into [`Unit`]s, one per (point, strategy, replication), in that nested
//! order. Each unit is a pure function of the scenario and its indices (its streams are seeded
//! from `(seed, replication, kind, entity)`), results are collected in unit order and reduced
//! sequentially, so the output bytes are the same for 1 or N threads, for one run or for
//! shards merged ([`journal`]).

mod checks;
pub mod journal;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::cancel::CancelToken;
use crate::error::{Error, Result, Setting};
use crate::scenario::{Point, Sweep};
use crate::sim::{self, RunSpec};
use journal::UnitRecord;

/// One work unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Unit {
    /// Position in the full list of units (point-major, then strategy, then replication).
    pub index: usize,
    /// Sweep point.
    pub point: usize,
    /// Strategy within the point.
    pub strategy: usize,
    /// Replication.
    pub replication: u32,
}

/// A subset of the units: `--shard I/N` takes the units whose index is `I` modulo `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard (0-based).
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

impl Shard {
    /// Every unit.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Parses `I/N` with `0 <= I < N`.
    pub fn parse(text: &str) -> Result<Shard> {
        let bad = || Error::Usage {
            arg: format!("{} {text}", Setting::Shard),
            message: "expected I/N with 0 <= I < N, for example 0/4".into(),
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// True when this shard runs unit `index`.
    pub fn owns(&self, index: usize) -> bool {
        index % self.count as usize == self.index as usize
    }

    /// True when this is the whole run.
    pub fn is_all(&self) -> bool {
        self.count == 1
    }
}

/// Most time-series buckets kept over all (point, strategy) pairs of a run.
pub const MAX_SERIES_BUCKETS: u64 = 20_000_000;

/// Most events one run (unit) may be estimated to take without `--force`: about a minute of
/// one core. The estimate ([`sim::work`]) is a worst case, far above what runs really take.
pub const MAX_EVENTS_PER_RUN: f64 = 2e9;

/// Most events all the runs of one command (every point, strategy and replication, or the
/// shard's share) may be estimated to take without `--force`: 1e13, five thousand runs at
/// the limit of one (days of a large machine; the estimate is a worst case), some three
/// hundred times the largest built-in sweep (`brooker-2015-sweep`, 3.4e10). Larger sweeps
/// are split with `--shard`, each shard checked alone.
pub const MAX_EVENTS_PER_SWEEP: f64 = 1e13;

/// Most memory the runs going on at once (one per thread) may be estimated to hold without
/// `--force`: 16 GiB.
pub const MAX_MEMORY_BYTES: f64 = 16.0 * (1u64 << 30) as f64;

/// Most worker threads; a run never uses more threads than it has units.
pub const MAX_THREADS: usize = 1024;

/// The threads that run `units` units when `requested` are asked for (0: one per core): never
/// more than the units, at least one. More than [`MAX_THREADS`] is refused.
pub fn threads_for(requested: usize, units: usize) -> Result<usize> {
    if requested > MAX_THREADS {
        return Err(Error::Usage {
            arg: format!("{} {requested}", Setting::Threads),
            message: format!("at most {MAX_THREADS} threads"),
        });
    }
    let wanted = if requested == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        requested
    };
    Ok(wanted.min(units).max(1))
}

/// What [`Plan::check_share`] weighs: the largest run, the events of the share, the most
/// memory one run could hold.
struct WorkTally {
    /// The run that could take the most events (NaN, unbounded, wins) and its (point,
    /// strategy).
    largest_run: Option<(sim::work::Work, usize, usize)>,
    /// The events every unit of the share could take together.
    share_events: f64,
    /// The most bytes any one run could hold.
    most_bytes: f64,
}

/// A count of events in full (`34012345678`), or `unbounded`.
fn exact(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.0}")
    } else {
        "unbounded".into()
    }
}

/// `1.2e10` for large numbers, the number itself for small ones, `unbounded` for infinity.
fn approx(x: f64) -> String {
    if !x.is_finite() {
        "unbounded".into()
    } else if x < 1e6 {
        format!("{x:.0}")
    } else {
        format!("{x:.1e}")
    }
}

/// Everything a run needs: the checked points and how to split the work.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The sweep grid (empty without a sweep).
    pub sweep: Sweep,
    /// Checked points, in grid order.
    pub points: Vec<Point>,
    /// Master seed.
    pub seed: u64,
    /// Replications per (point, strategy).
    pub replications: u32,
}

impl Plan {
    /// A plan over `points`; seed and replications come from the first point (they are not
    /// sweepable).
    pub fn new(sweep: Sweep, points: Vec<Point>) -> Result<Plan> {
        let first = points
            .first()
            .ok_or_else(|| Error::invalid("sweep", "no points", "at least one point"))?;
        let (seed, replications) = (first.scenario.seed, first.scenario.replications);
        // Replication 0 of every (point, strategy) keeps its time series in memory and in the
        // journal: bound their total size.
        let buckets: u64 = points
            .iter()
            .map(|p| {
                let m = &p.scenario.model;
                (m.horizon.as_nanos() / m.bucket.as_nanos().max(1) + 1)
                    * p.scenario.strategies.len() as u64
            })
            .sum();
        if buckets > MAX_SERIES_BUCKETS {
            return Err(Error::invalid(
                "output.bucket",
                first.scenario.model.bucket,
                format!(
                    "a coarser bucket: the time series of all points and strategies would hold {buckets} buckets, at most {MAX_SERIES_BUCKETS} are allowed"
                ),
            ));
        }
        Ok(Plan {
            sweep,
            points,
            seed,
            replications,
        })
    }

    /// Every unit, in order.
    pub fn units(&self) -> Vec<Unit> {
        let mut units = Vec::new();
        for (p, point) in self.points.iter().enumerate() {
            for s in 0..point.scenario.strategies.len() {
                for r in 0..self.replications {
                    units.push(Unit {
                        index: units.len(),
                        point: p,
                        strategy: s,
                        replication: r,
                    });
                }
            }
        }
        units
    }

    /// Refuses, with what to lower, a plan whose largest run could take more than
    /// [`MAX_EVENTS_PER_RUN`] events, whose runs together could take more than
    /// [`MAX_EVENTS_PER_SWEEP`], or whose runs on `threads` threads at once could hold more than
    /// [`MAX_MEMORY_BYTES`] (see [`sim::work`]).
    pub fn check_work(&self, threads: usize) -> Result<()> {
        self.check_share(threads, Shard::ALL)
    }

    /// [`Plan::check_work`] for the units of `shard`: the total counts its share.
    pub fn check_share(&self, threads: usize, shard: Shard) -> Result<()> {
        let tally = self.tally_work(shard);
        if let Some((work, p, s)) = tally.largest_run
            && (work.events.is_nan() || work.events > MAX_EVENTS_PER_RUN)
        {
            return Err(self.one_run_too_large(&work, p, s));
        }
        if tally.share_events.is_nan() || tally.share_events > MAX_EVENTS_PER_SWEEP {
            return Err(self.share_too_large(tally.share_events, shard));
        }
        let at_once = threads.max(1) as f64;
        if tally.most_bytes * at_once > MAX_MEMORY_BYTES {
            let gib = |b: f64| format!("{:.1} GiB", b / (1u64 << 30) as f64);
            return Err(Error::TooMuchWork {
                message: format!(
                    "too much memory: {threads} runs at once could hold up to {}, more than the {} allowed ({} per run). Lower {}, workload.clients or workload.rate; or run with {}",
                    gib(tally.most_bytes * at_once),
                    gib(MAX_MEMORY_BYTES),
                    gib(tally.most_bytes),
                    Setting::Threads,
                    Setting::Force,
                ),
            });
        }
        Ok(())
    }

    /// The estimated work of every (point, strategy) pair, summed over the units `shard`
    /// owns.
    fn tally_work(&self, shard: Shard) -> WorkTally {
        let mut tally = WorkTally {
            largest_run: None,
            share_events: 0.0,
            most_bytes: 0.0,
        };
        let mut unit = 0usize;
        for (p, point) in self.points.iter().enumerate() {
            let model = &point.scenario.model;
            for (s, strategy) in point.scenario.strategies.iter().enumerate() {
                let work = sim::work::estimate(model, strategy);
                tally.most_bytes = tally.most_bytes.max(work.bytes);
                let reps = self.replications as usize;
                let owned = (unit..unit + reps).filter(|&u| shard.owns(u)).count();
                unit += reps;
                if owned > 0 {
                    tally.share_events += work.events * owned as f64;
                }
                // NaN (nothing times unbounded) is not a count to trust either: it wins.
                if tally
                    .largest_run
                    .is_none_or(|(w, _, _)| work.events.is_nan() || work.events > w.events)
                {
                    tally.largest_run = Some((work, p, s));
                }
            }
        }
        tally
    }

    /// The error for a run of pair (`p`, `s`) that could take `work`, more events than
    /// [`MAX_EVENTS_PER_RUN`]: what makes it large and which keys lower it.
    fn one_run_too_large(&self, work: &sim::work::Work, p: usize, s: usize) -> Error {
        let chain = self.points[p].scenario.model.chain.as_ref();
        let deepest = match chain.and_then(|c| c.names.last()) {
            Some(last) if work.deepest_attempts != work.attempts_per_request => format!(
                ", {} at the last layer `{}` (retries at every layer multiply)",
                approx(work.deepest_attempts),
                crate::text::shown(last)
            ),
            _ => String::new(),
        };
        Error::TooMuchWork {
            message: format!(
                "too much work: one run could take up to {} events, more than the {} allowed (at {}: {} requests, each up to {} attempts{deepest} if every attempt failed at once). Lower workload.clients, workload.rate or horizon, set client.max_attempts or client.deadline{}, or lengthen the sleeps (backoff.base, backoff.jitter); or run with {}",
                approx(work.events),
                approx(MAX_EVENTS_PER_RUN),
                self.describe_pair(p, s),
                approx(work.requests),
                approx(work.attempts_per_request),
                if chain.is_some() {
                    " (and each layer's layers[].client.max_attempts)"
                } else {
                    ""
                },
                Setting::Force,
            ),
        }
    }

    /// The error for a share of `shard` that could take `total` events, more than
    /// [`MAX_EVENTS_PER_SWEEP`]: how many shards would each hold at most the limit.
    fn share_too_large(&self, total: f64, shard: Shard) -> Error {
        // The shards that would each hold at most the limit (their shares are about
        // equal: units are dealt round-robin).
        let shards = (total * shard.count as f64 / MAX_EVENTS_PER_SWEEP).ceil();
        let split = if total.is_finite() && shards <= u32::MAX as f64 {
            format!(
                "split the work with {} I/N with N at least {shards:.0} (each shard's share, about {} events, is checked alone)",
                Setting::Shard,
                exact(total * shard.count as f64 / shards)
            )
        } else {
            format!(
                "split the work with {} I/N (each shard is checked alone)",
                Setting::Shard
            )
        };
        Error::TooMuchWork {
            message: format!(
                "too much work: the {} runs of {} point(s) x strategies x {} replication(s){} could take up to {} events together, more than the {} allowed for one command. Sweep fewer points or lower the replications, {split}, or run with {}",
                self.units_count(),
                self.points.len(),
                self.replications,
                if shard.is_all() {
                    String::new()
                } else {
                    format!(" (their share in shard {}/{})", shard.index, shard.count)
                },
                exact(total),
                exact(MAX_EVENTS_PER_SWEEP),
                Setting::Force,
            ),
        }
    }

    /// How many units the plan has.
    fn units_count(&self) -> usize {
        self.points
            .iter()
            .map(|p| p.scenario.strategies.len() * self.replications as usize)
            .sum()
    }

    /// Runs one unit; a run whose requests are not conserved is an [`Error::Internal`].
    pub fn run_unit(&self, unit: Unit) -> Result<UnitRecord> {
        self.run_unit_until(unit, &CancelToken::new())?
            .ok_or(Error::Interrupted)
    }

    /// [`Plan::run_unit`], stopped within milliseconds once `cancel` is cancelled (`None`).
    pub fn run_unit_until(&self, unit: Unit, cancel: &CancelToken) -> Result<Option<UnitRecord>> {
        let scenario = &self.points[unit.point].scenario;
        let spec = RunSpec {
            model: &scenario.model,
            strategy: &scenario.strategies[unit.strategy],
            seed: self.seed,
            replication: unit.replication,
            keep_series: unit.replication == 0,
        };
        let Some(result) = sim::run_until(spec, cancel) else {
            return Ok(None);
        };
        self.check_run(unit, &result)?;
        let record = UnitRecord::new(unit, self.seed, &result);
        result.recycle();
        Ok(Some(record))
    }

    /// The engine's own bookkeeping of one unit's run: every request ended once or unfinished.
    fn check_run(&self, unit: Unit, result: &sim::RunResult) -> Result<()> {
        result.conservation().map_err(|message| Error::Internal {
            run: self.describe_unit(unit),
            message,
        })
    }

    /// `point 3 (workload.clients = 40), strategy "full", replication 7`.
    pub fn describe_unit(&self, unit: Unit) -> String {
        format!(
            "{}, replication {}",
            self.describe_pair(unit.point, unit.strategy),
            unit.replication
        )
    }

    /// `point 3 (workload.clients = 40), strategy "full"`.
    fn describe_pair(&self, p: usize, s: usize) -> String {
        let point = &self.points[p];
        let values = if point.values.is_empty() {
            String::new()
        } else {
            format!(" ({})", crate::scenario::describe(&point.values))
        };
        format!(
            "point {p}{values}, strategy \"{}\"",
            point.scenario.strategies[s].name
        )
    }
}

/// Progress reports from a run, for whoever shows them (the binary draws a bar).
pub trait Progress: Sync {
    /// Work is about to start: `to_run` units now, `finished` of the run's `total` already done
    /// (found in the journal of a resumed run).
    fn start(&self, _to_run: usize, _finished: usize, _total: usize) {}
    /// A unit finished, having processed `events` events.
    fn unit_done(&self, events: u64);
    /// The work ended: done, cancelled or failed.
    fn finish(&self) {}
}

/// No progress reporting.
pub struct Silent;

impl Progress for Silent {
    fn unit_done(&self, _events: u64) {}
}

/// What [`execute`] did.
#[derive(Debug)]
pub struct Execution {
    /// Every finished unit (the ones run now and the ones found in the journal), in unit order.
    pub records: Vec<UnitRecord>,
    /// Units run in this call.
    pub ran: usize,
    /// Events processed in this call.
    pub events: u64,
    /// Wall-clock seconds of this call.
    pub wall_seconds: f64,
}

/// Runs `todo` on `threads` threads (0: one per core; never more than the units, see
/// [`threads_for`]), appending each finished unit to
/// `sink` as it completes (for resume), and returns the records in unit order. Once `cancel`
/// is cancelled no further unit starts, and the call returns [`Error::Interrupted`] (the units
/// finished by then are in `sink`).
pub fn execute(
    plan: &Plan,
    todo: &[Unit],
    threads: usize,
    progress: &dyn Progress,
    sink: Option<&Mutex<journal::JournalWriter>>,
    cancel: &CancelToken,
) -> Result<Execution> {
    let threads = threads_for(threads, todo.len())?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Usage {
            arg: format!("{} {threads}", Setting::Threads),
            message: e.to_string(),
        })?;
    let events = AtomicU64::new(0);
    let started = Instant::now();
    // The first failure: a run that broke conservation, or a journal write.
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let fail = |e: Error| {
        first_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    };
    // A failure stops the units not yet started, as a cancel does.
    let failed = AtomicBool::new(false);
    let results: Vec<Option<UnitRecord>> = pool.install(|| {
        // One unit per job: left to its adaptive splitting, rayon runs the units of a
        // split's last piece one after another on one thread, and a slow piece at the end
        // kept one thread working alone for a fifth of a grid's run.
        todo.par_iter()
            .with_max_len(1)
            .map(|&unit| {
                if cancel.is_cancelled() || failed.load(Ordering::Relaxed) {
                    return None;
                }
                let record = match plan.run_unit_until(unit, cancel) {
                    Ok(Some(record)) => record,
                    Ok(None) => return None,
                    Err(e) => {
                        fail(e);
                        failed.store(true, Ordering::Relaxed);
                        return None;
                    }
                };
                events.fetch_add(record.events(), Ordering::Relaxed);
                progress.unit_done(record.events());
                if let Some(sink) = sink {
                    // Encoded before the lock is taken: the other threads wait only for the
                    // write.
                    let appended = journal::JournalLine::of(&record).and_then(|line| {
                        let mut writer = sink.lock().unwrap_or_else(|p| p.into_inner());
                        writer.append_line(line)
                    });
                    if let Err(e) = appended {
                        fail(e);
                        failed.store(true, Ordering::Relaxed);
                    }
                }
                Some(record)
            })
            .collect()
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if !results.iter().all(Option::is_some) {
        // The finished records are in the journal. Freeing those of a long sweep (gigabytes of
        // small allocations) takes seconds: it happens beside, so that an interrupt ends now.
        std::thread::spawn(move || drop(results));
        return Err(Error::Interrupted);
    }
    let records: Vec<UnitRecord> = results.into_iter().flatten().collect();
    Ok(Execution {
        ran: records.len(),
        records,
        events: events.into_inner(),
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod props;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioDoc;

    fn plan(text: &str) -> Plan {
        let doc = ScenarioDoc::parse(text, "<test>", "test").unwrap();
        Plan::new(doc.sweep().unwrap(), doc.points().unwrap()).unwrap()
    }

    #[test]
    fn runs_on_a_threads_reused_buffers_equal_runs_on_fresh_ones() {
        // Units one after another on one thread take the event queue, latency histogram and
        // time series that the unit before gave back (some with more than the 4096 latencies
        // kept as samples, some keeping their series); each must equal its run on a new
        // thread, which starts with nothing to reuse. The 1.5 s horizon stops runs with
        // events still queued.
        let plan = plan(
            "replications = 2\nhorizon = \"20s\"\n[workload]\nclients = 300\n[backoff]\nstrategies = [\"no_jitter\", \"full\"]\n[sweep]\n\"workload.clients\" = [300, 5000]\nhorizon = [\"20s\", \"1500ms\"]\n",
        );
        let line = |unit| serde_json::to_string(&plan.run_unit(unit).unwrap()).unwrap();
        let units = plan.units();
        let fresh: Vec<String> = units
            .iter()
            .map(|&u| std::thread::scope(|s| s.spawn(|| line(u)).join().unwrap()))
            .collect();
        let reused: Vec<String> = units.iter().map(|&u| line(u)).collect();
        assert_eq!(fresh.len(), 16);
        for (u, (a, b)) in units.iter().zip(fresh.iter().zip(&reused)) {
            assert_eq!(a, b, "unit {}", u.index);
        }
    }

    #[test]
    fn a_run_that_breaks_conservation_is_an_internal_error_naming_it() {
        let plan = plan(
            "replications = 2\n[workload]\nclients = 20\n[backoff]\nstrategies = [\"full\", \"equal\"]\n[sweep]\n\"workload.clients\" = [10, 20]\n",
        );
        let unit = plan.units()[7];
        let scenario = &plan.points[unit.point].scenario;
        let mut result = sim::run(RunSpec {
            model: &scenario.model,
            strategy: &scenario.strategies[unit.strategy],
            seed: plan.seed,
            replication: unit.replication,
            keep_series: false,
        });
        plan.check_run(unit, &result).unwrap();
        // One request counted as both succeeded and unfinished.
        result.counts.unfinished += 1;
        let e = plan.check_run(unit, &result).unwrap_err();
        assert!(!e.is_user_error(), "exit code 1, not 2");
        assert_eq!(
            e.to_string(),
            "internal error in point 1 (workload.clients = 20), strategy \"equal\", replication 1: requests are not conserved: 20 begun, 20 ended, 1 unfinished at the horizon, 0 beginnings or endings refused by the client ledger; this is a bug in jitterlab, please report it"
        );
    }
}

#[cfg(test)]
mod chain_tests {
    //! The work estimate of a chain of services, on the built-in `layered-retries` scenario
    //! (in the sweeps' tests: the simulator's own tests read no scenario file).

    use crate::scenario::ScenarioDoc;

    /// Attempts at the last layer per client request, for each strategy of the built-in
    /// chain with `sets` applied.
    fn deepest(sets: &[&str]) -> Vec<f64> {
        let mut doc = ScenarioDoc::parse(
            include_str!("../../sims/layered-retries.toml"),
            "layered-retries.toml",
            "layered-retries",
        )
        .unwrap();
        for s in sets {
            doc.set(s).unwrap();
        }
        let scenario = doc.base().unwrap();
        scenario
            .strategies
            .iter()
            .map(|s| crate::sim::work::estimate(&scenario.model, s).deepest_attempts)
            .collect()
    }

    #[test]
    fn attempts_multiply_from_layer_to_layer() {
        // every_layer 3 x 3 x 3; edge_only 3 x 1 x 1; budget_middle and do_not_retry count
        // what the caps allow; deadline: 3 x 3 x 3 within what remains of each attempt.
        assert_eq!(deepest(&[]), [27.0, 3.0, 27.0, 27.0, 27.0]);
        // Unlimited attempts at a 1 ns sleep in layer 2: tens of thousands per call, times 9.
        let runaway = deepest(&[
            "layers[1].client.max_attempts=\"unlimited\"",
            "layers[1].backoff={jitter=\"constant\",base=\"1ns\",cap=\"1ns\"}",
        ]);
        assert!(runaway[0] > 100_000.0, "{runaway:?}");
    }
}
