//! The little HTTP/1.1 the playground needs, on `std::net`: one request per connection
//! (`Connection: close`), read with a deadline and within fixed bounds, so that no client can
//! hold a thread or memory for long; a malformed request gets a 4xx, never a panic.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The request line and headers together, at most.
pub const MAX_HEAD: usize = 16 * 1024;
/// A request's body, at most (the playground's requests have none; a body is read and
/// dropped up to this size, refused above).
pub const MAX_BODY: usize = 64 * 1024;
/// What the page may load: its own files and the charts it makes into blobs (which a test
/// reads back); it may not be framed by another page.
const CSP: &str =
    "default-src 'self'; img-src 'self' blob:; connect-src 'self' blob:; frame-ancestors 'none'";

/// A connection's time with its client: reading the request, writing the answer and
/// draining what follows all fit in it (the server's own work is not counted).
pub const CLIENT_TIME: Duration = Duration::from_secs(15);
/// After the answer, what the client still sends is read and dropped up to this many bytes
/// and for at most [`DRAIN_TIME`] (closing with unread bytes would reset the connection
/// before the client has read the answer).
pub const DRAIN_BYTES: usize = 64 * 1024;
/// See [`DRAIN_BYTES`].
pub const DRAIN_TIME: Duration = Duration::from_secs(2);

/// The one deadline of a connection's reads and writes: each waits at most the time left,
/// and none starts once it has passed.
#[derive(Debug, Clone, Copy)]
pub struct Deadline(Instant);

impl Deadline {
    /// A deadline `time` from now.
    pub fn after(time: Duration) -> Deadline {
        Deadline(Instant::now() + time)
    }

    /// The time left; `None` once the deadline has passed.
    pub fn left(&self) -> Option<Duration> {
        Some(self.0.saturating_duration_since(Instant::now())).filter(|d| !d.is_zero())
    }

    /// The same time left, counted again from now (after the server's own work).
    pub fn resumed(left: Duration) -> Deadline {
        Deadline::after(left)
    }
}

fn timed_out() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "the connection's deadline passed",
    )
}

/// A request the server answers: its method, path and query (still percent-encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET` or `HEAD`.
    pub method: String,
    /// The path, `/api/run`.
    pub path: String,
    /// What follows `?`, as sent.
    pub query: String,
    /// The `Host` header, when sent.
    pub host: Option<String>,
    /// The `Sec-Fetch-Site` header a browser sends (`same-origin`, `cross-site`...).
    pub fetch_site: Option<String>,
    /// The `X-Jitterlab-Run` header of the page's run requests: `PAGE.SEQUENCE`, its order.
    pub order: Option<String>,
}

/// A response: its status, content type, extra headers and body.
#[derive(Debug, Clone)]
pub struct Response {
    /// `200`, `400`...
    pub status: u16,
    /// `text/html; charset=utf-8`...
    pub content_type: &'static str,
    /// More headers, `(name, value)`.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A response with a body of `content_type`.
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// A plain-text error: what is wrong, in a sentence.
    pub fn error(status: u16, message: &str) -> Response {
        Response::new(status, "text/plain; charset=utf-8", format!("{message}\n"))
    }

    /// Writes the response (without its body for `HEAD`).
    pub fn write_to(&self, out: &mut impl Write, head_only: bool) -> std::io::Result<()> {
        out.write_all(&self.bytes(head_only))?;
        out.flush()
    }

    /// Sends the response on `stream` before `deadline`, each write waiting at most the time
    /// left (a client that reads slowly cannot stretch it).
    pub fn send(
        &self,
        stream: &mut TcpStream,
        head_only: bool,
        deadline: Deadline,
    ) -> std::io::Result<()> {
        let bytes = self.bytes(head_only);
        let mut sent = 0;
        while sent < bytes.len() {
            stream.set_write_timeout(Some(deadline.left().ok_or_else(timed_out)?))?;
            match stream.write(&bytes[sent..]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The status line, headers and (unless `head_only`) the body.
    fn bytes(&self, head_only: bool) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nContent-Security-Policy: {CSP}\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        if !head_only {
            bytes.extend_from_slice(&self.body);
        }
        bytes
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        421 => "Misdirected Request",
        500 => "Internal Server Error",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// Reads one request from `stream` before `deadline`, within [`MAX_HEAD`] and [`MAX_BODY`].
/// A request that breaks a bound or the grammar is the error response to send.
pub fn read_request(stream: &mut TcpStream, deadline: Deadline) -> Result<Request, Response> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 4096];
    // Where the search for the blank line goes on: each read's bytes are searched once (with
    // the 3 before them, where the blank line may have started).
    let mut searched = 0;
    let end = loop {
        if let Some(i) = find(&head[searched..], b"\r\n\r\n") {
            break searched + i;
        }
        searched = head.len().saturating_sub(3);
        if head.len() > MAX_HEAD {
            return Err(Response::error(
                431,
                &format!("the request line and headers are larger than {MAX_HEAD} bytes"),
            ));
        }
        let Some(left) = deadline.left() else {
            return Err(Response::error(408, "the request did not arrive in time"));
        };
        let _ = stream.set_read_timeout(Some(left));
        match stream.read(&mut buf) {
            Ok(0) => return Err(Response::error(400, "the request ended before its headers")),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e) if is_timeout(&e) => {
                return Err(Response::error(408, "the request did not arrive in time"));
            }
            Err(_) => return Err(Response::error(400, "the request could not be read")),
        }
    };
    if end > MAX_HEAD {
        return Err(Response::error(
            431,
            &format!("the request line and headers are larger than {MAX_HEAD} bytes"),
        ));
    }
    let (request, body_length) = parse_head(&head[..end])?;
    if body_length > MAX_BODY {
        return Err(Response::error(
            413,
            &format!("a request body of {body_length} bytes; at most {MAX_BODY}"),
        ));
    }
    // A body is read and dropped, so that the answer is not lost to a reset.
    let mut left = body_length.saturating_sub(head.len() - end - 4);
    while left > 0 {
        let Some(wait) = deadline.left() else {
            return Err(Response::error(
                408,
                "the request body did not arrive in time",
            ));
        };
        let _ = stream.set_read_timeout(Some(wait));
        match stream.read(&mut buf[..left.min(4096)]) {
            Ok(0) | Err(_) => return Err(Response::error(400, "the request body ended early")),
            Ok(n) => left -= n,
        }
    }
    Ok(request)
}

/// Reads and drops what the client still sends, within [`DRAIN_BYTES`], [`DRAIN_TIME`] and
/// `deadline`.
pub fn drain(stream: &mut TcpStream, deadline: Deadline) {
    let deadline = match deadline.left() {
        Some(left) => Deadline::after(left.min(DRAIN_TIME)),
        None => return,
    };
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    while drained < DRAIN_BYTES {
        let Some(left) = deadline.left() else { return };
        let _ = stream.set_read_timeout(Some(left));
        match stream.read(&mut sink[..(DRAIN_BYTES - drained).min(4096)]) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The request line and headers: the request and its body's length.
pub fn parse_head(head: &[u8]) -> Result<(Request, usize), Response> {
    let text = std::str::from_utf8(head)
        .map_err(|_| Response::error(400, "the request line and headers are not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Response::error(
            400,
            "a malformed request line (expected METHOD TARGET HTTP/1.1)",
        ));
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(Response::error(
            505,
            "only HTTP/1.0 and HTTP/1.1 are spoken",
        ));
    }
    if !target.starts_with('/') {
        return Err(Response::error(400, "the request target must start with /"));
    }
    let (mut host, mut fetch_site, mut order) = (None, None, None);
    let mut body_length = 0usize;
    for header in lines {
        let (name, value) = header.split_once(':').ok_or_else(|| {
            Response::error(400, "a malformed header line (expected Name: value)")
        })?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("host") {
            host = Some(value.to_string());
        } else if name.eq_ignore_ascii_case("sec-fetch-site") {
            fetch_site = Some(value.to_ascii_lowercase());
        } else if name.eq_ignore_ascii_case("x-jitterlab-run") {
            order = Some(value.to_string());
        } else if name.eq_ignore_ascii_case("content-length") {
            body_length = value
                .parse()
                .map_err(|_| Response::error(400, "Content-Length is not a whole number"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(Response::error(
                400,
                "a chunked body is not taken; the playground's requests have none",
            ));
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let request = Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        host,
        fetch_site,
        order,
    };
    Ok((request, body_length))
}

/// A query string's pairs, percent-decoded (`+` is a space). `None` when an escape is
/// malformed or a decoded part is not UTF-8.
pub fn query_pairs(query: &str) -> Option<Vec<(String, String)>> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            Some((decode(k)?, decode(v)?))
        })
        .collect()
}

/// Percent-decodes `text` (`+` is a space).
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes `text` for a query string (everything but unreserved characters).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_line_and_headers_are_read() {
        let (r, body) = parse_head(
            b"GET /api/run?backoff.cap=5s HTTP/1.1\r\nHost: 127.0.0.1:8\r\nContent-Length: 3",
        )
        .unwrap();
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/api/run");
        assert_eq!(r.query, "backoff.cap=5s");
        assert_eq!(r.host.as_deref(), Some("127.0.0.1:8"));
        assert_eq!(body, 3);
    }

    #[test]
    fn every_answer_carries_the_content_security_policy() {
        let mut out = Vec::new();
        Response::error(404, "no")
            .write_to(&mut out, false)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\r\nContent-Security-Policy: default-src 'self'; img-src 'self' blob:; connect-src 'self' blob:; frame-ancestors 'none'\r\n"),
            "{text}"
        );
    }

    #[test]
    fn malformed_heads_are_4xx() {
        for (head, status) in [
            (&b"GET\r\n"[..], 400),
            (b"GET / HTTP/1.1 extra", 400),
            (b"GET / SPDY/3", 505),
            (b"GET nopath HTTP/1.1", 400),
            (b"GET / HTTP/1.1\r\nno colon here", 400),
            (b"GET / HTTP/1.1\r\nContent-Length: -1", 400),
            (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked", 400),
            (b"GET \xff HTTP/1.1", 400),
        ] {
            let got = parse_head(head).map(|_| ()).unwrap_err().status;
            assert_eq!(got, status, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn queries_decode_and_encode_back() {
        let pairs = query_pairs("backoff.cap=5s&backoff.strategies=full%2Cequal&x=a+b").unwrap();
        assert_eq!(
            pairs,
            [
                ("backoff.cap".into(), "5s".into()),
                ("backoff.strategies".into(), "full,equal".into()),
                ("x".into(), "a b".into())
            ]
        );
        assert_eq!(encode("full,equal"), "full%2Cequal");
        assert_eq!(query_pairs("a=%zz"), None);
        assert_eq!(query_pairs("a=%ff"), None);
        assert_eq!(query_pairs("a=%4"), None);
    }
}
