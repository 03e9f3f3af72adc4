//! The engine's two uniform draws, made exactly as rand 0.10 makes them (`random::<f64>()`
//! and `random_range(low..=high)` on `u64`), on any [`Rng`]: the engine needs only
//! `rand_core`'s trait, not the whole of `rand` (a third of a cold build), and a seeded
//! stream draws the same values as before, bit for bit (the tests below check it against
//! rand itself; the simulator's golden results too).

use rand_core::Rng;

/// A uniform `f64` in `[0, 1)`: the top 53 bits of one word, scaled (rand's
/// `StandardUniform`).
#[inline]
pub(crate) fn unit_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
    (rng.next_u64() >> 11) as f64 * SCALE
}

/// A uniform integer in `[low, high]` (`low <= high`): one widening multiply, and a second
/// word only when the first falls in the biased zone (rand's `UniformInt` single sample,
/// without its `unbiased` feature).
#[inline]
pub(crate) fn u64_inclusive<R: Rng + ?Sized>(rng: &mut R, low: u64, high: u64) -> u64 {
    debug_assert!(low <= high);
    let range = high.wrapping_sub(low).wrapping_add(1);
    if range == 0 {
        // The whole of u64.
        return rng.next_u64();
    }
    let (mut result, lo_order) = wmul(rng.next_u64(), range);
    if lo_order > range.wrapping_neg() {
        let (new_hi_order, _) = wmul(rng.next_u64(), range);
        result += u64::from(lo_order.checked_add(new_hi_order).is_none());
    }
    low.wrapping_add(result)
}

/// The 128-bit product of `a` and `b`: (high word, low word).
#[inline]
fn wmul(a: u64, b: u64) -> (u64, u64) {
    let product = u128::from(a) * u128::from(b);
    ((product >> 64) as u64, product as u64)
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    use super::*;

    /// The same stream through rand and through these: the same values and the same words
    /// consumed, over ranges that often fall in the biased zone (just past a power of two)
    /// and the whole of u64.
    #[test]
    fn the_draws_are_rands_bit_for_bit() {
        let highs = [
            0,
            1,
            2,
            3,
            1000,
            (1 << 63) + 1,
            (1 << 62) + 3,
            u64::MAX - 1,
            u64::MAX,
        ];
        for seed in 0..500u64 {
            let mut ours = Pcg64Mcg::seed_from_u64(seed);
            let mut theirs = Pcg64Mcg::seed_from_u64(seed);
            for (i, &high) in highs.iter().enumerate() {
                let low = if i % 2 == 0 { 0 } else { high / 3 };
                assert_eq!(
                    u64_inclusive(&mut ours, low, high),
                    theirs.random_range(low..=high),
                    "seed {seed}, {low}..={high}"
                );
                assert_eq!(
                    unit_f64(&mut ours).to_bits(),
                    theirs.random::<f64>().to_bits()
                );
            }
            assert_eq!(
                ours.next_u64(),
                theirs.next_u64(),
                "the same words consumed"
            );
        }
    }
}
