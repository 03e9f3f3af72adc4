//! Issue 42 (5), through the real binary: `recommend` prints strategy names of 100 000
//! characters (a format width above 65 535 panicked) shortened, in the ranking and in the
//! list of the closest pairs when none meets the constraints.

use crate::common::{TempDir, jitterlab, stderr, stdout};

#[test]
fn case5_recommend_prints_names_of_100_000_characters_shortened() {
    let tmp = TempDir::new("long-names");
    let long = "a".repeat(100_000);
    std::fs::write(
        tmp.join("long.toml"),
        format!(
            "name = \"long\"\nhorizon = \"1s\"\nreplications = 2\n[workload]\nclients = 5\n[backoff]\nstrategies = [{{ name = \"{long}\", jitter = \"full\" }}, {{ name = \"b{long}\", jitter = \"equal\" }}]\n"
        ),
    )
    .unwrap();
    let o = jitterlab(
        tmp.path(),
        &["run", "long.toml", "--out", "out", "--quiet", "--no-plots"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The ranking, and the variant: the closest pairs (nothing meets 0.5 attempts a request).
    for extra in [&[][..], &["--max-amplification", "0.5"][..]] {
        let o = jitterlab(tmp.path(), &[&["recommend", "out"][..], extra].concat());
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.contains("(100000 characters)"), "{extra:?}: {out}");
        assert!(
            out.lines().all(|l| l.chars().count() < 400),
            "{extra:?}: {out}"
        );
    }
}
