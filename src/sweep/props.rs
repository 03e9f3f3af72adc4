//! Property tests of the engine: valid scenarios with extreme values (tiny and huge durations,
//! one or many clients, every jitter, faults, guards), run with small horizons. Whatever the
//! values, a run ends (within ten times its work estimate, or it is one the estimate would
//! refuse), never panics, processes its events in time order and conserves its requests.
//! They live beside the sweeps, not in the simulator: their inputs are scenario files, and
//! the refusal they check is the sweep's ([`Plan::check_work`]).

use proptest::prelude::*;

use super::{MAX_EVENTS_PER_RUN, Plan};
use crate::backoff::Jitter;
use crate::scenario::ScenarioDoc;
use crate::sim::work;
use crate::sim::{RunSpec, Sim};

/// Runs whose estimate is above this are left out: they are checked to be refused, not run.
const RUN_AT_MOST: f64 = 200_000.0;

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
    prop::sample::select(options)
}

/// A scenario text: every section drawn from values at and near the edges.
fn scenario() -> impl Strategy<Value = String> {
    (
        pick(&["1ns", "1us", "1ms", "50ms", "200ms"]),
        prop::sample::select(&[1u64, 10, 1000][..]),
        workload_section(),
        server_section(),
        network_section(),
        client_section(),
        backoff_section(),
        prop::collection::vec(fault_entry(), 0..3),
    )
        .prop_map(|(h, buckets, w, s, n, c, b, faults)| {
            // One bucket, ten or a thousand over the horizon.
            let bucket = (nanos(h) / buckets).max(1);
            format!(
                "horizon = \"{h}\"\nreplications = 1\n[output]\nbucket = \"{bucket}ns\"\n{w}{s}{n}{c}{b}{}",
                faults.concat()
            )
        })
}

/// The `[workload]` section: a burst, a Poisson stream or closed-loop clients.
fn workload_section() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            pick(&["1", "2", "50", "1000"]),
            pick(&["0ms", "1ns", "10ms"])
        )
            .prop_map(|(c, s)| {
                format!("[workload]\nkind = \"burst\"\nclients = {c}\nspread = \"{s}\"\n")
            }),
        (
            pick(&["0.001", "1.0", "1000.0", "100000.0"]),
            pick(&["1ns", "10ms", "1s"])
        )
            .prop_map(|(r, d)| format!(
                "[workload]\nkind = \"poisson\"\nrate = {r}\nduration = \"{d}\"\n"
            )),
        (pick(&["1", "20"]), pick(&["1ns", "1us", "1ms"])).prop_map(|(c, t)| {
            format!("[workload]\nkind = \"closed\"\nclients = {c}\nthink = \"{t}\"\n")
        }),
    ]
}

/// The `[server]` section: a queue (workers, queue length, service, Retry-After) or OCC.
fn server_section() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            pick(&["1", "4"]),
            pick(&["0", "1", "\"unbounded\""]),
            pick(&[
                "{ dist = \"constant\", mean = \"0ms\" }",
                "{ dist = \"constant\", mean = \"1ns\" }",
                "{ dist = \"exponential\", mean = \"1ms\" }",
                "{ dist = \"lognormal\", mean = \"1ms\", sd = \"10ms\" }",
            ]),
            pick(&["off", "drain", "1ns", "2s"]),
        )
            .prop_map(|(w, q, s, ra)| format!(
                "[server]\nkind = \"queue\"\nworkers = {w}\nqueue = {q}\nservice = {s}\nretry_after = \"{ra}\"\n"
            )),
        Just("[server]\nkind = \"occ\"\n".to_string()),
    ]
}

/// The `[network]` section: its latency distribution.
fn network_section() -> impl Strategy<Value = String> {
    pick(&[
        "{ dist = \"constant\", mean = \"0ms\" }",
        "{ dist = \"constant\", mean = \"1ns\" }",
        "{ dist = \"exponential\", mean = \"100us\" }",
        "{ dist = \"normal_abs\", mean = \"0ns\", sd = \"1ms\" }",
    ])
    .prop_map(|l| format!("[network]\nlatency = {l}\n"))
}

/// The `[client]` section: timeout, deadline, attempts and the guards (breaker, budget,
/// concurrency).
fn client_section() -> impl Strategy<Value = String> {
    (
        pick(&["off", "1ns", "1ms"]),
        pick(&["off", "1ns", "10ms"]),
        pick(&["1", "2", "1000", "\"unlimited\""]),
        pick(&[
            "",
            "concurrency = 1\n",
            "breaker = {}\n",
            "budget = { kind = \"token_bucket\" }\n",
            "breaker = { scope = \"client\" }\nbudget = { kind = \"grpc\", scope = \"client\" }\n",
            "budget = { kind = \"ratio\" }\nconcurrency = 2\n",
        ]),
    )
        .prop_map(|(t, d, m, g)| {
            format!("[client]\ntimeout = \"{t}\"\ndeadline = \"{d}\"\nmax_attempts = {m}\n{g}")
        })
}

/// The `[backoff]` section: some of the jitters, a base, a multiplier and a cap.
fn backoff_section() -> impl Strategy<Value = String> {
    (
        prop::sample::subsequence(Jitter::ALL.map(Jitter::name).to_vec(), 1..=8),
        pick(&["1ns", "1us", "1ms", "1s", "1000000h"]),
        pick(&["1.0", "2.0", "1000.0"]),
        pick(&["1ns", "10ms", "1000000h"]),
    )
        .prop_map(|(j, b, m, c)| {
            // The cap is at least the base (a smaller one is refused, and tested elsewhere).
            let c = nanos(c).max(nanos(b));
            format!(
                "[backoff]\nstrategies = {j:?}\nbase = \"{b}\"\nmultiplier = {m}\ncap = \"{c}ns\"\n"
            )
        })
}

/// One `[[faults]]` entry: a kind, starting and ending at or near the horizon's edges.
fn fault_entry() -> impl Strategy<Value = String> {
    (
        pick(&[
            "kind = \"outage\"",
            "kind = \"outage\"\nstatus = \"drop\"",
            "kind = \"outage\"\nstatus = \"reset\"",
            "kind = \"errors\"\nshare = 0.5",
            "kind = \"errors\"\nshare = 1.0\nstatus = 429",
            "kind = \"slow\"\nfactor = 1000000.0",
        ]),
        // Start and length in nanoseconds: at zero, inside, at and after the horizon.
        prop::sample::select(&[0u64, 1_000_000, 100_000_000, 3_600_000_000_000][..]),
        prop::sample::select(&[1u64, 50_000_000, 3_600_000_000_000][..]),
    )
        .prop_map(|(k, start, len)| {
            format!(
                "[[faults]]\n{k}\nstart = \"{start}ns\"\nend = \"{}ns\"\n",
                start + len
            )
        })
}

fn nanos(text: &str) -> u64 {
    crate::time::parse_duration("test", text)
        .unwrap()
        .as_nanos()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn extreme_scenarios_end_in_time_order_and_conserve_requests(
        text in scenario(),
        seed in any::<u64>(),
    ) {
        let Ok(doc) = ScenarioDoc::parse(&text, "props.toml", "props") else {
            return Ok(());
        };
        let Ok(scenario) = doc.base() else {
            return Ok(());
        };
        for strategy in &scenario.strategies {
            let estimate = work::estimate(&scenario.model, strategy);
            if estimate.events.is_nan() || estimate.events > RUN_AT_MOST {
                // Not run here; the larger ones are refused before a run.
                if estimate.events.is_nan() || estimate.events > MAX_EVENTS_PER_RUN {
                    let plan = Plan::new(doc.sweep().unwrap(), doc.points().unwrap()).unwrap();
                    prop_assert!(plan.check_work(1).is_err());
                }
                continue;
            }
            let bound = (10.0 * estimate.events) as u64 + 10_000;
            let mut sim = Sim::new(RunSpec {
                model: &scenario.model,
                strategy,
                seed,
                replication: 0,
                keep_series: true,
            });
            let mut last = crate::time::SimTime::ZERO;
            let mut events = 0u64;
            while let Some((t, event)) = sim.step() {
                prop_assert!(t >= last, "{event:?} at {t} after {last}\n{text}");
                prop_assert!(t.as_nanos() <= scenario.model.horizon.as_nanos());
                last = t;
                events += 1;
                prop_assert!(
                    events <= bound,
                    "more than {bound} events (estimate {}) with {}\n{text}",
                    estimate.events,
                    strategy.name
                );
            }
            let result = sim.finish(true);
            prop_assert_eq!(result.conservation(), Ok(()), "{}\n{}", strategy.name, text);
            prop_assert_eq!(result.events, events);
        }
    }
}

/// A chain of two or three services with retries at every calling layer (attempts from one to
/// unlimited, sleeps from none to a millisecond), the last layer failing or not.
fn chain() -> impl Strategy<Value = String> {
    let calling = (
        pick(&["1", "2", "5", "\"unlimited\""]),
        pick(&["none", "constant", "full", "no_jitter"]),
        pick(&["1ns", "1us", "1ms"]),
        pick(&["off", "1ms"]),
        any::<bool>(),
    )
        .prop_map(|(m, j, b, t, p)| {
            format!(
                "[[layers]]\nserver = {{ workers = 200, queue = 400 }}\nclient = {{ max_attempts = {m}, timeout = \"{t}\", retry_on = [503, \"timeout\"] }}\nbackoff = {{ jitter = \"{j}\", base = \"{b}\", cap = \"1ms\" }}\npropagate_deadline = {p}\n"
            )
        });
    (
        prop::collection::vec(calling, 1..=2),
        pick(&["", "[[layers.faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"1h\"\n"]),
        pick(&["1", "50", "200"]),
        pick(&["1", "2", "\"unlimited\""]),
        pick(&["100us", "2ms", "30ms"]),
    )
        .prop_map(|(layers, fault, clients, edge, h)| {
            format!(
                "horizon = \"{h}\"\nreplications = 1\n[output]\nbucket = \"100us\"\n[workload]\nkind = \"burst\"\nclients = {clients}\n[network]\nlatency = {{ dist = \"exponential\", mean = \"10us\" }}\n[client]\nmax_attempts = {edge}\n[backoff]\nstrategies = [\"full\"]\nbase = \"1us\"\ncap = \"1ms\"\n{}[[layers]]\nserver = {{ workers = 4, queue = 8, service = {{ dist = \"constant\", mean = \"1us\" }} }}\n{fault}",
                layers.concat()
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Retries multiply from layer to layer: the estimate counts every layer's attempts, so a
    /// chain's run stays within ten times it (a runaway one is refused before it starts).
    #[test]
    fn chains_stay_within_their_work_estimate(text in chain(), seed in any::<u64>()) {
        let doc = ScenarioDoc::parse(&text, "chain.toml", "chain").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let Ok(scenario) = doc.base() else {
            return Ok(());
        };
        let strategy = &scenario.strategies[0];
        let estimate = work::estimate(&scenario.model, strategy);
        if estimate.events.is_nan() || estimate.events > RUN_AT_MOST {
            if estimate.events.is_nan() || estimate.events > MAX_EVENTS_PER_RUN {
                let plan = Plan::new(doc.sweep().unwrap(), doc.points().unwrap()).unwrap();
                prop_assert!(plan.check_work(1).is_err());
            }
            return Ok(());
        }
        let bound = (10.0 * estimate.events) as u64 + 1_000;
        let mut sim = Sim::new(RunSpec {
            model: &scenario.model,
            strategy,
            seed,
            replication: 0,
            keep_series: false,
        });
        let mut events = 0u64;
        while sim.step().is_some() {
            events += 1;
            prop_assert!(
                events <= bound,
                "more than {bound} events (estimate {})\n{text}",
                estimate.events
            );
        }
        prop_assert_eq!(sim.finish(false).conservation(), Ok(()), "{}", text);
    }
}
