//! `[recommend]`: what the results are read against (no effect on the runs).

use serde::Deserialize;
use toml::Value;

use super::helpers::table;
use crate::error::{Error, Result};

/// `[recommend]`: what the results are read against (no effect on the runs).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecommendFile {
    pub min_success: Option<f64>,
}

/// `recommend.min_success`: a share above 0, at most 1 (absent: `recommend`'s default).
pub fn min_success(file: Option<&RecommendFile>) -> Result<Option<f64>> {
    match file.and_then(|r| r.min_success) {
        Some(x) if !(x > 0.0 && x <= 1.0) => Err(Error::invalid(
            "recommend.min_success",
            x,
            "a number above 0 and at most 1",
        )),
        other => Ok(other),
    }
}
/// `[recommend]` as written back: only when the file set it (the resolved files of earlier
/// releases stay unchanged).
pub fn write(min_success: Option<f64>) -> Option<Value> {
    min_success.map(|x| table(vec![("min_success", Value::Float(x))]))
}
