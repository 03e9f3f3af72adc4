//! Prints the step benchmark's ratios and redraws its chart from the estimates of the last
//! `cargo bench -p jitterlab-peers --bench steps`:
//! `cargo run -p jitterlab-peers --release --bin steps-report`.

fn main() {
    let dir = jitterlab_peers::steps::criterion_dir();
    let group = dir.join(jitterlab_peers::steps::GROUP);
    if !group.is_dir() {
        eprintln!(
            "error: no estimates in {}: run the bench first",
            group.display()
        );
        std::process::exit(1);
    }
    // The bench's own order: the bare draw, jitterlab's kinds, then the peers.
    jitterlab_peers::steps::report(&dir, &jitterlab_peers::step::names());
}
