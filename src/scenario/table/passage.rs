//! `[passage]`: the levels of attempts at the server whose first passages each run measures
//! (a collapse level from the run's start, a healthy level from the trigger's end).

use serde::Deserialize;
use toml::Value;

use super::helpers::{count, table};
use crate::error::{Error, Result};
use crate::sim::passage::PassageConfig;

/// `[passage]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PassageFile {
    pub collapse: Option<i64>,
    pub healthy: Option<i64>,
}

/// The most attempts a level may name.
const MAX_LEVEL: i64 = u32::MAX as i64;

/// `[passage]`: watched when the table is there, each level optional; a healthy level below
/// the collapse level.
pub fn passage(p: &Option<PassageFile>) -> Result<PassageConfig> {
    let Some(p) = p else {
        return Ok(PassageConfig::default());
    };
    let level = |key: &str, v: Option<i64>, min: i64| {
        v.map(|v| count(key, Some(v), v, min, MAX_LEVEL))
            .transpose()
    };
    let collapse = level("passage.collapse", p.collapse, 1)?;
    let healthy = level("passage.healthy", p.healthy, 0)?;
    if let (Some(c), Some(h)) = (collapse, healthy)
        && h >= c
    {
        return Err(Error::invalid(
            "passage.healthy",
            h.to_string(),
            format!("a level below passage.collapse ({c})"),
        ));
    }
    Ok(PassageConfig {
        watched: true,
        collapse,
        healthy,
    })
}

/// `[passage]` as written back, `None` when not watched (the resolved files of earlier
/// releases stay unchanged).
pub fn write(p: &PassageConfig) -> Option<Value> {
    if !p.watched {
        return None;
    }
    let pairs: Vec<(&str, Value)> = [("collapse", p.collapse), ("healthy", p.healthy)]
        .into_iter()
        .filter_map(|(k, v)| Some((k, Value::Integer(i64::from(v?)))))
        .collect();
    Some(table(pairs))
}
