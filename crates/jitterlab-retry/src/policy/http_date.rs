//! HTTP-dates (RFC 9110 §5.6.7) as `Retry-After` carries them: the preferred IMF-fixdate
//! (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms a recipient must still accept,
//! RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
//!
//! What the `httpdate` crate accepts, no more and no less (its tests, run against this one,
//! check it): surrounding whitespace trimmed, years 1970 to 9999, a two-digit RFC 850 year
//! below 70 read as 20xx, and a date refused unless its weekday and day of the month are
//! those of the calendar. Written here because parsing is all the engine needs of a date.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// A calendar date and time of day in GMT, its weekday 0 (Monday) to 6 (Sunday).
struct Civil {
    year: u64,
    month: u64,
    day: u64,
    secs: u64,
    weekday: usize,
}

/// The instant `value` names, or `None` if it is not an HTTP-date of a real day.
pub(crate) fn parse(value: &str) -> Option<SystemTime> {
    if !value.is_ascii() {
        return None;
    }
    let s = value.trim().as_bytes();
    let civil = imf_fixdate(s)
        .or_else(|| rfc850(s))
        .or_else(|| asctime(s))?;
    let days = days_since_epoch(&civil)?;
    // 1970-01-01 was a Thursday (3, counting Monday as 0).
    if (days + 3) % 7 != civil.weekday as u64 {
        return None;
    }
    Some(UNIX_EPOCH + Duration::from_secs(days * 86_400 + civil.secs))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`.
fn imf_fixdate(s: &[u8]) -> Option<Civil> {
    if s.len() != 29 || &s[3..5] != b", " || s[7] != b' ' || s[11] != b' ' || s[16] != b' ' {
        return None;
    }
    if &s[25..] != b" GMT" {
        return None;
    }
    Some(Civil {
        year: digits(&s[12..16])?,
        month: month(&s[8..11])?,
        day: digits(&s[5..7])?,
        secs: time_of_day(&s[17..25])?,
        weekday: weekday_abbr(&s[..3])?,
    })
}

/// `Sunday, 06-Nov-94 08:49:37 GMT`.
fn rfc850(s: &[u8]) -> Option<Civil> {
    let weekday = WEEKDAYS
        .iter()
        .position(|name| s.starts_with(name.as_bytes()))?;
    let s = s[WEEKDAYS[weekday].len()..].strip_prefix(b", ")?;
    // httpdate reads the byte between the year and the time as anything; so does this.
    if s.len() != 22 || s[2] != b'-' || s[6] != b'-' || &s[18..] != b" GMT" {
        return None;
    }
    let yy = digits(&s[7..9])?;
    Some(Civil {
        year: if yy < 70 { 2000 + yy } else { 1900 + yy },
        month: month(&s[3..6])?,
        day: digits(&s[0..2])?,
        secs: time_of_day(&s[10..18])?,
        weekday,
    })
}

/// `Sun Nov  6 08:49:37 1994` (a day below 10 after a space).
fn asctime(s: &[u8]) -> Option<Civil> {
    if s.len() != 24 || s[3] != b' ' || s[7] != b' ' || s[10] != b' ' || s[19] != b' ' {
        return None;
    }
    let day = match s[8] {
        b' ' => digits(&s[9..10])?,
        _ => digits(&s[8..10])?,
    };
    Some(Civil {
        year: digits(&s[20..24])?,
        month: month(&s[4..7])?,
        day,
        secs: time_of_day(&s[11..19])?,
        weekday: weekday_abbr(&s[..3])?,
    })
}

/// `08:49:37` in seconds.
fn time_of_day(s: &[u8]) -> Option<u64> {
    if s[2] != b':' || s[5] != b':' {
        return None;
    }
    let (h, m, sec) = (digits(&s[0..2])?, digits(&s[3..5])?, digits(&s[6..8])?);
    (h < 24 && m < 60 && sec < 60).then_some(h * 3600 + m * 60 + sec)
}

/// A month's abbreviation, 1 to 12.
fn month(s: &[u8]) -> Option<u64> {
    Some(MONTHS.iter().position(|m| m.as_slice() == s)? as u64 + 1)
}

/// A weekday's abbreviation (`Mon`), 0 to 6.
fn weekday_abbr(s: &[u8]) -> Option<usize> {
    WEEKDAYS.iter().position(|name| &name.as_bytes()[..3] == s)
}

/// ASCII digits only, as a number.
fn digits(s: &[u8]) -> Option<u64> {
    s.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
    })
}

/// Days from 1970-01-01 to the date, if the date exists (years 1970 to 9999).
fn days_since_epoch(c: &Civil) -> Option<u64> {
    let leap =
        c.year.is_multiple_of(4) && (!c.year.is_multiple_of(100) || c.year.is_multiple_of(400));
    let lengths = [
        31,
        28 + u64::from(leap),
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let month = usize::try_from(c.month - 1).ok()?;
    if !(1970..=9999).contains(&c.year) || c.day == 0 || c.day > lengths[month] {
        return None;
    }
    let y = c.year - 1;
    let leap_days = (y / 4 - y / 100 + y / 400) - (1969 / 4 - 1969 / 100 + 1969 / 400);
    let before: u64 = lengths[..month].iter().sum();
    Some((c.year - 1970) * 365 + leap_days + before + c.day - 1)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::parse;

    /// The three forms of one instant, from httpdate's IMF-fixdate.
    fn forms(secs: u64) -> [String; 3] {
        let imf = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs));
        let (wd, day, mon, year, time) = (
            &imf[..3],
            &imf[5..7],
            &imf[8..11],
            &imf[12..16],
            &imf[17..25],
        );
        let long = super::WEEKDAYS.iter().find(|w| w.starts_with(wd)).unwrap();
        let asc_day = day
            .strip_prefix('0')
            .map_or(day.to_string(), |d| format!(" {d}"));
        [
            imf.clone(),
            format!("{long}, {day}-{mon}-{} {time} GMT", &year[2..]),
            format!("{wd} {mon} {asc_day} {time} {year}"),
        ]
    }

    /// Every form of many instants, and each with one byte changed (a wrong weekday, day,
    /// digit, separator), parses as httpdate parses it.
    #[test]
    fn parses_as_httpdate_does() {
        let mut checked = 0;
        let mut accepted = 0;
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..3000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Up to the end of 9999, and the edges.
            let secs = match i {
                0 => 0,
                1 => 253_402_300_799,
                2 => 951_782_400, // 2000-02-29
                _ => x % 253_402_300_800,
            };
            for form in forms(secs) {
                let mut variants = vec![form.clone(), format!("  {form} ")];
                for (pos, b) in form.bytes().enumerate().filter(|_| x.is_multiple_of(3)) {
                    for with in [b'0', b'1', b'2', b'3', b'9', b' ', b'-', b'a', b':'] {
                        if with != b {
                            let mut v = form.clone().into_bytes();
                            v[pos] = with;
                            variants.push(String::from_utf8(v).unwrap());
                        }
                    }
                }
                for v in variants {
                    let theirs = httpdate::parse_http_date(&v).ok();
                    assert_eq!(parse(&v), theirs, "{v:?}");
                    checked += 1;
                    accepted += usize::from(theirs.is_some());
                }
            }
        }
        assert!(
            checked > 100_000 && accepted > 10_000,
            "{checked} checked, {accepted} accepted"
        );
    }

    #[test]
    fn reads_the_rfcs_examples() {
        let at = UNIX_EPOCH + Duration::from_secs(784_111_777);
        for s in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse(s), Some(at), "{s}");
        }
        for s in [
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "Thu, 29 Feb 2001 00:00:00 GMT",
            "",
        ] {
            assert_eq!(parse(s), None, "{s}");
        }
    }
}
