//! Per-thread reuse of a run's large buffers: the event queue's buckets, the latency
//! histogram and the time series.
//!
//! A sweep runs thousands of short runs one after another on each thread. Allocated afresh,
//! these buffers cost every run a round of page faults (the kernel zeroing a quarter of a
//! megabyte for the histogram alone) in a page allocator that all threads share, and the
//! series a copy each time it doubled. A run now takes the buffers that the previous run on
//! its thread gave back, cleared; what it computes does not depend on where its memory came
//! from. Buffers above a size limit are not kept, so that one large run does not pin its
//! memory for the rest of the thread's life.

use std::cell::Cell;
use std::thread::LocalKey;

/// One spare buffer per thread.
pub(crate) type Slot<T> = LocalKey<Cell<Option<T>>>;

/// The spare kept in `slot`, if any (the caller clears it).
pub(crate) fn take<T: 'static>(slot: &'static Slot<T>) -> Option<T> {
    slot.with(Cell::take)
}

/// Keeps `value` for the next run on this thread, replacing any spare already kept.
pub(crate) fn give<T: 'static>(slot: &'static Slot<T>, value: T) {
    slot.with(|s| s.set(Some(value)));
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static SLOT: Cell<Option<Vec<u8>>> = const { Cell::new(None) };
    }

    #[test]
    fn a_spare_is_taken_once_and_stays_on_its_thread() {
        assert_eq!(take(&SLOT), None);
        give(&SLOT, vec![1, 2, 3]);
        std::thread::spawn(|| assert_eq!(take(&SLOT), None))
            .join()
            .unwrap();
        assert_eq!(take(&SLOT), Some(vec![1, 2, 3]));
        assert_eq!(take(&SLOT), None);
    }
}
