//! The token bucket of AWS adaptive mode, as in botocore 1.44.8 `botocore/retries/bucket.py`
//! (`TokenBucket`): one token per attempt, refilled at the fill rate, holding at most
//! `max(fill rate, 1)` tokens (the capacity, `max_rate` in the SDK).
//!
//! The SDK blocks on a condition variable until the token is there; here
//! [`RateBucket::try_acquire`] says how long to wait instead, and the caller waits (on its own
//! clock) and asks again. The wait is rounded up to whole nanoseconds and a token counts as
//! there when at most [`SLACK`] short of one, so a caller that waited what it was told is not
//! sent back for a float's last digit.

use std::time::Duration;

/// Tokens a bucket may be short of one and still give it (float rounding, nothing more).
pub const SLACK: f64 = 1e-9;

/// A token bucket with a changing fill rate; times are seconds as floats, as in the SDK.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateBucket {
    min_fill_rate: f64,
    fill_rate: f64,
    max_capacity: f64,
    capacity: f64,
    last_refill: f64,
}

impl RateBucket {
    /// An empty bucket at `now` seconds filling at `max(rate, min_fill_rate)`.
    pub fn new(rate: f64, min_fill_rate: f64, now: f64) -> RateBucket {
        let mut bucket = RateBucket {
            min_fill_rate,
            fill_rate: 0.0,
            max_capacity: 0.0,
            capacity: 0.0,
            last_refill: now,
        };
        bucket.set_rate(rate, now);
        bucket
    }

    /// Adds what the fill rate brought since the last refill.
    fn refill(&mut self, now: f64) {
        let added = (now - self.last_refill) * self.fill_rate;
        self.capacity = self.max_capacity.min(self.capacity + added);
        self.last_refill = now;
    }

    /// A new rate at `now`: what the old one brought is filled first; the fill rate is at
    /// least the minimum, the capacity `rate` but at least 1 token, and what the bucket
    /// holds is cut to the new capacity.
    pub fn set_rate(&mut self, rate: f64, now: f64) {
        self.refill(now);
        self.fill_rate = rate.max(self.min_fill_rate);
        self.max_capacity = if rate >= 1.0 { rate } else { 1.0 };
        self.capacity = self.capacity.min(self.max_capacity);
    }

    /// Takes a token at `now`, or says how long to wait for one (then ask again).
    pub fn try_acquire(&mut self, now: f64) -> Result<(), Duration> {
        self.refill(now);
        if self.capacity + SLACK >= 1.0 {
            self.capacity = (self.capacity - 1.0).max(0.0);
            return Ok(());
        }
        let wait = (1.0 - self.capacity) / self.fill_rate;
        Err(Duration::from_nanos((wait * 1e9).ceil() as u64))
    }

    /// Tokens per second.
    pub const fn fill_rate(&self) -> f64 {
        self.fill_rate
    }

    /// The most tokens it holds.
    pub const fn max_capacity(&self) -> f64 {
        self.max_capacity
    }

    /// The tokens it held at the last refill.
    pub const fn capacity(&self) -> f64 {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: at 2 tokens/s, empty at 0: a token after 0.5 s; the capacity caps at 2; a
    /// rate of 0.2 fills at the minimum 0.5 with a capacity of 1.
    #[test]
    fn hand_computed_bucket() {
        let mut b = RateBucket::new(2.0, 0.5, 0.0);
        assert_eq!(b.try_acquire(0.0), Err(Duration::from_millis(500)));
        assert_eq!(b.try_acquire(0.5), Ok(()));
        assert!(b.capacity().abs() < 1e-12);
        assert_eq!(b.try_acquire(10.0), Ok(()));
        assert!((b.capacity() - 1.0).abs() < 1e-12, "cut to 2, less one");
        b.set_rate(0.2, 10.0);
        assert_eq!((b.fill_rate(), b.max_capacity()), (0.5, 1.0));
        assert_eq!(b.try_acquire(10.0), Ok(()));
        // 0.25 tokens after 0.5 s at 0.5/s: 0.75 / 0.5 = 1.5 s to go.
        assert_eq!(b.try_acquire(10.5), Err(Duration::from_millis(1500)));
        // The new rate counts only from when it was set: 0.75 / 4 = 187.5 ms.
        b.set_rate(4.0, 10.5);
        assert_eq!(b.try_acquire(10.5), Err(Duration::from_micros(187_500)));
        // Full at 4 tokens by 12; a rate of 3 cuts what it holds to 3.
        b.set_rate(3.0, 12.0);
        assert_eq!((b.capacity(), b.max_capacity()), (3.0, 3.0));
    }
}
