//! Prints the distribution audit as a Markdown table:
//! `cargo run -p jitterlab-peers --release --bin audit [-- REQUESTS_PER_RETRY]`.

use jitterlab_peers::audit::{self, ALPHA};
use jitterlab_peers::idiom::Config;

fn main() {
    let n = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => 100_000,
        Some(Ok(n)) if n >= 100 => n,
        Some(_) => {
            eprintln!("error: the argument is the number of requests per retry, at least 100");
            std::process::exit(2);
        }
    };
    let lines: Vec<audit::Line> = Config::ALL.iter().map(|&c| audit::audit(c, n, 1)).collect();
    println!(
        "{n} requests per retry, each configuration's retries up to two past its cap; Kolmogorov-Smirnov at alpha = {ALPHA:e} per retry.\n"
    );
    print!("{}", audit::table(&lines));
}
