//! The text `recommend` prints: the objective and constraints, then for one world point the
//! pairs that meet the constraints, best first, with their 95 % intervals (or the pairs that
//! come closest, with what they miss); for several, one line per world point.

use std::fmt::Write as _;

use jitterlab::metric::{Better, Metric, Unit};
use jitterlab::recommend::{
    Candidate, Edge, FloorSource, HedgingDefaults, Miss, Objective, Recommendation, WorldAnswer,
};
use jitterlab::text::pad;

/// The columns of the ranking: the load per request (a chain's, see [`Objective::load`]),
/// p99 and success; the objective's metric is added when it is not one of them.
fn columns(objective: Objective) -> Vec<Metric> {
    vec![objective.load(), Metric::LatencyP99Ms, Metric::SuccessRate]
}

/// The answer, at most `top` pairs per world point shown in full (at least one). `dir` is the
/// folder as the user named it, for the `--at` hint.
pub fn render(answer: &Recommendation, objective: Objective, top: usize, dir: &str) -> String {
    let mut text = String::new();
    let hedging = answer.hedging_defaults.unwrap_or(HedgingDefaults {
        objective: false,
        max_amplification: false,
    });
    let because = " (the default for a folder that hedges: the tail it cuts, within a limit on the copies it sends; --objective sets another)";
    let _ = writeln!(
        text,
        "objective: {}{}",
        describe_objective(objective),
        if hedging.objective { because } else { "" }
    );
    let _ = writeln!(
        text,
        "constraints: {}",
        describe_constraints(answer, hedging.max_amplification)
    );
    let mut compared = vec!["strategies".to_string()];
    compared.extend(answer.choice_keys.iter().cloned());
    let _ = write!(text, "compared: {}", compared.join(" × "));
    if answer.world_keys.is_empty() {
        text.push('\n');
    } else {
        let _ = writeln!(
            text,
            ", at one point of {} at a time (never across them)",
            answer.world_keys.join(", ")
        );
    }
    match &answer.worlds[..] {
        [one] => detail(&mut text, answer, one, objective, top),
        many => summary(&mut text, answer, many, dir),
    }
    text
}

/// One world point: the ranking, or the closest pairs and what they miss.
fn detail(
    text: &mut String,
    answer: &Recommendation,
    world: &WorldAnswer,
    objective: Objective,
    top: usize,
) {
    if !world.label.is_empty() {
        let _ = writeln!(text, "at: {} ({})", world.label, world.at.join(", "));
    }
    let pairs = answer
        .candidates
        .iter()
        .filter(|c| c.world == world.world)
        .count();
    if world.ranked.is_empty() {
        let _ = writeln!(
            text,
            "\nno (point, strategy) meets every constraint; the closest are:"
        );
        let closest: Vec<_> = world.closest.iter().take(top.max(1)).collect();
        let name_w = (closest.iter())
            .map(|c| choice_name(&answer.candidates[c.candidate]).chars().count())
            .max()
            .unwrap_or(0);
        for c in closest {
            let what = c.misses.iter().map(miss).collect::<Vec<_>>().join("; ");
            let name = choice_name(&answer.candidates[c.candidate]);
            let _ = writeln!(text, "  {}  misses: {what}", pad(&name, name_w, false));
        }
        let _ = writeln!(
            text,
            "relax the constraint they miss most, or widen the sweep."
        );
        return;
    }
    let mut columns = columns(objective);
    if !columns.contains(&objective.metric()) {
        columns.push(objective.metric());
    }
    let _ = writeln!(
        text,
        "\n{} of {pairs} (point, strategy) pairs meet the constraints; best first:",
        world.ranked.len(),
    );
    // The world point is on the line above: a pair is its strategy and choice values.
    let shown: Vec<&Candidate> = (world.ranked.iter().take(top.max(1)))
        .map(|r| &answer.candidates[r.candidate])
        .collect();
    let head: Vec<String> = (columns.iter())
        .map(|m| format!("{} [95% CI]", m.short()))
        .collect();
    let rows: Vec<(String, Vec<Cell>)> = (shown.iter())
        .map(|c| {
            (
                choice_name(c),
                columns.iter().map(|m| cell_parts(c, *m)).collect(),
            )
        })
        .collect();
    let lines = ranking_lines(&head, &rows);
    let _ = writeln!(text, "{}", lines[0]);
    for (r, line) in world.ranked.iter().zip(&lines[1..]) {
        let borderline = if r.borderline { "  borderline" } else { "" };
        let _ = writeln!(text, "{line}{borderline}");
    }
    if let Some(best) = world.best() {
        let _ = writeln!(
            text,
            "\nrecommended: {}",
            pair_name(&answer.candidates[best])
        );
        doubt_notes(text, answer, world, "");
        edge_notes(text, &world.edges);
    }
}

/// What makes the pick less sure than it looks: pairs the replications do not tell from it
/// on the objective, and a p99 or a success far from the other pairs'. `at` names the world
/// point when several are listed.
fn doubt_notes(text: &mut String, answer: &Recommendation, world: &WorldAnswer, at: &str) {
    let objective = answer.objective;
    if !world.tied.is_empty() {
        let names: Vec<String> = (world.tied.iter().take(3))
            .map(|&i| choice_name(&answer.candidates[i]))
            .collect();
        let more = match world.tied.len() {
            n if n > 3 => format!(" and {} more", n - 3),
            _ => String::new(),
        };
        let tie_break = objective.tie_break();
        let why = match world.tie_decided {
            false => format!(
                "no better on {} beyond the noise either: the first-ranked kept",
                Objective::name_of(tie_break)
            ),
            true => {
                let way = if tie_break.better() == Better::Higher {
                    "highest"
                } else {
                    "lowest"
                };
                format!("chosen for the {way} {}", Objective::name_of(tie_break))
            }
        };
        let _ = writeln!(
            text,
            "{at}tied on {} with {}{more} (the replications' 95 % intervals do not tell them apart): {why}.",
            objective.metric().short(),
            names.join(", "),
        );
    }
    let Some(pick) = world.best().map(|i| &answer.candidates[i]) else {
        return;
    };
    for far in &world.far {
        let _ = match far.metric {
            Metric::SuccessRate => writeln!(
                text,
                "{at}note: {} serves {} of requests where another pair here serves {}; \
                 --objective success ranks by it.",
                choice_name(pick),
                jitterlab::output::labels::percent_near(far.value, far.others),
                jitterlab::output::labels::percent_near(far.others, far.value),
            ),
            _ => writeln!(
                text,
                "{at}note: {}'s p99 ({} ms) is {:.1}× the median of the other pairs here ({} ms); \
                 --p99 sets a limit.",
                choice_name(pick),
                number_short(far.value),
                far.value / far.others,
                number_short(far.others),
            ),
        };
    }
}

/// What the pick at the edge of the grid means: the best may lie beyond it.
fn edge_notes(text: &mut String, edges: &[Edge]) {
    for e in edges {
        let (which, way) = match e.largest {
            true => ("largest", "above"),
            false => ("smallest", "below"),
        };
        let _ = writeln!(
            text,
            "at the edge of the grid: {} = {} is the {which} value swept, so the best may lie \
             beyond it; extend the sweep {way} {}.",
            e.key, e.value, e.value
        );
    }
}

/// Several world points: one line each (a table whose columns fit their cells), and how to
/// see one in full.
fn summary(text: &mut String, answer: &Recommendation, worlds: &[WorldAnswer], dir: &str) {
    let floor = answer.constraints.min_success;
    let metrics = columns(answer.objective);
    let mut head = vec!["world point".to_string(), "recommended".to_string()];
    head.extend(metrics.iter().map(|m| m.short().to_string()));
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut misses: Vec<(String, String)> = Vec::new();
    for w in worlds {
        match w.best() {
            Some(i) => {
                let c = &answer.candidates[i];
                let mut row = vec![w.label.clone(), choice_name(c)];
                row.extend(metrics.iter().map(|&m| match m {
                    Metric::SuccessRate => share(c.mean(m), floor),
                    _ => number_short(c.mean(m)),
                }));
                rows.push(row);
            }
            None => {
                let why = w.closest.first().map_or(String::new(), |c| {
                    let what = c.misses.iter().map(miss).collect::<Vec<_>>().join("; ");
                    let pick = &answer.candidates[c.candidate];
                    let load = answer.objective.load();
                    format!(
                        "; closest {} misses {what} (at {} {})",
                        choice_name(pick),
                        load.short(),
                        number_short(pick.mean(load))
                    )
                });
                misses.push((w.label.clone(), format!("none meets the constraints{why}")));
            }
        }
    }
    let width = |i: usize| {
        (rows.iter().map(|r| r[i].chars().count()))
            .chain([head[i].chars().count()])
            .chain(
                (i == 0)
                    .then(|| misses.iter().map(|m| m.0.chars().count()))
                    .into_iter()
                    .flatten(),
            )
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |cells: &[String]| {
        let mut l = String::from(" ");
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let _ = match i {
                0 => write!(l, " {}", pad(cell, *w, false)),
                1 => write!(l, "  {}", pad(cell, *w, false)),
                _ => write!(l, "  {}", pad(cell, *w, true)),
            };
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(text, "\n{} world points, one answer each:", worlds.len());
    let _ = writeln!(text, "{}", line(&head));
    let mut rows = rows.iter();
    for w in worlds {
        if w.best().is_some() {
            if let Some(r) = rows.next() {
                let _ = writeln!(text, "{}", line(r));
            }
        } else if let Some((label, why)) = misses.iter().find(|m| m.0 == w.label) {
            let _ = writeln!(text, "  {}  {why}", pad(label, widths[0], false));
        }
    }
    let mut notes = String::new();
    for w in worlds.iter().filter(|w| w.best().is_some()) {
        doubt_notes(&mut notes, answer, w, &format!("at {}: ", w.label));
    }
    if !notes.is_empty() {
        let _ = write!(text, "\n{notes}");
    }
    let recommended = worlds.iter().filter(|w| w.best().is_some()).count();
    let _ = writeln!(
        text,
        "\nrecommended at {recommended} of {} world points. The full ranking at one of them:",
        worlds.len()
    );
    let at: Vec<String> = (worlds[0].at.iter())
        .map(|a| format!("--at {}", shell_quote(a)))
        .collect();
    let _ = writeln!(
        text,
        "  jitterlab recommend {} {}",
        shell_quote(dir),
        at.join(" ")
    );
}

/// `text` as one word of a POSIX shell: as it is when it holds only characters no shell
/// treats specially, else in single quotes (a quote inside written `'\\''`).
fn shell_quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-/=:,+@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// A success share with four decimals, or more where four would round it onto the other side
/// of the floor (`0.94996` against `0.95` is `0.94996`, not `0.9500`).
fn share(x: f64, floor: Option<f64>) -> String {
    jitterlab::output::labels::share_digits(x, floor, 4)
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

fn describe_constraints(answer: &Recommendation, hedging_limit: bool) -> String {
    let (c, floor) = (&answer.constraints, answer.floor);
    let mut parts = Vec::new();
    if let Some(p) = c.p99 {
        parts.push(format!("p99 <= {p}"));
    }
    if let Some(d) = c.deadline {
        parts.push(format!("p99.9 <= {d} (deadline)"));
    }
    if let Some(a) = c.max_amplification {
        let from = match hedging_limit {
            true => " (copies per request, the hedging default; --max-amplification sets another)",
            false => "",
        };
        parts.push(format!("{} <= {a}{from}", answer.objective.load().name()));
    }
    if let Some(s) = c.min_success {
        let from = match floor {
            FloorSource::Flag => "",
            FloorSource::Scenario => " (the scenario's recommend.min_success)",
            FloorSource::Default => " (the default floor; --min-success sets another)",
        };
        parts.push(format!("success >= {s}{from}"));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// `p99_ms 6057 > 1.000`.
fn miss(m: &Miss) -> String {
    let short = m.limit.metric.short();
    let way = if m.limit.is_floor() { "<" } else { ">" };
    // Digits enough to tell the mean from the limit, so the shown numbers agree with `way`.
    let show = |x: f64, extra: usize| match m.limit.metric.unit() {
        Unit::Share => jitterlab::output::labels::share_digits(x, None, 4 + extra),
        _ => number_short_extra(x, extra),
    };
    match jitterlab::output::labels::apart(m.mean, m.limit.bound, show) {
        Some((mean, bound)) => format!("{short} {mean} {way} {bound}"),
        None if m.mean.is_finite() => format!(
            "{short} {}, about the same as the limit but {} it",
            show(m.mean, 0),
            if m.limit.is_floor() { "under" } else { "over" }
        ),
        None => format!(
            "{short} {} {way} {}",
            show(m.mean, 0),
            show(m.limit.bound, 0)
        ),
    }
}

/// A cell of the ranking: the mean, and its interval when there is one.
type Cell = (String, Option<(String, String)>);

/// `c`'s cell for `metric`. The interval is shown within the metric's natural range (no
/// negative count, no share above 1); aggregate.csv keeps it as computed.
fn cell_parts(c: &Candidate, metric: Metric) -> Cell {
    let i = c.metrics[metric];
    let f = |x: f64| {
        if metric.unit() == Unit::Share {
            share(x, None)
        } else {
            number_short(x)
        }
    };
    let unit = metric.unit();
    let interval = match (i.low, i.high) {
        (Some(l), Some(h)) => Some((f(unit.clamp(l)), f(unit.clamp(h)))),
        _ => None,
    };
    (f(i.mean), interval)
}

/// The ranking's header and rows (ranked from 1), every column as wide as
/// its widest entry: the means right-aligned on one edge, the brackets and the interval's two
/// ends each on their own, so that the numbers line up down a column whatever their width.
fn ranking_lines(head: &[String], rows: &[(String, Vec<Cell>)]) -> Vec<String> {
    let name_w = (rows.iter().map(|r| r.0.chars().count()))
        .chain(["strategy".len()])
        .max()
        .unwrap_or(0);
    let len = |t: &String| t.chars().count();
    let part_w = |col: usize, part: fn(&Cell) -> Option<&String>| {
        (rows.iter().filter_map(|r| part(&r.1[col])))
            .map(len)
            .max()
            .unwrap_or(0)
    };
    let mut widths = Vec::new();
    for (col, title) in head.iter().enumerate() {
        let (m, l, h) = (
            part_w(col, |c| Some(&c.0)),
            part_w(col, |c| c.1.as_ref().map(|i| &i.0)),
            part_w(col, |c| c.1.as_ref().map(|i| &i.1)),
        );
        let body = if l + h > 0 { m + l + h + 5 } else { m };
        widths.push((m, l, h, body.max(len(title))));
    }
    let mut header = format!("  {:<4} {}", "rank", pad("strategy", name_w, false));
    for (title, (.., w)) in head.iter().zip(&widths) {
        let _ = write!(header, "  {}", pad(title, *w, true));
    }
    let mut lines = vec![header];
    for (rank, (name, cells)) in rows.iter().enumerate() {
        let mut line = format!("  {:<4} {}", rank + 1, pad(name, name_w, false));
        for (cell, &(m, l, h, w)) in cells.iter().zip(&widths) {
            let body = match &cell.1 {
                Some((low, high)) => format!(
                    "{} [{}, {}]",
                    pad(&cell.0, m, true),
                    pad(low, l, true),
                    pad(high, h, true)
                ),
                None if l + h > 0 => pad(&cell.0, m, true) + &" ".repeat(l + h + 5),
                None => pad(&cell.0, m, true),
            };
            let _ = write!(line, "  {}", pad(&body, w, true));
        }
        lines.push(line.trim_end().to_string());
    }
    lines
}

fn number_short(x: f64) -> String {
    number_short_extra(x, 0)
}

/// [`number_short`] with `extra` more decimals.
fn number_short_extra(x: f64, extra: usize) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.extra$}")
    } else if x.abs() >= 1.0 {
        let d = 3 + extra;
        format!("{x:.d$}")
    } else {
        let d = 4 + extra;
        format!("{x:.d$}")
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

/// The strategy and its choice values, without the world's (`full (backoff.base=50ms)`),
/// escaped and shortened as every printed name.
fn choice_name(c: &Candidate) -> String {
    let strategy = jitterlab::text::shown(&c.strategy);
    if c.choice.is_empty() {
        strategy
    } else {
        format!("{strategy} ({})", jitterlab::text::for_terminal(&c.choice))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jitterlab::metric::PerMetric;
    use jitterlab::recommend::Interval;

    /// A mean with its interval: `9.172 [9.159, 9.184]`, as the ranking shows it. The
    /// interval is shown within the metric's natural range (no negative count, no share above
    /// 1); aggregate.csv keeps it as computed.
    fn cell(c: &Candidate, metric: Metric) -> String {
        match cell_parts(c, metric) {
            (mean, Some((low, high))) => format!("{mean} [{low}, {high}]"),
            (mean, None) => mean,
        }
    }

    fn candidate(mean: f64, low: f64, high: f64) -> Candidate {
        Candidate {
            point: 0,
            label: String::new(),
            values: Vec::new(),
            choice: String::new(),
            strategy: "full".into(),
            metrics: PerMetric::from_fn(|_| Interval {
                mean,
                low: Some(low),
                high: Some(high),
            }),
            world: 0,
            eligible: true,
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

    #[test]
    fn the_ranking_columns_line_up() {
        let cells = |rows: &[(&str, &str, &str)]| -> Vec<Cell> {
            rows.iter()
                .map(|(m, l, h)| match l.is_empty() {
                    true => (m.to_string(), None),
                    false => (m.to_string(), Some((l.to_string(), h.to_string()))),
                })
                .collect()
        };
        let rows = vec![
            (
                "full (base=200ms)".to_string(),
                cells(&[("9.182", "8.788", "9.576"), ("6816", "6764", "6868")]),
            ),
            (
                "full (base=50ms)".to_string(),
                cells(&[("11.112", "10.816", "11.407"), ("6797", "", "")]),
            ),
            (
                "a much longer name (base=10ms)".to_string(),
                cells(&[("13.404", "13.169", "13.639"), ("16769", "6743", "26795")]),
            ),
        ];
        let head = [
            "amplification [95% CI]".to_string(),
            "p99_ms [95% CI]".to_string(),
        ];
        let lines = ranking_lines(&head, &rows);
        // Every column ends where its header ends; the means end on one column, and each
        // bracket and comma sits on one column, in every row that has an interval.
        let ends = |line: &str, needle: &str| -> Vec<usize> {
            line.match_indices(needle).map(|(i, _)| i).collect()
        };
        assert_eq!(lines[1].len(), lines[0].len(), "{lines:#?}");
        assert_eq!(lines[3].len(), lines[0].len(), "{lines:#?}");
        assert_eq!(ends(&lines[1], "["), ends(&lines[3], "["), "{lines:#?}");
        assert_eq!(ends(&lines[1], ","), ends(&lines[3], ","), "{lines:#?}");
        assert_eq!(
            ends(&lines[2], "[")[0],
            ends(&lines[1], "[")[0],
            "{lines:#?}"
        );
        let mean_end = |line: &str| line.find(" [").unwrap();
        assert!(
            lines[1..]
                .iter()
                .all(|l| mean_end(l) == mean_end(&lines[1])),
            "{lines:#?}"
        );
        // A mean without an interval sits where the others' means do.
        let p99 = |l: &str| l.rfind(" [").unwrap();
        assert_eq!(
            lines[2].find("6797").unwrap() + 4,
            p99(&lines[1]),
            "{lines:#?}"
        );
    }

    #[test]
    fn a_hint_is_quoted_only_where_a_shell_needs_it() {
        assert_eq!(shell_quote("workload.rate=27.0"), "workload.rate=27.0");
        assert_eq!(shell_quote("out/my run"), "'out/my run'");
        assert_eq!(
            shell_quote(r#"faults=[{ kind = "outage" }]"#),
            r#"'faults=[{ kind = "outage" }]'"#
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn a_miss_shows_the_digits_that_tell_the_mean_from_the_limit() {
        use jitterlab::recommend::{Limit, Miss};
        let of = |metric: Metric, mean: f64, bound: f64| {
            miss(&Miss {
                limit: Limit { metric, bound },
                mean,
                excess: (mean - bound).abs() / bound,
            })
        };
        let p99 = Metric::LatencyP99Ms.short();
        // 100.3 ms is `100` as the ranking writes it: never `p99 100 > 100`.
        assert_eq!(
            of(Metric::LatencyP99Ms, 100.3, 100.0),
            format!("{p99} 100.3 > 100.0")
        );
        assert_eq!(
            of(Metric::LatencyP99Ms, 250.0, 100.0),
            format!("{p99} 250 > 100")
        );
        let waste = Metric::WastedWorkShare.short();
        assert_eq!(
            of(Metric::WastedWorkShare, 0.10004, 0.1),
            format!("{waste} 0.10004 > 0.10000")
        );
        let success = Metric::SuccessRate.short();
        assert_eq!(
            of(Metric::SuccessRate, 0.98996, 0.99),
            format!("{success} 0.98996 < 0.99000")
        );
        assert_eq!(
            of(Metric::LatencyP99Ms, 100.0 + 1e-12, 100.0),
            format!("{p99} 100, about the same as the limit but over it")
        );
    }
}
