//! The live-against-simulation chart of a `jitterlab live` folder: for each key metric, each
//! strategy's relative difference between what the live run measured and what the simulator
//! predicts, with the ±10 % band the acceptance of `sims/live-herd.toml` asks for.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{self, DrawResult, HouseStyle, INK, LegendItem, Swatch};
use crate::metric::Metric;
use crate::output::results::{LiveVsSimRow, ResultFolder};

pub(crate) struct LiveVsSim {
    /// `(metric index, strategy colour, difference in %)`.
    dots: Vec<(usize, usize, f64)>,
    strategies: Vec<(String, usize)>,
}

/// The metrics across, in this order.
const METRICS: [Metric; 7] = LiveVsSimRow::KEY_METRICS;

pub(crate) fn build(f: &ResultFolder) -> Option<(String, String, LiveVsSim)> {
    let rows = f.live_vs_sim.as_ref()?;
    let slots = crate::output::palette::slots(&f.strategies);
    let color_of = |s: &str| {
        let at = f.strategies.iter().position(|x| x == s);
        at.map_or(0, |i| slots[i])
    };
    let mut dots = Vec::new();
    for r in rows {
        if let (Some(m), Some(d)) = (
            METRICS.iter().position(|m| *m == r.metric),
            r.relative_difference,
        ) {
            dots.push((m, color_of(&r.strategy), d * 100.0));
        }
    }
    if dots.is_empty() {
        return None;
    }
    let mut strategies: Vec<(String, usize)> = Vec::new();
    for r in rows {
        if !strategies.iter().any(|(s, _)| *s == r.strategy) {
            strategies.push((r.strategy.clone(), color_of(&r.strategy)));
        }
    }
    let worst = dots.iter().map(|d| d.2.abs()).fold(0.0, f64::max);
    let title = "Live against simulated: relative difference per metric".to_string();
    let guide = format!(
        "Each dot is one strategy's (live − simulated) / simulated for one metric, measured on real sockets and timers against the simulator's prediction for the same seed. \
         Inside the grey band the two agree within 10 %; the largest difference here is {worst:.1} %. \
         Peaks depend on where a bucket edge cuts a wave the real clock smears; latencies carry the timers' lag (see the timer line below)."
    );
    Some((title, guide, LiveVsSim { dots, strategies }))
}

impl LiveVsSim {
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        title: &str,
    ) -> DrawResult {
        let legend: Vec<LegendItem> = self
            .strategies
            .iter()
            .map(|(s, c)| LegendItem::new(Swatch::Dot(style::color(*c)), s.clone()))
            .chain(std::iter::once(LegendItem::new(
                Swatch::Box(INK.mix(0.12)),
                "±10 %",
            )))
            .collect();
        let body = style::frame(root, title, None, &legend)?;
        let most = self
            .dots
            .iter()
            .map(|d| d.2.abs())
            .fold(15.0, f64::max)
            .min(200.0)
            * 1.1;
        let n = METRICS.len() as f64;
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .margin_right(40)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..n - 0.5, -most..most)?;
        chart
            .configure_mesh()
            .house_style()
            .x_labels(METRICS.len())
            .x_label_formatter(&|v| {
                let i = v.round();
                if (v - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < METRICS.len() {
                    METRICS[i as usize].short().to_string()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| format!("{} %", style::tick(*v)))
            .y_desc("(live − simulated) / simulated")
            .disable_x_mesh()
            .draw()?;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(-0.5, -10.0), (n - 0.5, 10.0)],
            INK.mix(0.12).filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, 0.0), (n - 0.5, 0.0)],
            INK.mix(0.6).stroke_width(1),
        )))?;
        let k = self.strategies.len().max(1) as f64;
        for &(m, color, d) in &self.dots {
            let slot = self
                .strategies
                .iter()
                .position(|(_, c)| *c == color)
                .unwrap_or(0) as f64;
            let x = m as f64 + (slot - (k - 1.0) / 2.0) * 0.6 / k;
            let y = d.clamp(-most, most);
            chart.draw_series(std::iter::once(Circle::new(
                (x, y),
                7,
                style::color(color).filled(),
            )))?;
        }
        Ok(())
    }
}
