//! A cancel ends the attempt in flight (its future is dropped) unless the call lets it
//! finish: tokio's paused time, a slow server of 2 s, a cancel at 300 ms.
#![cfg(feature = "tokio")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jitterlab_retry::policy::{BreakerConfig, BudgetConfig};
use jitterlab_retry::prelude::*;
use tokio::time::{Instant, sleep};

/// An attempt that answers `Ok` after 2 s, and notes whether its future was dropped before.
async fn slow(dropped_early: Arc<AtomicBool>) -> Result<&'static str, Outcome> {
    struct Guard(Arc<AtomicBool>, bool);
    impl Drop for Guard {
        fn drop(&mut self) {
            if !self.1 {
                self.0.store(true, Ordering::SeqCst);
            }
        }
    }
    let mut guard = Guard(dropped_early, false);
    sleep(Duration::from_secs(2)).await;
    guard.1 = true;
    Ok("slow answer")
}

fn retrier() -> AsyncRetrier {
    Retrier::builder()
        .seed(5)
        .timeout(None)
        .build_async()
        .expect("valid")
}

#[tokio::test(start_paused = true)]
async fn a_cancel_at_300ms_drops_a_2s_attempt_at_once() {
    let retrier = retrier();
    let dropped = Arc::new(AtomicBool::new(false));
    let began = Instant::now();
    let mut log = Vec::new();
    let result = retrier
        .call(|_| slow(dropped.clone()))
        .cancel_on(sleep(Duration::from_millis(300)))
        .on_attempt(|e| log.push(e.to_string()))
        .await;
    let took = began.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took <= Duration::from_millis(310),
        "returned {took:?} after the start, the cancel was at 300ms"
    );
    assert!(
        dropped.load(Ordering::SeqCst),
        "the attempt's future was dropped"
    );
    match result {
        Err(RetryError::Cancelled { last, attempts }) => {
            assert_eq!(last, None);
            assert_eq!(attempts, 1);
        }
        other => panic!("expected Cancelled, got {other:?}"),
    }
    assert_eq!(log, ["attempt 1: dropped after 300ms, stop: cancelled"]);
}

#[tokio::test(start_paused = true)]
async fn let_attempt_finish_waits_for_the_answer() {
    let retrier = retrier();
    let dropped = Arc::new(AtomicBool::new(false));
    let began = Instant::now();
    let result = retrier
        .call(|_| slow(dropped.clone()))
        .cancel_on(sleep(Duration::from_millis(300)))
        .let_attempt_finish()
        .await;
    assert_eq!(began.elapsed(), Duration::from_secs(2));
    assert!(!dropped.load(Ordering::SeqCst));
    assert_eq!(result.ok(), Some("slow answer"));
}

/// A cancel token (what the README wires to Ctrl-C) does the same; the dropped attempt gives
/// a half-open breaker's probe back and a concurrency budget its slot.
#[tokio::test(start_paused = true)]
async fn a_cancel_token_drops_the_attempt_and_the_books_stay_right() {
    let retrier = Retrier::builder()
        .seed(5)
        .timeout(None)
        .budget(BudgetConfig::Concurrency {
            percent: 20.0,
            min_concurrency: 1,
        })
        .breaker(BreakerConfig::default())
        .build_async()
        .expect("valid");
    let cancel = CancelToken::new();
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        })
    };
    let began = Instant::now();
    let dropped = Arc::new(AtomicBool::new(false));
    let result = retrier
        .retry(&cancel, |_| slow(dropped.clone()), |_| {})
        .await;
    assert_eq!(began.elapsed(), Duration::from_millis(300));
    assert!(matches!(result, Err(RetryError::Cancelled { .. })));
    canceller.await.unwrap();
    // The next call is not held back by an attempt that never ended.
    let next = retrier.call(|_| async { Ok::<_, Outcome>("next") }).await;
    assert_eq!(next.ok(), Some("next"));
}
