//! The event queue: a priority queue ordered by `(time, seq)`, `seq` the push order.
//!
//! **Ordering guarantee.** Events pop in increasing time; events with equal times pop in the
//! order they were pushed (first in, first out). The order is therefore a function of the
//! pushes alone: the same run gives the same order on every machine and thread count.
//! Scheduling in the past is a bug and panics in debug builds.
//!
//! Events known before the run starts (a burst's arrivals, possibly millions) are not pushed:
//! they are kept sorted in a separate list and merged on pop. They count as pushed first, in
//! list order, so on equal times they come before anything pushed during the run: exactly the
//! order of one queue holding them all, at a fraction of the cost.

use std::cell::Cell;

use super::event::Event;
use super::spare;
use crate::time::SimTime;

/// 20 bytes: the push order needs no stored sequence number (see [`EventQueue`]), and the
/// time is stored unaligned rather than padded (a million pending events take 20 MB, not 24).
#[derive(Debug, Clone, Copy)]
#[repr(C, packed(4))]
struct Entry {
    time: u64,
    event: Event,
}

/// Buckets of a radix heap over `u64` times: bucket 0 holds events at exactly `last`, bucket
/// `i > 0` those whose time differs from `last` first in bit `i - 1`.
const BUCKETS: usize = 65;

/// Pre-scheduled events consumed before the list is compacted (see `compact_pre`): below
/// this the list is small and compacting would only cost time.
const PRE_COMPACT_MIN: usize = 1 << 14;

/// At most this many events are offered by [`EventQueue::upcoming`].
const MAX_UPCOMING: usize = 16;

/// A dropped queue's buckets are kept for the next queue on its thread (see [`spare`]) when
/// they have room for at most this many entries in all.
const SPARE_MAX: usize = 1 << 16;

thread_local! {
    static SPARE_BUCKETS: Cell<Option<Vec<Vec<Entry>>>> = const { Cell::new(None) };
}

/// The queue of pending events.
///
/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990), valid because time never goes
/// backwards: a push is an append; a pop takes from bucket 0 or, when it is empty, spreads the
/// lowest non-empty bucket into lower ones around its minimum. Each event moves at most 64
/// times, usually a few, through sequential memory: far fewer cache misses than a binary heap
/// once millions of events are pending.
///
/// First in, first out on equal times holds by construction, without a sequence number: a
/// bucket's index is a function of the time (and the origin), so all pending events of one
/// time sit in one bucket; pushes append to it, and moving a bucket down keeps its order, so
/// the events of one time are always stored in push order.
#[derive(Debug)]
pub struct EventQueue {
    buckets: Vec<Vec<Entry>>,
    /// Smallest time in each bucket (meaningful when the bucket is not empty).
    mins: [u64; BUCKETS],
    /// Bit `i - 1` set when bucket `i` (1..=64) is not empty: the lowest is one instruction away.
    occupied: u64,
    /// Next entry to pop from bucket 0.
    head: usize,
    /// The radix origin: no pending heap event is earlier, and it is never later than now.
    last: u64,
    len: usize,
    /// Pre-scheduled events, sorted by time (stable), consumed from `next_pre`.
    pre: Vec<(u64, Event)>,
    next_pre: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        let buckets = spare::take(&SPARE_BUCKETS)
            .unwrap_or_else(|| (0..BUCKETS).map(|_| Vec::new()).collect());
        EventQueue {
            buckets,
            mins: [u64::MAX; BUCKETS],
            occupied: 0,
            head: 0,
            last: 0,
            len: 0,
            pre: Vec::new(),
            next_pre: 0,
        }
    }
}

impl Drop for EventQueue {
    fn drop(&mut self) {
        if self.buckets.iter().map(Vec::capacity).sum::<usize>() <= SPARE_MAX {
            let mut buckets = std::mem::take(&mut self.buckets);
            buckets.iter_mut().for_each(Vec::clear);
            spare::give(&SPARE_BUCKETS, buckets);
        }
    }
}

/// Appends `e` to bucket `b`, keeping the bucket's minimum and the occupied bits (bit
/// `b - 1` for a bucket above 0).
#[inline]
fn place(
    buckets: &mut [Vec<Entry>],
    mins: &mut [u64; BUCKETS],
    occupied: &mut u64,
    b: usize,
    e: Entry,
) {
    mins[b] = mins[b].min(e.time);
    if b > 0 {
        *occupied |= 1 << (b - 1);
    }
    buckets[b].push(e);
}

#[inline]
fn bucket_of(time: u64, last: u64) -> usize {
    (u64::BITS - (time ^ last).leading_zeros()) as usize
}

impl EventQueue {
    /// An empty queue with room for `capacity` pending events.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut q = EventQueue::default();
        q.buckets[0].reserve(capacity);
        q
    }

    /// Installs events known in advance. They are sorted by time, keeping the given order on
    /// equal times, and come before any event pushed at the same time.
    pub fn preschedule(&mut self, mut events: Vec<(SimTime, Event)>) {
        debug_assert!(
            self.pre.is_empty() && self.len == 0,
            "preschedule once, before the run"
        );
        events.sort_by_key(|(t, _)| *t);
        self.pre = events.into_iter().map(|(t, e)| (t.as_nanos(), e)).collect();
        self.next_pre = 0;
    }

    /// Frees the consumed half of the pre-scheduled list. A million clients' first events take
    /// 24 MB, while their later events fill the heap: keeping the list whole until the run
    /// ends would hold both at once. Each compaction moves at most what remains, so all of
    /// them together move fewer entries than the list held.
    #[cold]
    fn compact_pre(&mut self) {
        self.pre.drain(..self.next_pre);
        self.pre.shrink_to_fit();
        self.next_pre = 0;
    }

    /// Schedules `event` at `time` (>= now).
    #[inline]
    pub fn push(&mut self, time: SimTime, event: Event) {
        let time = time.as_nanos();
        debug_assert!(
            time >= self.last,
            "scheduling in the past: {time} < {}",
            self.last
        );
        self.len += 1;
        let b = bucket_of(time, self.last);
        place(
            &mut self.buckets,
            &mut self.mins,
            &mut self.occupied,
            b,
            Entry { time, event },
        );
    }

    /// The lowest non-empty bucket above 0.
    #[inline]
    fn lowest_occupied(&self) -> Option<usize> {
        (self.occupied != 0).then(|| self.occupied.trailing_zeros() as usize + 1)
    }

    /// Events that are likely to pop next: the next pre-scheduled one, and at most
    /// `MAX_UPCOMING` of the heap: the first of bucket 0, else the lowest occupied bucket when
    /// it is that small. The next event is usually among them, and its client's memory can be
    /// fetched while the current event is handled.
    #[inline]
    pub fn upcoming(&self) -> impl Iterator<Item = Event> + '_ {
        let pre = self.pre.get(self.next_pre).map(|&(_, e)| e);
        let rest = self.buckets[0].get(self.head..).unwrap_or(&[]);
        let candidates = if !rest.is_empty() {
            // These pop next, in this order.
            &rest[..rest.len().min(MAX_UPCOMING)]
        } else {
            // The next is one of these, in no known order: all of them, or none.
            match self.lowest_occupied().map(|i| &self.buckets[i][..]) {
                Some(bucket) if bucket.len() <= MAX_UPCOMING => bucket,
                _ => &[],
            }
        };
        pre.into_iter().chain(candidates.iter().map(|e| e.event))
    }

    /// The earliest time in the heap (not counting pre-scheduled events), without moving
    /// anything.
    #[inline]
    fn heap_min(&self) -> Option<u64> {
        if self.head < self.buckets[0].len() {
            return Some(self.last);
        }
        self.lowest_occupied().map(|i| self.mins[i])
    }

    /// Makes bucket 0 hold the earliest heap events; false when the heap is empty.
    #[inline]
    fn refill(&mut self) -> bool {
        if self.head < self.buckets[0].len() {
            return true;
        }
        self.buckets[0].clear();
        self.head = 0;
        let Some(i) = self.lowest_occupied() else {
            return false;
        };
        let min = self.mins[i];
        self.last = min;
        self.mins[i] = u64::MAX;
        self.occupied &= !(1 << (i - 1));
        if self.buckets[i].len() == 1 {
            // Half the refills of a small queue: the one event is the minimum, bucket 0's.
            let e = self.buckets[i][0];
            self.buckets[i].clear();
            self.buckets[0].push(e);
            return true;
        }
        let mut moving = std::mem::take(&mut self.buckets[i]);
        // The occupied bits in a local, which stays in a register through the loop.
        let mut occupied = self.occupied;
        for &e in &moving {
            let b = bucket_of(e.time, min);
            place(&mut self.buckets, &mut self.mins, &mut occupied, b, e);
        }
        self.occupied = occupied;
        moving.clear();
        // Keep the emptied bucket's allocation for later pushes, unless it is large: a burst
        // cascades down through many buckets and keeping every one's peak would multiply the
        // queue's memory.
        if moving.capacity() <= 1 << 14 {
            self.buckets[i] = moving;
        }
        true
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.pop_until(SimTime::NEVER)
    }

    /// Removes and returns the earliest event if it is due at or before `limit` (the
    /// simulator's horizon); otherwise leaves it pending.
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, Event)> {
        let limit = limit.as_nanos();
        if let Some(&(time, event)) = self.pre.get(self.next_pre) {
            // Pre-scheduled events count as pushed first: they win ties.
            if self.heap_min().is_none_or(|h| time <= h) {
                if time > limit {
                    return None;
                }
                self.next_pre += 1;
                if self.next_pre >= PRE_COMPACT_MIN && self.next_pre * 2 >= self.pre.len() {
                    self.compact_pre();
                }
                return Some((SimTime(time), event));
            }
        }
        if !self.refill() || self.buckets[0][self.head].time > limit {
            return None;
        }
        let e = self.buckets[0][self.head];
        self.head += 1;
        self.len -= 1;
        Some((SimTime(e.time), e.event))
    }

    /// The time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        let pre = self.pre.get(self.next_pre).map(|(t, _)| *t);
        match (pre, self.heap_min()) {
            (Some(a), Some(b)) => Some(SimTime(a.min(b))),
            (a, b) => a.or(b).map(SimTime),
        }
    }

    /// Pending events.
    pub fn len(&self) -> usize {
        self.len + self.pre.len() - self.next_pre
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

    #[test]
    fn an_entry_is_20_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 20);
    }

    /// The radix heap against a reference `BinaryHeap` of `(time, seq)`, with pushes and pops
    /// interleaved as in a simulation (never in the past) and pre-scheduled events mixed in;
    /// the first seeds pre-schedule enough events for the list to be compacted twice.
    #[test]
    fn matches_a_reference_heap() {
        use rand::RngExt;
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        for seed in 0..200 {
            let mut rng = crate::rng::from_seed(seed);
            let mut q = EventQueue::default();
            let mut reference = BinaryHeap::new();
            let (pres, steps) = if seed < 3 {
                (40_000, 100_000)
            } else {
                (50, 5_000)
            };
            let pre: Vec<(SimTime, Event)> = (0..pres)
                .map(|i| (SimTime(rng.random_range(0..5_000)), Event::Start(i)))
                .collect();
            let mut sorted = pre.clone();
            sorted.sort_by_key(|(t, _)| *t);
            for (i, (t, e)) in sorted.iter().enumerate() {
                reference.push(Reverse((t.as_nanos(), i as u64, *e)));
            }
            q.preschedule(pre);
            let mut seq = u64::from(pres); // pushes come after every pre-scheduled event
            let mut now = 0u64;
            let (mut offered, mut foreseen) = (0u32, 0u32);
            for step in 0..steps {
                if rng.random_bool(0.55) {
                    let scale = [0u64, 3, 100, 1 << 20, 1 << 40][rng.random_range(0..5)];
                    let t = now + rng.random_range(0..=scale);
                    q.push(SimTime(t), Event::Wake(step));
                    reference.push(Reverse((t, seq, Event::Wake(step))));
                    seq += 1;
                } else {
                    let next: Vec<Event> = q.upcoming().collect();
                    let got = q.pop();
                    if let Some((_, e)) = got {
                        offered += 1;
                        foreseen += u32::from(next.contains(&e));
                    }
                    let want = reference.pop().map(|Reverse((t, _, e))| (SimTime(t), e));
                    assert_eq!(got, want, "seed {seed} step {step}");
                    assert_eq!(q.len(), reference.len(), "seed {seed} step {step}");
                    if let Some((t, _)) = got {
                        now = t.as_nanos();
                    }
                }
            }
            // The lookahead that lets the engine prefetch: usually the next event (over 90 %
            // here; 27 % when it offers only the pre-scheduled one).
            assert!(
                foreseen * 10 >= offered * 8,
                "seed {seed}: {foreseen} of {offered} pops foreseen"
            );
            while let Some(Reverse((t, _, e))) = reference.pop() {
                assert_eq!(q.pop(), Some((SimTime(t), e)));
            }
            assert_eq!(q.pop(), None);
        }
    }
}
