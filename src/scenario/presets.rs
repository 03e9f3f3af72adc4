//! `preset = "NAME"` in a strategy table: the engine's [`crate::presets`] written out as the
//! strategy keys they set, under the keys the user gives beside the preset.
//!
//! The preset's values go through the same checks as keys the user typed, and the resolved
//! scenario writes them out, so a preset is shorthand, never a hidden mechanism. A key beside
//! the preset replaces its value; a `budget`, `breaker` or `throttling_backoff` table without
//! a `kind` changes only the keys it names, and a key the preset's budget kind does not have
//! is refused with the preset named.

use toml::{Table, Value};

use crate::error::{Error, Result};
use crate::policy::{
    AdaptiveRateConfig, BreakerConfig, BudgetConfig, HedgeDelay, HedgingPolicy, RetryOn,
};
use crate::presets::{self, NAMES, Preset};
use crate::time::{SimDuration, format_limit};

use super::table::helpers::outcome_list;

/// The strategy table `t` at `key`, with its `preset` expanded: the preset's keys, then `t`'s.
pub(super) fn expand(key: &str, t: &Table) -> Result<Table> {
    let Some(v) = t.get("preset") else {
        return Ok(t.clone());
    };
    let name = v
        .as_str()
        .ok_or_else(|| Error::invalid(format!("{key}.preset"), v, allowed(None)))?;
    let preset = lookup(&format!("{key}.preset"), name)?;
    let mut out = keys(&preset);
    for (k, v) in t {
        if k == "preset" {
            continue;
        }
        let merged = match (out.get(k), v) {
            (Some(Value::Table(base)), Value::Table(given)) if !given.contains_key("kind") => {
                Value::Table(merge(key, k, &preset, base, given)?)
            }
            (_, Value::Table(given)) if k == "budget" && !given.contains_key("kind") => {
                return Err(Error::invalid(
                    format!("{key}.budget"),
                    "a table without `kind`",
                    format!(
                        "a table with `kind`: preset {:?} has no budget to change",
                        preset.name
                    ),
                ));
            }
            _ => v.clone(),
        };
        out.insert(k.clone(), merged);
    }
    refuse_inert(key, &preset, t, &out)?;
    Ok(out)
}

/// Keys that act only through another key, and that key's value under which they do nothing.
const NEEDS: [(&str, &str, &str); 4] = [
    ("throttling_backoff", "throttling_on", "[]"),
    ("retry_after_max", "retry_after", "\"ignore\""),
    ("retry_after_max_extra", "retry_after", "\"ignore\""),
    ("retry_after_header", "retry_after", "\"ignore\""),
];

/// Refuses a key given beside the preset that the resolved strategy `out` would ignore (a
/// throttling backoff without a throttling class, a Retry-After clamp while hints are
/// ignored), naming the preset, the key and the key that would make it act.
fn refuse_inert(key: &str, preset: &Preset, given: &Table, out: &Table) -> Result<()> {
    for (k, governor, inert) in NEEDS {
        let value = out.get(governor).map(Value::to_string);
        if given.contains_key(k) && value.as_deref() == Some(inert) {
            return Err(Error::invalid(
                format!("{key}.{k}"),
                "given",
                format!(
                    "no `{k}` while {governor} = {inert}, as preset {:?} has it: give `{governor}` \
                     beside the preset too, or leave `{k}` out",
                    preset.name
                ),
            ));
        }
    }
    Ok(())
}

/// The preset called `name`, or an error at `key` listing them with a did-you-mean.
pub fn lookup(key: &str, name: &str) -> Result<Preset> {
    presets::by_name(name)
        .ok_or_else(|| Error::invalid(key, format!("{name:?}"), allowed(Some(name))))
}

/// "one of ..." with a did-you-mean for `given`.
fn allowed(given: Option<&str>) -> String {
    let list = format!(
        "one of {} (`jitterlab presets` lists them)",
        NAMES.join(", ")
    );
    let Some(given) = given else {
        return list;
    };
    let query = given.to_lowercase();
    let mut close: Vec<(usize, &str)> = NAMES
        .iter()
        .map(|n| (super::library::edit_distance(&query, n), *n))
        .filter(|&(d, n)| {
            d <= (query.len() / 3).max(2) || (query.len() >= 3 && n.starts_with(&query))
        })
        .collect();
    close.sort();
    match close.first() {
        Some((_, n)) => format!("{list}; did you mean {n}?"),
        None => list,
    }
}

/// The preset's `base` table with `given`'s keys over it; for a budget, only the keys of the
/// preset's kind.
fn merge(key: &str, k: &str, preset: &Preset, base: &Table, given: &Table) -> Result<Table> {
    let mut out = base.clone();
    // A preset that charges a throttling retry what it charges any retry (the AWS SDKs
    // before 2026) keeps doing so when `retry_cost` alone is changed.
    if k == "budget"
        && base.get("throttling_cost").is_some()
        && base.get("throttling_cost") == base.get("retry_cost")
        && !given.contains_key("throttling_cost")
        && let Some(cost) = given.get("retry_cost")
    {
        out.insert("throttling_cost".into(), cost.clone());
    }
    for (name, v) in given {
        if k == "budget" && !base.contains_key(name) {
            let kind = base.get("kind").and_then(Value::as_str).unwrap_or("?");
            let own: Vec<&str> = base.keys().map(String::as_str).collect();
            return Err(Error::invalid(
                format!("{key}.budget.{name}"),
                "given",
                format!(
                    "a key of preset {:?}'s budget (kind = {kind:?}: {}), or a whole table with its own `kind`",
                    preset.name,
                    own.join(", ")
                ),
            ));
        }
        out.insert(name.clone(), v.clone());
    }
    Ok(out)
}

fn s(v: impl ToString) -> Value {
    Value::String(v.to_string())
}

fn dur(d: std::time::Duration) -> Value {
    s(SimDuration::from(d))
}

fn backoff_keys(p: &crate::backoff::BackoffParams, t: &mut Table) {
    t.insert("jitter".into(), s(p.jitter.name()));
    t.insert("base".into(), dur(p.base));
    t.insert("multiplier".into(), Value::Float(p.multiplier));
    t.insert("cap".into(), dur(p.cap));
    t.insert("growth".into(), Value::Float(p.growth));
    t.insert("factor".into(), Value::Float(p.factor));
}

/// The strategy keys a preset sets (its name, backoff, attempts, outcomes, hints, budget,
/// breaker; its timeout and deadline only when the library sets them).
pub fn keys(preset: &Preset) -> Table {
    let p = &preset.policy;
    let mut t = Table::new();
    t.insert("name".into(), s(preset.name));
    backoff_keys(p.backoff.params(), &mut t);
    if let Some(throttling) = &p.throttling
        && let Some(b) = &throttling.backoff
    {
        // Only what differs from the strategy's own backoff (the AWS SDKs: the base), so that
        // a `jitter` or `cap` given beside the preset changes both, as in the SDK's code.
        let (mut own, mut tb) = (Table::new(), Table::new());
        backoff_keys(p.backoff.params(), &mut own);
        backoff_keys(b.params(), &mut tb);
        tb.retain(|k, v| own.get(k) != Some(v));
        t.insert("throttling_backoff".into(), Value::Table(tb));
    }
    t.insert(
        "max_attempts".into(),
        p.max_attempts
            .map_or_else(|| s("unlimited"), |n| Value::Integer(i64::from(n))),
    );
    if let Some(timeout) = p.timeout {
        t.insert("timeout".into(), dur(timeout));
    }
    if let Some(deadline) = p.deadline {
        t.insert("deadline".into(), dur(deadline));
    }
    t.insert("retry_on".into(), outcome_list(&p.retry_on));
    let throttling_on = p.throttling.as_ref().map_or(RetryOn::none(), |t| t.on);
    t.insert("throttling_on".into(), outcome_list(&throttling_on));
    let ra = &p.retry_after;
    t.insert("retry_after".into(), s(ra.mode.name()));
    t.insert(
        "retry_after_max".into(),
        s(format_limit(ra.max.map(SimDuration::from))),
    );
    t.insert(
        "retry_after_max_extra".into(),
        s(format_limit(ra.max_extra.map(SimDuration::from))),
    );
    t.insert("retry_after_header".into(), s(ra.header.name()));
    t.insert(
        "budget".into(),
        preset.budget.as_ref().map_or_else(|| s("off"), budget),
    );
    t.insert(
        "breaker".into(),
        preset.breaker.as_ref().map_or_else(|| s("off"), breaker),
    );
    // Only a preset that hedges writes the key, so the others' strategies stay as they were.
    if let Some(h) = &p.hedging {
        t.insert("hedging".into(), hedging(h));
    }
    // Only a preset with the limiter writes the key, so the others' strategies stay as
    // they were.
    if let Some(r) = &preset.rate_limiter {
        t.insert("adaptive_rate".into(), adaptive_rate(r));
    }
    t
}

/// A preset's hedging policy as a strategy's `hedging` table: the client cancels its losing
/// copies, and the server drops those still in its queue (`cancel = "waiting"`, a gRPC
/// server's cancellation of a call it has not begun).
fn hedging(h: &HedgingPolicy) -> Value {
    let mut t = Table::new();
    let delay = match h.delay {
        HedgeDelay::Fixed(d) => dur(d),
        HedgeDelay::Percentile(p) => s(format!("p{p}")),
    };
    t.insert("delay".into(), delay);
    t.insert(
        "max_attempts".into(),
        Value::Integer(i64::from(h.max_attempts)),
    );
    t.insert("non_fatal".into(), outcome_list(&h.non_fatal));
    t.insert("cancel".into(), s("waiting"));
    Value::Table(t)
}

/// A preset's rate limiter as a strategy's `adaptive_rate` table (shared: one SDK client's).
fn adaptive_rate(r: &AdaptiveRateConfig) -> Value {
    let mut t = Table::new();
    t.insert("beta".into(), Value::Float(r.beta));
    t.insert("scale".into(), Value::Float(r.scale));
    t.insert("smoothing".into(), Value::Float(r.smoothing));
    t.insert("bucket".into(), dur(r.bucket));
    t.insert("min_fill_rate".into(), Value::Float(r.min_fill_rate));
    t.insert("max_rate_scale".into(), Value::Float(r.max_rate_scale));
    t.insert("scope".into(), s("shared"));
    Value::Table(t)
}

/// A preset's budget as a strategy's `budget` table (shared: one SDK client's).
fn budget(b: &BudgetConfig) -> Value {
    let mut t = Table::new();
    t.insert("kind".into(), s(b.kind()));
    match *b {
        BudgetConfig::TokenBucket {
            capacity,
            retry_cost,
            timeout_cost,
            throttling_cost,
            success_refund,
        } => {
            for (k, v) in [
                ("capacity", capacity),
                ("retry_cost", retry_cost),
                ("timeout_cost", timeout_cost),
                ("throttling_cost", throttling_cost),
                ("success_refund", success_refund),
            ] {
                t.insert(k.into(), Value::Integer(i64::from(v)));
            }
        }
        BudgetConfig::Grpc {
            max_tokens,
            token_ratio,
        } => {
            t.insert("max_tokens".into(), Value::Float(max_tokens));
            t.insert("token_ratio".into(), Value::Float(token_ratio));
        }
        BudgetConfig::Ratio {
            percent,
            min_per_sec,
            window,
            deposit,
        } => {
            t.insert("percent".into(), Value::Float(percent));
            t.insert("min_per_sec".into(), Value::Float(min_per_sec));
            t.insert("window".into(), dur(window));
            t.insert("deposit".into(), s(deposit.name()));
        }
        BudgetConfig::Adaptive(a) => {
            t.insert("size".into(), Value::Float(a.size));
            t.insert("fill".into(), Value::Float(a.fill));
        }
        BudgetConfig::RetryBreaker(r) => {
            t.insert("ratio".into(), Value::Float(r.ratio));
        }
        BudgetConfig::Concurrency {
            percent,
            min_concurrency,
        } => {
            t.insert("percent".into(), Value::Float(percent));
            t.insert(
                "min_concurrency".into(),
                Value::Integer(i64::from(min_concurrency)),
            );
        }
    }
    t.insert("scope".into(), s("shared"));
    Value::Table(t)
}

fn breaker(b: &BreakerConfig) -> Value {
    let mut t = Table::new();
    t.insert("failure_ratio".into(), Value::Float(b.failure_ratio));
    t.insert(
        "min_requests".into(),
        Value::Integer(i64::from(b.min_requests)),
    );
    t.insert("window".into(), dur(b.window));
    t.insert("open_for".into(), dur(b.open_for));
    t.insert("scope".into(), s("shared"));
    Value::Table(t)
}

/// `jitterlab presets show NAME`: the keys as a strategy table in TOML.
pub fn show(preset: &Preset) -> String {
    let mut doc = Table::new();
    let mut backoff = Table::new();
    backoff.insert(
        "strategies".into(),
        Value::Array(vec![Value::Table(keys(preset))]),
    );
    doc.insert("backoff".into(), Value::Table(backoff));
    format!(
        "# {}\n# source: {}\n{}",
        preset.summary,
        preset.source,
        toml::to_string_pretty(&doc).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn keys_beside_the_preset_win_and_budget_keys_merge() {
        let t = table(
            r#"preset = "aws-standard"
max_attempts = 5
budget = { retry_cost = 20 }"#,
        );
        let out = expand("backoff.strategies[0]", &t).unwrap();
        assert_eq!(out["name"].as_str(), Some("aws-standard"));
        assert_eq!(out["max_attempts"].as_integer(), Some(5));
        assert_eq!(out["budget"]["retry_cost"].as_integer(), Some(20));
        assert_eq!(out["budget"]["throttling_cost"].as_integer(), Some(5));
        assert_eq!(out["throttling_backoff"]["base"].as_str(), Some("1s"));
        assert!(!out.contains_key("preset"));
    }

    #[test]
    fn finagle_counts_successes_unless_told_otherwise() {
        let out = expand("backoff.strategies[0]", &table("preset = \"finagle\"")).unwrap();
        assert_eq!(out["budget"]["deposit"].as_str(), Some("success"));
        assert_eq!(out["jitter"].as_str(), Some("none"));
        let out = expand(
            "backoff.strategies[0]",
            &table("preset = \"finagle\"\nbudget = { deposit = \"request\" }"),
        )
        .unwrap();
        assert_eq!(out["budget"]["deposit"].as_str(), Some("request"));
        assert_eq!(out["budget"]["percent"].as_float(), Some(20.0));
    }

    #[test]
    fn envoy_writes_its_concurrency_budget_and_takes_its_keys() {
        let out = expand("backoff.strategies[0]", &table("preset = \"envoy\"")).unwrap();
        assert_eq!(out["jitter"].as_str(), Some("full"));
        assert_eq!(out["base"].as_str(), Some("25ms"));
        assert_eq!(out["cap"].as_str(), Some("250ms"));
        assert_eq!(out["max_attempts"].as_integer(), Some(2));
        assert_eq!(out["retry_after"].as_str(), Some("ignore"));
        assert_eq!(out["breaker"].as_str(), Some("off"));
        let b = out["budget"].as_table().unwrap();
        assert_eq!(b["kind"].as_str(), Some("concurrency"));
        assert_eq!(b["percent"].as_float(), Some(20.0));
        assert_eq!(b["min_concurrency"].as_integer(), Some(3));
        assert_eq!(b["scope"].as_str(), Some("shared"));
        let out = expand(
            "backoff.strategies[0]",
            &table("preset = \"envoy\"\nbudget = { min_concurrency = 10 }"),
        )
        .unwrap();
        assert_eq!(out["budget"]["min_concurrency"].as_integer(), Some(10));
        assert_eq!(out["budget"]["percent"].as_float(), Some(20.0));
        let e = expand(
            "backoff.strategies[0]",
            &table("preset = \"envoy\"\nbudget = { capacity = 10 }"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("preset \"envoy\""), "{e}");
        assert!(e.contains("min_concurrency"), "{e}");
    }

    #[test]
    fn grpc_hedging_writes_its_hedging_table_and_merges_a_delay() {
        let out = expand("backoff.strategies[0]", &table("preset = \"grpc-hedging\"")).unwrap();
        let h = out["hedging"].as_table().unwrap();
        assert_eq!(h["delay"].as_str(), Some("500ms"));
        assert_eq!(h["max_attempts"].as_integer(), Some(4));
        assert_eq!(h["cancel"].as_str(), Some("waiting"));
        assert_eq!(out["budget"]["kind"].as_str(), Some("grpc"));
        let out = expand(
            "backoff.strategies[0]",
            &table("preset = \"grpc-hedging\"\nhedging = { delay = \"23ms\" }"),
        )
        .unwrap();
        assert_eq!(out["hedging"]["delay"].as_str(), Some("23ms"));
        assert_eq!(out["hedging"]["max_attempts"].as_integer(), Some(4));
        assert_eq!(out["hedging"]["non_fatal"], h["non_fatal"]);
        // The retry preset writes no hedging key.
        let out = expand("backoff.strategies[0]", &table("preset = \"grpc\"")).unwrap();
        assert!(!out.contains_key("hedging"));
    }

    #[test]
    fn overrides_follow_where_the_sdk_shares_a_value() {
        // Legacy botocore charges a throttling retry like any other: retry_cost carries it.
        let out = expand(
            "backoff.strategies[0]",
            &table("preset = \"aws-standard-legacy\"\nbudget = { retry_cost = 7 }"),
        )
        .unwrap();
        assert_eq!(out["budget"]["throttling_cost"].as_integer(), Some(7));
        assert_eq!(out["budget"]["timeout_cost"].as_integer(), Some(10));
        // 2026 charges them differently: the throttling cost stays 5.
        let out = expand(
            "backoff.strategies[0]",
            &table("preset = \"aws-standard\"\nbudget = { retry_cost = 7 }"),
        )
        .unwrap();
        assert_eq!(out["budget"]["throttling_cost"].as_integer(), Some(5));
        // The throttling backoff names only its base: jitter and cap come from the strategy.
        let out = expand(
            "backoff.strategies[0]",
            &table("preset = \"aws-standard\"\njitter = \"equal\""),
        )
        .unwrap();
        let tb = out["throttling_backoff"].as_table().unwrap();
        assert_eq!(tb.keys().collect::<Vec<_>>(), ["base"]);
        assert_eq!(out["jitter"].as_str(), Some("equal"));
    }

    #[test]
    fn an_unknown_name_lists_the_presets_and_guesses() {
        let e = expand(
            "backoff.strategies[1]",
            &table(r#"preset = "aws-standrad""#),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("backoff.strategies[1].preset"), "{e}");
        assert!(e.contains("did you mean aws-standard?"), "{e}");
        assert!(e.contains("resilience4j"), "{e}");
    }

    #[test]
    fn a_key_the_presets_budget_lacks_names_both() {
        let e = expand(
            "backoff.strategies[0]",
            &table(
                r#"preset = "grpc"
budget = { retry_cost = 3 }"#,
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("backoff.strategies[0].budget.retry_cost"), "{e}");
        assert!(e.contains("preset \"grpc\""), "{e}");
        assert!(e.contains("max_tokens"), "{e}");
        let e = expand(
            "backoff.strategies[0]",
            &table(
                r#"preset = "polly-v8"
budget = { capacity = 3 }"#,
            ),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("has no budget"), "{e}");
    }

    #[test]
    fn an_override_the_presets_mechanism_lacks_names_both() {
        for (text, k) in [
            (
                r#"preset = "polly-v8"
throttling_backoff = { base = "1s" }"#,
                "throttling_backoff",
            ),
            (
                r#"preset = "grpc"
retry_after_max_extra = "5s""#,
                "retry_after_max_extra",
            ),
            (
                r#"preset = "aws-standard-legacy"
retry_after_header = "x-amz-retry-after""#,
                "retry_after_header",
            ),
        ] {
            let e = expand("backoff.strategies[2]", &table(text))
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("backoff.strategies[2].{k}")), "{e}");
            assert!(e.contains("preset \""), "{e}");
        }
        // With the key that makes it act, the same override is accepted.
        let out = expand(
            "backoff.strategies[0]",
            &table(
                r#"preset = "polly-v8"
throttling_on = [429]
throttling_backoff = { base = "1s" }"#,
            ),
        )
        .unwrap();
        assert_eq!(out["throttling_backoff"]["base"].as_str(), Some("1s"));
        let out = expand(
            "backoff.strategies[0]",
            &table(
                r#"preset = "grpc"
retry_after = "at_least"
retry_after_max_extra = "5s""#,
            ),
        )
        .unwrap();
        assert_eq!(out["retry_after_max_extra"].as_str(), Some("5s"));
        // A preset that has the mechanism takes the override alone.
        assert!(
            expand(
                "backoff.strategies[0]",
                &table(
                    r#"preset = "aws-standard"
retry_after_max_extra = "2s""#
                )
            )
            .is_ok()
        );
    }
}
