//! A metrics exporter's side of a retrier: an [`Observer`] that keeps Prometheus-style
//! counters of every attempt by outcome, and [`Retrier::metrics`] read at scrape time for the
//! budget's tokens, the breaker's state and the call counts. It prints the text exposition
//! format a `/metrics` endpoint would serve (an OpenTelemetry meter takes the same numbers).
//!
//! `cargo run -p jitterlab-retry --example metrics_exporter`

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jitterlab_retry::exec::{Metrics, Observer};
use jitterlab_retry::policy::{BreakerConfig, BreakerState};
use jitterlab_retry::prelude::*;

/// Attempts by outcome, as a `retry_attempts_total{outcome="503"}` counter would keep them.
#[derive(Default)]
struct AttemptCounter {
    by_outcome: Mutex<BTreeMap<String, u64>>,
}

impl Observer for AttemptCounter {
    fn on_attempt(&self, event: &AttemptEvent<'_, ()>) {
        let outcome = match (event.outcome, event.dropped) {
            (Some(outcome), _) => outcome.to_string(),
            (None, true) => "dropped".into(),
            (None, false) => return, // a stop before an attempt: nothing was sent
        };
        *self.by_outcome.lock().unwrap().entry(outcome).or_default() += 1;
    }
}

/// The text a scrape of `/metrics` would get.
fn exposition(counter: &AttemptCounter, m: &Metrics) -> String {
    let mut out = String::new();
    for (outcome, n) in counter.by_outcome.lock().unwrap().iter() {
        out += &format!("retry_attempts_total{{outcome=\"{outcome}\"}} {n}\n");
    }
    out += &format!("retry_calls_total {}\n", m.calls);
    out += &format!("retry_retries_total {}\n", m.retries);
    out += &format!("retry_successes_total {}\n", m.successes);
    out += &format!("retry_gave_up_total {}\n", m.gave_up);
    if let Some(tokens) = m.budget_available {
        out += &format!("retry_budget_available {tokens}\n");
    }
    if let Some(state) = m.breaker {
        let open = matches!(state, BreakerState::Open { .. });
        out += &format!("retry_breaker_open {}\n", u8::from(open));
    }
    out
}

/// Three calls on a virtual clock (the second fails for good): what the exporter shows.
fn run() -> Result<String, jitterlab_retry::Error> {
    let counter = Arc::new(AttemptCounter::default());
    let observer = Arc::clone(&counter);
    let retrier = Retrier::builder()
        .seed(1)
        .breaker(BreakerConfig::default())
        .build()?
        .with_observer(move |event: &AttemptEvent<'_, ()>| observer.on_attempt(event));
    let clock = VirtualClock::new();
    let cancel = CancelToken::new();
    for script in [[503, 200, 200, 200], [503, 503, 503, 503], [200; 4]] {
        let _ = retrier.retry(
            &clock,
            &cancel,
            |ctx| match script[ctx.attempt as usize - 1] {
                200 => Ok(()),
                code => Err(Outcome::Status(code)),
            },
            |_| {},
        );
    }
    clock.advance(Duration::from_secs(1));
    Ok(exposition(&counter, &retrier.metrics(clock.now())))
}

fn main() -> Result<(), jitterlab_retry::Error> {
    print!("{}", run()?);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_exposition_counts_every_attempt_and_call() {
        let text = super::run().unwrap();
        assert!(
            text.contains("retry_attempts_total{outcome=\"503\"} 5\n"),
            "{text}"
        );
        assert!(
            text.contains("retry_attempts_total{outcome=\"success\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("retry_calls_total 3\n"), "{text}");
        assert!(text.contains("retry_retries_total 4\n"), "{text}");
        assert!(text.contains("retry_successes_total 2\n"), "{text}");
        assert!(text.contains("retry_gave_up_total 1\n"), "{text}");
        assert!(text.contains("retry_budget_available "), "{text}");
        assert!(text.contains("retry_breaker_open 0\n"), "{text}");
    }
}
