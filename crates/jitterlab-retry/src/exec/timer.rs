//! The async executor's clock and sleeps: a [`Timer`], so any runtime's timer can drive it.
//!
//! With the `tokio` feature, [`TokioTimer`](super::tokio::TokioTimer) (the default) sleeps on
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

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
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

/// Real time without a runtime's timer: each sleep is a thread that wakes the task when it is
/// over. For executors that have no timer of their own.
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
            shared: Arc::default(),
            started: false,
        }
    }
}

/// A [`ThreadTimer`] sleep.
#[derive(Debug)]
pub struct ThreadSleep {
    /// `None`: beyond what `Instant` holds, so never.
    until: Option<Instant>,
    shared: Arc<Mutex<Wake>>,
    started: bool,
}

#[derive(Debug, Default)]
struct Wake {
    done: bool,
    waker: Option<Waker>,
}

impl Future for ThreadSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(until) = self.until else {
            return Poll::Pending;
        };
        if Instant::now() >= until {
            return Poll::Ready(());
        }
        {
            let mut wake = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
            if wake.done {
                return Poll::Ready(());
            }
            wake.waker = Some(cx.waker().clone());
        }
        if !self.started {
            self.started = true;
            let shared = Arc::clone(&self.shared);
            std::thread::spawn(move || {
                std::thread::sleep(until.saturating_duration_since(Instant::now()));
                let mut wake = shared.lock().unwrap_or_else(PoisonError::into_inner);
                wake.done = true;
                if let Some(waker) = wake.waker.take() {
                    waker.wake();
                }
            });
        }
        Poll::Pending
    }
}
