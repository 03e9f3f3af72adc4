//! A preset in real code: the AWS SDKs' 2026 standard retry mode around a blocking ureq call,
//! the same policy the simulator runs as `preset = "aws-standard"` (docs/presets.md).
//!
//! The preset reads `x-amz-retry-after` (milliseconds), honours it up to 5 s above the
//! backoff, ignores `Retry-After`, backs off from 1 s after a 429 and from 50 ms after a 5xx,
//! and keeps the SDK's 500-token quota (14 a retry, 5 a throttling retry) across calls.
//!
//! ```sh
//! cargo run -p jitterlab-retry --features ureq --example aws_preset -- http://127.0.0.1:8080/
//! ```
//!
//! Its tests (`cargo test -p jitterlab-retry --features ureq --example aws_preset`) run it
//! against a scripted server on 127.0.0.1, in real time (about 2 s).

use std::error::Error;
use std::time::Duration;

use jitterlab_retry::http::ureq::call_text;
use jitterlab_retry::prelude::*;
use jitterlab_retry::presets;

/// The retrier every call shares (the quota spans calls): the preset, with a 2 s limit per
/// attempt (the SDK's own timeouts are its transport's, not its retry policy's).
fn retrier() -> Result<Retrier, jitterlab_retry::Error> {
    presets::aws_standard()
        .builder()
        .timeout(Duration::from_secs(2))
        .build()
}

/// GETs `url`'s body with the preset's retries, logging every attempt.
fn fetch(
    retrier: &Retrier,
    agent: &ureq::Agent,
    url: &str,
) -> Result<String, Box<dyn Error + Send + Sync>> {
    let body = retrier.retry(
        &SystemClock::new(),
        &CancelToken::new(),
        |ctx| call_text(agent.get(url).config().timeout_global(ctx.timeout).build()),
        |event| eprintln!("{url}: {event}"),
    )?;
    Ok(body)
}

fn main() -> Result<(), Box<dyn Error + Send + Sync>> {
    let url = std::env::args().nth(1).ok_or("usage: aws_preset URL")?;
    println!(
        "{}",
        fetch(&retrier()?, &ureq::Agent::new_with_defaults(), &url)?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use jitterlab_retry::http::Error as HttpError;

    use super::*;

    /// A server on 127.0.0.1 answering the requests in turn with `script`'s status and extra
    /// header line, then 200 `hello`; its URL and the count of requests it got.
    fn serve(script: Vec<(u16, &'static str)>) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let url = format!("http://{}/", listener.local_addr().expect("bound"));
        let script = Arc::new(Mutex::new(script.into_iter()));
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&requests);
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let (status, header) = script.lock().unwrap().next().unwrap_or((200, ""));
                let body = if status < 400 { "hello" } else { "" };
                let answer = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n{header}\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        (url, requests)
    }

    fn get(url: &str) -> Result<String, Box<dyn Error + Send + Sync>> {
        fetch(
            &retrier().expect("valid settings"),
            &ureq::Agent::new_with_defaults(),
            url,
        )
    }

    #[test]
    fn the_millisecond_hint_is_honoured_and_retry_after_is_not() {
        // 429 with x-amz-retry-after 400 ms: a throttling retry after max(U[0, 1 s], 400 ms);
        // then 503 with `Retry-After: 30`, unread: a transient retry after U[0, 100 ms].
        let (url, requests) = serve(vec![
            (429, "x-amz-retry-after: 400\r\n"),
            (503, "Retry-After: 30\r\n"),
        ]);
        let began = Instant::now();
        assert_eq!(get(&url).unwrap(), "hello");
        let took = began.elapsed();
        assert_eq!(requests.load(Ordering::SeqCst), 3);
        assert!(
            took >= Duration::from_millis(400) && took < Duration::from_millis(1_600),
            "{took:?}"
        );
    }

    #[test]
    fn three_attempts_then_the_last_error() {
        let (url, requests) = serve(vec![(503, ""); 5]);
        let e = get(&url).unwrap_err();
        let e: &RetryError<HttpError> = e.downcast_ref().expect("a RetryError");
        assert_eq!(e.reason(), StopReason::Attempts);
        assert_eq!(requests.load(Ordering::SeqCst), 3);
    }
}
