//! Hedged requests against the closed form (issue 28's acceptance check): unlimited workers,
//! no network delay, exponential service of mean μ, one hedge after d, immediate
//! cancellation. The latency L = min(S₁, d + S₂) has P(L > t) = e^(−t/μ) below d and
//! e^(−(2t − d)/μ) from d on; with μ = d = 10 ms the p99 is (d + μ ln 100)/2 ≈ 28.03 ms
//! (46.05 ms without hedging), the mean μ(1 − e^(−1)/2) ≈ 8.16 ms, and the copies sent per
//! request 1 + e^(−1) ≈ 1.368 (the second copy leaves when S₁ > d).

use jitterlab::sim::{RunResult, RunSpec, run};
use jitterlab::stats::estimate;

use super::common::doc;

const MU_MS: f64 = 10.0;
const D_MS: f64 = 10.0;

const SCENARIO: &str = r#"
name = "hedge-closed-form"
horizon = "25s"
replications = 8
[workload]
kind = "poisson"
rate = 1000
duration = "20s"
[server]
workers = "unlimited"
service = { dist = "exponential", mean = "10ms" }
[client]
timeout = "off"
max_attempts = 1
[backoff]
strategies = [
  { name = "plain", jitter = "full" },
  { name = "hedged", jitter = "full", hedging = { delay = "10ms", max_attempts = 2 } },
]
"#;

/// Every replication of strategy `s` of the scenario.
fn runs(s: usize) -> Vec<RunResult> {
    let scenario = doc(SCENARIO, &[]).base().expect("the scenario is valid");
    (0..scenario.replications)
        .map(|replication| {
            let r = run(RunSpec {
                model: &scenario.model,
                strategy: &scenario.strategies[s],
                seed: scenario.seed,
                replication,
                keep_series: false,
            });
            assert!(r.check_conservation(), "{:?}", r.counts);
            assert_eq!(r.counts.succeeded, r.counts.requests, "nothing fails here");
            r
        })
        .collect()
}

/// Asserts that the replications' `values` hold `expected` within their 95 % interval plus
/// 2 % of it; returns the mean.
fn holds(what: &str, values: &[f64], expected: f64) -> f64 {
    let e = estimate(values);
    let half = e.ci95_high.expect("several replications") - e.mean;
    let slack = half + 0.02 * expected;
    assert!(
        (e.mean - expected).abs() <= slack,
        "{what}: simulated {:.4} ± {half:.4}, expected {expected:.4} (allowed {slack:.4})",
        e.mean
    );
    eprintln!(
        "{what}: simulated {:.4} ± {half:.4}, expected {expected:.4}",
        e.mean
    );
    e.mean
}

fn p99_ms(r: &RunResult) -> f64 {
    r.latency_us.value_at_quantile(0.99) as f64 / 1000.0
}

#[test]
fn one_hedge_after_the_mean_matches_the_closed_form() {
    let hedged = runs(1);
    let p99: Vec<f64> = hedged.iter().map(p99_ms).collect();
    holds("p99", &p99, (D_MS + MU_MS * 100f64.ln()) / 2.0);
    let mean: Vec<f64> = hedged.iter().map(|r| r.latency_mean_ms).collect();
    holds("mean", &mean, MU_MS * (1.0 - (-1f64).exp() / 2.0));
    let copies: Vec<f64> = hedged.iter().map(RunResult::amplification).collect();
    holds("copies per request", &copies, 1.0 + (-1f64).exp());
    // The hedging counts agree with the attempts: every copy after the first is a hedge,
    // and a hedge wins when S₂ + d < S₁ (probability e^(−1)/2 per request).
    for r in &hedged {
        let h = r.hedging.expect("a hedged run counts its hedges");
        assert_eq!(h.hedges, r.counts.attempts - r.counts.requests);
        let won = h.won_by_hedge as f64 / r.counts.requests as f64;
        assert!(
            (won - (-1f64).exp() / 2.0).abs() < 0.02,
            "won by a hedge: {won}"
        );
    }
}

#[test]
fn without_hedging_the_p99_is_the_exponential_one() {
    let plain = runs(0);
    let p99: Vec<f64> = plain.iter().map(p99_ms).collect();
    holds("p99", &p99, MU_MS * 100f64.ln());
    assert!(plain.iter().all(|r| r.hedging.is_none()));
}
