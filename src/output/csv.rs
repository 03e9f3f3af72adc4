//! Writes the CSV files of a result folder (docs/results.md) from the finished units, each file
//! through its row type ([`super::rows`]), which defines its columns for the reader too.

use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use super::rows::{
    AggregateRow, AttemptsRow, CompareRow, HedgingRow, LatencyRow, LayerTimeseriesRow, LayersRow,
    PassageRow, Row, SummaryRow, TimeseriesRow, defined, header,
};
use crate::atomic::AtomicFile;
use crate::error::{Error, Result};
use crate::metric::{Metric, PerMetric, estimates};
use crate::scenario::format_value;
use crate::sim::TimeSeries;
use crate::sim::passage::{Censored, Passage, kaplan_meier};
use crate::sim::run_result::new_latency_histogram;
use crate::stats::paired_difference;
use crate::sweep::Plan;
use crate::sweep::journal::UnitRecord;

/// One file being written, under a temporary name until it is complete (`finish`).
struct Table<R> {
    out: csv::Writer<AtomicFile>,
    row: PhantomData<R>,
}

/// What `push_series` gathers before writing it to the file.
const CHUNK: usize = 1 << 16;

impl<R: Row> Table<R> {
    /// The file of `R` in `dir`, its sweep-key columns named `keys`, its header written.
    fn new(dir: &Path, keys: &[String]) -> Result<Table<R>> {
        let path = dir.join(R::FILE);
        let mut out = writer(AtomicFile::create(&path)?);
        out.write_record(header::<R>(keys))
            .map_err(|e| csv_error(&path, e))?;
        Ok(Table {
            out,
            row: PhantomData,
        })
    }

    /// An error writing the file, naming it where it is (a full disk: `out/x/summary.csv`).
    fn error(&self, e: csv::Error) -> Error {
        csv_error(self.out.get_ref().path(), e)
    }

    fn push(&mut self, row: &R) -> Result<()> {
        self.out.serialize(row).map_err(|e| self.error(e))
    }

    /// Gives the file its name; returns its path.
    fn finish(self) -> Result<PathBuf> {
        let path = self.out.get_ref().path().to_path_buf();
        let file = self
            .out
            .into_inner()
            .map_err(|e| csv_error(&path, e.into_error().into()))?;
        file.commit()
    }
}

impl Table<TimeseriesRow> {
    /// Appends the rows of one run's series, byte for byte as [`Table::push`] writes them,
    /// without serde per row: the leading columns (point, strategy, sweep values) are encoded
    /// once, and the numbers, which never need quoting, are appended to each line, a chunk at
    /// a time. A long horizon has hundreds of thousands of buckets.
    fn push_series(
        &mut self,
        point: u32,
        strategy: &str,
        sweep: &[String],
        series: &TimeSeries,
    ) -> Result<()> {
        let mut lead = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        lead.write_record(
            [point.to_string(), strategy.to_string()]
                .iter()
                .chain(sweep),
        )
        .map_err(|e| csv_error(Path::new(TimeseriesRow::FILE), e))?;
        let mut lead = lead
            .into_inner()
            .map_err(|e| csv_error(Path::new(TimeseriesRow::FILE), e.into_error().into()))?;
        lead.pop(); // the record's terminator
        // The rows the CSV writer holds go first; then the file takes these lines directly.
        self.out.flush().map_err(|e| self.error(e.into()))?;
        let mut file = self.out.get_ref();
        let mut out: Vec<u8> = Vec::with_capacity(CHUNK + 1024);
        let mut number = String::new();
        let mut digits = [0u8; 20];
        let columns = series.columns();
        let bucket_ns = series.bucket.as_nanos();
        for (i, dispersion) in series.retry_dispersion().into_iter().enumerate() {
            out.extend_from_slice(&lead);
            out.push(b',');
            let t_ns = i as u64 * bucket_ns;
            if t_ns.is_multiple_of(1_000_000) && t_ns < 1 << 53 {
                // A whole number of milliseconds, exact as a float: the float prints as this.
                out.extend_from_slice(decimal(t_ns / 1_000_000, &mut digits));
            } else {
                number.clear();
                write_number(&mut number, t_ns as f64 / 1e6);
                out.extend_from_slice(number.as_bytes());
            }
            for column in columns {
                out.push(b',');
                out.extend_from_slice(decimal(u64::from(column[i]), &mut digits));
            }
            out.push(b',');
            number.clear();
            if let Some(d) = dispersion {
                write_number(&mut number, d);
            }
            out.extend_from_slice(number.as_bytes());
            out.push(b'\n');
            if out.len() >= CHUNK {
                file.write_all(&out)
                    .map_err(|e| Error::io(file.path(), e))?;
                out.clear();
            }
        }
        file.write_all(&out).map_err(|e| Error::io(file.path(), e))
    }
}

/// A CSV writer into `file`, as every file of a result folder is written.
fn writer(file: AtomicFile) -> csv::Writer<AtomicFile> {
    csv::WriterBuilder::new()
        .has_headers(false)
        .buffer_capacity(CHUNK)
        .from_writer(file)
}

/// Appends `x` as the CSVs write a number (`rows::number_text`: shortest round-trip form,
/// nothing when not finite).
fn write_number(out: &mut String, x: f64) {
    use std::fmt::Write;
    if x.is_finite() {
        let _ = write!(out, "{x}");
    }
}

/// `n` in decimal, written at the end of `buf`.
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[start..];
        }
    }
}

fn csv_error(path: &Path, source: csv::Error) -> Error {
    Error::Csv {
        path: path.into(),
        source,
    }
}

/// Writes `rows` as the file of their type into `dir` (atomically), with one sweep column per
/// key of `keys`; returns its path.
pub fn write_rows<R: Row>(dir: &Path, keys: &[String], rows: &[R]) -> Result<PathBuf> {
    let mut table = Table::new(dir, keys)?;
    for row in rows {
        table.push(row)?;
    }
    table.finish()
}

/// Writes `timeseries.csv` into `dir`: the series of each (point, strategy)'s replication 0,
/// in unit order. `records` as for [`write_all`], which writes the other files: the two can
/// run side by side.
pub fn write_timeseries(dir: &Path, plan: &Plan, records: &[UnitRecord]) -> Result<PathBuf> {
    check_units(dir, plan, records)?;
    let mut timeseries = Table::<TimeseriesRow>::new(dir, &plan.sweep.keys())?;
    for r in records.iter().filter(|r| r.replication == 0) {
        if let Some(series) = r.series.as_ref() {
            let point = &plan.points[r.point];
            let values: Vec<String> = point.values.iter().map(|(_, v)| format_value(v)).collect();
            let strategy = &point.scenario.strategies[r.strategy].name;
            timeseries.push_series(r.point as u32, strategy, &values, series)?;
        }
    }
    timeseries.finish()
}

/// Refuses `records` unless they are every unit of `plan` in unit order (point-major, then
/// strategy, then replication).
fn check_units(dir: &Path, plan: &Plan, records: &[UnitRecord]) -> Result<()> {
    let units = plan.units();
    let matches = units.len() == records.len()
        && units.iter().zip(records).all(|(u, r)| {
            (u.point, u.strategy, u.replication) == (r.point, r.strategy, r.replication)
        });
    if matches {
        Ok(())
    } else {
        Err(Error::ResultFolder {
            path: dir.into(),
            message: "the finished units do not match the scenario".into(),
        })
    }
}

/// Writes summary, aggregate, compare, attempts and latency CSVs (and a chain's layer files, a
/// hedged run's `hedging.csv`) into `dir`; [`write_timeseries`] writes the time series.
/// `records` must hold every unit of `plan`, in unit order, and `values` their metrics
/// ([`PerMetric::measure`]) in the same order. No file takes its name before every file is
/// complete.
pub fn write_all(
    dir: &Path,
    plan: &Plan,
    records: &[UnitRecord],
    values: &[PerMetric<f64>],
) -> Result<Vec<PathBuf>> {
    check_units(dir, plan, records)?;
    let unit = Units::of(plan);
    let mut summary = Table::<SummaryRow>::new(dir, &unit.keys)?;
    for (r, v) in records.iter().zip(values) {
        summary.push(&SummaryRow {
            point: r.point as u32,
            strategy: unit.strategy(r.point, r.strategy),
            replication: r.replication,
            seed: r.seed,
            sweep: unit.sweep(r.point),
            metrics: *v,
        })?;
    }
    let layers = unit.layers(dir, records)?;
    let hedging = unit.hedging(dir, records)?;
    let per_strategy = unit.per_strategy(dir, records, values)?;
    let mut written = vec![summary.finish()?];
    written.extend(per_strategy.finish()?);
    if let Some((layers, layer_series)) = layers {
        written.push(layers.finish()?);
        written.push(layer_series.finish()?);
    }
    if let Some(hedging) = hedging {
        written.push(hedging.finish()?);
    }
    if let Some(passage) = unit.passage(dir, records)? {
        written.push(passage.finish()?);
    }
    Ok(written)
}

/// What every row of a unit carries: the sweep keys, each point's values, strategy names.
struct Units<'a> {
    plan: &'a Plan,
    keys: Vec<String>,
    point_values: Vec<Vec<String>>,
}

/// The files written from each strategy's replications together, in the order they are named.
struct PerStrategy {
    aggregate: Table<AggregateRow>,
    compare: Table<CompareRow>,
    attempts: Table<AttemptsRow>,
    latency: Table<LatencyRow>,
}

impl PerStrategy {
    fn finish(self) -> Result<[PathBuf; 4]> {
        Ok([
            self.aggregate.finish()?,
            self.compare.finish()?,
            self.attempts.finish()?,
            self.latency.finish()?,
        ])
    }
}

impl<'a> Units<'a> {
    fn of(plan: &'a Plan) -> Units<'a> {
        let point_values = (plan.points.iter())
            .map(|p| p.values.iter().map(|(_, v)| format_value(v)).collect())
            .collect();
        Units {
            plan,
            keys: plan.sweep.keys(),
            point_values,
        }
    }

    fn strategy(&self, point: usize, strategy: usize) -> String {
        self.plan.points[point].scenario.strategies[strategy]
            .name
            .clone()
    }

    fn sweep(&self, point: usize) -> Vec<String> {
        self.point_values[point].clone()
    }

    /// A chain of services (every point has the same layers: sweeps change values, not the
    /// file's tables) also writes `layers.csv` and `layer_timeseries.csv`.
    fn layers(
        &self,
        dir: &Path,
        records: &[UnitRecord],
    ) -> Result<Option<(Table<LayersRow>, Table<LayerTimeseriesRow>)>> {
        let first = self.plan.points.first();
        if first.is_none_or(|p| p.scenario.model.chain.is_none()) {
            return Ok(None);
        }
        let mut layers = Table::<LayersRow>::new(dir, &self.keys)?;
        let mut layer_series = Table::<LayerTimeseriesRow>::new(dir, &self.keys)?;
        for r in records {
            let model = &self.plan.points[r.point].scenario.model;
            let name = |i: usize| {
                model
                    .chain
                    .as_ref()
                    .map_or_else(String::new, |c| c.names[i].clone())
            };
            let bucket_ns = model.bucket.as_nanos();
            for (i, series) in
                (r.layers.iter().enumerate()).filter_map(|(i, l)| Some((i, l.series.as_ref()?)))
            {
                for (b, (&arrivals, &retries)) in
                    series.arrivals.iter().zip(&series.retries).enumerate()
                {
                    layer_series.push(&LayerTimeseriesRow {
                        point: r.point as u32,
                        strategy: self.strategy(r.point, r.strategy),
                        sweep: self.sweep(r.point),
                        layer: i as u32 + 1,
                        name: name(i),
                        t_ms: (b as u64 * bucket_ns) as f64 / 1e6,
                        arrivals,
                        first_attempts: arrivals - retries,
                        retries,
                    })?;
                }
            }
            for (i, l) in r.layers.iter().enumerate() {
                layers.push(&LayersRow {
                    point: r.point as u32,
                    strategy: self.strategy(r.point, r.strategy),
                    replication: r.replication,
                    sweep: self.sweep(r.point),
                    layer: i as u32 + 1,
                    name: name(i),
                    requests: l.counts.requests,
                    attempts: l.counts.attempts,
                    arrivals: l.arrivals,
                    amplification: ratio(l.arrivals, r.counts.requests),
                    succeeded: l.counts.succeeded,
                    success_rate: ratio(l.counts.succeeded, l.counts.requests),
                    latency_mean_ms: l.latency_mean_ms,
                    busy_share: l.busy_share,
                    wasted_work_share: l.wasted_work_share,
                    unfinished: l.counts.unfinished,
                })?;
            }
        }
        Ok(Some((layers, layer_series)))
    }

    /// Hedged runs also write `hedging.csv`, one row per hedged run.
    fn hedging(&self, dir: &Path, records: &[UnitRecord]) -> Result<Option<Table<HedgingRow>>> {
        if !records.iter().any(|r| r.hedging.is_some()) {
            return Ok(None);
        }
        let mut hedging = Table::<HedgingRow>::new(dir, &self.keys)?;
        for r in records {
            let Some(h) = r.hedging else { continue };
            let requests = r.counts.requests;
            hedging.push(&HedgingRow {
                point: r.point as u32,
                strategy: self.strategy(r.point, r.strategy),
                replication: r.replication,
                sweep: self.sweep(r.point),
                hedges_per_request: ratio(h.hedges, requests),
                won_by_hedge_share: ratio(h.won_by_hedge, requests),
                unread_served_per_request: ratio(h.unread_served, requests),
                wasted_work_share: r.wasted_work_share,
            })?;
        }
        Ok(Some(hedging))
    }

    /// Scenarios with `[passage]` also write `passage.csv`: the Kaplan–Meier estimate of each
    /// first passage over each strategy's replications at each point (records are in unit
    /// order, so a strategy's replications are consecutive).
    fn passage(&self, dir: &Path, records: &[UnitRecord]) -> Result<Option<Table<PassageRow>>> {
        type Of = fn(&Passage) -> Option<Censored>;
        let kinds: [(&str, Of); 2] = [
            ("to_collapse", |p| p.to_collapse),
            ("to_healthy", |p| p.to_healthy),
        ];
        let measured = |of: Of| {
            records
                .iter()
                .any(|r| r.passage.as_ref().and_then(of).is_some())
        };
        if !kinds.iter().any(|&(_, of)| measured(of)) {
            return Ok(None);
        }
        let mut table = Table::<PassageRow>::new(dir, &self.keys)?;
        for runs in records.chunk_by(|a, b| (a.point, a.strategy) == (b.point, b.strategy)) {
            let r = &runs[0];
            let levels = &self.plan.points[r.point].scenario.model.passage;
            for ((name, of), level) in kinds.into_iter().zip([levels.collapse, levels.healthy]) {
                let times: Vec<Censored> = runs
                    .iter()
                    .filter_map(|r| r.passage.as_ref().and_then(of))
                    .collect();
                let (Some(level), Some(km)) = (level, kaplan_meier(&times)) else {
                    continue;
                };
                let ms = |ns: f64| ns / 1e6;
                table.push(&PassageRow {
                    point: r.point as u32,
                    strategy: self.strategy(r.point, r.strategy),
                    sweep: self.sweep(r.point),
                    passage: name.to_string(),
                    level,
                    runs: km.runs as u32,
                    reached: km.reached as u32,
                    median_ms: km.median_ns.map(ms),
                    restricted_mean_ms: ms(km.restricted_mean_ns),
                    ci95_low: ms(km.restricted_mean_ci_ns.0),
                    ci95_high: ms(km.restricted_mean_ci_ns.1),
                    observed_ms: ms(km.tau_ns as f64),
                })?;
            }
        }
        Ok(Some(table))
    }

    /// Aggregate, attempts and latency rows of each strategy's replications, and the compare
    /// rows of each pair of strategies at a point.
    fn per_strategy(
        &self,
        dir: &Path,
        records: &[UnitRecord],
        values: &[PerMetric<f64>],
    ) -> Result<PerStrategy> {
        let mut files = PerStrategy {
            aggregate: Table::new(dir, &self.keys)?,
            compare: Table::new(dir, &self.keys)?,
            attempts: Table::new(dir, &self.keys)?,
            latency: Table::new(dir, &self.keys)?,
        };
        let reps = self.plan.replications as usize;
        // Records are in unit order: point-major, strategy, replication.
        let mut offset = 0;
        for (p, point) in self.plan.points.iter().enumerate() {
            let strategies = point.scenario.strategies.len();
            let block_values = &values[offset..offset + strategies * reps];
            for s in 0..strategies {
                let at = offset + s * reps..offset + (s + 1) * reps;
                self.aggregate(
                    &mut files.aggregate,
                    p,
                    s,
                    &values[at.clone()],
                    &records[at.clone()],
                )?;
                self.attempts(&mut files.attempts, p, s, &records[at.clone()])?;
                self.latency(&mut files.latency, p, s, &records[at])?;
            }
            self.compare(&mut files.compare, p, strategies, block_values)?;
            offset += strategies * reps;
        }
        Ok(files)
    }

    fn aggregate(
        &self,
        out: &mut Table<AggregateRow>,
        p: usize,
        s: usize,
        values: &[PerMetric<f64>],
        runs: &[UnitRecord],
    ) -> Result<()> {
        for (metric, e) in estimates(values).iter() {
            if let Some(row) = self.passage_estimate(p, s, metric, runs) {
                out.push(&row)?;
                continue;
            }
            out.push(&AggregateRow {
                point: p as u32,
                strategy: self.strategy(p, s),
                sweep: self.sweep(p),
                metric,
                mean: defined(e.mean),
                sd: e.sd,
                ci95_low: e.ci95_low,
                ci95_high: e.ci95_high,
                n: e.n as u32,
            })?;
        }
        Ok(())
    }

    /// A first passage's row of `aggregate.csv`: the Kaplan–Meier mean restricted to the
    /// horizon over every replication, the censored ones included (`n` counts them all), with
    /// Greenwood's interval; `None` for another metric or where no run measured it.
    fn passage_estimate(
        &self,
        p: usize,
        s: usize,
        metric: Metric,
        runs: &[UnitRecord],
    ) -> Option<AggregateRow> {
        let of: fn(&Passage) -> Option<Censored> = match metric {
            Metric::TimeToCollapseMs => |p| p.to_collapse,
            Metric::TimeToHealthyMs => |p| p.to_healthy,
            _ => return None,
        };
        let times: Vec<Censored> = runs
            .iter()
            .filter_map(|r| r.passage.as_ref().and_then(of))
            .collect();
        let km = kaplan_meier(&times)?;
        Some(AggregateRow {
            point: p as u32,
            strategy: self.strategy(p, s),
            sweep: self.sweep(p),
            metric,
            mean: Some(km.restricted_mean_ns / 1e6),
            sd: None,
            ci95_low: Some(km.restricted_mean_ci_ns.0 / 1e6),
            ci95_high: Some(km.restricted_mean_ci_ns.1 / 1e6),
            n: km.runs as u32,
        })
    }

    /// Requests that succeeded at each attempt, over every replication.
    fn attempts(
        &self,
        out: &mut Table<AttemptsRow>,
        p: usize,
        s: usize,
        runs: &[UnitRecord],
    ) -> Result<()> {
        let requests: u64 = runs.iter().map(|r| r.counts.requests).sum();
        let longest = runs.iter().map(|r| r.by_attempt.len()).max().unwrap_or(0);
        for a in 0..longest {
            let n: u64 = (runs.iter())
                .map(|r| r.by_attempt.get(a).copied().unwrap_or(0))
                .sum();
            out.push(&AttemptsRow {
                point: p as u32,
                strategy: self.strategy(p, s),
                sweep: self.sweep(p),
                attempt: a as u32 + 1,
                succeeded: n,
                share: ratio(n, requests),
            })?;
        }
        Ok(())
    }

    /// The latency CDF of every replication's requests together, at HDR's percentile ticks
    /// (10 per halving of the distance to 100 %): fine in the tail where the charts look, a
    /// few hundred rows per strategy however many requests there were. Each row is (value,
    /// share of requests at or below it).
    fn latency(
        &self,
        out: &mut Table<LatencyRow>,
        p: usize,
        s: usize,
        runs: &[UnitRecord],
    ) -> Result<()> {
        let mut merged: Histogram<u64> = new_latency_histogram();
        for r in runs {
            for &(value, count) in &r.latency_us {
                merged.saturating_record_n(value, count);
            }
        }
        let mut last_value = None;
        for v in merged.iter_quantiles(10) {
            let value = v.value_iterated_to();
            if last_value == Some(value) {
                continue;
            }
            last_value = Some(value);
            out.push(&LatencyRow {
                point: p as u32,
                strategy: self.strategy(p, s),
                sweep: self.sweep(p),
                latency_ms: value as f64 / 1000.0,
                cdf: v.quantile(),
            })?;
        }
        Ok(())
    }

    /// Each pair of strategies at point `p`, paired by replication (`values` holds the
    /// point's units, strategy-major).
    fn compare(
        &self,
        out: &mut Table<CompareRow>,
        p: usize,
        strategies: usize,
        values: &[PerMetric<f64>],
    ) -> Result<()> {
        let reps = self.plan.replications as usize;
        for metric in Metric::ALL {
            for a in 0..strategies {
                for b in a + 1..strategies {
                    let (xa, xb): (Vec<f64>, Vec<f64>) = (0..reps)
                        .map(|r| (values[a * reps + r][metric], values[b * reps + r][metric]))
                        .filter(|(x, y)| x.is_finite() && y.is_finite())
                        .unzip();
                    let e = paired_difference(&xa, &xb);
                    out.push(&CompareRow {
                        point: p as u32,
                        sweep: self.sweep(p),
                        metric,
                        strategy_a: self.strategy(p, a),
                        strategy_b: self.strategy(p, b),
                        mean_diff: defined(e.mean),
                        ci95_low: e.ci95_low,
                        ci95_high: e.ci95_high,
                        n: e.n as u32,
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// `n / d`, NaN when `d` is 0 (an empty cell).
fn ratio(n: u64, d: u64) -> f64 {
    if d == 0 {
        f64::NAN
    } else {
        n as f64 / d as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::results::tests::temp;
    use crate::time::SimDuration;

    impl<R: Row> Table<R> {
        /// The file's bytes, once finished.
        fn bytes(self) -> Vec<u8> {
            std::fs::read(self.finish().unwrap()).unwrap()
        }
    }

    #[test]
    fn units_out_of_order_are_refused_and_nothing_is_written() {
        let doc = crate::scenario::ScenarioDoc::parse(
            "replications = 2\nhorizon = \"5s\"\n[workload]\nclients = 20\n[backoff]\nstrategies = [\"full\", \"equal\"]\n",
            "<test>",
            "test",
        )
        .unwrap();
        let plan = Plan::new(doc.sweep().unwrap(), doc.points().unwrap()).unwrap();
        let records: Vec<UnitRecord> = plan
            .units()
            .into_iter()
            .map(|u| plan.run_unit(u).unwrap())
            .collect();
        let dir = temp("csv-order");
        let file = dir.join(TimeseriesRow::FILE);
        // Both strategies' replication 0 keep a series: swapped, they would still be written.
        let mut swapped = records.clone();
        swapped.swap(0, 2);
        for wrong in [&swapped[..], &records[1..]] {
            let e = write_timeseries(&dir, &plan, wrong).unwrap_err();
            assert!(e.to_string().contains("do not match the scenario"), "{e}");
            assert!(!file.exists());
            // The other files too, before a slice of them is taken.
            let values: Vec<PerMetric<f64>> = wrong.iter().map(PerMetric::measure).collect();
            let e = write_all(&dir, &plan, wrong, &values).unwrap_err();
            assert!(e.to_string().contains("do not match the scenario"), "{e}");
            assert_eq!(
                std::fs::read_dir(&dir).unwrap().count(),
                0,
                "nothing written"
            );
        }
        write_timeseries(&dir, &plan, &records).unwrap();
        assert!(file.exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_series_is_written_byte_for_byte_as_its_rows_would_be() {
        // Buckets of 2.5 ms (starts whole and fractional; several chunks of the file), and of
        // 2^33 ms, whose starts pass 2^53 ns, where a whole number of milliseconds stops being
        // printed as an integer.
        series_as_rows(SimDuration(2_500_000), 5000);
        series_as_rows(SimDuration(1_000_000 << 33), 4);
    }

    fn series_as_rows(bucket: SimDuration, n: usize) {
        // Odd names that need quoting, empty and defined dispersions, counts of every width.
        let mut x: u64 = 7;
        let mut next = |m: u32| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as u32) % m
        };
        let mut series = TimeSeries {
            bucket,
            ..TimeSeries::default()
        };
        for i in 0..n {
            let quiet = (300..700).contains(&i);
            series.first_attempts.push(next(5));
            series
                .retries
                .push(if quiet { 0 } else { next(3) * next(100_000) });
            series
                .arrivals
                .push(series.first_attempts[i] + series.retries[i]);
            series.successes.push(next(7));
            series.rejections.push(next(2));
            series.timeouts.push(u32::MAX - next(3));
            series.in_system.push(next(1000));
        }
        let keys = ["backoff.base".to_string(), "sweep \"b\"".to_string()];
        let sweep = ["10ms,20ms".to_string(), String::new()];
        let strategy = "odd, \"name\"";
        let (fast_dir, slow_dir) = (temp(&format!("csv-fast{n}")), temp(&format!("csv-slow{n}")));
        let mut fast = Table::<TimeseriesRow>::new(&fast_dir, &keys).unwrap();
        fast.push_series(3, strategy, &sweep, &series).unwrap();
        let mut slow = Table::<TimeseriesRow>::new(&slow_dir, &keys).unwrap();
        let dispersion = series.retry_dispersion();
        assert!(n < 300 || dispersion.iter().any(Option::is_none));
        assert!(dispersion.iter().any(Option::is_some));
        for (i, d) in dispersion.into_iter().enumerate() {
            slow.push(&TimeseriesRow {
                point: 3,
                strategy: strategy.into(),
                sweep: sweep.to_vec(),
                t_ms: (i as u64 * series.bucket.as_nanos()) as f64 / 1e6,
                arrivals: series.arrivals[i],
                first_attempts: series.first_attempts[i],
                retries: series.retries[i],
                successes: series.successes[i],
                rejections: series.rejections[i],
                timeouts: series.timeouts[i],
                in_system: series.in_system[i],
                retry_dispersion: d,
            })
            .unwrap();
        }
        let (fast, slow) = (fast.bytes(), slow.bytes());
        std::fs::remove_dir_all(fast_dir).unwrap();
        std::fs::remove_dir_all(slow_dir).unwrap();
        assert_eq!(
            String::from_utf8(fast).unwrap(),
            String::from_utf8(slow).unwrap()
        );
    }
}
