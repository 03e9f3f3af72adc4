//! `[playground]`: the knobs `jitterlab serve` shows for a scenario. A knob is a key that
//! `--set` takes and the values its control offers (a range, a list of choices, or a subset
//! of a list, such as which strategies run); a scenario that names none gets a default set
//! from what it has ([`ScenarioDoc::knobs`]). The table changes no run: it is not part of the
//! checked [`super::Scenario`], so neither the resolved file nor the journal's fingerprint
//! sees it.
//!
//! A knob's value travels as text (in the page's URL and requests): a whole number, a number,
//! a duration (`250ms`), a choice as `--set` reads it, or a subset's names joined by commas.
//! [`Knob::assignment`] checks that text against the knob and turns it into the `KEY=VALUE`
//! that `--set` takes, so the page's numbers are those of `jitterlab run --set KEY=VALUE`.

use serde::Deserialize;
use toml::Value;

use super::file::ScenarioFile;
use super::locate::{KeyPath, Step};
use super::{ScenarioDoc, parse_value};
use crate::error::{Error, Result};
use crate::scenario::DEFAULT_STRATEGIES;
use crate::time::SimDuration;

/// `[playground]`: the knobs `jitterlab serve` shows (no effect on the runs).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlaygroundFile {
    pub knobs: Option<Vec<KnobFile>>,
}

/// One `playground.knobs` entry: a key and the values its control offers. The values stay
/// TOML values here; [`Knob`] reads them by the key's kind.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KnobFile {
    pub key: Option<String>,
    pub label: Option<String>,
    pub min: Option<toml::Value>,
    pub max: Option<toml::Value>,
    pub step: Option<toml::Value>,
    pub choices: Option<Vec<toml::Value>>,
    pub subset: Option<Vec<toml::Value>>,
}

/// At most this many knobs, choices or subset items: a page a person can read.
const MAX_ENTRIES: usize = 64;

/// One control of the playground.
#[derive(Debug, Clone, PartialEq)]
pub struct Knob {
    /// The dotted key it sets (`backoff.cap`, `faults[0].end`).
    pub key: String,
    /// What the page calls it (the key unless `label` is given).
    pub label: String,
    /// The values it offers.
    pub control: Control,
    /// The scenario's own value, as the knob's text ([`Knob::text_of`]).
    pub value: String,
}

/// The values a knob offers.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// A whole number from `min` to `max`.
    Integer {
        /// The lowest value.
        min: i64,
        /// The highest value.
        max: i64,
        /// What the control moves by.
        step: i64,
    },
    /// A number from `min` to `max`.
    Number {
        /// The lowest value.
        min: f64,
        /// The highest value.
        max: f64,
        /// What the control moves by.
        step: f64,
    },
    /// A duration from `min` to `max`.
    Duration {
        /// The lowest value.
        min: SimDuration,
        /// The highest value.
        max: SimDuration,
        /// What the control moves by.
        step: SimDuration,
    },
    /// One of these values.
    Choice(Vec<Value>),
    /// A non-empty subset of these entries, in this order (strings, or tables with a `name`:
    /// a strategy of `backoff.strategies` is either).
    Subset(Vec<Value>),
}

impl Knob {
    /// Checks a value's text against the knob; returns the `KEY=VALUE` of `--set` that sets
    /// it. The error names the key, the value and what is allowed.
    pub fn assignment(&self, text: &str) -> Result<String> {
        let refuse = |allowed: String| Error::invalid(&self.key, crate::text::shown(text), allowed);
        let value = match &self.control {
            Control::Integer { min, max, .. } => {
                let allowed = || format!("a whole number from {min} to {max}");
                let n: i64 = text.trim().parse().map_err(|_| refuse(allowed()))?;
                if n < *min || n > *max {
                    return Err(refuse(allowed()));
                }
                n.to_string()
            }
            Control::Number { min, max, .. } => {
                let allowed = || format!("a number from {min} to {max}");
                let x: f64 = text.trim().parse().map_err(|_| refuse(allowed()))?;
                if !(x >= *min && x <= *max) {
                    return Err(refuse(allowed()));
                }
                format!("{x:?}")
            }
            Control::Duration { min, max, .. } => {
                let allowed = || format!("a duration from {min} to {max}");
                let d: SimDuration = text.trim().parse().map_err(|_| refuse(allowed()))?;
                if d < *min || d > *max {
                    return Err(refuse(allowed()));
                }
                d.to_string()
            }
            Control::Choice(choices) => {
                let chosen = choices.iter().find(|c| choice_text(c) == text.trim());
                let allowed = || {
                    let all: Vec<String> = choices.iter().map(choice_text).collect();
                    format!("one of {}", all.join(", "))
                };
                set_text(chosen.ok_or_else(|| refuse(allowed()))?)
            }
            Control::Subset(items) => {
                let allowed = || {
                    let names: Vec<String> = items.iter().map(entry_name).collect();
                    format!(
                        "one or more of {}, separated by commas, each once",
                        names.join(", ")
                    )
                };
                let names: Vec<&str> = text.split(',').map(str::trim).collect();
                let known = names
                    .iter()
                    .all(|n| items.iter().any(|i| entry_name(i) == *n));
                let once = (names.iter().enumerate()).all(|(i, n)| !names[..i].contains(n));
                if text.trim().is_empty() || !known || !once {
                    return Err(refuse(allowed()));
                }
                let chosen = (items.iter())
                    .filter(|i| names.contains(&entry_name(i).as_str()))
                    .cloned()
                    .collect();
                Value::Array(chosen).to_string()
            }
        };
        Ok(format!("{}={value}", self.key))
    }

    /// A value of the knob's key as the knob's text: the scenario's value shown on the page.
    fn text_of(&self, value: &Value, strategies: &[String]) -> Option<String> {
        match (&self.control, value) {
            (Control::Integer { .. }, Value::Integer(n)) => Some(n.to_string()),
            (Control::Number { .. }, Value::Float(x)) => Some(format!("{x:?}")),
            (Control::Number { .. }, Value::Integer(n)) => Some(format!("{:?}", *n as f64)),
            (Control::Duration { .. }, Value::String(s)) => {
                s.parse::<SimDuration>().ok().map(|d| d.to_string())
            }
            (Control::Choice(_), v) => Some(choice_text(v)),
            (Control::Subset(items), _) => {
                let on: Vec<String> = (items.iter().map(entry_name))
                    .filter(|n| strategies.contains(n))
                    .collect();
                Some(on.join(","))
            }
            _ => None,
        }
    }

    /// The range widened to hold the scenario's own value, so that the page shows it.
    fn widen_to(&mut self, text: &str) {
        match &mut self.control {
            Control::Integer { min, max, .. } => {
                if let Ok(n) = text.parse::<i64>() {
                    (*min, *max) = ((*min).min(n), (*max).max(n));
                }
            }
            Control::Number { min, max, .. } => {
                if let Ok(x) = text.parse::<f64>() {
                    (*min, *max) = (min.min(x), max.max(x));
                }
            }
            Control::Duration { min, max, .. } => {
                if let Ok(d) = text.parse::<SimDuration>() {
                    (*min, *max) = ((*min).min(d), (*max).max(d));
                }
            }
            Control::Choice(_) | Control::Subset(_) => {}
        }
    }
}

/// A choice as text: a string as written (`unlimited`), anything else as TOML (`5`,
/// `{ kind = "grpc" }`).
pub fn choice_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value as `--set` takes it back: a string bare when `--set` reads it as that string.
fn set_text(value: &Value) -> String {
    match value {
        Value::String(s) if parse_value(s) == *value && !s.contains(char::is_whitespace) => {
            s.clone()
        }
        other => other.to_string(),
    }
}

/// A subset entry's name: the string, or a table's `name` (its `preset`, else its `jitter`,
/// when it has none).
pub fn entry_name(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        // As a strategy is named: its `name`, else its preset's, else its jitter's.
        Value::Table(t) => (t.get("name"))
            .or_else(|| t.get("preset"))
            .or_else(|| t.get("jitter"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        other => other.to_string(),
    }
}

/// The value at `path` in a resolved scenario table.
fn lookup<'a>(table: &'a toml::Table, path: &KeyPath) -> Option<&'a Value> {
    let mut steps = path.0.iter();
    let Some(Step::Key(first)) = steps.next() else {
        return None;
    };
    let mut current = table.get(first)?;
    for step in steps {
        current = match (step, current) {
            (Step::Key(k), Value::Table(t)) => t.get(k)?,
            (Step::Index(i), Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(current)
}

/// A step for a range of `span`: a power of ten near a hundredth of it, at least `least`.
fn step_of(span: f64, least: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return least;
    }
    10f64.powf((span / 100.0).log10().floor()).max(least)
}

impl ScenarioDoc {
    /// The knobs of `[playground]`, each checked: its key takes every value it offers (the
    /// range's ends, every choice, every subset entry) in this scenario; without the table,
    /// the default set ([`ScenarioDoc::default_knobs`]). Each range is widened to hold the
    /// scenario's own value.
    pub fn knobs(&self) -> Result<Vec<Knob>> {
        let raw: ScenarioFile = toml::Value::Table(self.table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| self.structure_error(&self.table, e, None))?;
        let base = self.base()?;
        let resolved = base.to_toml_table(self.sweep_table());
        let names: Vec<String> = base.strategies.iter().map(|s| s.name.clone()).collect();
        let Some(files) = raw.playground.and_then(|p| p.knobs) else {
            return Ok(self.default_knobs(&resolved, &names));
        };
        if files.len() > MAX_ENTRIES {
            return Err(self.knob_error(None, "", format!("at most {MAX_ENTRIES} knobs")));
        }
        let mut knobs = Vec::with_capacity(files.len());
        for (i, file) in files.iter().enumerate() {
            let mut knob = self.knob(i, file)?;
            let path = KeyPath::parse(&knob.key).map_err(|m| self.knob_error(Some(i), "key", m))?;
            if let Some(swept) = self.swept(&path) {
                let m = format!(
                    "`{}` is set by the scenario's sweep (`sweep.\"{swept}\"`), which would override the knob at every point; knob another key or drop it from the sweep",
                    knob.key
                );
                return Err(self.knob_error(Some(i), "key", m));
            }
            let value = match lookup(&resolved, &path) {
                Some(v) => knob.text_of(v, &names),
                None if matches!(knob.control, Control::Choice(_)) => None,
                None => {
                    let m = format!(
                        "`{}` has no value in this scenario (a key of its resolved file, `jitterlab check`)",
                        knob.key
                    );
                    return Err(self.knob_error(Some(i), "key", m));
                }
            };
            knob.value = value.unwrap_or_default();
            knob.widen_to(&knob.value.clone());
            self.try_knob(i, &knob)?;
            knobs.push(knob);
        }
        Ok(knobs)
    }

    /// A `[playground]` entry read by its kind: `min` and `max` (with `step`), `choices`, or
    /// `subset`.
    fn knob(&self, i: usize, file: &KnobFile) -> Result<Knob> {
        let key = file.key.clone().ok_or_else(|| {
            self.knob_error(
                Some(i),
                "key",
                "a knob needs a `key` (a dotted key, as --set takes)".into(),
            )
        })?;
        let control = match (&file.min, &file.max, &file.choices, &file.subset) {
            (Some(min), Some(max), None, None) => self.range(i, min, max, file.step.as_ref())?,
            (None, None, Some(choices), None) if !choices.is_empty() => {
                if file.step.is_some() {
                    return Err(self.knob_error(
                        Some(i),
                        "step",
                        "only a range takes a step".into(),
                    ));
                }
                self.entries(i, "choices", choices)?;
                Control::Choice(choices.clone())
            }
            (None, None, None, Some(items)) if !items.is_empty() => {
                self.entries(i, "subset", items)?;
                let nameless = items.iter().position(|v| entry_name(v).is_empty());
                if let Some(j) = nameless {
                    let m = "a string, or a table with a `name`, `preset` or `jitter`".to_string();
                    return Err(self.knob_error(Some(i), &format!("subset[{j}]"), m));
                }
                Control::Subset(items.clone())
            }
            _ => {
                let m = "a knob has `min` and `max` (a range, with an optional `step`), or a non-empty `choices` list, or a non-empty `subset` list; one of the three".to_string();
                return Err(self.knob_error(Some(i), "", m));
            }
        };
        Ok(Knob {
            label: file.label.clone().unwrap_or_else(|| key.clone()),
            key,
            control,
            value: String::new(),
        })
    }

    /// A range knob: whole numbers, numbers or durations, by the type of `min` and `max`.
    fn range(&self, i: usize, min: &Value, max: &Value, step: Option<&Value>) -> Result<Control> {
        let bad = |field: &str, m: &str| self.knob_error(Some(i), field, m.to_string());
        match (min, max) {
            (Value::Integer(lo), Value::Integer(hi)) => integer_range(*lo, *hi, step, bad),
            (Value::String(lo), Value::String(hi)) => duration_range(lo, hi, step, bad),
            (lo, hi) => number_range(lo, hi, step, bad),
        }
    }

    /// A list of choices or subset entries: at most [`MAX_ENTRIES`], each once.
    fn entries(&self, i: usize, field: &str, values: &[Value]) -> Result<()> {
        if values.len() > MAX_ENTRIES {
            return Err(self.knob_error(Some(i), field, format!("at most {MAX_ENTRIES} entries")));
        }
        let text = |v: &Value| match field {
            "subset" => entry_name(v),
            _ => choice_text(v),
        };
        for (j, v) in values.iter().enumerate() {
            if values[..j].iter().any(|w| text(w) == text(v)) {
                let m = format!("`{}` is there twice", text(v));
                return Err(self.knob_error(Some(i), &format!("{field}[{j}]"), m));
            }
        }
        Ok(())
    }

    /// Every value the knob offers is one this scenario takes: the range's ends, each choice,
    /// the whole subset (each alone would be as many runs again).
    fn try_knob(&self, i: usize, knob: &Knob) -> Result<()> {
        let texts: Vec<String> = match &knob.control {
            Control::Integer { min, max, .. } => vec![min.to_string(), max.to_string()],
            Control::Number { min, max, .. } => vec![min.to_string(), max.to_string()],
            Control::Duration { min, max, .. } => vec![min.to_string(), max.to_string()],
            Control::Choice(c) => c.iter().map(choice_text).collect(),
            Control::Subset(items) => {
                vec![items.iter().map(entry_name).collect::<Vec<_>>().join(",")]
            }
        };
        for text in texts {
            let mut doc = self.clone();
            let tried = knob
                .assignment(&text)
                .and_then(|set| doc.set(&set))
                .and_then(|()| doc.base().map(drop));
            if let Err(e) = tried {
                let m = format!("the value {text} is refused: {e}");
                return Err(self.knob_error(Some(i), "", m));
            }
        }
        Ok(())
    }

    /// The key of `[sweep]` that sets `path` (or a part of it, or a table that holds it).
    fn swept(&self, path: &KeyPath) -> Option<String> {
        let table = self.sweep_table()?.as_table()?;
        table.keys().find_map(|key| {
            let swept = KeyPath::parse(key).ok()?;
            let n = swept.0.len().min(path.0.len());
            (swept.0[..n] == path.0[..n]).then(|| key.clone())
        })
    }

    /// An error about `playground.knobs[i].field`, placed at its line in the file.
    fn knob_error(&self, i: Option<usize>, field: &str, message: String) -> Error {
        let mut path = KeyPath(vec![
            Step::Key("playground".into()),
            Step::Key("knobs".into()),
        ]);
        if let Some(i) = i {
            path = path.index(i);
        }
        let mut shown = path.clone();
        for part in field.split('.').filter(|f| !f.is_empty()) {
            if let Ok(KeyPath(steps)) = KeyPath::parse(part) {
                shown.0.extend(steps);
            }
        }
        self.place(&path, format!("`{shown}`: {message}"), None)
    }

    /// The knobs of a scenario without `[playground]`: what it has of its clients or rate,
    /// workers and service time, first fault's end, base, cap, multiplier, attempt limit, and
    /// which of its strategies (and of the four default kinds) run; none on a key its sweep
    /// sets (the sweep would override it).
    fn default_knobs(&self, resolved: &toml::Table, strategies: &[String]) -> Vec<Knob> {
        let get = |key: &str| {
            KeyPath::parse(key)
                .ok()
                .and_then(|p| lookup(resolved, &p).cloned())
        };
        let mut knobs: Vec<(&str, &str, Control)> = Vec::new();
        knobs.extend(load_knobs(&get));
        knobs.extend(backoff_knobs(&get));
        // Each kept only when its key is not swept and its whole range is one this scenario
        // takes.
        knobs
            .into_iter()
            .filter_map(|(key, label, control)| {
                let path = KeyPath::parse(key).ok()?;
                if self.swept(&path).is_some() {
                    return None;
                }
                let mut k = Knob {
                    key: key.into(),
                    label: label.into(),
                    control,
                    value: String::new(),
                };
                k.value = k.text_of(lookup(resolved, &path)?, strategies)?;
                k.widen_to(&k.value.clone());
                self.try_knob(0, &k).ok().map(|()| k)
            })
            .collect()
    }
}

const ORDER: &str = "`min` below `max`";
const POSITIVE: &str = "a step above 0";

/// A range of whole numbers; without a step, one of [`step_of`] (at least 1).
fn integer_range(
    lo: i64,
    hi: i64,
    step: Option<&Value>,
    bad: impl Fn(&str, &str) -> Error,
) -> Result<Control> {
    let step = match step {
        None => step_of((hi - lo) as f64, 1.0) as i64,
        Some(Value::Integer(s)) if *s > 0 => *s,
        Some(_) => return Err(bad("step", "a whole number above 0")),
    };
    if lo >= hi {
        return Err(bad("max", ORDER));
    }
    Ok(Control::Integer {
        min: lo,
        max: hi,
        step,
    })
}

/// A range of durations (`"250ms"`, the step one too); without a step, one of [`step_of`]
/// (at least 1 ms).
fn duration_range(
    lo: &str,
    hi: &str,
    step: Option<&Value>,
    bad: impl Fn(&str, &str) -> Error,
) -> Result<Control> {
    let duration = |field: &str, text: &str| {
        text.parse::<SimDuration>().map_err(|_| {
            bad(
                field,
                "a duration (\"250ms\"), as min and max are durations",
            )
        })
    };
    let (lo, hi) = (duration("min", lo)?, duration("max", hi)?);
    let step = match step {
        None => SimDuration::from_nanos(step_of(
            (hi.as_nanos() - lo.as_nanos().min(hi.as_nanos())) as f64,
            1e6,
        ) as u64),
        Some(Value::String(s)) => duration("step", s)?,
        Some(_) => return Err(bad("step", "a duration, as min and max are")),
    };
    if lo >= hi {
        return Err(bad("max", ORDER));
    }
    if step.as_nanos() == 0 {
        return Err(bad("step", POSITIVE));
    }
    Ok(Control::Duration {
        min: lo,
        max: hi,
        step,
    })
}

/// A range of numbers, each end whole or not (a duration beside a number is refused);
/// without a step, one of [`step_of`].
fn number_range(
    lo: &Value,
    hi: &Value,
    step: Option<&Value>,
    bad: impl Fn(&str, &str) -> Error,
) -> Result<Control> {
    let number = |field: &str, v: &Value| match v {
        Value::Integer(n) => Ok(*n as f64),
        Value::Float(x) if x.is_finite() => Ok(*x),
        _ => Err(bad(
            field,
            "whole numbers, numbers or durations (\"250ms\"), the same for min and max",
        )),
    };
    let (lo, hi) = (number("min", lo)?, number("max", hi)?);
    let step = match step {
        None => step_of(hi - lo, 0.0),
        Some(v) => number("step", v)?,
    };
    if lo >= hi {
        return Err(bad("max", ORDER));
    }
    if step.is_nan() || step <= 0.0 {
        return Err(bad("step", POSITIVE));
    }
    Ok(Control::Number {
        min: lo,
        max: hi,
        step,
    })
}

/// A duration of the resolved scenario.
fn duration_of(value: Option<Value>) -> Option<u64> {
    match value {
        Some(Value::String(s)) => s.parse::<SimDuration>().ok().map(|d| d.as_nanos()),
        _ => None,
    }
}

/// A whole-number range around `v`: a tenth of it to four times it, at most `at_most`.
fn integer_around(v: i64, at_most: i64) -> Control {
    let (min, max) = ((v / 10).max(1), v.saturating_mul(4).min(at_most).max(2));
    Control::Integer {
        min,
        max,
        step: step_of(max.saturating_sub(min) as f64, 1.0) as i64,
    }
}

/// A duration range from `lo` to `hi` nanoseconds.
fn span(lo: u64, hi: u64) -> Control {
    Control::Duration {
        min: SimDuration::from_nanos(lo),
        max: SimDuration::from_nanos(hi),
        step: SimDuration::from_nanos(step_of(hi.saturating_sub(lo) as f64, 1e6) as u64),
    }
}

/// The default knobs of the load and the fault: clients or rate, workers, service time, the
/// first fault's end.
fn load_knobs(get: &dyn Fn(&str) -> Option<Value>) -> Vec<(&'static str, &'static str, Control)> {
    let mut knobs = Vec::new();
    if let Some(Value::Integer(v)) = get("workload.clients") {
        knobs.push(("workload.clients", "clients", integer_around(v, 10_000_000)));
    }
    if let Some(Value::Float(v)) = get("workload.rate") {
        let (min, max) = (v / 10.0, v * 4.0);
        let step = step_of(max - min, 0.0);
        let control = Control::Number { min, max, step };
        knobs.push(("workload.rate", "rate (requests/s)", control));
    }
    if let Some(Value::Integer(v)) = get("server.workers") {
        knobs.push(("server.workers", "workers", integer_around(v, 10_000_000)));
    }
    if let Some(v) = duration_of(get("server.service.mean")).filter(|v| *v > 0) {
        let control = span(v / 10, v.saturating_mul(4));
        knobs.push(("server.service.mean", "service time (mean)", control));
    }
    let fault = (
        duration_of(get("faults[0].start")),
        duration_of(get("faults[0].end")),
    );
    if let (Some(start), Some(end)) = fault {
        let length = end.saturating_sub(start);
        if length > 0 {
            let lo = start.saturating_add((length / 10).max(1_000_000));
            let hi = start.saturating_add(length.saturating_mul(4));
            knobs.push(("faults[0].end", "first fault ends at", span(lo, hi)));
        }
    }
    knobs
}

/// The default knobs of the backoff: base, cap, multiplier, attempt limit, strategies.
fn backoff_knobs(
    get: &dyn Fn(&str) -> Option<Value>,
) -> Vec<(&'static str, &'static str, Control)> {
    let mut knobs = Vec::new();
    for (key, label) in [("backoff.base", "base"), ("backoff.cap", "cap")] {
        if let Some(v) = duration_of(get(key)).filter(|v| *v >= 10) {
            knobs.push((key, label, span(v / 10, v.saturating_mul(10))));
        }
    }
    if let Some(Value::Float(_)) = get("backoff.multiplier") {
        let number = Control::Number {
            min: 1.0,
            max: 4.0,
            step: 0.1,
        };
        knobs.push(("backoff.multiplier", "multiplier", number));
    }
    if let Some(v) = get("client.max_attempts") {
        let mut choices: Vec<Value> = [1, 2, 3, 4, 5, 10].map(Value::Integer).to_vec();
        choices.push(Value::String("unlimited".into()));
        if !choices.iter().any(|c| choice_text(c) == choice_text(&v)) {
            choices.push(v);
        }
        knobs.push((
            "client.max_attempts",
            "max attempts",
            Control::Choice(choices),
        ));
    }
    if let Some(Value::Array(own)) = get("backoff.strategies") {
        let mut items = own;
        for kind in DEFAULT_STRATEGIES {
            if !items.iter().any(|i| entry_name(i) == kind.name()) {
                items.push(Value::String(kind.name().into()));
            }
        }
        if items.len() <= MAX_ENTRIES {
            knobs.push(("backoff.strategies", "strategies", Control::Subset(items)));
        }
    }
    knobs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::library;

    fn keys(knobs: &[Knob]) -> Vec<&str> {
        knobs.iter().map(|k| k.key.as_str()).collect()
    }

    #[test]
    fn default_knobs_of_a_scenario_without_playground() {
        let doc = ScenarioDoc::parse(
            "[workload]\nkind = \"burst\"\nclients = 500\n[backoff]\nbase = \"100ms\"\ncap = \"5s\"\nmultiplier = 2.0\nstrategies = [\"full\"]\n[[faults]]\nkind = \"outage\"\nstart = \"1s\"\nend = \"6s\"\n",
            "t.toml",
            "t",
        )
        .unwrap();
        let knobs = doc.knobs().unwrap();
        for key in [
            "workload.clients",
            "faults[0].end",
            "backoff.base",
            "backoff.cap",
            "backoff.multiplier",
            "client.max_attempts",
            "backoff.strategies",
        ] {
            assert!(keys(&knobs).contains(&key), "{key} in {:?}", keys(&knobs));
        }
        let cap = knobs.iter().find(|k| k.key == "backoff.cap").unwrap();
        assert_eq!(cap.value, "5s");
        let Control::Duration { min, max, .. } = cap.control else {
            panic!("{:?}", cap.control)
        };
        assert_eq!(
            (min.to_string(), max.to_string()),
            ("500ms".into(), "50s".into())
        );
        let clients = knobs.iter().find(|k| k.key == "workload.clients").unwrap();
        assert!(matches!(
            clients.control,
            Control::Integer {
                min: 50,
                max: 2000,
                ..
            }
        ));
        let Control::Subset(items) = &knobs.last().unwrap().control else {
            panic!("strategies last")
        };
        assert_eq!(
            items.len(),
            4,
            "its own and the four default kinds: {items:?}"
        );
    }

    #[test]
    fn default_ranges_of_huge_durations_do_not_wrap() {
        // Ten times 540h is past u64 nanoseconds: wrapped, the cap's range would end below
        // the cap itself.
        for cap in ["540h", "2000000h"] {
            let doc = ScenarioDoc::parse(
                &format!("[backoff]\ncap = \"{cap}\"\n[[faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"{cap}\"\n[server]\nservice = {{ dist = \"exponential\", mean = \"{cap}\" }}\n"),
                "t.toml",
                "t",
            )
            .unwrap();
            let knobs = doc.knobs().unwrap();
            for k in &knobs {
                if let Control::Duration { min, max, .. } = k.control {
                    assert!(min < max, "{}: {min} to {max}", k.key);
                    if k.key == "backoff.cap" {
                        let v: SimDuration = k.value.parse().unwrap();
                        assert!(max > v, "{cap}: the cap's range ends at {max}");
                    }
                }
            }
        }
    }

    #[test]
    fn default_ranges_saturate_where_ten_times_would_wrap() {
        // 540h is 1.944e18 ns: ten times it wraps past u64 to 9.9e17, below the value.
        let value = "540h".parse::<SimDuration>().unwrap();
        let get = |key: &str| (key == "backoff.cap").then(|| Value::String("540h".into()));
        let knobs = backoff_knobs(&get);
        let Some(("backoff.cap", _, Control::Duration { min, max, .. })) = knobs.first() else {
            panic!("a cap knob: {knobs:?}")
        };
        assert!(*min < value && *max > value, "{min} to {max}");
        let get = |key: &str| match key {
            "faults[0].start" => Some(Value::String("0s".into())),
            "faults[0].end" | "server.service.mean" => Some(Value::String("2000000h".into())),
            _ => None,
        };
        for (key, _, control) in load_knobs(&get) {
            let Control::Duration { min, max, .. } = control else {
                panic!("{key}")
            };
            assert!(min < max, "{key}: {min} to {max}");
        }
    }

    #[test]
    fn swept_keys_get_no_knob() {
        let doc = library::get("choose-base-and-cap").unwrap().doc();
        let knobs = doc.knobs().unwrap();
        assert!(!keys(&knobs).contains(&"backoff.cap"), "{:?}", keys(&knobs));
        assert!(
            !keys(&knobs).contains(&"backoff.base"),
            "{:?}",
            keys(&knobs)
        );
        assert!(keys(&knobs).contains(&"backoff.multiplier"));
        // Asked for by name, a swept key is refused, naming the sweep.
        let mut doc = doc;
        doc.set(r#"playground.knobs=[{ key = "backoff.cap", min = "1s", max = "9s" }]"#)
            .unwrap();
        let e = doc.knobs().unwrap_err().to_string();
        assert!(e.contains("sweep.\"backoff.cap\""), "{e}");
    }
}
