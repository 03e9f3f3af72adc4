//! A blocking HTTP client with retries: ureq, and jitterlab-retry's `ureq` feature.
//!
//! `fetch` is all the retry code a ureq user writes: each attempt's time limit goes to the
//! request (a blocking call cannot be cut off from outside), the answer's `Retry-After` to the
//! retrier; 429, 502, 503, 504, timeouts and connection errors are retried, 404 is not.
//!
//! ```sh
//! cargo run -p jitterlab-retry --features ureq --example ureq_client -- http://127.0.0.1:8080/
//! ```
//!
//! Its tests (`cargo test -p jitterlab-retry --features ureq --example ureq_client`) run
//! `fetch` against a scripted server on 127.0.0.1, in real time (about 3 s).

use std::error::Error;
use std::time::Duration;

use jitterlab_retry::http::ureq::call_text;
use jitterlab_retry::prelude::*;

/// The retrier every call shares (its budget spans calls).
fn retrier() -> Result<Retrier, jitterlab_retry::Error> {
    Retrier::builder()
        .max_attempts(5)
        .timeout(Duration::from_secs(2))
        .deadline(Duration::from_secs(10))
        .build()
}

/// GETs `url`'s body (read within each attempt) with retries, logging every attempt.
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
    let url = std::env::args().nth(1).ok_or("usage: ureq_client URL")?;
    println!(
        "{}",
        fetch(&retrier()?, &ureq::Agent::new_with_defaults(), &url)?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use jitterlab_retry::http::Error as HttpError;

    use super::*;

    /// A stall: the head and half the body of a 200, then nothing for 30 s.
    const STALL: u16 = 0;

    /// A server on 127.0.0.1 answering the requests in turn with `script`'s status and
    /// `Retry-After` (or a [`STALL`]), then 200 `hello`; its URL and the count of requests it
    /// got. Each connection has its own thread, so a stalled one holds up no other.
    fn serve(script: Vec<(u16, Option<&'static str>)>) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let url = format!("http://{}/", listener.local_addr().expect("bound"));
        let script = Arc::new(Mutex::new(script.into_iter()));
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let (status, retry_after) = script.lock().unwrap().next().unwrap_or((200, None));
                std::thread::spawn(move || answer(stream, status, retry_after));
            }
        });
        (url, requests)
    }

    fn answer(mut stream: TcpStream, status: u16, retry_after: Option<&str>) {
        let stall = status == STALL;
        let status = if stall { 200 } else { status };
        let body = if status < 400 { "hello" } else { "" };
        let retry_after = retry_after
            .map(|v| format!("Retry-After: {v}\r\n"))
            .unwrap_or_default();
        let answer = format!(
            "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n{retry_after}\r\n{body}",
            body.len()
        );
        if stall {
            let half = answer.len() - body.len() / 2;
            let _ = stream.write_all(&answer.as_bytes()[..half]);
            std::thread::sleep(Duration::from_secs(30));
        }
        // A client that gave up has closed the socket: nothing to report.
        let _ = stream.write_all(answer.as_bytes());
    }

    fn get(url: &str) -> Result<String, Box<dyn Error + Send + Sync>> {
        fetch(
            &retrier().expect("valid settings"),
            &ureq::Agent::new_with_defaults(),
            url,
        )
    }

    #[test]
    fn retry_after_and_503_are_retried() {
        let (url, requests) = serve(vec![(429, Some("1")), (503, None)]);
        let began = Instant::now();
        assert_eq!(get(&url).unwrap(), "hello");
        let took = began.elapsed();
        assert_eq!(requests.load(Ordering::SeqCst), 3);
        // The 1 s the server asked for, then at most 200 ms of backoff.
        assert!(
            took >= Duration::from_secs(1) && took < Duration::from_millis(1_700),
            "{took:?}"
        );
    }

    #[test]
    fn an_answer_that_stalls_half_way_is_cut_off_and_retried() {
        // The body is read within the attempt, whose 2 s limit goes to ureq: the stalled
        // answer times out, and the retry gets the whole answer.
        let (url, requests) = serve(vec![(STALL, None)]);
        let began = Instant::now();
        assert_eq!(get(&url).unwrap(), "hello");
        let took = began.elapsed();
        assert_eq!(requests.load(Ordering::SeqCst), 2);
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn a_404_is_not_retried() {
        let (url, requests) = serve(vec![(404, None)]);
        let e = get(&url).unwrap_err();
        let e: &RetryError<HttpError> = e.downcast_ref().expect("a RetryError");
        assert_eq!(e.reason(), StopReason::NotRetryable);
        assert_eq!(e.to_string(), "not retryable after 1 attempt");
        assert_eq!(requests.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_refused_connection_is_retried_until_the_attempts_run_out() {
        // A port nobody listens on any more.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = get(&format!("http://127.0.0.1:{port}/")).unwrap_err();
        let e: &RetryError<HttpError> = e.downcast_ref().expect("a RetryError");
        assert_eq!(e.reason(), StopReason::Attempts);
        assert!(
            matches!(e.last_error(), Some(HttpError::Connection(_))),
            "{e:?}"
        );
    }
}
