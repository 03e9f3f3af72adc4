//! Error classes in the simulator: a throttling answer's own backoff and budget cost, and a
//! Retry-After heard only in the header the client reads.

use jitterlab::metric::Metric;

use crate::common::{doc, execute, plan};

/// 1000 clients each send one request into an outage longer than the run that answers
/// `status`; each request may retry once, and a shared AWS 2026 token bucket (500 tokens, 14
/// per retry, 5 per throttling retry) pays for the retries.
fn outage(status: u16) -> String {
    format!(
        r#"
        horizon = "60s"
        replications = 1
        [workload]
        kind = "burst"
        clients = 1000
        spread = "1s"
        [server]
        workers = 100
        [client]
        max_attempts = 2
        budget = {{ kind = "token_bucket", retry_cost = 14, timeout_cost = 14, throttling_cost = 5 }}
        [backoff]
        strategies = ["full", {{ name = "unbudgeted", jitter = "full", budget = "off" }}]
        [[faults]]
        kind = "outage"
        start = "0s"
        end = "100s"
        status = {status}
        "#
    )
}

fn retries(text: &str, strategy: &str) -> f64 {
    let p = plan(&doc(text, &[]));
    let r = execute(&p);
    let get = |m| crate::common::metric(&p, &r, 0, strategy, m)[0];
    get(Metric::Attempts) - get(Metric::Requests)
}

#[test]
fn an_outage_longer_than_the_run_gets_quota_over_cost_retries() {
    // floor(500 / 14) = 35 transient retries, 500 / 5 = 100 throttling ones.
    assert_eq!(retries(&outage(503), "full"), 35.0);
    assert_eq!(retries(&outage(429), "full"), 100.0);
    // Without the budget every request retries once.
    assert_eq!(retries(&outage(503), "unbudgeted"), 1000.0);
}

/// A rate-limited server answering 429 with a hint in `header`; four readers of it.
fn limited(header: &str) -> String {
    format!(
        r#"
        horizon = "30s"
        replications = 2
        [workload]
        kind = "burst"
        clients = 300
        spread = "100ms"
        [server]
        workers = 100
        rate_limit = {{ rate = 50.0, burst = 10 }}
        retry_after_header = "{header}"
        [client]
        max_attempts = 6
        timeout = "off"
        [backoff]
        base = "10ms"
        cap = "100ms"
        strategies = [
            {{ name = "standard", jitter = "full" }},
            {{ name = "amz", jitter = "full", retry_after_header = "x-amz-retry-after" }},
            {{ name = "ignoring", jitter = "full", retry_after = "ignore" }},
        ]
        "#
    )
}

fn all(text: &str, strategy: &str) -> Vec<f64> {
    let p = plan(&doc(text, &[]));
    let r = execute(&p);
    [Metric::Attempts, Metric::Succeeded, Metric::GaveUpAttempts]
        .into_iter()
        .flat_map(|m| crate::common::metric(&p, &r, 0, strategy, m))
        .collect()
}

#[test]
fn a_hint_in_another_header_goes_unheard() {
    let standard = limited("retry-after");
    // A client reading x-amz-retry-after from a server that sends Retry-After runs exactly
    // as one that ignores hints (same streams, same sleeps) ...
    assert_eq!(all(&standard, "amz"), all(&standard, "ignoring"));
    // ... while one reading the server's header does not.
    assert_ne!(all(&standard, "standard"), all(&standard, "ignoring"));
    // And the other way round.
    let amz = limited("x-amz-retry-after");
    assert_eq!(all(&amz, "standard"), all(&amz, "ignoring"));
    assert_ne!(all(&amz, "amz"), all(&amz, "ignoring"));
}

#[test]
fn a_throttling_answer_uses_the_throttling_backoff() {
    // Every answer is a 429 without a hint; a 1 s throttling base against 10 ms makes the
    // retries of 300 requests in 30 s far fewer.
    let text = limited("retry-after").replace(
        r#"{ name = "ignoring", jitter = "full", retry_after = "ignore" },"#,
        r#"{ name = "ignoring", jitter = "full", retry_after = "ignore" },
            { name = "slow", jitter = "full", retry_after = "ignore", throttling_backoff = { base = "1s", cap = "20s" } },"#,
    );
    let p = plan(&doc(&text, &[]));
    let r = execute(&p);
    let attempts = |s| crate::common::metric(&p, &r, 0, s, Metric::Attempts)[0];
    assert!(
        attempts("slow") < attempts("ignoring"),
        "{} {}",
        attempts("slow"),
        attempts("ignoring")
    );
    // With no 429 counted as throttling, the throttling backoff is never used.
    let plain = text.replace("timeout = \"off\"", "timeout = \"off\"\nthrottling_on = []");
    let p = plan(&doc(&plain, &[]));
    let r = execute(&p);
    let get = |s| crate::common::metric(&p, &r, 0, s, Metric::Attempts);
    assert_eq!(get("slow"), get("ignoring"));
}
