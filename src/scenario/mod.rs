//! Scenario files: TOML → a checked [`Scenario`], `--set` overrides, sweep points.
//!
//! A [`ScenarioDoc`] is the file as written plus the overrides given on the command line. It
//! expands into [`Point`]s (one per sweep combination, or one without a sweep); each point's
//! document is checked into a [`Scenario`] before the first event runs. Errors name the key
//! as the user wrote it (`backoff.strategies[1].cap`), the value and what is allowed, and point
//! where the value came from: its line and column in the file, the `--set` that replaced it,
//! or the sweep value of the point being checked.
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
mod playground;
pub mod presets;
mod resolved;
pub mod roles;
mod sweep;
mod table;
mod warn;
mod wording;

use std::path::{Path, PathBuf};

pub use playground::{Control, Knob, choice_text, entry_name};
pub use roles::Role;
pub use sweep::{Sweep, format_value};
pub use table::backoff::DEFAULT_STRATEGIES;

use crate::backoff::BackoffParams;
use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::sim::{Model, Strategy};
use locate::{KeyPath, Step};

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
    /// `recommend.min_success`: the success rate this scenario's results are read against
    /// (`recommend`'s default floor, the charts' success target); `None`: the default, 0.999.
    /// It changes no run, so the journal's fingerprint leaves it out.
    pub min_success: Option<f64>,
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
    /// The scenario file's folder, for the files it names (`None`: the current folder).
    dir: Option<PathBuf>,
    text: String,
    table: toml::Table,
    overrides: Vec<Override>,
    fallback_name: String,
}

/// A `--set KEY=VALUE` (or `--seed N`...): the key it replaced, and the argument as typed
/// (for errors).
#[derive(Debug, Clone)]
struct Override {
    key: KeyPath,
    origin: String,
}

/// The sweep point being checked, for errors about its values.
struct SweepPoint<'a> {
    index: usize,
    values: &'a [(String, toml::Value)],
    /// The index of each value in its key's list.
    coordinates: Vec<usize>,
}

impl ScenarioDoc {
    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<ScenarioDoc> {
        let text = crate::input::read_text(path, crate::input::SCENARIO).map_err(|e| match e {
            Error::Io { source, .. } => Error::Scenario {
                origin: path.display().to_string(),
                position: None,
                message: format!("cannot read: {source}"),
            },
            other => other,
        })?;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("scenario")
            .to_string();
        let mut doc = ScenarioDoc::parse(&text, &path.display().to_string(), &stem)?;
        doc.dir = path.parent().map(Path::to_path_buf);
        Ok(doc)
    }

    /// The built-in default scenario ([`library::DEFAULT`]).
    pub fn builtin() -> ScenarioDoc {
        library::default().doc()
    }

    /// Parses scenario text; `origin` names it in errors, `fallback_name` is used when the
    /// file has no `name`.
    pub fn parse(text: &str, origin: &str, fallback_name: &str) -> Result<ScenarioDoc> {
        let mut doc = ScenarioDoc {
            origin: origin.to_string(),
            dir: None,
            text: text.to_string(),
            table: toml::Table::new(),
            overrides: Vec::new(),
            fallback_name: fallback_name.to_string(),
        };
        // Structure first, straight from the text, so that errors carry line and column.
        toml::from_str::<file::ScenarioFile>(text).map_err(|e| doc.parse_error(&e))?;
        doc.table = toml::from_str(text).map_err(|e| doc.parse_error(&e))?;
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
        self.assign(assignment, format!("--set {assignment}"))
    }

    /// `run --seed N`: the whole u64 range (above TOML's largest integer, 2^63 - 1, the seed
    /// is written as a string of digits, which the `seed` key also takes).
    pub fn set_seed(&mut self, seed: u64) -> Result<()> {
        let value = if i64::try_from(seed).is_ok() {
            seed.to_string()
        } else {
            format!("\"{seed}\"")
        };
        self.assign(&format!("seed={value}"), format!("--seed {seed}"))
    }

    /// `run --replications N`.
    pub fn set_replications(&mut self, replications: u32) -> Result<()> {
        self.assign(
            &format!("replications={replications}"),
            format!("--replications {replications}"),
        )
    }

    /// Applies `KEY=VALUE`, given on the command line as `origin` (named in errors).
    fn assign(&mut self, assignment: &str, origin: String) -> Result<()> {
        let usage = |message: &str| Error::Usage {
            arg: origin.clone(),
            message: message.to_string(),
        };
        let (key, value) = assignment
            .split_once('=')
            .ok_or_else(|| usage("expected KEY=VALUE, for example backoff.cap=5s"))?;
        let key = KeyPath::parse(key).map_err(|m| usage(&m))?;
        let value = parse_value(value.trim());
        set_path(&mut self.table, &key, value).map_err(|m| usage(&m))?;
        self.overrides.push(Override {
            key,
            origin: origin.clone(),
        });
        // The structure must still fit the schema; an error names the key and the `--set`.
        if let Err(e) = toml::Value::Table(self.table.clone()).try_into::<file::ScenarioFile>() {
            return Err(self.structure_error(&self.table, e, None));
        }
        self.sweep()?;
        Ok(())
    }

    /// The sweep grid (empty when the file has no `[sweep]`).
    pub fn sweep(&self) -> Result<Sweep> {
        Sweep::from_table(self.table.get("sweep")).map_err(|e| self.place_error(e, None))
    }

    /// Expands the grid and checks every point.
    pub fn points(&self) -> Result<Vec<Point>> {
        self.points_until(&CancelToken::new())
    }

    /// [`ScenarioDoc::points`], stopped with [`Error::Interrupted`] once `cancel` is cancelled
    /// (a grid of 100000 points takes a second to check).
    pub fn points_until(&self, cancel: &CancelToken) -> Result<Vec<Point>> {
        let sweep = self.sweep()?;
        let mut base = self.table.clone();
        base.remove("sweep");
        let combos = sweep.combinations();
        let mut points = Vec::with_capacity(combos.len());
        for (index, values) in combos.into_iter().enumerate() {
            if cancel.is_cancelled() {
                return Err(Error::Interrupted);
            }
            let at = SweepPoint {
                index,
                values: &values,
                coordinates: sweep.coordinates(index),
            };
            let mut table = base.clone();
            for (key, value) in &values {
                KeyPath::parse(key)
                    .and_then(|path| set_path(&mut table, &path, value.clone()))
                    .map_err(|m| {
                        let written =
                            KeyPath(vec![Step::Key("sweep".into()), Step::Key(key.clone())]);
                        self.place(&written, format!("sweep key `{key}`: {m}"), None)
                    })?;
            }
            let scenario = self.check_table(table, Some(&at))?;
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
        self.check_table(table, None)
    }

    fn check_table(&self, table: toml::Table, point: Option<&SweepPoint>) -> Result<Scenario> {
        let raw: file::ScenarioFile = toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| self.structure_error(&table, e, point))?;
        check::check(&raw, &self.fallback_name, self.dir.as_deref())
            .map_err(|e| self.place_error(e, point))
    }

    /// A table that no longer fits the schema once overrides and sweep values are in (a sweep
    /// value of the wrong type). The value parser does not say where it stopped, so the table
    /// is written out and read again to find the key.
    fn structure_error(
        &self,
        table: &toml::Table,
        e: toml::de::Error,
        point: Option<&SweepPoint>,
    ) -> Error {
        let again = toml::to_string(table).ok().and_then(|text| {
            match toml::from_str::<file::ScenarioFile>(&text) {
                Err(e) => {
                    let span = e.span()?;
                    let key = locate::path_at(&text, span.start)?;
                    let message = reworded(&key, e.message(), written(&text, span));
                    Some((key, message))
                }
                Ok(_) => None,
            }
        });
        match again {
            Some((key, message)) => self.place(&key, message, point),
            None => self.place(&KeyPath::default(), e.message().trim().to_string(), point),
        }
    }

    /// A TOML or schema error in the file's own text, with its position.
    fn parse_error(&self, e: &toml::de::Error) -> Error {
        let offset = e.span().map(|span| span.start);
        let message = e.message().trim();
        Error::Scenario {
            origin: self.origin.clone(),
            position: offset.map(|o| locate::position(&self.text, o)),
            // Name the whole key path (`server.workerz`, not just `workerz`).
            message: match offset.and_then(|o| locate::path_at(&self.text, o)) {
                Some(path) => reworded(
                    &path,
                    message,
                    e.span().and_then(|s| written(&self.text, s)),
                ),
                // A file that does not parse has no key paths to find: name what is written
                // there (the key written twice) and the table it is in.
                None => match e.span().and_then(|s| written(&self.text, s)) {
                    Some(key) => {
                        let table = offset.and_then(|o| table_at(&self.text, o));
                        format!(
                            "{message} `{key}`{}",
                            table.map_or(String::new(), |t| format!(" in {t}"))
                        )
                    }
                    None => message.to_string(),
                },
            },
        }
    }

    /// An error about the value of a key found by a check of its own (an
    /// [`Error::InvalidValue`]: `jitterlab live`'s limits), placed where the user wrote the
    /// value, as the checker's refusals are: `FILE:LINE:COLUMN`, or the `--set` that gave it.
    pub fn place_value_error(&self, err: Error) -> Error {
        self.place_error(err, None)
    }

    /// Places a value error of the checker (which names the key) where its value was written.
    fn place_error(&self, err: Error, point: Option<&SweepPoint>) -> Error {
        match &err {
            Error::InvalidValue { key, .. } => {
                let key = KeyPath::parse(key).unwrap_or_default();
                self.place(&key, err.to_string(), point)
            }
            _ => err,
        }
    }

    /// A scenario error about the value of `key`, placed where the user wrote that value: a
    /// value of the sweep point being checked, a `--set`, or the file (the line and column of
    /// the value; of the deepest written key when the value is a default).
    fn place(&self, key: &KeyPath, mut message: String, point: Option<&SweepPoint>) -> Error {
        let mut written = key.clone();
        if let Some(p) = point.filter(|p| !p.values.is_empty()) {
            let swept = p
                .values
                .iter()
                .position(|(k, _)| KeyPath::parse(k).is_ok_and(|k| k.holds(key)));
            if let Some(axis) = swept {
                written = KeyPath(vec![
                    Step::Key("sweep".into()),
                    Step::Key(p.values[axis].0.clone()),
                    Step::Index(p.coordinates[axis]),
                ]);
            }
            message = format!(
                "{message} (at sweep point {}: {})",
                p.index,
                describe(p.values)
            );
        }
        // An empty path (a key the checker could not name) is nowhere in particular.
        let replaced = (!written.0.is_empty())
            .then(|| self.overrides.iter().rev().find(|o| o.key.holds(&written)))
            .flatten();
        match replaced {
            Some(o) => Error::Scenario {
                origin: o.origin.clone(),
                position: None,
                message,
            },
            None => Error::Scenario {
                origin: self.origin.clone(),
                position: locate::locate(&self.text, &written),
                message,
            },
        }
    }

    /// Whether the file has a `[playground]` table of its own.
    pub fn has_playground(&self) -> bool {
        self.table.contains_key("playground")
    }

    /// The sweep table as written (for the resolved file).
    pub fn sweep_table(&self) -> Option<&toml::Value> {
        self.table.get("sweep")
    }
}

/// A structure error about `key` as users read it: `invalid value for `key`: value: what is
/// allowed` for a wrong type or value ([`wording`]), else serde's message after the key.
fn reworded(key: &KeyPath, message: &str, written: Option<&str>) -> String {
    match wording::reword(message, written) {
        Some((value, allowed)) => Error::invalid(key.to_string(), value, allowed).to_string(),
        None => format!("`{key}`: {}", message.trim()),
    }
}

/// The text of a value at `span`, when it is short enough to quote in an error.
fn written(text: &str, span: std::ops::Range<usize>) -> Option<&str> {
    text.get(span)
        .map(str::trim)
        .filter(|t| !t.is_empty() && t.len() <= 60 && !t.contains('\n'))
}

/// The table header (`[server]`, `[[layers]]`) that byte `offset` of a TOML text is under,
/// if any (none when the offset is in a header itself: the key is that table).
fn table_at(text: &str, offset: usize) -> Option<&str> {
    let end = text
        .get(offset..)?
        .find('\n')
        .map_or(text.len(), |i| offset + i);
    let mut lines = text[..end].lines().rev().map(str::trim);
    if lines.next()?.starts_with('[') {
        return None;
    }
    lines
        .find(|l| l.starts_with('['))
        .map(|l| l.split('#').next().unwrap_or(l).trim())
        .filter(|l| l.len() <= 60)
}

/// `key = value, key = value`.
pub fn describe(values: &[(String, toml::Value)]) -> String {
    values
        .iter()
        .map(|(k, v)| format!("{k} = {}", format_value(v)))
        .collect::<Vec<_>>()
        .join(", ")
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

/// Sets the value at `path`, creating tables on the way; a list entry must exist.
fn set_path(
    table: &mut toml::Table,
    path: &KeyPath,
    value: toml::Value,
) -> std::result::Result<(), String> {
    let mut root = toml::Value::Table(std::mem::take(table));
    let result = set_in(&mut root, path, value);
    if let toml::Value::Table(t) = root {
        *table = t;
    }
    result
}

fn set_in(
    root: &mut toml::Value,
    path: &KeyPath,
    value: toml::Value,
) -> std::result::Result<(), String> {
    let mut current = root;
    for (i, step) in path.0.iter().enumerate() {
        // A missing table is created, unless a list entry is wanted from it.
        let create = !matches!(path.0.get(i + 1), Some(Step::Index(_)));
        current = step_into(current, step, create, || KeyPath(path.0[..i].to_vec()))?;
    }
    *current = value;
    Ok(())
}

/// The value one step below `value`; `here` names `value` in errors.
fn step_into<'a>(
    value: &'a mut toml::Value,
    step: &Step,
    create: bool,
    here: impl Fn() -> KeyPath,
) -> std::result::Result<&'a mut toml::Value, String> {
    match step {
        Step::Key(name) => {
            let table = value
                .as_table_mut()
                .ok_or_else(|| format!("`{}` is not a table", here()))?;
            if create {
                Ok(table
                    .entry(name.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new())))
            } else {
                table
                    .get_mut(name)
                    .ok_or_else(|| format!("`{}` is not a list in the scenario", here().key(name)))
            }
        }
        Step::Index(i) => {
            let list = value
                .as_array_mut()
                .ok_or_else(|| format!("`{}` is not a list in the scenario", here()))?;
            let len = list.len();
            list.get_mut(*i)
                .ok_or_else(|| format!("`{}` has {len} entries; index {i} is out of range", here()))
        }
    }
}

#[cfg(test)]
mod tests;
