//! The async executor's clock and sleeps: a [`Timer`], so any runtime's timer can drive it.
//!
//! With the `tokio` feature, [`TokioTimer`] (the default) sleeps on
//! tokio's clock, paused time included. [`ThreadTimer`] needs no runtime's timer at all, so it
//! runs on any executor. Another runtime's timer is a few lines:
//!
//! ```
//! use std::time::{Duration, Instant};
//! use jitterlab_retry::exec::timer::Timer;
//!
//! /// async-io's, smol's, or any timer whose sleep is a future.
//! struct MyTimer {
//!     origin: Instant,
//! }
//!
//! impl Timer for MyTimer {
//!     type Sleep = std::future::Ready<()>;
//!     fn now(&self) -> Duration {
//!         self.origin.elapsed()
//!     }
//!     fn sleep(&self, d: Duration) -> Self::Sleep {
//!         # let _ = d;
//!         // async_io::Timer::after(d) and the like.
//!         std::future::ready(())
//!     }
//! }
//! ```

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A runtime's clock and sleeps, for [`super::asynchronous::AsyncRetrier`]. Nothing here
/// needs to be `Send` or `Sync`: a retrier, and the futures of its calls, are `Send` and
/// `Sync` when their timer and its sleeps are.
pub trait Timer {
    /// A sleep of this timer.
    type Sleep: Future<Output = ()>;
    /// Monotonic time since the timer's origin (the deadline, the breaker and the budget count
    /// on it).
    fn now(&self) -> Duration;
    /// Completes `d` from now.
    fn sleep(&self, d: Duration) -> Self::Sleep;
}

/// Real time without a runtime's timer: one thread of the process (started at the first
/// sleep) wakes every `ThreadTimer` sleep when it is due, and a sleep dropped before then
/// (an attempt's time limit, once the attempt has answered) is forgotten at once. For
/// executors that have no timer of their own. Its origin is the one every
/// [`super::SystemClock`] shares.
#[derive(Debug, Clone, Copy)]
pub struct ThreadTimer {
    origin: Instant,
}

impl ThreadTimer {
    /// Real time, from the origin every [`super::SystemClock`] shares.
    pub fn new() -> ThreadTimer {
        ThreadTimer {
            origin: super::process_origin(),
        }
    }
}

impl Default for ThreadTimer {
    fn default() -> Self {
        ThreadTimer::new()
    }
}

impl Timer for ThreadTimer {
    type Sleep = ThreadSleep;
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
    fn sleep(&self, d: Duration) -> ThreadSleep {
        ThreadSleep {
            until: Instant::now().checked_add(d),
            key: None,
        }
    }
}

/// A [`ThreadTimer`] sleep.
#[derive(Debug)]
pub struct ThreadSleep {
    /// `None`: beyond what `Instant` holds, so never.
    until: Option<Instant>,
    /// Its place in the timer thread's queue, once polled.
    key: Option<Key>,
}

/// A sleep in the queue: when it is due, and a number that tells apart sleeps due together.
type Key = (Instant, u64);

impl Future for ThreadSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(until) = self.until else {
            return Poll::Pending;
        };
        if Instant::now() >= until {
            if let Some(key) = self.key.take() {
                Timers::get().forget(key);
            }
            return Poll::Ready(());
        }
        let key = Timers::get().remind(self.key, until, cx.waker());
        self.key = Some(key);
        Poll::Pending
    }
}

impl Drop for ThreadSleep {
    /// A sleep dropped before its end leaves nothing in the queue.
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            Timers::get().forget(key);
        }
    }
}

/// The queue of every [`ThreadSleep`] of the process, and the one thread that wakes them.
struct Timers {
    queue: Mutex<Queue>,
    /// Wakes the thread when a sleep due earlier than all others arrives.
    changed: Condvar,
}

#[derive(Default)]
struct Queue {
    /// The waker of each sleep waiting, by when it is due.
    sleeps: BTreeMap<Key, Waker>,
    next: u64,
    /// The timer thread is running.
    started: bool,
}

impl Timers {
    fn get() -> &'static Timers {
        static TIMERS: OnceLock<Timers> = OnceLock::new();
        TIMERS.get_or_init(|| Timers {
            queue: Mutex::default(),
            changed: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes `waker` at `until`: the sleep's place `key` in the queue, new or kept.
    fn remind(&'static self, key: Option<Key>, until: Instant, waker: &Waker) -> Key {
        let mut queue = self.lock();
        let key = key.unwrap_or_else(|| {
            queue.next = queue.next.wrapping_add(1);
            (until, queue.next)
        });
        match queue.sleeps.get_mut(&key) {
            Some(known) => known.clone_from(waker),
            None => {
                queue.sleeps.insert(key, waker.clone());
            }
        }
        if !queue.started {
            let spawned = std::thread::Builder::new()
                .name("jitterlab-retry-timer".into())
                .spawn(move || self.run());
            queue.started = spawned.is_ok();
            if !queue.started {
                // No thread to be had: the task polls again until the sleep is due, which is
                // wasteful but never hangs.
                waker.wake_by_ref();
            }
        }
        if queue
            .sleeps
            .first_key_value()
            .is_some_and(|(first, _)| *first == key)
        {
            self.changed.notify_one();
        }
        key
    }

    fn forget(&self, key: Key) {
        self.lock().sleeps.remove(&key);
    }

    /// The timer thread: wakes each sleep when it is due, waiting in between.
    fn run(&self) {
        let mut queue = self.lock();
        loop {
            let now = Instant::now();
            let mut due = Vec::new();
            while let Some(entry) = queue.sleeps.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                due.push(entry.remove());
            }
            if !due.is_empty() {
                // Woken without the lock: a waker may poll its task at once.
                drop(queue);
                due.into_iter().for_each(Waker::wake);
                queue = self.lock();
                continue;
            }
            queue = match queue.sleeps.first_key_value() {
                Some((&(until, _), _)) => {
                    let wait = until.saturating_duration_since(now);
                    self.changed
                        .wait_timeout(queue, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .changed
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
/// tokio's clock (the `tokio` feature) (`tokio::time::Instant`, paused time included) and `tokio::time::sleep`; its
/// origin is when it was made.
#[derive(Debug, Clone, Copy)]
pub struct TokioTimer {
    origin: ::tokio::time::Instant,
}

#[cfg(feature = "tokio")]
impl TokioTimer {
    /// A timer whose origin is tokio's now.
    pub fn new() -> TokioTimer {
        TokioTimer {
            origin: ::tokio::time::Instant::now(),
        }
    }
}

#[cfg(feature = "tokio")]
impl Default for TokioTimer {
    fn default() -> Self {
        TokioTimer::new()
    }
}

#[cfg(feature = "tokio")]
impl Timer for TokioTimer {
    type Sleep = ::tokio::time::Sleep;
    fn now(&self) -> Duration {
        ::tokio::time::Instant::now().saturating_duration_since(self.origin)
    }
    fn sleep(&self, d: Duration) -> Self::Sleep {
        ::tokio::time::sleep(d)
    }
}

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use super::*;

    #[test]
    fn a_sleep_dropped_before_its_end_leaves_the_queue() {
        let mut sleep = ThreadTimer::new().sleep(Duration::from_secs(600));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
        let key = sleep.key.expect("queued once polled");
        assert!(Timers::get().lock().sleeps.contains_key(&key));
        // Polled again: the same place, not a second one.
        assert!(Pin::new(&mut sleep).poll(&mut cx).is_pending());
        assert_eq!(sleep.key, Some(key));
        drop(sleep);
        assert!(!Timers::get().lock().sleeps.contains_key(&key));
    }
}
