//! Numbers as charts and reports write them (`12 345`, `12.5 ms`), and sweep values read back
//! as numbers.

use crate::time::parse_duration;

/// Parses a sweep value written as in a scenario (`"50ms"`, `100`, `0.5`) as a number: a
/// duration in ms, else a plain number. `None` for anything else (a name, a table).
pub fn sweep_value_number(text: &str) -> Option<f64> {
    let t = text.trim().trim_matches('"');
    if let Ok(v) = t.parse::<f64>() {
        return v.is_finite().then_some(v);
    }
    parse_duration("sweep", t).ok().map(|d| d.as_millis_f64())
}

/// Formats a number with a thin grouping of thousands and at most 3 significant decimals.
pub(crate) fn fmt_number(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a >= 1000.0 {
        let whole = v.round() as i64;
        let s = whole.unsigned_abs().to_string();
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(' ');
            }
            out.push(ch);
        }
        if whole < 0 { format!("-{out}") } else { out }
    } else if a >= 100.0 || (v.fract() == 0.0) {
        format!("{v:.0}")
    } else if a >= 10.0 {
        trim_zeros(format!("{v:.1}"))
    } else if a >= 1.0 {
        trim_zeros(format!("{v:.2}"))
    } else {
        trim_zeros(format!("{v:.3}"))
    }
}

/// [`fmt_number`] with `extra` more decimals (trailing zeros still trimmed), for two numbers
/// that must look apart ([`crate::output::labels::apart`]).
pub(crate) fn fmt_number_extra(v: f64, extra: usize) -> String {
    if extra == 0 || !v.is_finite() {
        return fmt_number(v);
    }
    let a = v.abs();
    let d = extra
        + match a {
            _ if a >= 100.0 => 0,
            _ if a >= 10.0 => 1,
            _ if a >= 1.0 => 2,
            _ => 3,
        };
    let text = trim_zeros(format!("{a:.d$}"));
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut out = String::new();
    for (i, ch) in whole.chars().enumerate() {
        if i > 0 && whole.len() >= 4 && (whole.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(ch);
    }
    if !frac.is_empty() {
        out = format!("{out}.{frac}");
    }
    if v < 0.0 && out.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.insert(0, '-');
    }
    out
}

/// [`fmt_ms`] with `extra` more decimals.
pub(crate) fn fmt_ms_extra(ms: f64, extra: usize) -> String {
    let a = ms.abs();
    if a == 0.0 {
        "0 ms".to_string()
    } else if a < 1.0 {
        format!("{} µs", fmt_number_extra(ms * 1000.0, extra))
    } else if a < 1000.0 {
        format!("{} ms", fmt_number_extra(ms, extra))
    } else if a < 120_000.0 {
        format!("{} s", fmt_number_extra(ms / 1000.0, extra))
    } else {
        format!("{} min", fmt_number_extra(ms / 60_000.0, extra))
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Formats milliseconds with a unit chosen by size: `850 µs`, `12.5 ms`, `2.4 s`, `3.1 min`.
pub(crate) fn fmt_ms(ms: f64) -> String {
    let a = ms.abs();
    if a == 0.0 {
        "0 ms".to_string()
    } else if a < 1.0 {
        format!("{} µs", fmt_number(ms * 1000.0))
    } else if a < 1000.0 {
        format!("{} ms", fmt_number(ms))
    } else if a < 120_000.0 {
        format!("{} s", fmt_number(ms / 1000.0))
    } else {
        format!("{} min", fmt_number(ms / 60_000.0))
    }
}
