//! Outcome classes and which of them are retried.
//!
//! An attempt ends in one [`Outcome`]: a success (2xx or 3xx), an error status, a timeout, a
//! connection error, a fatal error that must never be retried (real code's own class for
//! errors that are not HTTP answers: a body that does not parse, a 401 from a proxy), or an
//! invalid request (one that cannot succeed as it is). [`RetryOn`] is the set of outcomes
//! worth retrying: by default 409, 429, 502, 503, 504, timeouts and connection errors. Other
//! 4xx answers are never retried (the request itself is wrong; sending it again cannot help),
//! except 408 Request Timeout and 425 Too Early, which ask for exactly that and are opt-in, as
//! 500 is. [`Idempotency`] adds the request's side: a non-idempotent request is never retried
//! unless it carries an idempotency key.

use std::fmt;

use crate::param::ValueError;

/// How one attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A 2xx or 3xx answer.
    Success,
    /// An error status (normally 4xx or 5xx).
    Status(u16),
    /// No answer within the attempt timeout.
    Timeout,
    /// The connection failed (refused, reset, dropped).
    Connection,
    /// A failure that must not be retried, whatever `retry_on` says: the request stops at
    /// once, and the circuit breaker and the retry budget count it as a failure (unlike a 4xx,
    /// which says nothing about the server's health). The simulator's "do not retry" answers.
    Fatal,
    /// The request cannot succeed as it is, whatever the server's state (a bad URL, a request
    /// that cannot be built, a redirect loop): the request stops at once, and neither the
    /// circuit breaker nor the retry budget counts it, since it says nothing about the
    /// server's health. The simulator never produces it.
    Invalid,
    /// An error that is not an HTTP answer, which the caller's classifier
    /// ([`crate::exec::RetryIf`]) says is worth retrying: retried whatever
    /// [`RetryOn`] says (which speaks of statuses, timeouts and connections), and counted as a
    /// failure by the circuit breaker and the retry budget. The simulator never produces it.
    Transient,
    /// An error that is not an HTTP answer, which the caller's classifier says is not worth
    /// retrying: the request stops at once, and neither the circuit breaker nor the retry
    /// budget counts it (as [`Outcome::Invalid`]). The simulator never produces it.
    Permanent,
}

impl Outcome {
    /// The outcome of an HTTP answer: 2xx and 3xx are [`Outcome::Success`], anything else an
    /// error status.
    pub const fn from_status(code: u16) -> Outcome {
        match code {
            200..=399 => Outcome::Success,
            _ => Outcome::Status(code),
        }
    }

    /// True for [`Outcome::Success`].
    pub const fn is_success(self) -> bool {
        matches!(self, Outcome::Success)
    }

    /// True when the outcome says the server side is unhealthy or overloaded: a timeout, a
    /// connection error, 429 or any 5xx, and a [`Outcome::Fatal`] error (the caller's word
    /// that the call failed); not an [`Outcome::Invalid`] one. This is what the circuit breaker counts as a failure; a 4xx
    /// such as 400 or 409 says nothing about the server's health.
    pub const fn is_server_failure(self) -> bool {
        match self {
            Outcome::Success => false,
            Outcome::Status(code) => code == 429 || code >= 500,
            Outcome::Timeout | Outcome::Connection | Outcome::Fatal | Outcome::Transient => true,
            Outcome::Invalid | Outcome::Permanent => false,
        }
    }

    /// False for [`Outcome::Invalid`] and [`Outcome::Permanent`], which say nothing about the server: the circuit breaker
    /// records every other outcome (a failure if [`Outcome::is_server_failure`], else a
    /// success).
    pub const fn concerns_the_server(self) -> bool {
        !matches!(self, Outcome::Invalid | Outcome::Permanent)
    }

    /// True for [`Outcome::Fatal`].
    pub const fn is_fatal(self) -> bool {
        matches!(self, Outcome::Fatal)
    }
}

impl fmt::Display for Outcome {
    /// `success`, the status code, `timeout`, `connection`, `fatal`, `invalid`,
    /// `transient error` or `permanent error`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Success => f.write_str("success"),
            Outcome::Status(code) => write!(f, "{code}"),
            Outcome::Timeout => f.write_str("timeout"),
            Outcome::Connection => f.write_str("connection"),
            Outcome::Fatal => f.write_str("fatal"),
            Outcome::Invalid => f.write_str("invalid"),
            Outcome::Transient => f.write_str("transient error"),
            Outcome::Permanent => f.write_str("permanent error"),
        }
    }
}

/// Whether a request may be sent more than once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Idempotency {
    /// Safe to repeat (GET, PUT, DELETE, ...).
    #[default]
    Idempotent,
    /// Not safe to repeat (a POST without a key): never retried.
    NonIdempotent,
    /// Not idempotent by itself but carries an idempotency key, so the server deduplicates:
    /// retried like an idempotent request.
    WithKey,
}

impl Idempotency {
    /// True unless the request is non-idempotent without a key.
    pub const fn may_retry(self) -> bool {
        !matches!(self, Idempotency::NonIdempotent)
    }
}

/// One entry of a scenario's `retry_on` list as written: a status code or a word
/// (`"timeout"`, `"connection"`). Deserializes from a TOML integer or string.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
pub enum RetryOnItem {
    /// A status code (checked by [`RetryOn::with_item`]).
    Code(i64),
    /// A word (checked by [`RetryOn::with_item`]).
    Word(String),
}

impl fmt::Display for RetryOnItem {
    /// The TOML form: `503` or `"timeout"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryOnItem::Code(code) => write!(f, "{code}"),
            RetryOnItem::Word(word) => write!(f, "{word:?}"),
        }
    }
}

const LOWEST: u16 = 100;
const HIGHEST: u16 = 599;
const WORDS: usize = ((HIGHEST - LOWEST + 1) as usize).div_ceil(64);

/// The set of outcomes that are retried: a bitset of status codes 100..=599 plus flags for
/// timeouts and connection errors. [`Outcome::Success`], [`Outcome::Fatal`] and
/// [`Outcome::Invalid`] are never retried.
///
/// A scenario's list ([`RetryOn::with_item`]) is limited to the statuses worth sending
/// again: 409, 429, 5xx (500 is opt-in there), 408 and 425 (opt-in) and, harmlessly, 1xx;
/// other 4xx codes are refused rather than silently ignored. In code,
/// [`RetryOn::with_status`] and [`RetryOn::without_status`] opt any error status in or out.
/// A 2xx/3xx code is a success and never retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RetryOn {
    codes: [u64; WORDS],
    timeout: bool,
    connection: bool,
}

impl Default for RetryOn {
    /// 409, 429, 502, 503, 504, timeouts and connection errors.
    fn default() -> Self {
        let mut set = RetryOn::none();
        for code in [409, 429, 502, 503, 504] {
            set.insert(code);
        }
        set.timeout = true;
        set.connection = true;
        set
    }
}

impl RetryOn {
    /// 409, 429, 500, 502, 503, 504, timeouts and connection errors: [`RetryOn::default`]
    /// with 500, what [`crate::exec::Retrier::builder`] retries unless told otherwise. Most
    /// of the libraries the presets cite retry a 500: botocore 1.44.8
    /// (`botocore/retries/standard.py`, `_TRANSIENT_STATUS_CODES` 500, 502, 503, 504),
    /// google-api-core 2.44.0 (`google/api_core/retry/retry_base.py`, `if_transient_error`:
    /// 429, 500, 503), the .NET resilience handler and Polly (every 5xx and 408), Envoy
    /// (`5xx`), resilience4j (every failure); gRPC's A6 example retries only UNAVAILABLE
    /// (503), client-go only conflicts.
    pub const fn recommended() -> RetryOn {
        let mut set = RetryOn::none();
        let codes = [409, 429, 500, 502, 503, 504];
        let mut i = 0;
        while i < codes.len() {
            let k = (codes[i] - LOWEST) as usize;
            set.codes[k / 64] |= 1 << (k % 64);
            i += 1;
        }
        set.timeout = true;
        set.connection = true;
        set
    }
}

const ALLOWED: &str =
    "a status code (408, 409, 425, 429, 100-199 or 500-599) or \"timeout\" or \"connection\"";

/// The 4xx answers that say "send it again": 408 Request Timeout (RFC 9110 §15.5.9), 409
/// Conflict, 425 Too Early (RFC 8470 §5.2), 429 Too Many Requests. 409 and 429 are retried by
/// default, 408 and 425 on request.
const RETRYABLE_4XX: [u16; 4] = [408, 409, 425, 429];

impl RetryOn {
    /// Retries nothing.
    pub const fn none() -> RetryOn {
        RetryOn {
            codes: [0; WORDS],
            timeout: false,
            connection: false,
        }
    }

    /// Checks that `code` may be retried: 100..=599, not a success, and among the 4xx only
    /// 408, 409, 425 and 429.
    fn check_code(code: i64) -> Result<u16, ValueError> {
        let Ok(code) = u16::try_from(code) else {
            return Err(ValueError::new(code, ALLOWED));
        };
        match code {
            200..=399 => Err(ValueError::new(
                code,
                "not a success: a 2xx or 3xx answer is never retried",
            )),
            400..=499 if !RETRYABLE_4XX.contains(&code) => Err(ValueError::new(
                code,
                "not a 4xx other than 408, 409, 425 and 429: those are never retried",
            )),
            LOWEST..=HIGHEST => Ok(code),
            _ => Err(ValueError::new(code, ALLOWED)),
        }
    }

    #[inline]
    fn insert(&mut self, code: u16) {
        let i = (code - LOWEST) as usize;
        self.codes[i / 64] |= 1 << (i % 64);
    }

    /// The same set with one entry of a scenario list added: a status code, `"timeout"` or
    /// `"connection"`. A list such as `[409, 429, 502, 503, 504, "timeout", "connection"]`
    /// is read by adding its entries to [`RetryOn::none`] (an empty list retries nothing;
    /// duplicates are allowed).
    pub fn with_item(mut self, item: &RetryOnItem) -> Result<RetryOn, ValueError> {
        match item {
            RetryOnItem::Code(code) => self.insert(RetryOn::check_code(*code)?),
            RetryOnItem::Word(word) => match word.as_str() {
                "timeout" => self.timeout = true,
                "connection" => self.connection = true,
                _ => return Err(ValueError::new(format!("{word:?}"), ALLOWED)),
            },
        }
        Ok(self)
    }

    /// The same set with `code` added: any status 100..=599 but a success (2xx and 3xx), a
    /// 404 or a 401 too if the caller knows why its server answers them for a passing
    /// fault. (A scenario's list, [`RetryOn::with_item`], keeps to the 4xx that ask to be
    /// sent again.) Its error converts into [`crate::Error`], naming `retry_on`.
    pub fn with_status(mut self, code: u16) -> Result<RetryOn, ValueError> {
        match code {
            200..=399 => Err(ValueError::new(
                code,
                "not a success: a 2xx or 3xx answer is never retried",
            )),
            LOWEST..=HIGHEST => {
                self.insert(code);
                Ok(self)
            }
            _ => Err(ValueError::new(code, "a status code from 100 to 599")),
        }
    }

    /// The same set without `code` (a status it did not hold, or outside 100..=599, changes
    /// nothing): `RetryOn::default().without_status(409)` stops retrying conflicts.
    pub const fn without_status(mut self, code: u16) -> RetryOn {
        if code >= LOWEST && code <= HIGHEST {
            let i = (code - LOWEST) as usize;
            self.codes[i / 64] &= !(1 << (i % 64));
        }
        self
    }

    /// The same set with timeouts retried or not.
    pub const fn with_timeout(mut self, retry: bool) -> RetryOn {
        self.timeout = retry;
        self
    }

    /// The same set with connection errors retried or not.
    pub const fn with_connection(mut self, retry: bool) -> RetryOn {
        self.connection = retry;
        self
    }

    /// True when an attempt ending in `outcome` is worth retrying (before idempotency,
    /// attempts, deadline and budget are considered).
    #[inline]
    pub const fn retries(&self, outcome: Outcome) -> bool {
        match outcome {
            Outcome::Success => false,
            Outcome::Status(code) => {
                if code < LOWEST || code > HIGHEST {
                    return false;
                }
                let i = (code - LOWEST) as usize;
                self.codes[i / 64] & (1 << (i % 64)) != 0
            }
            Outcome::Timeout => self.timeout,
            Outcome::Connection => self.connection,
            // The caller's classifier has the last word on errors that are not HTTP answers.
            Outcome::Transient => true,
            Outcome::Fatal | Outcome::Invalid | Outcome::Permanent => false,
        }
    }

    /// The set as a scenario list: codes ascending, then `"timeout"`, then `"connection"`.
    /// [`RetryOn::with_item`] reads it back to an equal set.
    pub fn to_items(&self) -> Vec<RetryOnItem> {
        let mut items: Vec<RetryOnItem> = (LOWEST..=HIGHEST)
            .filter(|&code| self.retries(Outcome::Status(code)))
            .map(|code| RetryOnItem::Code(i64::from(code)))
            .collect();
        if self.timeout {
            items.push(RetryOnItem::Word("timeout".into()));
        }
        if self.connection {
            items.push(RetryOnItem::Word("connection".into()));
        }
        items
    }
}

impl fmt::Display for RetryOn {
    /// The TOML list form: `[409, 429, 502, 503, 504, "timeout", "connection"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, item) in self.to_items().iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(c: i64) -> RetryOnItem {
        RetryOnItem::Code(c)
    }
    fn word(w: &str) -> RetryOnItem {
        RetryOnItem::Word(w.into())
    }
    fn parse(items: &[RetryOnItem]) -> Result<RetryOn, ValueError> {
        items
            .iter()
            .try_fold(RetryOn::none(), |set, item| set.with_item(item))
    }

    #[test]
    fn default_follows_the_design() {
        let set = RetryOn::default();
        for c in [409, 429, 502, 503, 504] {
            assert!(set.retries(Outcome::Status(c)), "{c}");
        }
        assert!(set.retries(Outcome::Timeout));
        assert!(set.retries(Outcome::Connection));
        assert!(!set.retries(Outcome::Success));
        // 500 is opt-in; other 4xx never.
        assert!(!set.retries(Outcome::Status(500)));
        for c in (400..=499).filter(|&c| c != 409 && c != 429) {
            assert!(!set.retries(Outcome::Status(c)), "{c}");
        }
        assert!(!set.retries(Outcome::Status(600)));
        assert!(!set.retries(Outcome::Status(0)));
        assert!(set.with_status(500).unwrap().retries(Outcome::Status(500)));
        assert_eq!(
            set.to_string(),
            r#"[409, 429, 502, 503, 504, "timeout", "connection"]"#
        );
    }

    #[test]
    fn parse_round_trips_and_matches_default() {
        let items = [
            code(409),
            code(429),
            code(502),
            code(503),
            code(504),
            word("timeout"),
            word("connection"),
        ];
        let set = parse(&items).unwrap();
        assert_eq!(set, RetryOn::default());
        assert_eq!(set.to_items(), items.to_vec());
        let custom = parse(&[code(599), code(500), word("timeout"), code(500)]).unwrap();
        assert_eq!(parse(&custom.to_items()).unwrap(), custom);
        assert!(!custom.retries(Outcome::Connection));
        assert!(custom.retries(Outcome::Status(599)));
        assert_eq!(parse(&[]).unwrap(), RetryOn::none());
    }

    #[test]
    fn bad_items_are_refused_saying_what_is_allowed() {
        let cases: [(RetryOnItem, &str); 7] = [
            (code(99), "99"),
            (code(600), "600"),
            (code(-1), "-1"),
            (code(400), "never retried"),
            (code(404), "never retried"),
            (code(200), "success"),
            (word("timeouts"), "\"timeouts\""),
        ];
        for (item, needle) in cases {
            let err = RetryOn::default().with_item(&item).unwrap_err();
            assert_eq!(err.value, item.to_string());
            assert!(err.to_string().contains(needle), "{item}: {err}");
        }
        // The Rust API opts any error status in, and out.
        let set = RetryOn::default().with_status(404).unwrap();
        assert!(set.retries(Outcome::Status(404)));
        assert!(!set.without_status(404).retries(Outcome::Status(404)));
        assert!(!set.without_status(409).retries(Outcome::Status(409)));
        assert_eq!(
            set.without_status(404).without_status(700),
            RetryOn::default()
        );
        for refused in [99, 200, 304, 600] {
            assert!(
                RetryOn::default().with_status(refused).is_err(),
                "{refused}"
            );
        }
    }

    #[test]
    fn recommended_is_the_default_with_500() {
        assert_eq!(
            RetryOn::recommended(),
            RetryOn::default().with_status(500).unwrap()
        );
    }

    /// 408 Request Timeout and 425 Too Early say "send it again" (RFC 9110 §15.5.9, RFC 8470
    /// §5.2): not retried by default, but a user may opt in.
    #[test]
    fn request_timeout_and_too_early_are_opt_in() {
        assert!(!RetryOn::default().retries(Outcome::Status(408)));
        assert!(!RetryOn::default().retries(Outcome::Status(425)));
        let set = RetryOn::default()
            .with_status(408)
            .and_then(|set| set.with_status(425))
            .unwrap();
        assert!(set.retries(Outcome::Status(408)));
        assert!(set.retries(Outcome::Status(425)));
        assert_eq!(
            RetryOn::none().with_item(&code(425)).unwrap().to_items(),
            [code(425)]
        );
    }

    #[test]
    fn idempotency_rule() {
        assert!(Idempotency::Idempotent.may_retry());
        assert!(Idempotency::WithKey.may_retry());
        assert!(!Idempotency::NonIdempotent.may_retry());
    }

    #[test]
    fn status_classes() {
        assert_eq!(Outcome::from_status(204), Outcome::Success);
        assert_eq!(Outcome::from_status(304), Outcome::Success);
        assert_eq!(Outcome::from_status(503), Outcome::Status(503));
        assert!(Outcome::Status(503).is_server_failure());
        assert!(Outcome::Status(429).is_server_failure());
        assert!(Outcome::Timeout.is_server_failure());
        assert!(!Outcome::Status(409).is_server_failure());
        assert!(!Outcome::Status(400).is_server_failure());
        assert!(!Outcome::Success.is_server_failure());
        assert!(Outcome::Fatal.is_server_failure());
        assert!(!RetryOn::default().retries(Outcome::Fatal));
        assert_eq!(Outcome::Fatal.to_string(), "fatal");
        assert!(!Outcome::Invalid.is_server_failure());
        assert!(!Outcome::Invalid.concerns_the_server());
        assert!(Outcome::Fatal.concerns_the_server());
        assert!(!RetryOn::default().retries(Outcome::Invalid));
        assert_eq!(Outcome::Invalid.to_string(), "invalid");
    }
}
