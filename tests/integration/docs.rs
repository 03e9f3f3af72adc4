//! The scenario reference against the parser: every key the parser accepts is documented in
//! `docs/scenario.md`, every key documented there is accepted, and every TOML example there is
//! a valid scenario.
//!
//! The accepted keys are derived from the code, not listed by hand:
//! - the serde schema, by asking the real parser ([`ScenarioDoc::parse`]): a table holding
//!   only an unknown key makes serde's `deny_unknown_fields` answer with the list of the
//!   fields it accepts there, and each of those fields is probed in turn (as a table, then as
//!   a list of tables) to find the nested ones;
//! - the keys read by hand (a strategy table's keys), from the resolved form
//!   ([`jitterlab::scenario::Scenario::to_toml_table`]) of scenarios that use every optional
//!   table;
//! - the keys of a sweep range, from the sweep parser's answer to an unknown key.
//!
//! Convention of the reference: a key is written with its full dotted path in backticks, in
//! the first column of a table whose header starts with `| key |`; `[]` marks the entries of a
//! list of tables (`faults[].kind`) and `<key>` a dotted key of the user's choice
//! (`sweep.<key>.from`). A table may instead be named in a heading, as written in TOML
//! (`` ## `[client]` ``).

use std::collections::BTreeSet;

use jitterlab::scenario::{ScenarioDoc, roles};
use toml::{Table, Value};

use crate::common::{files, repo};

/// A field name serde will never accept, used to make the parser list the ones it does.
const PROBE: &str = "zz_probe";

/// One step of a key path: a field, and whether it holds a list of tables.
#[derive(Clone)]
struct Step {
    name: String,
    list: bool,
}

/// `a.b[].c`: the dotted path of the last step, `[]` after the lists it is inside.
fn dotted(path: &[Step]) -> String {
    let last = path.len().saturating_sub(1);
    path.iter()
        .enumerate()
        .map(|(i, s)| {
            if s.list && i < last {
                format!("{}[]", s.name)
            } else {
                s.name.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// A scenario holding `{ zz_probe = 1 }` at `path`.
fn probe_text(path: &[Step]) -> String {
    let mut value = Value::Table(Table::from_iter([(PROBE.to_string(), Value::Integer(1))]));
    for step in path.iter().rev() {
        if step.list {
            value = Value::Array(vec![value]);
        }
        value = Value::Table(Table::from_iter([(step.name.clone(), value)]));
    }
    let Value::Table(root) = value else {
        unreachable!("the root is a table")
    };
    toml::to_string(&root).expect("a probe serializes")
}

/// The fields serde accepts in the table at `path`, or `None` when `path` is not a table of
/// known fields (a plain value, a free-form table, a list of values).
fn fields_at(path: &[Step]) -> Option<Vec<String>> {
    let err = ScenarioDoc::parse(&probe_text(path), "probe.toml", "probe").err()?;
    let message = err.to_string();
    let marker = format!("unknown field `{PROBE}`");
    let expected = &message[message.find(&marker)? + marker.len()..];
    Some(
        expected
            .split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect(),
    )
}

/// Every key of the serde schema below `path` (tables and their fields), as dotted paths.
fn schema_keys(path: &mut Vec<Step>, fields: &[String], out: &mut BTreeSet<String>) {
    for field in fields {
        // A table of known fields, a list of such tables, or else a value.
        let nested = [false, true].into_iter().find_map(|list| {
            path.push(Step {
                name: field.clone(),
                list,
            });
            let found = fields_at(path);
            path.pop();
            found.map(|f| (list, f))
        });
        path.push(Step {
            name: field.clone(),
            list: nested.as_ref().is_some_and(|(list, _)| *list),
        });
        out.insert(dotted(path));
        if let Some((_, nested)) = nested {
            schema_keys(path, &nested, out);
        }
        path.pop();
    }
}

/// Every dotted key of a resolved scenario table.
fn table_keys(prefix: &str, table: &Table, out: &mut BTreeSet<String>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        out.insert(key.clone());
        match v {
            Value::Table(t) => table_keys(&key, t, out),
            Value::Array(items) => {
                for item in items {
                    if let Value::Table(t) = item {
                        table_keys(&format!("{key}[]"), t, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Scenarios that together use every optional table and every kind of every `kind` key.
const EVERYTHING: [&str; 7] = [
    r#"
        [workload]
        kind = "poisson_clients"
        [client]
        throttle = {}
        adaptive_rate = {}
        [backoff]
        strategies = [
            { name = "bucket", jitter = "full", max_attempts = "unlimited", budget = { kind = "adaptive" } },
            { name = "breaker", jitter = "full", budget = { kind = "retry_breaker" } },
            { name = "guarded", jitter = "full", throttle = {}, breaker = {}, adaptive_rate = {}, timeout = "3s", deadline = "5s" },
        ]
    "#,
    r#"
        [workload]
        kind = "poisson"
        [server]
        rate_limit = { rate = 100.0, burst = 10 }
        [client]
        budget = { kind = "token_bucket" }
        breaker = {}
        concurrency = 10
        [backoff]
        strategies = ["full", { name = "short", jitter = "equal", base = "5ms" }, { name = "sdk", jitter = "full", retry_on = [503], throttling_on = [429], retry_after = "at_least", retry_after_max = "off", retry_after_max_extra = "5s", retry_after_header = "x-amz-retry-after", throttling_backoff = { base = "1s" } }]
        [[faults]]
        kind = "outage"
        start = "1s"
        end = "2s"
        [[faults]]
        kind = "errors"
        start = "1s"
        end = "2s"
        share = 0.5
        [[faults]]
        kind = "slow"
        start = "1s"
        end = "2s"
        factor = 2.0
        [sweep]
        "server.workers" = [10, 20]
    "#,
    r#"
        [workload]
        kind = "closed"
        [client]
        budget = { kind = "ratio" }
        hedging = { delay = "p95", max_attempts = 3, non_fatal = [503], cancel = "never" }
        [backoff]
        strategies = ["full", { name = "h", jitter = "full", hedging = { delay = "10ms" } }]
    "#,
    r#"
        [client]
        budget = { kind = "grpc" }
        [server]
        service = { dist = "lognormal", mean = "10ms", sd = "5ms" }
    "#,
    r#"
        [workload]
        kind = "poisson"
        [backoff]
        strategies = ["full", { name = "l", jitter = "full", layers = [{ max_attempts = 1, on_give_up = "do_not_retry", propagate_deadline = true }] }]
        [[layers]]
        client = { budget = { kind = "token_bucket" } }
        backoff = { jitter = "equal", base = "5ms", multiplier = 3.0, cap = "1s", growth = 2.0, factor = 0.3 }
        [[layers]]
        [[layers.faults]]
        kind = "outage"
        start = "1s"
        end = "2s"
    "#,
    r#"
        [server]
        kind = "occ"
        [network]
        latency = { dist = "normal_abs", mean = "10ms", sd = "2ms" }
    "#,
    "",
];

/// The keys of a sweep range (`{ from, to, step }`), as the sweep parser names them.
fn sweep_range_keys() -> Vec<String> {
    let text = format!("[sweep]\n\"backoff.base\" = {{ {PROBE} = 1 }}\n");
    let err = ScenarioDoc::parse(&text, "probe.toml", "probe")
        .expect_err("an unknown key in a sweep range is refused");
    let message = err.to_string();
    let list = message
        .split_once('{')
        .and_then(|(_, rest)| rest.split_once('}'))
        .map(|(inside, _)| inside)
        .unwrap_or_else(|| panic!("the sweep error lists the range keys in braces: {message}"));
    list.split(',').map(|k| k.trim().to_string()).collect()
}

/// Every key the scenario parser accepts, as dotted paths.
fn accepted_keys() -> BTreeSet<String> {
    let root = fields_at(&[]).unwrap_or_else(|| {
        panic!(
            "the parser no longer lists the accepted fields on an unknown key: {:?}",
            ScenarioDoc::parse(&probe_text(&[]), "probe.toml", "probe").err()
        )
    });
    let mut keys = BTreeSet::new();
    schema_keys(&mut Vec::new(), &root, &mut keys);
    for text in EVERYTHING {
        let doc = ScenarioDoc::parse(text, "everything.toml", "everything")
            .unwrap_or_else(|e| panic!("{e}"));
        let scenario = doc.base().unwrap_or_else(|e| panic!("{e}"));
        table_keys("", &scenario.to_toml_table(doc.sweep_table()), &mut keys);
    }
    // `preset` is expanded into the keys above before the resolved file is written: accepted
    // when a scenario naming one parses.
    let preset = "[backoff]\nstrategies = [{ preset = \"aws-standard\" }]\n";
    ScenarioDoc::parse(preset, "preset.toml", "preset")
        .and_then(|doc| doc.base())
        .unwrap_or_else(|e| panic!("{e}"));
    keys.insert("backoff.strategies[].preset".into());
    // A sweep's own keys are the user's dotted keys; only a range has fixed ones.
    keys.retain(|k| !k.starts_with("sweep."));
    keys.insert("sweep.<key>".into());
    // And the two lists that give sweep keys their role (scenario::roles).
    for list in [roles::WORLD, roles::CHOICE] {
        keys.insert(format!("sweep.{list}"));
    }
    for k in sweep_range_keys() {
        keys.insert(format!("sweep.<key>.{k}"));
    }
    keys
}

fn reference() -> String {
    let path = repo().join("docs/scenario.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The lines of a Markdown text outside fenced code blocks.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The keys the reference documents: the first column of its key tables (tables headed
/// `| key |`), and the tables named in its headings (`` ## `[client]` ``, `` `[[faults]]` ``).
fn documented_keys(doc: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut in_key_table = false;
    for line in prose_lines(doc).map(str::trim) {
        if line.starts_with('#') {
            for token in line.split('`').skip(1).step_by(2) {
                if token.starts_with('[') {
                    keys.insert(token.trim_matches(['[', ']']).to_string());
                }
            }
        }
        if !line.starts_with('|') {
            in_key_table = false;
            continue;
        }
        let first = line
            .trim_matches('|')
            .split('|')
            .next()
            .unwrap_or("")
            .trim();
        if first == "key" {
            in_key_table = true;
        } else if in_key_table && let Some(key) = first.strip_prefix('`') {
            keys.insert(key.trim_end_matches('`').to_string());
        }
    }
    // A layer's tables are read by the very structs of `[server]`, `[client]` and
    // `[[faults]]`: a documented mirror row (`layers[].server`, "every key of [server]")
    // documents the mirrored keys.
    for (row, mirror, original) in MIRRORS {
        if keys.contains(row) {
            let mirrored: Vec<String> = keys
                .iter()
                .filter_map(|k| k.strip_prefix(original))
                .filter(|rest| rest.starts_with('.'))
                .map(|rest| format!("{mirror}{rest}"))
                .collect();
            keys.extend(mirrored);
        }
    }
    keys
}

/// Tables of a layer that hold every key of a top-level table: (the documented row, the
/// prefix of the mirrored keys, the prefix of the original keys).
const MIRRORS: [(&str, &str, &str); 3] = [
    ("layers[].server", "layers[].server", "server"),
    ("layers[].client", "layers[].client", "client"),
    ("layers[].faults", "layers[].faults[]", "faults[]"),
];

#[test]
fn the_key_derivation_sees_the_whole_schema() {
    let keys = accepted_keys();
    // A few keys from each way of deriving them: if one way breaks, this says so.
    for key in [
        "seed",
        "server.service.sd",
        "server.rate_limit.burst",
        "client.budget.token_ratio",
        "client.breaker.open_for",
        "faults[].share",
        "backoff.strategies[].jitter",
        "sweep.<key>.step",
        "output.bucket",
    ] {
        assert!(keys.contains(key), "`{key}` not derived; derived: {keys:?}");
    }
}

/// The keys of `a` that are not in `b`, as `` `key`, `key` ``.
fn missing(a: &BTreeSet<String>, b: &BTreeSet<String>) -> String {
    let keys: Vec<String> = a.difference(b).map(|k| format!("`{k}`")).collect();
    keys.join(", ")
}

#[test]
fn docs_scenario_documents_every_accepted_key() {
    let missing = missing(&accepted_keys(), &documented_keys(&reference()));
    assert!(
        missing.is_empty(),
        "docs/scenario.md does not document these keys that the parser accepts: {missing}\n\
         (add a row `| `KEY` | default | allowed | meaning |` to a `| key |` table)"
    );
}

#[test]
fn docs_scenario_documents_only_accepted_keys() {
    let unknown = missing(&documented_keys(&reference()), &accepted_keys());
    assert!(
        unknown.is_empty(),
        "docs/scenario.md documents keys that the parser does not accept: {unknown}"
    );
}

#[test]
fn docs_scenario_examples_are_valid_scenarios() {
    let doc = reference();
    let mut examples = 0;
    for (i, block) in doc.split("```toml\n").skip(1).enumerate() {
        let text = block.split("```").next().unwrap_or_default();
        let parsed = ScenarioDoc::parse(text, &format!("docs/scenario.md example {i}"), "example")
            .and_then(|d| d.points());
        if let Err(e) = parsed {
            panic!("example {i} of docs/scenario.md is refused: {e}\n{text}");
        }
        examples += 1;
    }
    assert!(examples >= 10, "one example per section, found {examples}");
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn readme_and_docs_links_resolve() {
    let mut pages = vec![
        repo().join("README.md"),
        repo().join("crates/jitterlab-retry/README.md"),
        repo().join("crates/peers/README.md"),
    ];
    pages.extend(files("docs", "md"));
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("readable page");
        for link in text.split("](").skip(1).filter_map(|s| s.split(')').next()) {
            if link.starts_with("http") {
                continue;
            }
            let (file, fragment) = link.split_once('#').unwrap_or((link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a page is in a folder").join(file)
            };
            let ok = if fragment.is_empty() {
                target.exists()
            } else {
                std::fs::read_to_string(&target).is_ok_and(|t| {
                    prose_lines(&t)
                        .filter(|l| l.starts_with('#'))
                        .any(|l| anchor(l) == fragment)
                })
            };
            if !ok {
                broken.push(format!("{}: ({link})", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The engine README's client code is an excerpt of `examples/reqwest_client.rs` and
/// `examples/ureq_client.rs` (whose tests run them against local servers): every line of a
/// README block is a line of its example, apart from `// ...` elisions, so the README cannot
/// drift from code that runs.
#[test]
fn engine_readme_code_is_the_examples() {
    let engine = repo().join("crates/jitterlab-retry");
    let readme = std::fs::read_to_string(engine.join("README.md")).expect("README");
    let read = |path: &str| std::fs::read_to_string(engine.join(path)).expect(path);
    for (marker, path, at_least) in [
        (
            "use jitterlab_retry::http::reqwest::send_text;",
            "examples/reqwest_client.rs",
            25,
        ),
        (
            "use jitterlab_retry::http::ureq::call_text;",
            "examples/ureq_client.rs",
            15,
        ),
    ] {
        let example = read(path);
        let lines: BTreeSet<&str> = example.lines().map(str::trim).collect();
        // The `rust` block that holds the marker line.
        let at = readme
            .find(&format!("\n{marker}\n"))
            .unwrap_or_else(|| panic!("the README shows {path}"));
        let start = readme[..at].rfind("```rust\n").expect("in a rust block");
        let block = &readme[start + "```rust\n".len()..];
        let block = &block[..block.find("```").expect("a closed block")];
        let missing: Vec<&str> = block
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("// ..."))
            .filter(|l| !lines.contains(l))
            .collect();
        assert!(block.lines().count() > at_least, "{block}");
        assert!(
            missing.is_empty(),
            "README lines not in {path}: {missing:#?}"
        );
    }
}
