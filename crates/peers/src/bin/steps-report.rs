//! Prints the step benchmark's ratios and redraws its chart from the estimates of the last
//! `cargo bench -p jitterlab-peers --bench steps`:
//! `cargo run -p jitterlab-peers --release --bin steps-report`.

fn main() {
    let dir = jitterlab_peers::steps::criterion_dir();
    let group = dir.join(jitterlab_peers::steps::GROUP);
    let Ok(entries) = std::fs::read_dir(&group) else {
        eprintln!(
            "error: no estimates in {}: run the bench first",
            group.display()
        );
        std::process::exit(1);
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            // The bench's own name (with its `/`), from criterion's record of it.
            let text = std::fs::read_to_string(e.path().join("new/benchmark.json")).ok()?;
            let value: serde_json::Value = serde_json::from_str(&text).ok()?;
            value["function_id"].as_str().map(String::from)
        })
        .collect();
    // The bare draw first, then jitterlab's kinds, then the peers, each by name.
    names.sort_by_key(|n| (n != "bare_draw", !n.starts_with("jitterlab"), n.clone()));
    jitterlab_peers::steps::report(&dir, &names);
}
