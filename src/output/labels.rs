//! Sweep keys and their values as a reader reads them: `offered load` for `workload.rate`,
//! `1 s` for `"1s"`, `outage 0 s–60 s` for a list of fault tables. Charts, the report and
//! `recommend` name keys through here; the CSV files keep the dotted keys and the values as
//! written.

use crate::output::results::{ResultFolder, fmt_ms, fmt_number, sweep_value_number};

/// The keys whose values are each client's rate in a `poisson_clients` workload.
const PER_CLIENT: [&str; 2] = ["workload.rate", "workload.spike.rate"];

/// How the sweep keys of one result folder read. The free functions of this module read a
/// key alone; in a `poisson_clients` workload `workload.rate` is each client's rate, and a
/// reader is shown what the server is offered, the load of all the clients, with the
/// per-client rate beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reading {
    /// `workload.rate` is the offered load itself (or not a key of the folder).
    #[default]
    Plain,
    /// `workload.rate` is each of this many clients' rate, at every point.
    PerClient(u32),
    /// `workload.rate` is each client's rate and the count of clients differs by point: no
    /// one total to show beside the key, so it is named the rate per client.
    PerClientVarying,
}

impl Reading {
    /// How the keys of `folder` read (from its `scenario.toml`: plain without one).
    pub fn of(folder: &ResultFolder) -> Reading {
        let clients: Vec<Option<u32>> = (folder.points.iter())
            .map(|p| folder.info(p.index).and_then(|i| i.rate_clients))
            .collect();
        match clients.first() {
            Some(Some(n)) if clients.iter().all(|c| *c == Some(*n)) => Reading::PerClient(*n),
            Some(Some(_)) => Reading::PerClientVarying,
            _ => Reading::Plain,
        }
    }

    /// What a value of `key` is multiplied by to be the offered load: the clients for a
    /// per-client rate, else 1.
    pub fn factor(self, key: &str) -> f64 {
        match self {
            Reading::PerClient(n) if PER_CLIENT.contains(&key) => f64::from(n),
            _ => 1.0,
        }
    }

    /// [`key`], naming a per-client rate as the load in total (or the rate per client).
    pub fn key(self, key: &str) -> (String, Kind) {
        let (name, kind) = self::key(key);
        match self {
            _ if !PER_CLIENT.contains(&key) => (name, kind),
            Reading::PerClient(_) => (format!("{name} in total"), kind),
            Reading::PerClientVarying if key == PER_CLIENT[0] => ("rate per client".into(), kind),
            Reading::PerClientVarying => (format!("{name} per client"), kind),
            Reading::Plain => (name, kind),
        }
    }

    /// [`value`], a per-client rate shown as the load of all the clients.
    pub fn value(self, key: &str, raw: &str) -> String {
        match raw.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && self.factor(key) != 1.0 => fmt_number(v * self.factor(key)),
            _ => value(key, raw),
        }
    }

    /// [`assignment`], a per-client rate as `offered load 200/s in total (10 clients ×
    /// 20/s)`.
    pub fn assignment(self, key: &str, raw: &str) -> String {
        let name = self::key(key).0;
        match (self, raw.trim().parse::<f64>()) {
            (_, Ok(v)) if !PER_CLIENT.contains(&key) || !v.is_finite() => assignment(key, raw),
            (Reading::PerClient(n), Ok(v)) => format!(
                "{name} {}/s in total ({n} clients × {}/s)",
                fmt_number(v * f64::from(n)),
                fmt_number(v)
            ),
            (Reading::PerClientVarying, Ok(_)) => {
                format!("{} {}/s", self.key(key).0, value(key, raw))
            }
            _ => assignment(key, raw),
        }
    }
}

/// What kind of values a key takes, for their display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A duration (written `"250ms"`).
    Duration,
    /// A rate in requests per second.
    Rate,
    /// A share from 0 to 1, shown in %.
    Share,
    /// A plain number or a word.
    Plain,
}

/// A share (0 to 1) with `decimals` decimals, or more where that many would round it onto
/// the other side of `target` (`0.94996` against `0.95` is `0.94996`, not `0.9500`): a value
/// shown as meeting a target meets it.
pub fn share_digits(x: f64, target: Option<f64>, decimals: usize) -> String {
    fixed_near(x, target, decimals)
}

/// A share as a percentage, `98.4 %`, with the digits [`share_digits`] would add near
/// `target`.
pub fn percent_near(x: f64, target: f64) -> String {
    let short = crate::output::results::fmt_number(x * 100.0);
    let same_side = |text: &str| {
        let shown = text
            .replace(' ', "")
            .parse::<f64>()
            .map_or(f64::NAN, |p| p / 100.0);
        (x < target) == (shown < target - 1e-12)
    };
    if !x.is_finite() || same_side(&short) {
        return format!("{short} %");
    }
    format!("{} %", fixed_near(x * 100.0, Some(target * 100.0), 2))
}

/// The most decimals [`apart`] adds.
const MAX_EXTRA: usize = 6;

/// `a` and `b` for a sentence that compares them, each written by `show(x, extra)` with the
/// fewest `extra` decimals (0 to 6) at which the two look different: rounding keeps their
/// order, so the numbers shown agree with the comparison (never `99 % < 99 %`). `None` when
/// they still look the same: say they are about the same, not that one is below the other.
pub fn apart(a: f64, b: f64, show: impl Fn(f64, usize) -> String) -> Option<(String, String)> {
    if a == b || !a.is_finite() || !b.is_finite() {
        return None;
    }
    (0..=MAX_EXTRA)
        .map(|extra| (show(a, extra), show(b, extra)))
        .find(|(x, y)| x != y)
}

/// A number as charts write it ([`fmt_number`]) with `extra` more decimals, for [`apart`].
pub fn number_extra(x: f64, extra: usize) -> String {
    crate::output::results::fmt_number_extra(x, extra)
}

/// A time in ms as charts write it (`12.5 ms`, `2.4 s`) with `extra` more decimals, for
/// [`apart`].
pub fn ms_extra(ms: f64, extra: usize) -> String {
    crate::output::results::fmt_ms_extra(ms, extra)
}

/// `x` with `decimals` decimals, more (up to 9) until it is on the side of `target` it is.
fn fixed_near(x: f64, target: Option<f64>, decimals: usize) -> String {
    let mut d = decimals;
    loop {
        let text = format!("{x:.d$}");
        let shown: f64 = text.parse().unwrap_or(x);
        let agrees = target.is_none_or(|t| (x < t) == (shown < t - 1e-12 * t.abs().max(1.0)));
        if agrees || d >= 9 || !x.is_finite() {
            return text;
        }
        d += 1;
    }
}

/// The name of a dotted key and the kind of its values.
pub fn key(key: &str) -> (String, Kind) {
    // `faults[0].share` → ("faults", Some(0), "share"); `workload.rate` → ("workload", None, "rate").
    let (head, rest) = key.split_once('.').unwrap_or((key, ""));
    let (table, index) = match head.split_once('[') {
        Some((t, i)) => (t, i.trim_end_matches(']').parse::<usize>().ok()),
        None => (head, None),
    };
    let nth = |i: Option<usize>| i.map_or(String::new(), |i| format!(" {}", i + 1));
    let named = |name: &str, kind| (name.to_string(), kind);
    use Kind::*;
    match (table, rest) {
        ("workload", "rate") => named("offered load", Rate),
        ("workload", "spike.rate") => named("spike rate", Rate),
        ("workload", "spike.length") => named("spike length", Duration),
        ("workload", "spike.at") => named("spike start", Duration),
        ("workload", "clients") => named("clients", Plain),
        ("workload", "spread") => named("arrival spread", Duration),
        ("workload", "duration") => named("arrivals for", Duration),
        ("workload", "think") => named("think time", Duration),
        ("server", "workers") => named("workers", Plain),
        ("server", "queue") => named("waiting places", Plain),
        ("server", "service.mean") => named("mean service time", Duration),
        ("server", "contention") => named("contention per attempt in flight", Duration),
        ("server", "retry_after") => named("server's Retry-After", Plain),
        ("network", "latency.mean") => named("network latency", Duration),
        ("faults", "") => (format!("faults{}", nth(index)), Plain),
        ("faults", "share") => (
            format!("share of attempts failing{}", fault_no(index)),
            Share,
        ),
        ("faults", "start") => (format!("fault{} start", nth(index)), Duration),
        ("faults", "end") => (format!("fault{} end", nth(index)), Duration),
        ("faults", "factor") => (format!("slowdown{}", fault_no(index)), Plain),
        ("backoff", "base") => named("backoff base", Duration),
        ("backoff", "cap") => named("backoff cap", Duration),
        ("backoff", "multiplier") => named("backoff multiplier", Plain),
        ("backoff", "jitter") => named("jitter", Plain),
        ("client", "max_attempts") => named("max attempts", Plain),
        ("client", "deadline") => named("deadline", Duration),
        ("client", "timeout") => named("attempt timeout", Duration),
        ("client", "retry_after") => named("Retry-After handling", Plain),
        ("client", "concurrency") => named("concurrency limit", Plain),
        ("client", r) if r.starts_with("budget") => named("retry budget", Plain),
        ("client", r) if r.starts_with("breaker") => named("circuit breaker", Plain),
        ("client", r) if r.starts_with("throttle") => named("adaptive throttle", Plain),
        ("layers", r) => {
            let (inner, kind) = self::key(r);
            (format!("{inner} at layer{}", nth(index)), kind)
        }
        ("horizon", "") => named("horizon", Duration),
        _ => (key.to_string(), Plain),
    }
}

/// ` (fault 2)` for a fault after the first, so that the common single fault reads plainly.
fn fault_no(index: Option<usize>) -> String {
    match index {
        Some(i) if i > 0 => format!(" (fault {})", i + 1),
        _ => String::new(),
    }
}

/// A key's value as a reader reads it: `27`, `1 s`, `50 %`, `at_least`, `outage 0 s–60 s`.
pub fn value(key: &str, raw: &str) -> String {
    let (_, kind) = self::key(key);
    let text = raw.trim();
    match kind {
        Kind::Share => match sweep_value_number(text) {
            Some(v) => format!("{} %", fmt_number(v * 100.0)),
            None => compact(text),
        },
        Kind::Duration => match duration_ms(text) {
            Some(ms) => fmt_ms(ms),
            None => compact(text),
        },
        Kind::Rate | Kind::Plain => match text.parse::<f64>() {
            Ok(v) if v.is_finite() => fmt_number(v),
            _ => compact(text),
        },
    }
}

/// `key value` for titles and legends (`offered load 27/s`, `backoff base 50 ms`,
/// `faults at layer 3: outage 10–20 s`).
pub fn assignment(key: &str, raw: &str) -> String {
    let (name, kind) = self::key(key);
    let v = value(key, raw);
    match kind {
        Kind::Rate if raw.trim().parse::<f64>().is_ok() => format!("{name} {v}/s"),
        Kind::Plain if v.contains(' ') => format!("{name}: {v}"),
        _ => format!("{name} {v}"),
    }
}

/// The milliseconds of a duration written `"1s"` or `1s`; `None` for anything else.
pub fn duration_ms(text: &str) -> Option<f64> {
    let t = text.trim().trim_matches('"');
    t.chars()
        .any(|c| c.is_ascii_alphabetic())
        .then(|| sweep_value_number(t))
        .flatten()
}

/// The most characters a compacted value keeps.
const MAX_VALUE: usize = 32;

/// A TOML value written as in a scenario, shortened for a label: strings unquoted, a fault
/// table as `outage 0 s–60 s`, lists joined with `+`, other tables as `key value, ...`.
pub fn compact(text: &str) -> String {
    let parsed = toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"));
    let out = match parsed {
        Some(v) => describe(&v),
        None => text.to_string(),
    };
    if out.chars().count() > MAX_VALUE {
        let cut: String = out.chars().take(MAX_VALUE - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        out
    }
}

fn describe(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => match duration_ms(s) {
            Some(ms) if s.chars().next().is_some_and(|c| c.is_ascii_digit()) => fmt_ms(ms),
            _ => s.clone(),
        },
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => fmt_number(*f),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Array(items) if items.is_empty() => "none".to_string(),
        toml::Value::Array(items) => items.iter().map(describe).collect::<Vec<_>>().join(" + "),
        toml::Value::Table(t) => {
            let get = |k: &str| t.get(k).map(describe);
            match (get("kind"), get("start"), get("end")) {
                // `outage 10–20 s`: one unit when both ends share it.
                (Some(kind), Some(start), Some(end)) => {
                    let start = if start == "0 ms" {
                        "0".to_string()
                    } else {
                        start
                    };
                    let unit = |t: &str| t.rsplit(' ').next().map(str::to_string);
                    match (unit(&start), unit(&end)) {
                        (Some(a), Some(b)) if a == b && start.contains(' ') => {
                            let bare = start.trim_end_matches(&format!(" {a}"));
                            format!("{kind} {bare}–{end}")
                        }
                        _ if start == "0" => format!("{kind} 0–{end}"),
                        _ => format!("{kind} {start}–{end}"),
                    }
                }
                _ => t
                    .iter()
                    .map(|(k, v)| format!("{k} {}", describe(v)))
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_per_client_reads_as_the_load_in_total() {
        const RATE: &str = PER_CLIENT[0];
        let r = Reading::PerClient(10);
        assert_eq!(r.key(RATE).0, "offered load in total");
        assert_eq!(r.value(RATE, "20.0"), "200");
        assert_eq!(
            r.assignment(RATE, "28.0"),
            "offered load 280/s in total (10 clients × 28/s)"
        );
        assert_eq!(r.key("workload.spike.rate").0, "spike rate in total");
        assert_eq!(r.value("workload.spike.rate", "40"), "400");
        // Other keys, and a plain workload, read as before.
        assert_eq!(
            r.assignment("backoff.base", "\"50ms\""),
            "backoff base 50 ms"
        );
        assert_eq!(Reading::Plain.assignment(RATE, "63.0"), "offered load 63/s");
        assert_eq!(
            Reading::PerClientVarying.assignment(RATE, "20"),
            "rate per client 20/s"
        );
    }

    #[test]
    fn keys_and_values_read_as_words() {
        assert_eq!(key("workload.rate").0, "offered load");
        assert_eq!(
            key("workload.spike.length"),
            ("spike length".into(), Kind::Duration)
        );
        assert_eq!(
            key("faults[0].share"),
            ("share of attempts failing".into(), Kind::Share)
        );
        assert_eq!(key("layers[2].faults").0, "faults at layer 3");
        assert_eq!(key("backoff.base").0, "backoff base");
        assert_eq!(key("odd.key").0, "odd.key");
        assert_eq!(value("workload.rate", "27.0"), "27");
        assert_eq!(value("workload.spike.length", "16s"), "16 s");
        assert_eq!(value("faults[0].share", "0.75"), "75 %");
        assert_eq!(value("client.retry_after", "at_least"), "at_least");
        assert_eq!(
            value(
                "layers[2].faults",
                r#"[{ kind = "outage", start = "10s", end = "20s" }]"#
            ),
            "outage 10–20 s"
        );
        assert_eq!(
            value(
                "layers[2].faults",
                r#"[{ kind = "outage", start = "0s", end = "60s" }]"#
            ),
            "outage 0–60 s"
        );
        assert_eq!(
            assignment(
                "layers[2].faults",
                r#"[{ kind = "outage", start = "0s", end = "1m" }]"#
            ),
            "faults at layer 3: outage 0–60 s"
        );
        assert_eq!(assignment("workload.rate", "63.0"), "offered load 63/s");
        assert_eq!(assignment("backoff.cap", "500ms"), "backoff cap 500 ms");
        assert_eq!(
            compact(r#"{ kind = "slow", start = "500ms", end = "2s" }"#),
            "slow 500 ms–2 s"
        );
        let long = compact(
            r#"{ kind = "token_bucket", capacity = 500, retry_cost = 5, timeout_cost = 10 }"#,
        );
        assert!(
            long.chars().count() <= MAX_VALUE && long.ends_with('…'),
            "{long}"
        );
    }

    #[test]
    fn a_share_near_its_target_shows_the_side_it_is_on() {
        assert_eq!(share_digits(0.94996, Some(0.95), 4), "0.94996");
        assert_eq!(share_digits(0.95, Some(0.95), 4), "0.9500");
        assert_eq!(share_digits(0.9824, Some(0.95), 4), "0.9824");
        assert_eq!(percent_near(0.94996, 0.95), "94.996 %");
        assert_eq!(percent_near(0.9986, 0.999), "99.86 %");
        assert_eq!(percent_near(0.999, 0.999), "99.9 %");
        assert_eq!(percent_near(0.984, 0.999), "98.4 %");
    }

    #[test]
    fn compared_numbers_look_as_far_apart_as_they_are() {
        // 99.04 ms against 99.0 ms: both `99 ms` as charts write them.
        assert_eq!(
            apart(99.04, 99.0, ms_extra),
            Some(("99.04 ms".into(), "99 ms".into()))
        );
        assert_eq!(
            apart(1234.6, 1234.9, number_extra),
            Some(("1 234.6".into(), "1 234.9".into()))
        );
        assert_eq!(
            apart(2.0004, 2.0, number_extra),
            Some(("2.0004".into(), "2".into()))
        );
        assert_eq!(
            apart(150.0, 40.0, ms_extra),
            Some(("150 ms".into(), "40 ms".into()))
        );
        // Equal to every digit shown: about the same.
        assert_eq!(apart(5.0, 5.0 + 1e-12, number_extra), None);
        assert_eq!(apart(5.0, 5.0, number_extra), None);
        assert_eq!(number_extra(-0.000_000_1, 2), "0");
        assert_eq!(number_extra(12_345.678, 1), "12 345.7");
    }
}
