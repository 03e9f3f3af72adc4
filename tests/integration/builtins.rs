//! The scenario library built into the binary, used as an installed tool is: from a temporary
//! folder outside the checkout. `list`, `run NAME`, `show`, `init`, a file that shadows a
//! built-in name, misspelt names, and errors that print their cause once.

use jitterlab::scenario::library::{self, SCENARIOS};

use crate::cli::{assert_bad_input, entries};
use crate::common::{TempDir, repo};
use crate::common::{jitterlab, stderr, stdout};

/// A line of `list` for `name`.
fn listed<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("{name} not listed:\n{out}"))
}

#[test]
fn list_shows_every_builtin_from_anywhere() {
    let tmp = TempDir::new("list");
    let o = jitterlab(tmp.path(), &["list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let out = stdout(&o);
    assert_eq!(out.lines().count(), SCENARIOS.len(), "{out}");
    for b in SCENARIOS {
        let description = b.doc().base().unwrap().description;
        let line = listed(&out, b.name);
        assert!(line.contains(" built-in "), "{line}");
        assert!(line.ends_with(&description), "{line}");
    }
    assert!(!out.contains("sims/"), "no local files here: {out}");
}

#[test]
fn list_marks_local_files_beside_the_builtins() {
    let tmp = TempDir::new("list-local");
    let sims = tmp.join("sims");
    std::fs::create_dir(&sims).unwrap();
    let same = library::get("brooker-2015").unwrap();
    std::fs::write(sims.join("brooker-2015.toml"), same.text).unwrap();
    let edited = library::get("poisson-overload")
        .unwrap()
        .text
        .replace("replications = 5", "replications = 3");
    assert_ne!(edited, library::get("poisson-overload").unwrap().text);
    std::fs::write(sims.join("poisson-overload.toml"), edited).unwrap();
    std::fs::write(
        sims.join("mine.toml"),
        "name = \"my-herd\"\ndescription = \"my own\"\n[workload]\nclients = 10\n",
    )
    .unwrap();
    let o = jitterlab(tmp.path(), &["list"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), SCENARIOS.len() + 1, "{out}");
    let line = listed(&out, "brooker-2015");
    assert!(
        line.contains(" built-in  sims/brooker-2015.toml "),
        "{line}"
    );
    assert!(!line.contains("(differs)"), "{line}");
    let line = listed(&out, "poisson-overload");
    assert!(
        line.contains("sims/poisson-overload.toml (differs)"),
        "{line}"
    );
    let line = listed(&out, "my-herd");
    assert!(
        line.contains(" local ") && line.contains("sims/mine.toml"),
        "{line}"
    );
    assert!(line.ends_with("my own"), "{line}");
    let line = listed(&out, "thundering-herd");
    assert!(!line.contains("sims/"), "{line}");

    // --dir names another folder; the local files of sims/ are then not shown.
    std::fs::create_dir(tmp.join("elsewhere")).unwrap();
    std::fs::copy(sims.join("mine.toml"), tmp.join("elsewhere/mine.toml")).unwrap();
    let o = jitterlab(tmp.path(), &["list", "--dir", "elsewhere"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        listed(&out, "my-herd").contains("elsewhere/mine.toml"),
        "{out}"
    );
    assert!(!listed(&out, "brooker-2015").contains("sims/"), "{out}");
}

#[test]
fn errors_print_their_cause_once() {
    let tmp = TempDir::new("cause");
    let o = jitterlab(tmp.path(), &["list", "--dir", "nosuch"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: nosuch: "), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn run_by_name_runs_the_builtin() {
    let tmp = TempDir::new("run-name");
    let quick = ["--replications", "2", "--no-plots"];
    let o = jitterlab(tmp.path(), &[&["run", "brooker-2015"], &quick[..]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("using built-in scenario brooker-2015\n"),
        "{}",
        stderr(&o)
    );
    let by_name = std::fs::read(tmp.join("out/brooker-2015/summary.csv")).unwrap();
    // The same as running the checkout's file, byte for byte.
    let file = repo().join("sims/brooker-2015.toml");
    let from_file = tmp.join("from-file");
    let o = jitterlab(
        tmp.path(),
        &[
            &[
                "run",
                file.to_str().unwrap(),
                "--out",
                "from-file",
                "--quiet",
            ],
            &quick[..],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(from_file.join("summary.csv")).unwrap(),
        by_name
    );
    // NAME.toml is the same built-in when no such file exists.
    let o = jitterlab(
        tmp.path(),
        &[
            &["run", "brooker-2015.toml", "--out", "dot-toml"],
            &quick[..],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("using built-in scenario brooker-2015\n"));
    assert_eq!(
        std::fs::read(tmp.join("dot-toml/summary.csv")).unwrap(),
        by_name
    );
}

#[test]
fn show_prints_each_builtin_exactly() {
    let tmp = TempDir::new("show");
    for b in SCENARIOS {
        let o = jitterlab(tmp.path(), &["show", b.name]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let file = std::fs::read_to_string(repo().join(format!("sims/{}.toml", b.name))).unwrap();
        assert_eq!(stdout(&o), file, "show {}", b.name);
    }
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn init_writes_the_builtin_and_never_overwrites() {
    let tmp = TempDir::new("init");
    let text = library::get("choose-base-and-cap").unwrap().text;
    let o = jitterlab(tmp.path(), &["init", "choose-base-and-cap", "my.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(tmp.join("my.toml")).unwrap(), text);
    assert!(
        stderr(&o).contains("jitterlab run my.toml"),
        "{}",
        stderr(&o)
    );
    // Without FILE: NAME.toml.
    let o = jitterlab(tmp.path(), &["init", "choose-base-and-cap"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(tmp.join("choose-base-and-cap.toml")).unwrap(),
        text
    );
    // An existing file is left as it is.
    std::fs::write(tmp.join("mine.toml"), "# mine\n").unwrap();
    for (args, file) in [
        (&["init", "brooker-2015", "mine.toml"][..], "mine.toml"),
        (
            &["init", "choose-base-and-cap"][..],
            "choose-base-and-cap.toml",
        ),
    ] {
        let before = std::fs::read(tmp.join(file)).unwrap();
        let o = jitterlab(tmp.path(), args);
        assert_bad_input(&o, &[file, "exists", "never overwrites"]);
        assert_eq!(std::fs::read(tmp.join(file)).unwrap(), before);
    }
    assert_eq!(
        entries(tmp.path()),
        ["choose-base-and-cap.toml", "mine.toml", "my.toml"],
        "no temporary files left"
    );
    let o = jitterlab(tmp.path(), &["check", "my.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_file_shadows_the_builtin_of_its_name() {
    let tmp = TempDir::new("shadow");
    std::fs::write(
        tmp.join("brooker-2015"),
        "name = \"shadow\"\nreplications = 1\n[workload]\nclients = 5\n",
    )
    .unwrap();
    let o = jitterlab(tmp.path(), &["run", "brooker-2015", "--no-plots"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .starts_with("using file ./brooker-2015, not the built-in scenario brooker-2015\n"),
        "{}",
        stderr(&o)
    );
    assert_eq!(entries(&tmp.join("out")), ["shadow"]);
    let o = jitterlab(tmp.path(), &["check", "brooker-2015"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("name = \"shadow\""), "{}", stdout(&o));
    // A folder of that name is not a scenario file: the built-in runs.
    std::fs::create_dir(tmp.join("thundering-herd")).unwrap();
    let o = jitterlab(tmp.path(), &["check", "thundering-herd"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("using built-in scenario thundering-herd\n"));
    // `show` is about built-ins only.
    let o = jitterlab(tmp.path(), &["show", "brooker-2015"]);
    assert_eq!(stdout(&o), library::get("brooker-2015").unwrap().text);
}

#[test]
fn a_misspelt_name_suggests_the_closest_builtins() {
    let tmp = TempDir::new("misspelt");
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["run", "brookr-2015"],
            &[
                "`brookr-2015`",
                "neither a file nor a built-in scenario",
                "did you mean brooker-2015?",
            ],
        ),
        (
            &["check", "thundering_herd.toml"],
            &["did you mean thundering-herd?"],
        ),
        (
            &["run", "sims/retry-after-herd.toml", "--quiet"],
            &["no such file", "did you mean retry-after-herd?"],
        ),
        (
            &["show", "poison-overload"],
            &["did you mean poisson-overload?"],
        ),
        (
            &["init", "brooker", "x.toml"],
            &["did you mean brooker-2015, brooker-2015-sweep or brooker-2022-budgets?"],
        ),
        (
            &["run", "zzz"],
            &["`jitterlab list` shows the built-in scenarios"],
        ),
    ];
    for (args, needles) in cases {
        let o = jitterlab(tmp.path(), args);
        assert_bad_input(&o, needles);
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(entries(tmp.path()).is_empty(), "{args:?} wrote something");
    }
}
