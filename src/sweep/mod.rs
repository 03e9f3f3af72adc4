//! Sweeps: points × strategies × replications, run in parallel on rayon.
//!
//! The work is split into [`Unit`]s, one per (point, strategy, replication), in that nested
//! order. Each unit is a pure function of the scenario and its indices (its streams are seeded
//! from `(seed, replication, kind, entity)`), results are collected in unit order and reduced
//! sequentially, so the output bytes are the same for 1 or N threads, for one run or for
//! shards merged ([`journal`]).

pub mod journal;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
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
            arg: format!("--shard {text}"),
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

    /// Runs one unit.
    pub fn run_unit(&self, unit: Unit) -> UnitRecord {
        let scenario = &self.points[unit.point].scenario;
        let result = sim::run(RunSpec {
            model: &scenario.model,
            strategy: &scenario.strategies[unit.strategy],
            seed: self.seed,
            replication: unit.replication,
            keep_series: unit.replication == 0,
        });
        UnitRecord::new(unit, self.seed, &result)
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

/// Runs `todo` on `threads` threads (0: rayon's default), appending each finished unit to
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
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Usage {
            arg: format!("--threads {threads}"),
            message: e.to_string(),
        })?;
    let events = AtomicU64::new(0);
    let started = Instant::now();
    let write_error: Mutex<Option<Error>> = Mutex::new(None);
    // A failed journal write stops the units not yet started, as a cancel does.
    let failed = AtomicBool::new(false);
    let results: Vec<Option<UnitRecord>> = pool.install(|| {
        todo.par_iter()
            .map(|&unit| {
                if cancel.is_cancelled() || failed.load(Ordering::Relaxed) {
                    return None;
                }
                let record = plan.run_unit(unit);
                events.fetch_add(record.events(), Ordering::Relaxed);
                progress.unit_done(record.events());
                if let Some(sink) = sink {
                    let mut writer = sink.lock().unwrap_or_else(|p| p.into_inner());
                    if let Err(e) = writer.append(&record) {
                        write_error
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_or_insert(e);
                        failed.store(true, Ordering::Relaxed);
                    }
                }
                Some(record)
            })
            .collect()
    });
    if let Some(e) = write_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let complete = results.iter().all(Option::is_some);
    let records: Vec<UnitRecord> = results.into_iter().flatten().collect();
    if !complete {
        return Err(Error::Interrupted);
    }
    Ok(Execution {
        ran: records.len(),
        records,
        events: events.into_inner(),
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}
