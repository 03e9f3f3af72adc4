//! The `layers` chart of a chain of services: for each layer, the attempts that reached it per
//! request of the clients (its amplification, mean over replications), one bar per candidate,
//! one panel per world point (the faults at the last layer, the load).

use super::bars::{Bar, BarChart, Panel, Series};
use crate::metric::Metric;
use crate::output::design::Design;
use crate::output::results::{LayersRow, ResultFolder, fmt_number};

/// At most this many world points get a panel.
const MAX_PANELS: usize = 4;

pub(crate) fn build(f: &ResultFolder, design: &Design) -> Option<(String, String, BarChart)> {
    let rows = f.layers.as_ref()?;
    let layers = rows.iter().map(|r| r.layer).max()? as usize;
    let mut names = vec![String::new(); layers];
    for r in rows {
        names[r.layer as usize - 1] = format!("{} {}", r.layer, r.name);
    }
    // The candidates of the first world point name the series (every world point has the same
    // candidates: the choice keys and strategies).
    let first = design.candidates(0);
    let series: Vec<Series> = first
        .iter()
        .map(|c| Series {
            label: design.candidate_label(f, c),
            color: c.color,
            hollow: false,
        })
        .collect();
    let (panels, facts): (Vec<Panel>, Vec<String>) = (0..design.worlds.len().min(MAX_PANELS))
        .map(|w| panel(f, design, w, rows, &names))
        .unzip();
    if panels
        .iter()
        .all(|p| p.values.iter().flatten().all(Option::is_none))
    {
        return None;
    }
    let title = "Attempts per client request reaching each layer".to_string();
    let more = design.worlds.len().saturating_sub(MAX_PANELS);
    let guide = format!(
        "Each group is one layer of the chain, in call order; each bar the attempts that reached it per request of the clients, averaged over replications (layers.csv). \
         When every layer retries, the bars multiply down the chain (3 attempts at 3 layers: 3, 9, 27); a remedy shows as the bars it cuts. \
         At the last layer:{}{}",
        facts.join(""),
        if more > 0 {
            format!(" ({more} more world points in layers.csv.)")
        } else {
            String::new()
        }
    );
    Some((
        title,
        guide,
        BarChart {
            subtitle: if panels.len() > 1 {
                "one panel per point of the world keys".into()
            } else {
                String::new()
            },
            x_desc: "layer".into(),
            series,
            panels,
        },
    ))
}

/// The panel of world point `w`: per candidate the mean amplification at each layer (hollow
/// below the success target), and a sentence on the last layer for the guide.
fn panel(
    f: &ResultFolder,
    design: &Design,
    w: usize,
    rows: &[LayersRow],
    names: &[String],
) -> (Panel, String) {
    let layers = names.len();
    let mut values = Vec::new();
    let mut last = Vec::new();
    for c in design.candidates(w) {
        // The mean over replications, layer by layer.
        let mut sums = vec![(0.0, 0u32); layers];
        for r in rows
            .iter()
            .filter(|r| r.point == c.point && r.strategy == c.strategy)
        {
            if r.amplification.is_finite() {
                let slot = &mut sums[r.layer as usize - 1];
                slot.0 += r.amplification;
                slot.1 += 1;
            }
        }
        let hollow = !design.meets_target(f, c);
        let means: Vec<Option<Bar>> = sums
            .iter()
            .map(|&(sum, n)| {
                (n > 0).then(|| Bar {
                    hollow,
                    ..Bar::exact(sum / f64::from(n))
                })
            })
            .collect();
        if let Some(Some(b)) = means.last() {
            let success = Design::mean(f, c, Metric::SuccessRate);
            last.push(format!(
                "{} {} ({} succeeded)",
                design.candidate_label(f, c),
                fmt_number(b.mean),
                crate::output::labels::percent_near(success, design.target)
            ));
        }
        values.push(means);
    }
    let world = design.world_label(f, w);
    let fact = match (last.is_empty(), world.is_empty()) {
        (true, _) => String::new(),
        (false, true) => format!(" {}.", last.join(", ")),
        (false, false) => format!(" With {world}: {}.", last.join(", ")),
    };
    let panel = Panel {
        caption: world,
        groups: names.to_vec(),
        y_desc: "attempts per client request".into(),
        values,
        fmt: |v| fmt_number(v),
        scale: 1.0,
        line: None,
        y_top: None,
    };
    (panel, fact)
}
