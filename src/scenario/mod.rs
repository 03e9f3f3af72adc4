//! Scenario files: TOML → a checked [`Scenario`], `--set` overrides, sweep points.
//!
//! A [`ScenarioDoc`] is the file as written plus the overrides given on the command line. It
//! expands into [`Point`]s (one per sweep combination, or one without a sweep); each point's
//! document is checked into a [`Scenario`] before the first event runs. Errors name the key
//! (`server.workers`), the value and what is allowed, with the line and column in the file
//! when the key was written there.
//!
//! The resolved form ([`Scenario::to_toml`]) writes every key with its value, defaults
//! included; reading it back gives the same scenario.
//!
//! The scenarios of `sims/` are built into the binary ([`library`]), so a name such as
//! `brooker-2015` works wherever the tool is installed.

mod check;
mod file;
pub mod library;
mod locate;
mod resolved;
mod sweep;

use std::path::Path;

pub use check::DEFAULT_STRATEGIES;
pub use sweep::{Sweep, format_value};

use crate::backoff::BackoffParams;
use crate::error::{Error, Result};
use crate::sim::{Model, Strategy};

/// The built-in default scenario's text: the thundering herd after an outage.
pub const BUILTIN: &str = include_str!("../../sims/thundering-herd.toml");

/// A checked scenario: one point, ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Output folder name.
    pub name: String,
    /// One line on what it shows.
    pub description: String,
    /// Master seed.
    pub seed: u64,
    /// Independent replications per (point, strategy).
    pub replications: u32,
    /// Everything but the strategies.
    pub model: Model,
    /// The strategies compared side by side.
    pub strategies: Vec<Strategy>,
    /// The `[backoff]` keys shared by the strategies (written back in the resolved file).
    pub backoff_defaults: BackoffParams,
}

/// One sweep point: its values of the sweep keys and its checked scenario.
#[derive(Debug, Clone)]
pub struct Point {
    /// 0-based, in grid order.
    pub index: usize,
    /// `(dotted key, value)` for each sweep key, in the order written.
    pub values: Vec<(String, toml::Value)>,
    /// The scenario at this point.
    pub scenario: Scenario,
}

/// A scenario file with its command-line overrides.
#[derive(Debug, Clone)]
pub struct ScenarioDoc {
    origin: String,
    text: String,
    table: toml::Table,
    overridden: Vec<String>,
    fallback_name: String,
}

impl ScenarioDoc {
    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<ScenarioDoc> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Scenario {
            path: path.display().to_string(),
            message: format!("cannot read: {e}"),
        })?;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("scenario")
            .to_string();
        ScenarioDoc::parse(&text, &path.display().to_string(), &stem)
    }

    /// The built-in default scenario ([`library::DEFAULT`]).
    pub fn builtin() -> ScenarioDoc {
        library::default().doc()
    }

    /// Parses scenario text; `origin` names it in errors, `fallback_name` is used when the
    /// file has no `name`.
    pub fn parse(text: &str, origin: &str, fallback_name: &str) -> Result<ScenarioDoc> {
        let fail = |message: String| Error::Scenario {
            path: origin.to_string(),
            message,
        };
        // Structure first, straight from the text, so that errors carry line and column.
        toml::from_str::<file::ScenarioFile>(text).map_err(|e| fail(toml_error(text, &e)))?;
        let table: toml::Table = toml::from_str(text).map_err(|e| fail(toml_error(text, &e)))?;
        let doc = ScenarioDoc {
            origin: origin.to_string(),
            text: text.to_string(),
            table,
            overridden: Vec::new(),
            fallback_name: fallback_name.to_string(),
        };
        doc.sweep()?;
        Ok(doc)
    }

    /// Where the document came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Applies `KEY=VALUE`: VALUE is read as a TOML value, and a bare word that is not one is
    /// taken as a string (`backoff.cap=5s`, `workload.clients=100000`,
    /// `backoff.strategies=["full"]`).
    pub fn set(&mut self, assignment: &str) -> Result<()> {
        let usage = |message: &str| Error::Usage {
            arg: format!("--set {assignment}"),
            message: message.to_string(),
        };
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| usage("expected KEY=VALUE, for example backoff.cap=5s"))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(usage("the key is empty"));
        }
        let value = parse_value(value.trim());
        set_path(&mut self.table, key, value).map_err(|m| usage(&m))?;
        self.overridden.push(key.to_string());
        // The structure must still fit the schema.
        toml::Value::Table(self.table.clone())
            .try_into::<file::ScenarioFile>()
            .map_err(|e| usage(e.message()))?;
        self.sweep()?;
        Ok(())
    }

    /// The sweep grid (empty when the file has no `[sweep]`).
    pub fn sweep(&self) -> Result<Sweep> {
        Sweep::from_table(self.table.get("sweep")).map_err(|e| self.located(e, false))
    }

    /// Expands the grid and checks every point.
    pub fn points(&self) -> Result<Vec<Point>> {
        let sweep = self.sweep()?;
        let mut base = self.table.clone();
        base.remove("sweep");
        let combos = sweep.combinations();
        let mut points = Vec::with_capacity(combos.len());
        for (index, values) in combos.into_iter().enumerate() {
            let mut table = base.clone();
            for (key, value) in &values {
                set_path(&mut table, key, value.clone()).map_err(|m| Error::Scenario {
                    path: self.origin.clone(),
                    message: format!("sweep key `{key}`: {m}"),
                })?;
            }
            let scenario = self.check_table(table).map_err(|e| {
                let swept = matches!(&e, Error::InvalidValue { key, .. } if values.iter().any(|(k, _)| k == key));
                match self.located(e, swept) {
                    Error::Scenario { path, message } if !values.is_empty() => Error::Scenario {
                        path,
                        message: format!("{message} (at sweep point {index}: {})", describe(&values)),
                    },
                    other => other,
                }
            })?;
            points.push(Point {
                index,
                values,
                scenario,
            });
        }
        Ok(points)
    }

    /// The scenario without its sweep (the first point's keys are not applied).
    pub fn base(&self) -> Result<Scenario> {
        let mut table = self.table.clone();
        table.remove("sweep");
        self.check_table(table).map_err(|e| self.located(e, false))
    }

    fn check_table(&self, table: toml::Table) -> Result<Scenario> {
        let raw: file::ScenarioFile =
            toml::Value::Table(table)
                .try_into()
                .map_err(|e: toml::de::Error| Error::Scenario {
                    path: self.origin.clone(),
                    message: e.message().to_string(),
                })?;
        check::check(&raw, &self.fallback_name)
    }

    /// Turns a value error into a scenario error with the file position of the key, when the
    /// key was written in the file (not overridden by `--set` or a sweep).
    fn located(&self, err: Error, swept: bool) -> Error {
        match err {
            Error::InvalidValue { ref key, .. } => {
                let overridden = swept
                    || self
                        .overridden
                        .iter()
                        .any(|k| key.starts_with(k.as_str()) || k.starts_with(key.as_str()));
                let position = if overridden {
                    None
                } else {
                    locate::locate(&self.text, key)
                };
                Error::Scenario {
                    path: match position {
                        Some((line, column)) => format!("{}:{line}:{column}", self.origin),
                        None => self.origin.clone(),
                    },
                    message: err.to_string(),
                }
            }
            other => other,
        }
    }

    /// The sweep table as written (for the resolved file).
    pub fn sweep_table(&self) -> Option<&toml::Value> {
        self.table.get("sweep")
    }
}

/// `key = value, key = value`.
pub fn describe(values: &[(String, toml::Value)]) -> String {
    values
        .iter()
        .map(|(k, v)| format!("{k} = {}", format_value(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Formats a TOML parse error on one line: "line L, column C: message".
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().to_string();
    // Name the whole key path when the error points at a key (`server.workerz`, not just
    // `workerz`).
    let message = match e.span().and_then(|span| locate::path_at(text, span.start)) {
        Some(path) => format!("`{path}`: {message}"),
        None => message,
    };
    match (e.span(), e.to_string().lines().next()) {
        (Some(_), Some(first)) if first.contains("line") => {
            // toml's Display starts with "TOML parse error at line L, column C".
            let position = first.trim_start_matches("TOML parse error at ").to_string();
            format!("{position}: {message}")
        }
        _ => message,
    }
}

/// Reads a `--set` value: a TOML value, or else a bare string.
fn parse_value(text: &str) -> toml::Value {
    let doc = format!("v = {text}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(text.to_string())),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

/// Sets a dotted key (`a.b.c`, with `faults[0].end` for array items), creating tables.
fn set_path(
    table: &mut toml::Table,
    key: &str,
    value: toml::Value,
) -> std::result::Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    let mut current = table;
    for (i, part) in parts.iter().enumerate() {
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => {
                let idx: usize = rest
                    .trim_end_matches(']')
                    .parse()
                    .map_err(|_| format!("bad index in `{part}`"))?;
                (n, Some(idx))
            }
            None => (*part, None),
        };
        let last = i + 1 == parts.len();
        match index {
            None if last => {
                current.insert(name.to_string(), value);
                return Ok(());
            }
            None => {
                let entry = current
                    .entry(name.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                current = entry
                    .as_table_mut()
                    .ok_or_else(|| format!("`{name}` is not a table"))?;
            }
            Some(idx) => {
                let array = current
                    .get_mut(name)
                    .and_then(|v| v.as_array_mut())
                    .ok_or_else(|| format!("`{name}` is not a list in the scenario"))?;
                let len = array.len();
                let item = array.get_mut(idx).ok_or_else(|| {
                    format!("`{name}` has {len} entries; index {idx} is out of range")
                })?;
                if last {
                    *item = value;
                    return Ok(());
                }
                current = item
                    .as_table_mut()
                    .ok_or_else(|| format!("`{name}[{idx}]` is not a table"))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
