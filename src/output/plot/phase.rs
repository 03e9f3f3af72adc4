//! Phase maps of a two-key sweep (a metastability experiment: load × trigger length): one
//! heatmap panel per strategy, each cell a sweep point, coloured by the share of replications
//! that recovered from the trigger (`phase_recovered`, on a fixed 0–100 % scale) and by the
//! mean time to recover of those that did (`phase_recovery_ms`), where a cell in which no
//! replication recovered is hatched "stuck". Drawn by [`super::heatmap`].

use super::heatmap::{self, Cell, Heatmap, Marks};
use crate::metric::Metric;
use crate::output::design::Design;
use crate::output::labels;
use crate::output::results::ResultFolder;

/// The metrics drawn as phase maps, when the runs measured recovery.
pub(crate) const PHASE_METRICS: [Metric; 2] = [Metric::Recovered, Metric::RecoveryMs];

/// How to read a phase map, for the report's section before the charts.
pub(crate) const READING: &str = "A phase map shows where a short trigger turns into a lasting outage. \
    Each cell is one point of the sweep (the first key across, the second up) and gathers all replications of it: \
    in phase_recovered its colour is the share of runs that serve their offered load again after the trigger and to the end of the run \
    (yellow: all recovered, dark: none did; a run that comes back and collapses again, or swings between the two, has not recovered); in phase_recovery_ms it is how long the recovered ones took \
    (yellow: fast), and a hatched cell is one where no run recovered. \
    A ring in a cell's corner marks a policy whose success rate there is below the target (it may recover only by dropping requests); \
    it keeps its colour on the map's scale. \
    A zigzag in a cell's top left corner marks runs that oscillate (served and collapsed in turn, never settling); \
    a triangle in its bottom left corner, a cell where most runs were already degraded before the trigger \
    (not serving the offered load: a policy that sheds on a healthy server, or a load near or above what the system carries steadily). \
    The dark corner (hatched on the recovery-time map) is the stuck region: there the system stays overloaded after the trigger has ended, \
    because retries and work for clients that gave up keep it so (a metastable failure). \
    Compare the panels cell by cell: a policy that breaks the loop shrinks the stuck region or removes it, \
    and the boundary between recovered and stuck is the load and trigger length that policy can take.";

/// The phase maps of a folder: none unless its sweep has exactly two keys and some run
/// measured recovery.
pub(crate) fn build(f: &ResultFolder, design: &Design) -> Vec<(Metric, String, String, Heatmap)> {
    let Some(axes) = heatmap::axes(f) else {
        return Vec::new();
    };
    let mean =
        |point: u32, s: &str, metric: Metric| f.aggregate_of(point, s, metric).and_then(|r| r.mean);
    let reading = labels::Reading::of(f);
    let [x, y] = [reading.key(&axes.0[0]).0, reading.key(&axes.0[1]).0];
    let mut out = Vec::new();
    for metric in PHASE_METRICS {
        let panels = heatmap::panels(f, design, &axes.1, &axes.2, |point, s| {
            match (metric, mean(point, s, Metric::Recovered)) {
                // Not measured here (no trigger, or no whole window after it).
                (_, None) => Cell::Missing,
                (Metric::Recovered, Some(share)) => Cell::Value(share),
                (_, Some(0.0)) => Cell::Stuck,
                _ => mean(point, s, metric).map_or(Cell::Missing, Cell::Value),
            }
        });
        if panels.is_empty() {
            continue;
        }
        let panels = with_marks(f, &axes.1, &axes.2, panels);
        let (title, guide, range) = if metric == Metric::Recovered {
            (
                format!("Phase map: share of runs that recovered, by {x} and {y}"),
                format!(
                    "Each panel is one strategy, each cell a point ({x} across, {y} up): the share of its replications that \
                     recovered from the trigger (serving the offered load again, to the end), on one scale for all panels \
                     (yellow 100 %, dark 0 %). The dark region is where the system stays stuck after the trigger; look for the \
                     policy whose panel has none. Zigzag: some runs oscillate; triangle: most runs degraded before the trigger."
                ),
                Some((0.0, 1.0)),
            )
        } else {
            (
                format!("Phase map: time to recover, by {x} and {y}"),
                "The same grid coloured by the mean time from the trigger's end until the final stretch that serves the offered \
                 load to the end began, over the runs that recovered (read it with phase_recovered; yellow is fast); a hatched cell is stuck: no run there recovered. \
                 Times that grow towards the stuck region show the boundary coming."
                    .to_string(),
                None,
            )
        };
        let mut map = Heatmap::new(metric, axes.clone(), panels, range, design.target);
        map.capacity_rps = f.info(0).and_then(|i| i.capacity_rps.as_ref()).map(|c| c.0);
        map.reading = reading;
        out.push((metric, title, guide, map));
    }
    out
}

/// The panels with each cell's verdict marks: oscillating when some run there oscillated,
/// degraded when most runs there were degraded before the trigger.
fn with_marks(
    f: &ResultFolder,
    x_values: &[String],
    y_values: &[String],
    mut panels: Vec<heatmap::Panel>,
) -> Vec<heatmap::Panel> {
    for panel in &mut panels {
        for p in &f.points {
            let (xi, yi) = heatmap::position(x_values, y_values, p);
            let mean = |m: Metric| {
                f.aggregate_of(p.index, &panel.name, m)
                    .and_then(|r| r.mean)
                    .unwrap_or(0.0)
            };
            panel.marks[xi][yi] = Marks {
                oscillating: mean(Metric::Oscillating) > 0.0,
                degraded: mean(Metric::DegradedBefore) > 0.5,
            };
        }
    }
    panels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::results::Point;
    use crate::output::rows::AggregateRow;

    /// A folder with `keys` sweep keys over a 3 × 2 grid (the first key slowest), strategies
    /// `s` and `t`, and only the aggregate rows of `recovered` and `recovery_ms`: at point p,
    /// `s` recovered in the share p / 10 (so point 0 is stuck) after p seconds, and `t`
    /// recovered nowhere measured (no trigger).
    fn folder(keys: usize) -> ResultFolder {
        let xs = ["27.0", "40.0", "63.0"];
        let ys = ["\"1s\"", "\"16s\""];
        let mut points = Vec::new();
        let mut aggregate = Vec::new();
        for (i, x) in xs.iter().enumerate() {
            for (j, y) in ys.iter().enumerate() {
                let index = (i * ys.len() + j) as u32;
                let values: Vec<String> = [x, y][..keys].iter().map(|v| v.to_string()).collect();
                points.push(Point {
                    index,
                    values: values.clone(),
                });
                let row = |strategy: &str, metric, mean| AggregateRow {
                    point: index,
                    strategy: strategy.into(),
                    sweep: values.clone(),
                    metric,
                    mean,
                    sd: None,
                    ci95_low: None,
                    ci95_high: None,
                    n: 10,
                };
                let p = f64::from(index);
                let ms = (index > 0).then_some(p * 1000.0);
                aggregate.push(row("s", Metric::Recovered, Some(p / 10.0)));
                aggregate.push(row("s", Metric::RecoveryMs, ms));
                aggregate.push(row("t", Metric::Recovered, None));
                aggregate.push(row("t", Metric::RecoveryMs, None));
            }
        }
        ResultFolder {
            sweep_keys: ["workload.rate", "workload.spike.length"][..keys]
                .iter()
                .map(|k| k.to_string())
                .collect(),
            strategies: vec!["s".into(), "t".into()],
            points,
            aggregate,
            ..ResultFolder::empty("phase-test")
        }
    }

    #[test]
    fn cells_come_from_the_aggregate_rows_of_their_point() {
        let f = folder(2);
        let maps = build(&f, &Design::of(&f));
        assert_eq!(maps.len(), 2);
        let (metric, title, _, recovered) = &maps[0];
        assert_eq!(*metric, Metric::Recovered);
        assert!(title.contains("offered load and spike length"), "{title}");
        // Only `s` measured recovery: `t` has no panel.
        assert!(recovered.cells("t").is_none());
        let cells = recovered.cells("s").unwrap();
        // x: the first key (3 values), y: the second (2 values); point = x * 2 + y.
        assert_eq!(cells.len(), 3);
        for (x, column) in cells.iter().enumerate() {
            assert_eq!(column.len(), 2);
            for (y, cell) in column.iter().enumerate() {
                let p = (x * 2 + y) as f64;
                assert_eq!(*cell, Cell::Value(p / 10.0), "cell ({x}, {y})");
            }
        }
        let (metric, _, _, time) = &maps[1];
        assert_eq!(*metric, Metric::RecoveryMs);
        let cells = time.cells("s").unwrap();
        assert_eq!(cells[0][0], Cell::Stuck, "point 0: nothing recovered");
        assert_eq!(cells[0][1], Cell::Value(1000.0));
        assert_eq!(cells[2][0], Cell::Value(4000.0));
        assert_eq!(cells[2][1], Cell::Value(5000.0));
    }

    #[test]
    fn no_phase_map_without_two_keys_or_recovery() {
        let one = folder(1);
        assert!(build(&one, &Design::of(&one)).is_empty());
        let mut f = folder(2);
        f.aggregate.retain(|r| r.strategy == "t");
        assert!(
            build(&f, &Design::of(&f)).is_empty(),
            "no run measured recovery"
        );
    }
}
