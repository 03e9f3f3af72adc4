//! `[[faults]]` (and a layer's `[[layers.faults]]`): outages, error bursts and slowdowns.

use serde::Deserialize;
use toml::Value;

use super::helpers::{duration, finite, only_for, s, status, table};
use crate::error::{Error, Result};
use crate::scenario::file::{CountOr, StatusOr};
use crate::sim::faults::{Fault, FaultKind, OutageAnswer};
use crate::time::{SimDuration, SimTime};

/// The status of an `outage` or `errors` window when absent.
pub const DEFAULT_STATUS: u16 = 503;

/// One `[[faults]]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultFile {
    pub kind: String,
    pub start: String,
    pub end: String,
    #[serde(default)]
    pub status: Option<StatusOr>,
    #[serde(default)]
    pub share: Option<f64>,
    #[serde(default)]
    pub factor: Option<f64>,
}

pub fn fault(key: &str, f: &FaultFile) -> Result<Fault> {
    let start = SimTime(duration(&format!("{key}.start"), &f.start)?.as_nanos());
    let end = SimTime(duration(&format!("{key}.end"), &f.end)?.as_nanos());
    if end <= start {
        return Err(Error::invalid(
            format!("{key}.end"),
            &f.end,
            format!("a time after {key}.start ({})", f.start),
        ));
    }
    let k = |s: &str| format!("{key}.{s}");
    let kind = match f.kind.as_str() {
        "outage" => {
            only_for(&k("share"), &f.share, &k("kind"), "outage")?;
            only_for(&k("factor"), &f.factor, &k("kind"), "outage")?;
            FaultKind::Outage(match &f.status {
                None => OutageAnswer::Status(DEFAULT_STATUS),
                Some(CountOr::Count(n)) => OutageAnswer::Status(status(&k("status"), *n)?),
                Some(CountOr::Word(w)) if w == "drop" => OutageAnswer::Drop,
                Some(CountOr::Word(w)) if w == "reset" => OutageAnswer::Reset,
                Some(CountOr::Word(w)) => {
                    return Err(Error::invalid(
                        k("status"),
                        format!("{w:?}"),
                        "an error status from 400 to 599, \"drop\" (no answer) or \"reset\" (connection error)",
                    ));
                }
            })
        }
        "errors" => {
            only_for(&k("factor"), &f.factor, &k("kind"), "errors")?;
            let share = f
                .share
                .ok_or_else(|| Error::invalid(k("share"), "missing", "a number from 0 to 1"))?;
            let share = finite(
                &k("share"),
                share,
                (0.0..=1.0).contains(&share),
                "a number from 0 to 1",
            )?;
            let status = match &f.status {
                None => DEFAULT_STATUS,
                Some(CountOr::Count(n)) => status(&k("status"), *n)?,
                Some(CountOr::Word(w)) => {
                    return Err(Error::invalid(
                        k("status"),
                        format!("{w:?}"),
                        "an error status from 400 to 599",
                    ));
                }
            };
            FaultKind::Errors { share, status }
        }
        "slow" => {
            only_for(&k("share"), &f.share, &k("kind"), "slow")?;
            only_for(&k("status"), &f.status, &k("kind"), "slow")?;
            let factor = f.factor.ok_or_else(|| {
                Error::invalid(
                    k("factor"),
                    "missing",
                    "a number above 0 (3 = three times slower)",
                )
            })?;
            FaultKind::Slow {
                factor: finite(
                    &k("factor"),
                    factor,
                    factor > 0.0 && factor <= 1e6,
                    "a number above 0 and at most 1000000",
                )?,
            }
        }
        other => {
            return Err(Error::invalid(
                k("kind"),
                format!("{other:?}"),
                "one of outage, errors, slow",
            ));
        }
    };
    Ok(Fault { kind, start, end })
}

/// A list of fault windows, every key of each.
pub fn faults_list(faults: &[Fault]) -> Value {
    let faults: Vec<Value> = faults
        .iter()
        .map(|f| {
            let mut pairs = vec![
                ("kind", s(f.kind_name())),
                ("start", s(SimDuration(f.start.as_nanos()))),
                ("end", s(SimDuration(f.end.as_nanos()))),
            ];
            match f.kind {
                FaultKind::Outage(OutageAnswer::Status(code)) => {
                    pairs.push(("status", Value::Integer(code as i64)))
                }
                FaultKind::Outage(OutageAnswer::Drop) => pairs.push(("status", s("drop"))),
                FaultKind::Outage(OutageAnswer::Reset) => pairs.push(("status", s("reset"))),
                FaultKind::Errors { share, status } => pairs.extend([
                    ("share", Value::Float(share)),
                    ("status", Value::Integer(status as i64)),
                ]),
                FaultKind::Slow { factor } => pairs.push(("factor", Value::Float(factor))),
            }
            table(pairs)
        })
        .collect();
    Value::Array(faults)
}
/// A list of fault windows at `key` (`faults`, or `layers[i].faults`).
pub fn faults(key: &str, list: &[FaultFile]) -> Result<Vec<Fault>> {
    list.iter()
        .enumerate()
        .map(|(i, f)| fault(&format!("{key}[{i}]"), f))
        .collect()
}
