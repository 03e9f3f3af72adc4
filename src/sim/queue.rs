//! The event queue: a priority queue ordered by `(time, seq)`.
//!
//! **Ordering guarantee.** Events pop in increasing time; events with equal times pop in the
//! order they were pushed (first in, first out), because every push takes the next value of a
//! sequence counter and the pair `(time, seq)` is the key. The order is therefore a function
//! of the pushes alone: the same run gives the same order on every machine and thread count.
//! Scheduling in the past is a bug and panics in debug builds.
//!
//! Events known before the run starts (a burst's arrivals, possibly millions) are not pushed:
//! they are kept sorted in a separate list and merged on pop. They count as pushed first, in
//! list order, so on equal times they come before anything pushed during the run; this is
//! exactly the order a heap would give, at a fraction of the cost.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::event::Event;
use crate::time::SimTime;

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest `(time, seq)`.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// The queue of pending events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: u64,
    /// Pre-scheduled events, sorted by time (stable), consumed from `next_pre`.
    pre: Vec<(u64, Event)>,
    next_pre: usize,
}

impl EventQueue {
    /// An empty queue with room for `capacity` pending events.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
            ..Default::default()
        }
    }

    /// Installs events known in advance. They are sorted by time, keeping the given order on
    /// equal times, and come before any event pushed at the same time.
    pub fn preschedule(&mut self, mut events: Vec<(SimTime, Event)>) {
        debug_assert!(
            self.pre.is_empty() && self.seq == 0,
            "preschedule once, before the run"
        );
        events.sort_by_key(|(t, _)| *t);
        self.pre = events.into_iter().map(|(t, e)| (t.as_nanos(), e)).collect();
        self.next_pre = 0;
    }

    /// Schedules `event` at `time` (>= now).
    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        debug_assert!(
            time.as_nanos() >= self.now,
            "scheduling in the past: {time:?} < {}",
            self.now
        );
        self.seq += 1;
        self.heap.push(Entry {
            time: time.as_nanos(),
            seq: self.seq,
            event,
        });
    }

    /// Removes and returns the earliest event, advancing the queue's clock.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let pre = self.pre.get(self.next_pre).copied();
        let take_pre = match (pre, self.heap.peek()) {
            (Some((pt, _)), Some(top)) => pt <= top.time,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let (time, event) = if take_pre {
            self.next_pre += 1;
            pre?
        } else {
            let e = self.heap.pop()?;
            (e.time, e.event)
        };
        self.now = time;
        Some((SimTime(time), event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        let pre = self.pre.get(self.next_pre).map(|(t, _)| *t);
        let heap = self.heap.peek().map(|e| e.time);
        match (pre, heap) {
            (Some(a), Some(b)) => Some(SimTime(a.min(b))),
            (a, b) => a.or(b).map(SimTime),
        }
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.pre.len() - self.next_pre
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_first_in_first_out() {
        let mut q = EventQueue::default();
        q.preschedule(vec![
            (SimTime(5), Event::Start(0)),
            (SimTime(0), Event::Start(1)),
            (SimTime(5), Event::Start(2)),
        ]);
        q.push(SimTime(5), Event::Wake(9));
        q.push(SimTime(3), Event::Wake(8));
        q.push(SimTime(5), Event::Wake(10));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            vec![
                Event::Start(1),
                Event::Wake(8),
                Event::Start(0),
                Event::Start(2),
                Event::Wake(9),
                Event::Wake(10)
            ]
        );
    }

    #[test]
    fn pops_in_time_order_for_random_pushes() {
        use rand::RngExt;
        let mut rng = crate::rng::from_seed(3);
        let mut q = EventQueue::default();
        let mut last = (0u64, 0u32);
        for i in 0..10_000u32 {
            q.push(SimTime(rng.random_range(0..1000)), Event::Wake(i));
        }
        let mut seen_at_time: Vec<u32> = Vec::new();
        while let Some((t, Event::Wake(i))) = q.pop() {
            if t.as_nanos() != last.0 {
                seen_at_time.clear();
            }
            assert!(t.as_nanos() >= last.0);
            // FIFO among equal times: push order is the index order.
            if let Some(&prev) = seen_at_time.last() {
                assert!(i > prev);
            }
            seen_at_time.push(i);
            last = (t.as_nanos(), i);
        }
        assert!(q.is_empty());
    }
}
