//! Ctrl-C and `--resume` through the real binary: a sweep stopped by SIGINT exits 130 with its
//! finished units kept, and resuming it ends with the same bytes as a run never interrupted.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TempDir, repo};

const BIN: &str = env!("CARGO_BIN_EXE_jitterlab");

fn jitterlab(out: &std::path::Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(repo())
        .args([
            "run",
            "sims/brooker-2015-sweep.toml",
            "--no-plots",
            "--quiet",
            "--threads",
            "2",
        ])
        .args(["--out", out.to_str().expect("utf-8 temp path")])
        .args(extra)
        .stdout(Stdio::null());
    cmd
}

/// Lines of the journal of the run in progress (in the folder's staging folder until the
/// run is complete).
fn journal_lines(dir: &std::path::Path) -> usize {
    std::fs::read_to_string(dir.join(".jitterlab-partial/units.jsonl"))
        .map_or(0, |t| t.lines().count())
}

#[test]
fn sigint_then_resume_equals_an_uninterrupted_run() {
    let tmp = TempDir::new("sigint");
    let (whole, cut) = (tmp.join("whole"), tmp.join("cut"));
    let status = jitterlab(&whole, &[]).status().expect("run the binary");
    assert!(status.success());

    let child = jitterlab(&cut, &[])
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the binary");
    // Interrupt once some units are on disk, well before the 9500 are done.
    let started = Instant::now();
    while journal_lines(&cut) < 200 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let output = child.wait_with_output().expect("wait for the binary");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("--resume") && !stderr.contains("panicked"),
        "{stderr}"
    );
    let kept = journal_lines(&cut);
    assert!(kept > 1 && kept < 9501, "{kept} journal lines");
    assert!(
        !cut.join("summary.csv").exists(),
        "an interrupted run writes no results"
    );

    let status = jitterlab(&cut, &["--resume"])
        .status()
        .expect("run the binary");
    assert!(status.success());
    for file in [
        "summary.csv",
        "aggregate.csv",
        "compare.csv",
        "timeseries.csv",
        "attempts.csv",
        "latency.csv",
        "units.jsonl",
        "scenario.toml",
    ] {
        let a = std::fs::read(whole.join(file)).expect(file);
        let b = std::fs::read(cut.join(file)).expect(file);
        assert!(a == b, "{file} differs after resume");
    }
}

/// The issue's runaway: unlimited attempts at a 1 ns sleep in the middle layer of
/// `layered-retries`, run past the estimate with --force. Every unit runs for minutes; SIGINT
/// must end the process within a second (it went on for 12 s and more when only the sweep
/// looked at the cancel between units).
#[test]
fn sigint_stops_a_deep_layer_runaway_within_a_second() {
    let tmp = TempDir::new("runaway");
    let out = tmp.join("out");
    let child = Command::new(BIN)
        .current_dir(tmp.path())
        .args([
            "run",
            "layered-retries",
            "--force",
            "--quiet",
            "--no-plots",
            "--threads",
            "2",
            "--set",
            "layers[1].client.max_attempts=\"unlimited\"",
            "--set",
            "layers[1].backoff={jitter=\"constant\",base=\"1ns\",cap=\"1ns\"}",
        ])
        .args(["--out", out.to_str().expect("utf-8 temp path")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the binary");
    // The units are running once the journal has its header; then give them time to be deep
    // in their events.
    let started = Instant::now();
    while journal_lines(&out) < 1 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(500));
    let (took, output) = interrupt(child);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        took < Duration::from_secs(1),
        "exited {took:?} after SIGINT: {stderr}"
    );
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
}

/// Sends SIGINT to `child`, which must still be running, and waits for it: how long it took
/// from the signal, and what it said. A process that goes on is killed after 20 s.
fn interrupt(mut child: std::process::Child) -> (Duration, std::process::Output) {
    assert!(
        child.try_wait().unwrap().is_none(),
        "still running before the signal"
    );
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    let sent = Instant::now();
    assert!(kill.success());
    while child.try_wait().unwrap().is_none() && sent.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = sent.elapsed();
    if child.try_wait().unwrap().is_none() {
        let _ = child.kill();
    }
    (took, child.wait_with_output().expect("wait for the binary"))
}

/// A sweep of 100000 points takes seconds to check before anything runs (its warnings were
/// checked from a second expansion, without a look at Ctrl-C): SIGINT then exits 130 at once.
#[test]
fn sigint_stops_the_check_of_a_large_sweep_within_a_second() {
    let tmp = TempDir::new("large-sweep");
    let child = Command::new(BIN)
        .current_dir(tmp.path())
        .args([
            "run",
            "thundering-herd",
            "--quiet",
            "--no-plots",
            "--out",
            "out",
        ])
        .args([
            "--set",
            "sweep.\"workload.clients\"={from=1,to=100000,step=1}",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the binary");
    // Checking the points takes about two seconds here, in release builds.
    std::thread::sleep(Duration::from_millis(400));
    let (took, output) = interrupt(child);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        took < Duration::from_secs(1),
        "exited {took:?} after SIGINT: {stderr}"
    );
    assert!(!tmp.join("out").exists(), "nothing written");
}

/// Ctrl-C once the results are committed, while the charts are drawn (seconds for this
/// sweep): exit code 130, the message says the results are complete, and no chart of the
/// draw is written (the folder holds whole results and no chart at all).
#[test]
fn sigint_while_the_charts_are_drawn_exits_130_and_writes_no_chart() {
    let tmp = TempDir::new("sigint-charts");
    let out = tmp.join("r");
    let status = jitterlab(&out, &[]).status().expect("run the binary");
    assert!(status.success());
    // All units are done: --resume writes the results again, commits, and draws the charts.
    let child = Command::new(BIN)
        .current_dir(repo())
        .args(["run", "sims/brooker-2015-sweep.toml", "--resume", "--quiet"])
        .args(["--out", out.to_str().expect("utf-8 temp path")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the binary");
    // The draw records its charts in meta.json before it renders them.
    let started = Instant::now();
    let drawing =
        || std::fs::read_to_string(out.join("meta.json")).is_ok_and(|m| m.contains("herd.png"));
    while !drawing() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let (_, output) = interrupt(child);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("while drawing the charts") && stderr.contains("jitterlab plot"),
        "{stderr}"
    );
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with(".png") || n.ends_with(".svg") || n.contains(".tmp")),
        "{names:?}"
    );
    assert!(names.contains(&"summary.csv".to_string()), "{names:?}");
}
