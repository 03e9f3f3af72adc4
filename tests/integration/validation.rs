//! The simulator against things outside it: closed-form queueing results for the
//! queue server, Brooker's 2015 orderings for the OCC model, and the bookkeeping invariants
//! every run must satisfy, on hand-picked and on random scenarios.
//!
//! Queueing runs use retries off (`max_attempts = 1`, `timeout = "off"`), Poisson arrivals,
//! exponential service and an instantaneous network, so `latency_mean_ms` (first send to
//! outcome, over succeeded requests) is the time in system W of an accepted request.
//!
//! Tolerance: each replication gives one estimate; across replications we take the Student-t
//! 95 % interval (`jitterlab::stats::estimate`) and accept
//! `|mean - theory| <= half-width + 2 % of theory`. The 2 % covers the small biases that
//! the interval does not: each replication starts empty (the relaxation time of these queues
//! is 0.04 to 0.3 s against 200 to 400 s of arrivals, a bias well under 0.5 %), latencies are
//! recorded in whole microseconds in a 3-significant-digit histogram (under 0.1 %), and the
//! per-replication mean is a ratio estimator (bias O(1/n), negligible at 10^5 requests).

use jitterlab::metric::Metric;
use jitterlab::scenario::ScenarioDoc;
use jitterlab::sim::{self, Model, RunResult, RunSpec, ServerConfig, Strategy as SimStrategy};
use jitterlab::stats::{Estimate, estimate};
use proptest::prelude::*;

use crate::common::{doc, est, execute, half_width, metric, plan, sim_doc, sims};

// ---------------------------------------------------------------------------------------
// Closed forms (Kleinrock, Queueing Systems vol. 1, ch. 3; Gross & Harris, Fundamentals of
// Queueing Theory, §2.2-2.5). λ arrival rate, μ service rate per worker, c workers,
// a = λ/μ offered load, ρ = a/c.
// ---------------------------------------------------------------------------------------

/// M/M/1 mean time in system: W = 1 / (μ - λ).
fn mm1_w(lambda: f64, mu: f64) -> f64 {
    1.0 / (mu - lambda)
}

/// Erlang B, the blocking probability of M/M/c/c (= M/G/c/c), by the stable recursion
/// B(0, a) = 1, B(k, a) = a B(k-1, a) / (k + a B(k-1, a)).
fn erlang_b(c: u32, a: f64) -> f64 {
    let mut b = 1.0;
    for k in 1..=c {
        b = a * b / (k as f64 + a * b);
    }
    b
}

/// Erlang C, the probability that an arrival waits in M/M/c (ρ < 1), from Erlang B:
/// C(c, a) = c B / (c - a (1 - B)).
fn erlang_c(c: u32, a: f64) -> f64 {
    let b = erlang_b(c, a);
    c as f64 * b / (c as f64 - a * (1.0 - b))
}

/// M/M/c mean wait in queue: Wq = C(c, a) / (c μ - λ).
fn mmc_wq(c: u32, lambda: f64, mu: f64) -> f64 {
    erlang_c(c, lambda / mu) / (c as f64 * mu - lambda)
}

/// M/M/c/K (K = c + waiting room): stationary p_n ∝ a^n / n! for n <= c and
/// a^c / c! · ρ^(n - c) for c < n <= K. Returns (blocking p_K, which arrivals see by PASTA;
/// mean time in system of accepted requests W = L / (λ (1 - p_K)) by Little's law).
fn mmck(c: u32, k: u32, lambda: f64, mu: f64) -> (f64, f64) {
    let a = lambda / mu;
    let rho = a / c as f64;
    let mut weights = Vec::with_capacity(k as usize + 1);
    let mut w = 1.0;
    weights.push(w);
    for n in 1..=k {
        w *= if n <= c { a / n as f64 } else { rho };
        weights.push(w);
    }
    let total: f64 = weights.iter().sum();
    let p: Vec<f64> = weights.iter().map(|w| w / total).collect();
    let blocking = p[k as usize];
    let l: f64 = p.iter().enumerate().map(|(n, p)| n as f64 * p).sum();
    (blocking, l / (lambda * (1.0 - blocking)))
}

#[test]
fn closed_forms_match_textbook_values() {
    // Erlang B tables: B(10, 8) = 0.1217, B(1, 1) = 0.5; Erlang C: C(2, 1) = 1/3.
    assert!((erlang_b(10, 8.0) - 0.12166).abs() < 1e-4);
    assert!((erlang_b(1, 1.0) - 0.5).abs() < 1e-12);
    assert!((erlang_c(2, 1.0) - 1.0 / 3.0).abs() < 1e-12);
    // M/M/1/K with K = 1 is M/M/1/1: blocking a / (1 + a), W = 1/μ.
    let (b, w) = mmck(1, 1, 1.0, 1.0);
    assert!((b - 0.5).abs() < 1e-12 && (w - 1.0).abs() < 1e-12);
    // M/M/c/K with a huge waiting room tends to M/M/c.
    let (b, w) = mmck(4, 4 + 2000, 320.0, 100.0);
    assert!(b < 1e-12);
    assert!((w - (mmc_wq(4, 320.0, 100.0) + 0.01)).abs() < 1e-9);
    assert!((mm1_w(0.7, 1.0) - 1.0 / 0.3).abs() < 1e-12);
}

/// A queue scenario with retries off. `client_extra` is appended to `[client]`.
fn queueing(
    workers: u32,
    queue: &str,
    rate: f64,
    mean_service: &str,
    duration_s: u32,
    replications: u32,
    client_extra: &str,
) -> String {
    // The horizon leaves a minute after the last arrival, far more than these queues need to
    // drain, so every request ends (asserted below).
    format!(
        r#"
name = "closed-form"
seed = 11
horizon = "{horizon}s"
replications = {replications}

[workload]
kind = "poisson"
rate = {rate:?}
duration = "{duration_s}s"

[server]
kind = "queue"
workers = {workers}
queue = {queue}
service = {{ dist = "exponential", mean = "{mean_service}" }}

[network]
latency = {{ dist = "constant", mean = "0ms" }}

[client]
timeout = "off"
max_attempts = 1
{client_extra}

[backoff]
strategies = ["full"]

[output]
bucket = "1s"
"#,
        horizon = duration_s + 60
    )
}

/// Runs a one-strategy queueing scenario; returns the plan and records, after checking that
/// every request ended, that nothing was retried and that the requests match the rate.
fn run_queueing(
    text: &str,
    rate: f64,
    duration_s: u32,
) -> (
    jitterlab::sweep::Plan,
    Vec<jitterlab::sweep::journal::UnitRecord>,
) {
    let plan = plan(&doc(text, &[]));
    let records = execute(&plan);
    for r in &records {
        let c = &r.counts;
        assert_eq!(
            c.unfinished, 0,
            "every request ends well before the horizon"
        );
        assert_eq!(
            c.attempts, c.requests,
            "retries are off: one attempt per request"
        );
        let expected = rate * duration_s as f64;
        assert!(
            (c.requests as f64 - expected).abs() < 5.0 * expected.sqrt(),
            "Poisson count {} far from {expected}",
            c.requests
        );
    }
    (plan, records)
}

fn assert_close(what: &str, e: &Estimate, theory: f64) {
    let tolerance = half_width(e) + 0.02 * theory;
    let diff = (e.mean - theory).abs();
    eprintln!(
        "{what}: theory {theory:.5}, simulated {:.5} ± {:.5} (95 % CI, n = {}), |diff| {diff:.5} <= {tolerance:.5}",
        e.mean,
        half_width(e),
        e.n
    );
    assert!(
        diff <= tolerance,
        "{what}: simulated {:.5} ± {:.5} vs theory {theory:.5} (|diff| {diff:.5} > tolerance {tolerance:.5})",
        e.mean,
        half_width(e)
    );
}

/// Shares `numerator / requests` per replication.
fn shares(
    plan: &jitterlab::sweep::Plan,
    records: &[jitterlab::sweep::journal::UnitRecord],
    numerator: Metric,
) -> Estimate {
    let num = metric(plan, records, 0, "full", numerator);
    let den = metric(plan, records, 0, "full", Metric::Requests);
    estimate(&num.iter().zip(&den).map(|(n, d)| n / d).collect::<Vec<_>>())
}

#[test]
fn mm1_mean_time_in_system() {
    // λ = 700/s, μ = 1000/s (1 ms mean service), ρ = 0.7: W = 1/(μ - λ) = 3.333 ms.
    let (lambda, mu) = (700.0, 1000.0);
    let text = queueing(1, "\"unbounded\"", lambda, "1ms", 300, 16, "");
    let (plan, records) = run_queueing(&text, lambda, 300);
    for r in &records {
        let c = &r.counts;
        assert_eq!(
            c.succeeded, c.requests,
            "an unbounded queue turns nobody away"
        );
    }
    let w = est(&plan, &records, 0, "full", Metric::LatencyMeanMs);
    assert_close("M/M/1 W (ms), rho = 0.7", &w, mm1_w(lambda, mu) * 1e3);
    // Utilisation ρ: the busy share of the single worker.
    let busy = est(&plan, &records, 0, "full", Metric::ServerBusyShare);
    // The busy share is over the whole run (arrivals plus the drain), so scale by its length.
    let makespan = est(&plan, &records, 0, "full", Metric::MakespanMs);
    let rho = busy.mean * makespan.mean / 300_000.0;
    assert!((rho - 0.7).abs() < 0.01, "utilisation {rho}");
}

#[test]
fn erlang_b_blocking_with_no_waiting_room() {
    // M/M/10/10: λ = 800/s, μ = 100/s, a = 8: B(10, 8) = 0.1217.
    // With `retry_on = []` a 503 is not retryable, so a blocked request ends as `failed`
    // (with the default list and max_attempts = 1 it would end as `gave_up_attempts`; the
    // M/M/c/K test below checks that path).
    let (lambda, mu, c) = (800.0, 100.0, 10);
    let text = queueing(c, "0", lambda, "10ms", 200, 12, "retry_on = []");
    let (plan, records) = run_queueing(&text, lambda, 200);
    for r in &records {
        let k = r.counts;
        assert_eq!(k.gave_up_attempts, 0);
        assert_eq!(k.succeeded + k.failed, k.requests);
    }
    let blocked = shares(&plan, &records, Metric::Failed);
    assert_close(
        "Erlang B(10, 8) blocking",
        &blocked,
        erlang_b(c, lambda / mu),
    );
    // Without a waiting room an accepted request never waits: W = 1/μ = 10 ms.
    let w = est(&plan, &records, 0, "full", Metric::LatencyMeanMs);
    assert_close("M/M/10/10 W (ms)", &w, 1e3 / mu);
}

#[test]
fn mmck_blocking_and_time_in_system() {
    // M/M/5/15 (5 workers, 10 waiting places): λ = 450/s, μ = 100/s, ρ = 0.9.
    // Default retry_on (503 is retryable) and max_attempts = 1: a blocked request ends as
    // `gave_up_attempts`, never `failed`.
    let (lambda, mu, c, queue) = (450.0, 100.0, 5, 10);
    let text = queueing(c, &queue.to_string(), lambda, "10ms", 200, 12, "");
    let (plan, records) = run_queueing(&text, lambda, 200);
    for r in &records {
        let k = r.counts;
        assert_eq!(k.failed, 0);
        assert_eq!(k.succeeded + k.gave_up_attempts, k.requests);
    }
    let (blocking, w) = mmck(c, c + queue, lambda, mu);
    let blocked = shares(&plan, &records, Metric::GaveUpAttempts);
    assert_close("M/M/5/15 blocking p_K", &blocked, blocking);
    let sim_w = est(&plan, &records, 0, "full", Metric::LatencyMeanMs);
    assert_close("M/M/5/15 W of accepted (ms)", &sim_w, w * 1e3);
}

#[test]
fn mmc_erlang_c_wait() {
    // M/M/4 with an unbounded queue: λ = 320/s, μ = 100/s, ρ = 0.8.
    // Wq = C(4, 3.2) / (4μ - λ) = 7.45 ms; W = Wq + 1/μ.
    let (lambda, mu, c) = (320.0, 100.0, 4);
    let text = queueing(c, "\"unbounded\"", lambda, "10ms", 400, 16, "");
    let (plan, records) = run_queueing(&text, lambda, 400);
    let latency = metric(&plan, &records, 0, "full", Metric::LatencyMeanMs);
    let wq = estimate(&latency.iter().map(|w| w - 1e3 / mu).collect::<Vec<_>>());
    // Measured Wq = latency - the *nominal* mean service; the 2 % margin is taken of W (the
    // quantity the simulation measures), since the sampled service mean adds its own noise.
    let theory_wq = mmc_wq(c, lambda, mu) * 1e3;
    let theory_w = theory_wq + 1e3 / mu;
    let tolerance = half_width(&wq) + 0.02 * theory_w;
    eprintln!(
        "M/M/4 Wq (ms): theory {theory_wq:.5}, simulated {:.5} ± {:.5}, tolerance {tolerance:.5}",
        wq.mean,
        half_width(&wq)
    );
    assert!((wq.mean - theory_wq).abs() <= tolerance);
    let w = est(&plan, &records, 0, "full", Metric::LatencyMeanMs);
    assert_close("M/M/4 W (ms)", &w, theory_w);
}

// ---------------------------------------------------------------------------------------
// Brooker 2015: optimistic-concurrency contention.
// ---------------------------------------------------------------------------------------

#[test]
fn occ_reproduces_brooker_orderings() {
    let path = crate::common::repo().join("sims/brooker-2015.toml");
    for clients in [50, 100] {
        let set = format!("workload.clients={clients}");
        // The scenario's own 100 replications: the whole thing takes well under a second.
        let plan = plan(&sim_doc(&path, &[&set]));
        let records = execute(&plan);
        let mean = |strategy: &str, name: Metric| {
            let e = est(&plan, &records, 0, strategy, name);
            eprintln!(
                "brooker {clients} clients {strategy:>12} {name:<11} {:>10.1} ± {:.1}",
                e.mean,
                half_width(&e)
            );
            e.mean
        };
        for r in &records {
            let c = &r.counts;
            assert_eq!(c.succeeded, c.requests, "every client eventually writes");
        }
        let (full, equal, no_jitter) = (
            mean("full", Metric::Attempts),
            mean("equal", Metric::Attempts),
            mean("no_jitter", Metric::Attempts),
        );
        assert!(
            full < equal && equal < no_jitter,
            "{clients} clients, total calls: full {full} < equal {equal} < no_jitter {no_jitter}"
        );
        // No backoff finishes fastest but does the most work of all.
        let (none_calls, decorrelated_calls) = (
            mean("none", Metric::Attempts),
            mean("decorrelated", Metric::Attempts),
        );
        assert!(
            none_calls > no_jitter.max(decorrelated_calls),
            "{clients} clients, total calls: none {none_calls} is the most"
        );
        let (none, decorrelated) = (
            mean("none", Metric::MakespanMs),
            mean("decorrelated", Metric::MakespanMs),
        );
        let (full, equal, no_jitter) = (
            mean("full", Metric::MakespanMs),
            mean("equal", Metric::MakespanMs),
            mean("no_jitter", Metric::MakespanMs),
        );
        assert!(
            none < decorrelated,
            "{clients} clients, completion: none {none} < decorrelated {decorrelated}"
        );
        assert!(
            full < equal && equal < no_jitter,
            "{clients} clients, completion: full {full} < equal {equal} < no_jitter {no_jitter}"
        );
        assert!(
            none < full,
            "{clients} clients, completion: none {none} < full {full}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Conservation and bookkeeping invariants.
// ---------------------------------------------------------------------------------------

/// Checks what every run must satisfy, whatever the scenario.
fn check_invariants(label: &str, model: &Model, strategy: &SimStrategy, r: &RunResult) {
    let c = &r.counts;
    // The client side this strategy ran with (its own max_attempts and budget, if any).
    let client = strategy.client_config(&model.client);
    let ctx = || format!("{label}: {c:?}");
    // Every request ended exactly once or is unfinished.
    assert!(r.check_conservation(), "conservation broken: {}", ctx());
    // A success is counted under the attempt that won; the histogram holds every success.
    assert_eq!(
        r.by_attempt.iter().sum::<u64>(),
        c.succeeded,
        "by_attempt: {}",
        ctx()
    );
    assert_eq!(r.latency_us.len(), c.succeeded, "latency count: {}", ctx());
    if let Some(last) = r.by_attempt.last() {
        assert!(*last > 0, "by_attempt has a trailing zero: {}", ctx());
    }
    // Requests that succeeded, failed or were stopped by the budget made at least one
    // attempt; a request out of attempts made exactly max_attempts.
    // A hedged request sends up to the hedging table's copies instead (hedging replaces retries).
    let max = match &client.hedging {
        Some(h) => Some(h.policy.max_attempts),
        None => client.max_attempts,
    };
    let floor = c.succeeded
        + c.failed
        + c.gave_up_budget
        + c.gave_up_attempts * u64::from(max.unwrap_or(1));
    assert!(c.attempts >= floor, "attempts below {floor}: {}", ctx());
    match max {
        Some(m) => {
            assert!(
                c.attempts <= c.requests * u64::from(m),
                "attempts above max: {}",
                ctx()
            );
            assert!(
                r.by_attempt.len() <= m as usize,
                "success after max_attempts: {}",
                ctx()
            );
        }
        None => assert_eq!(c.gave_up_attempts, 0, "no attempt limit: {}", ctx()),
    }
    // A hedged run: every request sends at most one first copy; a hedge wins at most once.
    if let Some(h) = r.hedging {
        assert!(
            client.hedging.is_some(),
            "hedging counts without hedging: {}",
            ctx()
        );
        assert!(h.hedges <= c.attempts, "hedges: {}", ctx());
        assert!(
            c.attempts - h.hedges <= c.requests,
            "first copies: {}",
            ctx()
        );
        assert!(
            h.won_by_hedge <= h.hedges.min(c.succeeded),
            "wins: {}",
            ctx()
        );
        assert!(h.unread_served <= c.attempts, "unread: {}", ctx());
    } else {
        assert!(
            client.hedging.is_none(),
            "a hedged run without counts: {}",
            ctx()
        );
    }
    // Endings only a configured guard can produce.
    if client.budget.is_none() {
        assert_eq!(c.gave_up_budget, 0, "no budget: {}", ctx());
    }
    if client.breaker.is_none() {
        assert_eq!(c.rejected_by_breaker, 0, "no breaker: {}", ctx());
    }
    if client.throttle.is_none() {
        assert_eq!(c.throttled, 0, "no throttle: {}", ctx());
    }
    if client.deadline.is_none() {
        assert_eq!(c.gave_up_deadline, 0, "no deadline: {}", ctx());
    }
    // Peaks: retries are a subset of arrivals, arrivals a subset of attempts.
    assert!(r.peak_retries <= r.peak_arrivals, "peaks: {}", ctx());
    assert!(
        u64::from(r.peak_arrivals) <= c.attempts,
        "peak above attempts: {}",
        ctx()
    );
    // Shares and rates.
    for (name, v) in [
        ("server_busy_share", r.server_busy_share),
        ("wasted_work_share", r.wasted_work_share),
        ("retry_after_share", r.retry_after_share),
        ("success_rate", r.success_rate()),
    ] {
        assert!((0.0..=1.0).contains(&v), "{name} = {v}: {}", ctx());
    }
    if c.requests > 0 {
        assert!(r.amplification() >= 0.0 && r.amplification().is_finite());
    }
    // Time: the clock stops at the horizon; no success took longer than the run.
    assert!(
        r.makespan.as_nanos() <= model.horizon.as_nanos(),
        "makespan: {}",
        ctx()
    );
    if c.succeeded > 0 {
        // The histogram's max is the top of its bucket: up to 0.1 % above the value.
        let max_us = r.latency_us.max() as f64;
        assert!(
            max_us <= r.makespan.as_nanos() as f64 / 1e3 * 1.001 + 1.0,
            "latency max {max_us} us beyond makespan: {}",
            ctx()
        );
    }
    // Each request starts with an event (Start or NextArrival).
    assert!(r.events >= c.requests, "events: {}", ctx());
    // The time series agrees with the counters.
    if let Some(s) = &r.series {
        let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
        let (arrivals, first, retries) =
            (sum(&s.arrivals), sum(&s.first_attempts), sum(&s.retries));
        assert_eq!(arrivals, first + retries, "series split: {}", ctx());
        assert!(arrivals <= c.attempts, "series arrivals: {}", ctx());
        assert!(first <= c.requests, "series first attempts: {}", ctx());
        assert_eq!(
            sum(&s.successes),
            c.succeeded,
            "series successes: {}",
            ctx()
        );
        assert!(sum(&s.timeouts) <= c.attempts, "series timeouts: {}", ctx());
        assert_eq!(
            s.arrivals.iter().copied().max().unwrap_or(0),
            r.peak_arrivals
        );
        assert_eq!(s.retries.iter().copied().max().unwrap_or(0), r.peak_retries);
        if model.latency.is_zero() {
            // With an instantaneous network an attempt reaches the server when it is sent.
            assert_eq!(arrivals, c.attempts, "zero latency arrivals: {}", ctx());
        }
        if let ServerConfig::Queue(q) = &model.server
            && let Some(queue) = q.queue
        {
            let most = s.in_system.iter().copied().max().unwrap_or(0);
            assert!(
                // Saturating: `workers = "unlimited"` is u32::MAX, and a wrapped sum
                // would be a capacity of less than `queue`.
                most <= q.workers.saturating_add(queue),
                "in_system {most} beyond capacity: {}",
                ctx()
            );
        }
    }
}

/// Runs every point × strategy × replication of a document and checks each run.
fn check_doc(label: &str, doc: &ScenarioDoc) -> Vec<(String, RunResult)> {
    let points = doc.points().unwrap_or_else(|e| panic!("{label}: {e}"));
    let mut out = Vec::new();
    for point in &points {
        let s = &point.scenario;
        for strategy in &s.strategies {
            for replication in 0..s.replications {
                let r = sim::run(RunSpec {
                    model: &s.model,
                    strategy,
                    seed: s.seed,
                    replication,
                    keep_series: true,
                });
                let label = format!(
                    "{label} [point {} {} rep {replication}]",
                    point.index, strategy.name
                );
                check_invariants(&label, &s.model, strategy, &r);
                out.push((label, r));
            }
        }
    }
    out
}

#[test]
fn conservation_in_every_sim_file_reduced() {
    for path in sims() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let sets: &[&str] = match name.as_str() {
            "brooker-2015" => &["workload.clients=30"],
            "poisson-overload" => &["workload.duration=2s"],
            "retry-after-herd" => &["workload.clients=400"],
            "thundering-herd" => &["workload.clients=500"],
            // A new file gets the generic reduction; if it does not apply, add a case here.
            _ => &[],
        };
        let mut all = sets.to_vec();
        all.push("replications=2");
        let runs = check_doc(&name, &sim_doc(&path, &all));
        assert!(!runs.is_empty());
    }
}

/// Small scenarios exercising every guard, fault kind, workload and server option.
const DIVERSE: &[(&str, &str)] = &[
    (
        "persistent clients: throttles and Brooker's budgets per client",
        r#"horizon = "30s"
[workload]
kind = "poisson_clients"
clients = 20
rate = 40.0
duration = "3s"
[server]
workers = 8
queue = 20
service = { dist = "exponential", mean = "20ms" }
[network]
latency = { dist = "exponential", mean = "2ms" }
[client]
timeout = "200ms"
throttle = { k = 1.5, window = "2s", scope = "client" }
[backoff]
strategies = [
  { name = "bucket", jitter = "full", max_attempts = "unlimited", budget = { kind = "adaptive" } },
  { name = "breaker", jitter = "full", budget = { kind = "retry_breaker", scope = "shared" } },
  { name = "plain", jitter = "full", max_attempts = 2, budget = "off" },
]
[[faults]]
kind = "errors"
start = "1s"
end = "2s"
share = 0.5
"#,
    ),
    (
        "token-bucket budget under overload",
        r#"horizon = "30s"
[workload]
kind = "poisson"
rate = 1500.0
duration = "3s"
[server]
workers = 20
queue = 40
service = { dist = "exponential", mean = "20ms" }
[client]
timeout = "200ms"
max_attempts = 6
budget = { kind = "token_bucket" }
"#,
    ),
    (
        "ratio and grpc budgets per client",
        r#"horizon = "30s"
[workload]
kind = "closed"
clients = 60
think = "50ms"
[server]
workers = 4
queue = 10
service = { dist = "lognormal", mean = "10ms", sd = "20ms" }
[client]
timeout = "100ms"
max_attempts = "unlimited"
deadline = "2s"
budget = { kind = "ratio", scope = "client", percent = 10.0, min_per_sec = 1.0 }
[[faults]]
kind = "errors"
start = "2s"
end = "8s"
share = 0.5
status = 503
"#,
    ),
    (
        "hedged requests with a grpc budget, a breaker, errors and a deadline",
        r#"horizon = "20s"
[workload]
kind = "poisson"
rate = 300.0
duration = "6s"
[server]
workers = 4
queue = 30
service = { dist = "exponential", mean = "10ms" }
retry_after = "drain"
[client]
timeout = "60ms"
deadline = "50ms"
budget = { kind = "grpc", max_tokens = 20.0, token_ratio = 0.1 }
breaker = { failure_ratio = 0.5, min_requests = 20, window = "1s", open_for = "300ms" }
[[faults]]
kind = "errors"
start = "1s"
end = "3s"
share = 0.6
status = 503
[backoff]
strategies = [
  { name = "fixed", jitter = "full", hedging = { delay = "8ms", max_attempts = 3, non_fatal = [503, "timeout"] } },
  { name = "p90_never", jitter = "full", hedging = { delay = "p90", max_attempts = 2, non_fatal = [503], cancel = "never" } },
]
"#,
    ),
    (
        "hedged requests, closed loop, concurrency budget and throttle per client",
        r#"horizon = "10s"
[workload]
kind = "closed"
clients = 40
think = "20ms"
[server]
workers = 3
queue = 10
service = { dist = "lognormal", mean = "10ms", sd = "15ms" }
[client]
timeout = "off"
budget = { kind = "concurrency", scope = "client" }
throttle = { scope = "shared" }
[[faults]]
kind = "outage"
start = "2s"
end = "4s"
status = 503
[backoff]
strategies = [
  { name = "hedged", jitter = "full", hedging = { delay = "15ms", max_attempts = 4, non_fatal = [503] } },
]
"#,
    ),
    (
        "grpc budget",
        r#"horizon = "20s"
[workload]
kind = "burst"
clients = 300
spread = "1s"
[server]
workers = 10
queue = 20
[client]
budget = { kind = "grpc", max_tokens = 5.0, token_ratio = 0.2 }
[[faults]]
kind = "outage"
start = "0s"
end = "2s"
"#,
    ),
    (
        "shared breaker through an outage",
        r#"horizon = "40s"
[workload]
kind = "poisson"
rate = 200.0
duration = "10s"
[server]
workers = 10
queue = 50
[client]
max_attempts = 4
breaker = { failure_ratio = 0.5, min_requests = 10, window = "1s", open_for = "2s" }
[[faults]]
kind = "outage"
start = "1s"
end = "4s"
status = 503
"#,
    ),
    (
        "per-client breaker, closed loop, reset outage",
        r#"horizon = "20s"
[workload]
kind = "closed"
clients = 30
think = "100ms"
[server]
workers = 5
[client]
max_attempts = 3
breaker = { min_requests = 2, window = "2s", open_for = "1s", scope = "client" }
[[faults]]
kind = "outage"
start = "2s"
end = "6s"
status = "reset"
"#,
    ),
    (
        "concurrency limit, no timeout, slow fault",
        r#"horizon = "60s"
[workload]
kind = "burst"
clients = 400
spread = "500ms"
[server]
workers = 8
queue = 5
service = { dist = "constant", mean = "5ms" }
[client]
timeout = "off"
max_attempts = 5
concurrency = 10
[[faults]]
kind = "slow"
start = "0s"
end = "3s"
factor = 4.0
"#,
    ),
    (
        "concurrency limit with a deadline shorter than the queue",
        r#"horizon = "30s"
[workload]
kind = "burst"
clients = 500
[server]
workers = 2
queue = "unbounded"
service = { dist = "exponential", mean = "20ms" }
[client]
timeout = "500ms"
deadline = "1s"
concurrency = 3
"#,
    ),
    (
        "dropped answers with and without a timeout",
        r#"horizon = "20s"
[workload]
kind = "poisson"
rate = 100.0
duration = "5s"
[network]
latency = { dist = "normal_abs", mean = "2ms", sd = "1ms" }
[client]
timeout = "300ms"
max_attempts = 4
[[faults]]
kind = "outage"
start = "1s"
end = "2s"
status = "drop"
[[faults]]
kind = "errors"
start = "0s"
end = "5s"
share = 0.2
status = 500
"#,
    ),
    (
        "dropped answers and no timeout leave requests unfinished",
        r#"horizon = "10s"
[workload]
kind = "burst"
clients = 50
spread = "2s"
[client]
timeout = "off"
[[faults]]
kind = "outage"
start = "500ms"
end = "1s"
status = "drop"
"#,
    ),
    (
        "deadline with Retry-After drain and spread",
        r#"horizon = "30s"
[workload]
kind = "burst"
clients = 2000
spread = "100ms"
[server]
workers = 20
queue = 100
service = { dist = "exponential", mean = "10ms" }
retry_after = "drain"
[client]
timeout = "1s"
deadline = "3s"
max_attempts = "unlimited"
retry_after = "spread"
"#,
    ),
    (
        "rate limit with 429 hints, non-idempotent requests",
        r#"horizon = "20s"
[workload]
kind = "poisson"
rate = 400.0
duration = "4s"
[server]
workers = 50
rate_limit = { rate = 200.0, burst = 20 }
[client]
idempotent = false
"#,
    ),
    (
        "rate limit, idempotency key, Retry-After ignored",
        r#"horizon = "20s"
[workload]
kind = "poisson"
rate = 400.0
duration = "4s"
[server]
workers = 50
rate_limit = { rate = 200.0, burst = 20 }
[client]
idempotent = false
idempotency_key = true
retry_after = "ignore"
"#,
    ),
    (
        "drop_expired under a herd",
        r#"horizon = "30s"
[workload]
kind = "burst"
clients = 3000
[server]
workers = 20
queue = 2000
drop_expired = true
service = { dist = "exponential", mean = "10ms" }
[client]
timeout = "200ms"
max_attempts = 5
[backoff]
strategies = ["none", "constant", "no_jitter", "full", "equal", "decorrelated", "decorrelated_v2", "proportional", "additive"]
"#,
    ),
    (
        "occ with latency, timeouts and a fault",
        r#"horizon = "60s"
[workload]
kind = "burst"
clients = 40
[server]
kind = "occ"
[network]
latency = { dist = "normal_abs", mean = "10ms", sd = "2ms" }
[client]
timeout = "30ms"
max_attempts = 20
[[faults]]
kind = "errors"
start = "0s"
end = "1s"
share = 0.3
status = 502
"#,
    ),
];

#[test]
fn conservation_in_diverse_scenarios() {
    for (label, text) in DIVERSE {
        let runs = check_doc(label, &doc(text, &["replications=2"]));
        assert!(
            runs.iter().any(|(_, r)| r.counts.requests > 0),
            "{label}: no requests"
        );
    }
}

#[test]
fn diverse_scenarios_reach_the_endings_they_are_built_for() {
    // The scenarios above are only useful if they exercise what they claim to.
    let total = |label: &str, f: fn(&RunResult) -> u64| -> u64 {
        let (_, text) = DIVERSE.iter().find(|(l, _)| *l == label).expect("label");
        check_doc(label, &doc(text, &["replications=1"]))
            .iter()
            .map(|(_, r)| f(r))
            .sum()
    };
    assert!(
        total("token-bucket budget under overload", |r| r
            .counts
            .gave_up_budget)
            > 0
    );
    assert!(
        total("shared breaker through an outage", |r| r
            .counts
            .rejected_by_breaker)
            > 0
    );
    assert!(
        total(
            "concurrency limit with a deadline shorter than the queue",
            |r| r.counts.gave_up_deadline
        ) > 0
    );
    assert!(
        total("dropped answers with and without a timeout", |r| r
            .counts
            .failed)
            > 0
    );
    assert!(
        total(
            "dropped answers and no timeout leave requests unfinished",
            |r| r.counts.unfinished
        ) > 0
    );
    assert!(
        total("rate limit with 429 hints, non-idempotent requests", |r| r
            .counts
            .failed)
            > 0
    );
    assert_eq!(
        total("rate limit, idempotency key, Retry-After ignored", |r| r
            .counts
            .failed),
        0,
        "a request with an idempotency key is retried, not failed"
    );
    assert!(total("drop_expired under a herd", |r| r.counts.gave_up_attempts) > 0);
    let hedged = "hedged requests with a grpc budget, a breaker, errors and a deadline";
    assert!(total(hedged, |r| r.counts.gave_up_deadline) > 0);
    assert!(total(hedged, |r| r.counts.gave_up_budget) > 0);
    assert!(total(hedged, |r| r.counts.rejected_by_breaker) > 0);
    assert!(total(hedged, |r| r.hedging.map_or(0, |h| h.won_by_hedge)) > 0);
    let closed = "hedged requests, closed loop, concurrency budget and throttle per client";
    assert!(total(closed, |r| r.counts.throttled) > 0);
    assert!(total(closed, |r| r.counts.gave_up_attempts) > 0);
    let persistent = "persistent clients: throttles and Brooker's budgets per client";
    assert!(total(persistent, |r| r.counts.throttled) > 0);
    assert!(total(persistent, |r| r.counts.gave_up_budget) > 0);
}

#[test]
fn concurrency_limit_bounds_attempts_at_the_server() {
    // With no attempt timeout a limiter slot is held until the answer, so the attempts at the
    // server (in_system) never exceed the limit.
    let (_, text) = DIVERSE
        .iter()
        .find(|(l, _)| l.starts_with("concurrency limit, no timeout"))
        .unwrap();
    for (label, r) in check_doc("concurrency", &doc(text, &["replications=2"])) {
        let s = r.series.as_ref().unwrap();
        let most = s.in_system.iter().copied().max().unwrap_or(0);
        assert!(
            most <= 10,
            "{label}: {most} attempts at the server with concurrency = 10"
        );
        assert!(most > 0);
    }
}

// ---------------------------------------------------------------------------------------
// Random small scenarios.
// ---------------------------------------------------------------------------------------

const JITTERS: [&str; 9] = [
    "none",
    "constant",
    "no_jitter",
    "full",
    "equal",
    "decorrelated",
    "decorrelated_v2",
    "proportional",
    "additive",
];

fn ms(max: u32) -> impl Strategy<Value = u32> {
    1..=max
}

prop_compose! {
    fn workload()(kind in 0..3u8, clients in 1..200u32, spread in 0..500u32,
                   rate in 10..400u32, duration in 100..3000u32, think in 10..500u32) -> String {
        match kind {
            0 => format!("[workload]\nkind = \"burst\"\nclients = {clients}\nspread = \"{spread}ms\"\n"),
            1 => format!("[workload]\nkind = \"poisson\"\nrate = {rate}.0\nduration = \"{duration}ms\"\n"),
            _ => format!("[workload]\nkind = \"closed\"\nclients = {}\nthink = \"{think}ms\"\n", clients / 4 + 1),
        }
    }
}

prop_compose! {
    fn server()(workers in 1..20u32, queue in prop::option::of(0..50u32), dist in 0..4u8,
                mean in ms(30), drop_expired in any::<bool>(),
                rate_limit in prop::option::of((10..500u32, 1..30u32)),
                hint in 0..3u8) -> String {
        let queue = queue.map_or("\"unbounded\"".to_string(), |q| q.to_string());
        let service = match dist {
            0 => format!("{{ dist = \"constant\", mean = \"{mean}ms\" }}"),
            1 => format!("{{ dist = \"exponential\", mean = \"{mean}ms\" }}"),
            2 => format!("{{ dist = \"lognormal\", mean = \"{mean}ms\", sd = \"{mean}ms\" }}"),
            _ => format!("{{ dist = \"normal_abs\", mean = \"{mean}ms\", sd = \"1ms\" }}"),
        };
        let hint = ["off", "drain", "300ms"][hint as usize];
        let mut s = format!("[server]\nworkers = {workers}\nqueue = {queue}\nservice = {service}\ndrop_expired = {drop_expired}\nretry_after = \"{hint}\"\n");
        if let Some((rate, burst)) = rate_limit {
            s.push_str(&format!("rate_limit = {{ rate = {rate}.0, burst = {burst} }}\n"));
        }
        s
    }
}

prop_compose! {
    fn client()(timeout in prop::option::of(5..1000u32), deadline in prop::option::of(100..5000u32),
                attempts in prop::option::of(1..8u32), budget in 0..4u8, scope in any::<bool>(),
                breaker in any::<bool>(), concurrency in prop::option::of(1..20u32),
                mode in 0..3u8, idempotent in any::<bool>()) -> String {
        let timeout = timeout.map_or("off".to_string(), |t| format!("{t}ms"));
        // Unlimited attempts only with a deadline, so a case stays small.
        let (attempts, deadline) = match (attempts, deadline) {
            (None, None) => ("6".to_string(), "off".to_string()),
            (None, Some(d)) => ("\"unlimited\"".to_string(), format!("{d}ms")),
            (Some(a), d) => (a.to_string(), d.map_or("off".to_string(), |d| format!("{d}ms"))),
        };
        let scope = if scope { "shared" } else { "client" };
        let mode = ["ignore", "at_least", "spread"][mode as usize];
        let mut s = format!("[client]\ntimeout = \"{timeout}\"\ndeadline = \"{deadline}\"\nmax_attempts = {attempts}\nretry_after = \"{mode}\"\nidempotent = {idempotent}\n");
        match budget {
            1 => s.push_str(&format!("budget = {{ kind = \"token_bucket\", scope = \"{scope}\", capacity = 20 }}\n")),
            2 => s.push_str(&format!("budget = {{ kind = \"ratio\", scope = \"{scope}\" }}\n")),
            3 => s.push_str(&format!("budget = {{ kind = \"grpc\", scope = \"{scope}\" }}\n")),
            _ => {}
        }
        if breaker {
            s.push_str(&format!("breaker = {{ min_requests = 5, window = \"1s\", open_for = \"500ms\", scope = \"{scope}\" }}\n"));
        }
        if let Some(n) = concurrency {
            s.push_str(&format!("concurrency = {n}\n"));
        }
        s
    }
}

prop_compose! {
    fn fault()(kind in 0..6u8, start in 0..4000u32, length in 1..3000u32, share in 0.0..=1.0f64,
               factor in 0.5..8.0f64) -> String {
        let window = format!("start = \"{start}ms\"\nend = \"{}ms\"\n", start + length);
        let what = match kind {
            0 => "kind = \"outage\"\nstatus = 503\n".to_string(),
            1 => "kind = \"outage\"\nstatus = \"drop\"\n".to_string(),
            2 => "kind = \"outage\"\nstatus = \"reset\"\n".to_string(),
            3 => format!("kind = \"errors\"\nshare = {share:?}\nstatus = 503\n"),
            4 => format!("kind = \"errors\"\nshare = {share:?}\nstatus = 400\n"),
            _ => format!("kind = \"slow\"\nfactor = {factor:?}\n"),
        };
        format!("[[faults]]\n{what}{window}")
    }
}

prop_compose! {
    fn scenario()(workload in workload(), server in server(), client in client(),
                  faults in prop::collection::vec(fault(), 0..3),
                  jitters in prop::sample::subsequence(JITTERS.to_vec(), 1..=2),
                  latency in prop::option::of(ms(5)), horizon in 2..12u32,
                  hedge in prop::option::of((1..60u32, 2..=5u32, any::<bool>())),
                  seed in any::<u32>()) -> String {
        // The checker refuses unlimited attempts with jitter "none" on an instantaneous
        // network (a client would retry forever at one instant): give such cases a network.
        let latency = if client.contains("\"unlimited\"") { latency.or(Some(1)) } else { latency };
        // A hedged strategy beside them where the checker allows hedging: an instant
        // network, no concurrency limiter, idempotent requests.
        let hedged = match hedge {
            Some((delay, copies, never))
                if latency.is_none()
                    && !client.contains("concurrency")
                    && !client.contains("idempotent = false") =>
            {
                let cancel = if never { "never" } else { "waiting" };
                format!(", {{ name = \"hedged\", jitter = \"full\", hedging = {{ delay = \"{delay}ms\", max_attempts = {copies}, non_fatal = [503, \"timeout\", \"connection\"], cancel = \"{cancel}\" }} }}")
            }
            _ => String::new(),
        };
        let latency = latency.map_or(
            "{ dist = \"constant\", mean = \"0ms\" }".to_string(),
            |m| format!("{{ dist = \"normal_abs\", mean = \"{m}ms\", sd = \"1ms\" }}"),
        );
        let strategies = jitters.iter().map(|j| format!("{j:?}")).collect::<Vec<_>>().join(", ") + &hedged;
        format!(
            "seed = {seed}\nhorizon = \"{horizon}s\"\nreplications = 1\n{workload}{server}[network]\nlatency = {latency}\n{client}[backoff]\nstrategies = [{strategies}]\nbase = \"10ms\"\ncap = \"500ms\"\n{}[output]\nbucket = \"50ms\"\n",
            faults.concat()
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random tiny scenarios: valid ones run without panicking, satisfy every invariant and
    /// give the same counts twice; invalid ones (a generated combination the checker refuses)
    /// are refused with an error, not a panic.
    #[test]
    fn random_scenarios_conserve_requests(text in scenario()) {
        let parsed = ScenarioDoc::parse(&text, "<proptest>", "random");
        let points = match parsed.and_then(|d| d.points()) {
            Ok(points) => points,
            // The generator stays inside the schema and avoids the one cross-key rule (see
            // `scenario()`), so a refusal is a checker or generator bug worth seeing.
            Err(e) => panic!("generated scenario refused: {e}\n{text}"),
        };
        for point in &points {
            let s = &point.scenario;
            for strategy in &s.strategies {
                let spec = RunSpec { model: &s.model, strategy, seed: s.seed, replication: 0, keep_series: true };
                let r = sim::run(spec);
                check_invariants(
                    &format!("random {}\n{text}", strategy.name),
                    &s.model,
                    strategy,
                    &r,
                );
                let again = sim::run(spec);
                prop_assert_eq!(r.counts, again.counts);
                prop_assert_eq!(r.events, again.events);
                prop_assert_eq!(r.makespan, again.makespan);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Re-synchronisation.
// ---------------------------------------------------------------------------------------

#[test]
fn retry_dispersion_separates_a_reforming_herd_from_full_jitter() {
    // The built-in default (the thundering herd after a 5 s outage), replication 0: without
    // jitter the retries come back as one wave per backoff step, with full jitter they arrive
    // nearly like independent clients. The median over the run of the trailing-second index of
    // dispersion tells them apart by orders of magnitude.
    let builtin = jitterlab::scenario::library::get(jitterlab::scenario::library::DEFAULT)
        .expect("the default is built in");
    let scenario = builtin.doc().base().unwrap();
    let median = |name: &str| {
        let strategy = scenario.strategies.iter().find(|s| s.name == name).unwrap();
        let r = sim::run(RunSpec {
            model: &scenario.model,
            strategy,
            seed: scenario.seed,
            replication: 0,
            keep_series: true,
        });
        let mut d: Vec<f64> = r
            .series
            .unwrap()
            .retry_dispersion()
            .into_iter()
            .flatten()
            .collect();
        d.sort_by(f64::total_cmp);
        d[d.len() / 2]
    };
    let (herd, full) = (median("no_jitter"), median("full"));
    assert!(herd > 1000.0, "no_jitter: {herd}");
    assert!(full < 10.0, "full: {full}");
}
