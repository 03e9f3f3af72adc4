//! How much work one run could take, estimated before its first event: events and memory.
//!
//! The estimate assumes the worst for retries: every attempt fails at once, so each request
//! retries until it runs out of attempts, of deadline or of horizon. Between two attempts it
//! counts the least the jitter sleeps (for `full` and `decorrelated_v2`, whose least is 0,
//! half the nominal delay: about their mean) plus a round trip at the network's mean delay (or
//! the attempt timeout, when shorter).
//! A closed-loop client is counted at its busiest, over every way its requests can end (served
//! at once, refused before any attempt, failing to the end). This is
//! far above what realistic scenarios do, and it is what catches, before the run, the ones
//! that would go on for hours: a 1 ns constant backoff with unlimited attempts against a
//! server that fails the whole horizon.
//!
//! In a chain of services every attempt that reaches a calling layer is one outbound request
//! of its worker, which retries on its own: attempts multiply from layer to layer. The
//! attempts reaching layer `k` per client request are the product of the attempts of the
//! clients and of each calling layer above `k`, each bounded as the clients' are (its
//! `max_attempts`, its deadline, what remains of its caller's attempt when it propagates the
//! deadline, the horizon); every layer's attempts count.

use super::client::ClientConfig;
use super::model::{Model, Strategy};
use super::server::ServerConfig;
use super::workload::Workload;
use crate::backoff::{Backoff, Jitter};
use crate::time::SimDuration;

/// Events one attempt can cause: wake, limiter launch, arrival, service end or the OCC read
/// and write, the reply, the timer.
pub const EVENTS_PER_ATTEMPT: f64 = 6.0;

/// Memory per client: its state, its network and guard state, its share of the event queue.
pub const BYTES_PER_CLIENT: f64 = 192.0;

/// Sleeps followed one by one before the rest is counted at the last one's length.
const STEPS: u32 = 256;

/// The estimate for one (point, strategy).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    /// Requests the run could start.
    pub requests: f64,
    /// Attempts each request could make at most, the clients' own.
    pub attempts_per_request: f64,
    /// Attempts each request could cause at the last layer of a chain (the product of every
    /// layer's attempts; the clients' own without a chain).
    pub deepest_attempts: f64,
    /// Events the run could process.
    pub events: f64,
    /// Memory its state could take, in bytes.
    pub bytes: f64,
}

/// The work of running `model` with `strategy` (its backoff, its client and layer settings).
pub fn estimate(model: &Model, strategy: &Strategy) -> Work {
    let horizon = model.horizon.as_nanos() as f64;
    // An OCC attempt is a read and a write: two round trips.
    let legs = if matches!(model.server, ServerConfig::Occ) {
        4.0
    } else {
        2.0
    };
    let client = strategy.client_config(&model.client);
    let schedule = request_schedule(model, &client, &strategy.backoff, legs, None);
    let (attempts, _) = schedule[schedule.len() - 1];
    // Attempts at every layer per attempt of the clients: 1 at layer 1, then the product of
    // each calling layer's attempts per outbound request.
    let (mut behind, mut deepest) = (1.0, 1.0);
    if let Some(chain) = &model.chain {
        let mut caller_timeout = client.timeout;
        for (j, hop) in chain.hops.iter().enumerate() {
            let (hop_client, _, propagate) = strategy.layer(j).apply(hop);
            let limit = caller_timeout.filter(|_| propagate);
            let per_call = request_schedule(model, &hop_client, &hop.backoff, 2.0, limit);
            deepest *= per_call[per_call.len() - 1].0;
            behind += deepest;
            caller_timeout = hop_client.timeout;
        }
    }
    let per_request = |attempts: f64| attempts * behind * EVENTS_PER_ATTEMPT + 1.0;
    let (requests, clients) = match model.workload {
        Workload::Burst { clients, .. } => (f64::from(clients), f64::from(clients)),
        Workload::Poisson { duration, .. } | Workload::PoissonClients { duration, .. } => {
            // The peak offered rate throughout: an upper bound for a profile, exact for a
            // constant. Every request of either kind takes a client slot of its own.
            let peak = model.workload.poisson_profile().map_or(0.0, |(p, ..)| {
                p.points().iter().map(|&(_, r)| r).fold(0.0, f64::max)
            });
            let n = peak * duration.as_secs_f64().min(model.horizon.as_secs_f64());
            (n, n)
        }
        Workload::Closed { clients, think, .. } => {
            // A client's requests follow each other a think apart, each lasting as long as its
            // attempts (none at all when its breaker refuses it): the most events per unit of
            // time over every way a request can end, one still in flight at the horizon.
            let think = think.as_nanos() as f64;
            let rate = schedule
                .iter()
                .map(|&(a, t)| per_request(a) / (think + t))
                .fold(0.0, f64::max);
            let clients = f64::from(clients);
            let per_client = horizon * rate + per_request(attempts);
            return Work {
                requests: clients * (horizon / think + 1.0),
                attempts_per_request: attempts,
                deepest_attempts: attempts * deepest,
                events: clients * per_client,
                bytes: clients * BYTES_PER_CLIENT,
            };
        }
    };
    Work {
        requests,
        attempts_per_request: attempts,
        deepest_attempts: attempts * deepest,
        events: requests * per_request(attempts),
        bytes: clients * BYTES_PER_CLIENT,
    }
}

/// The [`schedule`] of one request sent by `client` with `backoff`: its attempts within its
/// deadline (and `limit`, what remains of its caller's attempt), else the horizon.
fn request_schedule(
    model: &Model,
    client: &ClientConfig,
    backoff: &Backoff,
    legs: f64,
    limit: Option<SimDuration>,
) -> Vec<(f64, f64)> {
    let nanos = |d: SimDuration| d.as_nanos() as f64;
    // An attempt ends with its answer or its timeout, whichever comes first.
    let round_trip = client
        .timeout
        .map_or(f64::INFINITY, nanos)
        .min(legs * model.latency.mean_nanos());
    let window = [client.deadline, limit]
        .into_iter()
        .flatten()
        .map(nanos)
        .fold(nanos(model.horizon), f64::min);
    let max_attempts = client.max_attempts.map_or(f64::INFINITY, f64::from);
    schedule(backoff, round_trip, window, max_attempts)
}

/// The least a client sleeps before retry `k` (see the module's note on `full`).
fn least_sleep(backoff: &Backoff, k: u32) -> f64 {
    let nominal = backoff.nominal(k).as_nanos() as f64;
    let cap = backoff.cap().as_nanos() as f64;
    let factor = backoff.params().factor;
    match backoff.jitter() {
        Jitter::None => 0.0,
        Jitter::Constant => backoff.base().as_nanos() as f64,
        Jitter::NoJitter => nominal,
        Jitter::Full | Jitter::Equal | Jitter::DecorrelatedV2 => nominal / 2.0,
        Jitter::Decorrelated => (backoff.base().as_nanos() as f64).min(cap),
        Jitter::Proportional => (nominal * (1.0 - factor)).min(cap),
        Jitter::Additive => nominal,
    }
}

/// The attempts of one request that fit in `window` nanoseconds, at most `max`, when each is
/// answered at once after `round_trip` and followed by the least sleep: `(attempts, time from
/// the first to the last)` after each of the first [`STEPS`] attempts, then at the last one.
fn schedule(backoff: &Backoff, round_trip: f64, window: f64, max: f64) -> Vec<(f64, f64)> {
    let mut points = vec![(1.0, 0.0)];
    let (mut attempts, mut t) = (1.0, 0.0);
    let mut gap = 0.0;
    for k in 1..=STEPS {
        if attempts >= max {
            return points;
        }
        gap = least_sleep(backoff, k) + round_trip;
        if t + gap >= window {
            return points;
        }
        t += gap;
        attempts += 1.0;
        points.push((attempts, t));
    }
    // Nominal delays only grow, so the rest are at least the last gap apart.
    let last = if gap <= 0.0 {
        (max, window)
    } else {
        let more = ((window - t) / gap).floor().min(max - attempts).max(0.0);
        (attempts + more, t + more * gap)
    };
    points.push(last);
    points
}

/// The last point of [`schedule`].
#[cfg(test)]
fn attempts_within(backoff: &Backoff, round_trip: f64, window: f64, max: f64) -> (f64, f64) {
    *schedule(backoff, round_trip, window, max).last().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    fn backoff(jitter: Jitter, base: SimDuration, cap: SimDuration) -> Backoff {
        Backoff::new(jitter, base, 2.0, cap).unwrap()
    }

    #[test]
    fn attempts_follow_the_least_sleeps() {
        let ms = |n: f64| n * 1e6;
        let b = backoff(
            Jitter::NoJitter,
            SimDuration::from_millis(10),
            SimDuration::from_millis(40),
        );
        // Sleeps 10, 20, 40, 40, ... with a 2 ms round trip: attempts at 0, 12, 34, 76, 118.
        assert_eq!(
            attempts_within(&b, ms(2.0), ms(120.0), f64::INFINITY),
            (5.0, ms(118.0))
        );
        assert_eq!(
            attempts_within(&b, ms(2.0), ms(120.0), 3.0),
            (3.0, ms(34.0))
        );
        // A constant 1 ns sleep, nothing else, for a minute: sixty billion attempts.
        let tiny = backoff(Jitter::Constant, SimDuration(1), SimDuration(1));
        let (n, _) = attempts_within(&tiny, 0.0, 60e9, f64::INFINITY);
        assert!(n > 5.9e10, "{n}");
        // No sleep and no delay: only the attempt limit stops it.
        let none = backoff(Jitter::None, SimDuration(1), SimDuration(1));
        assert_eq!(attempts_within(&none, 0.0, 60e9, 7.0).0, 7.0);
        assert_eq!(
            attempts_within(&none, 0.0, 60e9, f64::INFINITY).0,
            f64::INFINITY
        );
    }
}
