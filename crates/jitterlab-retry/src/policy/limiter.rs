//! A concurrency limiter: at most `limit` attempts in flight at once.
//!
//! A pure counter. Whoever drives it keeps its own wait queue: the simulator parks the
//! attempt and retries [`ConcurrencyLimiter::try_acquire`] when a slot is released.

use crate::param::ParamError;

/// Counts attempts in flight against a fixed limit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConcurrencyLimiter {
    limit: u32,
    in_flight: u32,
}

impl ConcurrencyLimiter {
    /// A limiter allowing `limit` attempts at once (at least 1).
    pub fn new(limit: u32) -> Result<ConcurrencyLimiter, ParamError> {
        if limit == 0 {
            return Err(ParamError::new("limit", limit, "an integer of at least 1"));
        }
        Ok(ConcurrencyLimiter {
            limit,
            in_flight: 0,
        })
    }

    /// Takes a slot if one is free.
    #[inline]
    pub fn try_acquire(&mut self) -> bool {
        if self.in_flight < self.limit {
            self.in_flight += 1;
            true
        } else {
            false
        }
    }

    /// Gives a slot back (a release with nothing in flight is ignored).
    #[inline]
    pub fn release(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// Attempts in flight.
    pub const fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// The limit.
    pub const fn limit(&self) -> u32 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_limit_in_flight() {
        let mut l = ConcurrencyLimiter::new(2).unwrap();
        assert!(l.try_acquire());
        assert!(l.try_acquire());
        assert!(!l.try_acquire());
        assert_eq!(l.in_flight(), 2);
        l.release();
        assert_eq!(l.in_flight(), 1);
        assert!(l.try_acquire());
        assert!(!l.try_acquire());
        l.release();
        l.release();
        l.release();
        assert_eq!(l.in_flight(), 0);
        assert_eq!(ConcurrencyLimiter::new(0).unwrap_err().field, "limit");
    }
}
