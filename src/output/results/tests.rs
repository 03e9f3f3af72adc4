//! The result reader's tests: numbers, scenario facts, folders read and refused.

use super::*;
use crate::metric::PerMetric;

#[test]
fn numbers_and_durations() {
    assert_eq!(fmt_number(12345.0), "12 345");
    assert_eq!(fmt_number(1.5), "1.5");
    assert_eq!(fmt_number(0.1234), "0.123");
    assert_eq!(fmt_ms(0.5), "500 µs");
    assert_eq!(fmt_ms(12.5), "12.5 ms");
    assert_eq!(fmt_ms(2500.0), "2.5 s");
    assert_eq!(sweep_value_number("50ms"), Some(50.0));
    assert_eq!(sweep_value_number("\"2s\""), Some(2000.0));
    assert_eq!(sweep_value_number("100"), Some(100.0));
    assert_eq!(sweep_value_number("full"), None);
}

#[test]
fn scenario_capacity_and_faults() {
    let text = r#"
name = "herd"
[server]
kind = "queue"
workers = 100
service = { dist = "exponential", mean = "10ms" }
[[faults]]
kind = "outage"
start = "0s"
end = "5s"
[output]
bucket = "10ms"
"#;
    let s = ScenarioInfo::parse(Path::new("scenario.toml"), text).unwrap();
    assert_eq!(s.name, "herd");
    let p = &s.points[0];
    assert_eq!(p.capacity.as_ref().unwrap().per_bucket, 100.0);
    assert_eq!(p.capacity_rps.as_ref().unwrap().0, 10_000.0);
    assert_eq!(p.faults[0].end_ms, 5000.0);
    assert!(p.faults[0].effective && p.burst);
    assert_eq!(s.roles, []);
    assert_eq!(s.min_success, None);
    let bad = ScenarioInfo::parse(Path::new("scenario.toml"), "output = { bucket = 3 }");
    assert!(matches!(bad, Err(Error::ResultFolder { .. })));
}

/// A fresh folder under the temp dir (the output tests' scratch space).
pub(crate) fn temp(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jitterlab-rows-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn summary_row(strategy: &str) -> SummaryRow {
    SummaryRow {
        point: 0,
        strategy: strategy.into(),
        replication: 0,
        seed: 7,
        sweep: vec!["50ms".into()],
        metrics: PerMetric::from_fn(|m| m as usize as f64 / 3.0),
    }
}

fn aggregate_row(metric: Metric) -> AggregateRow {
    AggregateRow {
        point: 0,
        strategy: "full".into(),
        sweep: vec!["50ms".into()],
        metric,
        mean: Some(0.1 + 0.2),
        sd: None,
        ci95_low: Some(-1e-9),
        ci95_high: Some(1234.5),
        n: 1,
    }
}

/// Writes a folder of one point with the writer's own code.
fn write_folder(dir: &Path) -> (Vec<AggregateRow>, Vec<TimeseriesRow>, Vec<ParetoRow>) {
    use crate::output::csv::write_rows;
    let keys = ["backoff.base".to_string()];
    let sweep = vec!["50ms".to_string()];
    let aggregate: Vec<AggregateRow> = Metric::ALL.into_iter().map(aggregate_row).collect();
    let timeseries = vec![TimeseriesRow {
        point: 0,
        strategy: "full".into(),
        sweep: sweep.clone(),
        t_ms: 12.5,
        arrivals: 9,
        first_attempts: 4,
        retries: 5,
        successes: 3,
        rejections: 2,
        timeouts: 1,
        in_system: 6,
        retry_dispersion: Some(2.5),
    }];
    let pareto = vec![ParetoRow {
        point: 0,
        strategy: "full".into(),
        sweep: sweep.clone(),
        amplification: Some(1.5),
        latency_p99_ms: None,
        on_front: true,
        recommended: false,
        success_rate: Some(0.5),
        eligible: Some(false),
        chain_amplification: Some(4.5),
    }];
    write_rows(dir, &keys, &[summary_row("full"), summary_row("no_jitter")]).unwrap();
    write_rows(dir, &keys, &aggregate).unwrap();
    write_rows(dir, &keys, &timeseries).unwrap();
    write_rows::<AttemptsRow>(dir, &keys, &[]).unwrap();
    write_rows::<LatencyRow>(dir, &keys, &[]).unwrap();
    write_rows(dir, &keys, &pareto).unwrap();
    (aggregate, timeseries, pareto)
}

#[test]
fn names_are_shown_short_and_escaped_and_never_merged() {
    let dir = temp("display");
    write_folder(&dir);
    let mut folder = ResultFolder::read(&dir).unwrap();
    let long = |tail: &str| format!("{}{tail}", "x".repeat(100));
    // Two long names alike at both ends stay two strategies.
    folder.strategies = vec![long("\u{1b}a"), long("\u{1b}b"), "plain".into()];
    folder.summary[0].strategy = long("\u{1b}b");
    let shown = folder.for_display();
    assert_eq!(shown.strategies.len(), 3);
    assert_ne!(shown.strategies[0], shown.strategies[1]);
    assert_eq!(shown.strategies[2], "plain");
    assert_eq!(shown.summary[0].strategy, shown.strategies[1]);
    for s in &shown.strategies {
        assert!(
            s.chars().count() < 100 && !s.chars().any(crate::text::is_unsafe),
            "{s}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rows_written_are_read_back_the_same() {
    let dir = temp("round-trip");
    let (aggregate, timeseries, pareto) = write_folder(&dir);
    let folder = ResultFolder::read(&dir).unwrap();
    assert_eq!(folder.sweep_keys, ["backoff.base"]);
    assert_eq!(folder.strategies, ["full", "no_jitter"]);
    assert_eq!(
        folder.points,
        [Point {
            index: 0,
            values: vec!["50ms".into()]
        }]
    );
    assert_eq!(
        folder.summary,
        [summary_row("full"), summary_row("no_jitter")]
    );
    assert_eq!(folder.aggregate, aggregate);
    assert_eq!(folder.timeseries, timeseries);
    assert_eq!(folder.pareto.as_deref(), Some(&pareto[..]));
    assert!(folder.compare.is_none() && folder.scenario.is_none());
    assert_eq!(
        folder.aggregate_of(0, "full", Metric::LatencyP99Ms),
        Some(&aggregate_row(Metric::LatencyP99Ms))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn aggregate_lookups_agree_with_a_scan_before_and_after_the_rows_change() {
    let mut f = ResultFolder::empty("index");
    for point in 0..50 {
        for strategy in ["a", "b"] {
            for metric in [Metric::Requests, Metric::SuccessRate] {
                f.aggregate.push(AggregateRow {
                    point,
                    strategy: strategy.into(),
                    mean: Some(f64::from(point)),
                    ..aggregate_row(metric)
                });
            }
        }
    }
    let scan = |f: &ResultFolder, p: u32, s: &str, m: Metric| {
        f.aggregate
            .iter()
            .find(|r| r.point == p && r.strategy == s && r.metric == m)
            .cloned()
    };
    let keys = [
        (7, "a", Metric::Requests),
        (49, "b", Metric::SuccessRate),
        (3, "c", Metric::Requests),
        (50, "a", Metric::Requests),
        (1, "a", Metric::Attempts),
    ];
    for (p, s, m) in keys {
        assert_eq!(f.aggregate_of(p, s, m).cloned(), scan(&f, p, s, m));
    }
    // Rows removed or replaced after the index was built are never answered from it.
    f.aggregate.retain(|r| r.point != 7);
    f.aggregate[0].strategy = "c".into();
    f.aggregate[0].point = 3;
    for (p, s, m) in keys {
        assert_eq!(f.aggregate_of(p, s, m).cloned(), scan(&f, p, s, m));
    }
    assert!(f.aggregate_of(7, "a", Metric::Requests).is_none());
    assert!(f.aggregate_of(3, "c", Metric::Requests).is_some());
}

#[test]
fn a_bad_cell_names_its_line_and_column_and_an_unknown_metric_the_known_ones() {
    let dir = temp("bad-cells");
    write_folder(&dir);
    let error = |file: &str, from: &str, to: &str| {
        let path = dir.join(file);
        let good = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, good.replacen(from, to, 1)).unwrap();
        let message = match ResultFolder::read(&dir) {
            Err(Error::ResultFolder { path, message }) => {
                assert!(path.ends_with(file), "{}", path.display());
                message
            }
            other => panic!("expected a result folder error, got {other:?}"),
        };
        std::fs::write(&path, good).unwrap();
        message
    };
    let m = error("timeseries.csv", ",9,4,", ",9,four,");
    assert!(
        m.contains("line 2") && m.contains("`first_attempts`") && m.contains("\"four\""),
        "{m}"
    );
    let m = error("aggregate.csv", ",latency_p99_ms,", ",latency_p98_ms,");
    assert!(
        m.contains("\"latency_p98_ms\"") && m.contains("latency_p999_ms"),
        "{m}"
    );
    let m = error("summary.csv", ",events", ",evnts");
    assert!(m.contains("no column `events`"), "{m}");
    // Numbers the writer never writes: NaN and infinities.
    let m = error("aggregate.csv", ",1234.5,", ",inf,");
    assert!(
        m.contains("line 2, column 8 (`ci95_high`)") && m.contains("not a finite number"),
        "{m}"
    );
    let m = error("summary.csv", ",0.3333333333333333,", ",NaN,");
    assert!(m.contains("line 2, column") && m.contains("\"NaN\""), "{m}");
    let m = error("timeseries.csv", ",12.5,", ",-inf,");
    assert!(m.contains("(`t_ms`)") && m.contains("not a finite"), "{m}");
    let m = error("pareto.csv", ",true,", ",yes,");
    assert!(m.contains("`on_front`") && m.contains("\"yes\""), "{m}");
    std::fs::remove_dir_all(&dir).unwrap();
}
