//! The clients' side of hedged requests: when the next copy goes, what a copy's answer
//! decides, and what is counted ([`super::super::hedge`] holds the copies themselves).

use std::time::Duration;

use crate::policy::{AttemptTimeout, Outcome, RetryClass};
use crate::time::{SimDuration, SimTime};

use super::super::hedge::{Cancel, CopyNext, HedgeCounts, Hedging};
use super::super::run_result::Ending;
use super::{Clients, Phase, accepted};

impl Clients {
    /// True when the clients hedge their requests instead of retrying.
    #[inline]
    pub fn hedged(&self) -> bool {
        self.hedging.is_some()
    }

    /// What hedged requests measured (`None` without hedging).
    pub fn hedge_counts(&self) -> Option<HedgeCounts> {
        self.hedging.as_ref().map(|h| h.counts)
    }

    /// True when the server drops the cancelled copies waiting in its queue.
    pub fn cancels_waiting(&self) -> bool {
        self.hedging
            .as_ref()
            .is_some_and(|h| h.config.cancel == Cancel::Waiting)
    }

    /// After client `c` sent its copy `tag`: the delay to the next copy, when one may follow
    /// (the request still waits for `tag`, copies are left, and the delay is known).
    #[inline]
    pub fn next_hedge(&self, c: u32, tag: u32) -> Option<SimDuration> {
        let h = self.hedging.as_ref()?;
        (self.awaits(c, tag) && h.may_send(c)).then(|| h.delay())?
    }

    /// True when `tag` is still client `c`'s latest copy and its request waits (the delay
    /// timer set when `tag` left is the current one), and no pushback holds the next copy
    /// past `now` (its own timer comes then).
    #[inline]
    pub fn hedge_due(&self, c: u32, tag: u32, now: SimTime) -> bool {
        let client = &self.clients[c as usize];
        client.phase == Phase::Waiting
            && client.sends == tag
            && self
                .hedging
                .as_ref()
                .is_some_and(|h| h.may_send(c) && h.released(c, now))
    }

    /// Client `c` sends another copy of its request at `now`: its tag and timeout, or why
    /// not. A copy after the first asks what a retry would (the deadline, the budget as a
    /// transient retry, the throttle, the breaker); a refusal sends no more copies.
    pub fn launch_copy(
        &mut self,
        c: u32,
        now: SimTime,
    ) -> Result<(u32, Option<SimDuration>), Ending> {
        let owner = self.owner(c);
        let client = &self.clients[c as usize];
        let refused = 'check: {
            let Some(tag) = client.sends.checked_add(1) else {
                break 'check Ending::GaveUpAttempts;
            };
            let timeout = match self
                .policy
                .attempt_timeout(client.start.as_nanos(), now.as_nanos())
            {
                AttemptTimeout::Expired => break 'check Ending::GaveUpDeadline,
                AttemptTimeout::Unbounded => None,
                AttemptTimeout::After(t) => Some(SimDuration(t)),
            };
            if let Some(i) = self.guards.budget_index(owner)
                && !self.guards.budgets[i]
                    .try_retry(Duration::from_nanos(now.as_nanos()), RetryClass::Transient)
            {
                break 'check Ending::GaveUpBudget;
            }
            // A copy the throttle or the breaker refuses gives the budget's grant back, as
            // a refused retry does (`Clients::refuse`).
            let throttled = self.guards.throttle_index(owner).is_some_and(|i| {
                let (throttle, rng) = &mut self.guards.throttles[i];
                !throttle.admit_nanos(now.as_nanos(), rng)
            });
            let refused = if throttled {
                Some(Ending::Throttled)
            } else if let Some(i) = self.guards.breaker_index(owner)
                && !self.guards.breakers[i].allow_nanos(now.as_nanos())
            {
                Some(Ending::RejectedByBreaker)
            } else {
                None
            };
            if let Some(i) = self.guards.budget_index(owner) {
                let budget = &mut self.guards.budgets[i];
                match refused {
                    Some(_) => budget.refund_retry_nanos(now.as_nanos(), RetryClass::Transient),
                    // A concurrency budget counts the copy in flight until it ends.
                    None => budget.on_send(),
                }
            }
            if let Some(refused) = refused {
                break 'check refused;
            }
            let client = &mut self.clients[c as usize];
            client.sends = tag;
            let h = self
                .hedging
                .as_mut()
                .expect("only a hedged client sends copies");
            h.sent(c, client.attempts(), now);
            return Ok((tag, timeout));
        };
        if let Some(h) = self.hedging.as_mut() {
            h.stop(c, refused);
        }
        Err(refused)
    }

    /// True when some copy of client `c`'s request is still awaited.
    pub fn any_copy_live(&self, c: u32) -> bool {
        self.hedging.as_ref().is_some_and(|h| h.any_live(c))
    }

    /// Copy `tag` of client `c` ended at `now` with `outcome` (and a Retry-After `hint`): the
    /// guards learn of it as of an attempt (the budget's success or failure, gRPC's token),
    /// then the policy says what follows. The request's phase is left to the engine
    /// ([`Clients::end`]).
    pub fn conclude_copy(
        &mut self,
        c: u32,
        tag: u32,
        now: SimTime,
        outcome: Outcome,
        hint: Option<SimDuration>,
    ) -> CopyNext {
        let owner = self.owner(c);
        let hint = self.heard(hint);
        let n = self.clients[c as usize]
            .attempt_of(tag)
            .expect("only an awaited copy is concluded");
        if let Some(i) = self.guards.throttle_index(owner)
            && accepted(outcome)
        {
            self.guards.throttles[i].0.on_accept_nanos(now.as_nanos());
        }
        if let Some(i) = self.guards.breaker_index(owner) {
            self.guards.breakers[i].record_nanos(now.as_nanos(), !outcome.is_server_failure());
        }
        let h = self
            .hedging
            .as_mut()
            .expect("only a hedged client has copies");
        if let Some(i) = self.guards.budget_index(owner) {
            let budget = &mut self.guards.budgets[i];
            // The copy is no longer in flight (a concurrency budget's books; `decide`'s
            // `on_attempt_end` for a retried attempt).
            budget.on_abandon(n);
            if outcome == Outcome::Success {
                budget.on_success_at(Duration::from_nanos(now.as_nanos()), Hedging::kind(n));
            } else if h.config.policy.non_fatal.retries(outcome) || outcome == Outcome::Fatal {
                budget.on_failure();
            }
        }
        let next = h.conclude(c, n, now, outcome);
        // A copy timed out by the request's deadline: the request fails as out of time
        // whatever copies are still out (A6: "Once a deadline has passed, the operation
        // fails regardless of in-flight RPCs"), as a retried one does.
        let start = self.clients[c as usize].start.as_nanos();
        if outcome == Outcome::Timeout
            && matches!(
                self.policy.attempt_timeout(start, now.as_nanos()),
                AttemptTimeout::Expired
            )
        {
            return CopyNext::End(Ending::GaveUpDeadline);
        }
        match (next, hint) {
            (CopyNext::SendNow, Some(hint)) => self.pushback(c, now, hint),
            _ => next,
        }
    }

    /// A non-fatal copy of client `c` answered at `now` with a Retry-After `hint`: the next
    /// copy waits what `client.retry_after` makes of the hint after a zero backoff (A6's
    /// pushback; `ignore`: at once), never past the deadline (it then gives up there).
    fn pushback(&mut self, c: u32, now: SimTime, hint: SimDuration) -> CopyNext {
        let client = &mut self.clients[c as usize];
        let policy = self.policy.policy();
        let hint = Duration::from_nanos(hint.as_nanos());
        let wait = SimDuration::from(policy.retry_after.sleep(
            Duration::ZERO,
            Some(hint),
            &mut client.rng,
        ));
        let left = policy
            .deadline
            .map(|d| (client.start + SimDuration::from(d)) - now);
        let delay = left.map_or(wait, |left| wait.min(left));
        if delay == SimDuration::ZERO {
            return CopyNext::SendNow;
        }
        let h = self
            .hedging
            .as_mut()
            .expect("only a hedged client has copies");
        h.hold(c, now + delay);
        CopyNext::SendAfter {
            delay,
            latest: client.sends,
        }
    }

    /// Served copies whose answer nobody read: one more.
    pub fn unread_copy(&mut self) {
        if let Some(h) = self.hedging.as_mut() {
            h.counts.unread_served += 1;
        }
    }
}
