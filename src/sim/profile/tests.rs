use super::*;
use crate::rng::{SimRng, StreamFamily, StreamKind};
use crate::sim::workload::exponential;
use crate::time::SimDuration;

fn at(secs: f64) -> SimTime {
    SimTime(SimDuration::from_secs_f64(secs).as_nanos())
}

fn profile(points: &[(f64, f64)]) -> RateProfile {
    RateProfile::new(points.iter().map(|&(t, r)| (at(t), r)).collect()).unwrap()
}

/// The stream the open workload draws its arrivals from.
fn arrivals_stream(seed: u64) -> SimRng {
    StreamFamily::new(seed, 0, StreamKind::Arrivals).get(0, 0)
}

fn all(p: &RateProfile, end: SimTime, rng: &mut SimRng) -> Vec<SimTime> {
    let mut a = p.arrivals(end);
    std::iter::from_fn(|| a.next_arrival(rng)).collect()
}

/// 40/s with a 5 s spike to 80/s at t = 20 s.
fn spike() -> RateProfile {
    profile(&[
        (0.0, 40.0),
        (20.0, 40.0),
        (20.0, 80.0),
        (25.0, 80.0),
        (25.0, 40.0),
    ])
}

/// 40/s ramping up to 80/s over 20 s, then back down to 40/s over 5 s.
fn ramps() -> RateProfile {
    profile(&[(0.0, 40.0), (20.0, 80.0), (25.0, 40.0)])
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn points_are_validated_naming_the_point() {
    assert_eq!(RateProfile::new(vec![]).unwrap_err().field, "rate");
    for (points, field) in [
        (vec![(at(0.0), -1.0)], "rate[0]"),
        (vec![(at(0.0), 1.0), (at(1.0), f64::NAN)], "rate[1]"),
        (vec![(at(0.0), 1.0), (at(1.0), f64::INFINITY)], "rate[1]"),
        (
            vec![(at(0.0), 1.0), (at(2.0), 1.0), (at(1.0), 1.0)],
            "rate[2]",
        ),
    ] {
        let err = RateProfile::new(points).unwrap_err();
        assert_eq!(err.field, field, "{err}");
    }
    let err = RateProfile::new(vec![(at(2.0), 1.0), (at(1.0), 1.0)]).unwrap_err();
    assert!(err.to_string().contains("(2s)"), "{err}");
    assert!(
        RateProfile::new(vec![(at(1.0), 0.0), (at(1.0), 5.0), (at(1.0), 0.0)]).is_ok(),
        "points at equal times are steps"
    );
    assert!(RateProfile::constant(0.0).is_ok());
}

#[test]
fn rate_follows_the_interpolation_rule() {
    let p = spike();
    for (t, r) in [
        (0.0, 40.0),
        (19.999_999_999, 40.0),
        (20.0, 80.0),
        (24.9, 80.0),
        (25.0, 40.0),
        (1e4, 40.0),
    ] {
        assert_eq!(p.rate_at(at(t)), r, "spike at {t}");
    }
    let p = ramps();
    for (t, r) in [
        (0.0, 40.0),
        (10.0, 60.0),
        (20.0, 80.0),
        (22.5, 60.0),
        (25.0, 40.0),
        (99.0, 40.0),
    ] {
        assert_eq!(p.rate_at(at(t)), r, "ramps at {t}");
    }
    // Silent before the first point.
    let p = profile(&[(5.0, 10.0)]);
    assert_eq!(p.rate_at(at(4.999)), 0.0);
    assert_eq!(p.rate_at(at(5.0)), 10.0);
}

#[test]
fn integral_is_closed_form_per_segment() {
    let p = spike();
    assert!(close(p.integral(at(20.0)), 800.0));
    assert!(close(p.expected_arrivals(at(20.0), at(25.0)), 400.0));
    assert!(close(p.integral(at(30.0)), 40.0 * 30.0 + 40.0 * 5.0));
    let p = ramps();
    // Trapezoids: (40 + 60) / 2 * 10, (40 + 80) / 2 * 20, + (80 + 40) / 2 * 5, + 40 * 5.
    assert!(close(p.integral(at(10.0)), 500.0));
    assert!(close(p.integral(at(20.0)), 1200.0));
    assert!(close(p.integral(at(25.0)), 1500.0));
    assert!(close(p.integral(at(30.0)), 1700.0));
    // A partial ramp: from 10 s (60/s) to 15 s (70/s).
    assert!(close(p.expected_arrivals(at(10.0), at(15.0)), 325.0));
    let p = profile(&[(5.0, 10.0)]);
    assert_eq!(p.integral(at(5.0)), 0.0);
    assert!(close(p.integral(at(7.0)), 20.0));
}

/// The constant-rate open workload exactly as `sim::engine` schedules it: the first arrival at
/// `start + exponential(mean)`, each next at `now + exponential(mean)`, kept while `< end`.
fn engine_poisson(rate: f64, start: SimDuration, duration: SimDuration, seed: u64) -> Vec<SimTime> {
    let mut rng = arrivals_stream(seed);
    let mean_gap_ns = 1e9 / rate;
    let end = SimTime(start.as_nanos()) + duration;
    let mut t = SimTime(start.as_nanos()) + exponential(&mut rng, mean_gap_ns);
    let mut out = Vec::new();
    while t < end {
        out.push(t);
        t += exponential(&mut rng, mean_gap_ns);
    }
    out
}

#[test]
fn constant_profile_reproduces_the_constant_workload_exactly() {
    let (ms, secs) = (SimDuration::from_millis, SimDuration::from_secs);
    for (rate, start, duration) in [
        (1000.0, ms(1500), secs(10)),
        (0.3, ms(0), secs(100)),
        (1e6, ms(3), ms(50)),
        (40.0, ms(0), secs(60)),
        (7.77, ms(250), secs(30)),
    ] {
        for seed in [1, 42, 1_000_003] {
            let expected = engine_poisson(rate, start, duration, seed);
            let begin = SimTime(start.as_nanos());
            let p = RateProfile::new(vec![(begin, rate)]).unwrap();
            let got = all(&p, begin + duration, &mut arrivals_stream(seed));
            assert!(expected.len() >= 10, "{rate}: {}", expected.len());
            assert_eq!(got, expected, "rate {rate}, start {start}, seed {seed}");
        }
    }
    // Points that do not change the rate change nothing.
    let p = profile(&[(0.0, 40.0), (10.0, 40.0), (10.0, 40.0), (20.0, 40.0)]);
    assert_eq!(
        all(&p, at(60.0), &mut arrivals_stream(5)),
        engine_poisson(40.0, SimDuration::ZERO, SimDuration::from_secs(60), 5)
    );
}

#[test]
fn points_that_do_not_change_the_rate_are_merged_away() {
    // Crossing a point costs a float subtraction; merging keeps such points from costing even
    // a nanosecond of rounding.
    let p = profile(&[(0.0, 40.0), (10.0, 40.0), (10.0, 40.0), (20.0, 40.0)]);
    assert_eq!(p.segments, RateProfile::constant(40.0).unwrap().segments);
    // A silent lead-in and a silent first span are one segment; a ramp stays; then the tail.
    let p = profile(&[(2.0, 0.0), (3.0, 0.0), (3.0, 10.0), (4.0, 20.0)]);
    assert_eq!(p.segments.len(), 3, "{:?}", p.segments);
}

#[test]
fn step_profile_matches_the_constant_workload_until_the_step() {
    let constant = engine_poisson(40.0, SimDuration::ZERO, SimDuration::from_secs(60), 7);
    let stepped = all(&spike(), at(60.0), &mut arrivals_stream(7));
    let before = constant.iter().take_while(|&&t| t < at(20.0)).count();
    assert!(before > 700, "{before}");
    assert_eq!(stepped[..before], constant[..before]);
    // The gap that crosses 20 s continues at 80/s: from there the streams part.
    assert!(stepped[before] < constant[before]);
}

#[test]
fn one_draw_per_call_until_the_end() {
    let p = ramps();
    let mut a = arrivals_stream(3);
    let mut b = a.clone();
    let mut stream = p.arrivals(at(30.0));
    let n = std::iter::from_fn(|| stream.next_arrival(&mut a)).count();
    assert!(n > 1000, "{n}");
    // n arrivals and the one that fell past the horizon.
    for _ in 0..=n {
        let _: f64 = Exp1.sample(&mut b);
    }
    assert_eq!(a, b);
    assert_eq!(stream.next_arrival(&mut a), None);
    assert_eq!(a, b, "no draw once finished");
}

/// Mean and sample variance of the number of arrivals before `end` over `seeds` streams.
fn count_stats(p: &RateProfile, end: SimTime, seeds: u64) -> (f64, f64) {
    let counts: Vec<f64> = (0..seeds)
        .map(|seed| all(p, end, &mut arrivals_stream(seed)).len() as f64)
        .collect();
    let n = counts.len() as f64;
    let mean = counts.iter().sum::<f64>() / n;
    let var = counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

#[test]
fn counts_are_poisson_with_the_integral_as_mean() {
    let seeds = 400;
    for (p, lambda) in [(spike(), 1400.0), (ramps(), 1700.0)] {
        assert!(close(p.integral(at(30.0)), lambda));
        let (mean, var) = count_stats(&p, at(30.0), seeds);
        // The mean of `seeds` Poisson(Λ) counts: sd sqrt(Λ / seeds). Its sample variance: sd
        // about Λ sqrt(2 / (seeds - 1)).
        let sd_mean = (lambda / seeds as f64).sqrt();
        assert!(
            (mean - lambda).abs() < 4.0 * sd_mean,
            "mean {mean} vs {lambda}"
        );
        let sd_var = lambda * (2.0 / (seeds as f64 - 1.0)).sqrt();
        assert!(
            (var - lambda).abs() < 4.0 * sd_var,
            "variance {var} vs {lambda}"
        );
    }
}

#[test]
fn arrivals_per_segment_follow_the_profile() {
    // Silent to 2 s; 50/s to 4 s (100 expected); ramp 50 -> 150 to 6 s (200); a step down to
    // silence to 7 s (0); then 100/s to the 9 s horizon (200).
    let p = profile(&[
        (0.0, 0.0),
        (2.0, 0.0),
        (2.0, 50.0),
        (4.0, 50.0),
        (6.0, 150.0),
        (6.0, 0.0),
        (7.0, 0.0),
        (7.0, 100.0),
    ]);
    let edges = [0.0, 2.0, 4.0, 6.0, 7.0, 9.0];
    let per_run = [0.0, 100.0, 200.0, 0.0, 200.0];
    let seeds = 300;
    let mut counts = [0u64; 5];
    for seed in 0..seeds {
        for t in all(&p, at(9.0), &mut arrivals_stream(seed)) {
            let i = edges.iter().rposition(|&e| at(e) <= t).unwrap();
            counts[i] += 1;
        }
    }
    for i in 0..5 {
        let (from, to) = (at(edges[i]), at(edges[i + 1]));
        assert!(close(p.expected_arrivals(from, to), per_run[i]));
        let expected = per_run[i] * seeds as f64;
        let tolerance = 4.0 * expected.sqrt();
        assert!(
            (counts[i] as f64 - expected).abs() <= tolerance,
            "segment {i}: {} vs {expected}",
            counts[i]
        );
    }
    assert_eq!((counts[0], counts[3]), (0, 0), "silent spans send nothing");
}

#[test]
fn a_silent_tail_ends_the_stream() {
    let p = profile(&[(0.0, 100.0), (1.0, 100.0), (1.0, 0.0)]);
    let mut rng = arrivals_stream(2);
    let mut stream = p.arrivals(SimTime::NEVER);
    let got: Vec<SimTime> = std::iter::from_fn(|| stream.next_arrival(&mut rng)).collect();
    assert!(
        got.len() > 50 && got.iter().all(|&t| t < at(1.0)),
        "{}",
        got.len()
    );
    assert_eq!(stream.next_arrival(&mut rng), None);
    assert_eq!(
        RateProfile::constant(0.0)
            .unwrap()
            .arrivals(SimTime::NEVER)
            .next_arrival(&mut rng),
        None
    );
}

/// Kolmogorov-Smirnov test of the arrivals of a ramp `r0 -> r1` over `[0, T)` (silent after):
/// given their number, they are independent with CDF Λ(t) / Λ(T), Λ(t) = r0 t + (r1 - r0)
/// t^2 / (2 T), written out here rather than taken from the code under test.
fn ks_ramp(r0: f64, r1: f64, secs: f64) -> (f64, f64) {
    let p = profile(&[(0.0, r0), (secs, r1), (secs, 0.0)]);
    let mut xs: Vec<f64> = Vec::new();
    let mut seed = 0;
    while xs.len() < 20_000 {
        assert!(seed < 1_000, "only {} arrivals in {seed} runs", xs.len());
        let times = all(&p, SimTime::NEVER, &mut arrivals_stream(seed));
        xs.extend(times.iter().map(|t| t.as_nanos() as f64 / 1e9));
        seed += 1;
    }
    xs.sort_by(f64::total_cmp);
    let lambda = |t: f64| r0 * t + (r1 - r0) * t * t / (2.0 * secs);
    let total = lambda(secs);
    let n = xs.len() as f64;
    let d = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = lambda(x) / total;
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max);
    // Critical value at the 0.1 % level.
    (d, 1.949 / n.sqrt())
}

#[test]
fn arrivals_within_ramps_follow_the_normalised_rate() {
    for (r0, r1, secs) in [
        (0.0, 100.0, 10.0),
        (100.0, 0.0, 10.0),
        (20.0, 200.0, 5.0),
        (300.0, 280.0, 2.0),
        (0.5, 5000.0, 1.0),
    ] {
        let (d, critical) = ks_ramp(r0, r1, secs);
        assert!(
            d < critical,
            "ramp {r0} -> {r1} over {secs}s: D = {d}, critical {critical}"
        );
    }
}

#[test]
fn base_and_trigger_windows() {
    let never = SimTime::NEVER;
    let cases = [
        (spike(), 40.0, vec![(at(20.0), at(25.0))]),
        (ramps(), 40.0, vec![(at(0.0), at(25.0))]),
        // Up from 10 s, peak at 20 s, down through 40/s at 25 s, a dip, back to 40.
        (
            profile(&[
                (0.0, 40.0),
                (10.0, 40.0),
                (20.0, 60.0),
                (30.0, 20.0),
                (40.0, 40.0),
            ]),
            40.0,
            vec![(at(10.0), at(25.0))],
        ),
        // A dip first, then a rise crossing the base at 15 s, then a step back down.
        (
            profile(&[(0.0, 40.0), (10.0, 20.0), (20.0, 60.0), (20.0, 40.0)]),
            40.0,
            vec![(at(15.0), at(20.0))],
        ),
        // Rising for good.
        (
            profile(&[(0.0, 10.0), (5.0, 20.0)]),
            10.0,
            vec![(at(0.0), never)],
        ),
        // A profile that begins at 5 s: its base is its first rate, the silence is no trigger.
        (
            profile(&[
                (5.0, 40.0),
                (10.0, 40.0),
                (10.0, 80.0),
                (12.0, 80.0),
                (12.0, 40.0),
            ]),
            40.0,
            vec![(at(10.0), at(12.0))],
        ),
        // A step at the first point: the base is the rate after it.
        (
            profile(&[(0.0, 0.0), (0.0, 40.0), (10.0, 40.0), (10.0, 80.0)]),
            40.0,
            vec![(at(10.0), never)],
        ),
        (RateProfile::constant(40.0).unwrap(), 40.0, vec![]),
    ];
    for (i, (p, base, windows)) in cases.into_iter().enumerate() {
        assert_eq!(p.base(), base, "case {i}");
        assert_eq!(p.trigger_windows(), windows, "case {i}");
    }
}
