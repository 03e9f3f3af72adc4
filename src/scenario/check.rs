//! From the raw file to a checked [`Scenario`]: each table checks its own keys and applies its
//! own defaults ([`super::table`]); this module hands each table its part, in the order the
//! errors are reported, and makes the checks that span tables.
//!
//! The engine's constructors name a wrong parameter by its field (`cap`); the tables turn a
//! field into a key: `backoff.cap`, or `backoff.strategies[1].cap` when the strategy's own
//! table set it, `client.budget.capacity`, `server.service.mean`. [`super::ScenarioDoc`] then
//! places the key where its value was written (a line and column, a `--set`, a sweep point).
//!
//! The cross-table checks live where their conclusion belongs: [`hedging::hedging_fits`] (what
//! a hedging client needs of the server, network and chain) with the hedging table, the
//! recovery trigger (from the faults or the workload) with the recovery table; the
//! checks whose refusal names a key of several tables (an OCC server needs a burst, no client
//! may retry forever at one instant, a strategy's layer overrides need the layers) here.

use std::path::Path;

use super::Scenario;
use super::file::ScenarioFile;
use super::table::{
    backoff, client, faults, hedging, layers, network, output, passage, recommend, recovery, root,
    server, strategies, workload,
};
use crate::backoff::Jitter;
use crate::error::{Error, Result};
use crate::sim::dist::Dist;
use crate::sim::workload::Workload;
use crate::sim::{Chain, ClientConfig, Model, ServerConfig, Strategy};

/// Checks a whole file. `fallback_name` is used when the file has none.
/// Files the scenario names (empirical samples) are read relative to `dir`.
pub(super) fn check(
    file: &ScenarioFile,
    fallback_name: &str,
    dir: Option<&Path>,
) -> Result<Scenario> {
    let horizon = root::horizon(&file.horizon)?;
    let replications = root::replications(file.replications)?;
    let bucket = output::bucket(&file.output, horizon)?;
    let name = root::name(&file.name, fallback_name)?;
    let workload = workload::workload(&file.workload)?;
    let (server, layer_faults, chain) = if file.layers.is_none() {
        (server::server("server", &file.server, dir)?, None, None)
    } else {
        let (server, faults, chain) = layers::layers(file, dir)?;
        (server, Some(faults), Some(chain))
    };
    let latency = network::latency(&file.network, dir)?;
    let client = client::client("client", &file.client)?;
    let recovery = recovery::recovery(&file.recovery)?;
    let passage = passage::passage(&file.passage)?;
    let strategies = strategies::strategies(&file.backoff)?;
    let faults = match layer_faults {
        Some(faults) => faults,
        None => faults::faults("faults", &file.faults)?,
    };
    occ_needs_burst(&server, &workload)?;
    no_endless_retries(&strategies, &client, &latency, chain.as_ref())?;
    layer_overrides_fit(&strategies, chain.as_ref())?;
    hedging::hedging_fits(&strategies, &client, &latency, &server, chain.is_some())?;
    layer_overrides_need_layers(&strategies, chain.as_ref())?;
    let trigger = recovery::trigger(&file.recovery, &faults, chain.as_ref(), &workload)?;
    Ok(Scenario {
        name,
        description: root::description(&file.description),
        seed: root::seed(file.seed),
        replications,
        model: Model {
            horizon,
            workload,
            server,
            latency,
            client,
            trigger,
            faults,
            bucket,
            recovery,
            passage,
            chain,
        },
        strategies,
        backoff_defaults: backoff::backoff_defaults(&file.backoff)?,
        min_success: recommend::min_success(file.recommend.as_ref())?,
    })
}

/// Brooker's OCC store takes one write per client: a burst workload only.
fn occ_needs_burst(server: &ServerConfig, workload: &Workload) -> Result<()> {
    if matches!(server, ServerConfig::Occ) && !matches!(workload, Workload::Burst { .. }) {
        return Err(Error::invalid(
            "workload.kind",
            workload.kind(),
            "\"burst\" with server.kind = \"occ\" (one write per client, as in Brooker 2015)",
        ));
    }
    Ok(())
}

/// Over an instant network, a client without jitter and without an attempt limit would retry
/// forever at one instant: at the edge, and at every calling layer as each strategy runs it.
fn no_endless_retries(
    strategies: &[Strategy],
    client: &ClientConfig,
    latency: &Dist,
    chain: Option<&Chain>,
) -> Result<()> {
    if !latency.is_zero() {
        return Ok(());
    }
    if strategies.iter().any(|s| {
        s.backoff.jitter() == Jitter::None && s.client_config(client).max_attempts.is_none()
    }) {
        return Err(Error::invalid(
            "client.max_attempts",
            "\"unlimited\"",
            "a number when a strategy has jitter \"none\" and network.latency is zero: such a client would retry forever at one instant",
        ));
    }
    let Some(chain) = chain else { return Ok(()) };
    for (i, st) in strategies.iter().enumerate() {
        for (j, hop) in chain.hops.iter().enumerate() {
            let overrides = st.layer(j);
            let (client, _, _) = overrides.apply(hop);
            if hop.backoff.jitter() == Jitter::None && client.max_attempts.is_none() {
                let key = if overrides.client.max_attempts.is_some() {
                    format!("backoff.strategies[{i}].layers[{j}].max_attempts")
                } else {
                    format!("layers[{j}].client.max_attempts")
                };
                return Err(Error::invalid(
                    key,
                    "\"unlimited\"",
                    "a number when the layer's backoff has jitter \"none\" and network.latency is zero: the layer would retry forever at one instant",
                ));
            }
        }
    }
    Ok(())
}

/// A strategy overrides at most one entry per calling layer.
fn layer_overrides_fit(strategies: &[Strategy], chain: Option<&Chain>) -> Result<()> {
    if let Some(chain) = chain
        && let Some((i, s)) = strategies
            .iter()
            .enumerate()
            .find(|(_, s)| s.layers.len() > chain.hops.len())
    {
        return Err(Error::invalid(
            format!("backoff.strategies[{i}].layers"),
            format!("{} entries", s.layers.len()),
            format!(
                "at most {} entries, one per layer that calls another",
                chain.hops.len()
            ),
        ));
    }
    Ok(())
}

/// A strategy's `layers` overrides need `[[layers]]`.
fn layer_overrides_need_layers(strategies: &[Strategy], chain: Option<&Chain>) -> Result<()> {
    if chain.is_none()
        && let Some(i) = strategies.iter().position(|s| !s.layers.is_empty())
    {
        return Err(Error::invalid(
            format!("backoff.strategies[{i}].layers"),
            "given",
            "nothing without [[layers]]: a scenario with one server has no layers to override",
        ));
    }
    Ok(())
}
