//! The measured send rate of AWS adaptive mode, as in botocore 1.44.8
//! `botocore/retries/adaptive.py` (`RateClocker`).
//!
//! Every answer is counted into half-second buckets (`floor(t * 2) / 2`); when an answer
//! lands in a later bucket than the last one, the count since then divided by the seconds
//! between the two buckets is smoothed into the rate:
//! `rate = smoothing * current + (1 - smoothing) * rate`, `smoothing` being 0.8. The first
//! bucket is the whole second the clock started in, as in the SDK.

/// An exponentially smoothed count of answers per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SendRate {
    smoothing: f64,
    buckets_per_second: f64,
    rate: f64,
    last_bucket: f64,
    count: f64,
}

impl SendRate {
    /// A rate of 0 starting at `start` seconds, with buckets `bucket` seconds long.
    pub fn new(start: f64, smoothing: f64, bucket: f64) -> SendRate {
        SendRate {
            smoothing,
            buckets_per_second: 1.0 / bucket,
            rate: 0.0,
            last_bucket: start.floor(),
            count: 0.0,
        }
    }

    /// Counts one answer at `now` seconds; the measured rate after it.
    pub fn record(&mut self, now: f64) -> f64 {
        let bucket = (now * self.buckets_per_second).floor() / self.buckets_per_second;
        self.count += 1.0;
        if bucket > self.last_bucket {
            let current = self.count / (bucket - self.last_bucket);
            self.rate = current * self.smoothing + self.rate * (1.0 - self.smoothing);
            self.count = 0.0;
            self.last_bucket = bucket;
        }
        self.rate
    }

    /// The measured rate, answers per second.
    pub const fn rate(&self) -> f64 {
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: four answers in [0, 0.5) stay counted; the fifth, at 0.6, closes a 0.5 s
    /// bucket with 5 answers: 0.8 * 5 / 0.5 = 8. Two more by 1.2 (bucket 1.0): 2 / 0.5 = 4,
    /// 0.8 * 4 + 0.2 * 8 = 4.8. One at 3.1 (bucket 3.0): 1 / 2 = 0.5, 0.4 + 0.96 = 1.36.
    #[test]
    fn hand_computed_rate() {
        let mut r = SendRate::new(0.0, 0.8, 0.5);
        for t in [0.0, 0.1, 0.2, 0.4] {
            assert_eq!(r.record(t), 0.0);
        }
        assert!((r.record(0.6) - 8.0).abs() < 1e-12);
        assert!((r.record(0.9) - 8.0).abs() < 1e-12);
        assert!((r.record(1.2) - 4.8).abs() < 1e-12);
        assert!((r.record(3.1) - 1.36).abs() < 1e-12);
        assert!((r.rate() - 1.36).abs() < 1e-12);
    }
}
