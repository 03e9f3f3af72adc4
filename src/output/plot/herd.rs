//! The herd chart: attempts reaching the server per output bucket, one panel per strategy,
//! first attempts and retries stacked, the server's capacity and the fault windows behind.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{self, DrawResult, FIRST_ATTEMPTS, HouseStyle, INK, LegendItem, Swatch};
use crate::output::results::{Capacity, FaultWindow, ResultFolder, fmt_ms, fmt_number};

/// At most this many points per series; merged buckets keep their busiest bucket.
pub(crate) const MAX_POINTS: usize = 600;

#[derive(Clone)]
pub(crate) struct Panel {
    name: String,
    color: usize,
    /// (t_ms, first attempts, first attempts + retries)
    points: Vec<(f64, f64, f64)>,
}

#[derive(Clone)]
pub(crate) struct Herd {
    panels: Vec<Panel>,
    bucket_ms: Option<f64>,
    capacity: Option<Capacity>,
    faults: Vec<FaultWindow>,
    /// The offered rate over time `(ms, requests/s)` of a Poisson workload, drawn in a strip
    /// under the panels so that a load trigger (a spike, a ramp) is visible.
    offered: Option<Vec<(f64, f64)>>,
    /// A logarithmic count axis (decades), where a low band under the capacity line stays
    /// visible beside spikes a hundred times higher.
    log: bool,
}

/// The reading guide of the log-scale herd chart.
pub(crate) const LOG_GUIDE: &str = "The same counts on a logarithmic axis (1, 10, 100, ...; empty buckets sit on the bottom line). \
     A linear axis is dominated by the tallest spike; here the spread-out band of jittered retries is as visible as the spikes \
     without jitter, and so is where each sits against the capacity line: a band below it is served as it comes, spikes above it are turned away and come back.";

/// Keeps at most `max` points: each run of `ceil(n / max)` buckets is replaced by its bucket
/// with the most attempts, so peaks survive (never averaged away).
pub(crate) fn decimate_peaks(points: &[(f64, f64, f64)], max: usize) -> Vec<(f64, f64, f64)> {
    if points.len() <= max || max == 0 {
        return points.to_vec();
    }
    let group = points.len().div_ceil(max);
    points
        .chunks(group)
        .map(|chunk| {
            *chunk
                .iter()
                .max_by(|a, b| a.2.total_cmp(&b.2))
                .expect("chunks are never empty")
        })
        .collect()
}

/// A step outline for an area: each count holds from its bucket's start to the next kept
/// bucket (the last one for one bucket), so counts are not interpolated into slopes.
fn steps(
    points: &[(f64, f64, f64)],
    bucket_ms: f64,
    div: f64,
    value: impl Fn(&(f64, f64, f64)) -> f64,
) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, p) in points.iter().enumerate() {
        let end = points.get(i + 1).map_or(p.0 + bucket_ms, |next| next.0);
        out.push((p.0 / div, value(p)));
        out.push((end / div, value(p)));
    }
    out
}

/// The herd at the server (`timeseries.csv`).
pub(crate) fn build(f: &ResultFolder) -> Option<(String, String, Herd)> {
    build_at(f, None)
}

/// The herd at layer `layer` (2 and up) of a chain (`layer_timeseries.csv`).
pub(crate) fn build_layer(f: &ResultFolder, layer: u32) -> Option<(String, String, Herd)> {
    build_at(f, Some(layer))
}

/// The layers (from 2) of a chain whose herd can be drawn.
pub(crate) fn layers(f: &ResultFolder) -> Vec<u32> {
    let mut layers: Vec<u32> = (f.layer_timeseries.iter().flatten())
        .map(|r| r.layer)
        .filter(|&l| l >= 2)
        .collect();
    layers.sort_unstable();
    layers.dedup();
    layers
}

fn build_at(f: &ResultFolder, layer: Option<u32>) -> Option<(String, String, Herd)> {
    let point = f.first_point();
    let mut panels = Vec::new();
    let mut peaks: Vec<(String, f64)> = Vec::new();
    for (i, s) in f.strategies.iter().enumerate() {
        // (t_ms, first attempts, retries) of the strategy at the point.
        let counts: Vec<(f64, u32, u32)> = match layer {
            None => (f.timeseries.iter())
                .filter(|r| r.point == point.index && &r.strategy == s)
                .map(|r| (r.t_ms, r.first_attempts, r.retries))
                .collect(),
            Some(l) => (f.layer_timeseries.iter().flatten())
                .filter(|r| r.point == point.index && &r.strategy == s && r.layer == l)
                .map(|r| (r.t_ms, r.first_attempts, r.retries))
                .collect(),
        };
        if counts.is_empty() {
            continue;
        }
        let mut rows: Vec<(f64, f64, f64)> = counts
            .iter()
            .map(|&(t, first, retries)| {
                let first = f64::from(first);
                (t, first, first + f64::from(retries))
            })
            .collect();
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        let peak_retries = counts.iter().map(|r| f64::from(r.2)).fold(0.0, f64::max);
        peaks.push((s.clone(), peak_retries));
        panels.push(Panel {
            name: s.clone(),
            color: i,
            points: decimate_peaks(&rows, MAX_POINTS),
        });
    }
    if panels.is_empty() {
        return None;
    }
    let bucket_ms = f.bucket_ms();
    let bucket = bucket_ms.map_or_else(|| "output".to_string(), fmt_ms);
    let scenario = f.scenario.as_ref();
    let at = layer.and_then(|l| scenario?.layers.get(l as usize - 1));
    let place = match (layer, at) {
        (Some(l), Some(info)) => format!("layer {l} ({})", info.name),
        (Some(l), None) => format!("layer {l}"),
        (None, _) => "the server".to_string(),
    };
    let mut title = format!("Thundering herd: attempts reaching {place} per {bucket} bucket");
    if !f.sweep_keys.is_empty() {
        title.push_str(&point.title_suffix(&f.sweep_keys));
    }
    let (capacity, faults) = match (layer, at) {
        (None, _) => (
            scenario.and_then(|s| s.capacity.clone()),
            scenario.map(|s| &s.faults[..]).unwrap_or_default(),
        ),
        (Some(_), Some(info)) => (info.capacity.clone(), &info.faults[..]),
        (Some(_), None) => (None, &[][..]),
    };
    let offered = scenario.and_then(|s| s.offered.clone());
    let faults: Vec<FaultWindow> = faults
        .iter()
        .filter(|w| w.end_ms > w.start_ms)
        .cloned()
        .collect();

    let mut guide = String::from(
        "Each panel is one strategy on the same axes: grey is first attempts, colour is retries, \
         stacked, per output bucket (replication 0). ",
    );
    if layer.is_some() {
        guide.push_str(
            "Here the callers are the workers of the layer above: a first attempt is the first of one of their outbound requests, so retries at every layer above multiply what arrives here. ",
        );
    }
    if !faults.is_empty() {
        guide.push_str("Shaded bands are fault windows; watch what happens when one ends. ");
    }
    if capacity.is_some() {
        guide.push_str(
            "The dashed line is what the server can complete per bucket: spikes above it queue or are rejected, and rejected attempts come back as more retries. ",
        );
    }
    guide.push_str(
        "Without jitter, retries arrive in synchronized spikes at the same backoff steps; jitter spreads them into a low band.",
    );
    if offered.is_some() {
        guide.push_str(
            " The strip below is the offered rate (new requests per second) on the same time axis: a spike or ramp there is the load trigger; compare the attempts after it ends with those before.",
        );
    }
    if peaks.len() > 1 {
        let mut sorted = peaks.clone();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
        let (hi, lo) = (&sorted[0], &sorted[sorted.len() - 1]);
        guide.push_str(&format!(
            " Here the largest retry spike is {} per bucket ({}) against {} ({}).",
            fmt_number(hi.1),
            hi.0,
            fmt_number(lo.1),
            lo.0
        ));
    }
    Some((
        title,
        guide,
        Herd {
            panels,
            bucket_ms,
            capacity,
            faults,
            offered,
            log: false,
        },
    ))
}

impl Herd {
    /// The same chart with a logarithmic count axis.
    pub(crate) fn log_scale(&self) -> Herd {
        Herd {
            log: true,
            ..self.clone()
        }
    }

    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let mut legend = vec![
            LegendItem::new(Swatch::Box(FIRST_ATTEMPTS.to_rgba()), "first attempts"),
            LegendItem::new(
                Swatch::Box(style::color(0).mix(0.85)),
                "retries (strategy colour)",
            ),
        ];
        if let Some(c) = &self.capacity {
            legend.push(LegendItem::new(Swatch::Dashed(INK), c.label.clone()));
        }
        if !self.faults.is_empty() {
            let kinds: Vec<&str> = self.faults.iter().map(|f| f.kind.as_str()).collect();
            let mut unique = kinds.clone();
            unique.dedup();
            legend.push(LegendItem::new(
                Swatch::Box(style::FAULT.mix(0.18)),
                format!("fault window ({})", unique.join(", ")),
            ));
        }
        let body = style::frame(root, title, None, &legend)?;
        // With an offered rate, a strip at the bottom holds it; the panels take the rest.
        let (body, strip) = match &self.offered {
            Some(_) => {
                let (_, h) = body.dim_in_pixel();
                let (top, bottom) = body.split_vertically(h as i32 - (h as i32 / 5).max(90));
                (top, Some(bottom))
            }
            None => (body, None),
        };

        // The time axis ends shortly after the last attempt (or the last fault window): the
        // quiet tail up to the horizon says nothing.
        let last_active = self
            .panels
            .iter()
            .flat_map(|p| p.points.iter().filter(|x| x.2 > 0.0).map(|x| x.0))
            .fold(0.0, f64::max)
            + self.bucket_ms.unwrap_or(0.0);
        let last_point = self
            .panels
            .iter()
            .flat_map(|p| p.points.iter().map(|x| x.0))
            .fold(0.0, f64::max)
            + self.bucket_ms.unwrap_or(0.0);
        let fault_end = self.faults.iter().map(|f| f.end_ms).fold(0.0, f64::max);
        let t_max = (last_active.max(fault_end) * 1.1)
            .min(last_point.max(fault_end))
            .max(1.0);
        let unit = style::time_unit(t_max);
        let y_data = self
            .panels
            .iter()
            .flat_map(|p| p.points.iter().map(|x| x.2))
            .fold(0.0, f64::max);
        let cap = self.capacity.as_ref().map(|c| c.per_bucket).unwrap_or(0.0);
        // On the log axis counts are drawn as log10(max(count, 1)), from 0 (one attempt, or
        // none) to a whole number of decades, so the ticks fall on 1, 10, 100, ...
        let log = self.log;
        let ty = move |y: f64| if log { y.max(1.0).log10() } else { y };
        let (y_min, y_max) = if log {
            (0.0, ty(y_data.max(cap) * 1.5).ceil().max(1.0))
        } else {
            (0.0, style::from_zero(y_data.max(cap), 0.08))
        };
        let y_labels = if log { y_max as usize + 1 } else { 5 };
        let y_tick = move |v: &f64| {
            if !log {
                style::tick(*v)
            } else if (v - v.round()).abs() < 1e-6 {
                style::tick(10f64.powi(v.round() as i32))
            } else {
                String::new()
            }
        };
        let x_max = (t_max / unit.div).max(1e-9);

        let n_panels = self.panels.len();
        let areas = style::panels(&body.margin(0, 10, 10, 20), n_panels, style::grid(n_panels));
        for (panel, (area, bottom, left)) in self.panels.iter().zip(areas) {
            let color = style::color(panel.color);
            let y_desc = if log {
                "attempts / bucket (log)"
            } else {
                "attempts / bucket"
            };
            let mut chart = style::time_panel(
                &area,
                (&panel.name, color),
                (bottom, left),
                (x_max, unit),
                style::YAxis {
                    range: y_min..y_max,
                    labels: y_labels,
                    tick: &y_tick,
                    desc: y_desc,
                },
            )?;

            for fault in &self.faults {
                let x0 = (fault.start_ms / unit.div).clamp(0.0, x_max);
                let x1 = (fault.end_ms / unit.div).clamp(0.0, x_max);
                if x1 > x0 {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, y_min), (x1, y_max)],
                        style::FAULT.mix(0.12).filled(),
                    )))?;
                }
            }
            let bucket = self.bucket_ms.unwrap_or(0.0);
            let total = steps(&panel.points, bucket, unit.div, |p| ty(p.2));
            let first = steps(&panel.points, bucket, unit.div, |p| ty(p.1));
            super::check::data(|| {
                chart.draw_series(AreaSeries::new(total, y_min, color.mix(0.85).filled()))?;
                chart.draw_series(AreaSeries::new(first, y_min, FIRST_ATTEMPTS.filled()))
            })?;
            if cap > 0.0 {
                chart.draw_series(DashedLineSeries::new(
                    vec![(0.0, ty(cap)), (x_max, ty(cap))],
                    8,
                    5,
                    INK.stroke_width(2),
                ))?;
            }
        }
        if let (Some(strip), Some(line)) = (strip, &self.offered) {
            let r_max = style::from_zero(line.iter().map(|p| p.1).fold(0.0, f64::max), 0.1);
            let mut chart = ChartBuilder::on(&strip.margin(0, 10, 10, 20))
                .margin(6)
                .x_label_area_size(40)
                .y_label_area_size(78)
                .build_cartesian_2d(0.0..x_max, 0.0..r_max.max(1.0))?;
            chart
                .configure_mesh()
                .house_style()
                .x_labels(8)
                .y_labels(3)
                .x_label_formatter(&|v| style::tick(*v))
                .y_label_formatter(&|v| style::tick(*v))
                .x_desc(format!("time ({})", unit.name))
                .y_desc("offered req/s")
                .draw()?;
            let points = line
                .iter()
                .map(|&(t, r)| ((t / unit.div).min(x_max), r))
                .collect::<Vec<_>>();
            chart.draw_series(AreaSeries::new(
                points.clone(),
                0.0,
                FIRST_ATTEMPTS.mix(0.5).filled(),
            ))?;
            chart.draw_series(LineSeries::new(points, INK.stroke_width(2)))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_peaks() {
        let points: Vec<(f64, f64, f64)> = (0..2000)
            .map(|i| {
                (
                    i as f64 * 10.0,
                    1.0,
                    if i == 1234 {
                        500.0
                    } else {
                        1.0 + (i % 7) as f64
                    },
                )
            })
            .collect();
        let d = decimate_peaks(&points, 600);
        assert!(d.len() <= 600);
        assert!(d.iter().any(|p| p.2 == 500.0 && p.0 == 12340.0));
        assert_eq!(decimate_peaks(&points[..10], 600).len(), 10);
    }
}
