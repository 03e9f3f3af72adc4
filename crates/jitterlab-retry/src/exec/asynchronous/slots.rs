//! The concurrency limit's fair semaphore, written by hand so that the async executor needs
//! no tokio at all (and tokio, with the `tokio` feature, only its timer): a fixed number of
//! slots, taken first come first served. A slot given back goes straight to the longest
//! waiter, so a newcomer never overtakes the queue.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

/// `size` slots and the waiters in line for one.
#[derive(Debug)]
pub(super) struct Slots {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    free: usize,
    line: VecDeque<Waiter>,
    next_id: u64,
}

/// One wait for a slot: `granted` once a slot given back was handed to it.
#[derive(Debug)]
struct Waiter {
    id: u64,
    waker: Waker,
    granted: bool,
}

impl Slots {
    pub(super) fn new(size: usize) -> Slots {
        Slots {
            state: Mutex::new(State {
                free: size,
                line: VecDeque::new(),
                next_id: 0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Slots free now.
    pub(super) fn free(&self) -> usize {
        self.lock().free
    }

    /// A slot now, if one is free and nobody waits for one.
    pub(super) fn try_take(&self) -> Option<Slot<'_>> {
        let mut state = self.lock();
        if state.free > 0 && state.line.is_empty() {
            state.free -= 1;
            return Some(Slot { slots: self });
        }
        None
    }

    /// Waits in line for a slot.
    pub(super) fn take(&self) -> Take<'_> {
        Take {
            slots: self,
            id: None,
        }
    }

    /// A slot comes back: to the first waiter not yet served, else to the free ones.
    fn give_back(state: &mut State) {
        match state.line.iter_mut().find(|w| !w.granted) {
            Some(waiter) => {
                waiter.granted = true;
                waiter.waker.wake_by_ref();
            }
            None => state.free += 1,
        }
    }
}

/// A slot held; dropping it gives it back.
#[derive(Debug)]
pub(super) struct Slot<'s> {
    slots: &'s Slots,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        Slots::give_back(&mut self.slots.lock());
    }
}

/// The wait for a slot; dropped in line, it leaves the line (passing on a slot it was handed).
#[derive(Debug)]
pub(super) struct Take<'s> {
    slots: &'s Slots,
    id: Option<u64>,
}

impl<'s> Future for Take<'s> {
    type Output = Slot<'s>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Slot<'s>> {
        let this = self.get_mut();
        let slots = this.slots;
        let mut state = slots.lock();
        let Some(id) = this.id else {
            if state.free > 0 && state.line.is_empty() {
                state.free -= 1;
                return Poll::Ready(Slot { slots });
            }
            let id = state.next_id;
            state.next_id += 1;
            state.line.push_back(Waiter {
                id,
                waker: cx.waker().clone(),
                granted: false,
            });
            this.id = Some(id);
            return Poll::Pending;
        };
        let at = state.line.iter().position(|w| w.id == id);
        match at.map(|i| (i, state.line[i].granted)) {
            Some((i, true)) => {
                state.line.remove(i);
                this.id = None;
                Poll::Ready(Slot { slots })
            }
            Some((i, false)) => {
                state.line[i].waker.clone_from(cx.waker());
                Poll::Pending
            }
            // Not in line: it was served and polled again; never happens.
            None => Poll::Pending,
        }
    }
}

impl Drop for Take<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let mut state = self.slots.lock();
        if let Some(i) = state.line.iter().position(|w| w.id == id)
            && let Some(waiter) = state.line.remove(i)
            && waiter.granted
        {
            Slots::give_back(&mut state);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::task::Wake;

    use super::*;

    struct Count(std::sync::atomic::AtomicU32);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// First come first served: a slot given back goes to the first in line, not to a
    /// newcomer; a waiter that leaves the line passes on a slot it was handed.
    #[test]
    fn slots_go_in_order_and_come_back() {
        let slots = Slots::new(1);
        let waker = Waker::from(Arc::new(Count(0.into())));
        let mut cx = Context::from_waker(&waker);
        let held = slots.try_take().expect("one free");
        assert_eq!(slots.free(), 0);
        let mut first = Box::pin(slots.take());
        let mut second = Box::pin(slots.take());
        assert!(first.as_mut().poll(&mut cx).is_pending());
        assert!(second.as_mut().poll(&mut cx).is_pending());
        drop(held);
        assert!(
            slots.try_take().is_none(),
            "a newcomer does not overtake the line"
        );
        // The first waiter leaves without taking the slot it was handed: it goes on.
        drop(first);
        let Poll::Ready(slot) = second.as_mut().poll(&mut cx) else {
            panic!("the second waiter is served");
        };
        drop(slot);
        assert_eq!(slots.free(), 1);
    }
}
