//! The table `run` and `merge` print: per point and strategy, the means across replications
//! of the metrics a reader looks at first.

use jitterlab::output::table::Columns;
use jitterlab::runner::PointSummary;
use jitterlab::scenario::describe;
use jitterlab::text::{pad, shown};

/// The table, one line per strategy under a line naming each sweep point; `-` where a mean is
/// undefined (a latency where nothing succeeded). Names and sweep values are escaped and
/// shortened ([`shown`]): a name of any length or content keeps the table readable.
pub fn render(points: &[PointSummary]) -> String {
    let columns = Columns::of(
        points
            .iter()
            .flat_map(|p| &p.strategies)
            .map(|s| &s.estimates),
    );
    let header: Vec<String> = columns.header().into_iter().map(String::from).collect();
    let width = header.len();
    let mut rows: Vec<Vec<String>> = vec![header];
    for point in points {
        if !point.values.is_empty() {
            rows.push(vec![format!(
                "[{}] {}",
                point.index,
                jitterlab::text::for_terminal(&describe(&point.values))
            )]);
        }
        for strategy in &point.strategies {
            let mut row = vec![shown(&strategy.name)];
            row.extend(columns.cells(&strategy.estimates));
            rows.push(row);
        }
    }
    let widths: Vec<usize> = (0..width)
        .map(|i| {
            rows.iter()
                .filter(|r| r.len() > 1)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        if row.len() == 1 {
            out.push_str(&row[0]);
        } else {
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    out.push_str("  ");
                }
                out.push_str(&pad(cell, widths[i], i > 0));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use jitterlab::metric::{PerMetric, estimates};
    use jitterlab::runner::StrategySummary;

    fn point(names: &[String]) -> PointSummary {
        PointSummary {
            index: 0,
            values: vec![("name".into(), toml::Value::String("\u{1b}[2J".repeat(50)))],
            strategies: names
                .iter()
                .map(|name| StrategySummary {
                    name: name.clone(),
                    estimates: estimates(&[PerMetric::from_fn(|_| 1.5)]),
                })
                .collect(),
        }
    }

    #[test]
    fn names_of_any_length_or_content_keep_the_table_whole() {
        // 65 536 characters and more overflowed a format width (a panic, exit 101).
        let long = "a".repeat(70_000);
        let names = [long, "bell\u{7}\r\nx".to_string(), "full".to_string()];
        let text = render(&[point(&names)]);
        assert!(
            !text
                .lines()
                .flat_map(str::chars)
                .any(jitterlab::text::is_unsafe),
            "{text:?}"
        );
        assert!(text.contains("bell\\u{7}\\r\\nx"), "{text}");
        assert!(text.contains("(70000 characters)"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() < 300, "{line}");
        }
    }
}
