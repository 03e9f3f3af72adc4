//! Property tests of the scenario reader (bad input is an error, never a panic):
//! arbitrary bytes, and TOML-shaped text built from the schema's keys with extreme and
//! ill-typed values, through parsing, `--set`, checking every sweep point and the warnings.
//! The engine's own properties (no endless loop, conservation, time order) are tested beside
//! it, in `src/sim/engine/props.rs`.

use jitterlab::scenario::ScenarioDoc;
use proptest::prelude::*;

/// Everything a document offers, each answer either a value or an error.
fn exercise(doc: &mut ScenarioDoc, sets: &[String]) {
    for s in sets {
        let _ = doc.set(s);
    }
    let _ = doc.sweep();
    let _ = doc.base();
    if let Ok(points) = doc.points() {
        assert!(!points.is_empty());
        for p in &points {
            let _ = p.scenario.warnings();
            let text = p.scenario.to_toml(None);
            // The resolved form of a checked point reads back.
            ScenarioDoc::parse(&text, "resolved", "x")
                .and_then(|d| d.base())
                .unwrap_or_else(|e| panic!("resolved text does not read back: {e}\n{text}"));
        }
    }
    let _ = doc.warnings();
}

const SECTIONS: &[&str] = &[
    "",
    "[workload]",
    "[server]",
    "[server.rate_limit]",
    "[network]",
    "[client]",
    "[client.breaker]",
    "[client.budget]",
    "[backoff]",
    "[[backoff.strategies]]",
    "[[faults]]",
    "[output]",
    "[sweep]",
    "[workload.kind]",
];

const KEYS: &[&str] = &[
    "name",
    "seed",
    "horizon",
    "replications",
    "kind",
    "clients",
    "start",
    "spread",
    "rate",
    "duration",
    "think",
    "workers",
    "queue",
    "service",
    "latency",
    "timeout",
    "deadline",
    "max_attempts",
    "retry_on",
    "concurrency",
    "jitter",
    "base",
    "cap",
    "multiplier",
    "growth",
    "factor",
    "strategies",
    "end",
    "status",
    "share",
    "bucket",
    "\"workload.clients\"",
    "\"backoff.base\"",
    "\"faults[0].end\"",
    "\"horizon\"",
    "dist",
    "mean",
    "sd",
    "bogus",
];

const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "255",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "\"18446744073709551615\"",
    "\"18446744073709551616\"",
    "0.0",
    "1e308",
    "-1e-308",
    "nan",
    "inf",
    "-inf",
    "true",
    "\"\"",
    "\"0s\"",
    "\"0ns\"",
    "\"1ns\"",
    "\"1ms\"",
    "\"60s\"",
    "\"-1s\"",
    "\"1.5ns\"",
    "\"18446744073709551615ns\"",
    "\"99999999999h\"",
    "\"1e3ms\"",
    "\"unlimited\"",
    "\"unbounded\"",
    "\"off\"",
    "\"full\"",
    "\"none\"",
    "\"burst\"",
    "\"poisson\"",
    "\"closed\"",
    "\"queue\"",
    "\"occ\"",
    "\"outage\"",
    "\"errors\"",
    "\"slow\"",
    "\"drop\"",
    "\"timeout\"",
    "[]",
    "[1]",
    "[\"full\", \"full\"]",
    "[\"none\", \"constant\", \"decorrelated_v2\", { name = \"x\", jitter = \"full\" }]",
    "[503, \"timeout\", 99999]",
    "[\"1ms\", \"0s\", \"1h\"]",
    "{}",
    "{ dist = \"exponential\", mean = \"0ns\" }",
    "{ dist = \"normal_abs\", mean = \"1ms\", sd = \"99999h\" }",
    "{ dist = \"lognormal\", mean = \"1ns\", sd = \"0ns\" }",
    "{ dist = \"weird\" }",
    "{ from = 1, to = 0, step = 1 }",
    "{ from = 0, to = 1e9, step = 1e-9 }",
    "{ from = 0, to = 10, step = 0 }",
    "{ from = \"a\", to = 1, step = 1 }",
    "[[1, 2], [3]]",
    "1979-05-27T07:32:00Z",
];

/// One `key = value` line, or a section header, or noise.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (prop::sample::select(KEYS), prop::sample::select(VALUES))
            .prop_map(|(k, v)| format!("{k} = {v}")),
        2 => prop::sample::select(SECTIONS).prop_map(str::to_string),
        1 => "[ -~]{0,24}",
    ]
}

/// A `--set KEY=VALUE` over the schema's paths.
fn assignment() -> impl Strategy<Value = String> {
    let paths = prop::sample::select(
        &[
            "seed",
            "horizon",
            "workload.clients",
            "workload.kind",
            "backoff.base",
            "backoff.cap",
            "backoff.strategies",
            "client.max_attempts",
            "faults[0].start",
            "faults[9].end",
            "sweep.horizon",
            "sweep",
            "server.workers.x",
            "",
            "a..b",
            "x[",
        ][..],
    );
    (paths, prop::sample::select(VALUES)).prop_map(|(k, v)| format!("{k}={v}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_are_an_error_or_a_scenario(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(mut doc) = ScenarioDoc::parse(&text, "fuzz.toml", "fuzz") {
            exercise(&mut doc, &[]);
        }
    }

    #[test]
    fn toml_shaped_text_is_an_error_or_a_scenario(
        lines in prop::collection::vec(line(), 0..24),
        sets in prop::collection::vec(assignment(), 0..3),
    ) {
        let text = lines.join("\n");
        if let Ok(mut doc) = ScenarioDoc::parse(&text, "fuzz.toml", "fuzz") {
            exercise(&mut doc, &sets);
        }
    }

    /// The built-in scenario under `--set` of every path with every value: never a panic.
    #[test]
    fn any_override_of_the_default_is_an_error_or_a_scenario(
        sets in prop::collection::vec(assignment(), 1..4),
    ) {
        let mut doc = ScenarioDoc::builtin();
        exercise(&mut doc, &sets);
    }
}
