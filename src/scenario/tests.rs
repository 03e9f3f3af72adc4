//! Scenario checking: defaults, errors with keys and positions, overrides, sweeps, round trip.

use super::*;
use crate::error::Error;
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
    assert!(
        e.starts_with("test.toml:2:1: `server.workerz`: unknown field"),
        "{e}"
    );
    let e = error_of("this is not toml");
    assert!(e.starts_with("test.toml:1:"), "{e}");
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
    let e = error_of("[client]\nbudget = { kind = \"concurrency\", percent = 150.0 }\n");
    assert!(
        e.contains("client.budget.percent") && e.contains("150") && e.contains("from 0 to 100"),
        "{e}"
    );
    let e = error_of("[client]\nbudget = { kind = \"concurrency\", min_concurrency = -1 }\n");
    assert!(
        e.contains("client.budget.min_concurrency") && e.contains("-1"),
        "{e}"
    );
    let e = error_of("[client]\nbudget = { kind = \"concurrency\", window = \"10s\" }\n");
    assert!(
        e.contains("client.budget.window") && e.contains("percent, min_concurrency"),
        "{e}"
    );
    Ok(())
}

/// For each `(text, sets, expected)`: reading `text`, applying `sets` and checking every
/// point fails with an error whose printed form starts with `expected`.
fn assert_errors(cases: &[(&str, &[&str], &str)]) {
    for (text, sets, expected) in cases {
        let checked = parse(text).and_then(|mut doc| {
            for s in *sets {
                doc.set(s)?;
            }
            doc.points()
        });
        match checked {
            Ok(_) => panic!("expected an error for {sets:?} and:\n{text}"),
            Err(e) => assert!(
                e.to_string().starts_with(expected),
                "{sets:?} and:\n{text}\nexpected: {expected}\ngot:      {e}"
            ),
        }
    }
}

#[test]
fn positions_are_structured() {
    let err = parse("[server]\nworkers = 0\n")
        .and_then(|d| d.base())
        .unwrap_err();
    let Error::Scenario {
        origin,
        position,
        message,
    } = err
    else {
        panic!("a scenario error");
    };
    assert_eq!(origin, "test.toml");
    assert_eq!(
        position,
        Some(crate::error::Position {
            line: 2,
            column: 11
        })
    );
    assert!(message.starts_with("invalid value for `server.workers`: 0"));
    // Parse errors carry theirs the same way.
    let err = parse("[server]\nservice = \"four\"\n").unwrap_err();
    assert!(
        matches!(err, Error::Scenario { position: Some(p), .. } if p.line == 2 && p.column == 11),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("test.toml:2:11: invalid value for `server.service`: \"four\": a table")
    );
}

#[test]
fn a_base_above_the_cap_names_the_cap_where_it_was_written() {
    const CAP: &str = "invalid value for `backoff.cap`: 10ms: a duration at least base (100ms)";
    let in_file = format!("test.toml:6:7: {CAP}");
    let after_list = format!("test.toml:4:7: {CAP}");
    let from_set = format!("--set backoff.cap=10ms: {CAP}");
    let from_sweep = format!("test.toml:5:24: {CAP} (at sweep point 1: backoff.cap = 10ms)");
    assert_errors(&[
        // In [backoff], with the default strategies and with a list written before the cap.
        (
            "[workload]\nclients = 10\n\n[backoff]\nbase = \"100ms\"\ncap = \"10ms\"\n",
            &[],
            &in_file,
        ),
        (
            "[backoff]\nstrategies = [\"full\", \"equal\"]\nbase = \"100ms\"\ncap = \"10ms\"\n",
            &[],
            &after_list,
        ),
        // In a strategy's own table: its key, at its value.
        (
            "[backoff]\nstrategies = [\n  \"full\",\n  { name = \"x\", jitter = \"equal\", cap = \"1ms\" },\n]\n",
            &[],
            "test.toml:4:41: invalid value for `backoff.strategies[1].cap`: 1ms: a duration at least base (50ms)",
        ),
        // From --set: the assignment, no file position; a list set whole holds its keys.
        (
            "[workload]\nclients = 10\n",
            &["backoff.base=100ms", "backoff.cap=10ms"],
            &from_set,
        ),
        (
            "",
            &["backoff.strategies=[{jitter=\"full\",cap=\"1ms\"}]"],
            "--set backoff.strategies=[{jitter=\"full\",cap=\"1ms\"}]: invalid value for `backoff.strategies[0].cap`: 1ms",
        ),
        // From a sweep: the value in the sweep list, and the point; a swept list holds its keys.
        (
            "[backoff]\nbase = \"100ms\"\n\n[sweep]\n\"backoff.cap\" = [\"1s\", \"10ms\"]\n",
            &[],
            &from_sweep,
        ),
        (
            "[sweep]\n\"backoff.strategies\" = [[\"full\"], [{ jitter = \"equal\", cap = \"1ms\" }]]\n",
            &[],
            "test.toml:2:35: invalid value for `backoff.strategies[0].cap`: 1ms",
        ),
    ]);
}

#[test]
fn engine_fields_become_the_keys_of_their_tables() {
    assert_errors(&[
        (
            "[client]\nmax_attempts = 3\nbudget = { kind = \"token_bucket\",\n  capacity = 10,\n  retry_cost = 20 }\n",
            &[],
            "test.toml:5:16: invalid value for `client.budget.retry_cost`: 20: an integer from 0 to the capacity (10)",
        ),
        (
            "[client.budget]\nkind = \"ratio\"\npercent = 5000.0\n",
            &[],
            "test.toml:3:11: invalid value for `client.budget.percent`: 5000: a number from 0 to 1000",
        ),
        (
            "[client.breaker]\nwindow = \"0ms\"\n",
            &[],
            "test.toml:2:10: invalid value for `client.breaker.window`: 0ms: a duration of at least 1ms",
        ),
        (
            "[server]\nworkers = 4\nservice = { dist = \"exponential\", mean = \"0ms\" }\n",
            &[],
            "test.toml:3:42: invalid value for `server.service.mean`: 0ms: a duration greater than 0 for `exponential`",
        ),
        // A missing key: where it belongs.
        (
            "[network.latency]\ndist = \"lognormal\"\nmean = \"1ms\"\n",
            &[],
            "test.toml:1:10: invalid value for `network.latency.sd`: missing: a duration: `lognormal` needs `sd`",
        ),
        (
            "",
            &["server.service={dist=\"gauss\",mean=\"1ms\"}"],
            "--set server.service={dist=\"gauss\",mean=\"1ms\"}: invalid value for `server.service.dist`: \"gauss\"",
        ),
        (
            "[client]\nretry_on = [503,\n 200]\n",
            &[],
            "test.toml:3:2: invalid value for `client.retry_on[1]`: 200",
        ),
    ]);
}

#[test]
fn sweep_errors_point_into_the_sweep() {
    assert_errors(&[
        (
            "[sweep]\n\"workload.clients\" = { from = 300, to = 100, step = 100 }\n",
            &[],
            "test.toml:2:41: invalid value for `sweep.\"workload.clients\".to`: 100: a value at least from (300)",
        ),
        (
            "[sweep]\n\"backoff.cap\" = { from = \"1s\", to = \"2s\", step = \"0ms\" }\n",
            &[],
            "test.toml:2:50: invalid value for `sweep.\"backoff.cap\".step`: 0ms: a step above 0",
        ),
        (
            "[server]\nworkers = 4\n[sweep]\n\"server.overload_status\" = [503, \"a\"]\n",
            &[],
            "test.toml:4:34: invalid value for `server.overload_status`: \"a\": a whole number (at sweep point 1",
        ),
        (
            "[sweep]\n\"backoff..cap\" = [\"1s\"]\n",
            &[],
            "test.toml:2:18: invalid value for `sweep.\"backoff..cap\"`",
        ),
    ]);
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
    assert_eq!(
        s.strategies[0].backoff.cap(),
        std::time::Duration::from_secs(5)
    );
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
        "[client]\nbudget = { kind = \"concurrency\", percent = 12.5, min_concurrency = 7 }\n",
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

#[test]
fn rate_profiles_spikes_and_unlimited_workers_are_checked_and_resolved() -> Result<()> {
    for (text, expected) in [
        (
            "[workload]\nkind = \"poisson\"\nrate = [[\"0s\", 40], [\"5s\"]]\n",
            "`workload.rate[1]`",
        ),
        (
            "[workload]\nkind = \"poisson\"\nrate = [[\"0s\", 40], [\"1s\", -2]]\n",
            "`workload.rate[1]`: -2",
        ),
        (
            "[workload]\nkind = \"poisson\"\nrate = [[\"2s\", 40], [\"1s\", 2]]\n",
            "a time at or after the previous point's",
        ),
        (
            "[workload]\nkind = \"poisson\"\nrate = \"fast\"\n",
            "or a profile such as",
        ),
        (
            "[workload]\nkind = \"poisson\"\nrate = [[\"0s\", 4]]\nspike = { at = \"1s\", length = \"1s\", rate = 9.0 }\n",
            "`workload.spike`: given: a spike on a number workload.rate only",
        ),
        (
            "[workload]\nkind = \"burst\"\nspike = { at = \"1s\", length = \"1s\", rate = 9.0 }\n",
            "`workload.spike`",
        ),
        ("[server]\nworkers = \"many\"\n", "or \"unlimited\""),
        (
            "[server]\nkind = \"occ\"\ncontention = \"1ms\"\n[workload]\nclients = 2\n",
            "`server.contention`",
        ),
        ("[recovery]\ntolerance = 1.0\n", "`recovery.tolerance`"),
    ] {
        let e = error_of(text);
        assert!(e.contains(expected), "{e}\nfor:\n{text}");
    }
    // Resolved and read back: the same scenario, spike and profile as written.
    for text in [
        "[workload]\nkind = \"poisson\"\nrate = 40\nspike = { at = \"20s\", length = \"5s\", rate = 80 }\nstart = \"2s\"\n[server]\nworkers = \"unlimited\"\ncontention = \"10ms\"\n",
        "[workload]\nkind = \"poisson\"\nrate = [[\"0s\", 40], [\"20s\", 80], [\"25s\", 40]]\n",
    ] {
        let s = parse(text)?.base()?;
        let resolved = s.to_toml(None);
        let again = parse(&resolved)?.base()?;
        assert_eq!(again.to_toml(None), resolved);
        assert_eq!(again.model.workload, s.model.workload);
        assert_eq!(again.model.server, s.model.server);
    }
    // The spike is the trigger (on the run's clock: start + at), unless there are faults.
    let spike = "[workload]\nkind = \"poisson\"\nrate = 40\nspike = { at = \"20s\", length = \"5s\", rate = 80 }\nstart = \"2s\"\n";
    let at = |s: u64| crate::time::SimTime(s * 1_000_000_000);
    assert_eq!(parse(spike)?.base()?.model.trigger, Some((at(22), at(27))));
    let with_fault =
        format!("{spike}[[faults]]\nkind = \"outage\"\nstart = \"5s\"\nend = \"6s\"\n");
    assert_eq!(
        parse(&with_fault)?.base()?.model.trigger,
        Some((at(5), at(6)))
    );
    Ok(())
}

#[test]
fn strategies_override_throttle_breaker_timeout_and_deadline() -> Result<()> {
    let s = parse(
        r#"
[client]
timeout = "3s"
deadline = "off"
breaker = {}
[backoff]
strategies = [
  "full",
  { name = "t", jitter = "full", throttle = { k = 1.5, window = "10s" }, breaker = "off" },
  { name = "b", jitter = "full", breaker = { min_requests = 5, scope = "client" } },
  { name = "d", jitter = "full", timeout = "off", deadline = "5s" },
]
"#,
    )?
    .base()?;
    let base = &s.model.client;
    let [plain, t, b, d] = [0, 1, 2, 3].map(|i| s.strategies[i].client_config(base));
    assert_eq!(
        format!("{plain:?}"),
        format!("{base:?}"),
        "no override keeps the point's client"
    );
    let (throttle, scope) = t.throttle.unwrap();
    assert_eq!(
        (throttle.k, throttle.window),
        (1.5, std::time::Duration::from_secs(10))
    );
    assert_eq!(scope, crate::sim::Scope::Shared);
    assert!(t.breaker.is_none(), "\"off\" removes the point's breaker");
    assert_eq!(t.timeout, base.timeout);
    let (breaker, scope) = b.breaker.unwrap();
    assert_eq!(breaker.min_requests, 5);
    assert_eq!(breaker.failure_ratio, 0.5, "defaulted as in client.breaker");
    assert_eq!(scope, crate::sim::Scope::Client);
    assert!(b.throttle.is_none());
    assert_eq!(d.timeout, None);
    assert_eq!(d.deadline, Some(SimDuration::from_secs(5)));
    assert_eq!(d.breaker, base.breaker);
    // The resolved file writes the overrides and reads back to the same strategies.
    let resolved = s.to_toml(None);
    let again = parse(&resolved)?.base()?;
    assert_eq!(again.to_toml(None), resolved);
    for (a, z) in s.strategies.iter().zip(&again.strategies) {
        assert_eq!(a.client, z.client, "{}", a.name);
    }
    Ok(())
}

#[test]
fn strategy_override_errors_name_the_key_the_value_and_what_is_allowed() {
    let cases = [
        (
            r#"{ jitter = "full", throttle = "on" }"#,
            "`backoff.strategies[0].throttle`: \"on\": a throttle table like client.throttle, or \"off\"",
        ),
        (
            r#"{ jitter = "full", throttle = { k = 0.5 } }"#,
            "`backoff.strategies[0].throttle.k`",
        ),
        (
            r#"{ jitter = "full", breaker = { window = "soon" } }"#,
            "`backoff.strategies[0].breaker.window`",
        ),
        (
            r#"{ jitter = "full", breaker = { colour = 1 } }"#,
            "`backoff.strategies[0].breaker`",
        ),
        (
            r#"{ jitter = "full", timeout = 3 }"#,
            "`backoff.strategies[0].timeout`: 3: a duration in quotes such as \"3s\", or \"off\"",
        ),
        (
            r#"{ jitter = "full", deadline = "5 parsecs" }"#,
            "`backoff.strategies[0].deadline`",
        ),
        (r#"{ jitter = "full", server = {} }"#, "timeout, deadline"),
    ];
    for (strategy, wanted) in cases {
        let e = error_of(&format!("[backoff]\nstrategies = [{strategy}]\n"));
        assert!(e.contains(wanted), "{strategy}: {e}");
    }
}

#[test]
fn what_only_reading_uses_is_written_back_but_not_part_of_the_runs() -> Result<()> {
    let plain = "[workload]\nclients = 10\n[sweep]\n\"backoff.base\" = [\"10ms\", \"20ms\"]\n";
    let read = format!("{plain}world = [\"backoff.base\"]\n[recommend]\nmin_success = 0.95\n");
    let (plain, read) = (parse(plain)?, parse(&read)?);
    let (a, b) = (plain.base()?, read.base()?);
    assert_eq!(b.min_success, Some(0.95));
    assert_eq!(read.sweep()?.roles, [Role::World]);
    assert_eq!(plain.sweep()?.roles, [Role::Choice]);
    // The resolved file keeps them (and reads back the same) ...
    let resolved = b.to_toml(read.sweep_table());
    assert!(
        resolved.contains("[recommend]\nmin_success = 0.95"),
        "{resolved}"
    );
    assert!(
        resolved.contains("world = [\"backoff.base\"]"),
        "{resolved}"
    );
    let again = parse(&resolved)?;
    assert_eq!(again.base()?.to_toml(again.sweep_table()), resolved);
    // ... and what the journal hashes is the scenario without them, byte for byte.
    assert_eq!(
        b.to_toml_for_runs(read.sweep_table()),
        a.to_toml(plain.sweep_table())
    );
    assert_eq!(
        a.to_toml_for_runs(plain.sweep_table()),
        a.to_toml(plain.sweep_table())
    );
    Ok(())
}

#[test]
fn the_aws_adaptive_preset_brings_its_rate_limiter_and_writes_it_back() -> Result<()> {
    let s = parse(
        r#"
[backoff]
strategies = [
  { preset = "aws-standard" },
  { preset = "aws-adaptive" },
  { preset = "aws-adaptive", name = "slow", adaptive_rate = { beta = 0.5, scope = "client" } },
]
"#,
    )?
    .base()?;
    let base = &s.model.client;
    let [standard, adaptive, slow] = [0, 1, 2].map(|i| s.strategies[i].client_config(base));
    assert!(
        standard.adaptive_rate.is_none(),
        "only aws-adaptive has one"
    );
    let botocore = crate::policy::AdaptiveRateConfig::default();
    assert_eq!(
        adaptive.adaptive_rate,
        Some((botocore, crate::sim::Scope::Shared))
    );
    // A table beside the preset changes only the keys it names.
    let (config, scope) = slow.adaptive_rate.unwrap();
    assert_eq!((config.beta, config.scale), (0.5, 0.4));
    assert_eq!(scope, crate::sim::Scope::Client);
    let resolved = s.to_toml(None);
    assert!(resolved.contains("adaptive_rate"), "{resolved}");
    let again = parse(&resolved)?.base()?;
    assert_eq!(again.to_toml(None), resolved);
    for (a, z) in s.strategies.iter().zip(&again.strategies) {
        assert_eq!(a.client, z.client, "{}", a.name);
    }
    // Bad values name the key, the value and what is allowed.
    for (strategy, key) in [
        (
            r#"{ jitter = "full", adaptive_rate = { beta = 1.5 } }"#,
            "adaptive_rate.beta",
        ),
        (
            r#"{ jitter = "full", adaptive_rate = { bucket = "0s" } }"#,
            "adaptive_rate.bucket",
        ),
        (
            r#"{ jitter = "full", adaptive_rate = "on" }"#,
            "adaptive_rate",
        ),
        (
            r#"{ jitter = "full", adaptive_rate = { scope = "all" } }"#,
            "adaptive_rate.scope",
        ),
    ] {
        let e = parse(&format!("[backoff]\nstrategies = [{strategy}]\n"))
            .and_then(|s| s.base().map(|_| ()))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("`backoff.strategies[0].{key}`")), "{e}");
    }
    Ok(())
}

#[test]
fn every_preset_resolves_and_reads_back_the_same() -> Result<()> {
    let list: Vec<String> = crate::presets::NAMES
        .iter()
        .map(|n| format!("{{ preset = \"{n}\" }}"))
        .collect();
    let text = format!("[backoff]\nstrategies = [{}]\n", list.join(", "));
    let s = parse(&text)?.base()?;
    let resolved = s.to_toml(None);
    let again = parse(&resolved)?.base()?;
    assert_eq!(again.to_toml(None), resolved);
    for (a, z) in s.strategies.iter().zip(&again.strategies) {
        assert_eq!(a.backoff.params(), z.backoff.params(), "{}", a.name);
        assert_eq!(a.client, z.client, "{}", a.name);
    }
    // The keys only some presets need are written for them and read back.
    assert!(resolved.contains("jitter = \"additive\""), "{resolved}");
    assert!(resolved.contains("deposit = \"success\""), "{resolved}");
    Ok(())
}

#[test]
fn hedging_refusals_name_the_key_the_value_and_what_is_allowed() {
    // (scenario, what the message must hold), one per refusal of a hedging table.
    let h = "hedging = { delay = \"10ms\" }";
    let cases = [
        (format!("[client]\n{h}\nidempotent = false\n"), ["client.hedging", "idempotent = false"]),
        (
            format!("[client]\n{h}\n[network]\nlatency = {{ dist = \"constant\", mean = \"1ms\" }}\n"),
            ["client.hedging", "network.latency"],
        ),
        (format!("[client]\n{h}\nconcurrency = 4\n"), ["client.hedging", "client.concurrency"]),
        (format!("[client]\n{h}\nadaptive_rate = {{}}\n"), ["client.hedging", "adaptive_rate"]),
        (
            "[client]\nidempotent = false\n[backoff]\nstrategies = [{ name = \"h\", jitter = \"full\", hedging = { delay = \"p95\" } }]\n".into(),
            ["backoff.strategies[0].hedging", "idempotent"],
        ),
        ("[client]\nhedging = { delay = \"p0\" }\n".into(), ["client.hedging.delay", "\"p0\""]),
        ("[client]\nhedging = { delay = \"p100\" }\n".into(), ["client.hedging.delay", "below p100"]),
        ("[client]\nhedging = { delay = \"p1e1\" }\n".into(), ["client.hedging.delay", "\"p1e1\""]),
        ("[client]\nhedging = { delay = \"pinf\" }\n".into(), ["client.hedging.delay", "\"pinf\""]),
        ("[client]\nhedging = { delay = \"-1ms\" }\n".into(), ["client.hedging.delay", "-1ms"]),
        ("[client]\nhedging = { max_attempts = 2 }\n".into(), ["client.hedging.delay", "missing"]),
        (
            "[client]\nhedging = { delay = \"1ms\", max_attempts = 1 }\n".into(),
            ["client.hedging.max_attempts", "2"],
        ),
        (
            "[client]\nhedging = { delay = \"1ms\", max_attempts = 6 }\n".into(),
            ["client.hedging.max_attempts", "5"],
        ),
        (
            "[client]\nhedging = { delay = \"1ms\", non_fatal = [\"slow\"] }\n".into(),
            ["client.hedging.non_fatal", "slow"],
        ),
        (
            "[client]\nhedging = { delay = \"1ms\", cancel = \"sometimes\" }\n".into(),
            ["client.hedging.cancel", "\"never\""],
        ),
    ];
    for (text, wants) in cases {
        let e = error_of(&text);
        for want in wants {
            assert!(e.contains(want), "{want:?} not in: {e}\n{text}");
        }
    }
    let ok = "[client]\nhedging = { delay = \"p99.9\", max_attempts = 5 }\nidempotent = false\nidempotency_key = true\n";
    assert!(parse(ok).and_then(|d| d.base()).is_ok());
}

#[test]
fn recovery_trigger_is_checked_used_and_resolved() -> Result<()> {
    for (text, expected) in [
        (
            "[recovery]\ntrigger = [\"5s\"]\n",
            "test.toml:2:11: invalid value for `recovery.trigger`: [\"5s\"]: two times",
        ),
        (
            "[recovery]\ntrigger = [\"5s\", \"soon\"]\n",
            "`recovery.trigger[1]`",
        ),
        (
            "[recovery]\ntrigger = [\"5s\", \"5s\"]\n",
            "`recovery.trigger[1]`: \"5s\": a time after recovery.trigger[0] (5s)",
        ),
    ] {
        let e = error_of(text);
        assert!(e.contains(expected), "{e}\nfor:\n{text}");
    }
    let faults = "[[faults]]\nkind = \"outage\"\nstart = \"10s\"\nend = \"20s\"\n[[faults]]\nkind = \"outage\"\nstart = \"40s\"\nend = \"45s\"\n";
    let at = |s: u64| crate::time::SimTime(SimDuration::from_secs(s).as_nanos());
    // Without the key: the span of every fault window, and no key in the resolved file.
    let found = parse(faults)?.base()?;
    assert_eq!(found.model.trigger, Some((at(10), at(45))));
    assert!(!found.to_toml(None).contains("trigger"));
    // With it: the model's trigger (what the runs measure), written back and read again.
    let given = parse(&format!(
        "{faults}[recovery]\ntrigger = [\"40s\", \"45s\"]\n"
    ))?
    .base()?;
    assert_eq!(given.model.trigger, Some((at(40), at(45))));
    let resolved = given.to_toml(None);
    assert!(
        resolved.contains("trigger = [\"40s\", \"45s\"]"),
        "{resolved}"
    );
    let again = parse(&resolved)?.base()?;
    assert_eq!(again.model.trigger, given.model.trigger);
    assert_eq!(again.to_toml(None), resolved);
    // Given where nothing would be found: a workload without faults or spikes.
    let quiet = parse("[recovery]\ntrigger = [\"30s\", \"31s\"]\n")?.base()?;
    assert_eq!(quiet.model.trigger, Some((at(30), at(31))));
    assert_eq!(
        parse(&quiet.to_toml(None))?.base()?.model.trigger,
        quiet.model.trigger
    );
    Ok(())
}

#[test]
fn a_named_trigger_nothing_can_be_measured_from_is_a_warning() -> Result<()> {
    // A 60 s horizon; the window (10 s) and the bucket (10 ms) as by default.
    let warnings = |trigger: &str| -> Result<Vec<String>> {
        Ok(parse(&format!(
            "horizon = \"60s\"\n[recovery]\ntrigger = {trigger}\n"
        ))?
        .base()?
        .warnings())
    };
    assert_eq!(warnings("[\"30s\", \"31s\"]")?, Vec::<String>::new());
    // Exactly two whole windows after its end (one judged, the last not) still measure; a
    // nanosecond later does not.
    assert_eq!(warnings("[\"30s\", \"40s\"]")?, Vec::<String>::new());
    assert_eq!(
        warnings("[\"30s\", \"40000000001ns\"]")?,
        [
            "recovery.trigger [30s, 40000000001ns) leaves fewer than two whole recovery.windows (10s) between its end and the horizon (1m), one to judge and the last, which is not judged: no recovery is measured"
        ]
    );
    assert_eq!(
        warnings("[\"5ms\", \"4s\"]")?,
        [
            "recovery.trigger [5ms, 4s) starts in the first output.bucket (10ms), with nothing before it: no recovery is measured"
        ]
    );
    // A trigger found from faults past the horizon is the faults' warning alone.
    let late = "horizon = \"10s\"\n[[faults]]\nkind = \"outage\"\nstart = \"20s\"\nend = \"30s\"\n";
    let w = parse(late)?.base()?.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("faults[0] starts at 20s"), "{w:?}");
    Ok(())
}
