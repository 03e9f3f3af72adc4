//! Which sweep keys are the user's choice and which describe the world.
//!
//! A sweep mixes two kinds of keys. Some are what a user of the results chooses: the backoff
//! (`backoff.*`, the strategies), the client's policy (`client.*`: attempts, deadline, budget,
//! breaker, throttle, limiter, Retry-After), and a calling layer's own policy
//! (`layers[i].client`, `.backoff`, `.on_give_up`, `.propagate_deadline`). The others describe
//! the world that choice must survive: the load (`workload.*`), the servers (`server.*`,
//! `layers[i].server`), what goes wrong (`faults`, `layers[i].faults`), the network, and how
//! the run is measured (`horizon`, `output`, `recovery`). Nobody chooses their load.
//!
//! `recommend`, the Pareto fronts and the charts compare choices only at one point of the
//! world keys at a time, never across them. [`default_role`] is the one table of roles; a
//! scenario overrides it for its own sweep keys with `[sweep] world = [...]` and
//! `choice = [...]` (see docs/scenario.md).

use crate::error::{Error, Result};

/// What a sweep key is to the person reading the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Chosen by the user: backoff, client policy, a layer's policy.
    Choice,
    /// Given by the world: load, servers, faults, network, measurement.
    World,
}

impl Role {
    /// `choice` or `world`, as the sweep table names the lists.
    pub fn name(self) -> &'static str {
        match self {
            Role::Choice => CHOICE,
            Role::World => WORLD,
        }
    }
}

/// The `[sweep]` key listing sweep keys that describe the world.
pub const WORLD: &str = "world";
/// The `[sweep]` key listing sweep keys that are the user's choice.
pub const CHOICE: &str = "choice";

/// The role of a dotted scenario key (`backoff.base`, `layers[1].client.max_attempts`,
/// `faults[0].share`) when the scenario does not say: the table of the module docs. A key of
/// no known table is the world's, so that nothing unknown is ever compared across.
pub fn default_role(key: &str) -> Role {
    let head = |k: &str| {
        k.split(['.', '['])
            .next()
            .unwrap_or_default()
            .trim_matches('"')
            .to_string()
    };
    match head(key).as_str() {
        "backoff" | "client" => Role::Choice,
        "layers" => {
            // `layers[i].<table>...`: a layer's own policy is chosen, its server and faults
            // are the world's.
            let rest = key.split_once("].").map_or("", |(_, rest)| rest);
            match head(rest).as_str() {
                "client" | "backoff" | "on_give_up" | "propagate_deadline" => Role::Choice,
                _ => Role::World,
            }
        }
        _ => Role::World,
    }
}

/// The roles of `keys` (the sweep keys, in order) given the sweep table's optional `world`
/// and `choice` lists: each listed key takes the list's role, the others their default. A
/// listed key that is not a sweep key, or a key in both lists, is an error naming the list.
pub fn roles(
    keys: &[String],
    world: Option<&toml::Value>,
    choice: Option<&toml::Value>,
) -> Result<Vec<Role>> {
    let mut roles: Vec<Role> = keys.iter().map(|k| default_role(k)).collect();
    let mut listed: Vec<(&str, Role)> = Vec::new();
    for (value, role) in [(world, Role::World), (choice, Role::Choice)] {
        let Some(value) = value else { continue };
        let name = format!("sweep.{}", role.name());
        let allowed = || {
            format!(
                "a list of sweep keys of this scenario ({})",
                if keys.is_empty() {
                    "it sweeps none".to_string()
                } else {
                    keys.join(", ")
                }
            )
        };
        let items = value
            .as_array()
            .ok_or_else(|| Error::invalid(&name, value, allowed()))?;
        for item in items {
            let key = item
                .as_str()
                .ok_or_else(|| Error::invalid(&name, item, allowed()))?;
            let Some(at) = keys.iter().position(|k| k == key) else {
                return Err(Error::invalid(&name, format!("{key:?}"), allowed()));
            };
            if let Some((_, other)) = listed.iter().find(|(k, r)| *k == key && *r != role) {
                return Err(Error::invalid(
                    &name,
                    format!("{key:?}"),
                    format!("a key not also listed in sweep.{}", other.name()),
                ));
            }
            listed.push((key, role));
            roles[at] = role;
        }
    }
    Ok(roles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_of_roles() {
        for key in [
            "backoff.base",
            "backoff.cap",
            "backoff.strategies",
            "client.max_attempts",
            "client.deadline",
            "client.budget.kind",
            "client.breaker",
            "client.throttle.k",
            "client.retry_after",
            "client.concurrency",
            "layers[1].client.max_attempts",
            "layers[0].backoff.base",
            "layers[1].on_give_up",
            "layers[2].propagate_deadline",
        ] {
            assert_eq!(default_role(key), Role::Choice, "{key}");
        }
        for key in [
            "workload.rate",
            "workload.spike.length",
            "workload.clients",
            "server.workers",
            "server.service.mean",
            "network.latency.mean",
            "faults[0].share",
            "faults",
            "layers[2].faults",
            "layers[0].server.workers",
            "horizon",
            "output.bucket",
            "recovery.window",
            "something.unknown",
        ] {
            assert_eq!(default_role(key), Role::World, "{key}");
        }
    }

    #[test]
    fn a_scenario_overrides_the_table_for_its_keys() {
        let keys = ["workload.clients".to_string(), "backoff.base".to_string()];
        let list = |v: &[&str]| toml::Value::Array(v.iter().map(|s| (*s).into()).collect());
        assert_eq!(
            roles(&keys, None, None).unwrap(),
            [Role::World, Role::Choice]
        );
        assert_eq!(
            roles(&keys, None, Some(&list(&["workload.clients"]))).unwrap(),
            [Role::Choice, Role::Choice]
        );
        assert_eq!(
            roles(&keys, Some(&list(&["backoff.base"])), None).unwrap(),
            [Role::World, Role::World]
        );
        let e = roles(&keys, Some(&list(&["backoff.cap"])), None).unwrap_err();
        assert!(
            e.to_string().contains("sweep.world")
                && e.to_string().contains("workload.clients, backoff.base"),
            "{e}"
        );
        let both = roles(
            &keys,
            Some(&list(&["backoff.base"])),
            Some(&list(&["backoff.base"])),
        );
        assert!(
            both.unwrap_err()
                .to_string()
                .contains("not also listed in sweep.world"),
            "a key in both lists"
        );
        let e = roles(&keys, Some(&toml::Value::Integer(3)), None).unwrap_err();
        assert!(e.to_string().contains("a list of sweep keys"), "{e}");
    }
}
