//! The small readers and writers every table shares: durations, counts, limits, statuses,
//! scopes, outcome lists, and the `toml` values the resolved file is built from.

use toml::Value;

use crate::error::{Error, Result};
use crate::param::ParamError;
use crate::policy::RetryOn;
use crate::policy::{RetryAfterHeader, RetryOnItem};
use crate::scenario::file::CountOr;
use crate::sim::Scope;
use crate::time::{SimDuration, parse_limit};

/// Names an engine error's field by its key under `table` (`client.budget` + `capacity`).
pub fn under(table: &str) -> impl Fn(ParamError) -> Error + '_ {
    move |e| Error::for_key(format!("{table}.{}", e.field), e)
}

pub fn duration(key: &str, text: &str) -> Result<SimDuration> {
    text.parse().map_err(|e| Error::for_key(key, e))
}

/// A duration for the engine, which takes [`std::time::Duration`] (exact: every
/// [`SimDuration`] fits).
pub fn std_duration(key: &str, text: &str) -> Result<std::time::Duration> {
    duration(key, text).map(SimDuration::to_std)
}

pub fn dur(key: &str, value: &Option<String>, default: &str) -> Result<SimDuration> {
    duration(key, value.as_deref().unwrap_or(default))
}

pub fn positive_dur(key: &str, value: &Option<String>, default: &str) -> Result<SimDuration> {
    match dur(key, value, default)? {
        SimDuration::ZERO => Err(Error::invalid(key, "0ms", "a duration greater than 0")),
        d => Ok(d),
    }
}

pub fn limit(key: &str, value: &Option<String>, default: &str) -> Result<Option<SimDuration>> {
    parse_limit(value.as_deref().unwrap_or(default)).map_err(|e| Error::for_key(key, e))
}

pub fn count(key: &str, value: Option<i64>, default: i64, min: i64, max: i64) -> Result<u32> {
    let v = value.unwrap_or(default);
    if v < min || v > max {
        return Err(Error::invalid(
            key,
            v,
            format!("an integer from {min} to {max}"),
        ));
    }
    Ok(v as u32)
}

/// A count, or one of `words` meaning "no limit".
pub fn count_or(
    key: &str,
    value: &Option<CountOr>,
    default: Option<u32>,
    words: &[&str],
    min: i64,
) -> Result<Option<u32>> {
    let allowed = || format!("an integer >= {min}, or \"{}\"", words.join("\" or \""));
    match value {
        None => Ok(default),
        Some(CountOr::Count(n)) if *n >= min && *n <= u32::MAX as i64 => Ok(Some(*n as u32)),
        Some(CountOr::Count(n)) => Err(Error::invalid(key, n, allowed())),
        Some(CountOr::Word(w)) if words.contains(&w.as_str()) => Ok(None),
        Some(CountOr::Word(w)) => Err(Error::invalid(key, format!("{w:?}"), allowed())),
    }
}

pub fn status(key: &str, value: i64) -> Result<u16> {
    if (400..=599).contains(&value) {
        Ok(value as u16)
    } else {
        Err(Error::invalid(
            key,
            value,
            "an error status from 400 to 599",
        ))
    }
}

pub fn finite(key: &str, value: f64, ok: bool, allowed: &str) -> Result<f64> {
    if value.is_finite() && ok {
        Ok(value)
    } else {
        Err(Error::invalid(key, value, allowed))
    }
}

/// Refuses a key that does not belong to the chosen kind.
pub fn only_for<T>(key: &str, value: &Option<T>, kind_key: &str, kind: &str) -> Result<()> {
    match value {
        Some(_) => Err(Error::invalid(
            key,
            "given",
            format!("not used when {kind_key} = \"{kind}\"; remove it"),
        )),
        None => Ok(()),
    }
}

pub fn scope(key: &str, value: &Option<String>) -> Result<Scope> {
    scope_or(key, value, Scope::Shared)
}

pub fn scope_or(key: &str, value: &Option<String>, default: Scope) -> Result<Scope> {
    match value.as_deref().unwrap_or(default.name()) {
        "shared" => Ok(Scope::Shared),
        "client" => Ok(Scope::Client),
        other => Err(Error::invalid(
            key,
            format!("{other:?}"),
            "\"shared\" or \"client\"",
        )),
    }
}

/// The client table at `table` (`client`, or a chain's `layers[i].client`).
/// A `retry_after_header` value at `key` (default `retry-after`).
pub fn header(key: &str, value: &Option<String>) -> Result<RetryAfterHeader> {
    value
        .as_deref()
        .map_or(Ok(RetryAfterHeader::RetryAfter), str::parse)
        .map_err(|e| Error::for_key(key, e))
}

/// A list of outcomes at `key` (`retry_on`, `throttling_on`), `default` when absent.
pub fn outcome_set(
    key: &str,
    items: &Option<Vec<RetryOnItem>>,
    default: RetryOn,
) -> Result<RetryOn> {
    match items {
        None => Ok(default),
        Some(items) => items
            .iter()
            .enumerate()
            .try_fold(RetryOn::none(), |set, (i, item)| {
                set.with_item(item)
                    .map_err(|e| Error::for_key(format!("{key}[{i}]"), e))
            }),
    }
}

pub fn s(v: impl ToString) -> Value {
    Value::String(v.to_string())
}

pub fn table(pairs: Vec<(&str, Value)>) -> Value {
    Value::Table(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

pub fn count_or_value(v: Option<u32>, word: &str) -> Value {
    v.map_or_else(|| s(word), |n| Value::Integer(n as i64))
}

/// A `retry_on` or `throttling_on` list (a preset's written-out keys too).
pub fn outcome_list(set: &RetryOn) -> Value {
    Value::Array(
        set.to_items()
            .into_iter()
            .map(|item| match item {
                RetryOnItem::Code(n) => Value::Integer(n),
                RetryOnItem::Word(w) => Value::String(w),
            })
            .collect(),
    )
}
