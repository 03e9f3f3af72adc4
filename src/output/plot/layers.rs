//! The `layers` chart of a chain of services: for each layer, the attempts that reached it per
//! request of the clients (its amplification), one bar per strategy, at the first point.

use super::dist::Bars;
use crate::output::results::{ResultFolder, fmt_number};

pub(crate) fn build(f: &ResultFolder) -> Option<(String, String, Bars)> {
    let rows = f.layers.as_ref()?;
    let point = f.first_point().index;
    let rows: Vec<_> = rows.iter().filter(|r| r.point == point).collect();
    let layers = rows.iter().map(|r| r.layer).max()? as usize;
    let mut labels = vec![String::new(); layers];
    for r in &rows {
        labels[r.layer as usize - 1] = format!("{} {}", r.layer, r.name);
    }
    let mut bars = Vec::new();
    for (i, s) in f.strategies.iter().enumerate() {
        // The mean over replications, layer by layer.
        let mut sums = vec![(0.0, 0u32); layers];
        for r in rows.iter().filter(|r| &r.strategy == s) {
            if r.amplification.is_finite() {
                let slot = &mut sums[r.layer as usize - 1];
                slot.0 += r.amplification;
                slot.1 += 1;
            }
        }
        if sums.iter().any(|s| s.1 > 0) {
            let means: Vec<f64> = sums
                .iter()
                .map(|&(sum, n)| if n == 0 { 0.0 } else { sum / n as f64 })
                .collect();
            bars.push((s.clone(), i, means));
        }
    }
    let last: Vec<String> = bars
        .iter()
        .map(|(s, _, v)| format!("{s} {}", fmt_number(v[layers - 1])))
        .collect();
    // The point's values go in the guide: a swept list of faults is too long for a title.
    let (title, at) = if f.sweep_keys.is_empty() {
        (
            "Attempts per client request, by layer".to_string(),
            String::new(),
        )
    } else {
        let p = f.first_point();
        (
            format!("Attempts per client request, by layer (point {})", p.index),
            format!(" Point {}: {}.", p.index, p.label(&f.sweep_keys)),
        )
    };
    let guide = format!(
        "Each group is one layer of the chain, in call order; each bar the attempts that reached it per request of the clients, averaged over replications (layers.csv). \
         When every layer retries, the bars multiply down the chain (3 attempts at 3 layers: 3, 9, 27); a remedy shows as the bars it cuts. \
         At the last layer here: {}.{at}",
        last.join(", ")
    );
    let axes = ("layer", "attempts per client request");
    let percent = false;
    Some((
        title,
        guide,
        Bars {
            labels,
            bars,
            axes,
            percent,
        },
    ))
}
