//! Finds where a dotted key (`server.workers`, `faults[1].end`) is written in a TOML text,
//! so that a value error can point at its line and column.

use toml::de::{DeTable, DeValue};

/// 1-based `(line, column)` of the deepest written part of `key`, if the key is in the text.
pub fn locate(text: &str, key: &str) -> Option<(usize, usize)> {
    let doc = DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let mut found: Option<usize> = None;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => (n, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (*part, None),
        };
        let (k, v) = table.iter().find(|(k, _)| k.get_ref().as_ref() == name)?;
        found = Some(k.span().start);
        let mut value = v;
        if let Some(idx) = index {
            let DeValue::Array(items) = value.get_ref() else {
                break;
            };
            let item = items.get(idx)?;
            found = Some(item.span().start);
            value = item;
        }
        match value.get_ref() {
            DeValue::Table(t) if i + 1 < parts.len() => table = t,
            _ => break,
        }
    }
    found.map(|offset| line_column(text, offset))
}

/// The dotted path of the key written at byte `offset` (a key's first byte), if any.
pub fn path_at(text: &str, offset: usize) -> Option<String> {
    let doc = DeTable::parse(text).ok()?;
    find_key(doc.get_ref(), offset, "")
}

fn find_key(table: &DeTable<'_>, offset: usize, prefix: &str) -> Option<String> {
    for (k, v) in table.iter() {
        let path = if prefix.is_empty() {
            k.get_ref().to_string()
        } else {
            format!("{prefix}.{}", k.get_ref())
        };
        if k.span().start == offset {
            return Some(path);
        }
        let found =
            match v.get_ref() {
                DeValue::Table(t) => find_key(t, offset, &path),
                DeValue::Array(items) => items.iter().enumerate().find_map(|(i, item)| match item
                    .get_ref()
                {
                    DeValue::Table(t) => find_key(t, offset, &format!("{path}[{i}]")),
                    _ => None,
                }),
                _ => None,
            };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_in_tables_inline_tables_and_arrays() {
        let text = "name = \"x\"\n[server]\nworkers = 0\nservice = { dist = \"exponential\", mean = \"-1s\" }\n[[faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"5s\"\n[[faults]]\nkind = \"slow\"\nend = \"1s\"\n";
        assert_eq!(locate(text, "server.workers"), Some((3, 1)));
        assert_eq!(locate(text, "server.service.mean"), Some((4, 35)));
        assert_eq!(locate(text, "faults[1].end"), Some((11, 1)));
        assert_eq!(locate(text, "client.timeout"), None);
        let at = |needle: &str| path_at(text, text.find(needle).unwrap_or(0));
        assert_eq!(at("workers").as_deref(), Some("server.workers"));
        assert_eq!(at("mean").as_deref(), Some("server.service.mean"));
        assert_eq!(at("kind = \"slow").as_deref(), Some("faults[1].kind"));
    }
}
