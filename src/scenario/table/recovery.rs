//! `[recovery]`: the span whose recovery is measured (the trigger) and when a run counts as
//! recovered.

use serde::Deserialize;
use toml::Value;

use super::helpers::{duration, finite, positive_dur, s, table};
use crate::error::{Error, Result};
use crate::sim::faults::Fault;
use crate::sim::recovery::RecoveryConfig;
use crate::sim::workload::Workload;
use crate::sim::{Chain, Model};
use crate::time::{SimDuration, SimTime};

/// `[recovery]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecoveryFile {
    pub window: Option<String>,
    pub tolerance: Option<f64>,
    /// `["start", "end"]`: the trigger, instead of the one found from the faults or the
    /// workload.
    pub trigger: Option<Vec<String>>,
}
/// `recovery.window` when absent.
pub const DEFAULT_WINDOW: &str = "10s";

/// `recovery.tolerance` when absent: within 5 %.
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// `[recovery]`.
pub fn recovery(r: &RecoveryFile) -> Result<RecoveryConfig> {
    let tolerance = r.tolerance.unwrap_or(DEFAULT_TOLERANCE);
    Ok(RecoveryConfig {
        window: positive_dur("recovery.window", &r.window, DEFAULT_WINDOW)?,
        tolerance: finite(
            "recovery.tolerance",
            tolerance,
            (0.0..1.0).contains(&tolerance),
            "a number from 0 to below 1 (0.05 = within 5 %)",
        )?,
    })
}

/// The span whose recovery is measured: `recovery.trigger` when given, else
/// [`default_trigger`].
pub fn trigger(
    r: &RecoveryFile,
    faults: &[Fault],
    chain: Option<&Chain>,
    workload: &Workload,
) -> Result<Option<(SimTime, SimTime)>> {
    let Some(given) = &r.trigger else {
        return Ok(default_trigger(faults, chain, workload));
    };
    let [start, end] = given.as_slice() else {
        return Err(Error::invalid(
            "recovery.trigger",
            format!("{given:?}"),
            "two times [\"start\", \"end\"] such as [\"30s\", \"45s\"]",
        ));
    };
    let at = |i: usize, text: &str| {
        duration(&format!("recovery.trigger[{i}]"), text).map(|d| SimTime(d.as_nanos()))
    };
    let (from, to) = (at(0, start)?, at(1, end)?);
    if to <= from {
        return Err(Error::invalid(
            "recovery.trigger[1]",
            format!("{end:?}"),
            format!("a time after recovery.trigger[0] ({start})"),
        ));
    }
    Ok(Some((from, to)))
}

/// `[recovery]` as written back; `trigger` only when it is not the one found from the
/// faults or the workload (the resolved files of earlier releases stay unchanged).
pub fn write(m: &Model) -> Value {
    let mut pairs = vec![
        ("window", s(m.recovery.window)),
        ("tolerance", Value::Float(m.recovery.tolerance)),
    ];
    if let Some((start, end)) = named_trigger(m) {
        let time = |t: SimTime| s(SimDuration(t.as_nanos()));
        pairs.push(("trigger", Value::Array(vec![time(start), time(end)])));
    }
    table(pairs)
}

/// The trigger when `recovery.trigger` named one other than the one found from the faults
/// or the workload ([`default_trigger`]).
pub fn named_trigger(m: &Model) -> Option<(SimTime, SimTime)> {
    m.trigger
        .filter(|_| m.trigger != default_trigger(&m.faults, m.chain.as_ref(), &m.workload))
}

/// The span whose recovery is measured: from the first fault window's start (of any layer)
/// to the last one's end; without faults, from the first to the last span where the
/// workload's rate profile is above its base (none when it stays above for good).
pub fn default_trigger(
    faults: &[Fault],
    chain: Option<&Chain>,
    workload: &Workload,
) -> Option<(SimTime, SimTime)> {
    let all_faults: Vec<&Fault> = faults
        .iter()
        .chain(
            chain
                .iter()
                .flat_map(|c| c.hops.iter().flat_map(|h| h.faults.iter())),
        )
        .collect();
    let spans: Vec<(SimTime, SimTime)> = if all_faults.is_empty() {
        workload.trigger_windows()
    } else {
        all_faults.iter().map(|f| (f.start, f.end)).collect()
    };
    let start = spans.iter().map(|s| s.0).min()?;
    let end = spans.iter().map(|s| s.1).max()?;
    (end != SimTime::NEVER).then_some((start, end))
}
