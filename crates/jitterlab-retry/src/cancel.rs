//! Cancellation passed in by the caller: a flag shared by clones of a [`CancelToken`].
//!
//! The library holds no process-wide state: whoever wants to stop work (the binary's Ctrl-C
//! handler, a test, a server shutting down) makes a token, hands it to the call and cancels it.
//! The retry executors check it before every attempt and wake their sleeps with it (the async
//! one awaits `CancelToken::cancelled`, with the `async` feature); a sweep starts no further
//! unit once it is cancelled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A cancellation flag shared by clones; cancelling wakes the threads waiting on it (the
/// sleeps of the executor's `SystemClock`).
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<CancelInner>,
}

#[derive(Debug, Default)]
struct CancelInner {
    /// Fast path for [`CancelToken::is_cancelled`].
    flag: AtomicBool,
    /// The same flag under the mutex the condition variable needs, and the tasks awaiting
    /// [`CancelToken::cancelled`].
    cancelled: Mutex<Waiting>,
    wake: Condvar,
}

/// The flag, and the wakers of the futures awaiting it (by the id each future holds).
#[derive(Debug, Default)]
struct Waiting {
    cancelled: bool,
    #[cfg(feature = "async")]
    wakers: Vec<(u64, std::task::Waker)>,
    #[cfg(feature = "async")]
    next_id: u64,
}

impl CancelToken {
    /// A token not cancelled yet.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels: every clone sees it, and sleeping threads wake.
    pub fn cancel(&self) {
        self.inner.flag.store(true, Ordering::Release);
        let mut waiting = self.lock();
        waiting.cancelled = true;
        #[cfg(feature = "async")]
        let wakers = std::mem::take(&mut waiting.wakers);
        drop(waiting);
        self.inner.wake.notify_all();
        #[cfg(feature = "async")]
        wakers.into_iter().for_each(|(_, waker)| waker.wake());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.inner
            .cancelled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Completes once the token is cancelled (at once if it already is): the async
    /// counterpart of the wait that wakes blocking sleeps. Dropping it early is fine.
    #[cfg(feature = "async")]
    #[cfg_attr(docsrs, doc(cfg(feature = "async")))]
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled {
            token: self,
            id: None,
        }
    }

    /// True once [`CancelToken::cancel`] was called on any clone.
    pub fn is_cancelled(&self) -> bool {
        self.inner.flag.load(Ordering::Acquire)
    }

    /// Waits up to `d` of real time; true when cancelled (at once or during the wait).
    pub(crate) fn wait(&self, d: Duration) -> bool {
        let end = Instant::now().checked_add(d);
        let mut cancelled = self.lock();
        loop {
            if cancelled.cancelled {
                return true;
            }
            match end {
                // Too long to represent: wait for a cancel only.
                None => {
                    cancelled = self
                        .inner
                        .wake
                        .wait(cancelled)
                        .unwrap_or_else(PoisonError::into_inner)
                }
                Some(end) => {
                    let now = Instant::now();
                    if now >= end {
                        return false;
                    }
                    cancelled = self
                        .inner
                        .wake
                        .wait_timeout(cancelled, end - now)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            }
        }
    }
}

/// The future of [`CancelToken::cancelled`]: registered with the token (under the lock the
/// cancel takes, so no cancel is missed) while it waits, unregistered when dropped.
#[cfg(feature = "async")]
#[cfg_attr(docsrs, doc(cfg(feature = "async")))]
#[derive(Debug)]
#[must_use = "a future does nothing until it is awaited"]
pub struct Cancelled<'t> {
    token: &'t CancelToken,
    id: Option<u64>,
}

#[cfg(feature = "async")]
impl std::future::Future for Cancelled<'_> {
    type Output = ();

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let this = self.get_mut();
        let mut waiting = this.token.lock();
        if waiting.cancelled {
            this.id = None;
            return std::task::Poll::Ready(());
        }
        let id = *this.id.get_or_insert_with(|| {
            waiting.next_id += 1;
            waiting.next_id
        });
        match waiting.wakers.iter_mut().find(|(i, _)| *i == id) {
            Some((_, waker)) => waker.clone_from(cx.waker()),
            None => waiting.wakers.push((id, cx.waker().clone())),
        }
        std::task::Poll::Pending
    }
}

#[cfg(feature = "async")]
impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.token.lock().wakers.retain(|(i, _)| *i != id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag_and_a_cancel_wakes_a_wait() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(!clone.is_cancelled());
        assert!(
            !token.wait(Duration::from_millis(1)),
            "not cancelled: times out"
        );
        let waiter = std::thread::spawn(move || clone.wait(Duration::from_secs(600)));
        std::thread::sleep(Duration::from_millis(20));
        token.cancel();
        assert!(
            waiter.join().unwrap(),
            "woken by the cancel, not the timeout"
        );
        assert!(token.is_cancelled());
    }
}
