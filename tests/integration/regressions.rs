//! Bugs found in review, each pinned by the smallest scenario that showed it.

use jitterlab::metric::Metric;
use jitterlab::scenario::ScenarioDoc;

use crate::common::{doc, execute, metric, plan};

/// A closed-loop client's next request once matched events left over from its previous
/// request (a pending timer, an old answer), because attempts were named by their number
/// within a request. One client, constant 50 ms service, 100 ms timeout: every request must
/// succeed in exactly 50 ms.
#[test]
fn closed_loop_requests_ignore_events_of_earlier_requests() {
    let text = r#"
        horizon = "10s"
        replications = 1
        [workload]
        kind = "closed"
        clients = 1
        think = "1ms"
        [server]
        workers = 1
        service = { dist = "constant", mean = "50ms" }
        [client]
        timeout = "100ms"
        max_attempts = 1
        [backoff]
        strategies = ["full"]
    "#;
    for sets in [
        &[][..],
        &["network.latency={ dist = \"constant\", mean = \"5ms\" }"][..],
    ] {
        let p = plan(&doc(text, sets));
        let records = execute(&p);
        let get = |m: Metric| metric(&p, &records, 0, "full", m)[0];
        let (requests, succeeded, unfinished) = (
            get(Metric::Requests),
            get(Metric::Succeeded),
            get(Metric::Unfinished),
        );
        assert!(requests > 150.0, "{sets:?}: {requests} requests");
        assert_eq!(
            succeeded + unfinished,
            requests,
            "{sets:?}: every finished request succeeds"
        );
        assert_eq!(get(Metric::GaveUpAttempts), 0.0, "{sets:?}");
        // 50 ms of service (+ 10 ms of network), as HDR reports it (3 significant digits).
        let expected = if sets.is_empty() { 50.0 } else { 60.0 };
        for m in [Metric::LatencyP50Ms, Metric::LatencyMaxMs] {
            assert!(
                (get(m) - expected).abs() < 0.1,
                "{sets:?}: {m} = {}",
                get(m)
            );
        }
        assert_eq!(get(Metric::WastedWorkShare), 0.0, "{sets:?}");
    }
}

/// Zero-latency detection missed `normal_abs` with mean and sd 0: with jitter `none` and no
/// attempt limit the run never advanced its clock.
#[test]
fn zero_normal_latency_with_unlimited_immediate_retries_is_refused() {
    let text = r#"
        [workload]
        clients = 1
        [network]
        latency = { dist = "normal_abs", mean = "0ms", sd = "0ms" }
        [client]
        max_attempts = "unlimited"
        [backoff]
        strategies = ["none"]
        [[faults]]
        kind = "outage"
        start = "0s"
        end = "5s"
    "#;
    let err = ScenarioDoc::parse(text, "t.toml", "t")
        .and_then(|d| d.base())
        .expect_err("must be refused");
    assert!(err.to_string().contains("client.max_attempts"), "{err}");
}

/// A bucket far finer than the horizon once allowed gigabytes of time series.
#[test]
fn time_series_size_is_bounded() {
    let one = ScenarioDoc::parse(
        "horizon = \"10s\"\n[output]\nbucket = \"1us\"\n",
        "t.toml",
        "t",
    )
    .and_then(|d| d.base())
    .expect_err("10 million buckets in one run");
    assert!(one.to_string().contains("output.bucket"), "{one}");
    let sweep = "horizon = \"100s\"\n[output]\nbucket = \"200us\"\n[sweep]\n\"workload.clients\" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
    let d = ScenarioDoc::parse(sweep, "t.toml", "t").expect("parses");
    let err = jitterlab::sweep::Plan::new(d.sweep().expect("sweep"), d.points().expect("points"))
        .expect_err("20 million and more buckets in all");
    assert!(err.to_string().contains("output.bucket"), "{err}");
}
