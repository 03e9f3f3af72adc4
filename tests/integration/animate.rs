//! `--animate` (`herd.gif`): the same bytes for the same run at any thread count, frames that
//! grow bucket by bucket and keep the chart rules, a folder's own `herd.gif` never replaced,
//! and a clear refusal, before anything is run, drawn or written, when the run has no strategy
//! without jitter or none with full jitter.

use std::path::Path;

use jitterlab::output::plot;

use crate::common::{TempDir, jitterlab, stderr};

/// The built-in herd, a tenth of the size (the animation draws what the run wrote).
const SMALL: [&str; 8] = [
    "--set",
    "workload.clients=1000",
    "--set",
    "server.workers=10",
    "--replications",
    "1",
    "--no-plots",
    "--quiet",
];

fn run(dir: &Path, extra: &[&str]) -> std::process::Output {
    let out = dir.display().to_string();
    let mut args = vec!["run", "thundering-herd", "--out", &out];
    args.extend(SMALL);
    args.extend(extra);
    jitterlab(dir.parent().unwrap(), &args)
}

/// The frames of a GIF, each as (left, top, width, height, delay).
fn frames(bytes: &[u8]) -> Vec<(u16, u16, u16, u16, u16)> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(bytes).expect("a GIF");
    let mut out = Vec::new();
    while let Some(f) = decoder.read_next_frame().expect("a frame") {
        out.push((f.left, f.top, f.width, f.height, f.delay));
    }
    out
}

#[test]
fn the_herd_animation_is_deterministic_and_legible() {
    let tmp = TempDir::new("animate");
    let (a, b) = (tmp.join("a"), tmp.join("b"));
    let o = run(&a, &["--animate", "--threads", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&b, &["--animate", "--threads", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let gif_a = std::fs::read(a.join("herd.gif")).unwrap();
    assert_eq!(
        gif_a,
        std::fs::read(b.join("herd.gif")).unwrap(),
        "same run, same bytes"
    );
    let frames = frames(&gif_a);
    assert_eq!(frames.len(), 90);
    assert_eq!(frames[0], (0, 0, 1040, 700, 12), "the first frame is whole");
    // Later frames are the rectangle that changed: never the whole canvas for all of them.
    assert!(frames[1..].iter().all(|f| f.2 <= 1040 && f.3 <= 700));
    assert!(
        frames[1..]
            .iter()
            .any(|f| u32::from(f.2) * u32::from(f.3) < 1040 * 700 / 2)
    );
    assert_eq!(frames.last().unwrap().4, 400, "the last frame is held");
    // meta.json lists it: jitterlab may replace it on the next run.
    let meta = std::fs::read_to_string(a.join("meta.json")).unwrap();
    assert!(meta.contains("\"herd.gif\""), "{meta}");
    let problems = plot::check_animation(&a).unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
    // `plot --animate` draws the charts and writes the same animation again.
    let o = jitterlab(tmp.path(), &["plot", &a.display().to_string(), "--animate"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(a.join("herd.gif")).unwrap(), gif_a);
    assert!(a.join("herd.png").is_file());
}

#[test]
fn a_herd_gif_of_the_users_is_never_replaced() {
    let tmp = TempDir::new("animate-user");
    let dir = tmp.join("r");
    let o = run(&dir, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(dir.join("herd.gif"), b"mine").unwrap();
    let o = jitterlab(
        tmp.path(),
        &["plot", &dir.display().to_string(), "--animate"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("herd.gif"), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.join("herd.gif")).unwrap(), b"mine");
    // Refused before a chart is drawn (the run wrote none: --no-plots).
    assert!(
        !dir.join("herd.png").exists(),
        "a refused plot --animate drew"
    );
    // `run --animate` into that folder (--force: its other files may be replaced) refuses
    // before it runs: every file and its bytes as they were.
    let before = snapshot(&dir);
    let o = run(&dir, &["--animate", "--force"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("herd.gif"), "{}", stderr(&o));
    assert_eq!(snapshot(&dir), before, "a refused run --animate wrote");
}

/// Every file of `dir` (one level) with its bytes, by name.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn without_a_no_jitter_and_a_full_strategy_the_animation_is_refused() {
    let tmp = TempDir::new("animate-refused");
    let dir = tmp.join("r");
    let o = run(
        &dir,
        &[
            "--set",
            r#"backoff.strategies=["full", "equal"]"#,
            "--animate",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("--animate") && err.contains("no_jitter"),
        "{err}"
    );
    assert!(
        err.contains("full, equal"),
        "names the run's strategies: {err}"
    );
    // Refused before the run: the folder is not even created.
    assert!(
        !dir.exists(),
        "a refused run --animate wrote {}",
        dir.display()
    );
}
