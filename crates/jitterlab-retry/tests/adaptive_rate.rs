//! The AWS adaptive mode's rate limiter against botocore itself: the steps that
//! tests/vectors/botocore_adaptive.py recorded from botocore's own `ClientRateLimiter`,
//! replayed on [`AdaptiveRateLimiter`] (token waits, fill rate, capacity, measured rate,
//! CUBIC's `W_max` and `K` after every answer), within a float tolerance.

use std::time::Duration;

use jitterlab_retry::policy::{AdaptiveRateConfig, AdaptiveRateLimiter};
use serde_json::Value;

fn vectors() -> Value {
    let path = format!(
        "{}/tests/vectors/botocore-adaptive-1.44.8.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// Equal within 1e-6, relative to the larger (at least 1).
fn close(what: &str, step: usize, ours: f64, botocore: f64) {
    let scale = ours.abs().max(botocore.abs()).max(1.0);
    assert!(
        (ours - botocore).abs() <= 1e-6 * scale,
        "step {step}: {what} is {ours}, botocore {botocore}"
    );
}

#[test]
fn the_constants_are_botocores() {
    let c = &vectors()["constants"];
    let ours = AdaptiveRateConfig::default();
    assert_eq!(ours.beta, f(c, "beta"));
    assert_eq!(ours.scale, f(c, "scale_constant"));
    assert_eq!(ours.smoothing, f(c, "smoothing"));
    assert_eq!(ours.bucket.as_secs_f64(), f(c, "time_bucket_range_s"));
    assert_eq!(ours.min_fill_rate, f(c, "min_fill_rate"));
    assert_eq!(ours.max_rate_scale, f(c, "max_rate_adjust_scale"));
}

#[test]
fn replays_botocores_limiter() {
    let v = vectors();
    assert_eq!(v["botocore"], "1.44.8");
    let latency = Duration::from_secs_f64(f(&v, "latency_s"));
    let steps = v["steps"].as_array().unwrap();
    let (mut throttles, mut waits) = (0, 0);
    let mut limiter = AdaptiveRateLimiter::new(AdaptiveRateConfig::default(), Duration::ZERO);
    for (i, step) in steps.iter().enumerate() {
        let want = Duration::from_secs_f64(f(step, "want_s"));
        let mut now = want;
        let mut tries = 0;
        while let Err(wait) = limiter.try_acquire(now) {
            now += wait;
            tries += 1;
            assert!(tries < 4, "step {i}: still waiting after {tries} waits");
        }
        close("delay", i, (now - want).as_secs_f64(), f(step, "delay_s"));
        let answer = now + latency;
        close("answer time", i, answer.as_secs_f64(), f(step, "answer_s"));
        let throttled = step["throttled"].as_bool().unwrap();
        limiter.on_answer(answer, throttled);
        assert_eq!(
            limiter.enabled(),
            step["enabled"].as_bool().unwrap(),
            "step {i}"
        );
        close("fill rate", i, limiter.fill_rate(), f(step, "fill_rate"));
        close(
            "max capacity",
            i,
            limiter.max_capacity(),
            f(step, "max_capacity"),
        );
        close("capacity", i, limiter.capacity(), f(step, "capacity"));
        close(
            "measured rate",
            i,
            limiter.measured_rate(),
            f(step, "measured_rate"),
        );
        let (w_max, k) = limiter.cubic();
        close("W_max", i, w_max, f(step, "w_max"));
        close("K", i, k, f(step, "k"));
        throttles += usize::from(throttled);
        waits += usize::from(f(step, "delay_s") > 0.0);
    }
    // The vectors exercise what they are for: throttles, waits, and a recovery past W_max.
    assert!(
        throttles >= 5 && waits >= 50,
        "{throttles} throttles, {waits} waits"
    );
    let last = steps.last().unwrap();
    assert!(f(last, "fill_rate") > f(last, "w_max"));
}
