//! The step benchmark's steps counted in instructions by callgrind, which the machine's load
//! does not move (criterion's times do): per step, the count of `2 N` steps less that of `N`
//! (the setup cancels), divided by `N`; printed as a Markdown table with the ratios to the bare
//! draw and to jitterlab's full jitter.
//!
//! `cargo run -p jitterlab-peers --release --bin steps-instructions [-- N]` (needs valgrind;
//! `N` defaults to 100 000). Run as `steps-instructions --steps NAME N`, it runs `N` steps of
//! `NAME` and nothing else: what callgrind counts.

use std::process::Command;

use jitterlab_peers::step::{self, BARE, Visit};
use jitterlab_peers::steps::{FULL, chart, criterion_dir, machine};

/// Runs `N` steps of the implementation named, and nothing else.
struct Only<'a> {
    name: &'a str,
    steps: u64,
    found: bool,
}

impl Visit for Only<'_> {
    fn step<T>(&mut self, name: &str, mut step: impl FnMut() -> T) {
        if name == self.name {
            self.found = true;
            for _ in 0..self.steps {
                std::hint::black_box(step());
            }
        }
    }
}

/// Instructions callgrind counts for `steps` steps of `name` in this program.
fn count(name: &str, steps: u64) -> Result<u64, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(me)
        .args(["--steps", name, &steps.to_string()])
        .output()
        .map_err(|e| format!("valgrind: {e} (install valgrind)"))?;
    let text = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("valgrind on {name}: {}\n{text}", out.status));
    }
    text.lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("no `Collected :` line in callgrind's output:\n{text}"))
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, name, n] = args.as_slice()
        && flag == "--steps"
    {
        let steps = n
            .parse()
            .map_err(|_| format!("--steps {name} {n}: not a count"))?;
        let mut only = Only {
            name,
            steps,
            found: false,
        };
        step::each(&mut only);
        return if only.found {
            Ok(())
        } else {
            Err(format!("no step named {name:?}"))
        };
    }
    let n: u64 = match args.first() {
        Some(n) => n.parse().map_err(|_| format!("N: {n:?} is not a count"))?,
        None => 100_000,
    };
    let mut rows = Vec::new();
    for name in step::names() {
        let per_step = (count(&name, 2 * n)? as f64 - count(&name, n)? as f64) / n as f64;
        eprintln!("{name}: {per_step:.1} instructions per step");
        rows.push((name, per_step));
    }
    let of = |name: &str| rows.iter().find(|r| r.0 == name).map(|r| r.1);
    let (bare, full) = (of(BARE).unwrap_or(f64::NAN), of(FULL).unwrap_or(f64::NAN));
    println!(
        "\nInstructions per step (callgrind, {n} and {} steps); {}:\n",
        2 * n,
        machine()
    );
    println!("| implementation | instructions per step | × bare draw | × {FULL} |");
    println!("| --- | --- | --- | --- |");
    for (name, i) in &rows {
        println!("| {name} | {i:.1} | {:.1} | {:.2} |", i / bare, i / full);
    }
    let ratios: Vec<(String, f64)> = rows.iter().map(|(n, i)| (n.clone(), i / bare)).collect();
    let axis = format!(
        "instructions of one step / of one bare Pcg64Mcg draw (callgrind, log scale); {}",
        machine()
    );
    let png = criterion_dir().join("peers-instructions.png");
    chart(&png, &ratios, &axis).map_err(|e| format!("chart {}: {e}", png.display()))?;
    println!("\nchart: {}", png.display());
    Ok(())
}
