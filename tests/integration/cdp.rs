//! A small client of the Chrome DevTools Protocol over `--remote-debugging-pipe`: Chromium
//! reads commands on its file descriptor 3 and writes answers and events on 4, each a JSON
//! message ended by a NUL byte. No port, no websocket: the pipe is the browser's own.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A headless Chromium and one page of it, attached.
pub struct Browser {
    child: Child,
    commands: std::io::PipeWriter,
    answers: Receiver<Value>,
    next_id: u64,
    session: String,
}

impl Browser {
    /// Starts `binary` headless with a window of `width`×`height` and a profile in `profile`,
    /// and opens a blank page.
    pub fn start(binary: &Path, profile: &Path, width: u32, height: u32) -> Browser {
        let (command_reader, commands) = std::io::pipe().expect("a pipe");
        let (answer_reader, answer_writer) = std::io::pipe().expect("a pipe");
        let (to_browser, from_browser) = (command_reader.as_raw_fd(), answer_writer.as_raw_fd());
        let mut command = Command::new(binary);
        command
            .args(crate::common::HEADLESS)
            .arg("--remote-debugging-pipe")
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(match std::env::var_os("JITTERLAB_CHROMIUM_LOG") {
                Some(_) => Stdio::inherit(),
                None => Stdio::null(),
            });
        // SAFETY: only fcntl and dup2, async-signal-safe, between fork and exec. Both ends
        // are first moved above 4 (either may be 3 or 4 already); the final duplicates lose
        // close-on-exec, the originals keep it.
        unsafe {
            command.pre_exec(move || {
                let high_in = libc::fcntl(to_browser, libc::F_DUPFD_CLOEXEC, 10);
                let high_out = libc::fcntl(from_browser, libc::F_DUPFD_CLOEXEC, 10);
                if high_in < 0
                    || high_out < 0
                    || libc::dup2(high_in, 3) < 0
                    || libc::dup2(high_out, 4) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start chromium");
        drop((command_reader, answer_writer));
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(answer_reader);
            let mut message = Vec::new();
            while reader.read_until(0, &mut message).is_ok_and(|n| n > 0) {
                message.pop();
                if let Ok(v) = serde_json::from_slice::<Value>(&message)
                    && tx.send(v).is_err()
                {
                    break;
                }
                message.clear();
            }
        });
        let mut browser = Browser {
            child,
            commands,
            answers,
            next_id: 0,
            session: String::new(),
        };
        let target = browser.call("Target.createTarget", json!({ "url": "about:blank" }));
        let target_id = target["targetId"]
            .as_str()
            .expect("a target id")
            .to_string();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        );
        browser.session = attached["sessionId"].as_str().expect("a session").into();
        browser.page("Page.enable", json!({}));
        browser
    }

    fn send(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands.write_all(&bytes).expect("write to chromium");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.answers.recv_timeout(left) {
                Ok(v) if v["id"] == json!(id) => {
                    if let Some(e) = v.get("error") {
                        panic!("{method}: {e}");
                    }
                    return v["result"].clone();
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => panic!("{method}: no answer within 60 s"),
                Err(RecvTimeoutError::Disconnected) => panic!("{method}: chromium went away"),
            }
        }
    }

    /// A browser-level command.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, None)
    }

    /// A command to the page.
    pub fn page(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(method, params, Some(&session))
    }

    /// The value of a JavaScript expression in the page (a promise is awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.page(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expression}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `condition` (a JavaScript expression) is true, or panics with `what`. An
    /// exception counts as false (a page still loading has no body yet).
    pub fn wait_for(&mut self, condition: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let guarded = format!(
            "(() => {{ try {{ return !!({condition}); }} catch (e) {{ return false; }} }})()"
        );
        while self.eval(&guarded) != json!(true) {
            assert!(Instant::now() < deadline, "within 60 s: {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A mouse event at (x, y) in CSS pixels: `mousePressed`, `mouseMoved`, `mouseReleased`.
    pub fn mouse(&mut self, kind: &str, x: f64, y: f64) {
        let buttons = if kind == "mouseReleased" { 0 } else { 1 };
        self.page(
            "Input.dispatchMouseEvent",
            json!({ "type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1 }),
        );
    }

    /// The page as PNG.
    pub fn screenshot(&mut self, path: &Path) {
        use base64::Engine;
        let shot = self.page("Page.captureScreenshot", json!({ "format": "png" }));
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("png data"))
            .expect("base64");
        std::fs::write(path, png).expect("write the screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
