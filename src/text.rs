//! User text made safe to print: escaped and shortened.
//!
//! Names, values, keys and paths come from files and command lines of any length and content.
//! Printed raw, a control character rewrites the terminal (`\u{1b}[2J` clears it, a `\r`
//! overwrites the line before it) and a name of 65 536 characters floods the screen or
//! overflows a column width. Everything jitterlab echoes to a person goes through [`shown`]
//! (one value: a table cell, a name in a note) or [`for_terminal`] (a whole line: an error,
//! a warning), which escape every control and bidirectional-formatting character (`\n`,
//! `\u{1b}`) and cut what is too long in the middle, saying how long it was.

use std::borrow::Cow;
use std::fmt::Write;

/// The most characters [`shown`] keeps of a value (the ellipsis and length come on top).
pub const SHOWN_MAX: usize = 64;

/// The longest word (a run of characters without a space) [`for_terminal`] keeps whole: a
/// file path, a key path, a number. A 300-digit number or a name of thousands of characters is
/// cut in the middle.
pub const WORD_MAX: usize = 160;

/// The longest path (a word with a `/` in it) [`for_terminal`] keeps whole: the user's own
/// path is shown as it is, however deep (Linux's `PATH_MAX`).
pub const PATH_MAX: usize = 4096;

/// The longest line [`for_terminal`] prints: room for two paths at [`PATH_MAX`].
pub const LINE_MAX: usize = 10_000;

/// True for a character that must never reach a terminal raw: control characters (C0, DEL,
/// C1) and the invisible formatting characters that reorder or hide text (bidirectional
/// overrides and isolates, zero-width characters, the byte-order mark).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// `s` with every unsafe character ([`is_unsafe`]) written as an escape: `\n`, `\r`, `\t`,
/// else `\u{1b}`. A backslash is kept as it is.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` cut to at most `max` characters when longer: its start and end around `…`, then how
/// many characters it had (`12345…890 (300 characters)`), so that two long values still read
/// as different. Counts characters, never splits one.
pub fn shorten(s: &str, max: usize) -> Cow<'_, str> {
    let n = s.chars().count();
    if n <= max {
        return Cow::Borrowed(s);
    }
    let tail = max / 4;
    let head = max.saturating_sub(tail + 1);
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    Cow::Owned(format!("{start}…{end} ({n} characters)"))
}

/// One value (a name, a cell) as printed: escaped, then shortened to [`SHOWN_MAX`].
pub fn shown(s: &str) -> String {
    let escaped = escape(s);
    shorten(&escaped, SHOWN_MAX).into_owned()
}

/// A whole line of text for a person (an error, a note): every unsafe character escaped,
/// every word longer than [`WORD_MAX`] shortened (a path, with a `/`, only beyond
/// [`PATH_MAX`]), the line cut at [`LINE_MAX`].
pub fn for_terminal(line: &str) -> String {
    let escaped = escape(line);
    let mut out = String::with_capacity(escaped.len().min(LINE_MAX + 64));
    for (i, word) in escaped.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let max = if word.contains('/') {
            PATH_MAX
        } else {
            WORD_MAX
        };
        out.push_str(&shorten(word, max));
    }
    shorten(&out, LINE_MAX).into_owned()
}

/// Pads `s` with spaces to `width` characters on the left (`right = false`: on the right):
/// the table layout of `format!("{s:<w$}")` for any width (a format width above 65 535 is a
/// panic).
pub fn pad(s: &str, width: usize, right: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(s.chars().count()));
    if right {
        fill + s
    } else {
        s.to_string() + &fill
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_controls_and_cuts_long_values() {
        assert_eq!(escape("a\u{1b}[2Jb\n\r\t"), "a\\u{1b}[2Jb\\n\\r\\t");
        assert_eq!(escape("rtl \u{202e}x"), "rtl \\u{202e}x");
        assert!(matches!(escape("plain µs"), Cow::Borrowed(_)));
        let digits = "9".repeat(300);
        let cut = shorten(&digits, 40);
        assert!(cut.ends_with("9 (300 characters)"), "{cut}");
        assert!(cut.chars().count() < 70, "{cut}");
        assert_eq!(shorten("short", 40), "short");
        assert_eq!(pad("ab", 4, false), "ab  ");
        assert_eq!(pad("ab", 4, true), "  ab");
        assert_eq!(pad("abcdef", 4, true), "abcdef");
        let line = for_terminal(&format!("error: `x`: {digits}: a number\u{7}"));
        // The word cut is `999...9:` (301 characters).
        assert!(
            line.starts_with("error: `x`: 999")
                && line.ends_with("(301 characters) a number\\u{7}"),
            "{line}"
        );
        assert!(!line.contains(&"9".repeat(WORD_MAX + 1)), "{line}");
        // A path is the user's own: shown whole, however deep.
        let path = format!("/tmp/{}/scenario.toml", "deep/".repeat(100));
        let line = for_terminal(&format!("error: {path}: No such file or directory"));
        assert!(line.contains(&path), "{line}");
    }

    proptest! {
        /// Whatever a value holds, what is printed has no unsafe character, a bounded length,
        /// and is the value itself when it was short and safe.
        #[test]
        fn any_value_prints_safe_and_bounded(s in ".*", long in 0usize..70_000) {
            for value in [s.clone(), s.repeat(long / s.len().max(1) + 1)] {
                let one = shown(&value);
                prop_assert!(!one.chars().any(is_unsafe), "{one:?}");
                prop_assert!(one.chars().count() <= SHOWN_MAX + 40, "{}", one.len());
                if value.chars().count() <= SHOWN_MAX && !value.chars().any(is_unsafe) {
                    prop_assert_eq!(&one, &value);
                }
                let line = for_terminal(&format!("error: invalid value for `k`: {value}: a name"));
                prop_assert!(!line.chars().any(is_unsafe));
                prop_assert!(line.chars().count() <= LINE_MAX + 40);
                prop_assert!(line.split(' ').all(|w| w.chars().count() <= PATH_MAX + 40));
            }
        }

        /// Any char, control characters and astral planes included, survives: short text
        /// round-trips through the escape when it has nothing to escape.
        #[test]
        fn escaping_keeps_safe_text(s in "\\PC{0,200}") {
            let safe: String = s.chars().filter(|c| !is_unsafe(*c)).collect();
            prop_assert_eq!(escape(&safe), safe.as_str());
        }
    }
}
