//! `jitterlab serve`: the playground, a page in the browser whose knobs re-simulate the
//! scenario as they move (feature `serve`).
//!
//! - [`http`]: the bounded HTTP/1.1 of one request per connection, on `std::net`.
//! - [`simulate`]: knob settings to `--set`s, a run as `jitterlab run` does it, what the page
//!   shows.
//! - [`tar`]: "download results" as one tar file written in memory.
//!
//! The page (`page.html`, `page.js`, `page.css`, built into the binary) asks `/api/knobs` for
//! the knobs, keeps their setting in its URL, and whenever a knob moves asks
//! `/api/chart?SETTINGS` for the herd chart from replication 0 alone (the first, fast answer,
//! where that chart needs no more), then `/api/run?SETTINGS` for the table and charts of
//! every replication. Each run request takes a new generation and cancels the
//! run of the one before ([`CancelToken`]): only the newest setting is ever worked on. The
//! page numbers its requests (`X-Jitterlab-Run: PAGE.N`): one that arrives after its page's
//! newer one is superseded at once and cancels nothing.
//! Loopback only unless the caller binds another address; a request whose `Host` is not the
//! loopback address it was sent to is refused (a web page elsewhere cannot reach the server
//! through a name of its own).

pub mod http;
pub mod simulate;
pub mod tar;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cancel::CancelToken;
use crate::error::{Error, Result};
use crate::scenario::{Control, Knob};
use crate::sweep::Progress;
use http::{Request, Response};
pub use simulate::{MAX_EVENTS, Outcome, Playground, Settings};

/// The address `serve` listens on unless told otherwise (loopback only).
pub const DEFAULT_ADDR: &str = "127.0.0.1:8029";
/// Connections served at once; one more is answered 503 at once.
pub const MAX_CONNECTIONS: usize = 32;

/// The downloads, each a run or a file of its own.
const DOWNLOADS: [&str; 2] = ["/scenario.toml", "/results.tar"];

const PAGE: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

/// The playground's server: the scenario, the listening socket, and the newest run.
pub struct Server {
    playground: Playground,
    listener: TcpListener,
    addr: SocketAddr,
    latest: Mutex<Latest>,
    progress: Counter,
    connections: AtomicUsize,
    /// Held while a download runs: one at a time (each is a whole run of its own).
    download: Mutex<()>,
    /// Cancelled when the server stops: what a download's run answers to.
    stopping: CancelToken,
}

/// The newest run: its generation, the token that cancels it, and the newest page order
/// seen (`X-Jitterlab-Run: PAGE.SEQUENCE`), by which a request that reaches the server late
/// cannot cancel its page's newer one.
#[derive(Default)]
struct Latest {
    generation: u64,
    cancel: CancelToken,
    order: Option<(String, u64)>,
}

/// A connection's slot of [`MAX_CONNECTIONS`], given back when dropped (a panic included).
struct Slot<'a>(&'a AtomicUsize);

impl Slot<'_> {
    /// A slot, or `None` when all are taken.
    fn take(count: &AtomicUsize) -> Option<Slot<'_>> {
        let slot = Slot(count);
        (count.fetch_add(1, Ordering::SeqCst) < MAX_CONNECTIONS).then_some(slot)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The newest run's progress, for `/api/progress`.
#[derive(Default)]
struct Counter {
    generation: AtomicU64,
    done: AtomicUsize,
    total: AtomicUsize,
}

/// The progress of the run of one generation; a run that is no longer the newest counts
/// nothing.
struct RunProgress<'a> {
    counter: &'a Counter,
    generation: u64,
}

impl Progress for RunProgress<'_> {
    fn start(&self, to_run: usize, finished: usize, total: usize) {
        let _ = to_run;
        if self.counter.generation.load(Ordering::SeqCst) == self.generation {
            self.counter.done.store(finished, Ordering::SeqCst);
            self.counter.total.store(total, Ordering::SeqCst);
        }
    }

    fn unit_done(&self, _events: u64) {
        if self.counter.generation.load(Ordering::SeqCst) == self.generation {
            self.counter.done.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Server {
    /// Binds `addr` for `playground`. Port 0 takes a free port ([`Server::url`] names it).
    pub fn bind(playground: Playground, addr: SocketAddr) -> Result<Server> {
        let listener = TcpListener::bind(addr).map_err(|e| Error::Usage {
            arg: format!("--addr {addr}"),
            message: format!("cannot listen there: {e}"),
        })?;
        let addr = listener.local_addr().map_err(|e| Error::io("--addr", e))?;
        // Accepting without blocking lets the loop see its cancel token.
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::io("--addr", e))?;
        Ok(Server {
            playground,
            listener,
            addr,
            latest: Mutex::new(Latest::default()),
            progress: Counter::default(),
            connections: AtomicUsize::new(0),
            download: Mutex::new(()),
            stopping: CancelToken::new(),
        })
    }

    /// The page's address, `http://127.0.0.1:8029/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Serves until `cancel` is cancelled, each connection on a thread of its own (at most
    /// [`MAX_CONNECTIONS`]); then cancels the newest run and waits for the connections.
    pub fn serve_until(&self, cancel: &CancelToken) -> Result<()> {
        std::thread::scope(|scope| {
            while !cancel.is_cancelled() {
                match self.listener.accept() {
                    Ok((stream, _)) => {
                        let Some(slot) = Slot::take(&self.connections) else {
                            let busy = Response::error(503, "too many connections; try again");
                            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
                            let _ = busy.write_to(&mut &stream, false);
                            continue;
                        };
                        scope.spawn(move || {
                            let _slot = slot;
                            self.connection(stream);
                        });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            self.stopping.cancel();
            self.latest
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .cancel
                .cancel();
        });
        Ok(())
    }

    /// One connection: one request read within bounds, one response, closed; the client's
    /// part all within one [`http::CLIENT_TIME`].
    fn connection(&self, mut stream: TcpStream) {
        let _ = stream.set_nonblocking(false);
        let deadline = http::Deadline::after(http::CLIENT_TIME);
        let read = http::read_request(&mut stream, deadline);
        // The time the server works is not the client's; a 408 still gets a moment to be sent.
        let left = deadline.left().unwrap_or(Duration::from_secs(1));
        let (response, head_only) = match read {
            Ok(request) => {
                // A bug in one answer is a 500, not a lost connection slot or a dead server.
                let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.handle(&request)
                }));
                let answer = answer.unwrap_or_else(|_| {
                    Response::error(500, "the server failed on this request (a bug)")
                });
                (answer, request.method == "HEAD")
            }
            Err(refused) => (refused, false),
        };
        let deadline = http::Deadline::resumed(left);
        if response.send(&mut stream, head_only, deadline).is_ok() {
            let _ = stream.shutdown(std::net::Shutdown::Write);
            http::drain(&mut stream, deadline);
        }
    }

    /// The answer to a request (no socket: the tests call it directly).
    pub fn handle(&self, request: &Request) -> Response {
        if !matches!(request.method.as_str(), "GET" | "HEAD") {
            let mut r = Response::error(405, "only GET and HEAD are answered");
            r.headers.push(("Allow", "GET, HEAD".into()));
            return r;
        }
        if !self.host_allowed(request.host.as_deref()) {
            return Response::error(
                421,
                "this server answers requests addressed to its loopback address only",
            );
        }
        let path = request.path.as_str();
        if path.starts_with("/api/") || DOWNLOADS.contains(&path) {
            // A run is work: not for a HEAD, nor for a request another site's page made.
            if request.method == "HEAD" {
                let mut r = Response::error(405, "only GET is answered here (a HEAD would run)");
                r.headers.push(("Allow", "GET".into()));
                return r;
            }
            if matches!(
                request.fetch_site.as_deref(),
                Some("cross-site" | "same-site")
            ) {
                return Response::error(403, "only the playground's own page asks this");
            }
        }
        match path {
            "/" | "/index.html" => Response::new(200, "text/html; charset=utf-8", PAGE),
            "/page.js" => Response::new(200, "text/javascript; charset=utf-8", SCRIPT),
            "/page.css" => Response::new(200, "text/css; charset=utf-8", STYLE),
            "/api/knobs" => json_response(200, &self.knobs_json()),
            "/api/progress" => json_response(
                200,
                &json!({
                    "generation": self.progress.generation.load(Ordering::SeqCst),
                    "done": self.progress.done.load(Ordering::SeqCst),
                    "total": self.progress.total.load(Ordering::SeqCst),
                }),
            ),
            "/api/chart" => self.first_chart(&request.query, request.order.as_deref()),
            "/api/run" => self.run(&request.query, request.order.as_deref()),
            "/scenario.toml" => self.download_scenario(&request.query),
            "/results.tar" => self.download_results(&request.query),
            _ => Response::error(404, "no such page"),
        }
    }

    /// Bound to loopback, only requests addressed to loopback (by number, the address bound
    /// or `localhost`).
    fn host_allowed(&self, host: Option<&str>) -> bool {
        if !self.addr.ip().is_loopback() {
            return true;
        }
        let Some(host) = host else {
            return true;
        };
        let port = self.addr.port();
        [
            self.addr.to_string(),
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(host))
    }

    fn knobs_json(&self) -> Value {
        let doc = self.playground.doc();
        let base = doc.base().ok();
        json!({
            "name": base.as_ref().map(|b| b.name.clone()).unwrap_or_default(),
            "description": base.as_ref().map(|b| b.description.clone()).unwrap_or_default(),
            "origin": doc.origin(),
            "max_events": MAX_EVENTS,
            "knobs": self.playground.knobs().iter().map(knob_json).collect::<Vec<_>>(),
        })
    }

    /// A new generation, the run before it cancelled; `None` when `order` (the page's
    /// `PAGE.SEQUENCE`) is older than the newest its page has sent: that request is already
    /// superseded. A request without an order is the newest by arriving.
    fn begin(&self, order: Option<&str>) -> Option<(u64, CancelToken)> {
        let order = order.and_then(|o| {
            let (page, sequence) = o.split_once('.')?;
            Some((page.to_string(), sequence.parse::<u64>().ok()?)).filter(|_| page.len() <= 64)
        });
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some((page, sequence)), Some((newest_page, newest))) = (&order, &latest.order)
            && page == newest_page
            && sequence <= newest
        {
            return None;
        }
        latest.cancel.cancel();
        latest.generation += 1;
        latest.cancel = CancelToken::new();
        if order.is_some() {
            latest.order = order;
        }
        self.progress
            .generation
            .store(latest.generation, Ordering::SeqCst);
        self.progress.done.store(0, Ordering::SeqCst);
        self.progress.total.store(0, Ordering::SeqCst);
        Some((latest.generation, latest.cancel.clone()))
    }

    /// `/api/run?SETTINGS`: the table, the charts and the command at these settings, or the
    /// error to show.
    fn run(&self, query: &str, order: Option<&str>) -> Response {
        self.resimulate(query, order, |settings, cancel, progress| {
            let outcome = self.playground.run(settings, true, cancel, progress)?;
            Ok(json!({
                "command": self.playground.command(settings),
                "header": columns(&outcome).header(),
                "points": points_json(&outcome),
                "charts": outcome.charts.iter().map(|(stem, title, svg)| json!({
                    "stem": stem, "title": title, "svg": svg,
                })).collect::<Vec<_>>(),
                "warnings": outcome.warnings,
            }))
        })
    }

    /// `/api/chart?SETTINGS`: the first, fast answer to a knob moved, the herd chart from
    /// replication 0 alone ([`Playground::first_chart`]), `"charts": null` where that chart
    /// needs every replication; the page asks `/api/run` for the table (and the same chart)
    /// next.
    fn first_chart(&self, query: &str, order: Option<&str>) -> Response {
        self.resimulate(query, order, |settings, cancel, progress| {
            let chart = self.playground.first_chart(settings, cancel, progress)?;
            Ok(json!({
                "charts": chart.map(|(stem, title, svg)| vec![json!({
                    "stem": stem, "title": title, "svg": svg,
                })]),
            }))
        })
    }

    /// A re-simulation the page asked for: takes a new generation (the older run stops),
    /// reads the settings, and answers `work`'s fields with the generation, the query and the
    /// time taken, or the error to show; `superseded` when a newer request cancelled it or
    /// came before it.
    fn resimulate(
        &self,
        query: &str,
        order: Option<&str>,
        work: impl FnOnce(&Settings, &CancelToken, &dyn Progress) -> Result<Value>,
    ) -> Response {
        let started = Instant::now();
        // Even a setting refused below is the page's newest: the older run stops.
        let Some((generation, cancel)) = self.begin(order) else {
            return json_response(200, &json!({ "superseded": true }));
        };
        let settings = match self.playground.settings(query) {
            Ok(s) => s,
            Err(e) => return error_json(&e),
        };
        let progress = RunProgress {
            counter: &self.progress,
            generation,
        };
        match work(&settings, &cancel, &progress) {
            Ok(mut answer) => {
                answer["generation"] = generation.into();
                answer["query"] = settings.query.clone().into();
                answer["elapsed_ms"] = (started.elapsed().as_secs_f64() * 1e3).into();
                json_response(200, &answer)
            }
            Err(Error::Interrupted) => json_response(
                200,
                &json!({ "generation": generation, "superseded": true }),
            ),
            Err(e) => error_json(&e),
        }
    }

    fn download_scenario(&self, query: &str) -> Response {
        let toml = self
            .playground
            .settings(query)
            .and_then(|s| self.playground.scenario_toml(&s));
        match toml {
            Ok(text) => attachment(
                Response::new(200, "application/toml; charset=utf-8", text),
                crate::folder::names::SCENARIO,
            ),
            Err(e) => Response::error(status_of(&e), &e.naming(crate::runner::flag)),
        }
    }

    /// `/results.tar?SETTINGS`: the CSV files and `scenario.toml` of a run at these settings.
    /// Its own run, bounded rather than cancelled by the page: a knob moved after the click
    /// does not take the file asked for; the work estimate ([`MAX_EVENTS`]) bounds it, one
    /// download runs at a time (downloads cannot pile up runs) and the server's stop cancels
    /// it.
    fn download_results(&self, query: &str) -> Response {
        self.download_results_reporting(query, &crate::sweep::Silent)
    }

    /// [`Self::download_results`], its run reported to `progress` (where the tests hold a
    /// download running).
    fn download_results_reporting(&self, query: &str, progress: &dyn Progress) -> Response {
        let _one = match self.download.try_lock() {
            Ok(one) => one,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                return Response::error(
                    503,
                    "another download is being prepared; try again when it is done",
                );
            }
        };
        let ran = (self.playground.settings(query))
            .and_then(|s| self.playground.run(&s, false, &self.stopping, progress));
        let name = self
            .playground
            .doc()
            .base()
            .map(|b| b.name)
            .unwrap_or_default();
        let folder = match name.len() <= 64
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && !name.starts_with('.')
        {
            true => name,
            false => "results".into(),
        };
        match ran {
            Ok(outcome) => attachment(
                Response::new(
                    200,
                    "application/x-tar",
                    tar::archive(&folder, &outcome.files),
                ),
                &format!("{folder}.tar"),
            ),
            Err(Error::Interrupted) => {
                Response::error(503, "the server is stopping; the download was not finished")
            }
            Err(e) => Response::error(status_of(&e), &e.naming(crate::runner::flag)),
        }
    }
}

fn attachment(mut r: Response, name: &str) -> Response {
    r.headers.push((
        "Content-Disposition",
        format!("attachment; filename=\"{name}\""),
    ));
    r
}

/// Bad input is the client's (400), anything else the server's (500).
fn status_of(e: &Error) -> u16 {
    if e.is_user_error() { 400 } else { 500 }
}

fn json_response(status: u16, value: &Value) -> Response {
    Response::new(status, "application/json", value.to_string())
}

fn error_json(e: &Error) -> Response {
    json_response(
        status_of(e),
        &json!({ "error": e.naming(crate::runner::flag) }),
    )
}

/// The table's columns for the outcome's runs.
fn columns(outcome: &Outcome) -> crate::output::table::Columns {
    let strategies = outcome.points.iter().flat_map(|p| &p.strategies);
    crate::output::table::Columns::of(strategies.map(|s| &s.estimates))
}

fn points_json(outcome: &Outcome) -> Vec<Value> {
    let columns = columns(outcome);
    (outcome.points.iter())
        .map(|p| {
            let label = match p.values.is_empty() {
                true => String::new(),
                false => format!("[{}] {}", p.index, crate::scenario::describe(&p.values)),
            };
            let rows: Vec<Vec<String>> = (p.strategies.iter())
                .map(|s| {
                    let mut row = vec![crate::text::shown(&s.name)];
                    row.extend(columns.cells(&s.estimates));
                    row
                })
                .collect();
            json!({ "label": label, "rows": rows })
        })
        .collect()
}

/// A knob as the page builds its control: durations in milliseconds.
fn knob_json(knob: &Knob) -> Value {
    let ms = |d: crate::time::SimDuration| d.as_nanos() as f64 / 1e6;
    let mut v = json!({ "key": knob.key, "label": knob.label, "value": knob.value });
    let extra = match &knob.control {
        Control::Integer { min, max, step } => {
            json!({ "kind": "integer", "min": min, "max": max, "step": step })
        }
        Control::Number { min, max, step } => {
            json!({ "kind": "number", "min": min, "max": max, "step": step })
        }
        Control::Duration { min, max, step } => json!({
            "kind": "duration", "min": ms(*min), "max": ms(*max), "step": ms(*step),
        }),
        Control::Choice(choices) => json!({
            "kind": "choice",
            "choices": choices.iter().map(crate::scenario::choice_text).collect::<Vec<_>>(),
        }),
        Control::Subset(items) => json!({
            "kind": "subset",
            "items": items.iter().map(crate::scenario::entry_name).collect::<Vec<_>>(),
        }),
    };
    if let (Value::Object(v), Value::Object(extra)) = (&mut v, extra) {
        v.extend(extra);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::ScenarioDoc;

    fn server(addr: &str) -> Server {
        let playground = Playground::new(ScenarioDoc::builtin(), "thundering-herd".into());
        Server::bind(playground.unwrap(), addr.parse().unwrap()).unwrap()
    }

    fn request(server: &Server, method: &str, target: &str, order: Option<&str>) -> Request {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        Request {
            method: method.into(),
            path: path.into(),
            query: query.into(),
            host: Some(server.addr.to_string()),
            fetch_site: None,
            order: order.map(String::from),
        }
    }

    fn body(r: &Response) -> String {
        String::from_utf8_lossy(&r.body).into_owned()
    }

    #[test]
    fn a_page_request_that_arrives_late_cancels_nothing() {
        let s = server("127.0.0.1:0");
        let (_, newest) = s.begin(Some("page.2")).expect("the first seen");
        // The page's older request reaches the server after its newer one.
        assert!(s.begin(Some("page.1")).is_none());
        let late = s.handle(&request(&s, "GET", "/api/run", Some("page.1")));
        assert_eq!(body(&late), r#"{"superseded":true}"#);
        assert!(
            !newest.is_cancelled(),
            "a late request cancelled the newest run"
        );
        // Another page, or a request without an order, is the newest by arriving.
        let (_, other) = s.begin(Some("tab.1")).expect("another page");
        assert!(newest.is_cancelled());
        s.begin(None).expect("no order");
        assert!(other.is_cancelled());
    }

    #[test]
    fn a_refused_setting_still_stops_the_older_run() {
        let s = server("127.0.0.1:0");
        let (_, older) = s.begin(Some("page.1")).unwrap();
        let r = s.handle(&request(&s, "GET", "/api/run?horizon=1h", Some("page.2")));
        assert_eq!(r.status, 400, "{}", body(&r));
        assert!(
            older.is_cancelled(),
            "the older run goes on after a refused setting"
        );
    }

    #[test]
    fn head_and_other_sites_run_nothing() {
        let s = server("127.0.0.1:0");
        let (_, newest) = s.begin(None).unwrap();
        for target in [
            "/api/run",
            "/api/chart",
            "/api/knobs",
            "/results.tar",
            "/scenario.toml",
        ] {
            let r = s.handle(&request(&s, "HEAD", target, None));
            assert_eq!(r.status, 405, "HEAD {target}");
            for site in ["cross-site", "same-site"] {
                let mut req = request(&s, "GET", target, None);
                req.fetch_site = Some(site.into());
                assert_eq!(s.handle(&req).status, 403, "{site} {target}");
            }
        }
        assert!(
            !newest.is_cancelled(),
            "a HEAD or another site's request took the run"
        );
        assert_eq!(s.handle(&request(&s, "HEAD", "/", None)).status, 200);
    }

    /// The file names in a tar archive (ustar headers: name at 0, octal size at 124).
    fn tar_names(tar: &[u8]) -> Vec<String> {
        let mut names = Vec::new();
        let mut at = 0;
        while at + 512 <= tar.len() && tar[at] != 0 {
            let h = &tar[at..at + 512];
            let name = h[..100].split(|&b| b == 0).next().unwrap();
            names.push(String::from_utf8_lossy(name).into_owned());
            let size = std::str::from_utf8(&h[124..135]).unwrap();
            at += 512 + usize::from_str_radix(size, 8).unwrap().div_ceil(512) * 512;
        }
        names
    }

    /// A progress that holds its run at the start until the test lets it go.
    struct Held {
        started: std::sync::mpsc::SyncSender<()>,
        release: Mutex<std::sync::mpsc::Receiver<()>>,
    }

    impl Progress for Held {
        fn start(&self, _to_run: usize, _finished: usize, _total: usize) {
            self.started.send(()).unwrap();
            let release = self.release.lock().unwrap();
            release.recv_timeout(Duration::from_secs(60)).unwrap();
        }
        fn unit_done(&self, _events: u64) {}
    }

    #[test]
    fn a_download_runs_alone_and_stops_with_the_server_not_with_a_knob() {
        let s = server("127.0.0.1:0");
        let (started, on_start) = std::sync::mpsc::sync_channel(1);
        let (let_go, release) = std::sync::mpsc::sync_channel(1);
        let held = Held {
            started,
            release: Mutex::new(release),
        };
        let ok = std::thread::scope(|scope| {
            // Owned here: a failed check below lets the download go at once.
            let let_go = let_go;
            let download = scope.spawn(|| s.download_results_reporting("backoff.cap=5s", &held));
            on_start
                .recv_timeout(Duration::from_secs(60))
                .expect("the download's run started");
            // Running: a second download is turned away at once.
            let second = s.handle(&request(&s, "GET", "/results.tar", None));
            assert_eq!(second.status, 503, "{}", body(&second));
            assert!(
                body(&second).contains("another download"),
                "{}",
                body(&second)
            );
            // Knobs moved (newer page requests) leave its run alone.
            for order in 1..=3 {
                s.begin(Some(&format!("page.{order}"))).unwrap();
            }
            let moved = s.handle(&request(&s, "GET", "/api/chart?backoff.cap=2s", None));
            assert_eq!(moved.status, 200, "{}", body(&moved));
            let_go.send(()).unwrap();
            download.join().unwrap()
        });
        assert_eq!(ok.status, 200, "{}", body(&ok));
        assert!(
            tar_names(&ok.body)
                .iter()
                .any(|n| n.ends_with("/summary.csv")),
            "{:?}",
            tar_names(&ok.body)
        );
        // Done: the next download runs.
        let next = s.handle(&request(&s, "GET", "/results.tar", None));
        assert_eq!(next.status, 200, "{}", body(&next));
        s.stopping.cancel();
        let r = s.handle(&request(&s, "GET", "/results.tar?backoff.cap=5s", None));
        assert_eq!(r.status, 503);
        assert!(body(&r).contains("stopping"), "{}", body(&r));
    }

    #[test]
    fn errors_name_the_command_lines_flags_as_the_page_prints_its_command() {
        let r = error_json(&Error::Interrupted);
        assert!(body(&r).contains("continue with --resume"), "{}", body(&r));
    }

    #[test]
    fn the_loopback_address_bound_is_its_own_host() {
        let s = server("127.0.0.2:0");
        let r = s.handle(&request(&s, "GET", "/page.css", None));
        assert_eq!(r.status, 200, "{}", body(&r));
        let mut elsewhere = request(&s, "GET", "/page.css", None);
        elsewhere.host = Some("evil.example".into());
        assert_eq!(s.handle(&elsewhere).status, 421);
    }

    #[test]
    fn a_slot_is_given_back_when_its_thread_panics() {
        let count = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let slot = Slot::take(&count).unwrap();
            let panicked = scope.spawn(move || {
                let _slot = slot;
                panic!("a bug in an answer");
            });
            assert!(panicked.join().is_err());
        });
        assert_eq!(count.load(Ordering::SeqCst), 0);
        let all: Vec<_> = (0..MAX_CONNECTIONS).map(|_| Slot::take(&count)).collect();
        assert!(all.iter().all(Option::is_some));
        assert!(Slot::take(&count).is_none());
        drop(all);
        assert_eq!(count.load(Ordering::SeqCst), 0);
    }
}
