//! A local HTTP server for `examples/http_retry.rs`: plain HTTP/1.1 on 127.0.0.1, one thread
//! per connection, answers from a fixed script. Its tests and its `main` start one each.
//!
//! | path | answers |
//! | --- | --- |
//! | `/flaky` | 429 with `Retry-After: 1`, 429 with an HTTP-date 2 s ahead, 503, then 200 `hello` |
//! | `/missing` | 404, always |
//! | `/slow` | 200 after 5 s |
//! | `/garbled` | 200 whose body is not UTF-8 |

use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, SystemTime};

/// Starts the server on a free port; returns its base URL (`http://127.0.0.1:PORT`). It
/// serves until the process ends.
pub fn start() -> io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let base = format!("http://{}", listener.local_addr()?);
    let flaky = Arc::new(AtomicU32::new(0));
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let flaky = Arc::clone(&flaky);
            thread::spawn(move || {
                // A client that gave up (a timeout) closes the socket: nothing to report.
                let _ = serve(stream, &flaky);
            });
        }
    });
    Ok(base)
}

/// Reads one request and answers it.
fn serve(mut stream: TcpStream, flaky: &AtomicU32) -> io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Skip the headers, up to the empty line.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let (status, header, body): (&str, String, &[u8]) = match path {
        "/flaky" => match flaky.fetch_add(1, Ordering::SeqCst) {
            0 => ("429 Too Many Requests", "Retry-After: 1\r\n".into(), b""),
            1 => {
                let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(2));
                (
                    "429 Too Many Requests",
                    format!("Retry-After: {date}\r\n"),
                    b"",
                )
            }
            2 => ("503 Service Unavailable", String::new(), b""),
            _ => ("200 OK", String::new(), b"hello"),
        },
        "/slow" => {
            thread::sleep(Duration::from_secs(5));
            ("200 OK", String::new(), b"finally")
        }
        "/garbled" => ("200 OK", String::new(), &[0xff, 0xfe, 0xfd]),
        _ => ("404 Not Found", String::new(), b""),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\n{header}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()
}
