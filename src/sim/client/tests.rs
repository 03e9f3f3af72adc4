//! The clients' tests: the request state machine, its guards and hedged copies.

use super::*;
use crate::backoff::Jitter;
use crate::rng::StreamKind;
use crate::sim::hedge::{Cancel, CopyNext};

#[test]
fn a_client_is_one_cache_line() {
    // A field more and a million clients need twice the lines (and 64 MB more).
    assert_eq!(std::mem::size_of::<Client>(), 64);
    assert_eq!(std::mem::align_of::<Client>(), 64);
}

/// Two idle clients with unlimited attempts and a constant 1 ms backoff.
fn clients() -> Clients {
    clients_with(ClientConfig::bare(None))
}

#[test]
fn the_ledger_refuses_a_second_ending_and_a_second_beginning() {
    let mut c = clients();
    assert_eq!(c.in_flight(), 0);
    assert_eq!(c.end(0), None, "an idle client has nothing to end");
    assert!(c.begin(0, SimTime::ZERO));
    assert!(!c.begin(0, SimTime::ZERO), "a request is already in flight");
    assert_eq!(c.in_flight(), 1);
    assert!(matches!(
        c.launch(0, SimTime::ZERO),
        Launch::Sent { tag: 1, .. }
    ));
    let ended = c.end(0).expect("the request in flight ends");
    assert_eq!((ended.attempts, ended.number), (1, 1));
    assert_eq!(c.end(0), None, "a request ends once");
    assert_eq!(c.in_flight(), 0);
}

#[test]
fn the_last_tag_ends_the_request_instead_of_wrapping() {
    let mut c = clients();
    c.clients[1].sends = u32::MAX - 1;
    assert!(c.begin(1, SimTime::ZERO));
    let sent = c.launch(1, SimTime::ZERO);
    assert_eq!(
        sent,
        Launch::Sent {
            tag: u32::MAX,
            timeout: None
        }
    );
    let next = c.conclude(1, SimTime::ZERO, Outcome::Status(503), None);
    assert!(matches!(next, Next::Sleep(_)));
    assert_eq!(
        c.launch(1, SimTime::ZERO),
        Launch::Refused(Ending::GaveUpAttempts)
    );
    assert!(
        !c.awaits(1, 0),
        "tag 0 of a wrapped counter is never awaited"
    );
}

/// Clients under `config` (a constant 1 ms backoff), two of them.
fn clients_with(config: ClientConfig) -> Clients {
    let ms = SimDuration::from_millis(1);
    let policy = config.retry_policy(Backoff::new(Jitter::Constant, ms, 2.0, ms).unwrap());
    Clients::new(
        &config,
        policy,
        (
            StreamFamily::new(1, 0, StreamKind::Jitter),
            StreamFamily::new(1, 0, StreamKind::Throttle),
        ),
        2,
        2,
    )
}

/// A shared token bucket of 10 (a retry costs 5) and a shared breaker.
fn budget_and_breaker(min_requests: u32) -> ClientConfig {
    ClientConfig {
        budget: Some((
            BudgetConfig::TokenBucket {
                capacity: 10,
                retry_cost: 5,
                timeout_cost: 5,
                throttling_cost: 5,
                success_refund: 0,
            },
            Scope::Shared,
        )),
        breaker: Some((
            BreakerConfig {
                failure_ratio: 1.0,
                min_requests,
                window: std::time::Duration::from_secs(10),
                open_for: std::time::Duration::from_secs(1),
            },
            Scope::Shared,
        )),
        ..ClientConfig::bare(None)
    }
}

/// A shared concurrency budget (Envoy's 20 %, at least 3) over `n` clients, each with a
/// request whose first attempt is out: its limit is then max(3, ⌊n / 5⌋).
fn envoy_cluster(n: u32) -> Clients {
    let ms = SimDuration::from_millis(1);
    let config = ClientConfig {
        budget: Some((BudgetConfig::concurrency(), Scope::Shared)),
        ..ClientConfig::bare(None)
    };
    let policy = config.retry_policy(Backoff::new(Jitter::Constant, ms, 2.0, ms).unwrap());
    let streams = (
        StreamFamily::new(1, 0, StreamKind::Jitter),
        StreamFamily::new(1, 0, StreamKind::Throttle),
    );
    let mut c = Clients::new(&config, policy, streams, n, n);
    for i in 0..n {
        assert!(c.begin(i, SimTime::ZERO));
        assert!(matches!(c.launch(i, SimTime::ZERO), Launch::Sent { .. }));
    }
    c
}

#[test]
fn a_shared_concurrency_budget_counts_the_clusters_attempts_in_flight() {
    // Hand-computed: 100 attempts out; each failure ends one and asks for a retry. The
    // k-th asks with 100 - k active and k - 1 retries in flight: allowed while k - 1 <
    // max(3, ⌊(100 - k) / 5⌋): k = 16 (15 < 16) is, k = 17 (16 < ⌊83 / 5⌋ = 16) is not.
    let mut c = envoy_cluster(100);
    let now = SimTime::ZERO;
    let granted = (0..100)
        .take_while(|&i| {
            matches!(
                c.conclude(i, now, Outcome::Status(503), None),
                Next::Sleep(_)
            )
        })
        .count();
    assert_eq!(granted, 16);
    assert_eq!(c.guards.budgets[0].max_concurrent_retries(), Some(16));
    // The 16 retries go out: 83 + 16 = 99 active, limit ⌊99 / 5⌋ = 19, three places free.
    for i in 0..16 {
        assert!(matches!(c.launch(i, now), Launch::Sent { .. }));
    }
    assert_eq!(tokens(&c), 3.0);
    // A retry that fails frees its place (98 active, 15 in flight, limit 19), and its own
    // next retry takes one.
    assert!(matches!(
        c.conclude(0, now, Outcome::Status(503), None),
        Next::Sleep(_)
    ));
    assert_eq!(tokens(&c), 3.0);
    assert!(matches!(
        c.conclude(1, now, Outcome::Success, None),
        Next::End(Ending::Succeeded)
    ));
    assert_eq!(tokens(&c), 4.0, "97 active, 15 in flight, limit 19");
}

fn tokens(c: &Clients) -> f64 {
    c.guards.budgets[0].available(std::time::Duration::ZERO)
}

/// The engine's books in the simulator: a retry the breaker would refuse is not slept for
/// (the request ends at once, as the executor's call does) and costs no token; a retry
/// refused as it leaves (the breaker opened meanwhile) gives its token back.
#[test]
fn a_retry_the_breaker_refuses_costs_no_token() {
    // The breaker opens on the first failure: the retry is never scheduled.
    let mut c = clients_with(budget_and_breaker(1));
    assert!(c.begin(0, SimTime::ZERO));
    assert!(matches!(c.launch(0, SimTime::ZERO), Launch::Sent { .. }));
    let next = c.conclude(0, SimTime::ZERO, Outcome::Status(503), None);
    assert_eq!(next, Next::End(Ending::RejectedByBreaker));
    assert_eq!(tokens(&c), 10.0);
    // Two failures open it: client 0's retry is granted, then refused as it leaves.
    let mut c = clients_with(budget_and_breaker(2));
    for client in [0, 1] {
        assert!(c.begin(client, SimTime::ZERO));
        assert!(matches!(
            c.launch(client, SimTime::ZERO),
            Launch::Sent { .. }
        ));
    }
    let next = c.conclude(0, SimTime::ZERO, Outcome::Status(503), None);
    assert_eq!(next, Next::Sleep(SimDuration::from_millis(1)));
    assert_eq!(tokens(&c), 5.0);
    let next = c.conclude(1, SimTime::ZERO, Outcome::Status(503), None);
    assert_eq!(next, Next::End(Ending::RejectedByBreaker));
    let at = SimTime::ZERO + SimDuration::from_millis(1);
    assert_eq!(c.launch(0, at), Launch::Refused(Ending::RejectedByBreaker));
    assert_eq!(tokens(&c), 10.0, "both tokens back");
}

/// One hedge after 4 ms, 503 non-fatal: a hedged client of `budget` (shared).
fn hedged_with(budget: BudgetConfig) -> ClientConfig {
    ClientConfig {
        budget: Some((budget, Scope::Shared)),
        hedging: Some(HedgeConfig {
            policy: crate::policy::HedgingPolicy::fixed(Duration::from_millis(4))
                .non_fatal(RetryOn::none().with_status(503).unwrap()),
            cancel: Cancel::Waiting,
        }),
        ..ClientConfig::bare(None)
    }
}

/// Client 0 begins a request and sends its first copy at `now`: its tag.
fn first_copy(c: &mut Clients, now: SimTime) -> u32 {
    assert!(c.begin(0, now));
    match c.launch(0, now) {
        Launch::Sent { tag, .. } => tag,
        refused => panic!("{refused:?}"),
    }
}

#[test]
fn a_concurrency_budget_frees_a_hedge_when_its_request_ends() {
    // Envoy's budget allows max(3, 20 % of active) retries in flight. One client, ten
    // requests one after the other, each hedged and won by its first copy (the hedge is
    // cancelled): every hedge is allowed, since the last one is no longer in flight.
    let mut c = clients_with(hedged_with(BudgetConfig::concurrency()));
    for k in 0..10 {
        let now = SimTime::ZERO + SimDuration::from_millis(10 * k);
        let first = first_copy(&mut c, now);
        let hedge = c.launch_copy(0, now + SimDuration::from_millis(4));
        assert!(hedge.is_ok(), "request {k}: {hedge:?}");
        let done = now + SimDuration::from_millis(5);
        assert_eq!(
            c.conclude_copy(0, first, done, Outcome::Success, None),
            CopyNext::End(Ending::Succeeded)
        );
        assert!(c.end(0).is_some());
        assert_eq!(tokens(&c), 3.0, "request {k}: nothing left in flight");
    }
}

#[test]
fn a_ratio_budget_counting_successes_counts_a_hedged_success() {
    // 100 % of the requests that succeeded, no reserve: the first request's hedge is
    // refused (no success yet), the second's allowed by the first's success.
    let budget = BudgetConfig::Ratio {
        percent: 100.0,
        min_per_sec: 0.0,
        window: std::time::Duration::from_secs(10),
        deposit: crate::policy::RatioDeposit::Success,
    };
    let mut c = clients_with(hedged_with(budget));
    let at = |ms| SimTime::ZERO + SimDuration::from_millis(ms);
    let first = first_copy(&mut c, at(0));
    assert_eq!(c.launch_copy(0, at(4)), Err(Ending::GaveUpBudget));
    let next = c.conclude_copy(0, first, at(5), Outcome::Success, None);
    assert_eq!(next, CopyNext::End(Ending::Succeeded));
    assert!(c.end(0).is_some());
    first_copy(&mut c, at(10));
    assert!(c.launch_copy(0, at(14)).is_ok(), "one success deposited");
}

#[test]
fn a_hedge_the_breaker_refuses_gives_its_token_back() {
    // A token bucket of 10 (a retry costs 5) and a breaker opening on two failures: both
    // first copies fail (503, non-fatal), the breaker opens, and client 0's hedge, granted
    // by the budget, is refused by the breaker: its 5 tokens go back.
    let mut config = budget_and_breaker(2);
    config.hedging = hedged_with(BudgetConfig::grpc()).hedging;
    let mut c = clients_with(config);
    let now = SimTime::ZERO;
    for client in [0, 1] {
        assert!(c.begin(client, now));
        assert!(matches!(c.launch(client, now), Launch::Sent { .. }));
    }
    for client in [0, 1] {
        let tag = c.clients[client as usize].sends;
        let next = c.conclude_copy(client, tag, now, Outcome::Status(503), None);
        assert_eq!(next, CopyNext::SendNow);
    }
    assert_eq!(c.launch_copy(0, now), Err(Ending::RejectedByBreaker));
    assert_eq!(tokens(&c), 10.0);
}

/// What the adaptive throttle counts as accepted: any answer but an overload rejection.
#[test]
fn accepts_are_answers_other_than_overload() {
    for (outcome, yes) in [
        (Outcome::Success, true),
        (Outcome::Status(500), true),
        (Outcome::Status(409), true),
        (Outcome::Status(502), true),
        (Outcome::Status(429), false),
        (Outcome::Status(503), false),
        (Outcome::Timeout, false),
        (Outcome::Connection, false),
        (Outcome::Fatal, false),
        (Outcome::Invalid, false),
    ] {
        assert_eq!(accepted(outcome), yes, "{outcome:?}");
    }
}

/// The client array is touched on nearly every event: keep a client small.
#[test]
fn a_client_fits_in_80_bytes() {
    assert!(
        std::mem::size_of::<super::Client>() <= 80,
        "{}",
        std::mem::size_of::<super::Client>()
    );
}
