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
/// The whole request must arrive within this.
pub const READ_DEADLINE: Duration = Duration::from_secs(10);

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
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        if !head_only {
            out.write_all(&self.body)?;
        }
        out.flush()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// Reads one request from `stream` within [`READ_DEADLINE`], [`MAX_HEAD`] and [`MAX_BODY`].
/// A request that breaks a bound or the grammar is the error response to send.
pub fn read_request(stream: &mut TcpStream) -> Result<Request, Response> {
    let started = Instant::now();
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(i) = find(&head, b"\r\n\r\n") {
            break i;
        }
        if head.len() > MAX_HEAD {
            return Err(Response::error(
                431,
                &format!("the request line and headers are larger than {MAX_HEAD} bytes"),
            ));
        }
        let left = READ_DEADLINE.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(Response::error(408, "the request did not arrive in time"));
        }
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
        let wait = READ_DEADLINE.saturating_sub(started.elapsed());
        if wait.is_zero() {
            return Err(Response::error(
                408,
                "the request body did not arrive in time",
            ));
        }
        let _ = stream.set_read_timeout(Some(wait));
        match stream.read(&mut buf[..left.min(4096)]) {
            Ok(0) | Err(_) => return Err(Response::error(400, "the request body ended early")),
            Ok(n) => left -= n,
        }
    }
    Ok(request)
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
    let mut host = None;
    let mut body_length = 0usize;
    for header in lines {
        let (name, value) = header.split_once(':').ok_or_else(|| {
            Response::error(400, "a malformed header line (expected Name: value)")
        })?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("host") {
            host = Some(value.to_string());
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
