//! What comes back for an attempt: a status or a connection reset, and the outcome the retry
//! policy reads from it. The server and the faults produce answers, clients consume them.

use crate::policy::Outcome;

/// The answer to an attempt: a status, or a connection reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    Status(u16),
    Reset,
    /// A status marked "do not retry" by a layer that gave up (gRPC pushback, "retried
    /// already" headers): callers never retry it.
    NoRetry(u16),
}

impl Answer {
    /// A served attempt's answer.
    pub const OK: Answer = Answer::Status(200);

    /// How the retry policy sees it: below 400 a success, then an error status; a reset is a
    /// connection error; a "do not retry" answer is [`Outcome::Fatal`], which no policy retries.
    #[inline]
    pub fn outcome(self) -> Outcome {
        match self {
            Answer::Status(s) if s < 400 => Outcome::Success,
            Answer::Status(s) => Outcome::Status(s),
            Answer::Reset => Outcome::Connection,
            Answer::NoRetry(_) => Outcome::Fatal,
        }
    }
}
