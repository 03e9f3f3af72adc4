//! `docs/cheat-sheet.md` against the commands it cites: every number it says a command prints
//! is in that command's printed table (the row of the strategy, the column named, the sweep
//! point's block, whose values the rule names too), and the one it reads from `layers.csv` is
//! that file's mean; each number is looked for in its own rule's section, so the sheet cannot
//! drift from the code, nor a number stand under the wrong rule.

use std::path::Path;

use crate::common::{TempDir, jitterlab, repo, stderr, stdout};

/// The numbers the sheet says `jitterlab run ARGS` prints, one per line:
/// `RULE | ARGS | POINT | STRATEGY | COLUMN | VALUE`, RULE the sheet's section (`## RULE.`)
/// that says it, POINT a sweep point's `[k]` line and the value the table prints there, which
/// the rule names too (`-` without a sweep), ARGS split at spaces.
const PRINTED: &str = "
1 | --set client.max_attempts=5   | -            | full          | success       | 0.0000
1 | --set client.max_attempts=5   | -            | no_jitter     | success       | 0.0000
1 | --set client.max_attempts=10  | -            | full          | success       | 0.3624
1 | --set client.max_attempts=16  | -            | full          | success       | 0.9993
2 |                               | -            | full          | p50_ms        | 5596.8
2 | --set workload.clients=50000  | -            | full          | p50_ms        | 7498.1
2 | --set workload.clients=50000  | -            | full          | success       | 1.0000
2 | --set workload.clients=50000  | -            | no_jitter     | success       | 0.2860
3 |                               | -            | full          | p99_ms        | 6803.5
3 | --set backoff.cap=8s          | -            | full          | p99_ms        | 12050.4
3 | --set backoff.cap=8s          | -            | no_jitter     | success       | 0.4400
5 | brooker-2022-budgets          | [6] 0.75     | retries_3     | amplification | 2.74
5 | brooker-2022-budgets          | [6] 0.75     | adaptive      | amplification | 1.14
5 | brooker-2022-budgets          | [6] 0.75     | retry_breaker | amplification | 1.00
6 | collapse-spike                | -            | immediate     | success       | 0.6046
6 | collapse-spike                | -            | backoff       | success       | 0.9849
6 | retry-after-herd              | [0] at_least | full          | p99_ms        | 6088.3
6 | retry-after-herd              | [1] spread   | full          | p99_ms        | 3008.1
";

fn sheet() -> String {
    std::fs::read_to_string(repo().join("docs/cheat-sheet.md")).expect("docs/cheat-sheet.md")
}

/// Rule `n`'s section of the sheet: from its `## n.` heading to the next heading.
fn rule(sheet: &str, n: &str) -> String {
    let heading = format!("\n## {n}. ");
    let start = sheet
        .find(&heading)
        .unwrap_or_else(|| panic!("no rule {n}"));
    let body = &sheet[start + heading.len()..];
    body[..body.find("\n## ").unwrap_or(body.len())].to_string()
}

/// The value the printed table gives sweep point `point` (`[k] KEY = VALUE` -> `VALUE`,
/// unquoted).
fn point_value<'a>(table: &'a str, point: &str) -> Option<&'a str> {
    let line = table.lines().find(|l| l.starts_with(point))?;
    Some(line.rsplit(" = ").next()?.trim().trim_matches('"'))
}

/// The printed table's cell: the block of `point`, the row of `strategy`, the column named.
fn printed_cell(table: &str, point: Option<&str>, strategy: &str, column: &str) -> Option<String> {
    let mut lines = table.lines().peekable();
    let header: Vec<&str> = lines.next()?.split_whitespace().collect();
    let at = header.iter().position(|h| *h == column)?;
    if let Some(point) = point {
        while lines.next_if(|l| !l.starts_with(point)).is_some() {}
        lines.next()?;
    }
    let row = lines
        .take_while(|l| !l.starts_with('['))
        .find(|l| l.split_whitespace().next() == Some(strategy))?;
    row.split_whitespace().nth(at).map(str::to_string)
}

fn run(dir: &Path, args: &[&str]) -> String {
    let out = dir.display().to_string();
    let mut all = vec!["run"];
    all.extend(args);
    all.extend(["--out", &out, "--no-plots", "--quiet"]);
    let o = jitterlab(dir.parent().unwrap(), &all);
    assert!(o.status.success(), "{all:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn the_cheat_sheet_numbers_are_what_the_commands_print() {
    let sheet = sheet();
    let tmp = TempDir::new("cheat-sheet");
    let mut tables: Vec<(Vec<&str>, String)> = Vec::new();
    let claims = PRINTED.lines().filter(|l| !l.trim().is_empty());
    for (i, claim) in claims.enumerate() {
        let f: Vec<&str> = claim.split('|').map(str::trim).collect();
        let section = rule(&sheet, f[0]);
        let point: Option<(&str, &str)> = f[2].split_once(' ');
        let (args, strategy, column, value): (Vec<&str>, _, _, _) =
            (f[1].split_whitespace().collect(), f[3], f[4], f[5]);
        assert!(
            section.contains(&format!("`{value}`")),
            "rule {} does not say `{value}`",
            f[0]
        );
        if let Some(setting) = args.iter().find(|a| a.contains('=')).or(args.first()) {
            assert!(
                section.contains(setting),
                "rule {} does not name {setting}",
                f[0]
            );
        }
        let table = match tables.iter().find(|t| t.0 == args) {
            Some(t) => t.1.clone(),
            None => {
                let t = run(&tmp.join(&format!("r{i}")), &args);
                tables.push((args.clone(), t.clone()));
                t
            }
        };
        let cell = printed_cell(&table, point.map(|p| p.0), strategy, column);
        assert_eq!(cell.as_deref(), Some(value), "{claim}:\n{table}");
        // The point is the one the rule names (brooker's [6] is p = 0.75).
        if let Some((point, said)) = point {
            assert_eq!(point_value(&table, point), Some(said), "{claim}:\n{table}");
            let named = format!("{said}`"); // `at_least`, `faults[0].share = 0.75`
            assert!(
                section.contains(&named),
                "rule {} does not name {said}",
                f[0]
            );
        }
    }
}

#[test]
fn the_cheat_sheet_layers_are_what_layers_csv_holds() {
    let sheet = sheet();
    let tmp = TempDir::new("cheat-sheet-layers");
    let dir = tmp.join("r");
    run(&dir, &["layered-retries"]);
    let text = std::fs::read_to_string(dir.join("layers.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let head = reader.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (point, strategy, layer, amp) = (
        col("point"),
        col("strategy"),
        col("layer"),
        col("amplification"),
    );
    let mean = |s: &str, l: &str| {
        let values: Vec<f64> = (reader_rows(&text))
            .filter(|r| &r[point] == "0" && &r[strategy] == s && &r[layer] == l)
            .map(|r| r[amp].parse::<f64>().unwrap())
            .collect();
        values.iter().sum::<f64>() / values.len() as f64
    };
    for (l, v) in [("1", 3.0), ("2", 9.0), ("3", 27.0)] {
        assert_eq!(mean("every_layer", l), v, "every_layer, layer {l}");
    }
    assert_eq!(mean("edge_only", "3"), 3.0);
    assert_eq!(mean("do_not_retry", "3"), 3.0);
    let section = rule(&sheet, "4");
    let budget = format!("{:.3}", mean("budget_middle", "3"));
    assert!(
        section.contains(&format!("`{budget}`")),
        "budget_middle is {budget}"
    );
    assert!(section.contains("`27`") && section.contains("layered-retries"));
}

fn reader_rows(text: &str) -> impl Iterator<Item = csv::StringRecord> + '_ {
    csv::Reader::from_reader(text.as_bytes())
        .into_records()
        .map(|r| r.unwrap())
}
