//! The playground (`jitterlab serve`) driven in real headless Chromium through the DevTools
//! protocol ([`crate::cdp`]): the page loads with `run`'s table and herd chart for the
//! built-in scenario; a jitter checkbox is clicked and the cap slider dragged with the mouse,
//! and the page then shows what `run --set` gives for the settings its controls show — the
//! test fails on numbers or a chart left from before, and on old numbers shown beside the
//! first, fast chart (replication 0's, `/api/chart`, itself byte for byte run's `herd.svg`).
//! The page's own times (input to chart, to table) are printed, not asserted. Skipped with a
//! NOTICE without Chromium.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::cdp::Browser;
use crate::common::{TempDir, chromium, jitterlab, stderr, stdout};

/// `jitterlab serve` on a free loopback port; killed on drop.
pub struct Served {
    child: Child,
    pub url: String,
}

impl Served {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn start(args: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_jitterlab"))
            .arg("serve")
            .args(args)
            .args(["--addr", "127.0.0.1:0", "--quiet"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start jitterlab serve");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the URL line");
        assert!(line.starts_with("http://127.0.0.1:"), "{line:?}");
        Served {
            child,
            url: line.trim().to_string(),
        }
    }
}

impl Drop for Served {
    /// Ctrl-C, as a person stops it (the server then removes its temporary folder); killed
    /// if it has not stopped within 10 s.
    fn drop(&mut self) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: a signal to our own child, which has not been waited for yet.
        unsafe { libc::kill(pid, libc::SIGINT) };
        for _ in 0..200 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The table `run` printed: each line's cells, the header first.
fn cli_table(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

/// The page's table: the header, then each row's cells.
fn page_table(browser: &mut Browser) -> Vec<Vec<String>> {
    let v = browser.eval(
        "[...document.querySelectorAll('#summary tr')].map(tr => [...tr.cells].map(c => c.textContent))",
    );
    serde_json::from_value(v).expect("rows of cells")
}

/// The page's herd chart, the SVG text behind its image.
fn page_herd(browser: &mut Browser) -> String {
    let v = browser.eval(
        "(async () => { const img = document.querySelector('#charts img[data-stem=herd]'); return img ? await (await fetch(img.src)).text() : null; })()",
    );
    v.as_str().expect("the page shows a herd chart").to_string()
}

/// `jitterlab run thundering-herd` with `sets`: its table and its herd chart's SVG.
fn cli_run(dir: &Path, sets: &[String]) -> (Vec<Vec<String>>, String) {
    let out = dir.join(format!("run-{}", sets.len()));
    let mut args = vec![
        "run",
        "thundering-herd",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    for s in sets {
        args.extend(["--set", s.as_str()]);
    }
    let o = jitterlab(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(out.join("herd.svg")).expect("run drew herd.svg");
    (cli_table(&stdout(&o)), svg)
}

/// Waits until the page shows the answer to a request newer than `generation`.
fn wait_for_answer_after(browser: &mut Browser, generation: i64) -> i64 {
    browser.wait_for(
        &format!(
            "document.body.dataset.pending === '0' && +(document.body.dataset.generation || 0) > {generation}"
        ),
        "the page shows the answer to the newest setting",
    );
    browser
        .eval("+document.body.dataset.generation")
        .as_i64()
        .unwrap()
}

/// Watches the view from now on: every change of the page that shows a new herd chart beside
/// the table from before is recorded (stale numbers beside a new chart), and every one that
/// shows a new chart beside the table marked as updating.
fn watch(browser: &mut Browser) {
    browser.eval(
        r#"(() => {
  const herd = () => document.querySelector('#charts img[data-stem=herd]')?.src ?? null;
  const table = () => [...document.querySelectorAll('#summary tbody tr')].map(tr => tr.textContent).join('\n');
  window.watched = { chart: herd(), table: table(), stale: [], updating: 0 };
  if (window.watcher) return;
  window.watcher = new MutationObserver(() => {
    const w = window.watched, src = herd(), now = table();
    if (src === null || src === w.chart) return;
    if (now === w.table) w.stale.push(now);
    if (document.querySelector('#summary tr.updating')) w.updating += 1;
  });
  window.watcher.observe(document.getElementById('view'), { subtree: true, childList: true, attributes: true, characterData: true });
})()"#,
    );
}

/// What [`watch`] saw since: changes with stale numbers beside a new chart, changes with the
/// table marked as updating.
fn watched(browser: &mut Browser) -> (Vec<String>, u64) {
    let stale = serde_json::from_value(browser.eval("window.watched.stale")).unwrap();
    let updating = browser.eval("window.watched.updating").as_u64().unwrap();
    (stale, updating)
}

/// The page's first, fast chart for the settings its address holds (`/api/chart`).
fn first_chart(browser: &mut Browser) -> String {
    let v = browser.eval(
        "(async () => (await (await fetch('/api/chart' + location.search)).json()).charts[0].svg)()",
    );
    v.as_str().expect("a first chart").to_string()
}

/// Prints the page's own measured times of its newest answer (not asserted).
fn print_times(browser: &mut Browser, what: &str) {
    let t = browser.eval("[document.body.dataset.chartMs, document.body.dataset.tableMs]");
    eprintln!(
        "playground page, {what}: input to chart {} ms, to table {} ms",
        t[0].as_str().unwrap_or("-"),
        t[1].as_str().unwrap_or("-")
    );
}

/// The centre of an element, in CSS pixels.
fn centre(browser: &mut Browser, selector: &str) -> (f64, f64, f64) {
    let r: Value = browser.eval(&format!(
        "(() => {{ const e = document.querySelector({selector:?}); e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2, r.width]; }})()"
    ));
    let n = |i: usize| r[i].as_f64().unwrap();
    (n(0), n(1), n(2))
}

#[test]
fn the_page_shows_runs_numbers_before_and_after_dragging() {
    let Some(binary) = chromium() else {
        eprintln!(
            "NOTICE: chromium not found (apt-get install -y chromium); skipping the playground's browser test"
        );
        return;
    };
    let dir = TempDir::new("playground");
    let served = Served::start(&[]);
    let mut browser = Browser::start(&binary, &dir.join("profile"), 1280, 1500);
    browser.page("Page.navigate", serde_json::json!({ "url": served.url }));
    let first = wait_for_answer_after(&mut browser, 0);

    // The built-in scenario as it is: run's table, cell for cell, and run's herd chart.
    let (table, svg) = cli_run(dir.path(), &[]);
    assert_eq!(page_table(&mut browser), table, "the page's table is run's");
    assert!(
        page_herd(&mut browser) == svg,
        "the page's herd chart is run's herd.svg"
    );
    assert!(
        first_chart(&mut browser) == svg,
        "the first, fast chart is run's herd.svg"
    );
    print_times(&mut browser, "loaded");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));
    browser.screenshot(&shots.join("playground-before.png"));

    // Jitter: untick `equal` with the mouse.
    watch(&mut browser);
    let (x, y, _) = centre(&mut browser, "input[type=checkbox][value=equal]");
    browser.mouse("mousePressed", x, y);
    browser.mouse("mouseReleased", x, y);
    let unticked = wait_for_answer_after(&mut browser, first);
    print_times(&mut browser, "a box unticked");
    let (stale, updating) = watched(&mut browser);
    assert!(
        stale.is_empty(),
        "old numbers beside a new chart: {stale:?}"
    );
    assert!(updating > 0, "the chart came with the table, not first");

    // Cap: drag the slider's thumb from 2 s to about three quarters of the way.
    watch(&mut browser);
    let cap = "[data-key='backoff.cap'] input[type=range]";
    let (cx, cy, width) = centre(&mut browser, cap);
    let position = browser
        .eval(&format!("+document.querySelector({cap:?}).value / 1000"))
        .as_f64()
        .unwrap();
    let from = cx - width / 2.0 + 8.0 + (width - 16.0) * position;
    let to = cx - width / 2.0 + 8.0 + (width - 16.0) * 0.75;
    browser.mouse("mousePressed", from, cy);
    for step in 1..=10 {
        browser.mouse(
            "mouseMoved",
            from + (to - from) * f64::from(step) / 10.0,
            cy,
        );
    }
    browser.mouse("mouseReleased", to, cy);
    wait_for_answer_after(&mut browser, unticked);
    print_times(&mut browser, "the cap dragged");
    let (stale, updating) = watched(&mut browser);
    assert!(
        stale.is_empty(),
        "old numbers beside a new chart: {stale:?}"
    );
    assert!(updating > 0, "the chart came with the table, not first");
    browser.screenshot(&shots.join("playground-after.png"));

    // What the controls now show, as run's --set: the cap slider's value, the boxes ticked.
    let cap_text = browser
        .eval("document.querySelector(\"[data-key='backoff.cap'] output\").textContent")
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(cap_text, "2s", "the drag moved the cap");
    let ticked: Vec<String> = serde_json::from_value(browser.eval(
        "[...document.querySelectorAll(\"[data-key='backoff.strategies'] input:checked\")].map(b => b.value)",
    ))
    .unwrap();
    assert_eq!(ticked, ["no_jitter", "full", "decorrelated"]);
    let sets = vec![
        format!("backoff.cap={cap_text}"),
        r#"backoff.strategies=["no_jitter", "full", "decorrelated"]"#.to_string(),
    ];
    let (moved_table, moved_svg) = cli_run(dir.path(), &sets);
    assert_ne!(moved_table, table, "the settings change run's numbers");
    assert_ne!(moved_svg, svg, "the settings change run's herd chart");
    assert_eq!(
        page_table(&mut browser),
        moved_table,
        "after the drag the page shows run's numbers for the settings its controls show (cap {cap_text})"
    );
    assert!(
        page_herd(&mut browser) == moved_svg,
        "after the drag the page shows run's herd chart for them"
    );
    assert!(
        first_chart(&mut browser) == moved_svg,
        "after the drag the first, fast chart is run's herd.svg for them"
    );

    // The address holds the view: loaded afresh, the page shows the same numbers.
    let link = browser.eval("location.href").as_str().unwrap().to_string();
    assert!(link.contains("backoff.cap="), "{link}");
    browser.eval("window.before = true");
    browser.page("Page.navigate", serde_json::json!({ "url": link }));
    browser.wait_for("window.before === undefined", "the link loads a new page");
    wait_for_answer_after(&mut browser, 0);
    assert_eq!(
        page_table(&mut browser),
        moved_table,
        "the link {link} reproduces the view"
    );
}
