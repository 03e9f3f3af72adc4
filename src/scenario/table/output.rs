//! `[output]`: the time-series bucket.

use serde::Deserialize;
use toml::Value;

use super::helpers::{dur, s, table};
use crate::error::{Error, Result};
use crate::time::SimDuration;

/// Most time-series buckets in one run (horizon / bucket).
pub const MAX_BUCKETS: u64 = 1_000_000;

/// `[output]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OutputFile {
    pub bucket: Option<String>,
}
/// `output.bucket` when absent.
pub const DEFAULT_BUCKET: &str = "10ms";

/// `output.bucket`: above 0, fewer than [`MAX_BUCKETS`] over the `horizon`.
pub fn bucket(o: &OutputFile, horizon: SimDuration) -> Result<SimDuration> {
    let bucket = dur("output.bucket", &o.bucket, DEFAULT_BUCKET)?;
    if bucket == SimDuration::ZERO || horizon.as_nanos() / bucket.as_nanos() >= MAX_BUCKETS {
        return Err(Error::invalid(
            "output.bucket",
            bucket,
            format!(
                "a duration greater than 0 giving fewer than {MAX_BUCKETS} buckets over the horizon ({horizon})"
            ),
        ));
    }
    Ok(bucket)
}

/// `[output]` as written back.
pub fn write(bucket: SimDuration) -> Value {
    table(vec![("bucket", s(bucket))])
}
