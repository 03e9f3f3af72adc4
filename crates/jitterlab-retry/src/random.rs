//! Where the jitter comes from: [`RandomSource`], the one method the engine draws with, and
//! [`Pcg64Mcg`], the small seedable generator the executors use.
//!
//! The executors seed their own generator (from [`RetrierBuilder::seed`], or from the
//! operating system); a caller needs this module only to drive the policy pieces by hand
//! ([`Backoff::next_delay`], [`RetryPolicy::decide`]) or to hand an executor a stream of its
//! own ([`Retrier::with_rng`]). Any `rand` generator is a source with the `rand_core`
//! feature.
//!
//! [`RetrierBuilder::seed`]: crate::exec::RetrierBuilder::seed
//! [`Backoff::next_delay`]: crate::backoff::Backoff::next_delay
//! [`RetryPolicy::decide`]: crate::policy::RetryPolicy::decide
//! [`Retrier::with_rng`]: crate::exec::Retrier::with_rng

/// A stream of uniformly random 64-bit words: all the engine asks of a generator. Its draws
/// from one word (a uniform `f64`, a uniform integer in a range) are made as rand 0.10 makes
/// them, so a seeded `rand` generator gives the sleeps it gave through `rand`.
pub trait RandomSource {
    /// The next word of the stream.
    fn next_u64(&mut self) -> u64;
}

/// Any `rand_core` 0.10 generator (`rand::rngs::StdRng`, `rand_pcg::Pcg64Mcg`, `&mut` one).
#[cfg(feature = "rand_core")]
#[cfg_attr(docsrs, doc(cfg(feature = "rand_core")))]
impl<R: rand_core::Rng + ?Sized> RandomSource for R {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        rand_core::Rng::next_u64(self)
    }
}

/// PCG's 128-bit multiplicative generator with the XSL RR output (O'Neill's `pcg64_fast`):
/// the same stream, word for word, as `rand_pcg::Pcg64Mcg`, seeded the same way (tested
/// against it), in ten lines rather than two dependencies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcg64Mcg {
    state: u128,
}

impl Pcg64Mcg {
    /// The generator with this state (its low bit forced to 1, as PCG's C code does).
    pub fn new(state: u128) -> Pcg64Mcg {
        Pcg64Mcg { state: state | 1 }
    }

    /// The generator seeded by one word, as `rand_core::SeedableRng::seed_from_u64` seeds it:
    /// its 16 seed bytes are four words of PCG32 started at `seed`.
    pub fn seed_from_u64(mut seed: u64) -> Pcg64Mcg {
        let mut state = 0u128;
        for i in 0..4 {
            seed = seed
                .wrapping_mul(0x5851_F42D_4C95_7F2D)
                .wrapping_add(0xA176_54E4_6FBE_17F3);
            let word = ((((seed >> 18) ^ seed) >> 27) as u32).rotate_right((seed >> 59) as u32);
            state |= u128::from(word) << (32 * i);
        }
        Pcg64Mcg::new(state)
    }
}

impl RandomSource for Pcg64Mcg {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.state = self
            .state
            .wrapping_mul(0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645);
        let rot = (self.state >> 122) as u32;
        (((self.state >> 64) as u64) ^ (self.state as u64)).rotate_right(rot)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::{Pcg64Mcg, RandomSource};

    /// The same seeds and states as rand_pcg's: the same words.
    #[test]
    fn the_stream_is_rand_pcgs_word_for_word() {
        for seed in (0..200u64).chain([u64::MAX, 1 << 63, 0x9E37_79B9_7F4A_7C15]) {
            let mut ours = Pcg64Mcg::seed_from_u64(seed);
            let mut theirs = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
            for _ in 0..50 {
                assert_eq!(
                    ours.next_u64(),
                    rand::Rng::next_u64(&mut theirs),
                    "seed {seed}"
                );
            }
        }
        let state = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210u128;
        let (mut ours, mut theirs) = (Pcg64Mcg::new(state), rand_pcg::Pcg64Mcg::new(state));
        for _ in 0..50 {
            assert_eq!(ours.next_u64(), rand::Rng::next_u64(&mut theirs));
        }
    }
}
