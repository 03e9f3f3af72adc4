//! The resolved scenario: every key written out with its value, defaults included, in the
//! shape of docs/scenario.md. Each table writes its own keys ([`super::table`]); this module
//! puts them together. Reading the result back gives the same scenario.

use toml::{Table, Value};

use super::Scenario;
use super::table::{
    backoff, client, faults, layers, network, output, passage, recommend, recovery, root, server,
    workload,
};

impl Scenario {
    /// The resolved scenario as a TOML table, table by table in docs/scenario.md's order;
    /// `sweep` is appended as given.
    pub fn to_toml_table(&self, sweep: Option<&Value>) -> Table {
        let m = &self.model;
        let mut root: Table = root::write(self).into_iter().collect();
        let mut put = |key: &str, value: Value| root.insert(key.into(), value);
        put("workload", workload::write(&m.workload));
        match &m.chain {
            Some(chain) => put("layers", layers::layers_toml(m, chain)),
            None => put("server", server::server_table(&m.server)),
        };
        put("network", network::write(&m.latency));
        put("client", client::client_table(&m.client));
        put(
            "backoff",
            backoff::write(&self.backoff_defaults, &self.strategies),
        );
        if m.chain.is_none() {
            put("faults", faults::faults_list(&m.faults));
        }
        put("output", output::write(m.bucket));
        put("recovery", recovery::write(m));
        if let Some(table) = passage::write(&m.passage) {
            put("passage", table);
        }
        if let Some(table) = recommend::write(self.min_success) {
            put("recommend", table);
        }
        if let Some(sweep) = sweep {
            put("sweep", sweep.clone());
        }
        root
    }

    /// The resolved text of what the runs depend on: [`Scenario::to_toml`] without what only
    /// reading the results uses (`[recommend]`, and the sweep's `world` and `choice` lists).
    /// The journal's fingerprint hashes it, so declaring those never invalidates a journal
    /// (`--resume`, `merge`), and a scenario without them hashes as before they existed.
    pub fn to_toml_for_runs(&self, sweep: Option<&Value>) -> String {
        let mut sweep = sweep.cloned();
        if let Some(Value::Table(t)) = &mut sweep {
            t.remove(super::roles::WORLD);
            t.remove(super::roles::CHOICE);
        }
        let runs = Scenario {
            min_success: None,
            ..self.clone()
        };
        runs.to_toml(sweep.as_ref())
    }

    /// The resolved scenario as TOML text.
    pub fn to_toml(&self, sweep: Option<&Value>) -> String {
        toml::to_string(&self.to_toml_table(sweep))
            .unwrap_or_else(|e| format!("# could not write the scenario: {e}\n"))
    }
}
