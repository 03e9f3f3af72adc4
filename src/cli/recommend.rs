//! The text `recommend` prints: the objective and constraints, then either the pairs that meet
//! the constraints, best first, with their 95 % intervals, or the pairs that come closest,
//! with what they miss.

use std::fmt::Write as _;

use jitterlab::metric::{Better, Metric, Unit};
use jitterlab::recommend::{Candidate, Constraints, Miss, Objective, Recommendation};

/// The columns of the ranking, with their widths; the objective's metric is added when it is
/// not one of them.
const COLUMNS: [(Metric, usize); 3] = [
    (Metric::Amplification, 26),
    (Metric::LatencyP99Ms, 30),
    (Metric::SuccessRate, 24),
];

/// The answer, at most `top` pairs (at least one).
pub fn render(
    answer: &Recommendation,
    constraints: &Constraints,
    objective: Objective,
    top: usize,
) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "objective: {}", describe_objective(objective));
    let _ = writeln!(text, "constraints: {}", describe_constraints(constraints));
    if answer.ranked.is_empty() {
        let _ = writeln!(
            text,
            "\nno (point, strategy) meets every constraint; the closest are:"
        );
        for c in answer.closest.iter().take(top.max(1)) {
            let what = c.misses.iter().map(miss).collect::<Vec<_>>().join("; ");
            let name = pair_name(&answer.candidates[c.candidate]);
            let _ = writeln!(text, "  {name:<40} misses: {what}");
        }
        let _ = writeln!(
            text,
            "relax the constraint they miss most, or widen the sweep."
        );
        return text;
    }
    let mut columns = COLUMNS.to_vec();
    if !columns.iter().any(|(m, _)| *m == objective.metric()) {
        columns.push((objective.metric(), 30));
    }
    let _ = writeln!(
        text,
        "\n{} of {} (point, strategy) pairs meet the constraints; best first:",
        answer.ranked.len(),
        answer.candidates.len()
    );
    let _ = write!(text, "  {:<4} {:<40}", "rank", "point / strategy");
    for (metric, width) in &columns {
        let _ = write!(text, " {:>width$}", format!("{} [95% CI]", metric.short()));
    }
    text.push('\n');
    for (rank, r) in answer.ranked.iter().take(top.max(1)).enumerate() {
        let c = &answer.candidates[r.candidate];
        let _ = write!(text, "  {:<4} {:<40}", rank + 1, pair_name(c));
        for (metric, width) in &columns {
            let _ = write!(text, " {:>width$}", cell(c, *metric));
        }
        let _ = writeln!(text, "{}", if r.borderline { "  borderline" } else { "" });
    }
    if let Some(best) = answer.best() {
        let _ = writeln!(text, "\nrecommended: {}", pair_name(best));
    }
    text
}

/// `lowest p99 latency, then lowest amplification`.
fn describe_objective(objective: Objective) -> String {
    let metric = objective.metric();
    let way = if metric.better() == Better::Higher {
        "highest"
    } else {
        "lowest"
    };
    format!(
        "{way} {}, then lowest {}",
        metric.label(),
        Objective::name_of(objective.tie_break())
    )
}

fn describe_constraints(c: &Constraints) -> String {
    let mut parts = Vec::new();
    if let Some(p) = c.p99 {
        parts.push(format!("p99 <= {p}"));
    }
    if let Some(d) = c.deadline {
        parts.push(format!("p99.9 <= {d} (deadline)"));
    }
    if let Some(a) = c.max_amplification {
        parts.push(format!("amplification <= {a}"));
    }
    if let Some(s) = c.min_success {
        parts.push(format!("success >= {s}"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// `p99_ms 6057 > 1.000`.
fn miss(m: &Miss) -> String {
    format!(
        "{} {} {} {}",
        m.limit.metric.short(),
        number_short(m.mean),
        if m.limit.is_floor() { "<" } else { ">" },
        number_short(m.limit.bound)
    )
}

/// A mean with its interval: `9.172 [9.159, 9.184]`. The interval is shown within the
/// metric's natural range (no negative count, no share above 1); aggregate.csv keeps it as
/// computed.
fn cell(c: &Candidate, metric: Metric) -> String {
    let i = c.metrics[metric];
    let f = |x: f64| {
        if metric.unit() == Unit::Share {
            format!("{x:.4}")
        } else {
            number_short(x)
        }
    };
    match (i.low, i.high) {
        (Some(l), Some(h)) => {
            let unit = metric.unit();
            format!("{} [{}, {}]", f(i.mean), f(unit.clamp(l)), f(unit.clamp(h)))
        }
        _ => f(i.mean),
    }
}

fn number_short(x: f64) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

/// `point label / strategy`, escaped and shortened as every name that is printed.
fn pair_name(c: &Candidate) -> String {
    let strategy = jitterlab::text::shown(&c.strategy);
    if c.label.is_empty() {
        strategy
    } else {
        format!("{} / {strategy}", jitterlab::text::for_terminal(&c.label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jitterlab::metric::PerMetric;
    use jitterlab::recommend::Interval;

    fn candidate(mean: f64, low: f64, high: f64) -> Candidate {
        Candidate {
            point: 0,
            label: String::new(),
            values: Vec::new(),
            strategy: "full".into(),
            metrics: PerMetric::from_fn(|_| Interval {
                mean,
                low: Some(low),
                high: Some(high),
            }),
            on_front: true,
        }
    }

    #[test]
    fn intervals_are_printed_within_the_metrics_range() {
        let c = candidate(0.5, -0.25, 1.25);
        // A count never goes below 0; a share stays within [0, 1].
        assert_eq!(cell(&c, Metric::Failed), "0.5000 [0.0000, 1.250]");
        assert_eq!(cell(&c, Metric::SuccessRate), "0.5000 [0.0000, 1.0000]");
        assert_eq!(cell(&c, Metric::LatencyP99Ms), "0.5000 [0.0000, 1.250]");
        // Inside the range nothing changes.
        let c = candidate(2.0, 1.5, 2.5);
        assert_eq!(cell(&c, Metric::Amplification), "2.000 [1.500, 2.500]");
    }
}
