//! serde's messages about a scenario's structure, told in the user's words.
//!
//! The file is read into serde structs first ([`super::file`]), whose refusals speak Rust:
//! `invalid type: string "four", expected i64`, `expected struct DistFile`, `untagged enum
//! CountOr`. [`reword`] turns such a message into the value as written and what the key
//! allows (`"four"`, `a whole number`), so that a wrong type reads like every other invalid
//! value; a message it does not know (a missing or unknown key) is left as it is.

/// The value and what is allowed, for a serde message about a wrong type or value; `written`
/// is the value's text in the file, when known, shown in preference to serde's account of it.
pub fn reword(message: &str, written: Option<&str>) -> Option<(String, String)> {
    let message = message.trim();
    if let Some(name) = message.strip_prefix("data did not match any variant of untagged enum ") {
        let allowed = match name.trim() {
            "CountOr" => "a whole number, or a word this key allows (such as \"unlimited\")",
            "RetryOnItem" => "a status code such as 503, or a word such as \"timeout\"",
            _ => return None,
        };
        return Some((written?.to_string(), allowed.to_string()));
    }
    let rest = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))?;
    let (found, expected) = rest.rsplit_once(", expected ")?;
    let value = match written {
        Some(text) => text.to_string(),
        None => found_value(found),
    };
    Some((value, allowed(expected.trim())))
}

/// serde's account of a value (`string "four"`, ``integer `5` ``) as a user writes it.
fn found_value(found: &str) -> String {
    if let Some(s) = found.strip_prefix("string ") {
        return s.to_string();
    }
    if let (Some(a), Some(b)) = (found.find('`'), found.rfind('`'))
        && a < b
    {
        return found[a + 1..b].to_string();
    }
    match found {
        "sequence" => "a list".to_string(),
        "map" => "a table".to_string(),
        other => other.to_string(),
    }
}

/// What serde expected (`i64`, `a sequence`, `struct ServerFile`), in words.
fn allowed(expected: &str) -> String {
    let words = match expected {
        "i8" | "i16" | "i32" | "i64" | "i128" => "a whole number",
        "u8" | "u16" | "u64" | "u128" | "usize" => "a whole number, 0 or more",
        "u32" => "a whole number from 0 to 4294967295",
        "f32" | "f64" => "a number",
        "a string" | "a borrowed string" => "text in quotes",
        "a boolean" => "true or false",
        "a sequence" => "a list [...]",
        "a map" => "a table",
        s if s.starts_with("struct ") => "a table",
        s => return s.to_string(),
    };
    words.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(message: &str, written: Option<&str>) -> Option<(String, String)> {
        reword(message, written)
    }

    #[test]
    fn rust_types_become_words() {
        let r = |m: &str| {
            let (value, allowed) = words(m, None).unwrap();
            format!("{value}: {allowed}")
        };
        assert_eq!(
            r("invalid type: string \"four\", expected i64"),
            "\"four\": a whole number"
        );
        assert_eq!(
            r("invalid value: integer `-1`, expected u32"),
            "-1: a whole number from 0 to 4294967295"
        );
        assert_eq!(
            r("invalid type: integer `5`, expected struct DistFile"),
            "5: a table"
        );
        assert_eq!(
            r("invalid type: sequence, expected i64"),
            "a list: a whole number"
        );
        assert_eq!(
            r("invalid type: integer `3`, expected a boolean"),
            "3: true or false"
        );
        assert_eq!(
            r("invalid type: floating point `1.5`, expected u64"),
            "1.5: a whole number, 0 or more"
        );
        assert_eq!(
            r("invalid type: integer `5`, expected a sequence"),
            "5: a list [...]"
        );
        assert_eq!(
            words("invalid type: sequence, expected f64", Some("[1, 2]"))
                .unwrap()
                .0,
            "[1, 2]"
        );
        let (value, allowed) = words(
            "data did not match any variant of untagged enum CountOr",
            Some("true"),
        )
        .unwrap();
        assert_eq!(
            (value.as_str(), allowed.contains("whole number")),
            ("true", true)
        );
        assert_eq!(words("missing field `burst`", None), None);
        assert_eq!(
            words("unknown field `capp`, expected one of `cap`", None),
            None
        );
    }
}
