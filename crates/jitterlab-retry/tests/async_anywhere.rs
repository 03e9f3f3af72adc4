//! The async executor with the `async` feature alone: no tokio runtime, no tokio timer. A
//! hand-rolled `block_on` (a thread that parks until woken) drives it on a `ThreadTimer`, and
//! the operation's future holds an `Rc`, so it is not `Send` (and need not be).
#![cfg(feature = "async")]

mod support;

use std::future::{IntoFuture, pending};
use std::rc::Rc;
use std::thread;
use std::time::{Duration, Instant};

use jitterlab_retry::exec::timer::ThreadTimer;
use jitterlab_retry::prelude::*;
use support::block_on;

fn retrier() -> AsyncRetrier<ThreadTimer> {
    let retrier = Retrier::builder()
        .seed(3)
        .base(Duration::from_millis(5))
        .timeout(Duration::from_millis(50))
        .build()
        .expect("valid settings");
    AsyncRetrier::with_timer(retrier, ThreadTimer::new())
}

#[test]
fn a_non_send_operation_runs_on_a_hand_rolled_executor() {
    let retrier = retrier();
    // Shared with every attempt's future, on one thread: an `Rc`, not an `Arc`.
    let answers = Rc::new(vec![7, 8, 9]);
    let began = Instant::now();
    let mut outcomes = Vec::new();
    let answer = block_on(
        retrier
            .call(|ctx| {
                let answers = Rc::clone(&answers);
                async move {
                    match ctx.attempt {
                        // Never answers: cut off by the ThreadTimer at 50 ms.
                        1 => pending::<Result<u32, Outcome>>().await,
                        2 => Err(Outcome::Status(503)),
                        n => Ok(answers[n as usize - 1]),
                    }
                }
            })
            .on_attempt(|e| outcomes.extend(e.outcome))
            .into_future(),
    );
    assert_eq!(answer.ok(), Some(9));
    assert_eq!(
        outcomes,
        [Outcome::Timeout, Outcome::Status(503), Outcome::Success]
    );
    let took = began.elapsed();
    assert!(
        took >= Duration::from_millis(50) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[test]
fn a_send_operation_makes_a_send_call() {
    fn is_send<T: Send>(_: &T) {}
    let retrier = retrier();
    let call = retrier
        .call(|ctx| async move { Ok::<u32, Outcome>(ctx.attempt) })
        .into_future();
    is_send(&call);
    assert_eq!(block_on(call).ok(), Some(1));
}

#[test]
fn cancel_on_any_future_without_tokio() {
    // One second between attempts: the cancel comes during the first sleep.
    let retrier = Retrier::builder()
        .jitter(Jitter::Constant)
        .base(Duration::from_secs(1))
        .build_async_on(ThreadTimer::new())
        .expect("valid settings");
    let token = CancelToken::new();
    let cancel = token.clone();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(30));
        cancel.cancel();
    });
    let began = Instant::now();
    let answer = block_on(
        retrier
            .call(|_| async { Err::<(), _>(Outcome::Status(503)) })
            .cancel_on(token.cancelled())
            .into_future(),
    );
    canceller.join().expect("the canceller ran");
    let e = answer.unwrap_err();
    assert_eq!(
        (e.reason(), e.attempts()),
        (StopReason::Cancelled, 1),
        "{e}"
    );
    let took = began.elapsed();
    assert!(took < Duration::from_millis(500), "{took:?}");
}
