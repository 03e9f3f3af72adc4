//! Charts and the report, drawn from fixture result folders written here per docs/results.md.
//!
//! The fixtures come from a toy simulation that uses the real backoff engine: clients hit a
//! server that completes at most `capacity` attempts per 10 ms bucket and answers 503 during
//! an outage; failed attempts sleep as the strategy says and retry. It is not the simulator,
//! only a source of realistic CSVs (a herd after an outage, a one-key and a two-key sweep).
//!
//! Set `JITTERLAB_CHART_DIR=/some/dir` to keep the fixture folders and their charts.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use jitterlab::Error;
use jitterlab::backoff::{Backoff, BackoffState, Jitter};
use jitterlab::output::{plot, report};
use jitterlab::rng::{from_seed, splitmix64};
use jitterlab::time::SimDuration;

use crate::common::{chromium, chromium_dom};

// ---------------------------------------------------------------------------------------
// Toy simulation
// ---------------------------------------------------------------------------------------

const BUCKET_MS: u64 = 10;
const HORIZON_MS: u64 = 20_000;

#[derive(Clone, Copy)]
struct Params {
    clients: u32,
    base_ms: u64,
    cap_ms: u64,
    /// first sends uniform in [0, spread]
    spread_ms: u64,
    /// attempts completed per bucket
    capacity: u32,
    outage_end_ms: u64,
    max_attempts: u32,
    service_ms: f64,
}

#[derive(Default)]
struct Bucket {
    first: u64,
    retries: u64,
    successes: u64,
    rejections: u64,
}

struct Run {
    buckets: Vec<Bucket>,
    in_system: Vec<u64>,
    latencies: Vec<f64>,
    success_on: Vec<u64>,
    requests: u64,
    attempts: u64,
    gave_up: u64,
    unfinished: u64,
    makespan_ms: f64,
    events: u64,
}

fn uniform(seed: u64) -> f64 {
    (splitmix64(seed) >> 11) as f64 / (1u64 << 53) as f64
}

fn simulate(jitter: Jitter, p: Params, seed: u64) -> Run {
    let policy = Backoff::new(
        jitter,
        SimDuration::from_millis(p.base_ms),
        2.0,
        SimDuration::from_millis(p.cap_ms),
    )
    .unwrap();
    let n_buckets = (HORIZON_MS / BUCKET_MS) as usize;
    let mut buckets: Vec<Bucket> = (0..n_buckets).map(|_| Bucket::default()).collect();
    let mut delta_in_system = vec![0i64; n_buckets + 1];
    // (time ns, seq, client, attempt)
    let mut queue: BinaryHeap<Reverse<(u64, u64, u32, u32)>> = BinaryHeap::new();
    let mut seq = 0;
    let mut starts = vec![0u64; p.clients as usize];
    for c in 0..p.clients {
        let t = (uniform(seed ^ (c as u64) << 20) * p.spread_ms as f64 * 1e6) as u64;
        starts[c as usize] = t;
        queue.push(Reverse((t, seq, c, 1)));
        seq += 1;
        delta_in_system[(t / 1_000_000 / BUCKET_MS) as usize] += 1;
    }
    let mut states: Vec<BackoffState> = (0..p.clients).map(|_| BackoffState::new()).collect();
    let mut rngs: Vec<_> = (0..p.clients)
        .map(|c| from_seed(seed.wrapping_mul(31) ^ c as u64))
        .collect();
    let mut run = Run {
        buckets: Vec::new(),
        in_system: Vec::new(),
        latencies: Vec::new(),
        success_on: vec![0; p.max_attempts as usize + 1],
        requests: p.clients as u64,
        attempts: 0,
        gave_up: 0,
        unfinished: 0,
        makespan_ms: 0.0,
        events: 0,
    };
    while let Some(Reverse((t, _, c, attempt))) = queue.pop() {
        let b = (t / 1_000_000 / BUCKET_MS) as usize;
        if b >= n_buckets {
            run.unfinished += 1;
            continue;
        }
        run.events += 1;
        run.attempts += 1;
        let bucket = &mut buckets[b];
        if attempt == 1 {
            bucket.first += 1;
        } else {
            bucket.retries += 1;
        }
        let in_outage = t < p.outage_end_ms * 1_000_000;
        if !in_outage && bucket.successes < p.capacity as u64 {
            bucket.successes += 1;
            let done = t as f64 / 1e6 + p.service_ms;
            run.latencies.push(done - starts[c as usize] as f64 / 1e6);
            run.success_on[attempt as usize] += 1;
            run.makespan_ms = run.makespan_ms.max(done);
            delta_in_system[b + 1] -= 1;
            continue;
        }
        bucket.rejections += 1;
        if attempt >= p.max_attempts {
            run.gave_up += 1;
            run.makespan_ms = run.makespan_ms.max(t as f64 / 1e6);
            delta_in_system[b + 1] -= 1;
            continue;
        }
        let sleep = policy.next_delay_nanos(&mut states[c as usize], &mut rngs[c as usize]);
        // at least 1 ms between attempts (a round trip)
        let next = t + sleep.max(1_000_000);
        queue.push(Reverse((next, seq, c, attempt + 1)));
        seq += 1;
    }
    let mut level = 0i64;
    run.in_system = delta_in_system[..n_buckets]
        .iter()
        .map(|d| {
            level += d;
            level.max(0) as u64
        })
        .collect();
    run.buckets = buckets;
    run
}

// ---------------------------------------------------------------------------------------
// Result folder writer (docs/results.md)
// ---------------------------------------------------------------------------------------

struct Spec {
    name: &'static str,
    strategies: Vec<Jitter>,
    /// (dotted key, values as written)
    sweep: Vec<(&'static str, Vec<&'static str>)>,
    base: Params,
    replications: u32,
    /// repeat the sweep columns in timeseries.csv (docs/results.md leaves them out; accept both)
    sweep_in_timeseries: bool,
    pareto_file: bool,
    compare_file: bool,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn t95(df: u32) -> f64 {
    match df {
        1 => 12.706,
        2 => 4.303,
        3 => 3.182,
        4 => 2.776,
        5 => 2.571,
        _ => 2.262,
    }
}

/// The summary metrics as docs/results.md writes them, copied here on purpose rather than taken from
/// the library: the fixtures follow the contract, not the code under test.
const METRICS: [&str; 25] = [
    "requests",
    "attempts",
    "amplification",
    "succeeded",
    "failed",
    "gave_up_attempts",
    "gave_up_deadline",
    "gave_up_budget",
    "rejected_by_breaker",
    "throttled",
    "unfinished",
    "success_rate",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "latency_max_ms",
    "peak_arrivals",
    "peak_retries",
    "makespan_ms",
    "server_busy_share",
    "wasted_work_share",
    "retry_after_share",
    "events",
];

fn grid(sweep: &[(&str, Vec<&'static str>)]) -> Vec<Vec<&'static str>> {
    let mut points: Vec<Vec<&'static str>> = vec![Vec::new()];
    for (_, values) in sweep {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(*v);
                    q
                })
            })
            .collect();
    }
    points
}

fn apply(mut p: Params, key: &str, value: &str) -> Params {
    match key {
        "workload.clients" => p.clients = value.parse().unwrap(),
        "backoff.base" => p.base_ms = value.trim_end_matches("ms").parse().unwrap(),
        other => panic!("fixture does not sweep {other}"),
    }
    p
}

fn fmt(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        format!("{v:.4}")
    }
}

fn write_folder(dir: &Path, spec: &Spec) {
    std::fs::create_dir_all(dir).unwrap();
    let keys: Vec<&str> = spec.sweep.iter().map(|s| s.0).collect();
    let key_header: String = keys.iter().map(|k| format!(",{k}")).collect();
    let mut summary = format!(
        "point,strategy,replication,seed{key_header},{}\n",
        METRICS.join(",")
    );
    let mut aggregate = format!("point,strategy{key_header},metric,mean,sd,ci95_low,ci95_high,n\n");
    let ts_keys = if spec.sweep_in_timeseries {
        key_header.clone()
    } else {
        String::new()
    };
    let mut timeseries = format!(
        "point,strategy{ts_keys},t_ms,arrivals,first_attempts,retries,successes,rejections,timeouts,in_system,retry_dispersion\n"
    );
    let mut attempts = format!("point,strategy{key_header},attempt,succeeded,share\n");
    let mut latency = format!("point,strategy{key_header},latency_ms,cdf\n");
    let mut pareto = format!(
        "point,strategy{key_header},amplification,latency_p99_ms,on_front,recommended,success_rate,eligible\n"
    );
    let mut compare =
        String::from("point,metric,strategy_a,strategy_b,mean_diff,ci95_low,ci95_high,n\n");
    let mut front_input: Vec<(usize, Jitter, f64, f64, bool)> = Vec::new();

    for (pi, values) in grid(&spec.sweep).iter().enumerate() {
        let mut params = spec.base;
        for (k, v) in keys.iter().zip(values) {
            params = apply(params, k, v);
        }
        let vals: String = values.iter().map(|v| format!(",{v}")).collect();
        let mut amp_by_strategy: Vec<Vec<f64>> = Vec::new();
        for &jitter in &spec.strategies {
            let mut per_rep: Vec<Vec<f64>> = Vec::new();
            let mut success_on = vec![0u64; params.max_attempts as usize + 1];
            let mut all_lat: Vec<f64> = Vec::new();
            let mut total_requests = 0u64;
            for rep in 0..spec.replications {
                let seed = 1000 + rep as u64 * 7919 + pi as u64 * 104_729;
                let run = simulate(jitter, params, seed);
                let mut lat = run.latencies.clone();
                lat.sort_by(f64::total_cmp);
                let succeeded = lat.len() as f64;
                let peak_arr = run
                    .buckets
                    .iter()
                    .map(|b| b.first + b.retries)
                    .max()
                    .unwrap_or(0) as f64;
                let peak_ret = run.buckets.iter().map(|b| b.retries).max().unwrap_or(0) as f64;
                let busy = run.buckets.iter().map(|b| b.successes).sum::<u64>() as f64
                    / (run.buckets.len() as f64 * params.capacity as f64);
                let row = vec![
                    run.requests as f64,
                    run.attempts as f64,
                    run.attempts as f64 / run.requests as f64,
                    succeeded,
                    0.0,
                    run.gave_up as f64,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    run.unfinished as f64,
                    succeeded / run.requests as f64,
                    if lat.is_empty() {
                        f64::NAN
                    } else {
                        lat.iter().sum::<f64>() / succeeded
                    },
                    quantile(&lat, 0.5),
                    quantile(&lat, 0.95),
                    quantile(&lat, 0.99),
                    quantile(&lat, 0.999),
                    lat.last().copied().unwrap_or(f64::NAN),
                    peak_arr,
                    peak_ret,
                    run.makespan_ms,
                    busy,
                    0.0,
                    0.0,
                    run.events as f64,
                ];
                let cells: Vec<String> = row.iter().map(|v| fmt(*v)).collect();
                writeln!(
                    summary,
                    "{pi},{},{rep},{seed}{vals},{}",
                    jitter.name(),
                    cells.join(",")
                )
                .unwrap();
                per_rep.push(row);
                for (a, n) in run.success_on.iter().enumerate() {
                    success_on[a] += n;
                }
                total_requests += run.requests;
                all_lat.extend(lat);
                if rep == 0 {
                    for (b, bucket) in run.buckets.iter().enumerate() {
                        writeln!(
                            timeseries,
                            // retry_dispersion left empty: the fixtures draw no resync chart.
                            "{pi},{}{},{},{},{},{},{},{},0,{},",
                            jitter.name(),
                            if spec.sweep_in_timeseries {
                                vals.as_str()
                            } else {
                                ""
                            },
                            b as u64 * BUCKET_MS,
                            bucket.first + bucket.retries,
                            bucket.first,
                            bucket.retries,
                            bucket.successes,
                            bucket.rejections,
                            run.in_system[b]
                        )
                        .unwrap();
                    }
                }
            }
            let n = per_rep.len();
            let mut amp = 0.0;
            let mut p99 = 0.0;
            let mut success = f64::NAN;
            for (m, metric) in METRICS.iter().enumerate() {
                let xs: Vec<f64> = per_rep
                    .iter()
                    .map(|r| r[m])
                    .filter(|v| !v.is_nan())
                    .collect();
                if xs.is_empty() {
                    writeln!(aggregate, "{pi},{}{vals},{metric},,,,,0", jitter.name()).unwrap();
                    continue;
                }
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                if *metric == "amplification" {
                    amp = mean;
                    amp_by_strategy.push(xs.clone());
                }
                if *metric == "latency_p99_ms" {
                    p99 = mean;
                }
                if *metric == "success_rate" {
                    success = mean;
                }
                if xs.len() > 1 {
                    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                        / (xs.len() - 1) as f64)
                        .sqrt();
                    let h = t95(xs.len() as u32 - 1) * sd / (xs.len() as f64).sqrt();
                    writeln!(
                        aggregate,
                        "{pi},{}{vals},{metric},{},{},{},{},{}",
                        jitter.name(),
                        fmt(mean),
                        fmt(sd),
                        fmt(mean - h),
                        fmt(mean + h),
                        xs.len()
                    )
                    .unwrap();
                } else {
                    writeln!(
                        aggregate,
                        "{pi},{}{vals},{metric},{},,,,1",
                        jitter.name(),
                        fmt(mean)
                    )
                    .unwrap();
                }
            }
            assert!(n > 0);
            if p99 > 0.0 {
                // pareto.csv holds only (point, strategy) pairs with a p99 (some requests succeeded)
                // Eligible as recommend writes it by default: success at the 99.9 % target.
                front_input.push((pi, jitter, amp, p99, success >= 0.999));
            }
            for (a, count) in success_on.iter().enumerate().skip(1) {
                writeln!(
                    attempts,
                    "{pi},{}{vals},{a},{count},{:.5}",
                    jitter.name(),
                    *count as f64 / total_requests as f64
                )
                .unwrap();
            }
            all_lat.sort_by(f64::total_cmp);
            let k = all_lat.len();
            let step = k.div_ceil(300).max(1);
            for i in (0..k)
                .step_by(step)
                .chain(std::iter::once(k.saturating_sub(1)))
            {
                if k > 0 {
                    writeln!(
                        latency,
                        "{pi},{}{vals},{:.3},{:.5}",
                        jitter.name(),
                        all_lat[i],
                        (i + 1) as f64 / k as f64
                    )
                    .unwrap();
                }
            }
        }
        for (i, a) in spec.strategies.iter().enumerate().skip(1) {
            let d: Vec<f64> = amp_by_strategy[0]
                .iter()
                .zip(&amp_by_strategy[i])
                .map(|(x, y)| x - y)
                .collect();
            let mean = d.iter().sum::<f64>() / d.len() as f64;
            writeln!(
                compare,
                "{pi},amplification,{},{},{:.4},{:.4},{:.4},{}",
                spec.strategies[0].name(),
                a.name(),
                mean,
                mean - 0.1,
                mean + 0.1,
                d.len()
            )
            .unwrap();
        }
    }
    // pareto.csv: front of (amplification, p99); recommend the front point with the lowest p99.
    let on_front: Vec<bool> = front_input
        .iter()
        .map(|p| {
            p.4 && !front_input
                .iter()
                .any(|q| q.4 && q.2 <= p.2 && q.3 <= p.3 && (q.2 < p.2 || q.3 < p.3))
        })
        .collect();
    let best = front_input
        .iter()
        .zip(&on_front)
        .filter(|(_, f)| **f)
        .min_by(|a, b| a.0.3.total_cmp(&b.0.3))
        .map(|(p, _)| (p.0, p.1));
    let points = grid(&spec.sweep);
    for (p, front) in front_input.iter().zip(&on_front) {
        let vals: String = points[p.0].iter().map(|v| format!(",{v}")).collect();
        writeln!(
            pareto,
            "{},{}{vals},{:.4},{:.4},{front},{},,{}",
            p.0,
            p.1.name(),
            p.2,
            p.3,
            best == Some((p.0, p.1)),
            p.4
        )
        .unwrap();
    }

    let strategies: Vec<String> = spec
        .strategies
        .iter()
        .map(|j| format!("\"{}\"", j.name()))
        .collect();
    let mut scenario = format!(
        r#"name = "{name}"
description = "{clients} clients arrive within {spread} ms; the server answers 503 until {outage} ms, then completes {cap} attempts per 10 ms"
seed = 1000
horizon = "20s"
replications = {reps}

[workload]
kind = "burst"
clients = {clients}
spread = "{spread}ms"

[server]
kind = "queue"
workers = {cap}
queue = 1000
service = {{ dist = "constant", mean = "10ms" }}
overload_status = 503
retry_after = "off"

[client]
timeout = "1s"
deadline = "off"
max_attempts = {max_attempts}

[backoff]
strategies = [{strategies}]
base = "{base}ms"
multiplier = 2.0
cap = "{capms}ms"

[output]
bucket = "10ms"
"#,
        name = spec.name,
        clients = spec.base.clients,
        spread = spec.base.spread_ms,
        outage = spec.base.outage_end_ms,
        cap = spec.base.capacity,
        reps = spec.replications,
        max_attempts = spec.base.max_attempts,
        strategies = strategies.join(", "),
        base = spec.base.base_ms,
        capms = spec.base.cap_ms,
    );
    // A fault window ends after it starts (the scenario parser refuses an empty one).
    if spec.base.outage_end_ms > 0 {
        writeln!(
            scenario,
            "\n[[faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"{}ms\"\nstatus = 503",
            spec.base.outage_end_ms
        )
        .unwrap();
    }
    if !spec.sweep.is_empty() {
        scenario.push_str("\n[sweep]\n");
        for (k, values) in &spec.sweep {
            let vs: Vec<String> = values
                .iter()
                .map(|v| {
                    if v.parse::<f64>().is_ok() {
                        v.to_string()
                    } else {
                        format!("\"{v}\"")
                    }
                })
                .collect();
            writeln!(scenario, "\"{k}\" = [{}]", vs.join(", ")).unwrap();
        }
    }
    let files = [
        ("summary.csv", summary),
        ("aggregate.csv", aggregate),
        ("timeseries.csv", timeseries),
        ("attempts.csv", attempts),
        ("latency.csv", latency),
        ("scenario.toml", scenario),
        (
            "meta.json",
            r#"{"version":"0.1.0","command":"jitterlab run (test fixture)","seed":1000,"threads":1,"wall_seconds":0.5,"events":1,"events_per_second":2}"#
                .to_string(),
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    if spec.pareto_file {
        std::fs::write(dir.join("pareto.csv"), pareto).unwrap();
    }
    if spec.compare_file {
        std::fs::write(dir.join("compare.csv"), compare).unwrap();
    }
}

/// A folder under `JITTERLAB_CHART_DIR` (kept) or the temp dir (removed at drop).
struct Folder {
    path: PathBuf,
    keep: bool,
}

impl Drop for Folder {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn folder(name: &str) -> Folder {
    let (path, keep) = match std::env::var_os("JITTERLAB_CHART_DIR") {
        Some(root) => (PathBuf::from(root).join(name), true),
        None => (
            std::env::temp_dir().join(format!("jitterlab-charts-{name}-{}", std::process::id())),
            false,
        ),
    };
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).unwrap();
    Folder { path, keep }
}

const HERD: Params = Params {
    clients: 3000,
    base_ms: 100,
    cap_ms: 2000,
    spread_ms: 200,
    capacity: 100,
    outage_end_ms: 5000,
    max_attempts: 10,
    service_ms: 10.0,
};

fn herd_spec() -> Spec {
    Spec {
        name: "thundering-herd",
        strategies: vec![
            Jitter::NoJitter,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ],
        sweep: Vec::new(),
        base: HERD,
        replications: 3,
        sweep_in_timeseries: false,
        pareto_file: false,
        compare_file: true,
    }
}

fn one_key_spec() -> Spec {
    Spec {
        name: "contention-sweep",
        strategies: vec![
            Jitter::None,
            Jitter::NoJitter,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ],
        sweep: vec![(
            "workload.clients",
            vec!["10", "40", "70", "100", "130", "160", "190"],
        )],
        base: Params {
            clients: 10,
            base_ms: 5,
            cap_ms: 2000,
            spread_ms: 0,
            capacity: 2,
            outage_end_ms: 0,
            max_attempts: 30,
            service_ms: 10.0,
        },
        replications: 4,
        sweep_in_timeseries: true,
        pareto_file: false,
        compare_file: false,
    }
}

fn two_key_spec() -> Spec {
    Spec {
        name: "base-by-clients",
        strategies: vec![Jitter::NoJitter, Jitter::Full, Jitter::Decorrelated],
        sweep: vec![
            ("backoff.base", vec!["10ms", "50ms", "200ms"]),
            ("workload.clients", vec!["500", "1000", "2000"]),
        ],
        base: Params {
            clients: 500,
            max_attempts: 8,
            ..HERD
        },
        replications: 2,
        sweep_in_timeseries: false,
        pareto_file: true,
        compare_file: false,
    }
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

fn assert_png(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]),
        "{} is not a PNG",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR", "{}", path.display());
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1200, 700), "{}", path.display());
    // Text was drawn: the title band holds dark pixels.
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let stride = info.line_size;
    let dark = (12..40)
        .flat_map(|y| (200..1000).map(move |x| (y, x)))
        .filter(|(y, x)| {
            let i = y * stride + x * 3;
            buf[i] < 100 && buf[i + 1] < 100 && buf[i + 2] < 100
        })
        .count();
    assert!(
        dark > 200,
        "{}: no title text drawn ({dark} dark pixels)",
        path.display()
    );
}

/// The text nodes of an SVG written by plotters (`<text ...>\n  content\n</text>`).
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let start = t.find('>')? + 1;
            let end = t.find("</text>")?;
            Some(t[start..end].trim().to_string())
        })
        .collect()
}

fn assert_svg(path: &Path, title_part: &str, series: &[&str]) {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.contains("<svg"), "{}", path.display());
    let texts = svg_texts(&svg);
    assert!(
        !texts.is_empty(),
        "{}: text is not drawn as <text>",
        path.display()
    );
    assert!(
        texts.iter().any(|t| t.contains(title_part)),
        "{}: no text {title_part:?} in {texts:?}",
        path.display()
    );
    for s in series {
        assert!(
            texts.iter().any(|t| t == s
                || t.starts_with(&format!("{s} "))
                || t.starts_with(&format!("{s}:"))),
            "{}: no series {s:?} in {texts:?}",
            path.display()
        );
    }
}

fn stems(files: &[PathBuf]) -> Vec<String> {
    let mut out: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn no_temp_files(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".tmp"), "left a temporary file {name}");
    }
}

#[test]
fn herd_folder_draws_every_chart() {
    let f = folder("herd");
    write_folder(&f.path, &herd_spec());
    let files = plot::draw_all(&f.path).unwrap();
    let names = stems(&files);
    // No log-scale herd: these counts span less than the factor of 20 that calls for one.
    let expected = [
        "attempts.png",
        "attempts.svg",
        "herd.png",
        "herd.svg",
        "latency.png",
        "latency.svg",
        "load.png",
        "load.svg",
        "pareto.png",
        "pareto.svg",
    ];
    assert_eq!(names, expected);
    let series = ["no_jitter", "full", "equal", "decorrelated"];
    for file in &files {
        assert!(file.is_file(), "{}", file.display());
        if file.extension().unwrap() == "png" {
            assert_png(file);
        }
    }
    let svg = |stem: &str| f.path.join(format!("{stem}.svg"));
    assert_svg(&svg("herd"), "Thundering herd", &series);
    assert_svg(&svg("herd"), "capacity: 100 workers", &[]);
    assert_svg(&svg("load"), "Load and success per strategy", &series);
    assert_svg(&svg("load"), "success target 99.9 %", &[]);
    assert_svg(&svg("latency"), "Latency over all requests", &series);
    assert_svg(&svg("attempts"), "Success by attempt number", &series);
    assert_svg(&svg("pareto"), "Trade-off", &series);
    // The colours the charts used, for the notebooks: the strategies in the run's order.
    let palette = std::fs::read_to_string(f.path.join("palette.json")).unwrap();
    let at = |s: &str| palette.find(&format!("\"{s}\"")).unwrap();
    assert!(
        at("no_jitter") < at("full") && at("full") < at("decorrelated"),
        "{palette}"
    );
    assert!(palette.contains("\"#0072b2\""), "{palette}");
    no_temp_files(&f.path);
}

#[test]
fn one_key_sweep_draws_sweep_charts_and_no_heatmap() {
    let f = folder("one-key");
    write_folder(&f.path, &one_key_spec());
    let files = plot::draw_all(&f.path).unwrap();
    let names = stems(&files);
    for stem in [
        "sweep_attempts",
        "sweep_makespan_ms",
        "sweep_latency_p99_ms",
        "sweep_success_rate",
        "load",
        "herd",
    ] {
        assert!(
            names.contains(&format!("{stem}.png")),
            "{stem} missing: {names:?}"
        );
        assert!(
            names.contains(&format!("{stem}.svg")),
            "{stem} missing: {names:?}"
        );
    }
    assert!(
        !names.iter().any(|n| n.starts_with("heatmap_")),
        "{names:?}"
    );
    for file in files.iter().filter(|p| p.extension().unwrap() == "png") {
        assert_png(file);
    }
    let series = ["none", "no_jitter", "full", "equal", "decorrelated"];
    // Keys by their names, not their dotted paths; the herd at one world point, named.
    assert_svg(&f.path.join("load.svg"), "as clients changes", &series);
    assert_svg(
        &f.path.join("sweep_attempts.svg"),
        "Total calls (attempts) against clients",
        &series,
    );
    assert_svg(
        &f.path.join("sweep_makespan_ms.svg"),
        "Completion time (makespan) against clients",
        &series,
    );
    assert_svg(&f.path.join("herd.svg"), "with clients ", &series);
}

#[test]
fn two_key_sweep_draws_heatmaps_and_marks_the_recommendation() {
    let f = folder("two-key");
    write_folder(&f.path, &two_key_spec());
    let files = plot::draw_all(&f.path).unwrap();
    let names = stems(&files);
    for stem in ["heatmap_latency_p99_ms", "heatmap_amplification", "pareto"] {
        assert!(
            names.contains(&format!("{stem}.png")),
            "{stem} missing: {names:?}"
        );
    }
    // A grid of points is drawn as heat maps, never as a bar per point.
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("sweep_") || n.starts_with("load.")),
        "{names:?}"
    );
    for file in files.iter().filter(|p| p.extension().unwrap() == "png") {
        assert_png(file);
    }
    let series = ["no_jitter", "full", "decorrelated"];
    assert_svg(
        &f.path.join("heatmap_latency_p99_ms.svg"),
        "p99 latency by backoff base and clients",
        &series,
    );
    assert_svg(
        &f.path.join("heatmap_amplification.svg"),
        "backoff base",
        &series,
    );
    assert_svg(&f.path.join("pareto.svg"), "recommended", &series);
}

#[test]
fn a_folder_without_sweep_has_no_heatmap_or_sweep_chart() {
    let f = folder("no-sweep");
    write_folder(&f.path, &herd_spec());
    let names = stems(&plot::draw_all(&f.path).unwrap());
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("heatmap_") || n.starts_with("sweep_")),
        "{names:?}"
    );
}

fn folder_error(dir: &Path) -> (PathBuf, String) {
    match plot::draw_all(dir) {
        Err(Error::ResultFolder { path, message }) => (path, message),
        other => panic!("expected Error::ResultFolder, got {other:?}"),
    }
}

#[test]
fn missing_or_malformed_files_are_result_folder_errors() {
    let f = folder("broken");
    // Not a folder at all.
    let (_, message) = folder_error(&f.path.join("nope"));
    assert!(message.contains("not a folder"), "{message}");
    // An empty folder names every missing CSV.
    let (_, message) = folder_error(&f.path);
    assert!(
        message.contains("summary.csv") && message.contains("latency.csv"),
        "{message}"
    );
    assert!(matches!(
        report::write_report(&f.path),
        Err(Error::ResultFolder { .. })
    ));

    write_folder(&f.path, &herd_spec());
    std::fs::remove_file(f.path.join("latency.csv")).unwrap();
    let (_, message) = folder_error(&f.path);
    assert!(message.contains("missing latency.csv"), "{message}");

    // A malformed number names the file, the line and the column.
    write_folder(&f.path, &herd_spec());
    let ts = f.path.join("timeseries.csv");
    let text = std::fs::read_to_string(&ts).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[3] = lines[3].replacen(",0,", ",zero,", 1);
    std::fs::write(&ts, lines.join("\n")).unwrap();
    let (path, message) = folder_error(&f.path);
    assert!(path.ends_with("timeseries.csv"), "{}", path.display());
    assert!(
        message.contains("line 4") && message.contains("\"zero\""),
        "{message}"
    );

    // A row with a missing field.
    write_folder(&f.path, &herd_spec());
    let agg = f.path.join("aggregate.csv");
    let mut text = std::fs::read_to_string(&agg).unwrap();
    text.push_str("0,full\n");
    std::fs::write(&agg, text).unwrap();
    let (path, message) = folder_error(&f.path);
    assert!(path.ends_with("aggregate.csv"), "{}", path.display());
    assert!(message.contains("line"), "{message}");

    // A missing column.
    write_folder(&f.path, &herd_spec());
    let att = f.path.join("attempts.csv");
    let text = std::fs::read_to_string(&att)
        .unwrap()
        .replacen("share", "portion", 1);
    std::fs::write(&att, text).unwrap();
    let (path, message) = folder_error(&f.path);
    assert!(
        path.ends_with("attempts.csv") && message.contains("no column `share`"),
        "{message}"
    );

    // A broken scenario.toml.
    write_folder(&f.path, &herd_spec());
    std::fs::write(f.path.join("scenario.toml"), "name = [").unwrap();
    let (path, _) = folder_error(&f.path);
    assert!(path.ends_with("scenario.toml"));

    // Headers only: no rows.
    write_folder(&f.path, &herd_spec());
    let s = f.path.join("summary.csv");
    let header = std::fs::read_to_string(&s)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(&s, header + "\n").unwrap();
    let (_, message) = folder_error(&f.path);
    assert!(message.contains("no rows"), "{message}");
}

fn sample_delays(kinds: &[Jitter], retries: u32, samples: u32) -> Vec<(Jitter, u32, f64)> {
    let mut out = Vec::new();
    for &j in kinds {
        let policy = Backoff::new(
            j,
            SimDuration::from_millis(50),
            2.0,
            SimDuration::from_secs(2),
        )
        .unwrap();
        for s in 0..samples {
            let mut rng = from_seed(7 + s as u64);
            let mut state = BackoffState::new();
            for k in 1..=retries {
                out.push((
                    j,
                    k,
                    SimDuration::from(policy.next_delay(&mut state, &mut rng)).as_millis_f64(),
                ));
            }
        }
    }
    out
}

#[test]
fn delays_picture_in_png_and_svg() {
    let f = folder("delays");
    let kinds = [
        Jitter::NoJitter,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];
    let samples = sample_delays(&kinds, 8, 400);
    let png = f.path.join("delays.png");
    let svg = f.path.join("delays.svg");
    plot::draw_delays(&samples, &png).unwrap();
    plot::draw_delays(&samples, &svg).unwrap();
    assert_png(&png);
    assert_svg(
        &svg,
        "Sleep before each retry",
        &["no_jitter", "full", "equal", "decorrelated"],
    );
    assert!(plot::draw_delays(&samples, &f.path.join("delays.gif")).is_err());
    assert!(matches!(
        plot::draw_delays(&[], &png),
        Err(Error::Plot { .. })
    ));
    assert!(matches!(
        plot::draw_delays(&[(Jitter::Full, 1, f64::NAN)], &png),
        Err(Error::Plot { .. })
    ));
    no_temp_files(&f.path);
}

#[test]
fn report_is_self_contained_with_every_chart() {
    let f = folder("report");
    write_folder(&f.path, &herd_spec());
    let path = report::write_report(&f.path).unwrap();
    assert_eq!(path, f.path.join("report.html"));
    let html = std::fs::read_to_string(&path).unwrap();
    let ids = ["herd", "load", "latency", "attempts", "pareto"];
    for id in ids {
        assert!(html.contains(&format!("id=\"chart-{id}\"")), "no {id}");
    }
    // Each chart is its PNG (the rendering the chart check measures) with a link to its SVG.
    assert_eq!(html.matches("<img ").count(), ids.len());
    assert_eq!(
        html.matches(" src=\"data:image/png;base64,").count(),
        ids.len()
    );
    // The headline first (a burst: the herd), then the summary; the scenario last.
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    assert!(at("class=\"chart headline\" id=\"chart-herd\"") < at("id=\"summary-section\""));
    assert!(at("id=\"summary-section\"") < at("id=\"chart-load\""));
    assert!(at("id=\"chart-pareto\"") < at("id=\"scenario\""));
    assert!(html.contains("<pre>name = &quot;thundering-herd&quot;"));
    assert!(html.contains("id=\"summary\""));
    for forbidden in ["<script", "<link", "@import", "url("] {
        assert!(!html.contains(forbidden), "report uses {forbidden}");
    }
    // Nothing fetched: every source is data in the page.
    assert_eq!(
        html.matches("src=").count(),
        html.matches("src=\"data:image/png;base64,").count()
    );
}

#[test]
fn the_report_shows_the_pngs_drawn_once_and_links_their_svgs() {
    use base64::Engine as _;
    let f = folder("drawn-once");
    write_folder(&f.path, &herd_spec());
    let drawn = plot::draw_with_report(&f.path).unwrap();
    assert!(drawn.problems.is_empty(), "{:?}", drawn.problems);
    let html = std::fs::read_to_string(&drawn.report).unwrap();
    let pngs: Vec<&PathBuf> = (drawn.files.iter())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    assert_eq!(pngs.len(), html.matches("<img ").count());
    for png in pngs {
        // The very bytes of the chart file: the report and the files are one drawing.
        let data = base64::engine::general_purpose::STANDARD.encode(std::fs::read(png).unwrap());
        assert!(
            html.contains(&format!("src=\"data:image/png;base64,{data}\"")),
            "{} is not the picture in the report",
            png.display()
        );
        let svg = png.with_extension("svg");
        assert!(svg.is_file());
        let name = svg.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            html.contains(&format!("<a href=\"{name}\">")),
            "no link to {name}"
        );
    }
}

#[test]
fn report_loads_in_headless_chromium() {
    let Some(browser) = chromium() else {
        eprintln!(
            "NOTICE: chromium not found (apt-get install -y chromium); skipping the headless report test"
        );
        return;
    };
    let f = folder("chromium");
    write_folder(&f.path, &two_key_spec());
    let html = report::write_report(&f.path).unwrap();
    let dom = chromium_dom(&browser, &html, 1400, &f.path.join("chromium-profile"));
    assert!(
        dom.contains("id=\"title\""),
        "chromium dumped no report: {}",
        &dom[..dom.len().min(500)]
    );
    // Every chart the folder draws is in the DOM, once; the headline (a two-key grid: its
    // first heat map) opens the page, before the summary.
    let drawn: Vec<String> = stems(&plot::draw_all(&f.path).unwrap())
        .iter()
        .filter_map(|n| n.strip_suffix(".svg").map(str::to_string))
        .collect();
    for id in &drawn {
        assert!(
            dom.contains(&format!("id=\"chart-{id}\"")),
            "no {id} in the DOM"
        );
    }
    assert_eq!(
        dom.matches("<img ").count(),
        drawn.len(),
        "one picture per chart"
    );
    let first = dom.find("<section class=\"chart").expect("a chart section");
    assert!(
        dom[first..]
            .starts_with("<section class=\"chart headline\" id=\"chart-heatmap_latency_p99_ms\""),
        "{}",
        &dom[first..first + 120]
    );
    assert!(first < dom.find("id=\"summary-section\"").unwrap());
    assert!(dom.contains("base-by-clients"));
}

#[test]
fn draw_all_timing() {
    let f = folder("timing");
    write_folder(&f.path, &herd_spec());
    let start = Instant::now();
    let files = plot::draw_all(&f.path).unwrap();
    let report_start = Instant::now();
    report::write_report(&f.path).unwrap();
    eprintln!(
        "draw_all: {} files in {:.3} s; report: {:.3} s",
        files.len(),
        (report_start - start).as_secs_f64(),
        report_start.elapsed().as_secs_f64()
    );
}

#[test]
fn sparse_folder_draws_what_it_can() {
    let f = folder("sparse");
    write_folder(&f.path, &herd_spec());
    // Header-only latency and attempts files, no scenario.toml, one strategy without a time
    // series, and a value that is not defined (an empty cell; NaN and inf are refused on
    // reading, see untrusted_io): no panic, the other charts still come.
    for name in ["latency.csv", "attempts.csv"] {
        let p = f.path.join(name);
        let header = std::fs::read_to_string(&p)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string();
        std::fs::write(&p, header + "\n").unwrap();
    }
    std::fs::remove_file(f.path.join("scenario.toml")).unwrap();
    let ts = f.path.join("timeseries.csv");
    let kept: Vec<String> = std::fs::read_to_string(&ts)
        .unwrap()
        .lines()
        .filter(|l| !l.contains(",equal,"))
        .map(str::to_string)
        .collect();
    std::fs::write(&ts, kept.join("\n")).unwrap();
    let agg = f.path.join("aggregate.csv");
    let text = std::fs::read_to_string(&agg).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let i = lines
        .iter()
        .position(|l| l.contains(",full,latency_p99_ms,"))
        .unwrap();
    lines[i] = "0,full,latency_p99_ms,,,,,3".to_string();
    std::fs::write(&agg, lines.join("\n")).unwrap();

    let names = stems(&plot::draw_all(&f.path).unwrap());
    assert!(names.contains(&"herd.png".to_string()), "{names:?}");
    assert!(names.contains(&"load.png".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("latency") || n.starts_with("attempts")),
        "{names:?}"
    );
    let herd = std::fs::read_to_string(f.path.join("herd.svg")).unwrap();
    assert!(!svg_texts(&herd).iter().any(|t| t == "equal"));
    report::write_report(&f.path).unwrap();
}
