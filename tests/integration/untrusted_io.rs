//! Hostile and careless input around files (issue 9, items 2, 4, 5 and 7): files too large to
//! read, folders that are not jitterlab's, records and numbers edited by hand, paths of the
//! wrong kind. Each answers exit code 2 with a first line that says what is wrong, and no
//! user file is lost.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::cli::{assert_bad_input, entries};
use crate::common::{TempDir, jitterlab, stderr};

/// A scenario small enough to run in a moment: 2 strategies × 2 replications.
const TINY: &str = r#"
name = "tiny"
seed = 3
horizon = "2s"
replications = 2
[workload]
clients = 30
[backoff]
strategies = ["full", "no_jitter"]
"#;

/// The same with a two-key sweep, so that heatmap charts are drawn.
fn tiny_swept() -> String {
    format!(
        "{TINY}[sweep]\n\"backoff.base\" = [\"10ms\", \"20ms\"]\n\"client.max_attempts\" = [2, 3]\n"
    )
}

fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
}

/// The first line of stderr.
fn first_line(o: &Output) -> String {
    stderr(o).lines().next().unwrap_or("").to_string()
}

/// `tiny.toml` in `tmp`, run into `tmp/out` (no charts unless asked).
fn run_tiny(tmp: &TempDir, text: &str, extra: &[&str]) -> Output {
    std::fs::write(tmp.join("tiny.toml"), text).unwrap();
    let mut args = vec![
        "run",
        "tiny.toml",
        "--out",
        "out",
        "--quiet",
        "--threads",
        "2",
    ];
    args.extend_from_slice(extra);
    jitterlab(tmp.path(), &args)
}

#[test]
fn devices_and_oversized_files_are_refused_by_size_quickly() {
    let tmp = TempDir::new("too-large");
    for command in ["run", "check"] {
        let started = Instant::now();
        let o = jitterlab(
            tmp.path(),
            &[command, "/dev/zero", "--out", "o"][..if command == "run" { 4 } else { 2 }],
        );
        // Not a regular file: refused by its type before it is opened.
        assert_bad_input(
            &o,
            &["error: /dev/zero: cannot read: is a device, not a regular file"],
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{command} /dev/zero is quick"
        );
    }
    // A regular file says its size before any byte is read: a sparse file of 1 MiB + 1.
    let big = std::fs::File::create(tmp.join("big.toml")).unwrap();
    big.set_len((1 << 20) + 1).unwrap();
    let o = jitterlab(tmp.path(), &["check", "big.toml"]);
    assert_bad_input(
        &o,
        &["big.toml: larger than 1 MiB, the limit for a scenario file"],
    );

    // Result files: 1 GiB each, sparse files again.
    ok(&run_tiny(&tmp, TINY, &["--no-plots"]));
    let grow = |name: &str| {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(tmp.join("out").join(name))
            .unwrap();
        file.set_len((1 << 30) + 1).unwrap();
    };
    let journal = std::fs::read(tmp.join("out/units.jsonl")).unwrap();
    grow("units.jsonl");
    let o = jitterlab(tmp.path(), &["merge", "out", "--out", "merged"]);
    assert_bad_input(
        &o,
        &["units.jsonl: larger than 1 GiB, the limit for a journal (units.jsonl)"],
    );
    std::fs::write(tmp.join("out/units.jsonl"), journal).unwrap();
    grow("summary.csv");
    let o = jitterlab(tmp.path(), &["plot", "out"]);
    assert_bad_input(
        &o,
        &["summary.csv: larger than 1 GiB, the limit for a result CSV file"],
    );
}

#[test]
fn a_folder_that_is_not_a_result_folder_is_never_written_without_force() {
    let tmp = TempDir::new("foreign");
    std::fs::create_dir(tmp.join("out")).unwrap();
    std::fs::write(tmp.join("out/notes.txt"), "mine").unwrap();
    std::fs::write(tmp.join("out/summary.csv"), "my,own\n1,2\n").unwrap();
    let o = run_tiny(&tmp, TINY, &["--no-plots"]);
    assert_bad_input(
        &o,
        &[
            "invalid argument `--out out`: holds files and is not a jitterlab result folder",
            "notes.txt",
        ],
    );
    assert_eq!(entries(&tmp.join("out")), ["notes.txt", "summary.csv"]);
    assert_eq!(
        std::fs::read_to_string(tmp.join("out/summary.csv")).unwrap(),
        "my,own\n1,2\n"
    );
    // merge is guarded the same way.
    ok(&jitterlab(
        tmp.path(),
        &["run", "tiny.toml", "--out", "done", "--quiet", "--no-plots"],
    ));
    let o = jitterlab(tmp.path(), &["merge", "done", "--out", "out", "--no-plots"]);
    assert_bad_input(
        &o,
        &["`--out out`: holds files and is not a jitterlab result folder"],
    );
    assert_eq!(entries(&tmp.join("out")), ["notes.txt", "summary.csv"]);
    // --force writes beside other files, but never over a file jitterlab did not write,
    // even one of its names: the user's summary.csv is refused, then moved away.
    let o = run_tiny(&tmp, TINY, &["--no-plots", "--force"]);
    assert_bad_input(
        &o,
        &["holds summary.csv, a file of a name jitterlab writes that it did not write there"],
    );
    assert_eq!(
        std::fs::read_to_string(tmp.join("out/summary.csv")).unwrap(),
        "my,own\n1,2\n"
    );
    std::fs::rename(tmp.join("out/summary.csv"), tmp.join("mine.csv")).unwrap();
    ok(&run_tiny(&tmp, TINY, &["--no-plots", "--force"]));
    assert_eq!(
        std::fs::read_to_string(tmp.join("out/notes.txt")).unwrap(),
        "mine"
    );
    assert!(
        std::fs::read_to_string(tmp.join("out/summary.csv"))
            .unwrap()
            .starts_with("point,")
    );
    ok(&jitterlab(
        tmp.path(),
        &["merge", "done", "--out", "out", "--no-plots"],
    ));
    assert_eq!(
        std::fs::read_to_string(tmp.join("out/notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn the_root_the_home_folder_and_files_are_never_result_folders() {
    let tmp = TempDir::new("never");
    std::fs::write(tmp.join("tiny.toml"), TINY).unwrap();
    let o = jitterlab(tmp.path(), &["run", "tiny.toml", "--out", "/", "--quiet"]);
    assert_bad_input(
        &o,
        &["invalid argument `--out /`: is the root or the home folder"],
    );
    // The home folder, even with --force (a home of the test's own, so nothing is at risk).
    let home = tmp.join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join(".profile"), "x").unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_jitterlab"))
        .args(["run", "tiny.toml", "--quiet", "--force", "--out"])
        .arg(&home)
        .current_dir(tmp.path())
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_bad_input(&o, &["is the root or the home folder"]);
    assert_eq!(entries(&home), [".profile"]);
    // A regular file as --out, for run and merge: bad input, the file untouched.
    std::fs::write(tmp.join("file"), "keep").unwrap();
    let o = jitterlab(
        tmp.path(),
        &["run", "tiny.toml", "--out", "file", "--quiet"],
    );
    assert_bad_input(
        &o,
        &["invalid argument `--out file`: is a file, not a folder"],
    );
    let o = jitterlab(tmp.path(), &["merge", "tiny.toml", "--out", "file"]);
    assert_bad_input(&o, &["`--out file`: is a file, not a folder"]);
    assert_eq!(std::fs::read_to_string(tmp.join("file")).unwrap(), "keep");
    // A chart path that is a folder.
    let o = jitterlab(tmp.path(), &["delays", "--samples", "5", "--plot", "home"]);
    assert_bad_input(
        &o,
        &["invalid argument `home`: is a folder; name the chart file"],
    );
}

#[test]
fn a_new_run_leaves_no_stale_jitterlab_file_and_keeps_every_other() {
    let tmp = TempDir::new("stale");
    ok(&run_tiny(&tmp, &tiny_swept(), &[]));
    let out = tmp.join("out");
    assert!(
        out.join("heatmap_amplification.png").is_file(),
        "{:?}",
        entries(&out)
    );
    ok(&jitterlab(tmp.path(), &["recommend", "out", "--no-plots"]));
    assert!(out.join("pareto.csv").is_file());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("heatmap_mine.png"), "mine").unwrap();
    // Without a sweep: no heatmap, no pareto.csv of the old results; the user's files stay.
    ok(&run_tiny(&tmp, TINY, &["--no-plots"]));
    let names = entries(&out);
    for gone in [
        "pareto.csv",
        "heatmap_amplification.png",
        "herd.svg",
        "report.html",
    ] {
        assert!(
            !names.contains(&gone.to_string()),
            "{gone} stale: {names:?}"
        );
    }
    for kept in ["notes.txt", "heatmap_mine.png", "summary.csv", "meta.json"] {
        assert!(names.contains(&kept.to_string()), "{kept} lost: {names:?}");
    }
    // `plot` removes the charts of an earlier draw that it does not draw: a one-key sweep's
    // `sweep_amplification`, once the folder's CSVs are those of a two-key sweep.
    ok(&run_tiny(
        &tmp,
        &format!("{TINY}[sweep]\n\"backoff.base\" = [\"10ms\", \"20ms\"]\n"),
        &[],
    ));
    assert!(out.join("sweep_amplification.svg").is_file());
    std::fs::write(tmp.join("tiny.toml"), tiny_swept()).unwrap();
    ok(&jitterlab(
        tmp.path(),
        &["run", "tiny.toml", "--out", "two", "--quiet", "--no-plots"],
    ));
    for name in [
        "summary.csv",
        "aggregate.csv",
        "timeseries.csv",
        "compare.csv",
    ] {
        std::fs::copy(tmp.join("two").join(name), out.join(name)).unwrap();
    }
    std::fs::write(out.join("tiny.toml"), TINY).unwrap();
    ok(&jitterlab(tmp.path(), &["plot", "out"]));
    let names = entries(&out);
    assert!(
        !names.contains(&"sweep_amplification.svg".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"heatmap_amplification.svg".to_string()));
    assert!(names.contains(&"heatmap_mine.png".to_string()));
    // A file of a chart's name that jitterlab did not draw is neither removed nor replaced.
    std::fs::write(out.join("sweep_latency_p99_ms.png"), "mine").unwrap();
    ok(&jitterlab(tmp.path(), &["plot", "out"]));
    assert_eq!(
        std::fs::read_to_string(out.join("sweep_latency_p99_ms.png")).unwrap(),
        "mine"
    );
    // A folder of CSVs that jitterlab did not write (no journal, no meta.json): a chart of
    // the user's own there is never drawn over.
    let bare = tmp.join("bare");
    crate::trust::bare_copy(&out, &bare);
    std::fs::write(bare.join("herd.png"), "mine too").unwrap();
    let o = jitterlab(tmp.path(), &["plot", "bare"]);
    assert_bad_input(&o, &["herd.png: exists, and jitterlab did not write it"]);
    assert_eq!(
        std::fs::read_to_string(bare.join("herd.png")).unwrap(),
        "mine too"
    );
}

#[test]
fn resume_refuses_a_journal_that_is_not_jitterlabs() {
    let tmp = TempDir::new("resume-foreign");
    std::fs::create_dir(tmp.join("out")).unwrap();
    std::fs::write(tmp.join("out/units.jsonl"), "my log\n").unwrap();
    let o = run_tiny(&tmp, TINY, &["--resume"]);
    assert_bad_input(&o, &["holds files and is not a jitterlab result folder"]);
    let o = run_tiny(&tmp, TINY, &["--resume", "--force"]);
    assert_bad_input(
        &o,
        &[
            "holds units.jsonl, a file of a name jitterlab writes that it did not write there",
            "units.jsonl: line 1 is not a jitterlab journal header",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(tmp.join("out/units.jsonl")).unwrap(),
        "my log\n"
    );
}

/// Replaces the first `from` by `to` on line `line` (1-based) of `path`.
fn edit_line(path: &Path, line: usize, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert!(lines[line - 1].contains(from), "{}", lines[line - 1]);
    lines[line - 1] = lines[line - 1].replacen(from, to, 1);
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn journal_records_are_checked_against_the_plan() {
    let tmp = TempDir::new("records");
    ok(&run_tiny(&tmp, TINY, &["--no-plots"]));
    let journal = tmp.join("out/units.jsonl");
    let good = std::fs::read_to_string(&journal).unwrap();
    let cases: [(usize, &str, &str, &str); 6] = [
        (
            3,
            "\"point\":0",
            "\"point\":5",
            "units.jsonl: line 3, column 11: `point` is 5, but unit 1 of the scenario has point 0",
        ),
        (
            2,
            "\"unit\":0",
            "\"unit\":99",
            "units.jsonl: line 2, column 2: `unit` is 99, but the scenario has 4 units (0 to 3)",
        ),
        (
            4,
            "\"strategy\":1",
            "\"strategy\":0",
            "line 4, column 21: `strategy` is 0, but unit 2",
        ),
        (
            2,
            "\"seed\":3",
            "\"seed\":4",
            "line 2, column 50: `seed` is 4, but unit 0 of the scenario has seed 3",
        ),
        (
            2,
            "\"arrivals\":[",
            "\"arrivals\":[1,",
            "line 2, column 578: `series` has columns of [102, 101, 101, 101, 101, 101, 101] buckets",
        ),
        (
            2,
            "\"point\":0",
            "\"point\":\"x\"",
            "units.jsonl: line 2, column 21: invalid type: string \"x\"",
        ),
    ];
    for (line, from, to, needle) in cases {
        edit_line(&journal, line, from, to);
        let o = jitterlab(
            tmp.path(),
            &["merge", "out", "--out", "merged", "--no-plots"],
        );
        assert_bad_input(&o, &[needle]);
        let o = run_tiny(&tmp, TINY, &["--no-plots", "--resume"]);
        assert_bad_input(&o, &[needle]);
        std::fs::write(&journal, &good).unwrap();
    }
    assert!(
        !tmp.join("merged").exists(),
        "nothing merged from a bad journal"
    );
    ok(&jitterlab(
        tmp.path(),
        &["merge", "out", "--out", "merged", "--no-plots"],
    ));
}

#[test]
fn numbers_that_jitterlab_never_writes_are_refused_on_read() {
    let tmp = TempDir::new("not-finite");
    ok(&run_tiny(&tmp, TINY, &["--no-plots"]));
    let aggregate = tmp.join("out/aggregate.csv");
    let good = std::fs::read_to_string(&aggregate).unwrap();
    for bad in ["NaN", "inf", "-inf"] {
        // The mean of the first row.
        let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
        let mut cells: Vec<&str> = lines[1].split(',').collect();
        cells[3] = bad;
        lines[1] = cells.join(",");
        std::fs::write(&aggregate, lines.join("\n") + "\n").unwrap();
        for command in [&["recommend", "out"][..], &["plot", "out"]] {
            let o = jitterlab(tmp.path(), command);
            assert_bad_input(
                &o,
                &[
                    "aggregate.csv: line 2, column 4 (`mean`): cannot read",
                    "not a finite number",
                ],
            );
            assert!(first_line(&o).contains(bad), "{}", first_line(&o));
        }
    }
    assert!(!tmp.join("out/pareto.csv").exists() && !tmp.join("out/herd.png").exists());
}

#[test]
fn layer_numbers_that_jitterlab_never_writes_are_refused_on_read() {
    // A chain's files name layers 1 to 16; an edited number is refused, never indexed.
    let tmp = TempDir::new("layer-number");
    let chain = "replications = 1\n[workload]\nclients = 20\n[[layers]]\n[[layers]]\n";
    std::fs::write(tmp.join("chain.toml"), chain).unwrap();
    ok(&jitterlab(
        tmp.path(),
        &["run", "chain.toml", "--out", "out", "--no-plots", "--quiet"],
    ));
    for file in ["layers.csv", "layer_timeseries.csv"] {
        let path = tmp.join("out").join(file);
        let good = std::fs::read_to_string(&path).unwrap();
        let header: Vec<&str> = good.lines().next().unwrap().split(',').collect();
        let column = header.iter().position(|h| *h == "layer").unwrap();
        for bad in ["0", "17", "4000000000"] {
            let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
            let mut cells: Vec<&str> = lines[1].split(',').collect();
            cells[column] = bad;
            lines[1] = cells.join(",");
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            let o = jitterlab(tmp.path(), &["plot", "out"]);
            let place = format!("{file}: line 2, column {} (`layer`)", column + 1);
            assert_bad_input(&o, &[&place, "not a layer number"]);
        }
        std::fs::write(&path, good).unwrap();
    }
    ok(&jitterlab(tmp.path(), &["plot", "out"]));
}

#[test]
fn wrong_types_name_the_key_its_place_the_value_and_what_is_allowed() {
    let tmp = TempDir::new("wrong-types");
    let cases: &[(&str, &str)] = &[
        (
            "[server]\nworkers = \"four\"\n",
            "e.toml:2:11: invalid value for `server.workers`: \"four\": an integer from 1 to 10000000, or \"unlimited\"",
        ),
        (
            "[workload]\nclients = [1]\n",
            "e.toml:2:11: invalid value for `workload.clients`: [1]: a whole number",
        ),
        (
            "[server]\nservice = 5\n",
            "e.toml:2:11: invalid value for `server.service`: 5: a table",
        ),
        (
            "replications = -1\n",
            "e.toml:1:16: invalid value for `replications`: -1: a whole number from 0 to 4294967295",
        ),
        (
            "seed = 1.5\n",
            "e.toml:1:8: invalid value for `seed`: 1.5: an integer from 0 to 18446744073709551615",
        ),
        (
            "[client]\nidempotent = 3\n",
            "e.toml:2:14: invalid value for `client.idempotent`: 3: true or false",
        ),
        (
            "[client]\nretry_on = 5\n",
            "e.toml:2:12: invalid value for `client.retry_on`: 5: a list [...]",
        ),
        (
            "[server]\nqueue = true\n",
            "e.toml:2:9: invalid value for `server.queue`: true: a whole number, or a word",
        ),
        (
            "[backoff]\nstrategies = [\"full\"]\nmultiplier = \"x\"\n",
            "e.toml:3:14: invalid value for `backoff.multiplier`: \"x\": a number",
        ),
        (
            "[backoff]\nstrategies = [\"full\"]\nmultiplier = 0.5\n",
            "e.toml:3:14: invalid value for `backoff.multiplier`: 0.5",
        ),
        (
            "[sweep]\n\"workload.clients\" = [1, \"x\"]\n",
            "e.toml:2:26: invalid value for `workload.clients`: \"x\": a whole number (at sweep point 1",
        ),
        (
            "[sweep]\n\"backoff.cap\" = { from = \"2s\", to = \"1s\", step = \"100ms\" }\n",
            "e.toml:2:37: invalid value for `sweep.\"backoff.cap\".to`: 1s: a value at least from (2s)",
        ),
        (
            "[sweep]\n\"backoff.cap\" = 5\n",
            "e.toml:2:17: invalid value for `sweep.\"backoff.cap\"`: 5: a non-empty list",
        ),
        ("this is { not toml\n", "e.toml:1:6: "),
    ];
    for (text, first) in cases {
        std::fs::write(tmp.join("e.toml"), text).unwrap();
        let o = jitterlab(tmp.path(), &["check", "e.toml"]);
        assert_bad_input(&o, &[]);
        let line = first_line(&o);
        assert!(
            line.starts_with(&format!("error: {first}")),
            "{text}\n{line}"
        );
        for rust in [
            "expected i64",
            "a sequence",
            "struct ",
            "untagged enum",
            "expected u",
        ] {
            assert!(!line.contains(rust), "{line}");
        }
    }
    std::fs::write(tmp.join("tiny.toml"), TINY).unwrap();
    let o = jitterlab(
        tmp.path(),
        &["check", "tiny.toml", "--set", "server.workers=\"four\""],
    );
    assert_bad_input(
        &o,
        &[
            "error: --set server.workers=\"four\": invalid value for `server.workers`: \"four\": an integer from 1 to 10000000, or \"unlimited\"",
        ],
    );
    // A quoted sweep key keeps its dots.
    let o = jitterlab(
        tmp.path(),
        &[
            "check",
            "tiny.toml",
            "--set",
            "sweep.\"client.max_attempts\"=[2,3]",
        ],
    );
    ok(&o);
    assert!(stderr(&o).contains("ok: 2 point(s)"), "{}", stderr(&o));
}
