//! Error classes: a throttling answer ("slow down") is not a transient failure ("try again"),
//! and SDKs treat the two differently.
//!
//! The AWS SDKs (botocore `retries/standard.py`, aws-sdk-go-v2 `aws/retry`) back off from 1 s
//! after a throttling error but from 50 ms after a transient one, and charge the retry quota 5
//! tokens for the first and 14 for the second. [`RetryClass`] names the class of the failure
//! a retry follows; [`Throttling`] says which outcomes are throttling answers and which
//! backoff they use. The class also decides a token bucket's cost
//! ([`crate::policy::BudgetConfig::TokenBucket`]): `retry_cost`, `timeout_cost` or
//! `throttling_cost`.

use std::fmt;

use crate::backoff::Backoff;
use crate::policy::RetryOn;

/// The class of a failed attempt, as a retry budget prices the retry that follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RetryClass {
    /// An error status or a connection error that is not a throttling answer.
    #[default]
    Transient,
    /// No answer within the attempt timeout (not a throttling answer).
    Timeout,
    /// A throttling answer: an outcome in the policy's [`Throttling::on`] set (429 by
    /// default).
    Throttling,
}

impl RetryClass {
    /// `transient`, `timeout` or `throttling`.
    pub const fn name(self) -> &'static str {
        match self {
            RetryClass::Transient => "transient",
            RetryClass::Timeout => "timeout",
            RetryClass::Throttling => "throttling",
        }
    }
}

impl fmt::Display for RetryClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which outcomes are throttling answers, and the backoff a retry after one uses.
#[derive(Debug, Clone)]
pub struct Throttling {
    /// The throttling outcomes (the AWS SDKs: 429, and error codes such as `Throttling`
    /// that a simulator or an HTTP client sees as a status).
    pub on: RetryOn,
    /// The backoff after a throttling answer (`None`: the policy's own). It shares the
    /// request's [`crate::backoff::BackoffState`], so retry `k` is the `k`-th retry of the
    /// request whatever the classes before it, as in the SDKs.
    pub backoff: Option<Backoff>,
}

impl Throttling {
    /// 429 is a throttling answer, with `backoff` after it.
    pub fn on_429(backoff: Option<Backoff>) -> Throttling {
        let on = RetryOn::none()
            .with_status(429)
            .expect("429 is a retryable status");
        Throttling { on, backoff }
    }
}
