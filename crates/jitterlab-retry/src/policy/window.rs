//! A sliding window of counters over a small ring of time slots.
//!
//! The ratio retry budget and the circuit breaker both ask "how many X and how many Y in the
//! last `window`?". They share this ring: `SLOTS` slots, each `window / SLOTS` wide, each
//! tagged with the absolute slot number it holds so that stale slots are recognised (and
//! reset) lazily. Time is passed in, in integer nanoseconds; nothing here reads a clock.
//!
//! Because counts are kept per slot, the window actually covered is between
//! `window - window / SLOTS` and `window` long: the oldest slot leaves as a whole.

/// Number of slots in the ring.
pub(crate) const SLOTS: usize = 10;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Absolute slot number (`now / width`) this slot holds counts for.
    epoch: u64,
    a: u32,
    b: u32,
}

/// Two counters (`a`, `b`) summed over a sliding window (each slot saturates at `u32::MAX`).
#[derive(Debug, Clone)]
pub(crate) struct SlidingWindow {
    /// Slot width in nanoseconds (at least 1).
    width: u64,
    slots: [Slot; SLOTS],
}

impl SlidingWindow {
    /// A window `window` nanoseconds long (callers validate it; a zero window is treated as
    /// 1 ns per slot rather than dividing by zero).
    pub(crate) fn new(window: u64) -> Self {
        SlidingWindow {
            width: (window / SLOTS as u64).max(1),
            slots: [Slot::default(); SLOTS],
        }
    }

    #[inline]
    fn epoch(&self, now: u64) -> u64 {
        now / self.width
    }

    /// Adds `da` and `db` to the slot holding `now`.
    #[inline]
    pub(crate) fn add(&mut self, now: u64, da: u32, db: u32) {
        let epoch = self.epoch(now);
        let slot = &mut self.slots[(epoch % SLOTS as u64) as usize];
        if slot.epoch != epoch {
            *slot = Slot { epoch, a: 0, b: 0 };
        }
        slot.a = slot.a.saturating_add(da);
        slot.b = slot.b.saturating_add(db);
    }

    /// Takes `da` and `db` back from the slot holding `now`, if it still holds that time (a
    /// count whose slot has been reused is already gone).
    #[inline]
    pub(crate) fn remove(&mut self, now: u64, da: u32, db: u32) {
        let epoch = self.epoch(now);
        let slot = &mut self.slots[(epoch % SLOTS as u64) as usize];
        if slot.epoch == epoch {
            slot.a = slot.a.saturating_sub(da);
            slot.b = slot.b.saturating_sub(db);
        }
    }

    /// The sums of `a` and `b` over the slots still inside the window at `now`.
    #[inline]
    pub(crate) fn sums(&self, now: u64) -> (u64, u64) {
        let epoch = self.epoch(now);
        let oldest = epoch.saturating_sub(SLOTS as u64 - 1);
        self.slots
            .iter()
            .filter(|s| s.epoch >= oldest && s.epoch <= epoch)
            .fold((0, 0), |(a, b), s| (a + u64::from(s.a), b + u64::from(s.b)))
    }

    /// Forgets every count.
    pub(crate) fn clear(&mut self) {
        self.slots = [Slot::default(); SLOTS];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> u64 {
        ms * 1_000_000
    }

    #[test]
    fn counts_expire_after_the_window() {
        let mut w = SlidingWindow::new(10_000_000_000);
        w.add(at_ms(0), 3, 1);
        w.add(at_ms(500), 2, 0);
        w.add(at_ms(4_999), 1, 1);
        assert_eq!(w.sums(at_ms(5_000)), (6, 2));
        // Slot 0 (0..1 s) is still inside at 9.999 s, gone at 10 s.
        assert_eq!(w.sums(at_ms(9_999)), (6, 2));
        assert_eq!(w.sums(at_ms(10_000)), (1, 1));
        assert_eq!(w.sums(at_ms(15_000)), (0, 0));
        // A reused ring position is reset, not added to.
        w.add(at_ms(20_100), 1, 0);
        assert_eq!(w.sums(at_ms(20_200)), (1, 0));
        // Taking back: from the slot of that time while it holds it, never below zero.
        w.add(at_ms(20_100), 2, 1);
        w.remove(at_ms(20_150), 1, 5);
        assert_eq!(w.sums(at_ms(20_200)), (2, 0));
        w.remove(at_ms(0), 2, 0);
        assert_eq!(
            w.sums(at_ms(20_200)),
            (2, 0),
            "slot 0 holds 20 s now, not 0 s"
        );
        w.clear();
        assert_eq!(w.sums(at_ms(20_200)), (0, 0));
    }

    #[test]
    fn slot_zero_at_time_zero_is_counted() {
        // Epoch 0 must not be mistaken for an empty slot's default epoch.
        let mut w = SlidingWindow::new(1_000_000_000);
        w.add(0, 1, 0);
        assert_eq!(w.sums(0), (1, 0));
    }
}
