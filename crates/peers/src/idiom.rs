//! Each peer crate stepped in its own idiom: one fresh request's delays, retry 1 first.
//!
//! [`Config::start`] builds a request's [`Delays`] the way the crate's docs show it; `seed`
//! seeds it where the crate allows (backon's `with_jitter_seed`; exponential-backoff through
//! the thread-local fastrand it forks). backoff, retry-policies and tokio-retry's `jitter`
//! draw from rand's thread-local generator and cannot be seeded; for a reproducible herd,
//! [`tokio_retry_example_seeded`] is tokio-retry's example with its formula on our generator.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// One request's delays in a peer's idiom.
pub trait Delays: Send {
    /// The sleep before the next retry, or `None` when the crate stops retrying.
    fn next_delay(&mut self) -> Option<Duration>;
}

impl<I: Iterator<Item = Duration> + Send> Delays for I {
    fn next_delay(&mut self) -> Option<Duration> {
        self.next()
    }
}

/// A configuration of a peer crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Config {
    /// backon 1.6: `ExponentialBuilder::default()` (1 s, x2, max 60 s, 3 times, no jitter).
    BackonDefault,
    /// backon 1.6 `.with_jitter()`, its only jitter.
    BackonJitter,
    /// backoff 0.4: `ExponentialBackoff::default()` (0.5 s, x1.5, factor 0.5, max 60 s,
    /// 15 min elapsed).
    BackoffDefault,
    /// backoff 0.4 with `randomization_factor` 1.0: `U[0, 2 d]`, its widest jitter.
    BackoffFactorOne,
    /// exponential-backoff 2.1: `Backoff::default()` (100 ms, x2, max 10 s, jitter 0.3, 3
    /// attempts).
    ExpoDefault,
    /// exponential-backoff 2.1 with `set_jitter(1.0)`, its widest jitter.
    ExpoJitterOne,
    /// retry-policies 0.5: the builder's defaults (1 s, base 2, max 30 min, `Jitter::Full`).
    RetryPoliciesFull,
    /// retry-policies 0.5 with `Jitter::Bounded`.
    RetryPoliciesBounded,
    /// tokio-retry 0.3: the docs' example, `from_millis(10).map(jitter)`.
    TokioRetryExample,
    /// tokio-retry 0.3: `from_millis(2).factor(500).max_delay(60 s).map(jitter)`, 1 s
    /// doubling to 60 s with its (full) jitter.
    TokioRetryCapped,
}

impl Config {
    /// Every configuration, in table order.
    pub const ALL: [Config; 10] = [
        Config::BackonDefault,
        Config::BackonJitter,
        Config::BackoffDefault,
        Config::BackoffFactorOne,
        Config::ExpoDefault,
        Config::ExpoJitterOne,
        Config::RetryPoliciesFull,
        Config::RetryPoliciesBounded,
        Config::TokioRetryExample,
        Config::TokioRetryCapped,
    ];

    /// The crate and its version, as `Cargo.lock` pins it (asserted by a test).
    pub fn krate(self) -> &'static str {
        match self {
            Config::BackonDefault | Config::BackonJitter => "backon 1.6.0",
            Config::BackoffDefault | Config::BackoffFactorOne => "backoff 0.4.0",
            Config::ExpoDefault | Config::ExpoJitterOne => "exponential-backoff 2.1.1",
            Config::RetryPoliciesFull | Config::RetryPoliciesBounded => "retry-policies 0.5.2",
            Config::TokioRetryExample | Config::TokioRetryCapped => "tokio-retry 0.3.2",
        }
    }

    /// The configuration as a user writes it.
    pub fn code(self) -> &'static str {
        match self {
            Config::BackonDefault => "ExponentialBuilder::default()",
            Config::BackonJitter => ".with_jitter()",
            Config::BackoffDefault => "ExponentialBackoff::default()",
            Config::BackoffFactorOne => ".with_randomization_factor(1.0)",
            Config::ExpoDefault => "Backoff::default()",
            Config::ExpoJitterOne => ".set_jitter(1.0)",
            Config::RetryPoliciesFull => "builder() (Jitter::Full)",
            Config::RetryPoliciesBounded => ".jitter(Jitter::Bounded)",
            Config::TokioRetryExample => "from_millis(10).map(jitter)",
            Config::TokioRetryCapped => "from_millis(2).factor(500).max_delay(60s).map(jitter)",
        }
    }

    /// True when the same seed gives the same delays.
    pub fn seeded(self) -> bool {
        !matches!(
            self,
            Config::BackoffDefault
                | Config::BackoffFactorOne
                | Config::RetryPoliciesFull
                | Config::RetryPoliciesBounded
                | Config::TokioRetryExample
                | Config::TokioRetryCapped
        )
    }

    /// A fresh request's delays; `retries` lifts the crate's own retry limit where it has one
    /// below it (the audit looks past each configuration's cap), `None` keeps the crate's.
    pub fn start(self, seed: u64, retries: Option<u32>) -> Box<dyn Delays> {
        match self {
            Config::BackonDefault | Config::BackonJitter => {
                backon(self == Config::BackonJitter, seed, retries)
            }
            Config::BackoffDefault => backoff_with(None, retries.is_some()),
            Config::BackoffFactorOne => backoff_with(Some(1.0), true),
            Config::ExpoDefault => expo(0.3, seed, retries),
            Config::ExpoJitterOne => expo(1.0, seed, retries),
            Config::RetryPoliciesFull => retry_policies(retry_policies::Jitter::Full, retries),
            Config::RetryPoliciesBounded => {
                retry_policies(retry_policies::Jitter::Bounded, retries)
            }
            Config::TokioRetryExample => {
                let strategy = tokio_retry::strategy::ExponentialBackoff::from_millis(10);
                tokio_retry(strategy, retries.unwrap_or(3))
            }
            Config::TokioRetryCapped => {
                let strategy = tokio_retry::strategy::ExponentialBackoff::from_millis(2)
                    .factor(500)
                    .max_delay(Duration::from_secs(60));
                tokio_retry(strategy, retries.unwrap_or(u32::MAX))
            }
        }
    }
}

fn backon(jitter: bool, seed: u64, retries: Option<u32>) -> Box<dyn Delays> {
    use backon::{BackoffBuilder, ExponentialBuilder};
    let mut builder = ExponentialBuilder::default();
    if let Some(n) = retries {
        builder = builder.with_max_times(n as usize);
    }
    if jitter {
        builder = builder.with_jitter().with_jitter_seed(seed);
    }
    Box::new(builder.build())
}

/// backoff 0.4, its default or with `factor`; `lift` drops the 15-minute elapsed limit.
fn backoff_with(factor: Option<f64>, lift: bool) -> Box<dyn Delays> {
    let mut b = backoff::ExponentialBackoff::default();
    if let Some(f) = factor {
        b.randomization_factor = f;
    }
    if lift {
        b.max_elapsed_time = None;
    }
    Box::new(BackoffDelays(b))
}

struct BackoffDelays<C>(backoff::exponential::ExponentialBackoff<C>);

impl<C: backoff::Clock + Send> Delays for BackoffDelays<C> {
    fn next_delay(&mut self) -> Option<Duration> {
        backoff::backoff::Backoff::next_backoff(&mut self.0)
    }
}

fn expo(jitter: f32, seed: u64, retries: Option<u32>) -> Box<dyn Delays> {
    let mut b = exponential_backoff::Backoff::default();
    if let Some(n) = retries {
        // It counts attempts: n retries are n + 1 attempts.
        b.set_max_attempts(n + 1);
    }
    b.set_jitter(jitter);
    // `iter()` forks the thread-local fastrand: seeding it just before seeds the request.
    fastrand::seed(seed);
    Box::new(b.iter().map_while(|d| d))
}

/// retry-policies 0.5: a stateless policy asked with the retries so far; its answer is an
/// instant on the wall clock, read back against the clock read just before.
struct RetryPolicies {
    policy: retry_policies::policies::ExponentialBackoff,
    past: u32,
}

impl Delays for RetryPolicies {
    fn next_delay(&mut self) -> Option<Duration> {
        use retry_policies::{RetryDecision, RetryPolicy};
        let before = SystemTime::now();
        let decision = self.policy.should_retry(before, self.past);
        self.past += 1;
        match decision {
            RetryDecision::Retry { execute_after } => Some(read_back(execute_after, before)),
            RetryDecision::DoNotRetry => None,
        }
    }
}

/// retry-policies' answer `execute_after` as the delay from `before`, the clock read just
/// before asking: a wall clock stepped back between the two reads gives zero, not `None`
/// (which would read as giving up).
pub fn read_back(execute_after: SystemTime, before: SystemTime) -> Duration {
    execute_after
        .duration_since(before)
        .unwrap_or(Duration::ZERO)
}

fn retry_policies(jitter: retry_policies::Jitter, retries: Option<u32>) -> Box<dyn Delays> {
    let policy = retry_policies::policies::ExponentialBackoff::builder()
        .jitter(jitter)
        .build_with_max_retries(retries.unwrap_or(u32::MAX));
    Box::new(RetryPolicies { policy, past: 0 })
}

/// tokio-retry's strategy with the crate's own `jitter` (`strategy::jitter`, which draws
/// from rand's thread-local generator), `take` retries.
fn tokio_retry(strategy: tokio_retry::strategy::ExponentialBackoff, take: u32) -> Box<dyn Delays> {
    Box::new(
        strategy
            .map(tokio_retry::strategy::jitter)
            .take(take as usize),
    )
}

/// tokio-retry's docs example, `from_millis(10).map(jitter).take(3)`, with its formula on
/// our generator (seeded): `jitter`'s `d.mul_f64(U[0, 1))` drawn from `Pcg64Mcg`, so that a
/// herd of it is the same bytes on every run. Not the crate's `jitter` itself
/// ([`Config::TokioRetryExample`] is), whose thread-local generator cannot be seeded.
pub fn tokio_retry_example_seeded(seed: u64) -> Box<dyn Delays> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    Box::new(
        tokio_retry::strategy::ExponentialBackoff::from_millis(10)
            .map(move |d| d.mul_f64(rng.random::<f64>()))
            .take(3),
    )
}

/// A clock for backoff 0.4 that reads the simulator's virtual time, so that its elapsed-time
/// limit counts simulated time: a fixed origin plus the nanoseconds last set.
#[derive(Debug, Clone)]
pub struct VirtualClock {
    origin: Instant,
    now_ns: Arc<AtomicU64>,
}

impl VirtualClock {
    /// A clock at 0 and the handle that moves it.
    pub fn new() -> (VirtualClock, Arc<AtomicU64>) {
        let now_ns = Arc::new(AtomicU64::new(0));
        let clock = VirtualClock {
            origin: Instant::now(),
            now_ns: now_ns.clone(),
        };
        (clock, now_ns)
    }
}

impl backoff::Clock for VirtualClock {
    fn now(&self) -> Instant {
        self.origin + Duration::from_nanos(self.now_ns.load(Ordering::Relaxed))
    }
}

/// backoff 0.4's defaults on a [`VirtualClock`] started at `now_ns`: a request's delays,
/// and the handle to set the time.
pub fn backoff_virtual(now_ns: u64) -> (Box<dyn Delays>, Arc<AtomicU64>) {
    let d = backoff::ExponentialBackoff::default();
    let (clock, now) = VirtualClock::new();
    now.store(now_ns, Ordering::Relaxed);
    let b = backoff::exponential::ExponentialBackoff {
        current_interval: d.initial_interval,
        initial_interval: d.initial_interval,
        randomization_factor: d.randomization_factor,
        multiplier: d.multiplier,
        max_interval: d.max_interval,
        max_elapsed_time: d.max_elapsed_time,
        start_time: backoff::Clock::now(&clock),
        clock,
    };
    (Box::new(BackoffDelays(b)), now)
}
