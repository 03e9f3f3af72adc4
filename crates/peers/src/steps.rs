//! The step benchmark's report: criterion's estimates as ratios to the bare draw, a Markdown
//! table and a chart. `benches/steps.rs` calls [`report`] at the end of its run;
//! `--bin steps-report` redraws from the last run's estimates.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The criterion group of every step.
pub const GROUP: &str = "steps";
pub use crate::step::BARE;
/// The second reference: jitterlab's full jitter, whose ratios move less with the machine's
/// load than those to the bare draw (two steps against each other).
pub const FULL: &str = "jitterlab/full";

/// Where criterion writes: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else the
/// workspace's `target/criterion` (as criterion finds it, without asking cargo).
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("criterion")
}

/// The time of bench `name` in nanoseconds: criterion's slope estimate where it has one (the
/// figure it prints), else its mean.
pub fn estimate_ns(dir: &Path, name: &str) -> Option<f64> {
    let path = dir
        .join(GROUP)
        .join(name.replace('/', "_"))
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["slope"]["point_estimate"]
        .as_f64()
        .or_else(|| value["mean"]["point_estimate"].as_f64())
}

/// The CPU and the cores this process may use, from /proc/cpuinfo where there is one.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {cores} cores")
}

/// Prints the ratios of `names` to the bare draw as a Markdown table and draws them into
/// `dir/peers-steps.png`.
pub fn report(dir: &Path, names: &[String]) {
    let Some(bare) = estimate_ns(dir, BARE) else {
        eprintln!("no estimate for {BARE} in {}: no ratios", dir.display());
        return;
    };
    let machine = machine();
    let mut rows = Vec::new();
    let full = estimate_ns(dir, FULL);
    println!("\nRatios to one bare draw ({bare:.2} ns) and to {FULL} in this run; {machine}:\n");
    println!(
        "| implementation | ns per step | × bare draw | × {FULL} |\n| --- | --- | --- | --- |"
    );
    for name in names {
        if let Some(ns) = estimate_ns(dir, name) {
            let to_full = full.map_or("–".to_string(), |f| format!("{:.2}", ns / f));
            println!("| {name} | {ns:.2} | {:.1} | {to_full} |", ns / bare);
            rows.push((name.clone(), ns / bare));
        }
    }
    let png = dir.join("peers-steps.png");
    let axis = format!("time of one step / time of one bare Pcg64Mcg draw (log scale); {machine}");
    match chart(&png, &rows, &axis) {
        Ok(()) => println!("\nchart: {}", png.display()),
        Err(e) => eprintln!("chart {}: {e}", png.display()),
    }
}

/// A log axis's tick label where the tick is 1, 2 or 5 times a power of ten, else none: the
/// ticks between crowd each other near each decade's end.
fn one_two_five(x: &f64) -> String {
    let mantissa = x / 10f64.powf(x.log10().floor());
    let near = |m: f64| (mantissa - m).abs() < 1e-6 * m || (mantissa - 10.0 * m).abs() < 1e-5;
    if near(1.0) || near(2.0) || near(5.0) {
        format!("{x}")
    } else {
        String::new()
    }
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// A bar per implementation from 1 (the bare draw) to its ratio, on a log scale; `axis` says
/// what the ratio divides (times or instruction counts) and on which machine.
pub fn chart(path: &Path, rows: &[(String, f64)], axis: &str) -> DrawResult {
    jitterlab::output::plot::register_fonts();
    let (width, height) = (1100, 150 + 34 * rows.len() as u32);
    let mut rgb = vec![255u8; (width * height * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        draw_bars(&root, rows, axis)?;
        root.present()?;
    }
    let png = jitterlab::output::plot::encode_png(&rgb, width, height)?;
    std::fs::write(path, png)?;
    Ok(())
}

fn draw_bars(
    root: &DrawingArea<BitMapBackend, Shift>,
    rows: &[(String, f64)],
    axis: &str,
) -> DrawResult {
    // jitterlab's palette: blue for jitterlab, vermillion for peers; black for bare.
    let palette: Vec<RGBColor> = jitterlab::output::palette::COLORS
        .iter()
        .map(|(_, [r, g, b])| RGBColor(*r, *g, *b))
        .collect();
    let n = rows.len();
    let low = rows.iter().map(|r| r.1).fold(1.0, f64::min) / 1.5;
    let high = rows.iter().map(|r| r.1).fold(1.0, f64::max) * 1.6;
    let mut chart = ChartBuilder::on(root)
        .caption(
            "One next-delay step, as a multiple of one bare draw (lower is better)",
            ("sans-serif", 24),
        )
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(290)
        .build_cartesian_2d((low..high).log_scale(), -0.5f64..n as f64 - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_label_formatter(&one_two_five)
        .x_desc(axis)
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    let label =
        TextStyle::from(("sans-serif", 15).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (j, (name, ratio)) in rows.iter().enumerate() {
        let y = (n - 1 - j) as f64;
        let color = if name == BARE {
            BLACK
        } else if name.starts_with("jitterlab/") {
            palette[0]
        } else {
            palette[1]
        };
        chart.draw_series(std::iter::once(Rectangle::new(
            [(1.0, y - 0.35), (*ratio, y + 0.35)],
            color.filled(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            format!("{ratio:.1}×"),
            (ratio.max(1.0) * 1.04, y),
            label.clone(),
        )))?;
        // Names left-aligned in the label area (right-aligned tick labels clip some glyphs).
        let (_, py) = chart.backend_coord(&(1.0, y));
        root.draw(&Text::new(name.clone(), (24, py), label.clone()))?;
    }
    // The bare draw's line.
    chart.draw_series(LineSeries::new(
        [(1.0, -0.5), (1.0, n as f64 - 0.5)],
        BLACK.stroke_width(1),
    ))?;
    Ok(())
}
