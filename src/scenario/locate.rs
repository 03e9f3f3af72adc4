//! Key paths and where they are written in a scenario's TOML text.
//!
//! A key path is what a user writes after `--set` or in `[sweep]`, and what errors name:
//! dotted keys, `[i]` for a list entry, quotes around a key with dots (`faults[1].end`,
//! `sweep."backoff.cap"[1]`). [`locate`] finds the line and column of a path's value, so that
//! an error points at what is wrong; [`path_at`] names the key at a parser error's offset.

use std::fmt;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::error::Position;

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A key in a table.
    Key(String),
    /// An entry of a list, from 0.
    Index(usize),
}

/// A key path, step by step; displayed as users write it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPath(pub Vec<Step>);

impl KeyPath {
    /// Reads `a.b[2]."c.d"`; the error says what is malformed.
    pub fn parse(text: &str) -> Result<KeyPath, String> {
        let mut steps = Vec::new();
        let mut rest = text.trim();
        let malformed = |why: &str| format!("malformed key `{text}`: {why}");
        while !rest.is_empty() {
            if let Some(quoted) = rest.strip_prefix('"') {
                let end = quoted
                    .find('"')
                    .ok_or_else(|| malformed("unclosed quote"))?;
                steps.push(Step::Key(quoted[..end].to_string()));
                rest = &quoted[end + 1..];
            } else {
                let end = rest.find(['.', '[', ']', '"']).unwrap_or(rest.len());
                let name = rest[..end].trim();
                if name.is_empty() {
                    return Err(malformed("an empty key"));
                }
                steps.push(Step::Key(name.to_string()));
                rest = &rest[end..];
            }
            while let Some(index) = rest.strip_prefix('[') {
                let end = index.find(']').ok_or_else(|| malformed("unclosed `[`"))?;
                let i = index[..end]
                    .trim()
                    .parse()
                    .map_err(|_| malformed("an index is not a whole number"))?;
                steps.push(Step::Index(i));
                rest = &index[end + 1..];
            }
            if let Some(next) = rest.strip_prefix('.') {
                if next.is_empty() {
                    return Err(malformed("an empty key"));
                }
                rest = next;
            } else if !rest.is_empty() {
                return Err(malformed("expected `.` or `[` between keys"));
            }
        }
        if steps.is_empty() {
            return Err("the key is empty".to_string());
        }
        Ok(KeyPath(steps))
    }

    /// The path one key deeper.
    pub fn key(&self, name: &str) -> KeyPath {
        self.with(Step::Key(name.to_string()))
    }

    /// The path one list entry deeper.
    pub fn index(&self, i: usize) -> KeyPath {
        self.with(Step::Index(i))
    }

    fn with(&self, step: Step) -> KeyPath {
        let mut steps = self.0.clone();
        steps.push(step);
        KeyPath(steps)
    }

    /// True when `self` is `other` or holds it (`backoff.strategies` holds
    /// `backoff.strategies[1].cap`).
    pub fn holds(&self, other: &KeyPath) -> bool {
        other.0.starts_with(&self.0)
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Index(n) => write!(f, "[{n}]")?,
                Step::Key(name) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    let bare = !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if bare {
                        f.write_str(name)?;
                    } else {
                        write!(f, "{name:?}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Where the value of `path` is written; when only part of the path is written (a default
/// taken for the rest), where the deepest written key or entry is.
pub fn locate(text: &str, path: &KeyPath) -> Option<Position> {
    let doc = DeTable::parse(text).ok()?;
    let mut value: Option<&Spanned<DeValue<'_>>> = None;
    // The start of the deepest written key or entry so far.
    let mut deepest = None;
    for step in &path.0 {
        let next = match (step, value.map(|v| v.get_ref())) {
            (Step::Key(name), None) => key_in(doc.get_ref(), name),
            (Step::Key(name), Some(DeValue::Table(t))) => key_in(t, name),
            (Step::Index(i), Some(DeValue::Array(items))) => {
                items.get(*i).map(|item| (item.span().start, item))
            }
            _ => None,
        };
        let Some((start, v)) = next else {
            return deepest.map(|offset| position(text, offset));
        };
        deepest = Some(start);
        value = Some(v);
    }
    // All written: the value itself (a header table's value is its header).
    value.map(|v| position(text, v.span().start))
}

fn key_in<'a, 'i>(table: &'a DeTable<'i>, name: &str) -> Option<(usize, &'a Spanned<DeValue<'i>>)> {
    table
        .iter()
        .find(|(k, _)| k.get_ref() == name)
        .map(|(k, v)| (k.span().start, v))
}

/// The path of the innermost key whose key or value holds byte `offset` (where a parser
/// error points), if any.
pub fn path_at(text: &str, offset: usize) -> Option<KeyPath> {
    let doc = DeTable::parse(text).ok()?;
    find_in_table(doc.get_ref(), offset, &KeyPath::default())
}

fn find_in_table(table: &DeTable<'_>, offset: usize, prefix: &KeyPath) -> Option<KeyPath> {
    table.iter().find_map(|(k, v)| {
        let path = prefix.key(k.get_ref());
        if k.span().contains(&offset) {
            return Some(path);
        }
        find_in_value(v, offset, path)
    })
}

fn find_in_value(value: &Spanned<DeValue<'_>>, offset: usize, path: KeyPath) -> Option<KeyPath> {
    // A header table's span is its header, not its body: look inside tables whatever it is.
    let inner = match value.get_ref() {
        DeValue::Table(t) => find_in_table(t, offset, &path),
        DeValue::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| find_in_value(item, offset, path.index(i))),
        _ => None,
    };
    inner.or_else(|| value.span().contains(&offset).then_some(path))
}

/// The 1-based line and column (in characters) of byte `offset`.
pub fn position(text: &str, offset: usize) -> Position {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line_start = before.rfind('\n').map_or(0, |nl| nl + 1);
    Position {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> KeyPath {
        KeyPath::parse(text).unwrap()
    }

    fn at(line: usize, column: usize) -> Option<Position> {
        Some(Position { line, column })
    }

    #[test]
    fn paths_read_and_print_as_written() {
        for text in [
            "server.workers",
            "faults[1].end",
            "sweep.\"backoff.cap\"[1]",
            "backoff.strategies[0]",
            "a[1][2].b",
        ] {
            assert_eq!(path(text).to_string(), text);
        }
        assert_eq!(
            path("sweep.\"backoff.cap\"").0,
            [Step::Key("sweep".into()), Step::Key("backoff.cap".into())]
        );
        for bad in ["", "a..b", "a.", "a[x]", "a[1", "\"a", "a]b"] {
            assert!(KeyPath::parse(bad).is_err(), "{bad:?}");
        }
        assert!(path("backoff.strategies").holds(&path("backoff.strategies[1].cap")));
        assert!(path("backoff.cap").holds(&path("backoff.cap")));
        assert!(!path("backoff.cap").holds(&path("backoff.capacity")));
        assert!(!path("backoff.strategies[1]").holds(&path("backoff.strategies")));
    }

    #[test]
    fn finds_values_in_tables_inline_tables_and_arrays() {
        let text = "name = \"x\"\n[server]\nworkers = 0\nservice = { dist = \"exponential\", mean = \"-1s\" }\n[[faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"5s\"\n[[faults]]\nkind = \"slow\"\nend = \"1s\"\n[sweep]\n\"backoff.cap\" = [\"1s\", \"2s\"]\n";
        assert_eq!(locate(text, &path("server.workers")), at(3, 11));
        assert_eq!(locate(text, &path("server.service.mean")), at(4, 42));
        assert_eq!(locate(text, &path("faults[1].end")), at(11, 7));
        assert_eq!(locate(text, &path("sweep.\"backoff.cap\"[1]")), at(13, 24));
        // Not written: the deepest key that is.
        assert_eq!(locate(text, &path("server.queue")), at(2, 2));
        assert_eq!(locate(text, &path("server.service.sd")), at(4, 1));
        assert_eq!(locate(text, &path("faults[2].end")), at(5, 3));
        assert_eq!(locate(text, &path("client.timeout")), None);
    }

    #[test]
    fn names_the_key_at_an_offset() {
        let text = "[server]\nworkers = \"four\"\nservice = { dist = \"x\", mean = 1 }\n[backoff]\nstrategies = [\"full\", { cap = 5 }]\n[sweep]\n\"server.workers\" = [1, 2]\n";
        let at = |needle: &str| path_at(text, text.find(needle).unwrap()).map(|p| p.to_string());
        assert_eq!(at("workers").as_deref(), Some("server.workers"));
        assert_eq!(at("\"four\"").as_deref(), Some("server.workers"));
        assert_eq!(at("mean").as_deref(), Some("server.service.mean"));
        assert_eq!(at("5 }").as_deref(), Some("backoff.strategies[1].cap"));
        assert_eq!(at("2]").as_deref(), Some("sweep.\"server.workers\"[1]"));
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(position("a\nµµx", 6), Position { line: 2, column: 3 });
        // Inside a character: that character.
        assert_eq!(position("a\nµµx", 5), Position { line: 2, column: 2 });
        assert_eq!(position("abc", 0), Position { line: 1, column: 1 });
    }
}
