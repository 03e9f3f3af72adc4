//! Sweep grids: dotted keys with lists of values, or ranges `{ from, to, step }` of numbers or
//! durations, expanded into points in the order written (the first key varies slowest).

use super::locate::KeyPath;
use super::roles::{self, Role};
use crate::error::{Error, Result};
use crate::time::SimDuration;

/// Most points a grid may expand into.
pub const MAX_SWEEP_POINTS: usize = 100_000;

/// A checked sweep grid.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sweep {
    /// `(dotted key, values)` in the order written.
    pub axes: Vec<(String, Vec<toml::Value>)>,
    /// Each key's role: the user's choice or the world's ([`roles`]), in the order of `axes`.
    pub roles: Vec<Role>,
}

impl Sweep {
    /// Reads a `[sweep]` table (absent: no sweep).
    pub fn from_table(value: Option<&toml::Value>) -> Result<Sweep> {
        let Some(value) = value else {
            return Ok(Sweep::default());
        };
        let table = value
            .as_table()
            .ok_or_else(|| Error::invalid("sweep", value, "a table of dotted keys to lists"))?;
        let mut axes = Vec::with_capacity(table.len());
        let mut points: usize = 1;
        for (key, spec) in table {
            if key == roles::WORLD || key == roles::CHOICE {
                continue; // the roles of the keys, not a key
            }
            let name = format!("sweep.\"{key}\"");
            if let Err(why) = KeyPath::parse(key) {
                return Err(Error::invalid(
                    name,
                    format!("{key:?}"),
                    format!("a key path such as \"backoff.cap\" or \"faults[0].end\" ({why})"),
                ));
            }
            if key == "seed" || key == "replications" || key.starts_with("sweep") || key == "name" {
                return Err(Error::invalid(
                    name,
                    key,
                    "a model key (workload, server, network, client, backoff, faults, output, horizon)",
                ));
            }
            let values = match spec {
                toml::Value::Array(items) if !items.is_empty() => items.clone(),
                toml::Value::Table(range) => expand_range(&name, range)?,
                other => {
                    return Err(Error::invalid(
                        name,
                        other,
                        "a non-empty list of values, or { from, to, step }",
                    ));
                }
            };
            points = points.saturating_mul(values.len());
            axes.push((key.clone(), values));
        }
        if points > MAX_SWEEP_POINTS {
            return Err(Error::invalid(
                "sweep",
                format!("{points} points"),
                format!("at most {MAX_SWEEP_POINTS} points"),
            ));
        }
        let keys: Vec<String> = axes.iter().map(|(k, _)| k.clone()).collect();
        let roles = roles::roles(&keys, table.get(roles::WORLD), table.get(roles::CHOICE))?;
        Ok(Sweep { axes, roles })
    }

    /// The swept keys, in order.
    pub fn keys(&self) -> Vec<String> {
        self.axes.iter().map(|(k, _)| k.clone()).collect()
    }

    /// True when there is no sweep (one point).
    pub fn is_empty(&self) -> bool {
        self.axes.is_empty()
    }

    /// The points of the sweep (1 without one), known before any is checked.
    pub fn points(&self) -> usize {
        self.axes.iter().map(|(_, values)| values.len()).product()
    }

    /// The index of each key's value in its list at combination `index` (first key slowest).
    pub fn coordinates(&self, index: usize) -> Vec<usize> {
        let mut rest = index;
        let mut out: Vec<usize> = self
            .axes
            .iter()
            .rev()
            .map(|(_, values)| {
                let i = rest % values.len();
                rest /= values.len();
                i
            })
            .collect();
        out.reverse();
        out
    }

    /// Every combination, first key slowest; one empty combination without a sweep.
    pub fn combinations(&self) -> Vec<Vec<(String, toml::Value)>> {
        let mut out: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
        for (key, values) in &self.axes {
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    values.iter().map(move |v| {
                        let mut p = prefix.clone();
                        p.push((key.clone(), v.clone()));
                        p
                    })
                })
                .collect();
        }
        out
    }
}

/// Writes a sweep value as it appears in CSV columns: strings bare, numbers as written.
pub fn format_value(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        toml::Value::Float(f) => {
            let s = f.to_string();
            if s.contains(['.', 'e', 'E']) || !f.is_finite() {
                s
            } else {
                format!("{s}.0")
            }
        }
        other => other.to_string(),
    }
}

fn expand_range(key: &str, range: &toml::Table) -> Result<Vec<toml::Value>> {
    let allowed = "{ from, to, step } with numbers, or durations such as \"10ms\"";
    for k in range.keys() {
        if !matches!(k.as_str(), "from" | "to" | "step") {
            return Err(Error::invalid(format!("{key}.{k}"), "given", allowed));
        }
    }
    let get = |k: &str| {
        range
            .get(k)
            .ok_or_else(|| Error::invalid(format!("{key}.{k}"), "missing", allowed))
    };
    let (from, to, step) = (get("from")?, get("to")?, get("step")?);
    match (from, to, step) {
        (toml::Value::Integer(a), toml::Value::Integer(b), toml::Value::Integer(s)) => {
            ordered(key, a, b, *s > 0, s)?;
            let n = ((b - a) / s + 1) as usize;
            check_len(key, n)?;
            Ok((0..n as i64)
                .map(|i| toml::Value::Integer(a + i * s))
                .collect())
        }
        (toml::Value::String(a), toml::Value::String(b), toml::Value::String(s)) => {
            let duration = |k: &str, text: &str| {
                text.parse::<SimDuration>()
                    .map_err(|e| Error::for_key(format!("{key}.{k}"), e))
            };
            let (a, b, s) = (
                duration("from", a)?,
                duration("to", b)?,
                duration("step", s)?,
            );
            ordered(key, a, b, s > SimDuration::ZERO, s)?;
            let (a, b, s) = (a.as_nanos(), b.as_nanos(), s.as_nanos());
            let n = ((b - a) / s + 1) as usize;
            check_len(key, n)?;
            Ok((0..n as u64)
                .map(|i| toml::Value::String(SimDuration(a + i * s).to_string()))
                .collect())
        }
        _ => {
            let num = |v: &toml::Value, k: &str| {
                v.as_float()
                    .or_else(|| v.as_integer().map(|i| i as f64))
                    .ok_or_else(|| Error::invalid(format!("{key}.{k}"), v, allowed))
            };
            let (a, b, s) = (num(from, "from")?, num(to, "to")?, num(step, "step")?);
            for (k, v) in [("from", a), ("to", b), ("step", s)] {
                if !v.is_finite() {
                    return Err(Error::invalid(format!("{key}.{k}"), v, "a finite number"));
                }
            }
            ordered(key, a, b, s > 0.0, s)?;
            // A small tolerance so that 0.1 .. 0.5 step 0.1 includes 0.5.
            let n = ((b - a) / s + 1e-9).floor() as usize + 1;
            check_len(key, n)?;
            Ok((0..n)
                .map(|i| toml::Value::Float(round12(a + i as f64 * s)))
                .collect())
        }
    }
}

/// Refuses a range whose `to` is below its `from`, or whose step is not above 0.
fn ordered<T: PartialOrd + std::fmt::Display>(
    key: &str,
    from: T,
    to: T,
    step_positive: bool,
    step: T,
) -> Result<()> {
    if to < from {
        return Err(Error::invalid(
            format!("{key}.to"),
            to,
            format!("a value at least from ({from})"),
        ));
    }
    if !step_positive {
        return Err(Error::invalid(
            format!("{key}.step"),
            step,
            "a step above 0",
        ));
    }
    Ok(())
}

/// Rounds away binary noise (0.30000000000000004 → 0.3) so values print as written.
fn round12(x: f64) -> f64 {
    let scale = 1e12;
    (x * scale).round() / scale
}

fn check_len(key: &str, n: usize) -> Result<()> {
    if n > MAX_SWEEP_POINTS {
        return Err(Error::invalid(
            key,
            format!("{n} values"),
            format!("at most {MAX_SWEEP_POINTS} values"),
        ));
    }
    Ok(())
}
