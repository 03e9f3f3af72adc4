//! The closed set of simulation events.
//!
//! An event is 12 bytes: a tag and two `u32` (a client index and an attempt number, or a
//! worker slot). Everything else an event needs lives in the client or server state it
//! points to, which keeps the queue's entries small and the heap cache-friendly.

/// Something that happens at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// Client `.0` begins a new request (its first attempt).
    Start(u32),
    /// Client `.0` wakes from a backoff sleep and sends its next attempt.
    Wake(u32),
    /// Client `.0` was handed a concurrency-limiter slot and sends its attempt now.
    Launch(u32),
    /// Attempt `.1` of client `.0` reaches the server (a queue's door, or the OCC row's read).
    Arrive(u32, u32),
    /// Worker `.0` finishes serving its attempt (queue server).
    ServiceDone(u32),
    /// The answer to attempt `.1` reaches client `.0`.
    Reply(u32, u32),
    /// Attempt `.1` of client `.0` times out.
    Timeout(u32, u32),
    /// The next open-loop (Poisson) arrival.
    NextArrival,
    /// The row's version reaches client `.0`, which sends its write (OCC server).
    ReadReply(u32, u32),
    /// The conditional write of attempt `.1` reaches the row (OCC server).
    WriteArrive(u32, u32),
    /// Persistent source `.0` of a `poisson_clients` workload sends a new request.
    SourceArrival(u32),
    // A chain of services (layers 2 and up): `.0` is a hop, the layer's station in the top 8
    // bits and a caller slot (or, for `HopDone`, a worker) in the low 24 (see `engine::chain`).
    /// Attempt `.1` of a caller slot reaches its layer.
    HopArrive(u32, u32),
    /// A worker of a layer finishes its own service.
    HopDone(u32),
    /// The answer to attempt `.1` reaches its caller slot.
    HopReply(u32, u32),
    /// Attempt `.1` of a caller slot times out.
    HopTimeout(u32, u32),
    /// A caller slot wakes from a backoff sleep.
    HopWake(u32),
    /// A caller slot was handed a concurrency-limiter slot.
    HopLaunch(u32),
    /// The hedging delay after copy `.1` of client `.0` has passed, or the pushback after a
    /// copy's failure: another copy may leave.
    Hedge(u32, u32),
}

impl Event {
    /// The client this event concerns, if it is one of the engine's own clients.
    #[inline]
    pub fn client(self) -> Option<u32> {
        match self {
            Event::Start(c)
            | Event::Wake(c)
            | Event::Launch(c)
            | Event::Arrive(c, _)
            | Event::Reply(c, _)
            | Event::Timeout(c, _)
            | Event::ReadReply(c, _)
            | Event::WriteArrive(c, _)
            | Event::Hedge(c, _) => Some(c),
            _ => None,
        }
    }
}
