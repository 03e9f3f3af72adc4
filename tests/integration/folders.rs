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
