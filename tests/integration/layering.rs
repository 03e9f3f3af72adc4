//! The layering of `docs/architecture.md`, checked over the sources: a module may not name a
//! module above it (`crate::NAME` in code, tests included; comments are prose, not imports),
//! and a result folder's file names are spelled in `src/folder/names.rs` alone.

use std::path::{Path, PathBuf};

use crate::common::repo;

/// (folder or file under `src/`, the top-level modules it may not name).
const FORBIDDEN: &[(&str, &[&str])] = &[
    // The simulator, tests included: below scenarios, sweeps and every command.
    (
        "sim",
        &[
            "scenario",
            "sweep",
            "folder",
            "runner",
            "output",
            "recommend",
            "live",
            "serve",
            "cli",
        ],
    ),
    // The result folder: below the output files and the commands that write them.
    (
        "folder",
        &["output", "runner", "recommend", "live", "serve", "cli"],
    ),
    // Its file names: a leaf, which every module may name.
    (
        "folder/names.rs",
        &[
            "atomic",
            "delays",
            "error",
            "input",
            "metric",
            "output",
            "recommend",
            "rng",
            "runner",
            "scenario",
            "sim",
            "stats",
            "sweep",
            "text",
            "time",
            "live",
            "serve",
        ],
    ),
    // Live mode publishes its folder itself; the runner is a command beside it.
    ("live", &["runner", "serve", "cli"]),
];

/// Every `.rs` file under `path` (or `path` itself), sorted.
fn sources(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The top-level modules a source names: `crate::NAME` paths and the names in
/// `use crate::{NAME, ...}` groups, outside comments.
fn named_modules(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group
                    .split([',', '}'])
                    .map(|s| s.trim().split("::").next().unwrap_or_default())
                    .collect(),
                None => vec![rest],
            };
            for name in names {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push((n + 1, name));
                }
            }
        }
    }
    found
}

#[test]
fn modules_name_no_module_above_them() {
    let mut offences = Vec::new();
    for (place, forbidden) in FORBIDDEN {
        for file in sources(&repo().join("src").join(place)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (line, name) in named_modules(&text) {
                if forbidden.contains(&name.as_str()) {
                    offences.push(format!(
                        "{}:{line} names crate::{name}",
                        file.strip_prefix(repo()).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "imports that docs/architecture.md forbids:\n{}",
        offences.join("\n")
    );
}

/// The string literals a source holds before its unit tests (`#[cfg(test)]`), which may spell
/// a file name to check the contract.
fn production_code(text: &str) -> &str {
    let tests = text.match_indices("#[cfg(test)]\n").find(|(at, mark)| {
        let next = &text[at + mark.len()..];
        next.starts_with("mod ") || next.starts_with("pub(crate) mod ")
    });
    tests.map_or(text, |(end, _)| &text[..end])
}

#[test]
fn file_names_are_spelled_in_the_folder_module_alone() {
    let names_rs = repo().join("src/folder/names.rs");
    let names: Vec<String> = production_code(&std::fs::read_to_string(&names_rs).unwrap())
        .lines()
        .filter(|l| l.starts_with("pub const ") && l.contains(": &str = \""))
        .filter_map(|l| Some(format!("\"{}\"", l.split('"').nth(1)?)))
        .collect();
    assert!(names.len() >= 20 && names.contains(&"\"meta.json\"".to_string()));
    let mut spelled = Vec::new();
    for file in sources(&repo().join("src")) {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = production_code(&text);
        for name in names
            .iter()
            .filter(|n| file != names_rs && code.contains(n.as_str()))
        {
            spelled.push(format!(
                "{} spells {name}",
                file.strip_prefix(repo()).unwrap().display()
            ));
        }
    }
    assert!(
        spelled.is_empty(),
        "file names outside src/folder/names.rs:\n{}",
        spelled.join("\n")
    );
}

#[test]
fn the_scan_sees_paths_and_groups_and_skips_comments() {
    let text = "use crate::sweep::Plan;\nuse crate::{time, scenario::ScenarioDoc};\n// crate::output\nlet x = crate::runner::run(); // crate::live\n";
    let names: Vec<String> = named_modules(text).into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["sweep", "time", "scenario", "runner"]);
}
