//! The retry policies people run without choosing them: SDK and library defaults, each read
//! from its source (repository, file and version in [`Preset::source`] and in jitterlab's
//! `docs/presets.md`).
//!
//! A [`Preset`] is a [`RetryPolicy`] with the budget and breaker that come with it. The
//! simulator runs the same values (`preset = "aws-standard"` in a scenario), and real code
//! gets them from [`Preset::builder`]:
//!
//! ```
//! use jitterlab_retry::presets;
//!
//! let retrier = presets::aws_standard().builder().seed(7).build()?;
//! assert_eq!(retrier.policy().max_attempts, Some(3));
//! # Ok::<(), jitterlab_retry::Error>(())
//! ```
//!
//! What a preset leaves to its caller: the per-attempt timeout and the overall deadline, unless
//! the library itself sets them (google-api-core's 120 s, the .NET standard handler's 10 s and
//! 30 s); the AWS SDKs' own read timeouts are transport settings, not retry policy.

use std::time::Duration;

use crate::backoff::{Backoff, BackoffParams, Jitter};
use crate::exec::RetrierBuilder;
use crate::policy::{
    AdaptiveRateConfig, BreakerConfig, BudgetConfig, HedgingPolicy, RatioDeposit, RetryAfterHeader,
    RetryAfterMode, RetryAfterPolicy, RetryOn, RetryOnItem, RetryPolicy, Throttling,
};

/// A named retry policy copied from someone else's code.
#[derive(Debug, Clone)]
pub struct Preset {
    /// The name in scenarios and on the command line (`aws-standard`).
    pub name: &'static str,
    /// One line: what it is.
    pub summary: &'static str,
    /// Where the numbers come from: repository, file, version.
    pub source: &'static str,
    /// The retry policy.
    pub policy: RetryPolicy,
    /// The retry budget, shared by every call of a client (`None`: none).
    pub budget: Option<BudgetConfig>,
    /// The circuit breaker (`None`: none).
    pub breaker: Option<BreakerConfig>,
    /// The AWS adaptive mode's client-side rate limiter (`None`: none).
    pub rate_limiter: Option<AdaptiveRateConfig>,
}

impl Preset {
    /// A [`RetrierBuilder`] with every value of the preset: change what you need (`.seed`,
    /// `.deadline`), then `.build()` or `.build_async()` (only `.build_async()` for a preset
    /// that hedges, [`grpc_hedging`]).
    pub fn builder(&self) -> RetrierBuilder {
        let p = &self.policy;
        let b = p.backoff.params();
        let mut builder = RetrierBuilder::default()
            .jitter(b.jitter)
            .base(b.base)
            .multiplier(b.multiplier)
            .cap(b.cap)
            .factor(b.factor)
            .timeout(p.timeout)
            .deadline(p.deadline)
            .retry_on(p.retry_on)
            .retry_after(p.retry_after.mode, p.retry_after.max)
            .retry_after_max_extra(p.retry_after.max_extra)
            .retry_after_header(p.retry_after.header)
            .budget(self.budget)
            .breaker(self.breaker)
            .rate_limiter(self.rate_limiter)
            .hedging(p.hedging);
        builder = match p.max_attempts {
            Some(n) => builder.max_attempts(n),
            None => builder.unlimited_attempts(),
        };
        if let Some(t) = &p.throttling {
            builder = builder.throttling(t.on, t.backoff.as_ref().map(|b| *b.params()));
        }
        builder
    }
}

/// Every preset's name, in the order `jitterlab presets` lists them.
pub const NAMES: [&str; 14] = [
    "aws-standard",
    "aws-adaptive",
    "aws-standard-dynamodb",
    "aws-standard-legacy",
    "grpc",
    "grpc-hedging",
    "polly-v8",
    "dotnet-resilience",
    "google-api-core",
    "resilience4j",
    "client-go",
    "client-go-backoff",
    "finagle",
    "envoy",
];

/// The preset called `name`, if there is one.
pub fn by_name(name: &str) -> Option<Preset> {
    Some(match name {
        "aws-standard" => aws_standard(),
        "aws-adaptive" => aws_adaptive(),
        "aws-standard-dynamodb" => aws_standard_dynamodb(),
        "aws-standard-legacy" => aws_standard_legacy(),
        "grpc" => grpc(),
        "grpc-hedging" => grpc_hedging(),
        "polly-v8" => polly_v8(),
        "dotnet-resilience" => dotnet_resilience(),
        "google-api-core" => google_api_core(),
        "resilience4j" => resilience4j(),
        "client-go" => client_go(),
        "client-go-backoff" => client_go_backoff(),
        "finagle" => finagle(),
        "envoy" => envoy(),
        _ => return None,
    })
}

/// Every preset, in [`NAMES`] order.
pub fn all() -> Vec<Preset> {
    NAMES
        .iter()
        .map(|n| by_name(n).expect("NAMES lists only presets"))
        .collect()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn backoff(jitter: Jitter, base: Duration, cap: Duration) -> Backoff {
    Backoff::from_params(BackoffParams {
        jitter,
        base,
        cap,
        ..BackoffParams::default()
    })
    .expect("preset backoffs are valid")
}

fn outcomes(items: &[RetryOnItem]) -> RetryOn {
    items.iter().fold(RetryOn::none(), |set, item| {
        set.with_item(item).expect("preset outcomes are retryable")
    })
}

fn codes(codes: &[i64], timeout: bool, connection: bool) -> RetryOn {
    let items: Vec<RetryOnItem> = codes.iter().map(|&c| RetryOnItem::Code(c)).collect();
    outcomes(&items)
        .with_timeout(timeout)
        .with_connection(connection)
}

/// Every status jitterlab can retry (408, 409, 425, 429, 500-599), timeouts and connection
/// errors: "every exception" of a library that retries whatever fails.
fn everything() -> RetryOn {
    let mut list = vec![408, 409, 425, 429];
    list.extend(500..=599);
    codes(&list, true, true)
}

fn policy(backoff: Backoff, retry_on: RetryOn, max_attempts: Option<u32>) -> RetryPolicy {
    RetryPolicy {
        retry_on,
        max_attempts,
        timeout: None,
        deadline: None,
        retry_after: RetryAfterPolicy {
            mode: RetryAfterMode::Ignore,
            ..RetryAfterPolicy::default()
        },
        throttling: Some(Throttling {
            on: RetryOn::none(),
            backoff: None,
        }),
        ..RetryPolicy::new(backoff)
    }
}

/// The AWS SDKs' standard mode with the 2026 behaviour, `transient_base` being its
/// non-throttling base (botocore 1.44.8 `retries/standard.py`, `retries/quota.py`).
fn aws_2026(transient_base: Duration, max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        retry_after: RetryAfterPolicy {
            mode: RetryAfterMode::AtLeast,
            max: None,
            max_extra: Some(Duration::from_secs(5)),
            header: RetryAfterHeader::AmzMillis,
        },
        throttling: Some(Throttling::on_429(Some(backoff(
            Jitter::Full,
            Duration::from_secs(1),
            Duration::from_secs(20),
        )))),
        ..policy(
            backoff(Jitter::Full, transient_base, Duration::from_secs(20)),
            codes(&[429, 500, 502, 503, 504], true, true),
            Some(max_attempts),
        )
    }
}

/// The 2026 retry quota: 500 tokens, 14 per retry (timeouts too), 5 per throttling retry.
const AWS_2026_QUOTA: BudgetConfig = BudgetConfig::TokenBucket {
    capacity: 500,
    retry_cost: 14,
    timeout_cost: 14,
    throttling_cost: 5,
    success_refund: 1,
};

/// AWS SDK standard retry mode, 2026 behaviour (the default since November 2026): full jitter
/// up to min(base * 2^(k-1), 20 s) with a 50 ms base after a transient error and 1 s after a
/// throttling one (429), 3 attempts, `x-amz-retry-after` honoured up to 5 s above the backoff,
/// a 500-token quota at 14 per retry and 5 per throttling retry.
pub fn aws_standard() -> Preset {
    Preset {
        name: "aws-standard",
        summary: "AWS SDK standard mode, 2026: 50 ms / 1 s (throttling) bases, 3 attempts, quota 500 at 14 / 5",
        source: "boto/botocore 1.44.8, botocore/retries/standard.py and quota.py",
        policy: aws_2026(ms(50), 3),
        budget: Some(AWS_2026_QUOTA),
        breaker: None,
        rate_limiter: None,
    }
}

/// AWS SDK adaptive retry mode, 2026: [`aws_standard`]'s retries, and before every attempt
/// a token from the client-side rate limiter whose rate follows CUBIC at throttling answers
/// (off until the first one; [`AdaptiveRateConfig::default`] holds botocore's constants).
pub fn aws_adaptive() -> Preset {
    Preset {
        name: "aws-adaptive",
        summary: "AWS SDK adaptive mode, 2026: aws-standard plus a CUBIC client rate limiter (beta 0.7, scale 0.4)",
        source: "boto/botocore 1.44.8, botocore/retries/adaptive.py, bucket.py, throttling.py (and standard.py, quota.py)",
        rate_limiter: Some(AdaptiveRateConfig::default()),
        ..aws_standard()
    }
}

/// [`aws_standard`] for DynamoDB and DynamoDB Streams: a 25 ms transient base, 4 attempts.
pub fn aws_standard_dynamodb() -> Preset {
    Preset {
        name: "aws-standard-dynamodb",
        summary: "AWS SDK standard mode, 2026, DynamoDB: 25 ms / 1 s bases, 4 attempts, quota 500 at 14 / 5",
        source: "boto/botocore 1.44.8, botocore/retries/standard.py (_SERVICE_MAX_ATTEMPTS, _SERVICE_BACKOFF_CONFIG)",
        policy: aws_2026(ms(25), 4),
        budget: Some(AWS_2026_QUOTA),
        breaker: None,
        rate_limiter: None,
    }
}

/// AWS SDK standard retry mode before 2026: full jitter up to min(2^(k-1) s, 20 s) for every
/// error, 3 attempts, no hint read, a 500-token quota at 5 per retry and 10 after a timeout.
pub fn aws_standard_legacy() -> Preset {
    Preset {
        name: "aws-standard-legacy",
        summary: "AWS SDK standard mode before 2026: 1 s base, 3 attempts, quota 500 at 5 (10 after a timeout)",
        source: "boto/botocore 1.35.99, botocore/retries/standard.py and quota.py",
        policy: RetryPolicy {
            throttling: Some(Throttling::on_429(None)),
            ..policy(
                backoff(
                    Jitter::Full,
                    Duration::from_secs(1),
                    Duration::from_secs(20),
                ),
                codes(&[429, 500, 502, 503, 504], true, true),
                Some(3),
            )
        },
        budget: Some(BudgetConfig::token_bucket()),
        breaker: None,
        rate_limiter: None,
    }
}

/// gRPC's retry policy with the example values of its design (gRPC has no defaults): 4
/// attempts, full jitter up to min(100 ms * 2^(k-1), 1 s), UNAVAILABLE retried (a failed
/// connection, and the HTTP 429, 502, 503 and 504 that grpc/grpc's
/// `doc/http-grpc-status-mapping.md` maps to it), retry throttling with 10 tokens and 0.1 back
/// per success.
pub fn grpc() -> Preset {
    Preset {
        name: "grpc",
        summary: "gRPC retry policy, A6's example values: 4 attempts, 100 ms to 1 s, throttling 10 / 0.1",
        source: "grpc/proposal A6-client-retries.md (commit 0070717), the example retryPolicy and retryThrottling; grpc/grpc doc/http-grpc-status-mapping.md (commit 3e6851f) for UNAVAILABLE",
        policy: policy(
            backoff(Jitter::Full, ms(100), Duration::from_secs(1)),
            codes(&[429, 502, 503, 504], false, true),
            Some(4),
        ),
        budget: Some(BudgetConfig::Grpc {
            max_tokens: 10.0,
            token_ratio: 0.1,
        }),
        breaker: None,
        rate_limiter: None,
    }
}

/// gRPC's hedging policy with the example values of its design (gRPC has no defaults): a
/// copy every 0.5 s while none has answered, 4 copies at most, the next copy at once after
/// UNAVAILABLE (A6's `nonFatalStatusCodes` are UNAVAILABLE, INTERNAL and ABORTED; INTERNAL
/// and ABORTED have no HTTP answer a simulated server gives, see jitterlab's
/// `docs/presets.md`), and the same retry throttling as [`grpc`] (hedges count against it).
/// The backoff is [`grpc`]'s, unused: a hedging policy replaces retries.
pub fn grpc_hedging() -> Preset {
    let grpc = grpc();
    Preset {
        name: "grpc-hedging",
        summary: "gRPC hedging policy, A6's example values: a copy every 0.5 s, 4 copies, throttling 10 / 0.1",
        source: "grpc/proposal A6-client-retries.md (commit 1fd061a), the example hedgingPolicy and retryThrottling; grpc/grpc doc/http-grpc-status-mapping.md (commit 3e6851f) for UNAVAILABLE",
        policy: RetryPolicy {
            hedging: Some(
                HedgingPolicy::fixed(ms(500))
                    .max_attempts(4)
                    .non_fatal(grpc.policy.retry_on),
            ),
            ..grpc.policy
        },
        ..grpc
    }
}

/// Polly v8's default retry strategy: 3 retries, a constant 2 s, no jitter, every failure.
pub fn polly_v8() -> Preset {
    Preset {
        name: "polly-v8",
        summary: "Polly v8 RetryStrategyOptions defaults: 3 retries, constant 2 s, every failure",
        source: "App-vNext/Polly src/Polly.Core/Retry/RetryConstants.cs (commit 74f9f71)",
        policy: policy(
            backoff(
                Jitter::Constant,
                Duration::from_secs(2),
                Duration::from_secs(2),
            ),
            everything(),
            Some(4),
        ),
        budget: None,
        breaker: None,
        rate_limiter: None,
    }
}

/// Microsoft.Extensions.Http.Resilience's standard handler: 3 retries, Polly's exponential
/// backoff with jitter from 2 s, `Retry-After` used as the delay, 5xx, 408, 429 and
/// transport errors retried, 10 s per attempt, 30 s in all, and Polly's default breaker.
pub fn dotnet_resilience() -> Preset {
    Preset {
        name: "dotnet-resilience",
        summary: ".NET standard resilience handler: 3 retries, jittered exponential from 2 s, Retry-After, 10 s / 30 s timeouts, breaker",
        source: "dotnet/extensions src/Libraries/Microsoft.Extensions.Http.Resilience (commit 02ba73e); App-vNext/Polly Polly.Core RetryConstants.cs, CircuitBreakerConstants.cs",
        policy: RetryPolicy {
            timeout: Some(Duration::from_secs(10)),
            deadline: Some(Duration::from_secs(30)),
            retry_after: RetryAfterPolicy {
                mode: RetryAfterMode::Exact,
                ..RetryAfterPolicy::default()
            },
            ..policy(
                // Polly's MaxDelay is unset; the 30 s deadline bounds every sleep anyway.
                backoff(
                    Jitter::DecorrelatedV2,
                    Duration::from_secs(2),
                    Duration::from_secs(30),
                ),
                {
                    let mut list = vec![408, 429];
                    list.extend(500..=599);
                    codes(&list, true, true)
                },
                Some(4),
            )
        },
        budget: None,
        breaker: Some(BreakerConfig {
            failure_ratio: 0.1,
            min_requests: 100,
            window: Duration::from_secs(30),
            open_for: Duration::from_secs(5),
        }),
        rate_limiter: None,
    }
}

/// google-api-core's `Retry` defaults: full jitter up to min(1 s * 2^(k-1), 60 s), no attempt
/// limit, a 120 s deadline that a sleep may not pass, 429, 500, 503 and connection errors.
pub fn google_api_core() -> Preset {
    Preset {
        name: "google-api-core",
        summary: "google-api-core Retry defaults: 1 s to 60 s full jitter, 120 s deadline, 429/500/503",
        source: "googleapis/python-api-core 2.44.0 (PyPI google-api-core), google/api_core/retry/retry_base.py",
        policy: RetryPolicy {
            deadline: Some(Duration::from_secs(120)),
            ..policy(
                backoff(
                    Jitter::Full,
                    Duration::from_secs(1),
                    Duration::from_secs(60),
                ),
                codes(&[429, 500, 503], false, true),
                None,
            )
        },
        budget: None,
        breaker: None,
        rate_limiter: None,
    }
}

/// resilience4j's `RetryConfig` defaults: 3 attempts, a fixed 500 ms, every failure.
pub fn resilience4j() -> Preset {
    Preset {
        name: "resilience4j",
        summary: "resilience4j RetryConfig defaults: 3 attempts, fixed 500 ms, every failure",
        source: "resilience4j/resilience4j resilience4j-retry/.../retry/RetryConfig.java (commit 19c02ce)",
        policy: policy(
            backoff(Jitter::Constant, ms(500), ms(500)),
            everything(),
            Some(3),
        ),
        budget: None,
        breaker: None,
        rate_limiter: None,
    }
}

/// `wait.Backoff` as the `retry` helpers of client-go run it: `steps` attempts (the condition
/// runs at most `Steps` times), sleeps `d_k + U[0, 0.1 d_k]` with `d_k = 10 ms * factor^(k-1)`,
/// no cap (`Cap` 0), a conflict (409) retried as `RetryOnConflict` does.
fn client_go_backoff_of(factor: f64, steps: u32) -> RetryPolicy {
    let backoff = Backoff::from_params(BackoffParams {
        jitter: Jitter::Additive,
        base: ms(10),
        multiplier: factor,
        // `Cap` 0 is no cap; an hour is far above any sleep the attempt limit reaches.
        cap: Duration::from_secs(3600),
        factor: 0.1,
        ..BackoffParams::default()
    })
    .expect("client-go's backoffs are valid");
    policy(backoff, codes(&[409], false, false), Some(steps))
}

/// client-go's `retry.DefaultRetry` with `RetryOnConflict`: 5 attempts, 10 ms plus up to 10 %
/// between them, a conflict (409) retried.
pub fn client_go() -> Preset {
    Preset {
        name: "client-go",
        summary: "client-go retry.DefaultRetry with RetryOnConflict: 5 attempts, 10 ms + U[0, 1 ms], 409",
        source: "kubernetes/client-go util/retry/util.go (commit 32ce75a); kubernetes/apimachinery pkg/util/wait/backoff.go, wait.go (commit eed236c)",
        policy: client_go_backoff_of(1.0, 5),
        budget: None,
        breaker: None,
        rate_limiter: None,
    }
}

/// client-go's `retry.DefaultBackoff` with `RetryOnConflict`: 4 attempts, 10, 50 and 250 ms
/// plus up to 10 % between them, a conflict (409) retried.
pub fn client_go_backoff() -> Preset {
    Preset {
        name: "client-go-backoff",
        summary: "client-go retry.DefaultBackoff with RetryOnConflict: 4 attempts, 10/50/250 ms + up to 10 %, 409",
        source: "kubernetes/client-go util/retry/util.go (commit 32ce75a); kubernetes/apimachinery pkg/util/wait/backoff.go, wait.go (commit eed236c)",
        policy: client_go_backoff_of(5.0, 4),
        budget: None,
        breaker: None,
        rate_limiter: None,
    }
}

/// Finagle's default client stack: its `RequeueFilter` retries a request that never reached
/// the server (a failed connection) at once, with the default `RetryBudget` (20 % of the
/// successful requests of the last 10 s, plus 10 per second), at most 20 times per request.
pub fn finagle() -> Preset {
    Preset {
        name: "finagle",
        summary: "Finagle default client: failed connections requeued at once, budget 20 % of successes + 10/s over 10 s",
        source: "twitter/finagle finagle-core .../service/RetryBudget.scala, Retries.scala, RequeueFilter.scala (commit 4feb34c); twitter/util TokenBucket.scala (commit 17c8187)",
        policy: policy(
            // Backoff.const(Duration.Zero); `none` sleeps 0 whatever its base.
            backoff(Jitter::None, ms(1), ms(1)),
            codes(&[], false, true),
            // ceil(MaxRequeuesPerReq 0.2 * balance), the balance of a full floor being 100.
            Some(21),
        ),
        budget: Some(BudgetConfig::Ratio {
            percent: 20.0,
            min_per_sec: 10.0,
            window: Duration::from_secs(10),
            deposit: RatioDeposit::Success,
        }),
        breaker: None,
        rate_limiter: None,
    }
}

/// Envoy's route retry policy with its defaults, `retry_on = "5xx,connect-failure"`: 2
/// attempts (`num_retries` 1), full jitter up to min(25 ms * 2^(k-1), 250 ms), every 5xx, a
/// per-try timeout and a failed or reset connection retried, within the cluster's default
/// `RetryBudget`: retries in flight at most max(3, 20 % of the attempts in flight).
pub fn envoy() -> Preset {
    Preset {
        name: "envoy",
        summary: "Envoy route retry policy defaults, retry_on 5xx,connect-failure: 2 attempts, 25 ms to 250 ms full jitter, retry budget 20 % in flight / min 3",
        source: "envoyproxy/envoy api/envoy/config/route/v3/route_components.proto (RetryPolicy: num_retries 1, base_interval 25 ms, max_interval 10x), source/common/common/backoff_strategy.cc (commit 4280ef7, JitteredBackOffStrategy), api/envoy/config/cluster/v3/circuit_breaker.proto (commit a6193bb, RetryBudget 20 %, 3), source/common/upstream/resource_manager_impl.h (commit 01c2c1f, RetryBudgetImpl::max)",
        policy: policy(
            // `random() % min(base * 2^(k-1), max)`: the cap applied before the draw.
            backoff(Jitter::Full, ms(25), ms(250)),
            // `5xx`: any 5xx, or no answer at all (reset, per-try timeout); `connect-failure`
            // is within it, named as the common configuration does.
            {
                let list: Vec<i64> = (500..=599).collect();
                codes(&list, true, true)
            },
            // num_retries 1: one retry.
            Some(2),
        ),
        budget: Some(BudgetConfig::concurrency()),
        breaker: None,
        rate_limiter: None,
    }
}
