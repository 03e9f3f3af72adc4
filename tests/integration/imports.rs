//! `docs/architecture.md`'s module map against the code: every module of `src/` is in the
//! map's layers, and no module imports one of a later layer (the foundation's modules may use
//! each other). Tests count: a unit test inside `sim` that reaches for `scenario` breaks the
//! layering as much as production code does.
//!
//! An import is any `crate::NAME` path outside a comment (a `use`, a braced `use crate::{..}`
//! list, or a path written in place), and `super::NAME` in a module's top file, where `super`
//! is the crate. The binary's files (`main.rs`, `cli/`) are another crate and not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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

/// The top-level modules a file's code names.
fn imports(code: &str, top_file: bool) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
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

/// Every `.rs` file under `dir`, with the top-level module it belongs to.
fn sources(dir: &Path, module: Option<&str>, out: &mut Vec<(String, std::path::PathBuf)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let owner = module.map_or_else(|| name.clone(), str::to_string);
        if path.is_dir() {
            sources(&path, Some(&owner), out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push((owner, path));
        }
    }
}

/// What the map forbids in the code of `src/`: `(file, imported module, why)`.
fn violations(map: &BTreeMap<String, usize>) -> Vec<String> {
    let src = repo().join("src");
    let mut files = Vec::new();
    sources(&src, None, &mut files);
    let mut found = Vec::new();
    for (module, path) in files {
        if ["lib", "main", "cli"].contains(&module.as_str()) {
            continue;
        }
        let shown = path.strip_prefix(repo()).unwrap().display().to_string();
        let Some(&layer) = map.get(&module) else {
            found.push(format!("{shown}: module `{module}` is not in the map"));
            continue;
        };
        let top_file = path.parent() == Some(src.as_path())
            || (path.file_name().is_some_and(|f| f == "mod.rs")
                && path.parent().and_then(Path::parent) == Some(src.as_path()));
        let text = std::fs::read_to_string(&path).unwrap();
        for name in imports(&code(&text), top_file) {
            if name == module {
                continue;
            }
            match map.get(&name) {
                None => found.push(format!("{shown}: imports `{name}`, not in the map")),
                Some(&l) if l > layer || (l == layer && layer != 0) => found.push(format!(
                    "{shown}: `{module}` imports `{name}`, a module of {} layer",
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
    let want = ["error", "output", "runner", "sim", "stats", "text"];
    assert_eq!(found, want.iter().map(|s| s.to_string()).collect());
    assert!(!imports(&code(text), false).contains("text"));
    assert_eq!(
        imports("use crate::{\n    a::B,\n    c,\n};", false).len(),
        2
    );
}
