//! The layering of `docs/architecture.md`, checked over the sources: every module of `src/`
//! is in the map's layers, and no module imports one of a later layer (the foundation's
//! modules may use each other); a result folder's file names are spelled in
//! `src/folder/names.rs` alone. Tests count: a unit test inside `sim` that reaches for
//! `scenario` breaks the layering as much as production code does.
//!
//! An import is any `crate::PATH` outside a comment (a `use`, a braced `use crate::{..}`
//! list, or a path written in place), and `super::NAME` in a module's top file, where `super`
//! is the crate. The map may place a leaf submodule (`folder::names`) apart from its parent;
//! an import is of the longest entry of the map it starts with. The binary's files
//! (`main.rs`, `cli/`) are another crate and not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::repo;

/// The map: for each module, its layer's position (0 the foundation).
fn layers() -> BTreeMap<String, usize> {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let section = doc
        .split("\n## What each module may import")
        .nth(1)
        .expect("docs/architecture.md has a section \"What each module may import\"");
    let block = section
        .split("```")
        .nth(1)
        .expect("the map in a code block");
    let mut layers = BTreeMap::new();
    for (i, line) in block.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let (_, modules) = line.split_once(':').expect("`layer: modules` lines");
        for module in modules.split_whitespace() {
            assert!(
                layers.insert(module.to_string(), i).is_none(),
                "{module} in two layers"
            );
        }
    }
    layers
}

/// `text` without its comments (line and doc comments; block comments are not used).
fn code(text: &str) -> String {
    (text.lines())
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a file's code names: `a`, or `a::b` where the path goes on to a
/// module or item `b` (lower-case).
fn imports(code: &str, top_file: bool) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        let word = |s: &str| -> String {
            s.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        let first = word(s);
        match s[first.len()..].strip_prefix("::").map(word) {
            Some(second) if second.starts_with(char::is_lowercase) => format!("{first}::{second}"),
            _ => first,
        }
    };
    let mut names = BTreeSet::new();
    let mut prefixes = vec!["crate::"];
    if top_file {
        prefixes.push("super::");
    }
    for prefix in prefixes {
        for (at, _) in code.match_indices(prefix) {
            // `self::crate` never occurs; skip paths like `foo_crate::x`.
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            match rest.strip_prefix('{') {
                Some(list) => {
                    let list = &list[..list.find('}').unwrap_or(list.len())];
                    names.extend(list.split(',').map(|item| ident(item.trim())));
                }
                None => {
                    names.insert(ident(rest));
                }
            }
        }
    }
    // `crate::Result` and `crate::Error`: the root's re-exports of `error`'s types.
    let root_items = names.iter().any(|n| n.starts_with(char::is_uppercase));
    names.retain(|n| !n.is_empty() && n != "self" && !n.starts_with(char::is_uppercase));
    if root_items {
        names.insert("error".into());
    }
    names
}

/// Every `.rs` file under `dir`, with the top-level module it belongs to and its path
/// below `src/` as a module path (`folder::names`).
fn sources(dir: &Path, module: Option<&str>, out: &mut Vec<(String, String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let (top, full) = match module {
            Some(m) => (m.to_string(), format!("{m}::{name}")),
            None => (name.clone(), name.clone()),
        };
        if path.is_dir() {
            let mut inner = Vec::new();
            sources(&path, Some(&top), &mut inner);
            out.extend(inner.into_iter().map(|(t, f, p)| {
                let f = f.replacen(&format!("{top}::"), &format!("{full}::"), 1);
                (t, f, p)
            }));
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push((top, full, path));
        }
    }
}

/// The entry of `map` a module path belongs to: the longest that starts it.
fn entry<'m>(map: &'m BTreeMap<String, usize>, path: &str) -> Option<(&'m str, usize)> {
    let mut at = Some(path);
    while let Some(p) = at {
        if let Some((k, &l)) = map.get_key_value(p) {
            return Some((k.as_str(), l));
        }
        at = p.rsplit_once("::").map(|(parent, _)| parent);
    }
    None
}

/// What the map forbids in the code of `src/`, one line each.
fn violations(map: &BTreeMap<String, usize>) -> Vec<String> {
    let src = repo().join("src");
    let mut files = Vec::new();
    sources(&src, None, &mut files);
    files.sort();
    let mut found = Vec::new();
    for (top, full, path) in files {
        if ["lib", "main", "cli"].contains(&top.as_str()) {
            continue;
        }
        let shown = path.strip_prefix(repo()).unwrap().display().to_string();
        let Some((module, layer)) = entry(map, &full) else {
            found.push(format!("{shown}: module `{top}` is not in the map"));
            continue;
        };
        let top_file = path.parent() == Some(src.as_path())
            || (path.file_name().is_some_and(|f| f == "mod.rs")
                && path.parent().and_then(Path::parent) == Some(src.as_path()));
        let text = std::fs::read_to_string(&path).unwrap();
        for name in imports(&code(&text), top_file) {
            match entry(map, &name) {
                None => found.push(format!("{shown}: imports `{name}`, not in the map")),
                Some((other, _)) if other == module => {}
                Some((other, l)) if l > layer || (l == layer && layer != 0) => found.push(format!(
                    "{shown}: `{module}` imports `{other}`, a module of {} layer",
                    if l == layer { "its own" } else { "a later" }
                )),
                Some(_) => {}
            }
        }
    }
    found
}

#[test]
fn modules_import_only_what_the_architecture_map_allows() {
    let map = layers();
    let found = violations(&map);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_import_scan_sees_every_form_and_skips_comments() {
    let text = "use crate::sim::Event;\nuse crate::{output::plot, runner as r};\n\
                // crate::live in a comment\nlet x = crate::stats::mean(&v); /// crate::sweep\n\
                let y = my_crate::z; super::text::shown(s); crate::Result<()>";
    let found = imports(&code(text), true);
    let want = [
        "error",
        "output::plot",
        "runner",
        "sim",
        "stats::mean",
        "text::shown",
    ];
    assert_eq!(found, want.iter().map(|s| s.to_string()).collect());
    assert!(!imports(&code(text), false).contains("text::shown"));
    assert_eq!(
        imports("use crate::{\n    a::B,\n    c,\n};", false).len(),
        2
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
    let mut files = Vec::new();
    sources(&repo().join("src"), None, &mut files);
    for (_, _, file) in files {
        let text = std::fs::read_to_string(&file).unwrap();
        // A module's `tests.rs` is its unit tests, moved out of its file.
        let code = match file.file_name().is_some_and(|f| f == "tests.rs") {
            true => "",
            false => production_code(&text),
        };
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

/// One convention for module files (docs/architecture.md, "Conventions"): a module with
/// children is a directory with its `mod.rs`, never `x.rs` beside `x/`.
#[test]
fn a_module_with_children_is_a_directory_with_its_mod_rs() {
    let split: Vec<PathBuf> = crate_sources()
        .into_iter()
        .filter(|file| file.with_extension("").is_dir())
        .collect();
    assert!(
        split.is_empty(),
        "modules written as x.rs beside x/ (move x.rs to x/mod.rs): {split:#?}"
    );
}

/// The longest a module's unit tests may run inside its file before they move to `tests.rs`.
const INLINE_TESTS_MAX: usize = 400;

/// Every `.rs` file of the crates' sources (the root's, the engine's and the peers').
fn crate_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for root in ["src", "crates/jitterlab-retry/src", "crates/peers/src"] {
        rust_files(&repo().join(root), &mut files);
    }
    files
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// One convention for unit tests (docs/architecture.md, "Conventions"): at the bottom of the
/// file they test, in `#[cfg(test)] mod tests { .. }`, and in the module's `tests.rs` once
/// they run longer than [`INLINE_TESTS_MAX`] lines.
#[test]
fn long_unit_tests_live_in_their_modules_tests_rs() {
    let mut long = Vec::new();
    for file in crate_sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let inline = lines.windows(2).position(|w| {
            w[0].trim() == "#[cfg(test)]"
                && w[1]
                    .trim_start()
                    .trim_start_matches("pub(crate) ")
                    .starts_with("mod tests {")
        });
        if let Some(at) = inline.filter(|at| lines.len() - at > INLINE_TESTS_MAX) {
            long.push(format!("{} ({} lines)", file.display(), lines.len() - at));
        }
    }
    assert!(
        long.is_empty(),
        "unit tests over {INLINE_TESTS_MAX} lines inside their file (move them to the \
         module's tests.rs): {long:#?}"
    );
}
