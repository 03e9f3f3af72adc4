//! `[[layers]]`: a chain of services, each with its server and faults, and for a calling layer
//! its client, backoff, `on_give_up` and `propagate_deadline`.

use std::path::Path;

use serde::Deserialize;
use toml::Value;

use super::backoff::{backoff_defaults, backoff_pairs};
use super::client::{ClientFile, client, client_table};
use super::faults::{FaultFile, faults, faults_list};
use super::helpers::{s, table};
use super::server::{MAX_WORKERS, ServerFile, server, server_table};
use super::strategies::strategy_table;
use crate::backoff::{Backoff, BackoffParams, Jitter};
use crate::error::{Error, Result};
use crate::scenario::file::ScenarioFile;
use crate::sim::faults::Fault;
use crate::sim::{
    Chain, ClientConfig, GiveUp, Hop, MAX_CALLING_WORKERS, MAX_LAYERS, Model, ServerConfig,
};
use crate::time::SimDuration;

/// One `[[layers]]` entry: a service of a chain, in call order.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LayerFile {
    pub name: Option<String>,
    pub server: ServerFile,
    /// Its outbound calls' policy (a calling layer only).
    pub client: Option<ClientFile>,
    /// Its outbound calls' backoff: a strategy table without a name; read by hand.
    pub backoff: Option<toml::Table>,
    pub on_give_up: Option<String>,
    pub propagate_deadline: Option<bool>,
    pub faults: Vec<FaultFile>,
}

/// `on_give_up` at `key`.
pub fn give_up(key: &str, v: &toml::Value) -> Result<GiveUp> {
    match v.as_str() {
        Some("pass") => Ok(GiveUp::Pass),
        Some("do_not_retry") => Ok(GiveUp::DoNotRetry),
        _ => Err(Error::invalid(
            key,
            v,
            "\"pass\" (answer upstream with the last status received) or \"do_not_retry\" (the same status, marked so that callers never retry it)",
        )),
    }
}

/// `on_give_up` when absent: pass the last status upstream.
pub const DEFAULT_ON_GIVE_UP: GiveUp = GiveUp::Pass;

/// `propagate_deadline` when absent.
pub const DEFAULT_PROPAGATE_DEADLINE: bool = false;

/// A calling layer's `backoff.jitter` when absent.
pub const DEFAULT_LAYER_JITTER: Jitter = Jitter::Full;

/// The keys of a layer's `backoff` table.
pub const LAYER_BACKOFF_KEYS: [&str; 6] =
    ["jitter", "base", "multiplier", "cap", "growth", "factor"];

/// How a calling layer calls the next one: its hop without the next layer's server.
struct Call {
    client: ClientConfig,
    backoff: Backoff,
    backoff_keys: Vec<&'static str>,
    on_give_up: GiveUp,
    propagate_deadline: bool,
}

/// The checked `[[layers]]` of a chain: layer 1's server and faults (the model's own), and
/// the hops to the layers behind it.
pub fn layers(
    file: &ScenarioFile,
    dir: Option<&Path>,
) -> Result<(ServerConfig, Vec<Fault>, Chain)> {
    no_single_server_tables(file)?;
    let file_layers = file.layers.as_deref().unwrap_or_default();
    let n = file_layers.len();
    if n == 0 || n > MAX_LAYERS {
        return Err(Error::invalid(
            "layers",
            format!("{n} layers"),
            format!(
                "from 1 to {MAX_LAYERS} layers (`[[layers]]` tables); without a chain, leave `layers` out and describe the one server in [server]"
            ),
        ));
    }
    let defaults = backoff_defaults(&file.backoff)?;
    let mut names = Vec::with_capacity(n);
    let mut stations = Vec::with_capacity(n);
    let mut calls = Vec::with_capacity(n);
    for (i, layer) in file_layers.iter().enumerate() {
        let key = format!("layers[{i}]");
        names.push(layer_name(&key, i, layer, &names)?);
        let last = i + 1 == n;
        let server = layer_server(&key, i, last, layer, dir)?;
        stations.push((server, faults(&format!("{key}.faults"), &layer.faults)?));
        if last {
            last_layer_calls_nothing(&key, layer)?;
        } else {
            calls.push(call(&key, layer, defaults)?);
        }
    }
    // Layer 1's server and faults are the model's own; each hop adds the next layer.
    let mut stations = stations.into_iter();
    let Some((first, first_faults)) = stations.next() else {
        return Err(Error::invalid("layers", "[]", "one layer or more"));
    };
    let hops = calls
        .into_iter()
        .zip(stations)
        .map(|(call, (server, faults))| Hop {
            client: call.client,
            backoff: call.backoff,
            backoff_keys: call.backoff_keys,
            on_give_up: call.on_give_up,
            propagate_deadline: call.propagate_deadline,
            server,
            faults,
        })
        .collect();
    Ok((first, first_faults, Chain { names, hops }))
}

/// With `[[layers]]`, each layer has its own server and faults: no top-level ones.
fn no_single_server_tables(file: &ScenarioFile) -> Result<()> {
    if file.server != ServerFile::default() {
        return Err(Error::invalid(
            "server",
            "a table",
            "no [server] table with [[layers]]: each layer has its own `server`",
        ));
    }
    if !file.faults.is_empty() {
        return Err(Error::invalid(
            "faults",
            "a list",
            "no top-level [[faults]] with [[layers]]: each layer has its own [[layers.faults]]",
        ));
    }
    Ok(())
}

/// Layer `i`'s name (`layer{i + 1}` by default), used by no layer before it (`taken`).
fn layer_name(key: &str, i: usize, layer: &LayerFile, taken: &[String]) -> Result<String> {
    let name = layer
        .name
        .clone()
        .unwrap_or_else(|| format!("layer{}", i + 1));
    if name.is_empty() || name.contains([',', '"', '\n']) || taken.contains(&name) {
        return Err(Error::invalid(
            format!("{key}.name"),
            format!("{name:?}"),
            "a non-empty name, used by no other layer, without commas, quotes or line breaks",
        ));
    }
    Ok(name)
}

/// Layer `i`'s server: a queue server, with counted workers where it calls or is called.
fn layer_server(
    key: &str,
    i: usize,
    last: bool,
    layer: &LayerFile,
    dir: Option<&Path>,
) -> Result<ServerConfig> {
    let k = |s: &str| format!("{key}.{s}");
    let server = server(&k("server"), &layer.server, dir)?;
    let ServerConfig::Queue(queue) = &server else {
        return Err(Error::invalid(
            k("server.kind"),
            "\"occ\"",
            "\"queue\": the layers of a chain are queue servers",
        ));
    };
    // A calling layer's workers are the caller slots of the next layer, and the workers of
    // layer 2 and below are named in 24 bits of an event: a count, never "unlimited" (the
    // largest count, 10000000, fits).
    const _: () = assert!(MAX_WORKERS <= MAX_CALLING_WORKERS as i64);
    if (!last || i > 0) && queue.workers > MAX_CALLING_WORKERS {
        return Err(Error::invalid(
            k("server.workers"),
            "\"unlimited\"",
            format!(
                "an integer from 1 to {MAX_WORKERS} in a chain, not \"unlimited\" (but for a lone layer: a calling layer's workers are the callers of the next, and the workers of layer 2 and below are counted); {MAX_WORKERS} is as good as unlimited"
            ),
        ));
    }
    Ok(server)
}

/// The last layer does the work: none of the keys of a calling layer.
fn last_layer_calls_nothing(key: &str, layer: &LayerFile) -> Result<()> {
    for (given, what) in [
        (layer.client.is_some(), "client"),
        (layer.backoff.is_some(), "backoff"),
        (layer.on_give_up.is_some(), "on_give_up"),
        (layer.propagate_deadline.is_some(), "propagate_deadline"),
    ] {
        if given {
            return Err(Error::invalid(
                format!("{key}.{what}"),
                "given",
                "nothing: the last layer does the work and calls no other",
            ));
        }
    }
    Ok(())
}

/// How a calling layer calls the next: its client (no hedging), backoff and give-up keys.
fn call(key: &str, layer: &LayerFile, defaults: BackoffParams) -> Result<Call> {
    let k = |s: &str| format!("{key}.{s}");
    let client = client(
        &k("client"),
        layer.client.as_ref().unwrap_or(&ClientFile::default()),
    )?;
    if client.hedging.is_some() {
        return Err(Error::invalid(
            k("client.hedging"),
            "given",
            "nothing: a layer of a chain does not hedge (hedging is for the edge clients, [client] or a strategy, without [[layers]])",
        ));
    }
    let (backoff, backoff_keys) = layer_backoff(key, layer, defaults)?;
    let on_give_up = match &layer.on_give_up {
        None => DEFAULT_ON_GIVE_UP,
        Some(text) => give_up(&k("on_give_up"), &toml::Value::String(text.clone()))?,
    };
    Ok(Call {
        client,
        backoff,
        backoff_keys,
        on_give_up,
        propagate_deadline: layer
            .propagate_deadline
            .unwrap_or(DEFAULT_PROPAGATE_DEADLINE),
    })
}

/// A calling layer's `backoff`, and which keys it set: the others follow `[backoff]` (also
/// when a sweep changes it), and the resolved file writes back only these.
fn layer_backoff(
    key: &str,
    layer: &LayerFile,
    defaults: BackoffParams,
) -> Result<(Backoff, Vec<&'static str>)> {
    let mut table = layer.backoff.clone().unwrap_or_default();
    if let Some(bad) = table
        .keys()
        .find(|k| !LAYER_BACKOFF_KEYS.contains(&k.as_str()))
    {
        return Err(Error::invalid(
            format!("{key}.backoff.{bad}"),
            "given",
            "one of the keys jitter, base, multiplier, cap, growth, factor",
        ));
    }
    let backoff_keys: Vec<&'static str> = LAYER_BACKOFF_KEYS
        .into_iter()
        .filter(|key| table.contains_key(*key))
        .collect();
    table
        .entry("jitter")
        .or_insert_with(|| toml::Value::String(DEFAULT_LAYER_JITTER.name().into()));
    // Every key present, inherited ones as `[backoff]` has them, so that a wrong value is
    // named under the layer whichever table it came from.
    let d = defaults;
    for (key, value) in [
        (
            "base",
            toml::Value::String(SimDuration::from(d.base).to_string()),
        ),
        ("multiplier", toml::Value::Float(d.multiplier)),
        (
            "cap",
            toml::Value::String(SimDuration::from(d.cap).to_string()),
        ),
        ("growth", toml::Value::Float(d.growth)),
        ("factor", toml::Value::Float(d.factor)),
    ] {
        table.entry(key).or_insert(value);
    }
    let backoff = strategy_table(&format!("{key}.backoff"), &table, defaults)?.backoff;
    Ok((backoff, backoff_keys))
}

/// `[[layers]]`: each layer's name, server and faults, and for a calling layer its policy.
pub fn layers_toml(m: &Model, chain: &Chain) -> Value {
    let mut out = Vec::with_capacity(chain.names.len());
    for (i, name) in chain.names.iter().enumerate() {
        let (server, faults) = match i {
            0 => (&m.server, &m.faults[..]),
            _ => (&chain.hops[i - 1].server, &chain.hops[i - 1].faults[..]),
        };
        let mut pairs = vec![
            ("name", s(name)),
            ("server", server_table(server)),
            ("faults", faults_list(faults)),
        ];
        if let Some(hop) = chain.hops.get(i) {
            let p = hop.backoff.params();
            pairs.extend([
                ("client", client_table(&hop.client)),
                (
                    "backoff",
                    table(
                        backoff_pairs(p)
                            .into_iter()
                            .filter(|(k, _)| *k == "jitter" || hop.backoff_keys.contains(k))
                            .collect(),
                    ),
                ),
                ("on_give_up", s(give_up_name(hop.on_give_up))),
                ("propagate_deadline", Value::Boolean(hop.propagate_deadline)),
            ]);
        }
        out.push(table(pairs));
    }
    Value::Array(out)
}

pub fn give_up_name(g: GiveUp) -> &'static str {
    match g {
        GiveUp::Pass => "pass",
        GiveUp::DoNotRetry => "do_not_retry",
    }
}
