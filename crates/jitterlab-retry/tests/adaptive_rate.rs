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

/// The blocking executor with `presets::aws_adaptive()` on a virtual clock: a server that
/// answers 429 to its first 20 requests. Until the first 429 nothing waits; after it the
/// limiter's fill rate falls (to the 0.5 per second floor: the measured rate is 0 before a
/// whole bucket has passed), so attempts are spaced by the bucket; once the answers are 200s
/// the rate climbs again along the cubic.
#[test]
fn the_blocking_executor_slows_down_at_429s() {
    use jitterlab_retry::cancel::CancelToken;
    use jitterlab_retry::exec::{Clock, VirtualClock};
    use jitterlab_retry::policy::Outcome;
    use jitterlab_retry::presets;

    let retrier = presets::aws_adaptive().builder().seed(3).build().unwrap();
    let clock = VirtualClock::new();
    let mut sent: Vec<Duration> = Vec::new();
    for _ in 0..40 {
        let _ = retrier.retry(
            &clock,
            &CancelToken::new(),
            |_| {
                sent.push(clock.now());
                if sent.len() <= 20 {
                    Err(Outcome::Status(429))
                } else {
                    Ok(())
                }
            },
            |_| {},
        );
    }
    let limiter = retrier.rate_limiter().expect("asked by every call");
    assert!(limiter.enabled());
    // The first attempt went out at once and turned the limiter on; while the answers are
    // 429s the rate stays at the 0.5/s floor (every measured bucket holds one answer per
    // 2 s, and 0.7 times that is below it), so each attempt waits 2 s for its token (the
    // backoff, at most 1 s, is slept first and counted in).
    let gaps: Vec<f64> = sent
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    assert!(
        gaps[..20].iter().all(|&g| (g - 2.0).abs() < 1e-6),
        "{gaps:?}"
    );
    // After the 429s the gaps shrink: the rate is back up.
    assert!(
        gaps[gaps.len() - 5..].iter().all(|&g| g < gaps[1]),
        "{gaps:?}"
    );
    assert!(limiter.fill_rate() > 1.0, "{}", limiter.fill_rate());
}

/// The async executor with `presets::aws_adaptive()` against a local HTTP server answering
/// 429 to its first 10 requests, in paused tokio time: the attempts after the first 429 go
/// out 2 s apart (the limiter's 0.5/s floor), then faster again once the answers are 200s.
#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn the_async_executor_slows_down_at_429s_from_a_local_server() {
    use jitterlab_retry::policy::Outcome;
    use jitterlab_retry::presets;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for served in 0.. {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request).await;
            let status = if served < 10 { 429 } else { 200 };
            let answer =
                format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    // One GET; its status as an outcome.
    async fn get(addr: std::net::SocketAddr) -> Result<(), Outcome> {
        let mut stream = TcpStream::connect(addr)
            .await
            .map_err(|_| Outcome::Connection)?;
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        match answer.split(' ').nth(1).and_then(|s| s.parse::<u16>().ok()) {
            Some(200) => Ok(()),
            Some(status) => Err(Outcome::from_status(status)),
            None => Err(Outcome::Connection),
        }
    }

    let retrier = presets::aws_adaptive()
        .builder()
        .seed(5)
        .build_async()
        .unwrap();
    let sent = std::sync::Mutex::new(Vec::new());
    for _ in 0..20 {
        let _ = retrier
            .call(|_| {
                sent.lock().unwrap().push(tokio::time::Instant::now());
                get(addr)
            })
            .await;
    }
    let sent = sent.into_inner().unwrap();
    let gaps: Vec<f64> = sent
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    assert!(
        gaps[..10].iter().all(|&g| (g - 2.0).abs() < 1e-3),
        "{gaps:?}"
    );
    assert!(gaps[gaps.len() - 3..].iter().all(|&g| g < 1.0), "{gaps:?}");
    let limiter = retrier.retrier().rate_limiter().unwrap();
    assert!(
        limiter.enabled() && limiter.fill_rate() > 1.0,
        "{limiter:?}"
    );
}

/// A retrier that retries 429s every 10 ms, without end but for a 3 s deadline, behind the
/// limiter. Every answer a 429: the first, at 0, turns the limiter on at the 0.5/s floor with
/// an empty bucket, so the first retry's token is due at 2 s and the second's at 4 s, past
/// the deadline: the call waits until 3 s, no longer, and ends there, two attempts sent.
fn throttled_until_the_deadline() -> jitterlab_retry::exec::RetrierBuilder {
    use jitterlab_retry::backoff::Jitter;
    use jitterlab_retry::policy::RetryOn;
    jitterlab_retry::exec::Retrier::builder()
        .jitter(Jitter::Constant)
        .base(Duration::from_millis(10))
        .unlimited_attempts()
        .deadline(Duration::from_secs(3))
        .throttling(RetryOn::none().with_status(429).unwrap(), None)
        .budget(None)
        .rate_limiter(AdaptiveRateConfig::default())
        .seed(1)
}

#[test]
fn the_blocking_executor_waits_for_a_token_no_longer_than_the_deadline() {
    use jitterlab_retry::cancel::CancelToken;
    use jitterlab_retry::exec::{Clock, VirtualClock};
    use jitterlab_retry::policy::Outcome;

    let retrier = throttled_until_the_deadline().build().unwrap();
    let clock = VirtualClock::new();
    let mut sent = Vec::new();
    let result = retrier.retry(
        &clock,
        &CancelToken::new(),
        |_| {
            sent.push(clock.now());
            Err::<(), _>(Outcome::Status(429))
        },
        |_| {},
    );
    assert!(result.is_err());
    assert_eq!(sent, [Duration::ZERO, Duration::from_secs(2)]);
    assert_eq!(clock.now(), Duration::from_secs(3));
    // The token due at 4 s was not taken.
    let limiter = retrier.rate_limiter().unwrap();
    assert_eq!(limiter.fill_rate(), 0.5);
}

#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn the_async_executor_waits_for_a_token_no_longer_than_the_deadline() {
    use jitterlab_retry::policy::Outcome;

    let retrier = throttled_until_the_deadline().build_async().unwrap();
    let start = tokio::time::Instant::now();
    let sent = std::sync::Mutex::new(Vec::new());
    let result = retrier
        .call(|_| {
            sent.lock().unwrap().push(start.elapsed());
            async { Err::<(), _>(Outcome::Status(429)) }
        })
        .await;
    assert!(result.is_err());
    let sent = sent.into_inner().unwrap();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!((sent[1].as_secs_f64() - 2.0).abs() < 1e-3, "{sent:?}");
    let ended = start.elapsed().as_secs_f64();
    assert!((ended - 3.0).abs() < 1e-3, "ended at {ended} s");
}
