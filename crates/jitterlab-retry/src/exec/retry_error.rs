//! What a call returns when it gives up: [`RetryError`], which says why and keeps the last
//! attempt's error, and is a `std::error::Error` for any error type that can be shown.

use std::fmt;

use super::TimedOut;
use crate::policy::StopReason;

/// Why [`Retrier::retry`](super::Retrier::retry) gave up.
///
/// Its `Display` says why and after how many attempts; the last attempt's error is its
/// [`source`](std::error::Error::source), so an error chain shows each cause once.
#[derive(Debug)]
pub enum RetryError<E> {
    /// The policy stopped: the last attempt's error and why no retry followed.
    Stopped {
        /// Why the policy stopped.
        reason: StopReason,
        /// The last attempt's error.
        error: E,
        /// Attempts made.
        attempts: u32,
    },
    /// The cancel token was cancelled before an attempt or during a sleep.
    Cancelled {
        /// The last attempt's error, if an attempt was made.
        last: Option<E>,
        /// Attempts made.
        attempts: u32,
    },
    /// The circuit breaker refused the next attempt.
    BreakerOpen {
        /// The last attempt's error, if an attempt was made.
        last: Option<E>,
        /// Attempts made.
        attempts: u32,
    },
    /// The policy stopped after an attempt the async executor cut off at its timeout (so
    /// there is no error of the operation's to return).
    TimedOut {
        /// Why the policy stopped.
        reason: StopReason,
        /// The last attempt's time limit.
        timed_out: TimedOut,
        /// Attempts made.
        attempts: u32,
    },
}

impl<E> RetryError<E> {
    /// Attempts made before giving up.
    pub fn attempts(&self) -> u32 {
        match self {
            RetryError::Stopped { attempts, .. }
            | RetryError::Cancelled { attempts, .. }
            | RetryError::BreakerOpen { attempts, .. }
            | RetryError::TimedOut { attempts, .. } => *attempts,
        }
    }

    /// The last attempt's error, if an attempt was made and returned one (`None` too when the
    /// async executor cut it off).
    pub fn last_error(&self) -> Option<&E> {
        match self {
            RetryError::Stopped { error, .. } => Some(error),
            RetryError::Cancelled { last, .. } | RetryError::BreakerOpen { last, .. } => {
                last.as_ref()
            }
            RetryError::TimedOut { .. } => None,
        }
    }

    /// Consumes `self`, returning the last attempt's error as [`RetryError::last_error`] does.
    pub fn into_last_error(self) -> Option<E> {
        match self {
            RetryError::Stopped { error, .. } => Some(error),
            RetryError::Cancelled { last, .. } | RetryError::BreakerOpen { last, .. } => last,
            RetryError::TimedOut { .. } => None,
        }
    }

    /// Why the call gave up.
    pub fn reason(&self) -> StopReason {
        match self {
            RetryError::Stopped { reason, .. } | RetryError::TimedOut { reason, .. } => *reason,
            RetryError::Cancelled { .. } => StopReason::Cancelled,
            RetryError::BreakerOpen { .. } => StopReason::BreakerOpen,
        }
    }
}

impl<E> fmt::Display for RetryError<E> {
    /// `attempts exhausted after 5 attempts`: the cause is the error's `source()`, not
    /// repeated here.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, attempts) = (self.reason().describe(), self.attempts());
        write!(
            f,
            "{what} after {attempts} attempt{}",
            if attempts == 1 { "" } else { "s" }
        )
    }
}

/// A `std::error::Error` for any error type that can be shown, so that `?` takes a
/// `RetryError<String>` or `RetryError<anyhow::Error>` into `Box<dyn Error>` or
/// `anyhow::Error` as it takes a `RetryError<std::io::Error>`. Its
/// [`source`](std::error::Error::source) is the last attempt's error: see [`source_of`].
impl<E: fmt::Debug + fmt::Display + 'static> std::error::Error for RetryError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RetryError::TimedOut { timed_out, .. } => Some(timed_out),
            _ => self.last_error().map(source_of),
        }
    }
}

/// The last attempt's error as a [`RetryError`]'s source: the error itself (its own
/// sources follow) when it is of a type the engine knows (`std::io::Error`, a boxed error,
/// whose inner error it gives, [`TimedOut`], the engine's `http::Error` and reqwest's and
/// ureq's with their features); any other type through a wrapper that shows its `Display`
/// and `Debug` (Rust cannot ask a generic type whether it is an error). The typed error is
/// always [`RetryError::last_error`].
pub fn source_of<E: fmt::Debug + fmt::Display + 'static>(
    error: &E,
) -> &(dyn std::error::Error + 'static) {
    use std::any::Any;
    use std::error::Error as StdError;
    let any = error as &dyn Any;
    if let Some(boxed) = any.downcast_ref::<Box<dyn StdError + Send + Sync>>() {
        return &**boxed;
    }
    if let Some(boxed) = any.downcast_ref::<Box<dyn StdError>>() {
        return &**boxed;
    }
    if let Some(e) = any.downcast_ref::<std::io::Error>() {
        return e;
    }
    if let Some(e) = any.downcast_ref::<TimedOut>() {
        return e;
    }
    #[cfg(feature = "http")]
    if let Some(e) = any.downcast_ref::<crate::http::Error>() {
        return e;
    }
    #[cfg(feature = "reqwest")]
    if let Some(e) = any.downcast_ref::<::reqwest::Error>() {
        return e;
    }
    #[cfg(feature = "ureq")]
    if let Some(e) = any.downcast_ref::<::ureq::Error>() {
        return e;
    }
    Shown::of(error)
}

/// An error value seen through its `Display` and `Debug` alone.
#[repr(transparent)]
struct Shown<E>(E);

impl<E> Shown<E> {
    fn of(error: &E) -> &Shown<E> {
        // SAFETY: `Shown<E>` is `#[repr(transparent)]` over `E`: the same layout, so a
        // reference to an `E` is a valid reference to a `Shown<E>` for the same lifetime.
        unsafe { &*(error as *const E).cast::<Shown<E>>() }
    }
}

impl<E: fmt::Debug> fmt::Debug for Shown<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: fmt::Display> fmt::Display for Shown<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for Shown<E> {}

impl<E> RetryError<E> {
    /// The same error with the last attempt's error mapped by `f`.
    pub fn map_err<F>(self, f: impl FnOnce(E) -> F) -> RetryError<F> {
        match self {
            RetryError::Stopped {
                reason,
                error,
                attempts,
            } => RetryError::Stopped {
                reason,
                error: f(error),
                attempts,
            },
            RetryError::Cancelled { last, attempts } => RetryError::Cancelled {
                last: last.map(f),
                attempts,
            },
            RetryError::BreakerOpen { last, attempts } => RetryError::BreakerOpen {
                last: last.map(f),
                attempts,
            },
            RetryError::TimedOut {
                reason,
                timed_out,
                attempts,
            } => RetryError::TimedOut {
                reason,
                timed_out,
                attempts,
            },
        }
    }
}
