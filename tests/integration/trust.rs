//! Issue 30, "no work lost, no file clobbered, no run that cannot be stopped", one test per
//! class of the issue, each through the real binary as a user runs it: (1) names and strings
//! of any length or content print safely; (2) runaway work is refused before it starts (the
//! interrupt of a forced one is in `interrupt`); (3) no read blocks on a FIFO; (4) `--resume`
//! never discards a finished unit; (5) only files jitterlab wrote are replaced or deleted, and
//! results are replaced whole; (6) impossible records and degenerate inputs are refused, and
//! live mode fails loudly; (7) refusals name the key or flag, its position and the user's
//! path.
//!
//! A few cases need a private mount or network namespace (`unshare`, as root): a full disk,
//! the home folder, the loopback down. Where the machine allows none, they say so on stderr
//! and check the rest.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{assert_bad_input, entries};
use crate::common::{TempDir, jitterlab, stderr, stdout};

const BIN: &str = env!("CARGO_BIN_EXE_jitterlab");

/// Two strategies × two replications in a moment.
const SMALL: &str = r#"
name = "small"
horizon = "2s"
replications = 2
[workload]
clients = 30
[backoff]
strategies = ["full", "equal"]
"#;

fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// True when no line of `text` holds a control character or a bidirectional override.
fn terminal_safe(text: &str) -> bool {
    !text
        .lines()
        .flat_map(str::chars)
        .any(jitterlab::text::is_unsafe)
}

/// Runs jitterlab in `dir` and waits at most `limit`: a run that blocks is killed and fails
/// the test instead of hanging it.
fn within(limit: Duration, dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run jitterlab");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("jitterlab {args:?} still running after {limit:?}: it blocks");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success());
}

/// A folder `to` of what `plot` reads from the result folder `from` (the five CSV files and
/// `scenario.toml`), without its journal or `meta.json`: CSV files put together by hand.
pub(crate) fn bare_copy(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for name in jitterlab::output::results::REQUIRED
        .into_iter()
        .chain([jitterlab::output::results::SCENARIO])
    {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
}

/// `unshare` with `flags` can run commands here (root in a container, or user namespaces).
fn can_unshare(flags: &[&str]) -> bool {
    Command::new("unshare")
        .args(flags)
        .arg("true")
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn class1_names_and_strings_of_any_length_or_content_print_safely() {
    let tmp = TempDir::new("trust-names");
    // 65 536 characters and more made `run` exit 101 (a panic in the table) after writing.
    let long = format!("{}\u{1b}[2J\r\u{202e}", "a".repeat(70_000));
    let toml_name = long.replace('\u{1b}', "\\u001b").replace('\r', "\\r");
    write(
        tmp.path(),
        "long.toml",
        &format!(
            "name = \"long\"\nhorizon = \"1s\"\nreplications = 1\n[workload]\nclients = 5\n[backoff]\nstrategies = [{{ name = \"{toml_name}\", jitter = \"full\" }}, \"equal\"]\n"
        ),
    );
    let o = jitterlab(
        tmp.path(),
        &["run", "long.toml", "--out", "out", "--no-plots"],
    );
    ok(&o);
    for text in [stdout(&o), stderr(&o)] {
        assert!(terminal_safe(&text), "{text:?}");
        assert!(text.lines().all(|l| l.chars().count() < 400), "{text}");
    }
    assert!(stdout(&o).contains(" characters)"), "{}", stdout(&o));
    // The name is data in the CSV files, whole.
    let summary = std::fs::read_to_string(tmp.join("out/summary.csv")).unwrap();
    assert!(summary.contains(&"a".repeat(70_000)));
    // Values echoed by refusals: a 300-digit number and raw control characters.
    let digits = "9".repeat(300);
    for set in [
        format!("workload.clients={digits}"),
        "server.kind=\u{1b}[2Jocc\u{7}".to_string(),
    ] {
        let o = jitterlab(tmp.path(), &["check", "long.toml", "--set", &set]);
        assert_bad_input(&o, &[]);
        let err = stderr(&o);
        assert!(terminal_safe(&err), "{err:?}");
        assert!(!err.contains(&"9".repeat(200)), "{err}");
    }
    let o = jitterlab(tmp.path(), &["run", "x\u{1b}]0;title\u{7}y"]);
    assert_bad_input(&o, &["x\\u{1b}]0;title\\u{7}y"]);
}

#[test]
fn class2_runaway_layers_and_sweeps_are_refused_before_they_start() {
    let tmp = TempDir::new("trust-work");
    // Retries between layers multiply: unlimited attempts at a 1 ns sleep in layer 2 ran for
    // minutes; the estimate now counts every layer and names the last.
    let o = within(
        Duration::from_secs(30),
        tmp.path(),
        &[
            "run",
            "layered-retries",
            "--quiet",
            "--out",
            "out",
            "--set",
            "layers[1].client.max_attempts=\"unlimited\"",
            "--set",
            "layers[1].backoff={jitter=\"constant\",base=\"1ns\",cap=\"1ns\"}",
        ],
    );
    assert_bad_input(
        &o,
        &[
            "error: too much work",
            "at the last layer `db` (retries at every layer multiply)",
        ],
    );
    // 78 attempts at each of three layers: a valid scenario, but 474 552 attempts at the last
    // one per request.
    let sets = [
        "--set",
        "client.max_attempts=78",
        "--set",
        "layers[0].client.max_attempts=78",
        "--set",
        "layers[1].client.max_attempts=78",
    ];
    ok(&jitterlab(
        tmp.path(),
        &[&["check", "layered-retries"][..], &sets].concat(),
    ));
    let run = ["run", "layered-retries", "--quiet", "--out", "out"];
    let o = jitterlab(tmp.path(), &[&run[..], &sets].concat());
    assert_bad_input(&o, &["474552 at the last layer"]);
    // A sweep as a whole: 100 000 points of workload.clients 1..100 000, 40 replications
    // (1.2e13 events; the limit is 1e13).
    write(tmp.path(), "small.toml", SMALL);
    let o = within(
        Duration::from_secs(60),
        tmp.path(),
        &[
            "run",
            "small.toml",
            "--out",
            "out",
            "--set",
            "sweep={\"workload.clients\"={from=1,to=100000,step=1}}",
            "--set",
            "output.bucket=\"2s\"",
            "--set",
            "replications=40",
        ],
    );
    assert_bad_input(
        &o,
        &[
            "too much work: the 8000000 runs of 100000 point(s) x strategies x 40 replication(s)",
            "allowed for one command",
            "10000000000000 allowed",
            "--shard I/N with N at least 2",
        ],
    );
    assert!(!tmp.join("out").exists(), "nothing written");
}

#[cfg(unix)]
#[test]
fn class3_fifos_and_devices_are_refused_never_read() {
    let tmp = TempDir::new("trust-fifo");
    let limit = Duration::from_secs(20);
    // A FIFO as the scenario.
    mkfifo(&tmp.join("f.toml"));
    let o = within(limit, tmp.path(), &["run", "f.toml", "--out", "o"]);
    assert_bad_input(
        &o,
        &["f.toml: cannot read: is a FIFO (named pipe), not a regular file"],
    );
    let o = within(limit, tmp.path(), &["check", "/dev/zero"]);
    assert_bad_input(&o, &["/dev/zero: cannot read: is a device"]);
    // Inside sims/: listed as invalid, the others as usual.
    std::fs::create_dir(tmp.join("sims")).unwrap();
    mkfifo(&tmp.join("sims/x.toml"));
    let o = within(limit, tmp.path(), &["list"]);
    ok(&o);
    assert!(stdout(&o).contains("(invalid: sims/x.toml: cannot read: is a FIFO"));
    assert!(stdout(&o).contains("thundering-herd"));
    // A result folder's journal and CSV files.
    write(tmp.path(), "small.toml", SMALL);
    ok(&jitterlab(
        tmp.path(),
        &["run", "small.toml", "--out", "r", "--quiet", "--no-plots"],
    ));
    std::fs::rename(tmp.join("r/summary.csv"), tmp.join("summary.csv")).unwrap();
    mkfifo(&tmp.join("r/summary.csv"));
    let o = within(limit, tmp.path(), &["plot", "r"]);
    assert_bad_input(&o, &["r/summary.csv: cannot read: is a FIFO"]);
    std::fs::remove_file(tmp.join("r/summary.csv")).unwrap();
    std::fs::rename(tmp.join("summary.csv"), tmp.join("r/summary.csv")).unwrap();
    std::fs::remove_file(tmp.join("r/units.jsonl")).unwrap();
    mkfifo(&tmp.join("r/units.jsonl"));
    for args in [
        &["run", "small.toml", "--out", "r", "--resume"][..],
        &["merge", "r", "--out", "m"][..],
    ] {
        let o = within(limit, tmp.path(), args);
        assert_bad_input(&o, &["units.jsonl"]);
        assert!(stderr(&o).contains("FIFO"), "{}", stderr(&o));
    }
    // A FIFO scenario.toml is bad input for every command that reads it (plot said 1).
    ok(&jitterlab(
        tmp.path(),
        &["run", "small.toml", "--out", "s", "--quiet", "--no-plots"],
    ));
    std::fs::remove_file(tmp.join("s/scenario.toml")).unwrap();
    mkfifo(&tmp.join("s/scenario.toml"));
    for args in [
        &["plot", "s"][..],
        &["recommend", "s"][..],
        &["merge", "s", "--out", "m"][..],
    ] {
        let o = within(limit, tmp.path(), args);
        assert_bad_input(&o, &["s/scenario.toml", "is a FIFO (named pipe)"]);
    }
}

#[test]
fn class4_resume_never_discards_a_finished_unit() {
    let tmp = TempDir::new("trust-resume");
    write(tmp.path(), "small.toml", SMALL);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "small.toml", "--out", "out", "--quiet", "--no-plots"];
        args.extend_from_slice(extra);
        jitterlab(tmp.path(), &args)
    };
    let units = || -> Vec<String> {
        std::fs::read_to_string(tmp.join("out/units.jsonl"))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap().to_string())
            .collect()
    };
    // The issue's case: shard 0/2, then shard 1/2 resumed into the same folder kept only
    // units 1 and 3. Now refused with the reason, and units 0 and 2 stay.
    ok(&run(&["--shard", "0/2"]));
    assert_eq!(units(), [r#"{"unit":0"#, r#"{"unit":2"#]);
    let o = run(&["--shard", "1/2", "--resume"]);
    assert_bad_input(
        &o,
        &[
            "its journal holds 2 finished units, unit 0 among them, which shard 1/2 does not hold",
            "resume with --shard 0/2",
        ],
    );
    assert_eq!(units(), [r#"{"unit":0"#, r#"{"unit":2"#]);
    // As the whole run, which holds them, it keeps them and runs the rest.
    let o = run(&["--resume"]);
    ok(&o);
    assert_eq!(
        units(),
        [
            r#"{"unit":0"#,
            r#"{"unit":1"#,
            r#"{"unit":2"#,
            r#"{"unit":3"#
        ]
    );
    let meta = std::fs::read_to_string(tmp.join("out/meta.json")).unwrap();
    assert!(meta.contains("\"units_run\": 2"), "{meta}");
    // Another scenario: refused, naming the line of scenario.toml that differs.
    let o = run(&["--resume", "--seed", "9"]);
    assert_bad_input(
        &o,
        &["its journal is of a different scenario or options (scenario.toml line"],
    );
    assert!(stderr(&o).contains("`seed = 9` now"), "{}", stderr(&o));
}

#[test]
fn class5_only_files_jitterlab_wrote_are_replaced_and_results_are_replaced_whole() {
    let tmp = TempDir::new("trust-files");
    write(tmp.path(), "small.toml", SMALL);
    // plot in a folder without a journal: chart-named files it does not draw stay.
    ok(&jitterlab(
        tmp.path(),
        &["run", "small.toml", "--out", "src", "--quiet", "--no-plots"],
    ));
    let bare = tmp.join("bare");
    bare_copy(&tmp.join("src"), &bare);
    write(&bare, "layers.svg", "mine");
    write(&bare, "herd_layer3.png", "mine");
    ok(&jitterlab(tmp.path(), &["plot", "bare"]));
    for f in ["layers.svg", "herd_layer3.png"] {
        assert_eq!(
            std::fs::read_to_string(bare.join(f)).unwrap(),
            "mine",
            "{f}"
        );
    }
    // delays --plot never replaces a file, nor a link (nor its target), without --force.
    write(tmp.path(), "mine.png", "mine");
    write(tmp.path(), "target.png", "target");
    std::os::unix::fs::symlink("target.png", tmp.join("link.png")).unwrap();
    for file in ["mine.png", "link.png"] {
        let o = jitterlab(tmp.path(), &["delays", "--samples", "5", "--plot", file]);
        assert_bad_input(&o, &[&format!("`--plot {file}`: exists")]);
    }
    assert_eq!(
        std::fs::read_to_string(tmp.join("mine.png")).unwrap(),
        "mine"
    );
    let o = jitterlab(
        tmp.path(),
        &["delays", "--samples", "5", "--plot", "link.png", "--force"],
    );
    ok(&o);
    assert!(
        !tmp.join("link.png")
            .symlink_metadata()
            .unwrap()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(tmp.join("target.png")).unwrap(),
        "target"
    );

    // A re-run interrupted: the old results stay whole until the new ones are complete.
    let sweep = [
        "run",
        "brooker-2015-sweep",
        "--out",
        "sw",
        "--quiet",
        "--no-plots",
    ];
    ok(&jitterlab(tmp.path(), &sweep));
    let old = |f: &str| std::fs::read(tmp.join("sw").join(f)).unwrap();
    let (summary, meta) = (old("summary.csv"), old("meta.json"));
    let child = Command::new(BIN)
        .current_dir(tmp.path())
        .args(sweep)
        .args(["--seed", "5", "--threads", "2"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let journal = tmp.join("sw/.jitterlab-partial/units.jsonl");
    let lines = || std::fs::read_to_string(&journal).map_or(0, |t| t.lines().count());
    let started = Instant::now();
    while lines() < 50 && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(130));
    assert_eq!(old("summary.csv"), summary, "the old summary.csv is whole");
    assert_eq!(old("meta.json"), meta);
    // A killed process's temporary file is removed by the next run; another's name is kept.
    let dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    let _ = dead.wait_with_output();
    write(
        &tmp.join("sw"),
        &format!(".summary.csv.tmp{pid}"),
        "left over",
    );
    write(&tmp.join("sw"), ".notes.txt.tmp1", "mine");
    ok(&jitterlab(
        tmp.path(),
        &[&sweep[..], &["--seed", "5", "--resume"]].concat(),
    ));
    assert_ne!(
        old("summary.csv"),
        summary,
        "the new results, once complete"
    );
    let names = entries(&tmp.join("sw"));
    assert!(
        !names
            .iter()
            .any(|n| n.contains(".tmp") && n.contains("summary")),
        "{names:?}"
    );
    assert!(names.contains(&".notes.txt.tmp1".to_string()), "{names:?}");
    assert!(
        !names.contains(&".jitterlab-partial".to_string()),
        "{names:?}"
    );
    // A link in place of a result file: the link is replaced, never what it points at.
    write(tmp.path(), "victim.csv", "precious");
    std::fs::remove_file(tmp.join("sw/summary.csv")).unwrap();
    std::os::unix::fs::symlink(tmp.join("victim.csv"), tmp.join("sw/summary.csv")).unwrap();
    ok(&jitterlab(tmp.path(), &sweep));
    assert_eq!(
        std::fs::read_to_string(tmp.join("victim.csv")).unwrap(),
        "precious"
    );
}

/// Runs `script` with `sh` in a private mount namespace (a tmpfs can be mounted there without
/// touching the machine); `None` when the machine allows none.
fn in_mount_namespace(script: &str) -> Option<Output> {
    if !can_unshare(&["-m"]) {
        eprintln!("note: no private mount namespace here (unshare -m); skipped: {script}");
        return None;
    }
    Some(
        Command::new("unshare")
            .args(["-m", "sh", "-c", script])
            .output()
            .expect("unshare"),
    )
}

#[test]
fn class5_a_full_disk_and_the_home_folder_leave_the_old_results_alone() {
    let tmp = TempDir::new("trust-disk");
    write(tmp.path(), "small.toml", SMALL);
    // A 96 KiB disk: the first run fits, the second (2000 clients, 60 s) does not. Its files
    // are all old afterwards (the seed in summary.csv and meta.json is the first run's, 1).
    let script = format!(
        "cd {dir} && mkdir -p full && mount -t tmpfs -o size=96k tmpfs full && \
         {BIN} run small.toml --out full/r --quiet --no-plots >/dev/null && \
         {BIN} run small.toml --out full/r --quiet --no-plots --seed 9 --set horizon='\"60s\"' --set workload.clients=2000 >/dev/null; \
         echo \"exit $?\"; sed -n 2p full/r/summary.csv | cut -d, -f4; grep '\"seed\"' full/r/meta.json; \
         ls -A full/r",
        dir = tmp.path().display()
    );
    if let Some(o) = in_mount_namespace(&script) {
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines.first().copied(),
            Some("exit 1"),
            "{out}\n{}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("No space left on device"),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            lines[1], "1",
            "summary.csv is the first run's (seed 1): {out}"
        );
        assert!(lines[2].contains("\"seed\": 1"), "meta.json too: {out}");
    }
    // HOME unset: the home folder of the password database is refused, even with --force (a
    // scratch tmpfs over it, in the private namespace).
    let home = std::fs::read_to_string("/etc/passwd").ok().and_then(|p| {
        let uid = std::fs::metadata("/proc/self").ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid()
        })?;
        p.lines()
            .map(|l| l.split(':').collect::<Vec<_>>())
            .find(|f| f.len() > 5 && f[2] == uid.to_string())
            .map(|f| f[5].to_string())
    });
    if let Some(home) = home.filter(|h| Path::new(h).is_dir()) {
        let script = format!(
            "mount -t tmpfs tmpfs {home} && echo mine > {home}/summary.csv && cd {dir} && \
             env -u HOME {BIN} run small.toml --out {home} --force --quiet --no-plots; \
             echo \"exit $?\"; cat {home}/summary.csv",
            dir = tmp.path().display()
        );
        if let Some(o) = in_mount_namespace(&script) {
            assert_eq!(stdout(&o), "exit 2\nmine\n", "{}", stderr(&o));
            assert!(stderr(&o).contains("is the root or the home folder"));
        }
    }
}

#[test]
fn class6_impossible_records_and_degenerate_inputs_are_refused() {
    let tmp = TempDir::new("trust-records");
    write(tmp.path(), "small.toml", SMALL);
    for shard in ["0/2", "1/2"] {
        let out = format!("s{}", &shard[..1]);
        ok(&jitterlab(
            tmp.path(),
            &[
                "run",
                "small.toml",
                "--out",
                &out,
                "--quiet",
                "--shard",
                shard,
            ],
        ));
    }
    // More successes than requests merged into a success_rate of 51.
    let journal = tmp.join("s0/units.jsonl");
    let good = std::fs::read_to_string(&journal).unwrap();
    let bad = good.replacen("\"counts\":[30,30,30,", "\"counts\":[30,30,1530,", 1);
    assert_ne!(bad, good);
    std::fs::write(&journal, bad).unwrap();
    let o = jitterlab(tmp.path(), &["merge", "s0", "s1", "--out", "m"]);
    assert_bad_input(
        &o,
        &[
            "s0/units.jsonl: line 2, column",
            "`counts` are not conserved",
        ],
    );
    // A renamed key (`layers` read as absent dropped rows from layers.csv).
    std::fs::write(
        &journal,
        good.replacen("\"by_attempt\"", "\"by_attempts\"", 1),
    )
    .unwrap();
    let o = jitterlab(tmp.path(), &["merge", "s0", "s1", "--out", "m"]);
    assert_bad_input(&o, &["line 2, column", "unknown field `by_attempts`"]);
    assert!(!tmp.join("m").exists());
    // A chain's record without its layers.
    ok(&jitterlab(
        tmp.path(),
        &[
            "run",
            "layered-retries",
            "--out",
            "l",
            "--quiet",
            "--no-plots",
            "--set",
            "replications=1",
            "--set",
            "horizon=\"5s\"",
            "--set",
            "workload.duration=\"1s\"",
        ],
    ));
    let journal = tmp.join("l/units.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let cut = lines[1].find(",\"layers\":").unwrap();
    lines[1] = format!("{}}}", &lines[1][..cut]);
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let o = jitterlab(tmp.path(), &["merge", "l", "--out", "lm"]);
    assert_bad_input(
        &o,
        &["`layers` holds 0 layers, but the scenario has 3 layers"],
    );
    // layers = [] quietly became a one-server scenario.
    write(tmp.path(), "none.toml", "name = \"none\"\nlayers = []\n");
    let o = jitterlab(tmp.path(), &["check", "none.toml"]);
    assert_bad_input(
        &o,
        &["none.toml:2:10: invalid value for `layers`: 0 layers: from 1 to 16 layers"],
    );
    // Requests begun all along, none served before the trigger nor after: stuck (and
    // degraded before), not recovered.
    write(
        tmp.path(),
        "zero.toml",
        "horizon = \"40s\"\nreplications = 1\n[workload]\nkind = \"poisson\"\nrate = 50.0\nduration = \"40s\"\n[[faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"40s\"\n[recovery]\ntrigger = [\"15s\", \"16s\"]\n[backoff]\nstrategies = [\"full\"]\n",
    );
    let cells = |folder: &str| -> Vec<String> {
        ok(&jitterlab(
            tmp.path(),
            &["run", "zero.toml", "--out", folder, "--quiet", "--no-plots"],
        ));
        let summary = std::fs::read_to_string(tmp.join(&format!("{folder}/summary.csv"))).unwrap();
        let (head, row) = (
            summary.lines().next().unwrap(),
            summary.lines().nth(1).unwrap(),
        );
        [
            "goodput_before",
            "goodput_after",
            "recovered",
            "degraded_before",
        ]
        .iter()
        .map(|name| {
            let i = head.split(',').position(|h| h == *name).unwrap();
            row.split(',').nth(i).unwrap().to_string()
        })
        .collect()
    };
    assert_eq!(cells("z"), ["0", "0", "0", "1"]);
    // A workload that stopped before the trigger: nothing to judge, nothing measured.
    write(
        tmp.path(),
        "zero.toml",
        "horizon = \"40s\"\nreplications = 1\n[workload]\nkind = \"poisson\"\nrate = 50.0\nduration = \"1s\"\n[[faults]]\nkind = \"outage\"\nstart = \"15s\"\nend = \"16s\"\n[backoff]\nstrategies = [\"full\"]\n",
    );
    assert_eq!(cells("z2"), ["", "", "", ""]);
}

#[test]
fn class6_live_fails_loudly_when_nothing_can_be_reached() {
    if !can_unshare(&["-rn"]) {
        eprintln!("note: no private network namespace here (unshare -rn); skipped");
        return;
    }
    let tmp = TempDir::new("trust-loopback");
    write(
        tmp.path(),
        "lo.toml",
        "horizon = \"3s\"\nreplications = 1\n[workload]\nclients = 5\n[server]\nservice = { dist = \"constant\", mean = \"1ms\" }\n[backoff]\nstrategies = [\"full\"]\n",
    );
    // A new network namespace has its loopback down.
    let o = Command::new("unshare")
        .args(["-rn", BIN, "live", "lo.toml", "--out", "out", "--no-plots"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot reach the live server") && stderr(&o).contains("loopback"),
        "{}",
        stderr(&o)
    );
    assert!(!tmp.join("out").exists(), "nothing written");
}

#[test]
fn class7_refusals_name_the_key_its_position_and_the_users_path() {
    let tmp = TempDir::new("trust-messages");
    write(tmp.path(), "small.toml", SMALL);
    // live's refusals are placed like the checker's.
    write(
        tmp.path(),
        "big.toml",
        "name = \"big\"\n[workload]\nkind = \"burst\"\nclients = 5000\n",
    );
    let o = jitterlab(tmp.path(), &["live", "big.toml", "--out", "o"]);
    assert_bad_input(
        &o,
        &["big.toml:4:11: invalid value for `workload.clients`: 5000"],
    );
    // The user's path, never a temporary name.
    let o = jitterlab(tmp.path(), &["init", "brooker-2015", "nodir/x.toml"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with("error: nodir/x.toml: its folder nodir does not exist"),
        "{err}"
    );
    assert!(!err.contains(".tmp"), "{err}");
    // A journal with a blank first line, and one of bare CRs, say what is wrong.
    ok(&jitterlab(
        tmp.path(),
        &["run", "small.toml", "--out", "r", "--quiet", "--no-plots"],
    ));
    let journal = std::fs::read_to_string(tmp.join("r/units.jsonl")).unwrap();
    for (text, says) in [
        (
            format!("\n{journal}"),
            "line 1 is not a jitterlab journal header: it is blank",
        ),
        (journal.replace('\n', "\r"), "carriage return alone"),
    ] {
        std::fs::write(tmp.join("r/units.jsonl"), text).unwrap();
        let o = jitterlab(tmp.path(), &["merge", "r", "--out", "m"]);
        assert_bad_input(&o, &[says]);
    }
    // A CRLF journal resumes.
    std::fs::write(tmp.join("r/units.jsonl"), journal.replace('\n', "\r\n")).unwrap();
    ok(&jitterlab(
        tmp.path(),
        &[
            "run",
            "small.toml",
            "--out",
            "r",
            "--quiet",
            "--no-plots",
            "--resume",
        ],
    ));
    // clap's "unexpected argument '-1'".
    let o = jitterlab(tmp.path(), &["run", "--seed", "-1"]);
    assert_bad_input(&o, &["'--seed <SEED>'", "a whole number from 0 to"]);
    let o = jitterlab(tmp.path(), &["run", "-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("hint: `-1` starts with `-`"),
        "{}",
        stderr(&o)
    );
    // "duplicate key" names the key.
    write(
        tmp.path(),
        "dup.toml",
        "[server]\nworkers = 1\nworkers = 2\n",
    );
    let o = jitterlab(tmp.path(), &["check", "dup.toml"]);
    assert_bad_input(&o, &["dup.toml:3:1: duplicate key `workers` in [server]"]);
    // The workers range of a chain is the one docs/scenario.md gives.
    let o = jitterlab(
        tmp.path(),
        &[
            "run",
            "layered-retries",
            "--quiet",
            "--set",
            "layers[0].server.workers=16777216",
        ],
    );
    assert_bad_input(
        &o,
        &["`layers[0].server.workers`: 16777216: an integer from 1 to 10000000"],
    );
    let docs = std::fs::read_to_string(crate::common::repo().join("docs/scenario.md")).unwrap();
    assert!(
        !docs.contains("16777216"),
        "docs/scenario.md gives another range"
    );
}
