//! The one palette of jitterlab: a strategy's colour comes from its name, the same in every
//! chart, report, `delays --plot`, the playground and the notebooks, whatever else is in the
//! run; viridis for heat maps with its bright end the better one. The charts draw with it,
//! and `palette.json` hands a run's colours to whatever else draws from the folder.
//!
//! Twelve colours: Okabe & Ito's colour-blind-safe seven without black (it clashes with the
//! grey of fault bands and first attempts) and with yellow darkened (Okabe–Ito yellow is
//! 1.3:1 on white), then five of Paul Tol's. Every one stands at least 2.2:1 against white,
//! as a line as well as text. Each jitter kind and each preset has its home colour
//! ([`HOMES`]); every other name takes the first colour in palette order that no strategy
//! of the run holds. Two names sharing a home in one run: the first keeps it, the second is
//! treated as another name.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::atomic::write_atomic;
use crate::error::{Error, Result};

/// `palette.json`.
pub const FILE: &str = crate::folder::names::PALETTE;

/// The palette, in the order free colours are taken: Okabe & Ito (2008) first, reordered so
/// that the first colours are the most distinct on white, black left out and yellow darkened;
/// then Paul Tol's indigo, wine, rose, green and a brown.
pub const COLORS: [(&str, [u8; 3]); 12] = [
    ("blue", [0x00, 0x72, 0xB2]),
    ("vermillion", [0xD5, 0x5E, 0x00]),
    ("bluish green", [0x00, 0x9E, 0x73]),
    ("reddish purple", [0xCC, 0x79, 0xA7]),
    ("orange", [0xE6, 0x9F, 0x00]),
    ("sky blue", [0x56, 0xB4, 0xE9]),
    ("dark yellow", [0x90, 0x89, 0x28]),
    ("indigo", [0x33, 0x22, 0x88]),
    ("wine", [0x88, 0x22, 0x55]),
    ("rose", [0xCC, 0x66, 0x77]),
    ("green", [0x11, 0x77, 0x33]),
    ("brown", [0x8C, 0x51, 0x0A]),
];

/// The home colour (an index into [`COLORS`]) of every built-in name: the jitter kinds
/// (distinct among themselves, the four of the herd first in palette order) and the presets
/// (distinct among themselves but for two pairs that no scenario sets side by side:
/// `aws-standard-dynamodb` and `finagle`, `dotnet-resilience` and `envoy`). A test keeps
/// it in step with `Jitter::ALL` and `presets::NAMES`.
pub const HOMES: [(&str, usize); 23] = [
    ("no_jitter", 0),
    ("full", 1),
    ("equal", 2),
    ("decorrelated", 3),
    ("constant", 5),
    ("decorrelated_v2", 7),
    ("proportional", 8),
    ("none", 9),
    ("additive", 10),
    ("google-api-core", 0),
    ("resilience4j", 1),
    ("client-go", 2),
    ("client-go-backoff", 3),
    ("aws-standard", 4),
    ("aws-adaptive", 5),
    ("aws-standard-dynamodb", 6),
    ("aws-standard-legacy", 7),
    ("grpc", 8),
    ("grpc-hedging", 9),
    ("polly-v8", 10),
    ("dotnet-resilience", 11),
    ("finagle", 6),
    ("envoy", 11),
];

/// First attempts in the herd chart: a mid grey that stands 2.8:1 on white.
pub const FIRST_ATTEMPTS: [u8; 3] = [0x99, 0x99, 0x99];
/// Fault windows and triggers: a neutral grey, drawn light, so that no band takes the colour
/// of a strategy (vermillion and orange are two of them).
pub const FAULT: [u8; 3] = [0x80, 0x80, 0x80];
/// Text, axes and reference lines.
pub const INK: [u8; 3] = [0x33, 0x33, 0x33];

/// `#rrggbb`.
pub fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// The home colour of a built-in name ([`HOMES`]).
pub fn home(name: &str) -> Option<usize> {
    HOMES.iter().find(|h| h.0 == name).map(|h| h.1)
}

/// The colour (an index into [`COLORS`]) of each of a run's strategies, named in the run's
/// order: a built-in name its home, every other name the first colour no strategy of the
/// run holds; past twelve strategies the colours come round again.
pub fn slots<S: AsRef<str>>(names: &[S]) -> Vec<usize> {
    let mut taken = [false; COLORS.len()];
    let mut out: Vec<Option<usize>> = names
        .iter()
        .map(|n| {
            let h = home(n.as_ref())?;
            (!std::mem::replace(&mut taken[h], true)).then_some(h)
        })
        .collect();
    for slot in out.iter_mut().filter(|s| s.is_none()) {
        if taken.iter().all(|t| *t) {
            taken = [false; COLORS.len()];
        }
        let c = (0..COLORS.len()).find(|&k| !taken[k]).unwrap_or(0);
        taken[c] = true;
        *slot = Some(c);
    }
    out.into_iter().map(|s| s.unwrap_or(0)).collect()
}

/// The colour at `slot` ([`slots`]).
pub fn strategy_color(slot: usize) -> [u8; 3] {
    COLORS[slot % COLORS.len()].1
}

/// The colour of a strategy named `name` in a run of `names`.
pub fn color_of<S: AsRef<str>>(names: &[S], name: &str) -> [u8; 3] {
    let at = names.iter().position(|n| n.as_ref() == name);
    strategy_color(at.map_or(0, |i| slots(names)[i]))
}

#[derive(Serialize)]
struct Strategy<'a> {
    name: &'a str,
    color: String,
}

#[derive(Serialize)]
struct HeatMaps {
    colormap: &'static str,
    better: &'static str,
}

#[derive(Serialize)]
struct Palette<'a> {
    palette: &'static str,
    strategies: Vec<Strategy<'a>>,
    first_attempts: String,
    fault: String,
    ink: String,
    heat_maps: HeatMaps,
}

/// The text of `palette.json` for strategies in the run's order.
pub fn json(strategies: &[String]) -> String {
    let palette = Palette {
        palette: "Okabe-Ito and Tol, by name",
        strategies: (strategies.iter().zip(slots(strategies)))
            .map(|(name, slot)| Strategy {
                name,
                color: hex(strategy_color(slot)),
            })
            .collect(),
        first_attempts: hex(FIRST_ATTEMPTS),
        fault: hex(FAULT),
        ink: hex(INK),
        heat_maps: HeatMaps {
            colormap: "viridis",
            better: "high end (yellow): reversed for a metric that is better low",
        },
    };
    // A struct of strings and lists: serialising it cannot fail.
    serde_json::to_string_pretty(&palette).unwrap_or_default() + "\n"
}

/// Writes `dir/palette.json` (atomically) for strategies in the run's order.
pub fn write(dir: &Path, strategies: &[String]) -> Result<PathBuf> {
    let path = dir.join(FILE);
    if !dir.is_dir() {
        return Err(Error::io(dir, std::io::ErrorKind::NotFound.into()));
    }
    write_atomic(&path, json(strategies).as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_file_reads_back_with_colours_by_name() {
        let text = json(&names(&["no_jitter", "full"]));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["strategies"][0]["name"], "no_jitter");
        assert_eq!(v["strategies"][0]["color"], "#0072b2");
        assert_eq!(v["strategies"][1]["color"], "#d55e00");
        assert_eq!(v["heat_maps"]["colormap"], "viridis");
        // The same names the other way round keep their colours.
        let text = json(&names(&["full", "no_jitter"]));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["strategies"][0]["color"], "#d55e00");
    }

    #[test]
    fn a_strategy_keeps_its_colour_whatever_else_is_in_the_run() {
        let runs = [
            names(&["no_jitter", "full", "equal", "decorrelated"]),
            names(&["full"]),
            names(&["immediate", "backoff", "full", "aws-standard"]),
            names(&["aws-standard", "x", "y", "z", "full", "no_jitter"]),
            names(&["decorrelated", "full+budget", "full"]),
        ];
        for run in &runs {
            let at = run.iter().position(|n| n == "full").unwrap();
            assert_eq!(slots(run)[at], 1, "{run:?}");
        }
        // Every built-in name keeps its home among any other built-ins of its family.
        for (name, h) in HOMES {
            let mut run: Vec<&str> = HOMES
                .iter()
                .filter(|o| o.1 != h || o.0 == name)
                .map(|o| o.0)
                .collect();
            run.rotate_left(3);
            let at = run.iter().position(|n| *n == name).unwrap();
            assert_eq!(slots(&run)[at], h, "{name} in {run:?}");
        }
        // Other names take the free colours in palette order; none repeats within twelve.
        assert_eq!(slots(&names(&["a", "full", "b"])), [0, 1, 2]);
        let twelve: Vec<String> = (0..12).map(|i| format!("s{i}")).collect();
        let mut s = slots(&twelve);
        s.sort_unstable();
        s.dedup();
        assert_eq!(
            s.len(),
            12,
            "a ninth (to a twelfth) series takes a colour of its own"
        );
        // Two built-ins sharing a home: the second takes a free colour.
        assert_eq!(slots(&names(&["finagle", "aws-standard-dynamodb"])), [6, 0]);
    }

    #[test]
    fn every_jitter_kind_and_preset_has_a_home_and_kinds_do_not_share() {
        let kinds = crate::backoff::Jitter::ALL.map(|j| j.name());
        let presets = crate::presets::NAMES;
        let listed: Vec<&str> = HOMES.iter().map(|h| h.0).collect();
        let mut all: Vec<&str> = kinds.iter().chain(presets.iter()).copied().collect();
        all.sort_unstable();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted, all,
            "HOMES lists every jitter kind and preset, once"
        );
        let mut of_kinds: Vec<usize> = kinds.iter().filter_map(|k| home(k)).collect();
        of_kinds.sort_unstable();
        of_kinds.dedup();
        assert_eq!(of_kinds.len(), kinds.len());
    }

    #[test]
    fn no_colour_is_faint_on_white_nor_black_nor_grey() {
        for (name, c) in COLORS {
            let ratio = crate::output::plot::check::contrast(c, [255, 255, 255]);
            assert!(ratio >= 2.2, "{name}: {ratio:.2}");
            let spread = c.iter().max().unwrap() - c.iter().min().unwrap();
            assert!(spread >= 0x40, "{name} is too near a grey");
        }
    }
}
