//! The `tracing` feature: one span per call, one event per attempt with its attempt number,
//! outcome, sleep and stop reason.
#![cfg(feature = "tracing")]

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use jitterlab_retry::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Keeps the spans' names and every event's fields as text.
#[derive(Default, Clone)]
struct Collect {
    spans: Arc<Mutex<Vec<String>>>,
    events: Arc<Mutex<Vec<String>>>,
}

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl Subscriber for Collect {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut spans = self.spans.lock().unwrap();
        spans.push(span.metadata().name().to_string());
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.events
            .lock()
            .unwrap()
            .push(fields.0.trim_end().to_string());
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_call_is_a_span_and_each_attempt_an_event() {
    let collect = Collect::default();
    let retrier = Retrier::builder().seed(1).max_attempts(3).build().unwrap();
    let result = tracing::subscriber::with_default(collect.clone(), || {
        retrier.retry(
            &VirtualClock::new(),
            &CancelToken::new(),
            |_| Err::<(), _>(Outcome::Status(503)),
            |_| {},
        )
    });
    assert!(result.is_err());
    assert_eq!(*collect.spans.lock().unwrap(), ["retry call"]);
    let events = collect.events.lock().unwrap();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(
        events[0].starts_with("message=retry attempt attempt=1 outcome=503"),
        "{events:?}"
    );
    assert!(events[0].contains("sleep=Some("), "{events:?}");
    assert!(
        events[2].ends_with("sleep=None stop=\"attempts\""),
        "{events:?}"
    );
}

#[test]
fn a_stop_before_an_attempt_is_an_event_too() {
    let collect = Collect::default();
    let cancel = CancelToken::new();
    cancel.cancel();
    let retrier = Retrier::builder().seed(1).build().unwrap();
    let result = tracing::subscriber::with_default(collect.clone(), || {
        retrier.retry(
            &VirtualClock::new(),
            &cancel,
            |_| Ok::<_, Outcome>(()),
            |_| {},
        )
    });
    assert!(result.is_err());
    let events = collect.events.lock().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        events[0].starts_with("message=retry attempt attempt=1 outcome=not sent"),
        "{events:?}"
    );
    assert!(events[0].ends_with("stop=\"cancelled\""), "{events:?}");
}
