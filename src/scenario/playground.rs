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

use toml::Value;

use super::file::{KnobFile, ScenarioFile};
use super::locate::{KeyPath, Step};
use super::{ScenarioDoc, parse_value};
use crate::error::{Error, Result};
use crate::scenario::DEFAULT_STRATEGIES;
use crate::time::SimDuration;

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

/// A subset entry's name: the string, or a table's `name` (its `jitter` when it has none).
pub fn entry_name(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Table(t) => (t.get("name").or_else(|| t.get("jitter")))
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
                    let m = "a string, or a table with a `name`".to_string();
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
        let order = "`min` below `max`";
        let positive = "a step above 0";
        Ok(match (min, max) {
            (Value::Integer(lo), Value::Integer(hi)) => {
                let step = match step {
                    None => step_of((hi - lo) as f64, 1.0) as i64,
                    Some(Value::Integer(s)) if *s > 0 => *s,
                    Some(_) => return Err(bad("step", "a whole number above 0")),
                };
                if lo >= hi {
                    return Err(bad("max", order));
                }
                Control::Integer {
                    min: *lo,
                    max: *hi,
                    step,
                }
            }
            (Value::String(lo), Value::String(hi)) => {
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
                    return Err(bad("max", order));
                }
                if step.as_nanos() == 0 {
                    return Err(bad("step", positive));
                }
                Control::Duration {
                    min: lo,
                    max: hi,
                    step,
                }
            }
            (lo, hi) => {
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
                    return Err(bad("max", order));
                }
                if step.is_nan() || step <= 0.0 {
                    return Err(bad("step", positive));
                }
                Control::Number {
                    min: lo,
                    max: hi,
                    step,
                }
            }
        })
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
    /// which of its strategies (and of the four default kinds) run.
    fn default_knobs(&self, resolved: &toml::Table, strategies: &[String]) -> Vec<Knob> {
        let get = |key: &str| {
            KeyPath::parse(key)
                .ok()
                .and_then(|p| lookup(resolved, &p).cloned())
        };
        let duration = |key: &str| match get(key) {
            Some(Value::String(s)) => s.parse::<SimDuration>().ok(),
            _ => None,
        };
        let mut knobs = Vec::new();
        let mut push = |key: &str, label: &str, control: Control| {
            knobs.push(Knob {
                key: key.into(),
                label: label.into(),
                control,
                value: String::new(),
            })
        };
        let integer = |v: i64, at_most: i64| {
            let (min, max) = ((v / 10).max(1), (v.saturating_mul(4)).min(at_most).max(2));
            Control::Integer {
                min,
                max,
                step: step_of((max - min) as f64, 1.0) as i64,
            }
        };
        let span = |lo: u64, hi: u64| Control::Duration {
            min: SimDuration::from_nanos(lo),
            max: SimDuration::from_nanos(hi),
            step: SimDuration::from_nanos(step_of(hi.saturating_sub(lo) as f64, 1e6) as u64),
        };
        if let Some(Value::Integer(v)) = get("workload.clients") {
            push("workload.clients", "clients", integer(v, 10_000_000));
        }
        if let Some(Value::Float(v)) = get("workload.rate") {
            let (min, max) = (v / 10.0, v * 4.0);
            let step = step_of(max - min, 0.0);
            push(
                "workload.rate",
                "rate (requests/s)",
                Control::Number { min, max, step },
            );
        }
        if let Some(Value::Integer(v)) = get("server.workers") {
            push("server.workers", "workers", integer(v, 10_000_000));
        }
        if let Some(d) = duration("server.service.mean").filter(|d| d.as_nanos() > 0) {
            let v = d.as_nanos();
            push(
                "server.service.mean",
                "service time (mean)",
                span(v / 10, v * 4),
            );
        }
        if let (Some(start), Some(end)) = (duration("faults[0].start"), duration("faults[0].end")) {
            let (s, length) = (
                start.as_nanos(),
                end.as_nanos().saturating_sub(start.as_nanos()),
            );
            if length > 0 {
                let lo = s + (length / 10).max(1_000_000);
                push(
                    "faults[0].end",
                    "first fault ends at",
                    span(lo, s + length * 4),
                );
            }
        }
        for (key, label) in [("backoff.base", "base"), ("backoff.cap", "cap")] {
            if let Some(d) = duration(key).filter(|d| d.as_nanos() >= 10) {
                let v = d.as_nanos();
                push(key, label, span(v / 10, v * 10));
            }
        }
        if let Some(Value::Float(_)) = get("backoff.multiplier") {
            let number = Control::Number {
                min: 1.0,
                max: 4.0,
                step: 0.1,
            };
            push("backoff.multiplier", "multiplier", number);
        }
        if let Some(v) = get("client.max_attempts") {
            let mut choices: Vec<Value> = [1, 2, 3, 4, 5, 10].map(Value::Integer).to_vec();
            choices.push(Value::String("unlimited".into()));
            if !choices.iter().any(|c| choice_text(c) == choice_text(&v)) {
                choices.push(v);
            }
            push(
                "client.max_attempts",
                "max attempts",
                Control::Choice(choices),
            );
        }
        if let Some(Value::Array(own)) = get("backoff.strategies") {
            let mut items = own;
            for kind in DEFAULT_STRATEGIES {
                if !items.iter().any(|i| entry_name(i) == kind.name()) {
                    items.push(Value::String(kind.name().into()));
                }
            }
            if items.len() <= MAX_ENTRIES {
                push("backoff.strategies", "strategies", Control::Subset(items));
            }
        }
        // Each kept only when its whole range is one this scenario takes.
        knobs
            .into_iter()
            .filter_map(|mut k| {
                let path = KeyPath::parse(&k.key).ok()?;
                k.value = match lookup(resolved, &path) {
                    Some(v) => k.text_of(v, strategies)?,
                    None => return None,
                };
                k.widen_to(&k.value.clone());
                self.try_knob(0, &k).ok().map(|()| k)
            })
            .collect()
    }
}
