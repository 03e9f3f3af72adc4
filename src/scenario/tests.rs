//! Scenario checking: defaults, errors with keys and positions, overrides, sweeps, round trip.

use super::*;
use crate::sim::ServerConfig;
use crate::sim::workload::Workload;
use crate::time::SimDuration;

fn parse(text: &str) -> Result<ScenarioDoc> {
    ScenarioDoc::parse(text, "test.toml", "test")
}

fn error_of(text: &str) -> String {
    match parse(text).and_then(|d| d.base()) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_scenario_may_be_as_short_as_a_workload_table() -> Result<()> {
    let s = parse("[workload]\n")?.base()?;
    assert_eq!(s.name, "test");
    assert_eq!(s.replications, 10);
    assert_eq!(s.strategies.len(), 4);
    assert!(matches!(
        s.model.workload,
        Workload::Burst { clients: 1000, .. }
    ));
    assert!(
        matches!(s.model.server, ServerConfig::Queue(ref q) if q.workers == 100 && q.queue == Some(1000))
    );
    assert_eq!(s.model.client.timeout, Some(SimDuration::from_secs(1)));
    Ok(())
}

#[test]
fn errors_name_the_key_value_and_line() -> Result<()> {
    let e = error_of("[server]\nworkers = 0\n");
    assert!(
        e.contains("server.workers") && e.contains(":2:") && e.contains("from 1"),
        "{e}"
    );
    let e = error_of("[client]\ntimeout = \"-1s\"\n");
    assert!(e.contains("client.timeout") && e.contains(":2:"), "{e}");
    let e = error_of("[server]\nworkerz = 3\n");
    assert!(e.contains("workerz") && e.contains("line 2"), "{e}");
    let e = error_of("this is not toml");
    assert!(e.contains("line 1"), "{e}");
    let e = error_of(
        "[backoff]\nstrategies = [\"full\", { name = \"x\", jitter = \"equal\", cap = \"1ms\" }]\n",
    );
    assert!(e.contains("backoff.strategies[1].cap"), "{e}");
    let e = error_of("[[faults]]\nkind = \"outage\"\nstart = \"5s\"\nend = \"1s\"\n");
    assert!(e.contains("faults[0].end") && e.contains(":4:"), "{e}");
    let e = error_of("[workload]\nkind = \"burst\"\nrate = 5.0\n");
    assert!(e.contains("workload.rate"), "{e}");
    let e = error_of("[client]\nbudget = { kind = \"grpc\", capacity = 5 }\n");
    assert!(
        e.contains("client.budget.capacity") && e.contains("max_tokens, token_ratio"),
        "{e}"
    );
    Ok(())
}

#[test]
fn overrides_apply_and_are_checked() -> Result<()> {
    let mut doc = parse("[workload]\nclients = 10\n")?;
    doc.set("workload.clients=500")?;
    doc.set("backoff.cap=5s")?;
    doc.set("backoff.strategies=[\"full\"]")?;
    let s = doc.base()?;
    assert!(matches!(
        s.model.workload,
        Workload::Burst { clients: 500, .. }
    ));
    assert_eq!(s.strategies.len(), 1);
    assert_eq!(s.strategies[0].backoff.cap(), SimDuration::from_secs(5));
    assert!(doc.set("nonsense").is_err());
    assert!(doc.set("server.wrkers=3").is_err());
    let mut bad = parse("")?;
    bad.set("server.workers=0")?;
    assert!(
        bad.base()
            .unwrap_err()
            .to_string()
            .contains("server.workers")
    );
    Ok(())
}

#[test]
fn sweeps_expand_in_the_order_written() -> Result<()> {
    let doc = parse(
        "[sweep]\n\"backoff.base\" = [\"10ms\", \"50ms\"]\n\"workload.clients\" = { from = 100, to = 300, step = 100 }\n",
    )?;
    let points = doc.points()?;
    assert_eq!(points.len(), 6);
    assert_eq!(
        describe(&points[0].values),
        "backoff.base = 10ms, workload.clients = 100"
    );
    assert_eq!(
        describe(&points[5].values),
        "backoff.base = 50ms, workload.clients = 300"
    );
    assert!(matches!(
        points[4].scenario.model.workload,
        Workload::Burst { clients: 200, .. }
    ));
    let durations =
        parse("[sweep]\n\"backoff.cap\" = { from = \"1s\", to = \"2s\", step = \"500ms\" }\n")?;
    let caps: Vec<String> = durations
        .points()?
        .iter()
        .map(|p| format_value(&p.values[0].1))
        .collect();
    assert_eq!(caps, ["1s", "1500ms", "2s"]);
    let e = parse("[sweep]\n\"server.workers\" = [1, 0]\n")?
        .points()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("server.workers") && e.contains("sweep point 1"),
        "{e}"
    );
    Ok(())
}

#[test]
fn the_resolved_file_reads_back_to_the_same_scenario() -> Result<()> {
    for text in [
        BUILTIN,
        include_str!("../../sims/brooker-2015.toml"),
        "[workload]\nkind = \"poisson\"\n[client]\nbudget = { kind = \"ratio\" }\nbreaker = { scope = \"client\" }\n",
    ] {
        let s = parse(text)?.base()?;
        let resolved = s.to_toml(None);
        let again = parse(&resolved)?.base()?;
        assert_eq!(again.to_toml(None), resolved);
        assert_eq!(format!("{:?}", again.model), format!("{:?}", s.model));
    }
    Ok(())
}

#[test]
fn the_builtin_default_outlasts_its_outage() -> Result<()> {
    let s = ScenarioDoc::builtin().base()?;
    assert_eq!(s.name, "thundering-herd");
    let outage_end = s.model.faults[0].end.as_nanos();
    let deadline = s.model.client.deadline.map_or(u64::MAX, |d| d.as_nanos());
    assert!(deadline > outage_end);
    Ok(())
}
