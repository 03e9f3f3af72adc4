//! A distribution table (`server.service`, `network.latency`): `{ dist = "exponential",
//! mean = "10ms" }`, or `{ dist = "empirical", file = "samples.txt" }`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::helpers::{duration, only_for, under};
use crate::error::{Error, Result};
use crate::sim::dist::{Dist, Empirical};

/// A distribution table: `{ dist = "exponential", mean = "10ms", sd = "2ms" }`, or
/// `{ dist = "empirical", file = "samples.txt" }`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistFile {
    pub dist: String,
    #[serde(default)]
    pub mean: Option<String>,
    #[serde(default)]
    pub sd: Option<String>,
    #[serde(default)]
    pub file: Option<String>,
}

/// A distribution table; the file of an `empirical` one is read relative to `dir` (the
/// scenario file's folder; the current folder for built-ins and text).
pub fn dist(key: &str, file: &Option<DistFile>, default: Dist, dir: Option<&Path>) -> Result<Dist> {
    let Some(f) = file else { return Ok(default) };
    if f.dist == "empirical" {
        return empirical(key, f, dir);
    }
    only_for(
        &format!("{key}.file"),
        &f.file,
        &format!("{key}.dist"),
        &f.dist,
    )?;
    let mean = f.mean.as_deref().ok_or_else(|| {
        Error::invalid(
            format!("{key}.mean"),
            "missing",
            format!("a duration: `{}` needs `mean`", f.dist),
        )
    })?;
    let mean = duration(&format!("{key}.mean"), mean)?;
    let sd =
        f.sd.as_ref()
            .map(|s| duration(&format!("{key}.sd"), s))
            .transpose()?;
    Dist::new(&f.dist, mean, sd).map_err(under(key))
}

/// `{ dist = "empirical", file = "..." }`: the samples, read (bounded) and checked.
pub fn empirical(key: &str, f: &DistFile, dir: Option<&Path>) -> Result<Dist> {
    let kind = format!("{key}.dist");
    only_for(&format!("{key}.mean"), &f.mean, &kind, "empirical")?;
    only_for(&format!("{key}.sd"), &f.sd, &kind, "empirical")?;
    let file_key = format!("{key}.file");
    let name = f.file.as_deref().ok_or_else(|| {
        Error::invalid(
            &file_key,
            "missing",
            "a file of samples in milliseconds: `empirical` needs `file`",
        )
    })?;
    let path = match dir {
        Some(dir) if Path::new(name).is_relative() => dir.join(name),
        _ => PathBuf::from(name),
    };
    let text = crate::input::read_text(&path, crate::input::SAMPLES).map_err(|e| match e {
        Error::Io { source, .. } => Error::invalid(
            &file_key,
            format!("{name:?}"),
            format!("a readable file of samples ({}: {source})", path.display()),
        ),
        other => other,
    })?;
    Ok(Dist::Empirical(
        Empirical::parse(&path, &text).map_err(under(key))?,
    ))
}
