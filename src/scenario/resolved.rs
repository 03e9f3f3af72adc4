//! The resolved scenario: every key written out with its value, defaults included, in the
//! shape of docs/scenario.md. Reading it back gives the same scenario.

use toml::{Table, Value};

use super::Scenario;
use super::check::throttling_default;
use crate::backoff::BackoffParams;
use crate::policy::AdaptiveRateConfig;
use crate::policy::throttle::ThrottleConfig;
use crate::policy::{BreakerConfig, BudgetConfig, RatioDeposit};
use crate::policy::{Idempotency, RetryAfterHeader, RetryOn, RetryOnItem};
use crate::sim::UNLIMITED_WORKERS;
use crate::sim::faults::Fault;
use crate::sim::faults::{FaultKind, OutageAnswer};
use crate::sim::hedge::{HedgeConfig, HedgeDelay};
use crate::sim::workload::{PoissonRate, Workload};
use crate::sim::{
    Chain, ClientConfig, ClientOverrides, GiveUp, Model, RetryAfterHint, Scope, ServerConfig,
    Strategy,
};
use crate::time::{SimDuration, format_limit};

fn s(v: impl ToString) -> Value {
    Value::String(v.to_string())
}

fn table(pairs: Vec<(&str, Value)>) -> Value {
    Value::Table(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn count_or(v: Option<u32>, word: &str) -> Value {
    v.map_or_else(|| s(word), |n| Value::Integer(n as i64))
}

/// `workload.rate` (and `workload.spike`) as written back.
fn rate_pairs(rate: &PoissonRate) -> Vec<(&'static str, Value)> {
    match rate {
        PoissonRate::Constant(r) => vec![("rate", Value::Float(*r))],
        PoissonRate::Spike {
            base,
            at,
            length,
            rate,
        } => vec![
            ("rate", Value::Float(*base)),
            (
                "spike",
                table(vec![
                    ("at", s(at)),
                    ("length", s(length)),
                    ("rate", Value::Float(*rate)),
                ]),
            ),
        ],
        PoissonRate::Profile(points) => vec![(
            "rate",
            Value::Array(
                points
                    .iter()
                    .map(|(t, r)| Value::Array(vec![s(t), Value::Float(*r)]))
                    .collect(),
            ),
        )],
    }
}

impl Scenario {
    /// The resolved scenario as a TOML table; `sweep` is appended as given.
    pub fn to_toml_table(&self, sweep: Option<&Value>) -> Table {
        let m = &self.model;
        let mut root = Table::new();
        root.insert("name".into(), s(&self.name));
        root.insert("description".into(), s(&self.description));
        // Above TOML's largest integer, the seed is written as its digits in quotes.
        let seed = i64::try_from(self.seed).map_or_else(|_| s(self.seed), Value::Integer);
        root.insert("seed".into(), seed);
        root.insert("horizon".into(), s(m.horizon));
        root.insert(
            "replications".into(),
            Value::Integer(self.replications as i64),
        );
        let workload = match &m.workload {
            Workload::Burst {
                clients,
                start,
                spread,
            } => table(vec![
                ("kind", s("burst")),
                ("clients", Value::Integer(*clients as i64)),
                ("start", s(start)),
                ("spread", s(spread)),
            ]),
            Workload::Poisson {
                rate,
                start,
                duration,
            } => {
                let mut pairs = vec![("kind", s("poisson"))];
                pairs.extend(rate_pairs(rate));
                pairs.extend([("start", s(start)), ("duration", s(duration))]);
                table(pairs)
            }
            Workload::Closed {
                clients,
                think,
                start,
            } => table(vec![
                ("kind", s("closed")),
                ("clients", Value::Integer(*clients as i64)),
                ("think", s(think)),
                ("start", s(start)),
            ]),
            Workload::PoissonClients {
                clients,
                rate,
                start,
                duration,
            } => {
                let mut pairs = vec![
                    ("kind", s("poisson_clients")),
                    ("clients", Value::Integer(*clients as i64)),
                ];
                pairs.extend(rate_pairs(rate));
                pairs.extend([("start", s(start)), ("duration", s(duration))]);
                table(pairs)
            }
        };
        root.insert("workload".into(), workload);
        if let Some(chain) = &m.chain {
            root.insert("layers".into(), layers(m, chain));
        } else {
            root.insert("server".into(), server_table(&m.server));
        }
        root.insert(
            "network".into(),
            table(vec![("latency", m.latency.to_toml())]),
        );
        root.insert("client".into(), client_table(&m.client));
        let d = self.backoff_defaults;
        root.insert(
            "backoff".into(),
            table(vec![
                (
                    "strategies",
                    Value::Array(self.strategies.iter().map(|st| strategy(st, &d)).collect()),
                ),
                ("base", s(SimDuration::from(d.base))),
                ("multiplier", Value::Float(d.multiplier)),
                ("cap", s(SimDuration::from(d.cap))),
                ("growth", Value::Float(d.growth)),
                ("factor", Value::Float(d.factor)),
            ]),
        );
        if m.chain.is_none() {
            root.insert("faults".into(), faults_list(&m.faults));
        }
        root.insert("output".into(), table(vec![("bucket", s(m.bucket))]));
        root.insert(
            "recovery".into(),
            table(vec![
                ("window", s(m.recovery.window)),
                ("tolerance", Value::Float(m.recovery.tolerance)),
            ]),
        );
        if let Some(x) = self.min_success {
            root.insert(
                "recommend".into(),
                table(vec![("min_success", Value::Float(x))]),
            );
        }
        if let Some(sweep) = sweep {
            root.insert("sweep".into(), sweep.clone());
        }
        root
    }

    /// The resolved text of what the runs depend on: [`Scenario::to_toml`] without what only
    /// reading the results uses (`[recommend]`, and the sweep's `world` and `choice` lists).
    /// The journal's fingerprint hashes it, so declaring those never invalidates a journal
    /// (`--resume`, `merge`), and a scenario without them hashes as before they existed.
    pub fn to_toml_for_runs(&self, sweep: Option<&Value>) -> String {
        let mut sweep = sweep.cloned();
        if let Some(Value::Table(t)) = &mut sweep {
            t.remove(super::roles::WORLD);
            t.remove(super::roles::CHOICE);
        }
        let runs = Scenario {
            min_success: None,
            ..self.clone()
        };
        runs.to_toml(sweep.as_ref())
    }

    /// The resolved scenario as TOML text.
    pub fn to_toml(&self, sweep: Option<&Value>) -> String {
        toml::to_string(&self.to_toml_table(sweep))
            .unwrap_or_else(|e| format!("# could not write the scenario: {e}\n"))
    }
}

/// A breaker table with every key.
fn breaker(b: &BreakerConfig, scope: Scope) -> Value {
    table(vec![
        ("failure_ratio", Value::Float(b.failure_ratio)),
        ("min_requests", Value::Integer(b.min_requests as i64)),
        ("window", s(SimDuration::from(b.window))),
        ("open_for", s(SimDuration::from(b.open_for))),
        ("scope", s(scope.name())),
    ])
}

/// A throttle table with every key.
fn throttle(t: &ThrottleConfig, scope: Scope) -> Value {
    table(vec![
        ("k", Value::Float(t.k)),
        ("window", s(SimDuration::from(t.window))),
        ("scope", s(scope.name())),
    ])
}

/// An adaptive rate limiter table with every key.
fn adaptive_rate(r: &AdaptiveRateConfig, scope: Scope) -> Value {
    table(vec![
        ("beta", Value::Float(r.beta)),
        ("scale", Value::Float(r.scale)),
        ("smoothing", Value::Float(r.smoothing)),
        ("bucket", s(SimDuration::from(r.bucket))),
        ("min_fill_rate", Value::Float(r.min_fill_rate)),
        ("max_rate_scale", Value::Float(r.max_rate_scale)),
        ("scope", s(scope.name())),
    ])
}

/// A budget table: its kind, scope and every parameter.
fn budget(b: &BudgetConfig, scope: Scope) -> Value {
    let mut pairs = vec![("kind", s(b.kind())), ("scope", s(scope.name()))];
    match *b {
        BudgetConfig::TokenBucket {
            capacity,
            retry_cost,
            timeout_cost,
            throttling_cost: _,
            success_refund,
        } => pairs.extend([
            ("capacity", Value::Integer(capacity as i64)),
            ("retry_cost", Value::Integer(retry_cost as i64)),
            ("timeout_cost", Value::Integer(timeout_cost as i64)),
            ("success_refund", Value::Integer(success_refund as i64)),
        ]),
        BudgetConfig::Ratio {
            percent,
            min_per_sec,
            window,
            deposit,
        } => {
            pairs.extend([
                ("percent", Value::Float(percent)),
                ("min_per_sec", Value::Float(min_per_sec)),
                ("window", s(SimDuration::from(window))),
            ]);
            // Only when not the default, as `throttling_cost` below.
            if deposit != RatioDeposit::Request {
                pairs.push(("deposit", s(deposit.name())));
            }
        }
        BudgetConfig::Grpc {
            max_tokens,
            token_ratio,
        } => pairs.extend([
            ("max_tokens", Value::Float(max_tokens)),
            ("token_ratio", Value::Float(token_ratio)),
        ]),
        BudgetConfig::Adaptive(a) => pairs.extend([
            ("size", Value::Float(a.size)),
            ("fill", Value::Float(a.fill)),
        ]),
        BudgetConfig::RetryBreaker(r) => pairs.push(("ratio", Value::Float(r.ratio))),
        BudgetConfig::Concurrency {
            percent,
            min_concurrency,
        } => pairs.extend([
            ("percent", Value::Float(percent)),
            (
                "min_concurrency",
                Value::Integer(i64::from(min_concurrency)),
            ),
        ]),
    }
    // Written only when it differs from its default, `retry_cost`: the resolved files of
    // earlier releases (and the journals that hold them) stay what this one writes.
    if let BudgetConfig::TokenBucket {
        retry_cost,
        throttling_cost,
        ..
    } = *b
        && throttling_cost != retry_cost
    {
        pairs.push(("throttling_cost", Value::Integer(throttling_cost as i64)));
    }
    table(pairs)
}

/// A strategy as a bare name when it is the plain jitter with the shared keys, else a table
/// (with its client overrides, if any).
fn strategy(st: &Strategy, shared: &BackoffParams) -> Value {
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

/// A `[server]` table with every key.
fn server_table(server: &ServerConfig) -> Value {
    match server {
        ServerConfig::Occ => table(vec![("kind", s("occ"))]),
        ServerConfig::Queue(q) => {
            let mut pairs = vec![
                ("kind", s("queue")),
                (
                    "workers",
                    count_or(
                        (q.workers != UNLIMITED_WORKERS).then_some(q.workers),
                        "unlimited",
                    ),
                ),
                ("queue", count_or(q.queue, "unbounded")),
                ("service", q.service.to_toml()),
                ("contention", s(q.contention)),
                ("overload_status", Value::Integer(q.overload_status as i64)),
                (
                    "retry_after",
                    match q.retry_after {
                        RetryAfterHint::Off => s("off"),
                        RetryAfterHint::Drain => s("drain"),
                        RetryAfterHint::Fixed(d) => s(d),
                    },
                ),
                ("drop_expired", Value::Boolean(q.drop_expired)),
            ];
            // Only when not the default (as the client's new keys).
            if q.retry_after_header != RetryAfterHeader::RetryAfter {
                pairs.push(("retry_after_header", s(q.retry_after_header.name())));
            }
            if let Some(r) = q.rate_limit {
                pairs.push((
                    "rate_limit",
                    table(vec![
                        ("rate", Value::Float(r.rate)),
                        ("burst", Value::Integer(r.burst as i64)),
                    ]),
                ));
            }
            table(pairs)
        }
    }
}

/// A `retry_on` or `throttling_on` list (a preset's written-out keys too).
pub(super) fn outcome_list(set: &RetryOn) -> Value {
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

/// A `[client]` table with every key.
fn client_table(c: &ClientConfig) -> Value {
    let mut client = vec![
        ("timeout", s(format_limit(c.timeout))),
        ("deadline", s(format_limit(c.deadline))),
        ("max_attempts", count_or(c.max_attempts, "unlimited")),
        ("retry_on", outcome_list(&c.retry_on)),
        ("retry_after", s(c.retry_after.mode.name())),
        (
            "retry_after_max",
            s(format_limit(c.retry_after.max.map(SimDuration::from))),
        ),
        (
            "idempotent",
            Value::Boolean(c.idempotency == Idempotency::Idempotent),
        ),
        (
            "idempotency_key",
            Value::Boolean(c.idempotency == Idempotency::WithKey),
        ),
        ("concurrency", count_or(c.concurrency, "unlimited")),
    ];
    // The keys of error classes and the AWS hint, only when not their defaults, so that the
    // resolved files of earlier releases (and the journals that hold them) stay unchanged.
    if c.throttling_on != throttling_default() {
        client.push(("throttling_on", outcome_list(&c.throttling_on)));
    }
    if let Some(extra) = c.retry_after.max_extra {
        client.push(("retry_after_max_extra", s(SimDuration::from(extra))));
    }
    if c.retry_after.header != RetryAfterHeader::RetryAfter {
        client.push(("retry_after_header", s(c.retry_after.header.name())));
    }
    if let Some((b, scope)) = &c.budget {
        client.push(("budget", budget(b, *scope)));
    }
    if let Some((b, scope)) = &c.breaker {
        client.push(("breaker", breaker(b, *scope)));
    }
    if let Some((t, scope)) = &c.throttle {
        client.push(("throttle", throttle(t, *scope)));
    }
    if let Some((r, scope)) = &c.adaptive_rate {
        client.push(("adaptive_rate", adaptive_rate(r, *scope)));
    }
    if let Some(h) = &c.hedging {
        client.push(("hedging", hedging(h)));
    }
    table(client)
}

/// A hedging table with every key.
fn hedging(h: &HedgeConfig) -> Value {
    let delay = match h.policy.delay {
        HedgeDelay::Fixed(d) => s(SimDuration::from(d)),
        HedgeDelay::Percentile(p) => s(format!("p{p}")),
    };
    table(vec![
        ("delay", delay),
        (
            "max_attempts",
            Value::Integer(i64::from(h.policy.max_attempts)),
        ),
        ("non_fatal", outcome_list(&h.policy.non_fatal)),
        ("cancel", s(h.cancel.name())),
    ])
}

/// A list of fault windows, every key of each.
fn faults_list(faults: &[Fault]) -> Value {
    let faults: Vec<Value> = faults
        .iter()
        .map(|f| {
            let mut pairs = vec![
                ("kind", s(f.kind_name())),
                ("start", s(SimDuration(f.start.as_nanos()))),
                ("end", s(SimDuration(f.end.as_nanos()))),
            ];
            match f.kind {
                FaultKind::Outage(OutageAnswer::Status(code)) => {
                    pairs.push(("status", Value::Integer(code as i64)))
                }
                FaultKind::Outage(OutageAnswer::Drop) => pairs.push(("status", s("drop"))),
                FaultKind::Outage(OutageAnswer::Reset) => pairs.push(("status", s("reset"))),
                FaultKind::Errors { share, status } => pairs.extend([
                    ("share", Value::Float(share)),
                    ("status", Value::Integer(status as i64)),
                ]),
                FaultKind::Slow { factor } => pairs.push(("factor", Value::Float(factor))),
            }
            table(pairs)
        })
        .collect();
    Value::Array(faults)
}

/// `[[layers]]`: each layer's name, server and faults, and for a calling layer its policy.
fn layers(m: &Model, chain: &Chain) -> Value {
    let mut out = Vec::with_capacity(chain.names.len());
    for (i, name) in chain.names.iter().enumerate() {
        let (server, faults) = match i {
            0 => (&m.server, &m.faults[..]),
            _ => (&chain.hops[i - 1].server, &chain.hops[i - 1].faults[..]),
        };
        let mut pairs = vec![
            ("name", s(name)),
            ("server", server_table(server)),
            ("faults", faults_list(faults)),
        ];
        if let Some(hop) = chain.hops.get(i) {
            let p = hop.backoff.params();
            pairs.extend([
                ("client", client_table(&hop.client)),
                (
                    "backoff",
                    table(
                        backoff_pairs(p)
                            .into_iter()
                            .filter(|(k, _)| *k == "jitter" || hop.backoff_keys.contains(k))
                            .collect(),
                    ),
                ),
                ("on_give_up", s(give_up_name(hop.on_give_up))),
                ("propagate_deadline", Value::Boolean(hop.propagate_deadline)),
            ]);
        }
        out.push(table(pairs));
    }
    Value::Array(out)
}

/// A backoff's keys: its jitter and every parameter.
fn backoff_pairs(p: &BackoffParams) -> Vec<(&'static str, Value)> {
    vec![
        ("jitter", s(p.jitter.name())),
        ("base", s(SimDuration::from(p.base))),
        ("multiplier", Value::Float(p.multiplier)),
        ("cap", s(SimDuration::from(p.cap))),
        ("growth", Value::Float(p.growth)),
        ("factor", Value::Float(p.factor)),
    ]
}

fn give_up_name(g: GiveUp) -> &'static str {
    match g {
        GiveUp::Pass => "pass",
        GiveUp::DoNotRetry => "do_not_retry",
    }
}

/// The client keys a strategy (or one of its layer overrides) sets.
fn override_pairs(c: &ClientOverrides, pairs: &mut Vec<(&str, Value)>) {
    if let Some(max) = c.max_attempts {
        pairs.push(("max_attempts", count_or(max, "unlimited")));
    }
    if let Some(b) = &c.budget {
        pairs.push((
            "budget",
            b.as_ref()
                .map_or_else(|| s("off"), |(b, scope)| budget(b, *scope)),
        ));
    }
    if let Some(t) = &c.throttle {
        pairs.push((
            "throttle",
            t.as_ref()
                .map_or_else(|| s("off"), |(t, scope)| throttle(t, *scope)),
        ));
    }
    if let Some(b) = &c.breaker {
        pairs.push((
            "breaker",
            b.as_ref()
                .map_or_else(|| s("off"), |(b, scope)| breaker(b, *scope)),
        ));
    }
    if let Some(r) = &c.adaptive_rate {
        pairs.push((
            "adaptive_rate",
            r.as_ref()
                .map_or_else(|| s("off"), |(r, scope)| adaptive_rate(r, *scope)),
        ));
    }
    if let Some(h) = &c.hedging {
        pairs.push(("hedging", h.as_ref().map_or_else(|| s("off"), hedging)));
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
