//! The scenario library in sims/: every file checks and its resolved form is a fixed point,
//! and the built-in default shows the lesson it is there to teach.

use jitterlab::metric::Metric;
use jitterlab::scenario::ScenarioDoc;

use crate::common::{est, execute, half_width, plan, sims};

#[test]
fn every_sim_file_checks_and_its_resolved_form_reads_back_the_same() {
    for path in sims() {
        let name = path.display().to_string();
        let doc = ScenarioDoc::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let points = doc.points().unwrap_or_else(|e| panic!("{e}"));
        assert!(!points.is_empty(), "{name}");
        let base = doc.base().unwrap_or_else(|e| panic!("{e}"));
        assert!(!base.description.is_empty(), "{name} has a description");
        assert_eq!(
            base.name,
            path.file_stem().unwrap().to_string_lossy(),
            "{name}: name matches the file"
        );
        let resolved = base.to_toml(doc.sweep_table());
        let again = ScenarioDoc::parse(&resolved, "<resolved>", "other-fallback")
            .unwrap_or_else(|e| panic!("{name}: resolved form does not parse: {e}\n{resolved}"));
        let base_again = again.base().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(base_again.to_toml(again.sweep_table()), resolved, "{name}");
        // Every point, too: same count, same resolved scenario at each.
        let points_again = again.points().unwrap();
        assert_eq!(points.len(), points_again.len(), "{name}");
        for (p, q) in points.iter().zip(&points_again) {
            assert_eq!(p.values, q.values, "{name}");
            assert_eq!(
                p.scenario.to_toml(None),
                q.scenario.to_toml(None),
                "{name} point {}",
                p.index
            );
        }
    }
}

#[test]
fn builtin_is_the_thundering_herd_file() {
    let file = ScenarioDoc::load(&crate::common::repo().join("sims/thundering-herd.toml")).unwrap();
    let builtin = ScenarioDoc::builtin();
    assert_eq!(
        builtin.base().unwrap().to_toml(None),
        file.base().unwrap().to_toml(None)
    );
}

#[test]
fn thundering_herd_default_shows_the_herd_and_the_cure() {
    // The built-in default with its own replications (5).
    let doc = ScenarioDoc::builtin();
    let plan = plan(&doc);
    let records = execute(&plan);
    let get = |s: &str, m: Metric| {
        let e = est(&plan, &records, 0, s, m);
        eprintln!(
            "herd {s:>12} {m:<15} {:>10.1} ± {:.1}",
            e.mean,
            half_width(&e)
        );
        e.mean
    };
    // Clients outlast the outage: the run shows the herd at recovery, not give-ups.
    for s in ["no_jitter", "full", "equal", "decorrelated"] {
        assert!(get(s, Metric::SuccessRate) > 0.99, "{s}");
    }
    let (nj, full) = (
        get("no_jitter", Metric::PeakRetries),
        get("full", Metric::PeakRetries),
    );
    assert!(nj > full, "peak_retries: no_jitter {nj} > full {full}");
    let (nj, full) = (
        get("no_jitter", Metric::LatencyP99Ms),
        get("full", Metric::LatencyP99Ms),
    );
    assert!(full < nj, "p99: full {full} < no_jitter {nj}");
}
