//! What a journal record may hold: the values one run of its unit can produce, checked
//! when a journal is read (`--resume`, `merge`), so that an edited or damaged record is
//! refused with its field rather than trusted. A record must agree with itself (every
//! request counted once, the successes by attempt, in the latency histogram and in the time
//! series), with its strategy (no success past `max_attempts`, no more events than the work
//! bound `run` estimates) and with its model (the horizon, the buckets, the layers).

use super::Unit;
use super::journal::UnitRecord;
use crate::scenario::Scenario;
use crate::sim::Counts;

/// Checks record `r` of `unit` against itself and the unit's `scenario` (its model and its
/// strategy). `Err((field, what is wrong))`.
pub(super) fn record(
    r: &UnitRecord,
    unit: &Unit,
    scenario: &Scenario,
) -> Result<(), (&'static str, String)> {
    let model = &scenario.model;
    check_values(r, model)?;
    check_series(r, unit, model)?;
    check_peaks(r)?;
    if let Some(s) = &r.series {
        check_series_contents(r, s)?;
    }
    match scenario.strategies.get(unit.strategy) {
        Some(strategy) => check_work(r, model, strategy),
        None => Ok(()),
    }
}

/// No success on an attempt the strategy never makes (`by_attempt` beyond `max_attempts`),
/// and no more events than [`EVENTS_BOUND`] × the work `run` estimates for the unit (its
/// check of the scenario's size, [`crate::sim::work::estimate`]) + [`EVENTS_SLACK`].
fn check_work(
    r: &UnitRecord,
    model: &crate::sim::Model,
    strategy: &crate::sim::Strategy,
) -> Result<(), (&'static str, String)> {
    let client = strategy.client_config(&model.client);
    if let Some(max) = client.max_attempts
        && let Some(k) = (r.by_attempt.iter().enumerate().skip(max as usize))
            .find(|(_, n)| **n > 0)
            .map(|(k, _)| k)
    {
        return Err((
            "by_attempt",
            format!(
                "holds {} successes on attempt {}, but the strategy makes at most {max} attempts (max_attempts)",
                r.by_attempt[k],
                k + 1
            ),
        ));
    }
    let work = crate::sim::work::estimate(model, strategy);
    let bound = EVENTS_BOUND * work.events + EVENTS_SLACK;
    if bound.is_finite() && r.events as f64 > bound {
        return Err((
            "events",
            format!(
                "is {}, more than a run of this unit can process (at most about {:.0}: the work bound `run` estimates)",
                r.events, bound
            ),
        ));
    }
    Ok(())
}

/// The factor and the slack on the work estimate within which every run's events stay (as
/// the property tests of `sweep::props` check it of extreme scenarios).
const EVENTS_BOUND: f64 = 10.0;
const EVENTS_SLACK: f64 = 10_000.0;

/// The peaks against the counts: no bucket holds more arrivals than there were attempts,
/// nor more retries than arrivals (a retry is an arrival).
fn check_peaks(r: &UnitRecord) -> Result<(), (&'static str, String)> {
    if u64::from(r.peak_arrivals) > r.counts.attempts {
        return Err((
            "peak_arrivals",
            format!(
                "is {}, but `counts` holds {} attempts in all: a bucket's arrivals are attempts",
                r.peak_arrivals, r.counts.attempts
            ),
        ));
    }
    if r.peak_retries > r.peak_arrivals {
        return Err((
            "peak_retries",
            format!(
                "is {}, above `peak_arrivals` ({}): a retry is an arrival",
                r.peak_retries, r.peak_arrivals
            ),
        ));
    }
    Ok(())
}

/// The time series against the counts it was recorded with: its successes are the
/// record's, its arrivals each bucket's first attempts and retries (no more than the
/// attempts in all), its busiest buckets the record's peaks.
fn check_series_contents(
    r: &UnitRecord,
    s: &crate::sim::TimeSeries,
) -> Result<(), (&'static str, String)> {
    let sum = |v: &[u32]| v.iter().map(|&n| u64::from(n)).sum::<u64>();
    let max = |v: &[u32]| v.iter().copied().max().unwrap_or(0);
    if sum(&s.successes) != r.counts.succeeded {
        return Err((
            "series",
            format!(
                "counts {} successes, but `counts` holds {}",
                sum(&s.successes),
                r.counts.succeeded
            ),
        ));
    }
    let split = (s.arrivals.iter().zip(&s.first_attempts).zip(&s.retries))
        .position(|((&a, &f), &t)| u64::from(a) != u64::from(f) + u64::from(t));
    if let Some(i) = split {
        return Err((
            "series",
            format!(
                "bucket {i}: {} arrivals, but {} first attempts and {} retries",
                s.arrivals[i], s.first_attempts[i], s.retries[i]
            ),
        ));
    }
    if sum(&s.arrivals) > r.counts.attempts {
        return Err((
            "series",
            format!(
                "counts {} arrivals, but `counts` holds {} attempts",
                sum(&s.arrivals),
                r.counts.attempts
            ),
        ));
    }
    let peaks = [
        ("peak_arrivals", r.peak_arrivals, max(&s.arrivals)),
        ("peak_retries", r.peak_retries, max(&s.retries)),
    ];
    for (field, peak, busiest) in peaks {
        if peak != busiest {
            return Err((
                field,
                format!("is {peak}, but the busiest bucket of `series` holds {busiest}"),
            ));
        }
    }
    Ok(())
}

/// Checks what a record says against itself and its model: every request counted once
/// (conservation: `requests` = the ended ones + `unfinished`), no more successes than
/// requests or attempts, the successes by attempt and in the latency histogram, shares from 0
/// to 1, a layer for each layer of the chain (each conserving its requests), recovery only
/// with a trigger, the makespan within the horizon. `Err((field, what is wrong))`.
fn check_values(r: &UnitRecord, model: &crate::sim::Model) -> Result<(), (&'static str, String)> {
    let c = &r.counts;
    if !conserved(c) {
        return Err((
            "counts",
            format!(
                "are not conserved: {} requests, but {} ended and {} unfinished",
                c.requests,
                c.ended(),
                c.unfinished
            ),
        ));
    }
    if c.succeeded > c.attempts {
        return Err((
            "counts",
            format!(
                "hold {} successes for {} attempts: a success is an attempt",
                c.succeeded, c.attempts
            ),
        ));
    }
    let by_attempt: u64 = r.by_attempt.iter().fold(0, |a, &n| a.saturating_add(n));
    if by_attempt != c.succeeded {
        return Err((
            "by_attempt",
            format!(
                "sums to {by_attempt}, but `counts` holds {} successes",
                c.succeeded
            ),
        ));
    }
    let latencies: u64 = r.latency_us.iter().fold(0, |a, p| a.saturating_add(p.1));
    if latencies != c.succeeded {
        return Err((
            "latency_us",
            format!(
                "counts {latencies} latencies, but `counts` holds {} successes",
                c.succeeded
            ),
        ));
    }
    let shares = [
        ("server_busy_share", r.server_busy_share),
        ("wasted_work_share", r.wasted_work_share),
        ("retry_after_share", r.retry_after_share),
    ];
    for (field, x) in shares {
        if !(0.0..=1.0).contains(&x) {
            return Err((field, format!("is {x}: a share from 0 to 1")));
        }
    }
    if r.makespan_ns > model.horizon.as_nanos() {
        return Err((
            "makespan_ns",
            format!(
                "is {}, past the horizon ({} ns)",
                r.makespan_ns,
                model.horizon.as_nanos()
            ),
        ));
    }
    check_layers(r, model)?;
    if r.recovery.is_some() && model.trigger.is_none() {
        return Err((
            "recovery",
            "is present, but the scenario has no trigger to recover from".into(),
        ));
    }
    Ok(())
}

/// Checks a record's time series against its unit and model: kept by replication 0 only, in
/// the scenario's buckets, its columns equally long and no longer than the horizon allows.
/// `Err((field, what is wrong))`, as [`check_values`].
fn check_series(
    r: &UnitRecord,
    unit: &Unit,
    model: &crate::sim::Model,
) -> Result<(), (&'static str, String)> {
    match &r.series {
        None if unit.replication == 0 => Err((
            "series",
            "is missing: replication 0 keeps its time series".into(),
        )),
        Some(_) if unit.replication != 0 => Err((
            "series",
            "is present, but only replication 0 keeps its time series".into(),
        )),
        Some(s) if s.bucket != model.bucket => Err((
            "series",
            format!(
                "has buckets of {} ns, but the scenario's output.bucket is {} ns",
                s.bucket.as_nanos(),
                model.bucket.as_nanos()
            ),
        )),
        Some(s) => {
            let most = model.horizon.as_nanos() / model.bucket.as_nanos().max(1) + 1;
            let lengths: Vec<usize> = s.columns().iter().map(|c| c.len()).collect();
            if lengths.iter().any(|&n| n != s.len() || n as u64 > most) {
                Err((
                    "series",
                    format!(
                        "has columns of {lengths:?} buckets; all must be equal and at most {most} (horizon / bucket + 1)"
                    ),
                ))
            } else {
                Ok(())
            }
        }
        None => Ok(()),
    }
}

/// Checks a record's layers against the model's chain: one for each of its layers, each
/// conserving its requests with its shares from 0 to 1. `Err((field, what is wrong))`.
fn check_layers(r: &UnitRecord, model: &crate::sim::Model) -> Result<(), (&'static str, String)> {
    let layers = model.chain.as_ref().map_or(0, |c| c.names.len());
    if r.layers.len() != layers {
        return Err((
            "layers",
            format!(
                "holds {} layers, but the scenario has {}",
                r.layers.len(),
                if layers == 0 {
                    "no chain of services".to_string()
                } else {
                    format!("{layers} layers")
                }
            ),
        ));
    }
    if let Some(i) = r.layers.iter().position(|l| {
        !conserved(&l.counts)
            || !(0.0..=1.0).contains(&l.busy_share)
            || !(0.0..=1.0).contains(&l.wasted_work_share)
    }) {
        return Err((
            "layers",
            format!(
                "layer {}: its counts are not conserved or a share is outside 0 to 1",
                i + 1
            ),
        ));
    }
    Ok(())
}

/// Every request counted once: `requests` = the ended ones + `unfinished`.
fn conserved(c: &Counts) -> bool {
    c.ended().checked_add(c.unfinished) == Some(c.requests)
}
