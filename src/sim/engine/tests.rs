//! Tiny scenarios with hand-computed timelines: every event's time and order, and the
//! tally they add up to.

use super::*;
use crate::backoff::{Backoff, Jitter};
use crate::policy::{RetryAfterHeader, RetryOn};
use crate::sim::client::ClientConfig;
use crate::sim::dist::Dist;
use crate::sim::model::Strategy;
use crate::sim::recovery::RecoveryConfig;
use crate::sim::run_result::Counts;
use crate::sim::server::{QueueConfig, RetryAfterHint, ServerConfig};
use crate::sim::workload::PoissonRate;

pub(super) fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

pub(super) fn constant(n: u64) -> Dist {
    Dist::Constant { mean: ms(n) }
}

/// `clients` one-shot clients all starting at time zero.
fn burst(clients: u32) -> Workload {
    Workload::Burst {
        clients,
        start: SimDuration::ZERO,
        spread: SimDuration::ZERO,
    }
}

/// `workers` serving 10 ms each (or `service`), `room` waiting places, 503 when full.
pub(super) fn queue(workers: u32, room: Option<u32>, service: u64) -> ServerConfig {
    ServerConfig::Queue(QueueConfig {
        workers,
        queue: room,
        service: constant(service),
        contention: SimDuration::ZERO,
        overload_status: 503,
        retry_after: RetryAfterHint::Off,
        retry_after_header: RetryAfterHeader::RetryAfter,
        rate_limit: None,
        drop_expired: false,
    })
}

/// A model without faults, guards or deadline; 10 ms buckets, a 60 s horizon.
fn model(workload: Workload, server: ServerConfig, latency: Dist) -> Model {
    Model {
        horizon: SimDuration::from_secs(60),
        workload,
        server,
        latency,
        client: ClientConfig::bare(Some(1)),
        faults: Vec::new(),
        bucket: ms(10),
        trigger: None,
        recovery: RecoveryConfig::default(),
        passage: Default::default(),
        chain: None,
    }
}

/// Runs `model` with a constant 10 ms backoff: every event as `(ms, event)`, and the
/// result with its time series.
fn timeline(model: &Model) -> (Vec<(u64, Event)>, RunResult) {
    let strategy = Strategy::new(
        "constant",
        Backoff::new(Jitter::Constant, ms(10), 2.0, ms(1000)).unwrap(),
    );
    let mut sim = Sim::new(RunSpec {
        model,
        strategy: &strategy,
        seed: 1,
        replication: 0,
        keep_series: true,
    });
    let mut events = Vec::new();
    while let Some((t, e)) = sim.step() {
        assert_eq!(t.as_nanos() % 1_000_000, 0, "{e:?} at {t}");
        events.push((t.as_nanos() / 1_000_000, e));
    }
    let result = sim.finish(true);
    assert!(result.check_conservation(), "{:?}", result.counts);
    assert_eq!(result.events, events.len() as u64);
    (events, result)
}

#[test]
fn one_request_served_over_the_network() {
    let mut m = model(burst(1), queue(1, Some(10), 10), constant(1));
    m.client.timeout = Some(ms(100));
    let (events, r) = timeline(&m);
    assert_eq!(
        events,
        [
            (0, Event::Start(0)),
            (1, Event::Arrive(0, 1)),
            (11, Event::ServiceDone(0)),
            (12, Event::Reply(0, 1)),
            // The timer of an answered attempt still fires, and does nothing.
            (100, Event::Timeout(0, 1)),
        ]
    );
    assert_eq!(
        r.counts,
        Counts {
            requests: 1,
            attempts: 1,
            succeeded: 1,
            ..Counts::default()
        }
    );
    assert_eq!(r.makespan, SimTime::ZERO + ms(12));
    assert_eq!(r.latency_mean_ms, 12.0);
    assert_eq!(r.by_attempt, [1]);
    // 10 ms of service in the 100 ms the run lasted.
    assert_eq!(r.server_busy_share, 0.1);
    assert_eq!(r.wasted_work_share, 0.0);
    let series = r.series.unwrap();
    assert_eq!(series.len(), 11);
    assert_eq!(series.arrivals[0], 1);
    assert_eq!(series.successes[1], 1);
    assert_eq!(series.in_system[..3], [1, 0, 0]);
}

#[test]
fn timeouts_retry_while_the_worker_serves_stale_attempts() {
    for drop_expired in [false, true] {
        let mut m = model(burst(1), queue(1, None, 50), constant(0));
        if let ServerConfig::Queue(q) = &mut m.server {
            q.drop_expired = drop_expired;
        }
        m.client.timeout = Some(ms(20));
        m.client.max_attempts = Some(3);
        let (events, r) = timeline(&m);
        let mut want = vec![
            // Attempt 1 is served at once, from 0 to 50 ms; its timer fires at 20 ms.
            (0, Event::Start(0)),
            (20, Event::Timeout(0, 1)),
            // Attempt 2 after a 10 ms sleep waits for the worker.
            (30, Event::Wake(0)),
            // Scheduled first, at 0 ms: the service ends before the timer of attempt 2.
            // Attempt 1's answer is wasted; the worker takes attempt 2, still awaited.
            (50, Event::ServiceDone(0)),
            (50, Event::Timeout(0, 2)),
            (60, Event::Wake(0)),
            // Attempt 3 times out: out of attempts.
            (80, Event::Timeout(0, 3)),
            // Attempt 2's service ends; attempt 3, which nobody awaits, is served only
            // without drop_expired.
            (100, Event::ServiceDone(0)),
        ];
        if !drop_expired {
            want.push((150, Event::ServiceDone(0)));
        }
        assert_eq!(events, want, "drop_expired = {drop_expired}");
        assert_eq!(
            r.counts,
            Counts {
                requests: 1,
                attempts: 3,
                gave_up_attempts: 1,
                ..Counts::default()
            }
        );
        assert_eq!(r.makespan, SimTime::ZERO + ms(80));
        // The worker never stopped, and all its work was for attempts nobody awaited.
        assert_eq!(r.server_busy_share, 1.0);
        assert_eq!(r.wasted_work_share, 1.0);
        assert_eq!(r.series.unwrap().timeouts.iter().sum::<u32>(), 3);
    }
}

#[test]
fn a_full_waiting_room_turns_the_third_client_away() {
    let mut m = model(burst(3), queue(1, Some(1), 10), constant(0));
    if let ServerConfig::Queue(q) = &mut m.server {
        q.retry_after = RetryAfterHint::Fixed(ms(1000));
    }
    let (events, r) = timeline(&m);
    assert_eq!(
        events,
        [
            (0, Event::Start(0)),
            (0, Event::Start(1)),
            (0, Event::Start(2)),
            (10, Event::ServiceDone(0)),
            (20, Event::ServiceDone(0)),
        ]
    );
    assert_eq!(
        r.counts,
        Counts {
            requests: 3,
            attempts: 3,
            succeeded: 2,
            gave_up_attempts: 1,
            ..Counts::default()
        }
    );
    assert_eq!(r.latency_mean_ms, 15.0);
    assert_eq!(r.makespan, SimTime::ZERO + ms(20));
    assert_eq!(r.retry_after_share, 1.0);
    assert_eq!(r.series.unwrap().rejections[0], 1);
}

#[test]
fn the_horizon_leaves_requests_unfinished() {
    let mut m = model(burst(3), queue(1, Some(1), 10), constant(0));
    m.horizon = ms(15);
    let (events, r) = timeline(&m);
    assert_eq!(events.last(), Some(&(10, Event::ServiceDone(0))));
    assert_eq!((r.counts.succeeded, r.counts.unfinished), (1, 1));
    assert_eq!(r.makespan, SimTime::ZERO + ms(10));
    // 10 ms of finished service in 15 ms.
    assert_eq!(r.server_busy_share, 10.0 / 15.0);
    // Still one attempt in service when the clock stopped.
    assert_eq!(r.series.unwrap().in_system.last(), Some(&1));
}

#[test]
fn occ_writes_race_and_the_loser_retries() {
    let mut m = model(burst(2), ServerConfig::Occ, constant(1));
    m.client.max_attempts = Some(2);
    let (events, r) = timeline(&m);
    assert_eq!(
        events,
        [
            (0, Event::Start(0)),
            (0, Event::Start(1)),
            (1, Event::Arrive(0, 1)),
            (1, Event::Arrive(1, 1)),
            (2, Event::ReadReply(0, 1)),
            (2, Event::ReadReply(1, 1)),
            // Both read version 0: client 0's write lands, client 1's gets 409.
            (3, Event::WriteArrive(0, 1)),
            (3, Event::WriteArrive(1, 1)),
            (4, Event::Reply(0, 1)),
            (4, Event::Reply(1, 1)),
            (14, Event::Wake(1)),
            (15, Event::Arrive(1, 2)),
            (16, Event::ReadReply(1, 2)),
            (17, Event::WriteArrive(1, 2)),
            (18, Event::Reply(1, 2)),
        ]
    );
    assert_eq!((r.counts.succeeded, r.counts.attempts), (2, 3));
    assert_eq!(r.by_attempt, [1, 1]);
    assert_eq!(r.latency_mean_ms, 11.0);
    assert_eq!(r.makespan, SimTime::ZERO + ms(18));
    let series = r.series.unwrap();
    assert_eq!(series.rejections.iter().sum::<u32>(), 1);
    assert_eq!((series.first_attempts[0], series.retries[1]), (2, 1));
}

/// Runs a burst of two clients for `steps` events, lets `tamper` break the bookkeeping,
/// and runs to the end.
fn tampered(steps: usize, tamper: impl FnOnce(&mut Sim)) -> RunResult {
    let mut m = model(burst(2), queue(1, None, 10), constant(1));
    m.client.max_attempts = Some(3);
    let strategy = Strategy::new(
        "constant",
        Backoff::new(Jitter::Constant, ms(10), 2.0, ms(1000)).unwrap(),
    );
    let mut sim = Sim::new(RunSpec {
        model: &m,
        strategy: &strategy,
        seed: 1,
        replication: 0,
        keep_series: false,
    });
    for _ in 0..steps {
        sim.step();
    }
    tamper(&mut sim);
    while sim.step().is_some() {}
    sim.finish(false)
}

#[test]
fn conservation_holds_untampered_and_fails_when_the_books_are_broken() {
    assert_eq!(tampered(2, |_| {}).conservation(), Ok(()));
    // A request ended twice: the ledger refuses the second ending, and says so.
    let twice = tampered(2, |sim| {
        sim.end(Edge, 0, Ending::Failed);
        sim.end(Edge, 0, Ending::Failed);
    });
    assert_eq!(twice.ledger_faults, 1);
    let e = twice.conservation().unwrap_err();
    assert!(e.contains("1 beginnings or endings refused"), "{e}");
    // A request that ends without being counted is neither ended nor unfinished.
    let lost = tampered(2, |sim| {
        sim.clients.end(1);
    });
    assert_eq!((lost.counts.requests, lost.counts.ended()), (2, 1));
    assert_eq!(
        lost.conservation(),
        Err("requests are not conserved: 2 begun, 1 ended, 0 unfinished at the horizon, 0 beginnings or endings refused by the client ledger".into())
    );
    // A client begun twice.
    let again = tampered(2, |sim| sim.begin(Edge, 0));
    assert_eq!(again.ledger_faults, 1);
    assert!(again.conservation().is_err());
}

#[test]
fn unfinished_requests_are_counted_client_by_client() {
    let mut m = model(burst(3), queue(1, None, 10), constant(0));
    m.horizon = ms(15);
    let (_, r) = timeline(&m);
    // One served, two still waiting for the worker when the clock stopped.
    assert_eq!((r.counts.succeeded, r.counts.unfinished), (1, 2));
}

#[test]
fn a_freed_limiter_slot_passes_to_the_waiting_client() {
    let mut m = model(burst(2), queue(2, None, 10), constant(0));
    m.client.concurrency = Some(1);
    let (events, r) = timeline(&m);
    assert_eq!(
        events,
        [
            (0, Event::Start(0)),
            // Client 1 finds the only slot taken and queues for it.
            (0, Event::Start(1)),
            (10, Event::ServiceDone(0)),
            (10, Event::Launch(1)),
            (20, Event::ServiceDone(0)),
        ]
    );
    assert_eq!(r.counts.succeeded, 2);
    assert_eq!(r.latency_mean_ms, 15.0);
}

// Hedged requests: hand-computed timelines.

use crate::policy::HedgingPolicy;
use crate::sim::hedge::{Cancel, HedgeConfig};

fn hedged(m: &mut Model, cancel: Cancel, non_fatal: RetryOn) {
    m.client.hedging = Some(HedgeConfig {
        policy: HedgingPolicy::fixed(ms(4).to_std()).non_fatal(non_fatal),
        cancel,
    });
}

#[test]
fn a_hedge_queued_behind_its_first_copy_is_dropped_or_served_for_nothing() {
    // One worker, 10 ms each: the hedge leaves at 4 ms and waits behind the first copy,
    // which wins at 10 ms. Cancelled, the waiting hedge is dropped; never cancelled, it
    // is served from 10 to 20 ms for nobody.
    for cancel in [Cancel::Waiting, Cancel::Never] {
        let mut m = model(burst(1), queue(1, None, 10), constant(0));
        hedged(&mut m, cancel, RetryOn::none());
        let (events, r) = timeline(&m);
        let mut want = vec![
            (0, Event::Start(0)),
            (4, Event::Hedge(0, 1)),
            (10, Event::ServiceDone(0)),
        ];
        if cancel == Cancel::Never {
            want.push((20, Event::ServiceDone(0)));
        }
        assert_eq!(events, want, "{cancel:?}");
        assert_eq!((r.counts.attempts, r.counts.succeeded), (2, 1));
        assert_eq!(r.latency_mean_ms, 10.0);
        let h = r.hedging.unwrap();
        assert_eq!((h.hedges, h.won_by_hedge), (1, 0));
        let unread = u64::from(cancel == Cancel::Never);
        assert_eq!(h.unread_served, unread);
        assert_eq!(r.wasted_work_share, unread as f64 * 0.5);
    }
}

#[test]
fn a_hedge_on_a_free_worker_wins_and_the_first_copy_is_wasted() {
    // Two workers; the first copy's service is 10 ms, so the hedge at 4 ms... is 10 ms
    // too: the first copy wins at 10, the hedge (in service) finishes at 14 for nobody.
    let mut m = model(burst(1), queue(2, None, 10), constant(0));
    hedged(&mut m, Cancel::Waiting, RetryOn::none());
    let (events, r) = timeline(&m);
    assert_eq!(
        events,
        [
            (0, Event::Start(0)),
            (4, Event::Hedge(0, 1)),
            (10, Event::ServiceDone(0)),
            (14, Event::ServiceDone(1)),
        ]
    );
    let h = r.hedging.unwrap();
    assert_eq!((h.hedges, h.won_by_hedge, h.unread_served), (1, 0, 1));
    assert_eq!(r.counts.succeeded, 1);
}

#[test]
fn a_non_fatal_failure_sends_the_hedge_at_once_and_a_fatal_one_ends_the_request() {
    let mut m = model(burst(1), queue(1, None, 10), constant(0));
    m.faults = outage();
    hedged(
        &mut m,
        Cancel::Waiting,
        RetryOn::none().with_status(503).unwrap(),
    );
    let (events, r) = timeline(&m);
    // Both copies answered 503 at t = 0: no delay waited, no copy left.
    assert_eq!(events, [(0, Event::Start(0))]);
    assert_eq!((r.counts.attempts, r.counts.gave_up_attempts), (2, 1));
    hedged(&mut m, Cancel::Waiting, RetryOn::none());
    let (_, r) = timeline(&m);
    assert_eq!((r.counts.attempts, r.counts.failed), (1, 1));
    assert_eq!(r.hedging.unwrap().hedges, 0);
}

#[test]
fn a_hedged_request_out_of_time_gives_up_on_its_deadline() {
    // Service 100 ms, a 50 ms deadline, no per-copy timeout: both copies (0 and 4 ms) are
    // cut to the deadline. The first to time out ends the request as out of time (A6:
    // the call fails at its deadline whatever is in flight), not as a fatal failure.
    let mut m = model(burst(1), queue(2, None, 100), constant(0));
    hedged(&mut m, Cancel::Waiting, RetryOn::none());
    m.client.timeout = None;
    m.client.deadline = Some(ms(50));
    let (events, r) = timeline(&m);
    assert_eq!(
        events,
        [
            (0, Event::Start(0)),
            (4, Event::Hedge(0, 1)),
            (50, Event::Timeout(0, 1)),
            (50, Event::Timeout(0, 2)),
            (100, Event::ServiceDone(0)),
            (104, Event::ServiceDone(1)),
        ]
    );
    assert_eq!((r.counts.gave_up_deadline, r.counts.failed), (1, 0));
}

#[test]
fn a_pushback_holds_the_next_copy_for_its_delay() {
    // One worker, no waiting room, 503 with Retry-After 3 ms when busy; three copies,
    // 503 non-fatal. Client 0 is served 0-10 ms; its hedge (4 ms) is pushed back, so the
    // third copy leaves at 7 ms, not at once. Client 1 is turned away at 0 and copies at
    // 3 and 6 ms (A6: the next hedge after the pushback), and gives up.
    let mut m = model(burst(2), queue(1, Some(0), 10), constant(0));
    if let ServerConfig::Queue(q) = &mut m.server {
        q.retry_after = RetryAfterHint::Fixed(ms(3));
    }
    hedged(
        &mut m,
        Cancel::Waiting,
        RetryOn::none().with_status(503).unwrap(),
    );
    m.client.hedging.as_mut().unwrap().policy.max_attempts = 3;
    let (events, r) = timeline(&m);
    assert_eq!(
        events,
        [
            (0, Event::Start(0)),
            (0, Event::Start(1)),
            (3, Event::Hedge(1, 1)),
            (4, Event::Hedge(0, 1)),
            (6, Event::Hedge(1, 2)),
            (7, Event::Hedge(0, 2)),
            (10, Event::ServiceDone(0)),
        ]
    );
    assert_eq!((r.counts.succeeded, r.counts.gave_up_attempts), (1, 1));
    assert_eq!(r.counts.attempts, 6);
    // `retry_after = "ignore"`: the copies leave at once.
    m.client.retry_after.mode = crate::policy::RetryAfterMode::Ignore;
    let (events, _) = timeline(&m);
    assert_eq!(
        events,
        [
            (0, Event::Start(0)),
            (0, Event::Start(1)),
            (4, Event::Hedge(0, 1)),
            (10, Event::ServiceDone(0)),
        ]
    );
}

#[test]
fn a_grpc_budget_below_half_sends_no_hedge() {
    // gRPC throttling, 3 tokens, every copy answered 503 (non-fatal). A failed copy takes
    // a token before the next is asked for (A6): client 0's first copy leaves 2 (above
    // half of 3), so its hedge goes and fails too (1 left, no copy left); client 1's
    // first copy leaves 0, and its hedge is refused.
    let mut m = model(burst(2), queue(1, None, 10), constant(0));
    m.faults = outage();
    m.client.budget = Some((
        BudgetConfig::Grpc {
            max_tokens: 3.0,
            token_ratio: 0.1,
        },
        Scope::Shared,
    ));
    hedged(
        &mut m,
        Cancel::Waiting,
        RetryOn::none().with_status(503).unwrap(),
    );
    let r = run_immediate(&m);
    assert_eq!(r.counts.attempts, 3);
    assert_eq!((r.counts.gave_up_attempts, r.counts.gave_up_budget), (1, 1));
    assert_eq!(r.hedging.unwrap().hedges, 1);
}

// Guards through the simulator: hand-computed runs of the throttle and Brooker's budgets.

use crate::policy::AdaptiveRateConfig;
use crate::policy::BudgetConfig;
use crate::policy::adaptive::{AdaptiveBucketConfig, RetryBreakerConfig};
use crate::policy::throttle::ThrottleConfig;
use crate::sim::client::Scope;
use crate::sim::faults::{Fault, FaultKind, OutageAnswer};
use rand::RngExt;

/// Every attempt of the whole run is answered 503 at once.
fn outage() -> Vec<Fault> {
    vec![Fault {
        kind: FaultKind::Outage(OutageAnswer::Status(503)),
        start: SimTime::ZERO,
        end: SimTime::ZERO + SimDuration::from_secs(3600),
    }]
}

/// Runs `model` with immediate retries (`jitter = "none"`), seed 1, replication 0.
pub(super) fn run_immediate(model: &Model) -> RunResult {
    let strategy = Strategy::new(
        "none",
        Backoff::new(Jitter::None, ms(10), 2.0, ms(1000)).unwrap(),
    );
    let r = run(RunSpec {
        model,
        strategy: &strategy,
        seed: 1,
        replication: 0,
        keep_series: false,
    });
    assert!(r.check_conservation(), "{:?}", r.counts);
    r
}

#[test]
fn throttle_rejects_with_the_book_probability_drawn_from_its_own_stream() {
    // Eight clients send at t = 0 over a 1 ms network into a total outage; the shared
    // throttle (K = 2) has seen no accept yet, so client i (0-based) meets i requests and
    // 0 accepts: p = i / (i + 1), one uniform drawn per client after the first.
    let mut m = model(burst(8), queue(1, None, 10), constant(1));
    m.faults = outage();
    m.client.throttle = Some((ThrottleConfig::default(), Scope::Shared));
    let r = run_immediate(&m);
    let mut rng = StreamFamily::new(1, 0, StreamKind::Throttle).get(0, 0);
    let expected = (1..8u32)
        .filter(|&i| rng.random::<f64>() < f64::from(i) / f64::from(i + 1))
        .count() as u64;
    assert!((1..7).contains(&expected), "a mixed case: {expected}");
    assert_eq!(r.counts.throttled, expected);
    // A throttled attempt is never sent; the sent ones end by the 503 (max_attempts 1).
    assert_eq!(r.counts.attempts, 8 - expected);
    assert_eq!(r.counts.gave_up_attempts, 8 - expected);
}

/// Eight clients at t = 0 into a server answering 429 to everything for an hour, 1 ms
/// each way, retries 10 ms apart, unlimited, 429 a throttling answer.
fn throttling_storm() -> Model {
    let mut m = model(burst(8), queue(1, None, 10), constant(1));
    m.faults = vec![Fault {
        kind: FaultKind::Outage(OutageAnswer::Status(429)),
        start: SimTime::ZERO,
        end: SimTime::ZERO + SimDuration::from_secs(3600),
    }];
    m.client.max_attempts = None;
    m.client.throttling_on = RetryOn::none().with_status(429).unwrap();
    m
}

#[test]
fn adaptive_rate_spaces_attempts_at_its_floor_in_a_throttling_storm() {
    // Eight clients at t = 0 into a server answering 429 to everything, 1 ms each way,
    // retries 10 ms apart and unlimited. The shared limiter (made at t = 0, 1 token/s,
    // empty) is off for the eight first attempts; their 429s at 2 ms turn it on with a
    // measured rate of 0 (no bucket closed yet), so the fill rate is the 0.5/s floor and
    // the bucket holds 0.002 tokens. At 12 ms it holds 0.007: the first retry leaves at
    // 12 ms + 0.993 / 0.5 s = 1.998 s, and one more every 2 s (W_max never tops 0.5:
    // one answer per 2 s, smoothed, times 0.7 stays under the floor): retries at
    // 1.998 + 2k s up to the 60 s horizon, k = 0..=29, 30 in all.
    let mut m = throttling_storm();
    let unlimited = run_immediate(&m).counts.attempts;
    m.client.adaptive_rate = Some((AdaptiveRateConfig::default(), Scope::Shared));
    let r = run_immediate(&m);
    assert_eq!(r.counts.attempts, 8 + 30);
    assert!(unlimited > 30_000, "{unlimited}");
    // One limiter per client: each sees only its own answers, at the same 0.5/s floor.
    m.client.adaptive_rate = Some((AdaptiveRateConfig::default(), Scope::Client));
    let own = run_immediate(&m).counts.attempts;
    assert_eq!(
        own,
        8 * (1 + 30),
        "each its own limiter: the same pace, 8 times"
    );
}

#[test]
fn adaptive_rate_waits_no_longer_than_the_deadline() {
    // As above, shared, with a 5 s deadline: tokens at 1.998 s and 3.998 s carry two
    // retries; the next is due at 5.998 s, past every request's deadline, so all eight
    // end at 5 s (gave up: deadline) without taking it, not one by one as tokens come.
    let mut m = throttling_storm();
    m.client.deadline = Some(SimDuration::from_secs(5));
    m.client.adaptive_rate = Some((AdaptiveRateConfig::default(), Scope::Shared));
    let r = run_immediate(&m);
    assert_eq!(r.counts.attempts, 8 + 2);
    assert_eq!(r.counts.gave_up_deadline, 8);
    assert_eq!(r.makespan, SimTime::ZERO + SimDuration::from_secs(5));
}

#[test]
fn throttle_of_a_healthy_backend_changes_nothing() {
    // Instant answers, all accepted: requests - 2 accepts < 0 before every attempt, so
    // nothing is rejected and no number drawn; the run is the run without a throttle.
    let mut m = model(
        Workload::Poisson {
            rate: PoissonRate::Constant(200.0),
            start: SimDuration::ZERO,
            duration: SimDuration::from_secs(5),
        },
        queue(4, None, 1),
        constant(0),
    );
    let plain = run_immediate(&m);
    m.client.throttle = Some((ThrottleConfig::default(), Scope::Client));
    let throttled = run_immediate(&m);
    assert!(plain.counts.requests > 500);
    assert_eq!(throttled.counts, plain.counts);
    assert_eq!(throttled.events, plain.events);
}

#[test]
fn adaptive_bucket_shared_by_a_burst() {
    // Ten clients begin at t = 0: ten deposits into a full bucket leave it at 5. Their
    // first attempts fail at 2 ms, in client order: clients 0-3 take a token each
    // (5 -> 1), client 4 finds exactly 1 token (not more than 1) and so do the rest. The
    // four retries fail at 4 ms with the bucket at 1: 14 attempts, all ended by the budget.
    let mut m = model(burst(10), queue(1, None, 10), constant(1));
    m.faults = outage();
    m.client.max_attempts = None;
    m.client.budget = Some((
        BudgetConfig::Adaptive(AdaptiveBucketConfig::default()),
        Scope::Shared,
    ));
    let r = run_immediate(&m);
    assert_eq!(r.counts.attempts, 14);
    assert_eq!(r.counts.gave_up_budget, 10);
}

#[test]
fn ratio_budget_counting_successes_keeps_only_its_floor_in_an_outage() {
    // 100 clients at t = 0 into a total outage, one shared ratio budget of 20 % plus 1
    // per second over 10 s. Counting requests sent: 0.2 * 100 + 10 = 30 retries. Counting
    // successes (Finagle's RequeueFilter): none succeeds, so the floor's 10 only.
    use crate::policy::RatioDeposit;
    let mut m = model(burst(100), queue(1, None, 10), constant(1));
    m.faults = outage();
    m.client.max_attempts = None;
    for (deposit, retries) in [(RatioDeposit::Request, 30), (RatioDeposit::Success, 10)] {
        let ratio = BudgetConfig::Ratio {
            percent: 20.0,
            min_per_sec: 1.0,
            window: std::time::Duration::from_secs(10),
            deposit,
        };
        m.client.budget = Some((ratio, Scope::Shared));
        let r = run_immediate(&m);
        assert_eq!(r.counts.attempts, 100 + retries, "{deposit:?}");
        assert_eq!(r.counts.gave_up_budget, 100, "{deposit:?}");
    }
}

#[test]
fn adaptive_bucket_carries_across_a_persistent_clients_requests() {
    // One persistent Poisson client, instant network and retries, every attempt failing:
    // request 1 spends the 4 tokens above 1; request 2 brings 1.1 (one retry, 0.1 left);
    // then every tenth request (12, 22, ...) is back at 1.1 and earns one retry. So R
    // requests make R + 4 + 1 + (R - 2) / 10 attempts.
    let mut m = model(
        Workload::PoissonClients {
            clients: 1,
            rate: PoissonRate::Constant(5.0),
            start: SimDuration::ZERO,
            duration: SimDuration::from_secs(20),
        },
        queue(1, None, 10),
        constant(0),
    );
    m.faults = outage();
    m.client.max_attempts = None;
    m.client.budget = Some((
        BudgetConfig::Adaptive(AdaptiveBucketConfig::default()),
        Scope::Client,
    ));
    let r = run_immediate(&m);
    let n = r.counts.requests;
    assert!(n > 50, "{n}");
    assert_eq!(r.counts.attempts, n + 5 + (n - 2) / 10);
    assert_eq!(r.counts.gave_up_budget, n);
    // Per client: two persistent clients spend two start-up allowances.
    m.workload = Workload::PoissonClients {
        clients: 2,
        rate: PoissonRate::Constant(2.5),
        start: SimDuration::ZERO,
        duration: SimDuration::from_secs(20),
    };
    let two = run_immediate(&m);
    let extra = two.counts.attempts - two.counts.requests;
    assert!(
        (8..=8 + 2 + two.counts.requests / 10).contains(&extra),
        "{extra}"
    );
}

#[test]
fn retry_breaker_counts_the_failure_before_deciding() {
    // Ten clients begin at t = 0 (10 requests); their first attempts fail at 2 ms in
    // client order. Client 0 makes it 1 failure in 10 requests: 0.1 is not above 0.1, so
    // it retries; client 1 makes it 2 / 10 and stops, as do the rest. Client 0's retry
    // fails at 4 ms (11 / 10): 11 attempts, every request ended by the breaker's budget.
    let mut m = model(burst(10), queue(1, None, 10), constant(1));
    m.faults = outage();
    m.client.max_attempts = Some(4);
    m.client.budget = Some((
        BudgetConfig::RetryBreaker(RetryBreakerConfig::default()),
        Scope::Shared,
    ));
    let r = run_immediate(&m);
    assert_eq!(r.counts.attempts, 11);
    assert_eq!(r.counts.gave_up_budget, 10);
    // Per client (the kind's default), each breaker sees 1 failure in 1 request: no retry.
    m.client.budget = Some((
        BudgetConfig::RetryBreaker(RetryBreakerConfig::default()),
        Scope::Client,
    ));
    let r = run_immediate(&m);
    assert_eq!((r.counts.attempts, r.counts.gave_up_budget), (10, 10));
}

#[test]
fn a_strategy_overrides_the_point_budget_and_attempts() {
    let mut m = model(burst(10), queue(1, None, 10), constant(1));
    m.faults = outage();
    m.client.max_attempts = Some(3);
    let strategy = Strategy {
        name: "breaker".into(),
        backoff: Backoff::new(Jitter::None, ms(10), 2.0, ms(1000)).unwrap(),
        client: crate::sim::ClientOverrides {
            max_attempts: Some(Some(4)),
            budget: Some(Some((
                BudgetConfig::RetryBreaker(RetryBreakerConfig::default()),
                Scope::Shared,
            ))),
            ..Default::default()
        },
        layers: Vec::new(),
        source: None,
    };
    let spec = |strategy| RunSpec {
        model: &m,
        strategy,
        seed: 1,
        replication: 0,
        keep_series: false,
    };
    let r = run(spec(&strategy));
    assert_eq!((r.counts.attempts, r.counts.gave_up_budget), (11, 10));
    // Without the overrides: three attempts each, no budget.
    let plain = run_immediate(&m);
    assert_eq!(
        (plain.counts.attempts, plain.counts.gave_up_attempts),
        (30, 10)
    );
}
