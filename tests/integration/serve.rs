//! `jitterlab serve` over plain TCP: bad requests get a 4xx and never stop the server, bad
//! settings an error that names the key, a newer request cancels an older run, and the
//! downloads are what `jitterlab run` writes. `[playground]` tables are checked by `check`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::common::{TempDir, jitterlab, stderr};
use crate::playground::Served;

/// Sends `request` (raw bytes) and returns the status and the body.
fn raw(url: &str, request: &[u8]) -> (u16, Vec<u8>) {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let end = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("an answer: {:?}", String::from_utf8_lossy(&answer)));
    let head = String::from_utf8_lossy(&answer[..end]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect(&head);
    (status, answer[end + 4..].to_vec())
}

/// `GET path` with the right Host.
fn get(url: &str, path: &str) -> (u16, Vec<u8>) {
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    raw(
        url,
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
    )
}

fn text(body: &[u8]) -> String {
    String::from_utf8_lossy(body).into_owned()
}

#[test]
fn bad_requests_get_a_4xx_and_the_server_goes_on() {
    let served = Served::start(&[]);
    let url = served.url.as_str();
    // A client that connects and sends nothing holds one thread, not the server.
    let idle = TcpStream::connect(url.trim_start_matches("http://").trim_end_matches('/'));
    let cases: Vec<(Vec<u8>, u16)> = vec![
        (b"GARBAGE\r\n\r\n".to_vec(), 400),
        (b"GET / HTTP/1.1 extra\r\n\r\n".to_vec(), 400),
        (b"GET / SPDY/3\r\n\r\n".to_vec(), 505),
        (b"\xff\xfe / HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"GET / HTTP/1.1\r\nno colon\r\n\r\n".to_vec(), 400),
        (
            format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20_000)).into_bytes(),
            431,
        ),
        (
            b"POST /api/run HTTP/1.1\r\nContent-Length: 1000000000\r\n\r\nxx".to_vec(),
            413,
        ),
        (
            b"POST /api/run HTTP/1.1\r\nContent-Length: 2\r\n\r\nxx".to_vec(),
            405,
        ),
        (
            b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
            400,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: evil.example:80\r\n\r\n".to_vec(),
            421,
        ),
        (b"GET /etc/passwd HTTP/1.1\r\n\r\n".to_vec(), 404),
        (b"GET /../../etc/passwd HTTP/1.1\r\n\r\n".to_vec(), 404),
    ];
    for (request, status) in cases {
        let (got, body) = raw(url, &request);
        assert_eq!(
            got,
            status,
            "{:?}: {}",
            String::from_utf8_lossy(&request[..request.len().min(60)]),
            text(&body)
        );
    }
    // Bad settings: 400, and the message names the key, the value and what is allowed.
    for (query, words) in [
        (
            "workload.clients=1000000000",
            &["workload.clients", "1000000000", "from 1000 to 40000"][..],
        ),
        (
            "backoff.cap=banana",
            &["backoff.cap", "banana", "a duration from 100ms to 20s"],
        ),
        ("backoff.cap=-1s", &["backoff.cap", "-1s"]),
        (
            "client.max_attempts=7",
            &["client.max_attempts", "one of 2, 3, 5, 10, unlimited"],
        ),
        (
            "backoff.strategies=",
            &["backoff.strategies", "one or more of"],
        ),
        (
            "backoff.strategies=full,full",
            &["backoff.strategies", "each once"],
        ),
        (
            "backoff.strategies=full,%22%3E%3Cscript%3E",
            &["backoff.strategies"],
        ),
        ("horizon=1h", &["horizon", "a knob of this scenario"]),
        (
            "backoff.cap=1s&backoff.cap=2s",
            &["backoff.cap", "given twice"],
        ),
        ("backoff.cap=%zz", &["malformed query"]),
    ] {
        let (status, body) = get(url, &format!("/api/run?{query}"));
        let answer: serde_json::Value = serde_json::from_slice(&body).expect("a JSON answer");
        let message = answer["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{query}: {answer}"));
        assert_eq!(status, 400, "{query}: {message}");
        for w in words {
            assert!(message.contains(w), "{query}: `{w}` in {message}");
        }
    }
    let (status, body) = get(url, "/scenario.toml?backoff.cap=banana");
    assert_eq!(status, 400, "{}", text(&body));
    drop(idle);
    // Still serving.
    let (status, page) = get(url, "/");
    assert_eq!(status, 200);
    assert!(text(&page).contains("<script src=\"/page.js\">"));
    // Stopped with Ctrl-C, it leaves no temporary folder behind (it ran simulations above).
    let (_, body) = get(url, "/api/run?backoff.cap=5s");
    assert!(text(&body).contains("\"points\""));
    let pid = served.pid();
    let offline: Vec<String> = ["/", "/page.js", "/page.css"]
        .iter()
        .map(|p| text(&get(url, p).1))
        .collect();
    drop(served);
    let prefix = format!("jitterlab-serve-{pid}-");
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // Offline: nothing the page loads comes from elsewhere.
    for (path, body) in ["/", "/page.js", "/page.css"].iter().zip(offline) {
        assert!(
            !body.contains("http://") && !body.contains("https://") && !body.contains("//cdn"),
            "{path}"
        );
    }
}

#[test]
fn runaway_settings_are_refused_by_the_work_estimate() {
    let dir = TempDir::new("serve-work");
    let file = dir.join("big.toml");
    std::fs::write(
        &file,
        "[workload]\nkind = \"burst\"\nclients = 1000\n[client]\nmax_attempts = \"unlimited\"\ndeadline = \"off\"\n[[faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"100s\"\n[playground]\nknobs = [{ key = \"workload.clients\", min = 100, max = 10000000 }]\n",
    )
    .unwrap();
    let served = Served::start(&[file.to_str().unwrap()]);
    let (status, body) = get(&served.url, "/api/run?workload.clients=10000000");
    let answer: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let message = answer["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(status, 400, "{message}");
    assert!(
        message.contains("too much work for the playground"),
        "{message}"
    );
    assert!(message.contains("workload.clients"), "{message}");
}

#[test]
fn a_newer_request_cancels_the_older_run() {
    let served = Served::start(&[]);
    let url = served.url.clone();
    let slow = std::thread::spawn(move || get(&url, "/api/run?workload.clients=40000"));
    // The slow run has begun once the server counts its generation.
    let asked = std::time::Instant::now();
    loop {
        let p: serde_json::Value =
            serde_json::from_slice(&get(&served.url, "/api/progress").1).unwrap();
        if p["generation"] == 1 {
            break;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(60),
            "the slow run never began (progress: {p})"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (status, body) = get(&served.url, "/api/run?backoff.cap=5s");
    let newer: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, 200);
    assert_eq!(newer["generation"], 2, "{newer}");
    assert!(
        newer["points"][0]["rows"]
            .as_array()
            .is_some_and(|r| r.len() == 4)
    );
    let (_, body) = slow.join().unwrap();
    let older: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let shown: String = older.to_string().chars().take(300).collect();
    assert_eq!(
        older["superseded"], true,
        "the older run was cancelled: {shown}"
    );
}

/// `/api/progress` as JSON.
fn progress(url: &str) -> serde_json::Value {
    let (status, body) = get(url, "/api/progress");
    assert_eq!(status, 200);
    serde_json::from_slice(&body).unwrap()
}

#[test]
fn a_long_run_shows_its_progress_and_the_server_answers_meanwhile() {
    let served = Served::start(&[]);
    let url = served.url.clone();
    // Four times the clients: a run long enough to be watched (20 runs).
    let long = std::thread::spawn(move || get(&url, "/api/run?workload.clients=40000"));
    let mut partial = Vec::new();
    let mut answered_meanwhile = false;
    let asked = std::time::Instant::now();
    while !long.is_finished() {
        let before = progress(&served.url);
        let (status, body) = get(&served.url, "/api/knobs");
        assert_eq!(status, 200, "{}", text(&body));
        let after = progress(&served.url);
        if after["generation"] == 1 && after["total"] == 20 {
            let done = after["done"].as_u64().unwrap();
            if done < 20 {
                partial.push(done);
                // The knobs were answered while the run went on.
                answered_meanwhile |= before["generation"] == 1 && before["total"] == 20;
            }
        }
        assert!(
            asked.elapsed() < Duration::from_secs(120),
            "the run never ended"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let (status, body) = long.join().unwrap();
    assert_eq!(status, 200, "{}", text(&body));
    let end = progress(&served.url);
    assert_eq!(
        (&end["done"], &end["total"]),
        (&20.into(), &20.into()),
        "{end}"
    );
    assert!(
        answered_meanwhile,
        "no request was answered while the run went on (progress seen: {partial:?})"
    );
    assert!(
        partial.windows(2).all(|w| w[0] <= w[1]),
        "progress went back: {partial:?}"
    );
}

#[test]
fn a_download_is_served_whole_and_bounded() {
    let served = Served::start(&[]);
    // One download at a time, and a knob moved meanwhile leaving it alone: `serve`'s unit
    // test `a_download_runs_alone_and_stops_with_the_server_not_with_a_knob` holds a download
    // running to check them; here a big one is served whole.
    let (status, tar) = get(&served.url, "/results.tar?workload.clients=40000");
    assert_eq!(status, 200, "{}", text(&tar));
    assert!(untar(&tar).iter().any(|(n, _)| n.ends_with("/summary.csv")));
    // Bounded: past the work estimate, refused like a run.
    let file = TempDir::new("serve-download-bound");
    let path = file.join("big.toml");
    std::fs::write(
        &path,
        "[workload]\nkind = \"burst\"\nclients = 1000\n[client]\nmax_attempts = \"unlimited\"\ndeadline = \"off\"\n[[faults]]\nkind = \"outage\"\nstart = \"0s\"\nend = \"100s\"\n[playground]\nknobs = [{ key = \"workload.clients\", min = 100, max = 10000000 }]\n",
    )
    .unwrap();
    let other = Served::start(&[path.to_str().unwrap()]);
    let (status, body) = get(&other.url, "/results.tar?workload.clients=10000000");
    assert_eq!(status, 400, "{}", text(&body));
    assert!(text(&body).contains("too much work"), "{}", text(&body));
}

/// The CSV files under `dir`, by their path below it.
fn csv_names(dir: &std::path::Path, prefix: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.file_type().unwrap().is_dir() {
            names.extend(csv_names(&entry.path(), &format!("{name}/")));
        } else if name.ends_with(".csv") {
            names.insert(name);
        }
    }
    names
}

/// The files of a tar archive, `(name, bytes)`.
fn untar(mut tar: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    while tar.len() >= 512 && tar[0] != 0 {
        let name = text(&tar[..100]).trim_end_matches('\0').to_string();
        let size = usize::from_str_radix(text(&tar[124..135]).trim_end_matches('\0'), 8).unwrap();
        files.push((name, tar[512..512 + size].to_vec()));
        tar = &tar[512 + size.next_multiple_of(512)..];
    }
    files
}

#[test]
fn downloads_are_what_run_writes() {
    let dir = TempDir::new("serve-downloads");
    let served = Served::start(&[]);
    let query = "backoff.cap=5s&backoff.strategies=full%2Cequal";
    let (status, toml) = get(&served.url, &format!("/scenario.toml?{query}"));
    assert_eq!(status, 200);
    std::fs::write(dir.join("scenario.toml"), &toml).unwrap();
    let (status, tar) = get(&served.url, &format!("/results.tar?{query}"));
    assert_eq!(status, 200);
    let files = untar(&tar);
    let csvs: Vec<&(String, Vec<u8>)> = files.iter().filter(|(n, _)| n.ends_with(".csv")).collect();
    assert!(
        csvs.len() >= 5,
        "{:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    let by_file = jitterlab(
        dir.path(),
        &[
            "run",
            "scenario.toml",
            "--out",
            "from-file",
            "--no-plots",
            "--quiet",
        ],
    );
    assert!(by_file.status.success(), "{}", stderr(&by_file));
    let by_set = jitterlab(
        dir.path(),
        &[
            "run",
            "--set",
            "backoff.cap=5s",
            "--set",
            r#"backoff.strategies=["full", "equal"]"#,
            "--out",
            "from-set",
            "--no-plots",
            "--quiet",
        ],
    );
    assert!(by_set.status.success(), "{}", stderr(&by_set));
    // The same CSV files, no more and no fewer.
    let downloaded: std::collections::BTreeSet<String> = (csvs.iter())
        .map(|(n, _)| n.trim_start_matches("thundering-herd/").to_string())
        .collect();
    for out in ["from-file", "from-set"] {
        assert_eq!(csv_names(&dir.join(out), ""), downloaded, "{out}");
    }
    for (name, bytes) in csvs {
        let file = name
            .strip_prefix("thundering-herd/")
            .expect("the scenario's folder");
        for out in ["from-file", "from-set"] {
            let written = std::fs::read(dir.join(out).join(file)).unwrap();
            assert!(written == *bytes, "{out}/{file} differs from the download");
        }
    }
    assert!(std::fs::read(dir.join("from-set/scenario.toml")).unwrap() == toml);
}

#[test]
fn check_refuses_knobs_the_scenario_does_not_take() {
    let dir = TempDir::new("serve-knobs");
    for (knobs, words) in [
        (
            r#"[{ key = "server.workers", min = 0, max = 10 }]"#,
            &["playground.knobs[0]", "server.workers", "0"][..],
        ),
        (
            r#"[{ key = "backoff.cap", min = "5s", max = "1s" }]"#,
            &["playground.knobs[0].max", "below `max`"],
        ),
        (
            r#"[{ key = "backoff.cap", min = 1, max = "1s" }]"#,
            &["playground.knobs[0].max", "the same for min and max"],
        ),
        (
            r#"[{ key = "backoff.cap" }]"#,
            &["playground.knobs[0]", "`min` and `max`"],
        ),
        (
            r#"[{ min = 1, max = 2 }]"#,
            &["playground.knobs[0].key", "needs a `key`"],
        ),
        (
            r#"[{ key = "nope.nothing", min = 1, max = 2 }]"#,
            &["nope.nothing", "no value in this scenario"],
        ),
        (
            r#"[{ key = "client.max_attempts", choices = [3, 3] }]"#,
            &["choices[1]", "twice"],
        ),
        (
            r#"[{ key = "backoff.strategies", subset = ["full", "bogus"] }]"#,
            &["playground.knobs[0]", "bogus"],
        ),
    ] {
        let file = dir.join("k.toml");
        std::fs::write(&file, format!("[playground]\nknobs = {knobs}\n")).unwrap();
        let o = jitterlab(dir.path(), &["check", "k.toml"]);
        assert_eq!(o.status.code(), Some(2), "{knobs}");
        let err = stderr(&o);
        assert!(
            err.contains("k.toml:2:"),
            "{knobs}: placed in the file: {err}"
        );
        for w in words {
            assert!(err.contains(w), "{knobs}: `{w}` in {err}");
        }
    }
}

#[test]
fn check_takes_what_run_takes_under_set() {
    let dir = TempDir::new("serve-check-set");
    // thundering-herd's own [playground] offers a cap range and the first fault's end:
    // neither is the user's to answer for when --set moves the cap or drops the faults.
    for set in ["backoff.cap=50ms", "faults=[]"] {
        let o = jitterlab(dir.path(), &["check", "thundering-herd", "--set", set]);
        assert_eq!(o.status.code(), Some(0), "--set {set}: {}", stderr(&o));
    }
    // A file's own bad table is still refused without --set, and warned of under --set.
    let file = dir.join("k.toml");
    let knobs = r#"[{ key = "server.workers", min = 0, max = 10 }]"#;
    std::fs::write(&file, format!("[playground]\nknobs = {knobs}\n")).unwrap();
    let o = jitterlab(dir.path(), &["check", "k.toml", "--set", "seed=7"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: [playground]"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_client_trickling_after_the_answer_is_let_go() {
    let served = Served::start(&[]);
    let addr = served
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    // The blank line that ends the head arrives split across reads.
    stream.set_nodelay(true).unwrap();
    let head = format!("GET /page.css HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let (a, b) = head.split_at(head.len() - 3);
    for part in [a, &b[..2], &b[2..]] {
        stream.write_all(part.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    assert!(
        text(&answer).starts_with("HTTP/1.1 200"),
        "{}",
        text(&answer)
    );
    // One byte each 150 ms, read by the server's drain one at a time: the connection (and its
    // slot of 32) is let go within the drain's 2 s, not after 1 MiB of trickle.
    let started = std::time::Instant::now();
    while stream.write_all(b"x").is_ok() {
        assert!(
            started.elapsed() < Duration::from_secs(12),
            "the server still reads a trickling client after 12 s"
        );
        std::thread::sleep(Duration::from_millis(150));
    }
}
