//! `backoff.strategies`: each strategy's name, preset and backoff, the client keys it
//! overrides, its `throttling_backoff` and its per-layer overrides.

use toml::Value;

use super::backoff::{BackoffFile, DEFAULT_STRATEGIES, backoff, backoff_defaults, backoff_pairs};
use super::budget::{BudgetFile, budget, budget_toml};
use super::guards::{
    AdaptiveRateFile, BreakerFile, ThrottleFile, adaptive_rate, adaptive_rate_toml, breaker,
    breaker_toml, throttle, throttle_toml,
};
use super::hedging::{HedgingFile, hedging, hedging_toml};
use super::helpers::{
    count_or, count_or_value, header, limit, outcome_list, outcome_set, s, std_duration, table,
    under,
};
use super::layers::{give_up, give_up_name};
use crate::backoff::{Backoff, BackoffParams, Jitter};
use crate::error::{Error, Result};
use crate::policy::RetryOn;
use crate::policy::RetryOnItem;
use crate::scenario::file::CountOr;
use crate::sim::{ClientOverrides, LayerOverrides, Strategy};
use crate::time::format_limit;

pub fn strategies(b: &BackoffFile) -> Result<Vec<Strategy>> {
    let defaults = backoff_defaults(b)?;
    let entries: Vec<toml::Value> = match &b.strategies {
        Some(list) => list.clone(),
        None => DEFAULT_STRATEGIES
            .iter()
            .map(|j| toml::Value::String(j.name().into()))
            .collect(),
    };
    if entries.is_empty() {
        return Err(Error::invalid(
            "backoff.strategies",
            "[]",
            "a list of one or more strategies",
        ));
    }
    let mut out: Vec<Strategy> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let key = format!("backoff.strategies[{i}]");
        let strategy = match entry {
            toml::Value::String(name) => {
                let jitter = name.parse().map_err(|e| Error::for_key(&key, e))?;
                Strategy {
                    name: name.clone(),
                    backoff: backoff(
                        &key,
                        &toml::Table::new(),
                        BackoffParams { jitter, ..defaults },
                    )?,
                    client: ClientOverrides::default(),
                    layers: Vec::new(),
                    source: None,
                }
            }
            toml::Value::Table(t) => strategy_table(&key, t, defaults)?,
            other => {
                return Err(Error::invalid(
                    key,
                    other,
                    format!("a jitter name such as \"full\", or a table {{ {STRATEGY_KEYS} }}"),
                ));
            }
        };
        if out.iter().any(|s| s.name == strategy.name) {
            return Err(Error::invalid(
                format!("{key}.name"),
                format!("{:?}", strategy.name),
                "a name not used by another strategy",
            ));
        }
        out.push(strategy);
    }
    Ok(out)
}

/// The keys of a strategy table: its preset, its backoff, then the client keys it may
/// override.
pub const STRATEGY_KEYS: &str = "name, preset, jitter, base, multiplier, cap, growth, factor, throttling_backoff, max_attempts, budget, throttle, breaker, adaptive_rate, timeout, deadline, retry_on, throttling_on, retry_after, retry_after_max, retry_after_max_extra, retry_after_header, hedging, layers";

/// A strategy's override at `key` that is a table like the `[client]` one (read as `F`), or
/// `"off"` (`None`: the strategy runs without it).
pub fn off_or_table<F: serde::de::DeserializeOwned>(
    key: &str,
    v: &toml::Value,
    allowed: &str,
) -> Result<Option<F>> {
    match v {
        toml::Value::String(w) if w == "off" => Ok(None),
        toml::Value::Table(_) => v
            .clone()
            .try_into()
            .map(Some)
            .map_err(|e| Error::invalid(key, v, format!("{allowed} ({e})"))),
        _ => Err(Error::invalid(key, v, format!("{allowed}, or \"off\""))),
    }
}

pub fn strategy_table(key: &str, t: &toml::Table, defaults: BackoffParams) -> Result<Strategy> {
    let expanded = crate::scenario::presets::expand(key, t)?;
    let t = &expanded;
    let mut params = defaults;
    let mut name = None;
    let text = |k: &str, v: &toml::Value| -> Result<String> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| Error::invalid(format!("{key}.{k}"), v, "a string"))
    };
    let number = |k: &str, v: &toml::Value| -> Result<f64> {
        v.as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .ok_or_else(|| Error::invalid(format!("{key}.{k}"), v, "a number"))
    };
    let mut jitter = None;
    let mut client = ClientOverrides::default();
    let mut layers = Vec::new();
    let mut throttling = None;
    for (k, v) in t {
        let sub = format!("{key}.{k}");
        match k.as_str() {
            "name" => name = Some(text(k, v)?),
            "jitter" => {
                jitter = Some(
                    text(k, v)?
                        .parse::<Jitter>()
                        .map_err(|e| Error::for_key(&sub, e))?,
                )
            }
            "base" => params.base = std_duration(&sub, &text(k, v)?)?,
            "cap" => params.cap = std_duration(&sub, &text(k, v)?)?,
            "multiplier" => params.multiplier = number(k, v)?,
            "growth" => params.growth = number(k, v)?,
            "factor" => params.factor = number(k, v)?,
            "layers" => layers = layer_overrides(&sub, v)?,
            "hedging" => {
                client.hedging = Some(
                    off_or_table(&sub, v, "a hedging table like client.hedging")?
                        .map(|file: HedgingFile| hedging(&sub, &file))
                        .transpose()?,
                )
            }
            "throttling_backoff" => throttling = Some(v),
            k if client_override(&sub, k, v, &mut client)? => {}
            _ => {
                return Err(Error::invalid(
                    sub,
                    "given",
                    format!("one of the keys {STRATEGY_KEYS}"),
                ));
            }
        }
    }
    let jitter = jitter.ok_or_else(|| {
        Error::invalid(
            format!("{key}.jitter"),
            "missing",
            format!("one of {}", Jitter::names()),
        )
    })?;
    params.jitter = jitter;
    let backoff = backoff(key, t, params)?;
    if let Some(v) = throttling {
        client.throttling_backoff = Some(throttling_backoff(
            &format!("{key}.throttling_backoff"),
            v,
            params,
        )?);
    }
    Ok(Strategy {
        name: name.unwrap_or_else(|| jitter.name().to_string()),
        backoff,
        client,
        layers,
        source: None,
    })
}

/// A strategy's `throttling_backoff` at `key`: a table of backoff keys over the strategy's
/// own `params` (`jitter`, `base`, `multiplier`, `cap`, `growth`, `factor`), or `"off"`.
pub fn throttling_backoff(
    key: &str,
    v: &toml::Value,
    params: BackoffParams,
) -> Result<Option<BackoffParams>> {
    const KEYS: &str = "jitter, base, multiplier, cap, growth, factor";
    let t = match v {
        toml::Value::String(w) if w == "off" => return Ok(None),
        toml::Value::Table(t) => t,
        _ => {
            return Err(Error::invalid(
                key,
                v,
                format!("a table of {KEYS}, or \"off\""),
            ));
        }
    };
    let mut p = params;
    for (k, v) in t {
        let sub = format!("{key}.{k}");
        let text = || {
            v.as_str()
                .ok_or_else(|| Error::invalid(&sub, v, "a string"))
        };
        let number = || {
            v.as_float()
                .or_else(|| v.as_integer().map(|i| i as f64))
                .ok_or_else(|| Error::invalid(&sub, v, "a number"))
        };
        match k.as_str() {
            "jitter" => p.jitter = text()?.parse().map_err(|e| Error::for_key(&sub, e))?,
            "base" => p.base = std_duration(&sub, text()?)?,
            "cap" => p.cap = std_duration(&sub, text()?)?,
            "multiplier" => p.multiplier = number()?,
            "growth" => p.growth = number()?,
            "factor" => p.factor = number()?,
            _ => {
                return Err(Error::invalid(
                    sub,
                    "given",
                    format!("one of the keys {KEYS}"),
                ));
            }
        }
    }
    Backoff::from_params(p).map_err(under(key))?;
    Ok(Some(p))
}

/// Reads client key `k` of a strategy (or of one of its layer overrides) at `sub` into
/// `client`: false when `k` is not one of them.
pub fn client_override(
    sub: &str,
    k: &str,
    v: &toml::Value,
    client: &mut ClientOverrides,
) -> Result<bool> {
    match k {
        "max_attempts" => {
            let given: CountOr = v
                .clone()
                .try_into()
                .map_err(|_| Error::invalid(sub, v, "an integer >= 1, or \"unlimited\""))?;
            client.max_attempts = Some(count_or(sub, &Some(given), None, &["unlimited"], 1)?);
        }
        "budget" => {
            client.budget = Some(
                off_or_table(sub, v, "a budget table like client.budget")?
                    .map(|file: BudgetFile| budget(sub, &file))
                    .transpose()?,
            )
        }
        "throttle" => {
            client.throttle = Some(
                off_or_table(sub, v, "a throttle table like client.throttle")?
                    .map(|file: ThrottleFile| throttle(sub, &file))
                    .transpose()?,
            )
        }
        "adaptive_rate" => {
            client.adaptive_rate = Some(
                off_or_table(sub, v, "an adaptive_rate table like client.adaptive_rate")?
                    .map(|file: AdaptiveRateFile| adaptive_rate(sub, &file))
                    .transpose()?,
            )
        }
        "breaker" => {
            client.breaker = Some(
                off_or_table(sub, v, "a breaker table like client.breaker")?
                    .map(|file: BreakerFile| breaker(sub, &file))
                    .transpose()?,
            )
        }
        "timeout" | "deadline" | "retry_after_max" | "retry_after_max_extra" => {
            let given = v.as_str().ok_or_else(|| {
                Error::invalid(sub, v, "a duration in quotes such as \"3s\", or \"off\"")
            })?;
            let value = Some(limit(sub, &Some(given.to_string()), "")?);
            match k {
                "timeout" => client.timeout = value,
                "deadline" => client.deadline = value,
                "retry_after_max" => client.retry_after_max = value,
                _ => client.retry_after_max_extra = value,
            }
        }
        "retry_on" | "throttling_on" => {
            let items: Vec<RetryOnItem> = v.clone().try_into().map_err(|_| {
                Error::invalid(
                    sub,
                    v,
                    "a list of status codes and \"timeout\", \"connection\"",
                )
            })?;
            let set = outcome_set(sub, &Some(items), RetryOn::none())?;
            if k == "retry_on" {
                client.retry_on = Some(set);
            } else {
                client.throttling_on = Some(set);
            }
        }
        "retry_after" => {
            let mode = v.as_str().ok_or_else(|| {
                Error::invalid(sub, v, "one of \"ignore\", \"at_least\", \"spread\"")
            })?;
            client.retry_after = Some(mode.parse().map_err(|e| Error::for_key(sub, e))?);
        }
        "retry_after_header" => {
            let name = v.as_str().map(str::to_string);
            if name.is_none() {
                return Err(Error::invalid(
                    sub,
                    v,
                    "\"retry-after\" or \"x-amz-retry-after\"",
                ));
            }
            client.retry_after_header = Some(header(sub, &name)?);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The keys of a strategy's layer override.
pub const LAYER_OVERRIDE_KEYS: &str =
    "max_attempts, budget, throttle, breaker, timeout, deadline, on_give_up, propagate_deadline";

/// A strategy's `layers` list at `key`: entry `j` overrides how layer `j + 1` calls layer
/// `j + 2`.
pub fn layer_overrides(key: &str, v: &toml::Value) -> Result<Vec<LayerOverrides>> {
    let list = v.as_array().ok_or_else(|| {
        Error::invalid(
            key,
            v,
            format!("a list of tables {{ {LAYER_OVERRIDE_KEYS} }}, one per calling layer"),
        )
    })?;
    list.iter()
        .enumerate()
        .map(|(j, entry)| {
            let key = format!("{key}[{j}]");
            let t = entry.as_table().ok_or_else(|| {
                Error::invalid(&key, entry, format!("a table {{ {LAYER_OVERRIDE_KEYS} }}"))
            })?;
            let mut o = LayerOverrides::default();
            for (k, v) in t {
                let sub = format!("{key}.{k}");
                match k.as_str() {
                    "on_give_up" => o.on_give_up = Some(give_up(&sub, v)?),
                    "propagate_deadline" => {
                        o.propagate_deadline = Some(
                            v.as_bool()
                                .ok_or_else(|| Error::invalid(&sub, v, "true or false"))?,
                        )
                    }
                    k if client_override(&sub, k, v, &mut o.client)? => {}
                    _ => {
                        return Err(Error::invalid(
                            sub,
                            "given",
                            format!("one of the keys {LAYER_OVERRIDE_KEYS}"),
                        ));
                    }
                }
            }
            Ok(o)
        })
        .collect()
}

/// A strategy as a bare name when it is the plain jitter with the shared keys, else a table
/// (with its client overrides, if any).
pub fn strategy_toml(st: &Strategy, shared: &BackoffParams) -> Value {
    let p = *st.backoff.params();
    let plain = BackoffParams {
        jitter: p.jitter,
        ..*shared
    };
    if p == plain && st.name == p.jitter.name() && st.client.is_empty() && st.layers.is_empty() {
        return s(&st.name);
    }
    let mut pairs = vec![("name", s(&st.name))];
    pairs.extend(backoff_pairs(&p));
    override_pairs(&st.client, &mut pairs);
    if !st.layers.is_empty() {
        let layers = st
            .layers
            .iter()
            .map(|o| {
                let mut pairs = Vec::new();
                override_pairs(&o.client, &mut pairs);
                if let Some(g) = o.on_give_up {
                    pairs.push(("on_give_up", s(give_up_name(g))));
                }
                if let Some(p) = o.propagate_deadline {
                    pairs.push(("propagate_deadline", Value::Boolean(p)));
                }
                table(pairs)
            })
            .collect();
        pairs.push(("layers", Value::Array(layers)));
    }
    table(pairs)
}

/// The client keys a strategy (or one of its layer overrides) sets.
pub fn override_pairs(c: &ClientOverrides, pairs: &mut Vec<(&str, Value)>) {
    if let Some(max) = c.max_attempts {
        pairs.push(("max_attempts", count_or_value(max, "unlimited")));
    }
    if let Some(b) = &c.budget {
        pairs.push((
            "budget",
            b.as_ref()
                .map_or_else(|| s("off"), |(b, scope)| budget_toml(b, *scope)),
        ));
    }
    if let Some(t) = &c.throttle {
        pairs.push((
            "throttle",
            t.as_ref()
                .map_or_else(|| s("off"), |(t, scope)| throttle_toml(t, *scope)),
        ));
    }
    if let Some(b) = &c.breaker {
        pairs.push((
            "breaker",
            b.as_ref()
                .map_or_else(|| s("off"), |(b, scope)| breaker_toml(b, *scope)),
        ));
    }
    if let Some(r) = &c.adaptive_rate {
        pairs.push((
            "adaptive_rate",
            r.as_ref()
                .map_or_else(|| s("off"), |(r, scope)| adaptive_rate_toml(r, *scope)),
        ));
    }
    if let Some(h) = &c.hedging {
        pairs.push(("hedging", h.as_ref().map_or_else(|| s("off"), hedging_toml)));
    }
    if let Some(t) = c.timeout {
        pairs.push(("timeout", s(format_limit(t))));
    }
    if let Some(d) = c.deadline {
        pairs.push(("deadline", s(format_limit(d))));
    }
    if let Some(on) = &c.retry_on {
        pairs.push(("retry_on", outcome_list(on)));
    }
    if let Some(on) = &c.throttling_on {
        pairs.push(("throttling_on", outcome_list(on)));
    }
    if let Some(mode) = c.retry_after {
        pairs.push(("retry_after", s(mode.name())));
    }
    if let Some(max) = c.retry_after_max {
        pairs.push(("retry_after_max", s(format_limit(max))));
    }
    if let Some(extra) = c.retry_after_max_extra {
        pairs.push(("retry_after_max_extra", s(format_limit(extra))));
    }
    if let Some(header) = c.retry_after_header {
        pairs.push(("retry_after_header", s(header.name())));
    }
    if let Some(b) = &c.throttling_backoff {
        pairs.push((
            "throttling_backoff",
            b.as_ref()
                .map_or_else(|| s("off"), |p| table(backoff_pairs(p))),
        ));
    }
}
