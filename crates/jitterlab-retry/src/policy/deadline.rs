//! The overall deadline of a request, counted from its first send.
//!
//! A request may carry a deadline covering every attempt and every sleep. Two rules follow
//! from it: an attempt's timeout is `min(timeout, time left)` and no attempt is made when
//! no time is left; and a retry whose sleep would end at or past the deadline is not taken
//! (sleeping only to give up would waste the caller's time). Times here are integer
//! nanoseconds since the clock's origin ([`crate::time`]).

use std::time::Duration;

use crate::time::from_nanos;

/// The time limit of one attempt (`D`: [`Duration`], or `u64` nanoseconds from the `_nanos`
/// entry points).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttemptTimeout<D = Duration> {
    /// Neither a per-attempt timeout nor a deadline applies.
    Unbounded,
    /// The attempt times out after this long.
    After(D),
    /// The deadline has passed: no attempt should be made.
    Expired,
}

impl AttemptTimeout<Duration> {
    /// The limit as an optional duration; [`AttemptTimeout::Expired`] is zero.
    pub const fn limit(self) -> Option<Duration> {
        match self {
            AttemptTimeout::Unbounded => None,
            AttemptTimeout::After(d) => Some(d),
            AttemptTimeout::Expired => Some(Duration::ZERO),
        }
    }
}

impl AttemptTimeout<u64> {
    /// The same limit as a [`Duration`].
    pub const fn to_duration(self) -> AttemptTimeout {
        match self {
            AttemptTimeout::Unbounded => AttemptTimeout::Unbounded,
            AttemptTimeout::After(ns) => AttemptTimeout::After(from_nanos(ns)),
            AttemptTimeout::Expired => AttemptTimeout::Expired,
        }
    }
}

/// A request's deadline: `start + length` in nanoseconds, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Deadline {
    end: Option<u64>,
}

impl Deadline {
    /// The deadline of a request first sent at `start`, `length` long (`None`: no deadline).
    #[inline]
    pub(crate) const fn new(start: u64, length: Option<u64>) -> Deadline {
        Deadline {
            end: match length {
                Some(d) => Some(start.saturating_add(d)),
                None => None,
            },
        }
    }

    /// The instant the deadline passes, if any.
    #[cfg(test)]
    pub(crate) const fn end(&self) -> Option<u64> {
        self.end
    }

    /// Time left at `now` (`None`: unlimited; zero once passed).
    #[inline]
    pub(crate) const fn remaining(&self, now: u64) -> Option<u64> {
        match self.end {
            Some(end) => Some(end.saturating_sub(now)),
            None => None,
        }
    }

    /// The timeout of an attempt sent at `now` with a per-attempt `timeout`:
    /// `min(timeout, time left)`, or [`AttemptTimeout::Expired`] when no time is left.
    #[inline]
    pub(crate) fn attempt_timeout(&self, now: u64, timeout: Option<u64>) -> AttemptTimeout<u64> {
        match (self.remaining(now), timeout) {
            (Some(0), _) => AttemptTimeout::Expired,
            (Some(left), Some(t)) => AttemptTimeout::After(left.min(t)),
            (Some(left), None) => AttemptTimeout::After(left),
            (None, Some(t)) => AttemptTimeout::After(t),
            (None, None) => AttemptTimeout::Unbounded,
        }
    }

    /// The sleep from `now` that leaves `last` for one more attempt before the deadline, if
    /// it is above zero and at least `floor` (an honoured Retry-After).
    #[inline]
    pub(crate) fn shortened_sleep(&self, now: u64, last: u64, floor: u64) -> Option<u64> {
        let sleep = self.remaining(now)?.checked_sub(last)?;
        (sleep > 0 && sleep >= floor).then_some(sleep)
    }

    /// True when a sleep of `sleep` starting at `now` ends strictly before the deadline (always
    /// true without a deadline).
    #[inline]
    pub(crate) fn allows_sleep(&self, now: u64, sleep: u64) -> bool {
        match self.end {
            Some(end) => now.saturating_add(sleep) < end,
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> u64 {
        v * 1_000_000
    }
    fn at(v: u64) -> u64 {
        ms(v)
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
        assert_eq!(AttemptTimeout::Expired.limit(), Some(Duration::ZERO));
        assert_eq!(
            AttemptTimeout::After(7).to_duration(),
            AttemptTimeout::After(Duration::from_nanos(7))
        );
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
        assert!(!d.allows_sleep(at(500), u64::MAX));
        assert!(Deadline::new(at(0), None).allows_sleep(at(500), u64::MAX));
        // A deadline beyond the end of time saturates instead of wrapping.
        let far = Deadline::new(at(10), Some(u64::MAX));
        assert!(far.allows_sleep(at(20), ms(1)));
    }

    #[test]
    fn a_shortened_sleep_leaves_the_last_attempt_its_time() {
        let d = Deadline::new(at(0), Some(ms(2_500)));
        // At 2 s, 0.5 s left: sleep 0.4 s and leave 0.1 s.
        assert_eq!(d.shortened_sleep(at(2_000), ms(100), 0), Some(ms(400)));
        // Not below an honoured Retry-After, never zero, never past the end.
        assert_eq!(d.shortened_sleep(at(2_000), ms(100), ms(401)), None);
        assert_eq!(d.shortened_sleep(at(2_400), ms(100), 0), None);
        assert_eq!(d.shortened_sleep(at(2_450), ms(100), 0), None);
        assert_eq!(
            Deadline::new(at(0), None).shortened_sleep(at(1), 1, 0),
            None
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn no_allowed_sleep_ends_past_the_deadline(start in 0u64..1u64 << 62, length in 1u64..1u64 << 40, elapsed in 0u64..1u64 << 41, sleep in any::<u64>(), timeout in proptest::option::of(1u64..1u64 << 40)) {
                let d = Deadline::new(start, Some(length));
                let now = start + elapsed;
                if d.allows_sleep(now, sleep) {
                    prop_assert!((now as u128 + sleep as u128) < u128::from(start + length));
                }
                match d.attempt_timeout(now, timeout) {
                    AttemptTimeout::Expired => prop_assert!(elapsed >= length),
                    AttemptTimeout::After(t) => {
                        prop_assert!(t > 0);
                        prop_assert!(now + t <= start + length);
                        if let Some(limit) = timeout { prop_assert!(t <= limit); }
                    }
                    AttemptTimeout::Unbounded => prop_assert!(false, "a deadline always bounds"),
                }
            }
        }
    }
}
