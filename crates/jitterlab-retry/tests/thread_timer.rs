//! `ThreadTimer` keeps one thread for all its sleeps, and a sleep dropped before its end (an
//! attempt's time limit, once the attempt has answered) leaves nothing behind. Alone in its
//! own test binary, so that no other test's threads are counted.
#![cfg(all(feature = "async", target_os = "linux"))]

mod support;

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use jitterlab_retry::exec::timer::{ThreadTimer, Timer};
use jitterlab_retry::prelude::*;
use support::block_on;

/// A future that is pending once (so that the attempt's time limit starts), then ready.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The threads of this process, from `/proc/self/status`.
fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads: line")
}

#[test]
fn one_thread_for_every_sleep_and_none_left_by_dropped_ones() {
    let retrier = Retrier::builder()
        .timeout(Duration::from_secs(10))
        .build_async_on(ThreadTimer::new())
        .expect("valid settings");
    let before = threads();
    // 200 calls whose attempts answer quickly, each under a 10 s time limit.
    for n in 0..200 {
        let answer = block_on(async {
            retrier
                .call(|_| async move {
                    YieldOnce(false).await;
                    Ok::<_, Outcome>(n)
                })
                .await
        });
        assert_eq!(answer.ok(), Some(n));
    }
    let after = threads();
    assert!(
        after <= before + 1,
        "{before} threads before, {after} after"
    );
    // Sleeps still end on time, the short one first, with one thread for all.
    let timer = ThreadTimer::new();
    let began = Instant::now();
    let long = timer.sleep(Duration::from_millis(60));
    block_on(timer.sleep(Duration::from_millis(20)));
    let short = began.elapsed();
    block_on(long);
    let took = began.elapsed();
    assert!(
        short >= Duration::from_millis(20) && short < Duration::from_millis(60),
        "{short:?}"
    );
    assert!(
        took >= Duration::from_millis(60) && took < Duration::from_secs(1),
        "{took:?}"
    );
    assert!(threads() <= before + 1);
}
