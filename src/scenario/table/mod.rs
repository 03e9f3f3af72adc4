//! One module per scenario table, in docs/scenario.md's sections: each owns its serde
//! structs, its defaults (named constants), its checks and its write-back to the resolved
//! file. Adding a key is a change to its table's module and its row in docs/scenario.md.
//!
//! The grouping follows the TOML tables. `client.budget` has a module of its own (six kinds,
//! each with its own keys); the client's three smaller guards (`breaker`, `throttle`,
//! `adaptive_rate`) share [`guards`]; `client.hedging` is [`hedging`], which also owns the check
//! of what hedging needs from the other tables. `[backoff]`'s shared keys ([`backoff`]) and its
//! `strategies` list ([`strategies`]: presets, client overrides, `throttling_backoff`, layer
//! overrides) are two modules because a strategy is a table of its own. A distribution
//! ([`dist`]) is a value shape two tables use. `[sweep]` is [`super::sweep`] and `[playground]`
//! [`super::playground`], which read them by hand.

pub mod backoff;
pub mod budget;
pub mod client;
pub mod dist;
pub mod faults;
pub mod guards;
pub mod hedging;
pub mod helpers;
pub mod layers;
pub mod network;
pub mod output;
pub mod passage;
pub mod recommend;
pub mod recovery;
pub mod root;
pub mod server;
pub mod strategies;
pub mod workload;
