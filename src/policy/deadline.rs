//! The overall deadline of a request, counted from its first send.
//!
//! A request may carry a deadline covering every attempt and every sleep. Two rules follow
//! (DESIGN §3): an attempt's timeout is `min(timeout, time left)` and no attempt is made when
//! no time is left; and a retry whose sleep would end at or past the deadline is not taken
//! (sleeping only to give up would waste the caller's time).

use crate::time::{SimDuration, SimTime};

/// The time limit of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptTimeout {
    /// Neither a per-attempt timeout nor a deadline applies.
    Unbounded,
    /// The attempt times out after this long.
    After(SimDuration),
    /// The deadline has passed: no attempt should be made.
    Expired,
}

impl AttemptTimeout {
    /// The limit as an optional duration; [`AttemptTimeout::Expired`] is zero.
    pub const fn limit(self) -> Option<SimDuration> {
        match self {
            AttemptTimeout::Unbounded => None,
            AttemptTimeout::After(d) => Some(d),
            AttemptTimeout::Expired => Some(SimDuration::ZERO),
        }
    }
}

/// A request's deadline: `start + length`, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Deadline {
    end: Option<SimTime>,
}

impl Deadline {
    /// The deadline of a request first sent at `start`, `length` long (`None`: no deadline).
    #[inline]
    pub const fn new(start: SimTime, length: Option<SimDuration>) -> Deadline {
        Deadline {
            end: match length {
                Some(d) => Some(start.saturating_add(d)),
                None => None,
            },
        }
    }

    /// The instant the deadline passes, if any.
    pub const fn end(&self) -> Option<SimTime> {
        self.end
    }

    /// Time left at `now` (`None`: unlimited; zero once passed).
    #[inline]
    pub const fn remaining(&self, now: SimTime) -> Option<SimDuration> {
        match self.end {
            Some(end) => Some(end.saturating_since(now)),
            None => None,
        }
    }

    /// The timeout of an attempt sent at `now` with a per-attempt `timeout`:
    /// `min(timeout, time left)`, or [`AttemptTimeout::Expired`] when no time is left.
    #[inline]
    pub fn attempt_timeout(&self, now: SimTime, timeout: Option<SimDuration>) -> AttemptTimeout {
        match (self.remaining(now), timeout) {
            (Some(SimDuration::ZERO), _) => AttemptTimeout::Expired,
            (Some(left), Some(t)) => AttemptTimeout::After(left.min(t)),
            (Some(left), None) => AttemptTimeout::After(left),
            (None, Some(t)) => AttemptTimeout::After(t),
            (None, None) => AttemptTimeout::Unbounded,
        }
    }

    /// True when a sleep of `sleep` starting at `now` ends strictly before the deadline (always
    /// true without a deadline).
    #[inline]
    pub fn allows_sleep(&self, now: SimTime, sleep: SimDuration) -> bool {
        match self.end {
            Some(end) => now.saturating_add(sleep) < end,
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimDuration {
        SimDuration::from_millis(v)
    }
    fn at(v: u64) -> SimTime {
        SimTime::ZERO + ms(v)
    }

    #[test]
    fn attempt_timeout_is_the_smaller_limit() {
        let d = Deadline::new(at(1_000), Some(ms(3_000)));
        assert_eq!(d.end(), Some(at(4_000)));
        assert_eq!(
            d.attempt_timeout(at(1_000), Some(ms(1_000))),
            AttemptTimeout::After(ms(1_000))
        );
        assert_eq!(
            d.attempt_timeout(at(3_500), Some(ms(1_000))),
            AttemptTimeout::After(ms(500))
        );
        assert_eq!(
            d.attempt_timeout(at(3_500), None),
            AttemptTimeout::After(ms(500))
        );
        assert_eq!(
            d.attempt_timeout(at(4_000), Some(ms(1_000))),
            AttemptTimeout::Expired
        );
        assert_eq!(d.attempt_timeout(at(9_000), None), AttemptTimeout::Expired);
        assert_eq!(AttemptTimeout::Expired.limit(), Some(SimDuration::ZERO));
        let none = Deadline::new(at(0), None);
        assert_eq!(
            none.attempt_timeout(at(5), Some(ms(7))),
            AttemptTimeout::After(ms(7))
        );
        assert_eq!(none.attempt_timeout(at(5), None), AttemptTimeout::Unbounded);
        assert_eq!(none.remaining(at(5)), None);
    }

    #[test]
    fn a_sleep_ending_at_the_deadline_is_refused() {
        let d = Deadline::new(at(0), Some(ms(1_000)));
        assert!(d.allows_sleep(at(500), ms(499)));
        assert!(!d.allows_sleep(at(500), ms(500)));
        assert!(!d.allows_sleep(at(500), SimDuration::MAX));
        assert!(Deadline::new(at(0), None).allows_sleep(at(500), SimDuration::MAX));
        // A deadline beyond the end of time saturates instead of wrapping.
        let far = Deadline::new(at(10), Some(SimDuration::MAX));
        assert!(far.allows_sleep(at(20), ms(1)));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn no_allowed_sleep_ends_past_the_deadline(start in 0u64..1u64 << 62, length in 1u64..1u64 << 40, elapsed in 0u64..1u64 << 41, sleep in any::<u64>(), timeout in proptest::option::of(1u64..1u64 << 40)) {
                let d = Deadline::new(SimTime(start), Some(SimDuration(length)));
                let now = SimTime(start + elapsed);
                if d.allows_sleep(now, SimDuration(sleep)) {
                    prop_assert!((now.as_nanos() as u128 + sleep as u128) < u128::from(start + length));
                }
                match d.attempt_timeout(now, timeout.map(SimDuration)) {
                    AttemptTimeout::Expired => prop_assert!(elapsed >= length),
                    AttemptTimeout::After(t) => {
                        prop_assert!(t > SimDuration::ZERO);
                        prop_assert!(now.as_nanos() + t.as_nanos() <= start + length);
                        if let Some(limit) = timeout { prop_assert!(t.as_nanos() <= limit); }
                    }
                    AttemptTimeout::Unbounded => prop_assert!(false, "a deadline always bounds"),
                }
            }
        }
    }
}
