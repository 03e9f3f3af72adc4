//! One module per scenario table (docs/scenario.md's sections): each owns its serde structs,
//! its defaults, its checks and its write-back to the resolved file.

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
pub mod recommend;
pub mod recovery;
pub mod root;
pub mod server;
pub mod strategies;
pub mod workload;
