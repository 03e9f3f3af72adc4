//! An async HTTP client with retries: reqwest, and jitterlab-retry's `reqwest` feature.
//!
//! `fetch` is all the retry code a reqwest user writes: no error type, no trait to implement.
//! The retrier sends at most 5 attempts of 2 s each within 10 s, sleeps with full jitter
//! between them, honours `Retry-After` (seconds or an HTTP-date), retries 429, 502, 503, 504,
//! timeouts and connection errors but not 404, and shares a retry budget across calls.
//!
//! ```sh
//! cargo run -p jitterlab-retry --features reqwest --example reqwest_client -- http://127.0.0.1:8080/
//! ```
//!
//! Its tests (`cargo test -p jitterlab-retry --features reqwest --example reqwest_client`) run
//! `fetch` against a scripted server on 127.0.0.1, in paused tokio time: every sleep and
//! timeout is checked to the millisecond without waiting for it.

use std::error::Error;
use std::time::Duration;

use jitterlab_retry::http::reqwest::send_text;
use jitterlab_retry::prelude::*;

/// The retrier every call shares (its budget spans calls).
fn retrier() -> Result<AsyncRetrier, jitterlab_retry::Error> {
    Retrier::builder()
        .max_attempts(5)
        .timeout(Duration::from_secs(2))
        .deadline(Duration::from_secs(10))
        .build_async()
}

/// GETs `url`'s body (read within each attempt) with retries, until `cancel` completes;
/// every attempt is logged.
async fn fetch(
    retrier: &AsyncRetrier,
    client: &reqwest::Client,
    url: &str,
    cancel: impl Future<Output = ()> + Send,
) -> Result<String, Box<dyn Error + Send + Sync>> {
    let body = retrier
        .call(|_| send_text(client.get(url)))
        .cancel_on(cancel)
        .on_attempt(|event| eprintln!("{url}: {event}"))
        .await?;
    Ok(body)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error + Send + Sync>> {
    let url = std::env::args().nth(1).ok_or("usage: reqwest_client URL")?;
    // Ctrl-C cancels the call (it never fires if the signal cannot be listened to).
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let body = fetch(&retrier()?, &reqwest::Client::new(), &url, ctrl_c).await?;
    println!("{body}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::SystemTime;

    use jitterlab_retry::http::Error as HttpError;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio::time::{Instant, sleep};

    use super::*;

    /// One scripted answer.
    #[derive(Clone)]
    struct Reply {
        /// How long the server takes to answer (tokio time).
        delay: Duration,
        status: u16,
        retry_after: Option<String>,
        /// Sends the head and half the body, then nothing for an hour.
        stall: bool,
    }

    fn status(status: u16, retry_after: Option<&str>) -> Reply {
        Reply {
            delay: Duration::ZERO,
            status,
            retry_after: retry_after.map(str::to_owned),
            stall: false,
        }
    }

    fn stalled() -> Reply {
        Reply {
            stall: true,
            ..status(200, None)
        }
    }

    fn slow(delay: Duration) -> Reply {
        Reply {
            delay,
            ..status(200, None)
        }
    }

    /// A server on 127.0.0.1 that answers the requests in turn from `script`, then 200
    /// `hello`; returns its URL and the count of requests it got.
    async fn serve(script: Vec<Reply>) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let url = format!("http://{}/", listener.local_addr().expect("bound"));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let script = Arc::clone(&script);
                let counted = Arc::clone(&counted);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    counted.fetch_add(1, Ordering::SeqCst);
                    let reply = script.lock().unwrap().pop_front();
                    let reply = reply.unwrap_or_else(|| status(200, None));
                    sleep(reply.delay).await;
                    let body = if reply.status < 400 { "hello" } else { "" };
                    let retry_after = reply
                        .retry_after
                        .map(|v| format!("Retry-After: {v}\r\n"))
                        .unwrap_or_default();
                    let answer = format!(
                        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n{retry_after}\r\n{body}",
                        reply.status,
                        body.len()
                    );
                    if reply.stall {
                        let half = answer.len() - body.len() / 2;
                        let _ = stream.write_all(&answer.as_bytes()[..half]).await;
                        sleep(Duration::from_secs(3_600)).await;
                    }
                    // A client that gave up has closed the socket: nothing to report.
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
        (url, requests)
    }

    /// `fetch` of `url`, never cancelled, and the tokio time it took.
    async fn timed_fetch(url: &str) -> (Result<String, Box<dyn Error + Send + Sync>>, Duration) {
        let retrier = retrier().expect("valid settings");
        let began = Instant::now();
        let answer = fetch(
            &retrier,
            &reqwest::Client::new(),
            url,
            std::future::pending(),
        )
        .await;
        (answer, began.elapsed())
    }

    /// How the call gave up.
    fn retry_error<'a>(e: &'a (dyn Error + Send + Sync + 'static)) -> &'a RetryError<HttpError> {
        e.downcast_ref().expect("a RetryError")
    }

    fn near(took: Duration, expected: Duration) -> bool {
        took >= expected && took <= expected + Duration::from_millis(2)
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_seconds_is_honoured() {
        let (url, requests) = serve(vec![status(429, Some("3"))]).await;
        let (answer, took) = timed_fetch(&url).await;
        assert_eq!(answer.unwrap(), "hello");
        assert_eq!(requests.load(Ordering::SeqCst), 2);
        assert!(near(took, Duration::from_secs(3)), "{took:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_an_http_date_is_honoured() {
        // Four seconds ahead, to the second: the retrier waits between 3 and 4 s.
        let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(4));
        let (url, _) = serve(vec![status(503, Some(&date))]).await;
        let (answer, took) = timed_fetch(&url).await;
        assert_eq!(answer.unwrap(), "hello");
        assert!(
            took > Duration::from_secs(3) && took <= Duration::from_secs(4),
            "{took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_503_is_retried_with_backoff() {
        let (url, requests) = serve(vec![status(503, None), status(503, None)]).await;
        let (answer, took) = timed_fetch(&url).await;
        assert_eq!(answer.unwrap(), "hello");
        assert_eq!(requests.load(Ordering::SeqCst), 3);
        // Full jitter: at most 100 ms, then at most 200 ms.
        assert!(took <= Duration::from_millis(300), "{took:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_is_cut_off_and_retried() {
        let (url, requests) = serve(vec![slow(Duration::from_secs(30))]).await;
        let (answer, took) = timed_fetch(&url).await;
        assert_eq!(answer.unwrap(), "hello");
        assert_eq!(requests.load(Ordering::SeqCst), 2);
        // The 2 s attempt timeout, then at most 100 ms of backoff.
        assert!(
            took >= Duration::from_secs(2) && took <= Duration::from_millis(2_101),
            "{took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_that_stalls_half_way_is_cut_off_and_retried() {
        // The head and half the body at once, then an hour of nothing: the body is read within
        // the attempt, so its 2 s limit cuts it off, and the retry gets the whole answer.
        let (url, requests) = serve(vec![stalled()]).await;
        let (answer, took) = timed_fetch(&url).await;
        assert!(took <= Duration::from_millis(2_101), "{took:?}");
        assert_eq!(answer.unwrap(), "hello");
        assert_eq!(requests.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_404_is_not_retried() {
        let (url, requests) = serve(vec![status(404, Some("1"))]).await;
        let (answer, took) = timed_fetch(&url).await;
        let e = answer.unwrap_err();
        let e = retry_error(&*e);
        assert_eq!(e.reason(), StopReason::NotRetryable);
        assert_eq!(
            e.last_error()
                .and_then(HttpError::status)
                .map(|s| s.as_u16()),
            Some(404)
        );
        assert_eq!(requests.load(Ordering::SeqCst), 1);
        assert_eq!(took, Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_is_never_passed() {
        // Every answer takes 30 s: 2 s attempts until the 10 s deadline, the last one cut
        // short to what is left, never a sleep that would end past it.
        let (url, requests) = serve(vec![slow(Duration::from_secs(30)); 10]).await;
        let (answer, took) = timed_fetch(&url).await;
        let e = answer.unwrap_err();
        let e = retry_error(&*e);
        assert!(
            matches!(
                e.reason(),
                StopReason::Deadline | StopReason::SleepPastDeadline | StopReason::Attempts
            ),
            "{e}"
        );
        assert!(took <= Duration::from_secs(10), "{took:?}");
        assert!(
            requests.load(Ordering::SeqCst) >= 4,
            "{}",
            requests.load(Ordering::SeqCst)
        );
        // 503s with Retry-After 3: 0, 3, 6, 9 s; the next sleep would end at 12 s.
        let (url, requests) = serve(vec![status(503, Some("3")); 10]).await;
        let (answer, took) = timed_fetch(&url).await;
        let e = answer.unwrap_err();
        assert_eq!(retry_error(&*e).reason(), StopReason::SleepPastDeadline);
        assert_eq!(requests.load(Ordering::SeqCst), 4);
        assert!(near(took, Duration::from_secs(9)), "{took:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn any_future_cancels_a_call() {
        // Told to come back in 5 s; a oneshot fired after 1 s ends the wait at once.
        let (url, requests) = serve(vec![status(503, Some("5"))]).await;
        let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            sleep(Duration::from_secs(1)).await;
            let _ = cancel.send(());
        });
        let retrier = retrier().expect("valid settings");
        let began = Instant::now();
        let answer = fetch(&retrier, &reqwest::Client::new(), &url, async {
            let _ = cancelled.await;
        })
        .await;
        let e = answer.unwrap_err();
        assert_eq!(retry_error(&*e).reason(), StopReason::Cancelled);
        assert_eq!(requests.load(Ordering::SeqCst), 1);
        assert!(
            near(began.elapsed(), Duration::from_secs(1)),
            "{:?}",
            began.elapsed()
        );
    }
}
