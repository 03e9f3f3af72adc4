//! Result folders over time, through the real binary: folders of the previous release resumed,
//! commands cut off at any point (a kill while charts are written, a commit cut short), two
//! writers at once, killed processes' temporary files, and a full disk. Whatever happens, the
//! folder stays usable by every command, and no finished unit or file of the user's is lost.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{TempDir, jitterlab, repo, stderr};

fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
}

/// The fixtures written by the previous release (tests/fixtures/previous-release/README.md).
fn previous_release() -> PathBuf {
    repo().join("tests/fixtures/previous-release")
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A number of `meta.json`.
fn meta_number(dir: &Path, key: &str) -> u64 {
    let meta: serde_json::Value = serde_json::from_str(&read(&dir.join("meta.json"))).unwrap();
    meta[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} in {meta}"))
}

#[test]
fn a_shard_folder_of_the_previous_release_resumes_with_its_shard() {
    let tmp = TempDir::new("previous-shard");
    let fixture = previous_release().join("shard-1-of-2");
    let scenario = previous_release().join("previous.toml");
    let scenario = scenario.to_str().unwrap();
    // What this release writes for the same shard: the resumed folders must end the same.
    let fresh = tmp.join("fresh");
    let o = jitterlab(
        tmp.path(),
        &[
            "run", scenario, "--shard", "1/2", "--out", "fresh", "--quiet",
        ],
    );
    ok(&o);
    for (label, kept) in [("complete", 3), ("interrupted", 1)] {
        let dir = tmp.join(label);
        copy_folder(&fixture, &dir);
        if kept < 3 {
            // Cut off after its first unit: the journal's first lines, and no meta.json.
            let journal = read(&dir.join("units.jsonl"));
            let lines: Vec<&str> = journal.lines().take(1 + kept).collect();
            std::fs::write(dir.join("units.jsonl"), lines.join("\n") + "\n").unwrap();
            std::fs::remove_file(dir.join("meta.json")).unwrap();
        }
        let o = jitterlab(
            tmp.path(),
            &[
                "run", scenario, "--shard", "1/2", "--resume", "--out", label,
            ],
        );
        ok(&o);
        assert!(
            stderr(&o).contains(&format!("resuming: {kept} of 6 units already done")),
            "{label}: {}",
            stderr(&o)
        );
        assert_eq!(meta_number(&dir, "units_run"), 3 - kept as u64, "{label}");
        assert_eq!(
            read(&dir.join("units.jsonl")),
            read(&fresh.join("units.jsonl")),
            "{label}: the journal of shard 1/2, as this release writes it"
        );
    }
    // Resumed as another shard, its units would be lost: refused, with the advice that keeps
    // them (never "without --shard", which would run every other shard's units there too).
    let dir = tmp.join("other");
    copy_folder(&fixture, &dir);
    let o = jitterlab(
        tmp.path(),
        &[
            "run", scenario, "--shard", "0/2", "--resume", "--out", "other",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("holds 3 finished units, unit 1 among them, which shard 0/2 does not hold")
            && err.contains("resume with the --shard it was run with")
            && !err.contains("no --shard"),
        "{err}"
    );
    assert_eq!(
        read(&dir.join("units.jsonl")),
        read(&fixture.join("units.jsonl"))
    );
}

/// What a run cut off by Ctrl-C leaves in `dir`: its scenario and journal in the staging
/// folder, nothing of its own in the folder (made from a finished shard `from`).
fn interrupted_copy(from: &Path, dir: &Path) {
    let stage = dir.join(".jitterlab-partial");
    std::fs::create_dir_all(&stage).unwrap();
    for name in ["scenario.toml", "units.jsonl"] {
        std::fs::copy(from.join(name), stage.join(name)).unwrap();
    }
}

#[test]
fn merge_names_an_interrupted_shard_even_as_its_first_folder() {
    let tmp = TempDir::new("merge-interrupted");
    let scenario = previous_release().join("previous.toml");
    let scenario = scenario.to_str().unwrap();
    for i in 0..2 {
        let shard = format!("{i}/2");
        let out = format!("S{i}");
        ok(&jitterlab(
            tmp.path(),
            &["run", scenario, "--shard", &shard, "--out", &out, "--quiet"],
        ));
    }
    interrupted_copy(&tmp.join("S0"), &tmp.join("I0"));
    for dirs in [["I0", "S1"], ["S1", "I0"]] {
        let o = jitterlab(
            tmp.path(),
            &["merge", dirs[0], dirs[1], "--out", "merged", "--no-plots"],
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).starts_with("error: I0: holds a run that was interrupted"),
            "{dirs:?}: {}",
            stderr(&o)
        );
    }
    assert!(!tmp.join("merged").exists());
}

/// The chart files of a folder.
fn charts_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".png") || n.ends_with(".svg"))
        .collect();
    names.sort();
    names
}

/// The files `meta.json` lists.
fn listed(dir: &Path) -> Vec<String> {
    let meta: serde_json::Value = serde_json::from_str(&read(&dir.join("meta.json"))).unwrap();
    meta["files"]
        .as_array()
        .unwrap_or_else(|| panic!("files in {meta}"))
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

/// A draw cut short (here: cancelled once rendered, as Ctrl-C does) has recorded the charts it
/// was about to write before writing any: whatever it left is proven jitterlab's.
#[test]
fn a_draw_cut_short_has_recorded_its_charts_before_writing_any() {
    let tmp = TempDir::new("draw-cut-short");
    let scenario = previous_release().join("previous.toml");
    ok(&jitterlab(
        tmp.path(),
        &[
            "run",
            scenario.to_str().unwrap(),
            "--out",
            "r",
            "--quiet",
            "--no-plots",
        ],
    ));
    let dir = tmp.join("r");
    let cancel = jitterlab::cancel::CancelToken::new();
    cancel.cancel();
    let e = jitterlab::output::plot::draw_all_until(&dir, &cancel).unwrap_err();
    assert!(matches!(e, jitterlab::Error::Interrupted), "{e}");
    assert!(charts_in(&dir).is_empty(), "no chart is written");
    let files = listed(&dir);
    assert!(
        files.contains(&"herd.png".to_string()) && files.contains(&"herd.svg".to_string()),
        "{files:?}"
    );
    // The next draw writes them, and the list is that draw's.
    ok(&jitterlab(tmp.path(), &["plot", "r"]));
    let drawn = charts_in(&dir);
    assert!(drawn.contains(&"herd.png".to_string()), "{drawn:?}");
    let files = listed(&dir);
    assert!(drawn.iter().all(|c| files.contains(c)), "{files:?}");
}

/// Two writers of one folder: the second is refused while the first holds its staging folder,
/// and nothing of the first's is touched.
#[test]
fn a_second_run_into_a_folder_being_written_is_refused() {
    let tmp = TempDir::new("two-writers");
    let dir = tmp.join("r");
    std::fs::create_dir_all(&dir).unwrap();
    let first = jitterlab::folder::stage::Stage::open(&dir, false).unwrap();
    std::fs::write(first.path().join("scenario.toml"), "first").unwrap();
    let scenario = previous_release().join("previous.toml");
    let run = [
        "run",
        scenario.to_str().unwrap(),
        "--out",
        "r",
        "--quiet",
        "--no-plots",
    ];
    let o = jitterlab(tmp.path(), &run);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another jitterlab process is writing this folder"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read(&first.path().join("scenario.toml")), "first");
    drop(first);
    ok(&jitterlab(tmp.path(), &run));
}

/// A run refused after it opened its staging folder leaves none behind (nor a folder it
/// created), and one refused beside an interrupted run's stage keeps that stage.
#[test]
fn a_failed_run_leaves_no_staging_folder_of_its_own() {
    let tmp = TempDir::new("failed-run");
    let scenario = previous_release().join("previous.toml");
    let scenario = scenario.to_str().unwrap();
    ok(&jitterlab(
        tmp.path(),
        &["run", scenario, "--shard", "0/2", "--out", "s", "--quiet"],
    ));
    let resume_other_shard = [
        "run", scenario, "--shard", "1/2", "--resume", "--out", "s", "--quiet",
    ];
    let o = jitterlab(tmp.path(), &resume_other_shard);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        !tmp.join("s/.jitterlab-partial").exists(),
        "{:?}",
        std::fs::read_dir(tmp.join("s/.jitterlab-partial"))
            .map(|d| d.map(|e| e.unwrap().file_name()).collect::<Vec<_>>())
    );
    // An interrupted run's stage, refused for another shard, stays for its own --resume.
    interrupted_copy(&tmp.join("s"), &tmp.join("i"));
    let o = jitterlab(
        tmp.path(),
        &[
            "run", scenario, "--shard", "1/2", "--resume", "--out", "i", "--quiet",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(tmp.join("i/.jitterlab-partial/units.jsonl").exists());
    ok(&jitterlab(
        tmp.path(),
        &[
            "run", scenario, "--shard", "0/2", "--resume", "--out", "i", "--quiet",
        ],
    ));
    assert_eq!(
        read(&tmp.join("i/units.jsonl")),
        read(&tmp.join("s/units.jsonl"))
    );
}
