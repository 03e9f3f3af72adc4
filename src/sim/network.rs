//! The network between clients and the server: every leg of an attempt (request, answer, the
//! OCC round trips) takes a delay drawn from the latency distribution.
//!
//! An attempt's legs are drawn in order from its own stream, seeded when it leaves the client
//! ([`Network::first_leg`]): every strategy sees the same delays for the same request's same
//! attempt. What travels on a leg waits on the client's link until the leg ends: the answer
//! (status, Retry-After hint, the service it cost) and, for the OCC row, the version read.
//! When every leg takes zero time the network is instant: the engine then hands answers over
//! at once, without events, and no per-client state is kept.

use rand::distr::Distribution;

use super::answer::Answer;
use super::dist::Dist;
use crate::rng::{SimRng, StreamFamily};
use crate::time::SimDuration;

/// `Link::reply_hint` when the answer carries no Retry-After.
const NO_HINT: u64 = u64::MAX;

/// A client's link for its current attempt.
#[derive(Debug, Clone)]
struct Link {
    /// The current attempt's stream of leg delays.
    rng: SimRng,
    /// The attempt whose answer is travelling back, and the service time it carries: if the
    /// client stops waiting before it lands, that work was wasted.
    reply_tag: u32,
    reply_work: u64,
    /// The answer travelling back and its Retry-After hint in nanoseconds ([`NO_HINT`]).
    reply: Answer,
    reply_hint: u64,
    /// OCC: the row version travelling to the client and back with its write.
    version: u32,
}

impl Default for Link {
    fn default() -> Self {
        Link {
            rng: crate::rng::from_seed(0),
            reply_tag: 0,
            reply_work: 0,
            reply: Answer::OK,
            reply_hint: NO_HINT,
            version: 0,
        }
    }
}

/// The network of one run.
pub(crate) struct Network {
    latency: Dist,
    streams: StreamFamily,
    instant: bool,
    /// One link per client (empty when `instant`).
    links: Vec<Link>,
}

impl Network {
    /// A network of `clients` links whose legs take `latency`, drawn from `streams`.
    pub fn new(latency: Dist, streams: StreamFamily, clients: usize) -> Network {
        let instant = latency.is_zero();
        Network {
            latency,
            streams,
            instant,
            links: if instant {
                Vec::new()
            } else {
                vec![Link::default(); clients]
            },
        }
    }

    /// True when every leg takes zero time.
    #[inline]
    pub fn is_instant(&self) -> bool {
        self.instant
    }

    /// A link for a client created during the run.
    pub fn add_client(&mut self) {
        if !self.instant {
            self.links.push(Link::default());
        }
    }

    /// Client `c` sends a new attempt whose streams are keyed `stream`: the first leg.
    #[inline]
    pub fn first_leg(&mut self, c: u32, stream: (u64, u64)) -> SimDuration {
        let link = &mut self.links[c as usize];
        link.rng = self.streams.get(stream.0, stream.1);
        SimDuration(self.latency.sample(&mut link.rng))
    }

    /// The next leg of client `c`'s current attempt.
    #[inline]
    pub fn leg(&mut self, c: u32) -> SimDuration {
        SimDuration(self.latency.sample(&mut self.links[c as usize].rng))
    }

    /// The leg of `answer` (with Retry-After `hint`) to attempt `tag` of client `c`, which
    /// cost `work` nanoseconds of service; the answer waits on the link until it lands.
    #[inline]
    pub fn reply_leg(
        &mut self,
        c: u32,
        tag: u32,
        work: u64,
        answer: Answer,
        hint: Option<SimDuration>,
    ) -> SimDuration {
        let d = self.leg(c);
        let link = &mut self.links[c as usize];
        link.reply_tag = tag;
        link.reply_work = work;
        link.reply = answer;
        link.reply_hint = hint.map_or(NO_HINT, SimDuration::as_nanos);
        d
    }

    /// The answer the last [`Network::reply_leg`] to client `c` carried, and its hint.
    #[inline]
    pub fn reply(&self, c: u32) -> (Answer, Option<SimDuration>) {
        let link = &self.links[c as usize];
        let hint = (link.reply_hint != NO_HINT).then_some(SimDuration(link.reply_hint));
        (link.reply, hint)
    }

    /// OCC: the leg that takes the row's `version` to client `c`.
    #[inline]
    pub fn version_leg(&mut self, c: u32, version: u32) -> SimDuration {
        self.links[c as usize].version = version;
        self.leg(c)
    }

    /// OCC: the version client `c` read, travelling with its write.
    #[inline]
    pub fn version(&self, c: u32) -> u32 {
        self.links[c as usize].version
    }

    /// The service time carried by the answer to attempt `tag` of client `c` if it is the
    /// last answer sent to `c` (on its way, when `c` still waits for `tag`).
    #[inline]
    pub fn reply_work(&self, c: u32, tag: u32) -> Option<u64> {
        self.links
            .get(c as usize)
            .filter(|link| link.reply_tag == tag)
            .map(|link| link.reply_work)
    }
}
