//! Response framing for HTTP/1.x (RFC 9112 §6.3), incremental and sans-IO.
//!
//! The head is parsed with `httparse` straight from the caller's slice when it
//! arrives whole; only a head split across reads is copied into a buffer,
//! bounded by `max_header_bytes`. Bodies are counted, never stored.

use super::chunked::{ChunkError, ChunkedDecoder};

/// Most header fields looked at in one response head.
const MAX_HEADERS: usize = 64;

/// Most bytes of a captured header value kept (see `set_header_capture`).
pub const MAX_CAPTURED_HEADER: usize = 256;

/// Most bytes of `Set-Cookie` values kept per response (see `set_cookie_capture`).
pub const MAX_CAPTURED_COOKIES: usize = 8 * 1024;

/// Why a response cannot be framed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The status line or a header field is malformed.
    #[error("malformed response head: {0}")]
    Head(&'static str),
    /// The head is larger than allowed.
    #[error("response head larger than {0} bytes")]
    HeadTooLarge(usize),
    /// `Content-Length` is missing a value, repeated with different values, or not a number.
    #[error("invalid Content-Length")]
    BadContentLength,
    /// The body is larger than allowed.
    #[error("response body larger than {0} bytes")]
    BodyTooLarge(u64),
    /// The chunked body is malformed.
    #[error("chunked body: {0}")]
    Chunked(#[from] ChunkError),
    /// The peer closed the connection before the response ended.
    #[error("connection closed before the response ended")]
    Truncated,
}

/// One complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Bytes of the status line and headers, including the blank line.
    pub head_bytes: u64,
    /// Body bytes after transfer decoding.
    pub body_bytes: u64,
    /// Whether the connection may carry another request afterwards.
    pub keep_alive: bool,
}

#[derive(Debug, Clone)]
enum Body {
    Length(u64),
    Chunked(ChunkedDecoder),
    UntilClose,
}

#[derive(Debug, Clone)]
enum State {
    Head,
    Body { body: Body, status: u16, head_bytes: u64, body_bytes: u64, keep_alive: bool },
}

/// Frames a stream of responses; one per connection, reused across requests.
#[derive(Debug, Clone)]
pub struct ResponseDecoder {
    state: State,
    head: Vec<u8>,
    /// The first body bytes of the current response, up to `capture_limit`.
    captured: Vec<u8>,
    capture_limit: usize,
    /// Which header to keep the value of: (name, value prefix).
    header_capture: Option<(&'static [u8], &'static [u8])>,
    /// That header's value in the last complete head, when it had one.
    header_value: Vec<u8>,
    header_found: bool,
    /// Every `Set-Cookie` value of the last complete head, one per line, when asked for.
    cookies: Option<Vec<u8>>,
    max_header_bytes: usize,
    max_body_bytes: u64,
    head_request: bool,
}

impl ResponseDecoder {
    /// A decoder with the given limits. `head_request` says responses answer
    /// HEAD requests and so carry no body whatever their headers say.
    pub fn new(max_header_bytes: usize, max_body_bytes: u64, head_request: bool) -> Self {
        Self {
            state: State::Head,
            head: Vec::new(),
            captured: Vec::new(),
            capture_limit: 0,
            header_capture: None,
            header_value: Vec::new(),
            header_found: false,
            cookies: None,
            max_header_bytes,
            max_body_bytes,
            head_request,
        }
    }

    /// Keeps the first `limit` body bytes of each following response (see
    /// `captured`). The buffer is allocated here, once, not per response.
    pub fn set_capture(&mut self, limit: usize) {
        self.capture_limit = limit;
        self.captured.reserve(limit.saturating_sub(self.captured.capacity()));
    }

    /// The first body bytes of the last complete response (up to the capture limit).
    pub fn captured(&self) -> &[u8] {
        &self.captured
    }

    /// Keeps the value of the first header field named `name` (any case)
    /// whose value starts with `value_prefix`, up to `MAX_CAPTURED_HEADER`
    /// bytes, in each following response head (see `captured_header`); e.g.
    /// SPECweb99's `Set-Cookie: found_cookie=...` among other cookies. The
    /// buffer is allocated here, once.
    pub fn set_header_capture(&mut self, name: &'static str, value_prefix: &'static str) {
        self.header_capture = Some((name.as_bytes(), value_prefix.as_bytes()));
        self.header_value.reserve(MAX_CAPTURED_HEADER);
    }

    /// The captured header's value in the last complete response head, if it had one.
    pub fn captured_header(&self) -> Option<&[u8]> {
        self.header_found.then_some(&self.header_value[..])
    }

    /// Keeps every `Set-Cookie` value of each following response head, one
    /// per line, up to `MAX_CAPTURED_COOKIES` bytes (a value that does not
    /// fit whole is left out); see `captured_cookies`. Allocated here, once.
    pub fn set_cookie_capture(&mut self) {
        self.cookies = Some(Vec::with_capacity(MAX_CAPTURED_COOKIES));
    }

    /// The `Set-Cookie` values of the last complete response head, one per line.
    pub fn captured_cookies(&self) -> &[u8] {
        self.cookies.as_deref().unwrap_or_default()
    }

    /// Says whether the next responses answer HEAD requests (no body).
    pub fn set_head_request(&mut self, head_request: bool) {
        self.head_request = head_request;
    }

    /// Forgets any partial response (after an error or a new connection).
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.head.clear();
    }

    /// True when no byte of the next response has been seen.
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Head) && self.head.is_empty()
    }

    /// Feeds `input`; returns the bytes consumed and, when a response ended
    /// within them, that response. Bytes after it are not consumed: feed them
    /// again for the next (pipelined) response.
    pub fn decode(&mut self, input: &[u8]) -> Result<(usize, Option<Response>), DecodeError> {
        self.decode_with(input, &mut |_| {})
    }

    /// Like `decode`, handing every run of body bytes (after transfer
    /// decoding) to `on_body` as it is framed, so a caller can judge a body
    /// it never stores.
    pub fn decode_with(
        &mut self,
        input: &[u8],
        on_body: &mut impl FnMut(&[u8]),
    ) -> Result<(usize, Option<Response>), DecodeError> {
        let mut consumed = 0;
        loop {
            match &mut self.state {
                State::Head => {
                    let Some(used) = self.decode_head(&input[consumed..])? else {
                        return Ok((input.len(), None));
                    };
                    consumed += used;
                }
                State::Body { .. } => {
                    let (used, done) = self.decode_body(&input[consumed..], on_body)?;
                    consumed += used;
                    return Ok((consumed, done));
                }
            }
            if consumed == input.len() {
                // A response without a body ends with its head.
                if let State::Body { body: Body::Length(0), .. } = self.state {
                    return Ok((consumed, self.finish()));
                }
                return Ok((consumed, None));
            }
        }
    }

    /// The peer closed the connection: completes a close-delimited body,
    /// or reports a truncated response. `Ok(None)` when nothing was pending.
    pub fn decode_eof(&mut self) -> Result<Option<Response>, DecodeError> {
        match &self.state {
            State::Head if self.head.is_empty() => Ok(None),
            State::Body { body: Body::UntilClose, .. } => Ok(self.finish()),
            _ => Err(DecodeError::Truncated),
        }
    }

    /// Parses a head from `input` (plus any buffered prefix). Returns the
    /// input bytes consumed once a head is complete, None when more is needed.
    fn decode_head(&mut self, input: &[u8]) -> Result<Option<usize>, DecodeError> {
        let buffered = self.head.len();
        let parsed = if buffered == 0 {
            let captures =
                Captures { header: self.header_capture, value: &mut self.header_value, cookies: self.cookies.as_mut() };
            parse_head(input, self.head_request, self.max_body_bytes, captures)?
        } else {
            let room = self.max_header_bytes.saturating_sub(buffered);
            self.head.extend_from_slice(&input[..input.len().min(room + 1)]);
            let captures =
                Captures { header: self.header_capture, value: &mut self.header_value, cookies: self.cookies.as_mut() };
            parse_head(&self.head, self.head_request, self.max_body_bytes, captures)?
        };
        match parsed {
            Some(head) if head.head_bytes > self.max_header_bytes => {
                Err(DecodeError::HeadTooLarge(self.max_header_bytes))
            }
            Some(head) if (100..200).contains(&head.status) && head.status != 101 => {
                // Interim responses (100 Continue, 103 Early Hints) precede the real one.
                self.head.clear();
                Ok(Some(head.head_bytes - buffered))
            }
            Some(head) => {
                self.head.clear();
                self.captured.clear();
                self.header_found = head.captured_header;
                self.state = State::Body {
                    body: head.body,
                    status: head.status,
                    head_bytes: head.head_bytes as u64,
                    body_bytes: 0,
                    keep_alive: head.keep_alive,
                };
                Ok(Some(head.head_bytes - buffered))
            }
            None => {
                if buffered == 0 {
                    if input.len() > self.max_header_bytes {
                        return Err(DecodeError::HeadTooLarge(self.max_header_bytes));
                    }
                    self.head.extend_from_slice(input);
                } else if self.head.len() > self.max_header_bytes {
                    return Err(DecodeError::HeadTooLarge(self.max_header_bytes));
                }
                Ok(None)
            }
        }
    }

    fn decode_body(
        &mut self,
        input: &[u8],
        on_body: &mut impl FnMut(&[u8]),
    ) -> Result<(usize, Option<Response>), DecodeError> {
        let max_body = self.max_body_bytes;
        let State::Body { body, body_bytes, .. } = &mut self.state else {
            unreachable!("decode_body is called in the body state")
        };
        let (limit, captured) = (self.capture_limit, &mut self.captured);
        let mut capture = |data: &[u8]| {
            let room = limit.saturating_sub(captured.len());
            captured.extend_from_slice(&data[..data.len().min(room)]);
            on_body(data);
        };
        let (used, done) = match body {
            Body::Length(remaining) => {
                let take = (*remaining).min(input.len() as u64);
                capture(&input[..take as usize]);
                *remaining -= take;
                *body_bytes += take;
                (take as usize, *remaining == 0)
            }
            Body::Chunked(chunks) => {
                let progress = chunks.feed_with(input, &mut capture)?;
                *body_bytes += progress.data_bytes;
                (progress.consumed, progress.done)
            }
            Body::UntilClose => {
                capture(input);
                *body_bytes += input.len() as u64;
                (input.len(), false)
            }
        };
        if *body_bytes > max_body {
            return Err(DecodeError::BodyTooLarge(max_body));
        }
        Ok((used, if done { self.finish() } else { None }))
    }

    fn finish(&mut self) -> Option<Response> {
        let State::Body { status, head_bytes, body_bytes, keep_alive, .. } = self.state else {
            return None;
        };
        self.state = State::Head;
        Some(Response { status, head_bytes, body_bytes, keep_alive })
    }
}

struct Head {
    /// The header `parse_head` was asked to capture was there.
    captured_header: bool,
    status: u16,
    head_bytes: usize,
    keep_alive: bool,
    body: Body,
}

/// What `parse_head` keeps of a complete head: one header's value (name,
/// value prefix) and, when asked, every `Set-Cookie` value.
struct Captures<'a> {
    header: Option<(&'static [u8], &'static [u8])>,
    value: &'a mut Vec<u8>,
    cookies: Option<&'a mut Vec<u8>>,
}

fn parse_head(
    buf: &[u8],
    head_request: bool,
    max_body: u64,
    captures: Captures<'_>,
) -> Result<Option<Head>, DecodeError> {
    let Captures { header: capture, value: captured, mut cookies } = captures;
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    // A user agent must accept obs-fold in responses (RFC 9112 §5.2).
    let parsed = httparse::ParserConfig::default()
        .allow_obsolete_multiline_headers_in_responses(true)
        .parse_response(&mut response, buf);
    let head_bytes = match parsed {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(DecodeError::Head("too many header fields")),
        Err(e) => return Err(DecodeError::Head(parse_error_name(e))),
    };
    let status = response.code.ok_or(DecodeError::Head("no status code"))?;
    let http11 = response.version == Some(1);
    let mut keep_alive = http11;
    let mut chunked = false;
    let mut transfer_encoded = false;
    let mut length: Option<u64> = None;
    let mut captured_header = false;
    if let Some(cookies) = cookies.as_deref_mut() {
        cookies.clear();
    }
    for h in response.headers.iter() {
        if let Some(cookies) = cookies.as_deref_mut() {
            let fits = cookies.len() + h.value.len() < MAX_CAPTURED_COOKIES;
            if fits && h.name.eq_ignore_ascii_case("set-cookie") && !h.value.contains(&b'\n') {
                // Within the capacity reserved by set_cookie_capture: no allocation.
                cookies.extend_from_slice(h.value);
                cookies.push(b'\n');
            }
        }
        if let Some((name, prefix)) = capture {
            if !captured_header && h.name.as_bytes().eq_ignore_ascii_case(name) && h.value.starts_with(prefix) {
                // Within the capacity reserved by set_header_capture: no allocation.
                captured.clear();
                captured.extend_from_slice(&h.value[..h.value.len().min(MAX_CAPTURED_HEADER)]);
                captured_header = true;
            }
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = parse_length(h.value)?;
            if length.is_some_and(|prev| prev != n) {
                return Err(DecodeError::BadContentLength);
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // Only the final coding frames the message (RFC 9112 §6.3).
            transfer_encoded = true;
            chunked = last_token_is(h.value, b"chunked");
        } else if h.name.eq_ignore_ascii_case("connection") {
            if has_token(h.value, b"close") {
                keep_alive = false;
            } else if has_token(h.value, b"keep-alive") {
                keep_alive = true;
            }
        }
    }
    let no_body = head_request || (100..200).contains(&status) || status == 204 || status == 304;
    let body = if no_body {
        Body::Length(0)
    } else if chunked {
        // Transfer-Encoding in HTTP/1.0 is faulty framing: close afterwards (RFC 9112 §6.1).
        keep_alive &= http11;
        Body::Chunked(ChunkedDecoder::default())
    } else if transfer_encoded {
        // Transfer-Encoding overrides Content-Length; a final coding other
        // than chunked is delimited by close (RFC 9112 §6.3 items 3–4).
        keep_alive = false;
        Body::UntilClose
    } else if let Some(n) = length {
        if n > max_body {
            return Err(DecodeError::BodyTooLarge(max_body));
        }
        Body::Length(n)
    } else {
        keep_alive = false;
        Body::UntilClose
    };
    Ok(Some(Head { captured_header, status, head_bytes, keep_alive, body }))
}

fn parse_length(value: &[u8]) -> Result<u64, DecodeError> {
    let digits = value.trim_ascii();
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(DecodeError::BadContentLength);
    }
    Ok(digits.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
}

fn has_token(value: &[u8], token: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

fn last_token_is(value: &[u8], token: &[u8]) -> bool {
    // Empty list elements do not count (RFC 9110 §5.6.1).
    value
        .rsplit(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .find(|t| !t.is_empty())
        .is_some_and(|t| t.eq_ignore_ascii_case(token))
}

fn parse_error_name(e: httparse::Error) -> &'static str {
    match e {
        httparse::Error::Status => "invalid status line",
        httparse::Error::Version => "invalid HTTP version",
        httparse::Error::HeaderName => "invalid header name",
        httparse::Error::HeaderValue => "invalid header value",
        httparse::Error::NewLine => "invalid line ending",
        httparse::Error::Token => "invalid token",
        httparse::Error::TooManyHeaders => "too many header fields",
    }
}
