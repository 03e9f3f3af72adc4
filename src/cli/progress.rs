//! The progress of a run on stderr: a note when a run resumes and, on a terminal, a bar with
//! the units done, the event rate and the time left.

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use jitterlab::sweep::Progress;

/// Progress on stderr, or nothing at all when `quiet`.
pub struct Bar {
    quiet: bool,
    bar: OnceLock<ProgressBar>,
    events: AtomicU64,
}

impl Bar {
    /// A reporter that draws only when not `quiet` (and the bar only on a terminal).
    pub fn new(quiet: bool) -> Bar {
        Bar {
            quiet,
            bar: OnceLock::new(),
            events: AtomicU64::new(0),
        }
    }
}

impl Progress for Bar {
    fn start(&self, to_run: usize, finished: usize, total: usize) {
        if self.quiet {
            return;
        }
        if finished > 0 {
            eprintln!("resuming: {finished} of {total} units already done");
        }
        if !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::new(to_run as u64);
        let style = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} units  {msg}  ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        let _ = self.bar.set(bar);
    }

    fn unit_done(&self, events: u64) {
        let Some(bar) = self.bar.get() else { return };
        let total = self.events.fetch_add(events, Ordering::Relaxed) + events;
        let secs = bar.elapsed().as_secs_f64().max(1e-3);
        bar.set_message(format!("{:.1} M events/s", total as f64 / secs / 1e6));
        bar.inc(1);
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}
