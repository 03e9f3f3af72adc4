//! CUBIC for a send rate: the fill-rate curve of the AWS SDKs' adaptive retry mode, as in
//! botocore 1.44.8 `botocore/retries/throttling.py` (`CubicCalculator`).
//!
//! After a throttling answer at send rate `r` and time `t0`, the rate drops to `beta * r` and
//! then grows along `scale * (t - t0 - K)^3 + W_max`, where `W_max = r` and
//! `K = cbrt(W_max * (1 - beta) / scale)` is when the curve gets back to `W_max`. Seconds and
//! requests per second are floats, as in the SDK.

/// The CUBIC state: the rate at the last throttle, its zero point and its time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CubicRate {
    scale: f64,
    beta: f64,
    w_max: f64,
    k: f64,
    last_throttle: f64,
}

impl CubicRate {
    /// A curve with `W_max = starting_max_rate` and its last throttle at `start` (seconds).
    pub fn new(starting_max_rate: f64, start: f64, scale: f64, beta: f64) -> CubicRate {
        let mut cubic = CubicRate {
            scale,
            beta,
            w_max: starting_max_rate,
            k: 0.0,
            last_throttle: start,
        };
        cubic.k = cubic.zero_point();
        cubic
    }

    /// `K = (W_max * (1 - beta) / scale)^(1/3)`, spelt as botocore spells it.
    fn zero_point(&self) -> f64 {
        (self.w_max * (1.0 - self.beta) / self.scale).powf(1.0 / 3.0)
    }

    /// The rate `now` seconds into the run after a non-throttling answer.
    pub fn on_success(&self, now: f64) -> f64 {
        let dt = now - self.last_throttle;
        self.scale * (dt - self.k).powi(3) + self.w_max
    }

    /// A throttling answer at `now` while sending at `rate`: the new `W_max` is `rate`, and
    /// the new rate `beta * rate`.
    pub fn on_throttle(&mut self, rate: f64, now: f64) -> f64 {
        self.w_max = rate;
        self.k = self.zero_point();
        self.last_throttle = now;
        rate * self.beta
    }

    /// `W_max`: the send rate at the last throttle.
    pub const fn w_max(&self) -> f64 {
        self.w_max
    }

    /// `K`: seconds after the last throttle at which the curve is back at `W_max`.
    pub const fn k(&self) -> f64 {
        self.k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    /// By hand, beta 0.7, scale 0.4: a throttle at 10 req/s gives W_max 10, rate 7,
    /// K = cbrt(10 * 0.3 / 0.4) = cbrt(7.5) = 1.957434..., and t seconds later
    /// 0.4 * (t - K)^3 + 10.
    #[test]
    fn hand_computed_curve() {
        let mut c = CubicRate::new(0.0, 0.0, 0.4, 0.7);
        close(c.k(), 0.0);
        close(c.on_throttle(10.0, 5.0), 7.0);
        close(c.w_max(), 10.0);
        close(c.k(), 1.957_433_820_584_431_7);
        close(c.on_success(5.0), 7.0);
        close(
            c.on_success(6.0),
            0.4 * (1.0_f64 - 1.957_433_820_584_431_7).powi(3) + 10.0,
        );
        close(c.on_success(6.0), 9.648_936_009_66);
        close(c.on_success(5.0 + 1.957_433_820_584_431_7), 10.0);
        close(
            c.on_success(8.0),
            0.4 * (3.0_f64 - 1.957_433_820_584_431_7).powi(3) + 10.0,
        );
        close(c.on_success(8.0), 10.453_284_520_772_092);
        // A second throttle at 4 req/s: W_max 4, K = cbrt(3) = 1.442249...
        close(c.on_throttle(4.0, 9.0), 2.8);
        close(c.k(), 1.442_249_570_307_408_3);
    }
}
