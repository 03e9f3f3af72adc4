//! The one palette of a result folder: Okabe–Ito, colour-blind safe, a fixed colour per
//! strategy within a run (its place in the scenario's order), and viridis for heat maps with
//! its bright end the better one. The charts draw with it, and `palette.json` hands it to
//! whatever else draws from the folder (the notebooks), so that a strategy looks the same
//! everywhere.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::atomic::write_atomic;
use crate::error::{Error, Result};

/// `palette.json`.
pub const FILE: &str = crate::folder::names::PALETTE;

/// Okabe & Ito (2008), reordered so that the first colours are the most distinct on white;
/// yellow last. A strategy takes the colour of its place in the run, modulo 8.
pub const OKABE_ITO: [(&str, [u8; 3]); 8] = [
    ("blue", [0x00, 0x72, 0xB2]),
    ("vermillion", [0xD5, 0x5E, 0x00]),
    ("bluish green", [0x00, 0x9E, 0x73]),
    ("reddish purple", [0xCC, 0x79, 0xA7]),
    ("orange", [0xE6, 0x9F, 0x00]),
    ("sky blue", [0x56, 0xB4, 0xE9]),
    ("black", [0x00, 0x00, 0x00]),
    ("yellow", [0xF0, 0xE4, 0x42]),
];

/// Okabe–Ito yellow is too light to read as text on white (1.3:1); a strategy drawn in yellow
/// gets its titles and labels in this darker yellow (the same hue at 60 % of its value, 3.6:1),
/// while its lines and bars keep the palette's yellow.
pub const YELLOW_TEXT: [u8; 3] = [0x90, 0x89, 0x28];

/// First attempts in the herd chart.
pub const FIRST_ATTEMPTS: [u8; 3] = [0xB8, 0xB8, 0xB8];
/// Fault windows and triggers: a neutral grey, drawn light, so that no band takes the colour
/// of a strategy (vermillion and orange are two of them).
pub const FAULT: [u8; 3] = [0x80, 0x80, 0x80];
/// Text, axes and reference lines.
pub const INK: [u8; 3] = [0x33, 0x33, 0x33];

/// `#rrggbb`.
pub fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// The colour of the strategy at `index` in the run's order.
pub fn strategy_color(index: usize) -> [u8; 3] {
    OKABE_ITO[index % OKABE_ITO.len()].1
}

/// The colour of the strategy at `index` for text on white: its own, or [`YELLOW_TEXT`] for
/// yellow.
pub fn strategy_text_color(index: usize) -> [u8; 3] {
    match strategy_color(index) {
        c if c == OKABE_ITO[7].1 => YELLOW_TEXT,
        c => c,
    }
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
        palette: "Okabe-Ito",
        strategies: (strategies.iter().enumerate())
            .map(|(i, name)| Strategy {
                name,
                color: hex(strategy_color(i)),
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

    #[test]
    fn strategies_keep_their_place_and_the_file_reads_back() {
        let names = ["no_jitter".to_string(), "full".to_string()];
        let text = json(&names);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["palette"], "Okabe-Ito");
        assert_eq!(v["strategies"][0]["name"], "no_jitter");
        assert_eq!(v["strategies"][0]["color"], "#0072b2");
        assert_eq!(v["strategies"][1]["color"], "#d55e00");
        assert_eq!(v["heat_maps"]["colormap"], "viridis");
        // The ninth strategy wraps round to the first colour.
        assert_eq!(strategy_color(8), strategy_color(0));
    }
}
