//! `jitterlab live` through the real binary: a small scenario run for real on 127.0.0.1
//! agrees with its simulation, writes the live folder, and its observed samples feed the
//! model back (`dist = "empirical"`); what cannot run in real time is refused with exit code
//! 2; Ctrl-C stops it at once; and empirical distributions read their files as documented.
//!
//! Tolerance: the live run is one replication on a busy machine, its timers a millisecond
//! coarse and late by tens of milliseconds under load, so the live metrics are held within
//! 25 % of the simulated ones (the acceptance of sims/live-herd.toml asks for 10 % on an
//! idle machine): far wider than the clock's error, far narrower than the differences
//! between the strategies, which it must keep in order. `server_busy_share` is not held to it:
//! it counts the service timers' real length, which grows with their lateness on a loaded
//! machine (10 ms timers took 11 ms idle, up to 17 ms beside the other tests).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jitterlab::metric::Metric;
use jitterlab::output::results::{LiveVsSimRow, ResultFolder};

use crate::common::{TempDir, doc, jitterlab, stderr, stdout};

/// 200 clients into a 0.5 s outage, 5 workers of 10 ms, 100 waiting places: a few seconds.
const SMALL: &str = r#"
name = "live-small"
horizon = "20s"
replications = 3
[workload]
clients = 200
[server]
workers = 5
queue = 100
service = { dist = "constant", mean = "10ms" }
[client]
timeout = "1s"
max_attempts = 8
[backoff]
strategies = ["no_jitter", "full"]
base = "200ms"
cap = "1s"
[[faults]]
kind = "outage"
start = "0s"
end = "500ms"
[output]
bucket = "250ms"
"#;

fn value(rows: &[LiveVsSimRow], strategy: &str, metric: Metric) -> (f64, f64) {
    let r = rows
        .iter()
        .find(|r| r.strategy == strategy && r.metric == metric)
        .unwrap_or_else(|| panic!("{strategy} {metric} in live_vs_sim.csv"));
    (r.live.unwrap_or(f64::NAN), r.simulated.unwrap_or(f64::NAN))
}

#[test]
fn a_small_scenario_run_live_agrees_with_its_simulation() {
    let tmp = TempDir::new("live");
    std::fs::write(tmp.join("small.toml"), SMALL).unwrap();
    let started = Instant::now();
    let out = jitterlab(tmp.path(), &["live", "small.toml", "--out", "out"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let dir = tmp.join("out");
    // The run's table, then live against simulated; the timers on stderr.
    let text = stdout(&out);
    assert!(
        text.contains("simulated") && text.contains("peak_retries"),
        "{text}"
    );
    let err = stderr(&out);
    assert!(err.contains("timers: resolution"), "{err}");
    assert!(err.contains("replication 0 only (2 more"), "{err}");

    let folder = ResultFolder::read(&dir).unwrap();
    let rows = folder.live_vs_sim.expect("live_vs_sim.csv");
    let header = std::fs::read_to_string(dir.join("live_vs_sim.csv")).unwrap();
    assert!(header.starts_with("metric,strategy,live,simulated,relative_difference\n"));
    for strategy in ["no_jitter", "full"] {
        for metric in [
            Metric::Amplification,
            Metric::SuccessRate,
            Metric::MakespanMs,
            Metric::LatencyP50Ms,
            Metric::PeakRetries,
        ] {
            let (live, sim) = value(&rows, strategy, metric);
            assert!(
                (live - sim).abs() <= 0.25 * sim.abs(),
                "{strategy} {metric}: live {live}, simulated {sim}"
            );
        }
        // Every request ends live too, as it does in the simulation.
        assert_eq!(value(&rows, strategy, Metric::Requests), (200.0, 200.0));
        assert_eq!(value(&rows, strategy, Metric::Unfinished), (0.0, 0.0));
    }
    // The strategies keep their order: full jitter costs more attempts here.
    let amplification = |s| value(&rows, s, Metric::Amplification).0;
    assert!(
        amplification("full") > amplification("no_jitter"),
        "{rows:?}"
    );

    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["mode"], "live");
    assert_eq!(meta["replications_run"], 1);
    let timers = &meta["timers"];
    let resolution = timers["timer_resolution_ms"].as_f64().unwrap();
    assert!(resolution > 0.0 && resolution < 50.0, "{timers}");
    assert!(timers["sleeps"].as_u64().unwrap() > 200, "{timers}");
    assert!(timers["lag_p99_ms"].as_f64().unwrap() >= timers["lag_p50_ms"].as_f64().unwrap());
    for chart in ["live_vs_sim.png", "live_vs_sim.svg", "herd.png"] {
        assert!(dir.join(chart).is_file(), "{chart}");
    }
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(report.contains("Live against the simulation"));

    // The observed samples go back into the model.
    let service = std::fs::read_to_string(dir.join("observed_service_ms.txt")).unwrap();
    let samples: Vec<f64> = service
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(
        samples.len() >= 400,
        "every served attempt: {}",
        samples.len()
    );
    assert!(
        samples.iter().all(|&ms| (10.0..60.0).contains(&ms)),
        "{samples:?}"
    );
    let latency = std::fs::read_to_string(dir.join("observed_latency_ms.txt")).unwrap();
    assert!(latency.lines().filter(|l| !l.starts_with('#')).count() >= 200 * 2);
    let out = jitterlab(
        tmp.path(),
        &[
            "run",
            "small.toml",
            "--out",
            "again",
            "--quiet",
            "--no-plots",
            "--set",
            r#"server.service={dist="empirical",file="out/observed_service_ms.txt"}"#,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let resolved = std::fs::read_to_string(tmp.join("again/scenario.toml")).unwrap();
    assert!(resolved.contains("dist = \"empirical\""), "{resolved}");
}

#[test]
fn what_cannot_run_in_real_time_is_refused_with_exit_code_2() {
    let tmp = TempDir::new("live-refuse");
    std::fs::write(tmp.join("small.toml"), SMALL).unwrap();
    std::fs::write(
        tmp.join("occ.toml"),
        "[workload]\nclients = 10\n[server]\nkind = \"occ\"\n",
    )
    .unwrap();
    std::fs::write(
        tmp.join("open.toml"),
        "[workload]\nkind = \"poisson\"\nrate = 10000.0\nduration = \"10s\"\n",
    )
    .unwrap();
    let refused_file = |file: &str, sets: &[&str], key: &str| {
        let mut args = vec!["live", file, "--out", "out"];
        for s in sets {
            args.extend(["--set", s]);
        }
        let out = jitterlab(tmp.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{sets:?}: {err}");
        assert!(err.contains(&format!("`{key}`")), "{sets:?}: {err}");
        assert!(err.contains("jitterlab live"), "{sets:?}: {err}");
        assert!(!tmp.join("out").exists(), "nothing is written");
    };
    let refused = |sets: &[&str], key: &str| refused_file("small.toml", sets, key);
    refused(&["workload.clients=5000"], "workload.clients");
    refused(&["horizon=10m"], "horizon");
    refused_file("occ.toml", &[], "server.kind");
    refused_file("open.toml", &[], "workload.rate");
    refused(&[r#"sweep={"server.workers"=[5, 6]}"#], "sweep");
    refused(
        &[
            r#"client.budget={kind="token_bucket",scope="client"}"#,
            "client.concurrency=10",
        ],
        "client",
    );
    // What the executors cannot run: persistent Poisson sources, the adaptive throttle
    // (also when only one strategy's table sets it).
    refused(
        &[r#"workload={kind="poisson_clients",clients=10,rate=1.0,duration="1s"}"#],
        "workload.kind",
    );
    refused(&["client.throttle={}"], "client.throttle");
    refused(
        &[r#"backoff.strategies=["full", {name="t", jitter="full", throttle={}}]"#],
        "client.throttle",
    );
}

#[test]
fn ctrl_c_stops_a_live_run_at_once_and_writes_nothing() {
    let tmp = TempDir::new("live-sigint");
    std::fs::write(tmp.join("small.toml"), SMALL).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_jitterlab"))
        .current_dir(tmp.path())
        .args([
            "live",
            "small.toml",
            "--out",
            "out",
            "--set",
            "faults[0].end=15s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the binary");
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let output = child.wait_with_output().expect("wait for the binary");
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{err}");
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "{:?}",
        sent.elapsed()
    );
    assert!(!err.contains("panicked"), "{err}");
    // A live run cannot be resumed: it says so instead of suggesting --resume.
    assert!(
        err.contains("nothing was written") && !err.contains("--resume"),
        "{err}"
    );
    assert!(!tmp.join("out/summary.csv").exists());
}

#[test]
fn empirical_files_are_read_beside_the_scenario_and_bad_ones_refused() {
    let tmp = TempDir::new("empirical");
    std::fs::create_dir_all(tmp.join("sc")).unwrap();
    std::fs::write(tmp.join("sc/samples.txt"), "# ms\n5\n15\n").unwrap();
    let scenario = "[workload]\nclients = 10\n[server]\nservice = { dist = \"empirical\", file = \"samples.txt\" }\n";
    std::fs::write(tmp.join("sc/s.toml"), scenario).unwrap();
    // Relative to the scenario's folder, not to where jitterlab runs.
    let out = jitterlab(tmp.path(), &["check", "sc/s.toml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let resolved = stdout(&out);
    assert!(
        resolved.contains("samples.txt") && resolved.contains("empirical"),
        "{resolved}"
    );
    let refused = |text: &str, wanted: &str| {
        std::fs::write(tmp.join("sc/samples.txt"), text).unwrap();
        let out = jitterlab(tmp.path(), &["check", "sc/s.toml"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("`server.service.file`"), "{err}");
        assert!(err.contains(wanted), "{err}");
    };
    refused("", "it has none");
    refused("1\nfast\n", "line 2 is \"fast\", not a number");
    refused("1\n-2\n", "finite and not negative; line 2 is -2");
    std::fs::remove_file(tmp.join("sc/samples.txt")).unwrap();
    let out = jitterlab(tmp.path(), &["check", "sc/s.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a readable file of samples"),
        "{}",
        stderr(&out)
    );
    // mean and sd belong to the parametric kinds; file to empirical alone.
    let e = doc(
        "[server]\nservice = { dist = \"empirical\", file = \"x\", mean = \"1ms\" }\n",
        &[],
    )
    .base()
    .unwrap_err()
    .to_string();
    assert!(e.contains("server.service.mean"), "{e}");
    let e = doc(
        "[server]\nservice = { dist = \"constant\", mean = \"1ms\", file = \"x\" }\n",
        &[],
    )
    .base()
    .unwrap_err()
    .to_string();
    assert!(e.contains("server.service.file"), "{e}");
}
