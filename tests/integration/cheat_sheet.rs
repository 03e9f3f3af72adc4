//! `docs/cheat-sheet.md` against the commands it cites: every number it says a command prints
//! is in that command's printed table (the row of the strategy, the column named, the sweep
//! point's block), and the one it reads from `layers.csv` is that file's mean, so the sheet
//! cannot drift from the code.

use std::path::Path;

use crate::common::{TempDir, jitterlab, repo, stderr, stdout};

/// The numbers the sheet says `jitterlab run ARGS` prints, one per line:
/// `ARGS | POINT | STRATEGY | COLUMN | VALUE`, POINT a sweep point's `[k]` line (`-` without a
/// sweep), ARGS split at spaces.
const PRINTED: &str = "
--set client.max_attempts=5   | -   | full          | success       | 0.0000
--set client.max_attempts=5   | -   | no_jitter     | success       | 0.0000
--set client.max_attempts=10  | -   | full          | success       | 0.3624
--set client.max_attempts=16  | -   | full          | success       | 0.9993
                              | -   | full          | p50_ms        | 5596.8
--set workload.clients=50000  | -   | full          | p50_ms        | 7498.1
--set workload.clients=50000  | -   | full          | success       | 1.0000
--set workload.clients=50000  | -   | no_jitter     | success       | 0.2860
                              | -   | full          | p99_ms        | 6803.5
--set backoff.cap=8s          | -   | full          | p99_ms        | 12050.4
--set backoff.cap=8s          | -   | no_jitter     | success       | 0.4400
brooker-2022-budgets          | [6] | retries_3     | amplification | 2.74
brooker-2022-budgets          | [6] | adaptive      | amplification | 1.14
brooker-2022-budgets          | [6] | retry_breaker | amplification | 1.00
collapse-spike                | -   | immediate     | success       | 0.6046
collapse-spike                | -   | backoff       | success       | 0.9849
retry-after-herd              | [0] | full          | p99_ms        | 6088.3
retry-after-herd              | [1] | full          | p99_ms        | 3008.1
";

fn sheet() -> String {
    std::fs::read_to_string(repo().join("docs/cheat-sheet.md")).expect("docs/cheat-sheet.md")
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
        let (args, point, strategy, column, value): (Vec<&str>, _, _, _, _) = (
            f[0].split_whitespace().collect(),
            (f[1] != "-").then_some(f[1]),
            f[2],
            f[3],
            f[4],
        );
        assert!(
            sheet.contains(&format!("`{value}`")),
            "the sheet does not say `{value}`"
        );
        if let Some(setting) = args.iter().find(|a| a.contains('=')).or(args.first()) {
            assert!(sheet.contains(setting), "the sheet does not name {setting}");
        }
        let table = match tables.iter().find(|t| t.0 == args) {
            Some(t) => t.1.clone(),
            None => {
                let t = run(&tmp.join(&format!("r{i}")), &args);
                tables.push((args.clone(), t.clone()));
                t
            }
        };
        let cell = printed_cell(&table, point, strategy, column);
        assert_eq!(cell.as_deref(), Some(value), "{claim}:\n{table}");
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
    let budget = format!("{:.3}", mean("budget_middle", "3"));
    assert!(
        sheet.contains(&format!("`{budget}`")),
        "budget_middle is {budget}"
    );
    assert!(sheet.contains("`27`") && sheet.contains("layered-retries"));
}

fn reader_rows(text: &str) -> impl Iterator<Item = csv::StringRecord> + '_ {
    csv::Reader::from_reader(text.as_bytes())
        .into_records()
        .map(|r| r.unwrap())
}
