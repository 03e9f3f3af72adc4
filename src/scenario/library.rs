//! The scenario library that travels with the binary: every `sims/*.toml`, built in.
//!
//! A scenario argument (`jitterlab run SCENARIO`, `check SCENARIO`) is a file when one exists
//! at that path, and otherwise the name of a built-in scenario (`brooker-2015`, or
//! `brooker-2015.toml`): a file always wins. A name that is neither gets the closest built-in
//! names as suggestions. `jitterlab list` merges the built-ins with a local folder of
//! scenarios ([`catalog`]).
//!
//! The list is written out below rather than generated, and a test holds it equal to the
//! `sims/` folder: a file removed or renamed fails the build (`include_str!`), a file added but
//! not listed, or one that does not parse and check, fails the tests.

use std::fmt;
use std::path::{Path, PathBuf};

use super::ScenarioDoc;
use crate::atomic::create_atomic;
use crate::error::{Error, Result};

/// A scenario built into the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// Its name: the file stem in `sims/`, which is also its `name` key.
    pub name: &'static str,
    /// The file's text, comments included.
    pub text: &'static str,
}

/// `builtin!("x")` is the built-in scenario `sims/x.toml`.
macro_rules! builtin {
    ($name:literal) => {
        Builtin {
            name: $name,
            text: include_str!(concat!("../../sims/", $name, ".toml")),
        }
    };
}

/// Every built-in scenario, sorted by name.
pub const SCENARIOS: &[Builtin] = &[
    builtin!("aws-2026"),
    builtin!("brooker-2015"),
    builtin!("brooker-2015-sweep"),
    builtin!("brooker-2022-budgets"),
    builtin!("choose-base-and-cap"),
    builtin!("collapse-spike"),
    builtin!("hedging"),
    builtin!("hedging-storm"),
    builtin!("layered-retries"),
    builtin!("live-herd"),
    builtin!("metastable-phase-map"),
    builtin!("poisson-overload"),
    builtin!("retry-after-herd"),
    builtin!("sdk-defaults"),
    builtin!("thundering-herd"),
];

/// The scenario `jitterlab run` runs without SCENARIO.
pub const DEFAULT: &str = "thundering-herd";

impl Builtin {
    /// Parses the scenario (named `<built-in NAME>` in errors).
    pub fn doc(&self) -> ScenarioDoc {
        ScenarioDoc::parse(self.text, &format!("<built-in {}>", self.name), self.name)
            .expect("built-in scenarios are checked by the tests")
    }

    /// Writes the scenario text to `path`, whole or not at all, refusing to replace a file.
    pub fn write_new(&self, path: &Path) -> Result<()> {
        let exists = || Error::Usage {
            arg: path.display().to_string(),
            message: "a file of that name exists; `init` never overwrites (remove it or name \
                      another file)"
                .to_string(),
        };
        if path.symlink_metadata().is_ok() {
            return Err(exists());
        }
        create_atomic(path, self.text.as_bytes()).map_err(|e| match e {
            Error::Io { ref source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists => {
                exists()
            }
            other => other,
        })
    }
}

/// The built-in scenario `name` (`NAME` or `NAME.toml`), if there is one.
pub fn get(name: &str) -> Option<&'static Builtin> {
    let name = name.strip_suffix(".toml").unwrap_or(name);
    SCENARIOS.iter().find(|b| b.name == name)
}

/// The built-in scenario `name`, or an error that suggests the closest names.
pub fn lookup(name: &str) -> Result<&'static Builtin> {
    get(name).ok_or_else(|| Error::Usage {
        arg: name.to_string(),
        message: format!("no built-in scenario of that name; {}", hint(name)),
    })
}

/// The default scenario of `jitterlab run`.
pub fn default() -> &'static Builtin {
    get(DEFAULT).expect("the default scenario is built in")
}

/// Where a scenario comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file (it wins over a built-in scenario of the same name).
    File(PathBuf),
    /// A built-in scenario.
    Builtin(&'static Builtin),
}

impl Source {
    /// A file when `arg` names one, else the built-in scenario that `arg` names, else an error
    /// (exit code 2) with the closest built-in names.
    pub fn resolve(arg: &Path) -> Result<Source> {
        // A folder is not a scenario file, so `brooker-2015/` next to a result does not shadow.
        if arg.symlink_metadata().is_ok() && !arg.is_dir() {
            return Ok(Source::File(arg.to_path_buf()));
        }
        if let Some(b) = bare_name(arg).and_then(get) {
            return Ok(Source::Builtin(b));
        }
        let what = if bare_name(arg).is_some() {
            "neither a file nor a built-in scenario"
        } else {
            "no such file"
        };
        let stem = arg
            .file_name()
            .map_or(String::new(), |s| s.to_string_lossy().into_owned());
        Err(Error::Usage {
            arg: arg.display().to_string(),
            message: format!("{what}; {}", hint(&stem)),
        })
    }

    /// Reads the scenario.
    pub fn load(&self) -> Result<ScenarioDoc> {
        match self {
            Source::File(path) => ScenarioDoc::load(path),
            Source::Builtin(b) => Ok(b.doc()),
        }
    }

    /// True when the argument could also have meant a built-in scenario, so that saying
    /// which one was used tells the user something.
    pub fn is_ambiguous(&self) -> bool {
        match self {
            Source::File(path) => bare_name(path).and_then(get).is_some(),
            Source::Builtin(_) => true,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Builtin(b) => write!(f, "built-in scenario {}", b.name),
            Source::File(path) => {
                // `./name`, so that a file in the current folder does not read as a name.
                let shown = match bare_name(path) {
                    Some(name) => format!("./{name}"),
                    None => path.display().to_string(),
                };
                write!(f, "file {shown}")?;
                match bare_name(path).and_then(get) {
                    Some(b) => write!(f, ", not the built-in scenario {}", b.name),
                    None => Ok(()),
                }
            }
        }
    }
}

/// `arg` as a name when it is one plain component (`x`, `x.toml`, not `./x` or `sims/x`).
fn bare_name(arg: &Path) -> Option<&str> {
    let mut parts = arg.components();
    match (parts.next(), parts.next()) {
        (Some(std::path::Component::Normal(name)), None) => name.to_str(),
        _ => None,
    }
}

/// "did you mean a or b? ..." for the built-in names closest to `name`, or where to look.
fn hint(name: &str) -> String {
    let close = suggest(name);
    let list = "`jitterlab list` shows the built-in scenarios";
    match close.as_slice() {
        [] => list.to_string(),
        [one] => format!("did you mean {one}? ({list})"),
        [rest @ .., last] => format!("did you mean {} or {last}? ({list})", rest.join(", ")),
    }
}

/// Up to three built-in names close to `name` (by edit distance, or that start with it),
/// closest first; only the exact one when there is one.
pub fn suggest(name: &str) -> Vec<&'static str> {
    let query = name.strip_suffix(".toml").unwrap_or(name).to_lowercase();
    let allowed = (query.chars().count() / 3).max(2);
    let mut close: Vec<(usize, &'static str)> = SCENARIOS
        .iter()
        .map(|b| (edit_distance(&query, b.name), b.name))
        .filter(|&(d, n)| d <= allowed || (query.len() >= 3 && n.starts_with(&query)))
        .collect();
    close.sort();
    // An exact name (`sims/brooker-2015.toml` outside a checkout) is the one answer.
    if close.first().is_some_and(|&(d, _)| d == 0) {
        close.truncate(1);
    }
    close.into_iter().take(3).map(|(_, n)| n).collect()
}

/// Levenshtein distance: the fewest one-character insertions, deletions and substitutions.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    // One row of the dynamic-programming table: distances from a's prefix to b's prefixes.
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// One line of `jitterlab list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The scenario's name (a local file's `name`, or its stem when it has none or is invalid).
    pub name: String,
    /// Built into the binary.
    pub builtin: bool,
    /// The local file of that name (`sims/NAME.toml`), if any.
    pub file: Option<PathBuf>,
    /// The local file's text differs from the built-in one.
    pub differs: bool,
    /// The description (the local file's when there is one), or `(invalid: ...)`.
    pub description: String,
}

/// The built-in scenarios and the `*.toml` files of `local` (matched to a built-in by file
/// stem), sorted by name.
pub fn catalog(local: Option<&Path>) -> Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = SCENARIOS
        .iter()
        .map(|b| Entry {
            name: b.name.to_string(),
            builtin: true,
            file: None,
            differs: false,
            description: describe(b.doc()),
        })
        .collect();
    for path in local.map(toml_files).transpose()?.unwrap_or_default() {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let loaded = ScenarioDoc::load(&path);
        let name = match loaded.as_ref().map(|d| d.base()) {
            Ok(Ok(s)) => s.name,
            _ => stem.clone(),
        };
        let description = loaded.map_or_else(|e| format!("(invalid: {e})"), describe);
        // `entries` starts in SCENARIOS order, so a built-in's index is its entry's.
        match SCENARIOS.iter().position(|b| b.name == stem) {
            Some(i) => {
                let text = crate::input::read_text(&path, crate::input::SCENARIO).ok();
                entries[i].differs = text.as_deref() != Some(SCENARIOS[i].text);
                entries[i].file = Some(path);
                entries[i].description = description;
            }
            None => entries.push(Entry {
                name,
                builtin: false,
                file: Some(path),
                differs: false,
                description,
            }),
        }
    }
    entries.sort_by(|a, b| (&a.name, &a.file).cmp(&(&b.name, &b.file)));
    Ok(entries)
}

fn describe(doc: ScenarioDoc) -> String {
    match doc.base() {
        Ok(s) => s.description,
        Err(e) => format!("(invalid: {e})"),
    }
}

fn toml_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_the_sims_folder_sorted() -> Result<()> {
        let sims = Path::new(env!("CARGO_MANIFEST_DIR")).join("sims");
        let mut stems: Vec<String> = toml_files(&sims)?
            .iter()
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        stems.sort();
        let names: Vec<&str> = SCENARIOS.iter().map(|b| b.name).collect();
        assert_eq!(
            names, stems,
            "SCENARIOS must list every sims/*.toml, sorted"
        );
        Ok(())
    }

    #[test]
    fn every_builtin_parses_checks_and_is_named_by_its_file() -> Result<()> {
        for b in SCENARIOS {
            let doc = ScenarioDoc::parse(b.text, b.name, b.name)?;
            assert_eq!(doc.base()?.name, b.name, "`name` of sims/{}.toml", b.name);
            for point in doc.points()? {
                assert_eq!(point.scenario.name, b.name);
            }
            assert!(b.text.starts_with("# "), "{} opens with comments", b.name);
        }
        Ok(())
    }

    #[test]
    fn the_default_is_the_builtin_thundering_herd() {
        assert_eq!(default().text, super::super::BUILTIN);
        assert_eq!(default().doc().origin(), ScenarioDoc::builtin().origin());
    }

    #[test]
    fn names_are_found_with_or_without_toml() {
        assert_eq!(get("brooker-2015").map(|b| b.name), Some("brooker-2015"));
        assert_eq!(
            get("brooker-2015.toml").map(|b| b.name),
            Some("brooker-2015")
        );
        assert_eq!(get("brooker"), None);
        assert!(lookup("nope").is_err());
    }

    #[test]
    fn misspelt_names_get_the_closest_suggestions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(suggest("brookr-2015"), ["brooker-2015"]);
        assert_eq!(suggest("brooker-2015.toml"), ["brooker-2015"]);
        assert_eq!(suggest("thundering_herd.toml"), ["thundering-herd"]);
        assert_eq!(
            suggest("brooker"),
            ["brooker-2015", "brooker-2015-sweep", "brooker-2022-budgets"]
        );
        assert!(suggest("zzz").is_empty());
        let e = lookup("poison-overload").unwrap_err().to_string();
        assert!(e.contains("did you mean poisson-overload?"), "{e}");
    }

    #[test]
    fn arguments_resolve_to_a_file_first_then_a_builtin() -> Result<()> {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let file = manifest.join("sims/brooker-2015.toml");
        assert_eq!(Source::resolve(&file)?, Source::File(file.clone()));
        // No file `brooker-2015` in the current folder (the package root under `cargo test`).
        let named = Source::resolve(Path::new("brooker-2015"))?;
        assert_eq!(named, Source::Builtin(get("brooker-2015").unwrap()));
        assert!(named.is_ambiguous());
        assert_eq!(named.to_string(), "built-in scenario brooker-2015");
        // A path with a folder is only ever a file.
        let e = Source::resolve(Path::new("nowhere/brooker-2015.toml")).unwrap_err();
        assert!(e.is_user_error());
        assert!(
            e.to_string()
                .contains("no such file; did you mean brooker-2015?"),
            "{e}"
        );
        Ok(())
    }
}
