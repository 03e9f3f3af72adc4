//! The goodput chart of a run with a trigger (a load spike, an outage that ends): successes
//! per second over time, one panel per run of [`super::series`] (a stuck and a recovered
//! replication side by side where they differ), the offered rate (the level a recovered run
//! serves again, to the end) and the trigger behind, and the run's goodput before the trigger.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::series::Traces;
use super::style::{self, DrawResult, INK, LegendItem, Swatch};
use crate::metric::Metric;
use crate::output::design::Design;
use crate::output::results::ResultFolder;

struct Panel {
    name: String,
    color: usize,
    /// (bin start ms, successes per second)
    points: Vec<(f64, f64)>,
    /// The run's goodput in the window before the trigger (successes per second).
    before: Option<f64>,
}

pub(crate) struct Goodput {
    panels: Vec<Panel>,
    paired: bool,
    subtitle: String,
    trigger: (f64, f64),
    offered: Option<Vec<(f64, f64)>>,
    horizon_ms: f64,
}

/// Successes per second in bins of at least a second (whole buckets). A series' last bucket
/// holds the moment the clock stopped (at the horizon, a bucket of no time at all): it is
/// partial, and as a rate over a whole bucket it would read as a collapse at the end.
fn per_second(t_ms: &[f64], successes: &[f64], bucket_ms: f64) -> Vec<(f64, f64)> {
    let k = (1000.0 / bucket_ms).ceil().max(1.0) as usize;
    let seconds = k as f64 * bucket_ms / 1000.0;
    let whole = t_ms.len().min(successes.len()).saturating_sub(1);
    (t_ms[..whole].chunks(k).zip(successes[..whole].chunks(k)))
        .filter(|(t, _)| t.len() == k)
        .map(|(t, s)| (t[0], s.iter().sum::<f64>() / seconds))
        .collect()
}

pub(crate) fn build(
    f: &ResultFolder,
    design: &Design,
    traces: &Traces,
) -> Option<(String, String, Goodput)> {
    let first = traces.traces.first()?;
    let info = f.info(first.candidate.point)?;
    let trigger = info.trigger_ms?;
    let bucket_ms = f.bucket_ms()?;
    let run_metric = |point: u32, strategy: &str, replication: u32, m: Metric| {
        (f.summary.iter())
            .find(|r| r.point == point && r.strategy == strategy && r.replication == replication)
            .map(|r| r.metrics[m])
            .filter(|v| v.is_finite())
    };
    let panels: Vec<Panel> = (traces.traces.iter())
        .map(|t| Panel {
            name: t.label.clone(),
            color: t.candidate.color,
            points: per_second(&t.t_ms, &t.successes, bucket_ms),
            before: run_metric(
                t.candidate.point,
                &t.candidate.strategy,
                t.replication,
                Metric::GoodputBefore,
            ),
        })
        .collect();
    // Recovery must have been measured, and something must have succeeded.
    if panels.iter().all(|p| p.before.is_none())
        || panels.iter().all(|p| p.points.iter().all(|x| x.1 <= 0.0))
    {
        return None;
    }
    let title = "Goodput: successes per second, before, during and after the trigger".to_string();
    let mut guide = String::from(
        "Each panel is one run: successes per second (colour) against the offered load (grey line), the trigger shaded. \
         A run that recovers serves the offered load again and keeps doing so to the end; a stuck one stays below it after the trigger has ended, \
         the load it sheds turned into retries and work for clients who have given up; a relapsed one comes back and collapses again, an oscillating one swings between the two. \
         The dashed line, over the time before the trigger, is the run's goodput there: below the grey line, the run was already short of its load before the trigger. ",
    );
    let shares: Vec<String> = (traces.traces.iter())
        .filter(|t| t.replication == 0)
        .filter_map(|t| {
            let runs: Vec<f64> = (f.summary.iter())
                .filter(|r| r.point == t.candidate.point && r.strategy == t.candidate.strategy)
                .map(|r| r.metrics[Metric::Recovered])
                .filter(|v| v.is_finite())
                .collect();
            let ok = runs.iter().filter(|v| **v > 0.5).count();
            (!runs.is_empty()).then(|| {
                format!(
                    "{} in {ok} of {}",
                    design.candidate_label(f, &t.candidate),
                    runs.len()
                )
            })
        })
        .collect();
    if !shares.is_empty() {
        guide.push_str(&format!(
            "Replications that recovered here: {}. ",
            shares.join("; ")
        ));
    }
    if !traces.not_rerun.is_empty() {
        guide.push_str(&format!(
            "Some replications of {} got stuck and others recovered, but this folder's runs could not be re-run identically (another version of jitterlab wrote it), so only replication 0 is drawn. ",
            traces.not_rerun.join(", ")
        ));
    }
    let horizon_ms = (panels.iter())
        .flat_map(|p| p.points.last().map(|x| x.0))
        .fold(trigger.1, f64::max)
        + bucket_ms;
    Some((
        title,
        guide.trim_end().to_string(),
        Goodput {
            panels,
            paired: traces.paired,
            subtitle: super::subtitle(f, design, traces),
            trigger,
            offered: info.offered.clone(),
            horizon_ms,
        },
    ))
}

impl Goodput {
    /// The chart's height, px ([`style::run_chart_height`]).
    pub(crate) fn height(&self) -> u32 {
        style::run_chart_height(self.panels.len(), self.paired)
    }

    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let mut legend = vec![
            LegendItem::new(
                Swatch::Line(style::color(self.panels[0].color)),
                "successes per second (the run's colour)",
            ),
            LegendItem::new(Swatch::Dashed(INK), "goodput before the trigger"),
            LegendItem::new(Swatch::Box(style::FAULT.mix(0.18)), "trigger"),
        ];
        if self.offered.is_some() {
            legend.insert(
                1,
                LegendItem::new(Swatch::Line(style::MUTED), "offered requests per second"),
            );
        }
        let body = style::frame(root, title, Some(&self.subtitle), &legend)?;
        let unit = style::time_unit(self.horizon_ms);
        let x_max = self.horizon_ms / unit.div;
        let offered_max = (self.offered.iter().flatten())
            .map(|p| p.1)
            .fold(0.0, f64::max);
        let data_max = (self.panels.iter())
            .flat_map(|p| p.points.iter().map(|x| x.1))
            .fold(0.0, f64::max);
        let y_max = style::from_zero(data_max.max(offered_max), 0.1);
        let n = self.panels.len();
        let areas = style::run_panels(&body, n, self.paired, "successes per second")?;
        let tick = |v: &f64| style::tick(*v);
        for (panel, (area, bottom, _)) in self.panels.iter().zip(areas) {
            let color = style::color(panel.color);
            let (_, h) = area.dim_in_pixel();
            let mut chart = style::time_panel(
                &area,
                (&panel.name, style::text_color(panel.color)),
                bottom,
                (x_max, unit),
                style::YAxis {
                    range: 0.0..y_max,
                    labels: style::y_labels_for(h),
                    tick: &tick,
                },
            )?;
            let (t0, t1) = (self.trigger.0 / unit.div, self.trigger.1 / unit.div);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(t0.min(x_max), 0.0), (t1.min(x_max), y_max)],
                style::FAULT.mix(0.12).filled(),
            )))?;
            if let Some(line) = &self.offered {
                let points: Vec<(f64, f64)> = line
                    .iter()
                    .map(|&(t, r)| ((t / unit.div).min(x_max), r))
                    .collect();
                chart.draw_series(LineSeries::new(points, style::MUTED.stroke_width(2)))?;
            }
            let line: Vec<(f64, f64)> = (panel.points.iter())
                .map(|&(t, v)| (t / unit.div, v))
                .collect();
            super::check::data(|| {
                chart.draw_series(AreaSeries::new(line.clone(), 0.0, color.mix(0.15).filled()))?;
                chart.draw_series(LineSeries::new(line, color.stroke_width(2)))
            })?;
            // Over the window before the trigger only, where it was measured: after it the
            // offered line shows the level a recovered run serves, uncovered.
            if let Some(before) = panel.before {
                chart.draw_series(DashedLineSeries::new(
                    vec![(0.0, before), (t0.min(x_max), before)],
                    8,
                    5,
                    INK.stroke_width(2),
                ))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successes_become_a_rate_per_whole_second() {
        let t: Vec<f64> = (0..25).map(|i| i as f64 * 100.0).collect();
        let s = vec![4.0; 25];
        // Bins of 10 buckets of 100 ms; the last, incomplete bin is left out.
        assert_eq!(per_second(&t, &s, 100.0), vec![(0.0, 40.0), (1000.0, 40.0)]);
        // A bucket of 2 s is its own bin; the series' last bucket, where the clock stopped,
        // is partial and left out (it read as a drop to 0 at the horizon).
        assert_eq!(
            per_second(&[0.0, 2000.0, 4000.0], &[10.0, 6.0, 0.0], 2000.0),
            vec![(0.0, 5.0), (2000.0, 3.0)]
        );
    }
}
