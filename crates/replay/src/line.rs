//! One log line to one `Record`, on bytes only (sans-IO): no allocation, the
//! record borrows from the line (a message for a line that does not parse is
//! the one allocation). Caddy's JSON lines are read by a small scanner that
//! skips what crest does not use, so they allocate nothing either. Quoted
//! fields keep their escapes (`\"`, `\x22`, JSON's `\u0022`) as logged:
//! `unescape` decodes a target when the table keeps it. Tested on every named
//! format and on lines cut short at every byte.

use crate::error::ReplayError;
use crate::format::{Field, Format, Piece, Shape};

// `auto` is resolved by reading the first line in each format in turn, so it lives here
// rather than in `format`, which parses nothing.
impl Format {
    /// For `auto`: the format the first non-empty line is in.
    ///
    /// # Errors
    /// `ReplayError::Format` when no known format fits (the caller adds the path and line).
    pub fn detect(first_line: &[u8]) -> Result<Self, ReplayError> {
        let line = first_line.trim_ascii();
        if line.first() == Some(&b'{') {
            return Self::parse("caddy");
        }
        for name in ["crest", "combined", "common"] {
            let format = Self::parse(name)?;
            if !matches!(parse_line(line, &format), Err(LineError::Malformed(_))) {
                return Ok(format);
            }
        }
        Err(ReplayError::Format(format!(
            "format auto: the first line is none of caddy's JSON, crest, combined or common ({}): give the log's \
             format string as {{format}}",
            excerpt(line)
        )))
    }
}

/// What crest takes from one logged request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// When the request was logged, µs since the Unix epoch (a server logs
    /// at the request's start or end: the format says which, crest keeps it as logged).
    pub time_us: i64,
    /// Whether `time_us` is when the request ended (nginx, Caddy) rather than when it started.
    pub logged_at_end: bool,
    /// `GET`, `POST`, … as logged.
    pub method: &'a [u8],
    /// Path and query as logged (`/a/b?c=d`; an absolute-form target is cut to its path).
    pub target: &'a [u8],
    /// Status code as logged.
    pub status: u16,
    /// Response body bytes, when the format logs them (`-` is 0).
    pub body_bytes: Option<u64>,
    /// Client address as logged (empty when the format has none).
    pub client: &'a [u8],
    /// User agent as logged (empty when none).
    pub user_agent: &'a [u8],
    /// Cookie header as logged (empty when none).
    pub cookie: &'a [u8],
    /// Time taken, µs, when logged.
    pub duration_us: Option<u64>,
}

/// Why one line did not parse: the message (without path and line number,
/// which the caller adds), or that the line is a logged request crest cannot
/// replay (a garbage request line such as a TLS hello sent to a plain port,
/// logged by nginx as `"\x16\x03…" 400`): those are counted and skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// The line is not in the format: the reader stops with this message.
    Malformed(String),
    /// A well-formed line whose request cannot be sent again: skipped and counted.
    Unreplayable,
}

/// Parses one line (without its newline) in `format`, which must not be `auto`.
///
/// # Errors
/// `LineError::Malformed` with what did not match; `LineError::Unreplayable` for a logged garbage request.
pub fn parse_line<'a>(line: &'a [u8], format: &Format) -> Result<Record<'a>, LineError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let acc = match &format.shape {
        Shape::Fields(pieces) if pieces.is_empty() => {
            return Err(LineError::Malformed("format auto is resolved on the first line, not per line".into()))
        }
        Shape::Fields(pieces) => fields(line, pieces, format.at_end)?,
        Shape::Crest => crest(line)?,
        Shape::CaddyJson => caddy(line)?,
    };
    acc.finish(line)
}

/// A short, printable piece of a line for a message: at most 60 bytes, control and
/// non-ASCII bytes as `\xHH`.
pub(crate) fn excerpt(line: &[u8]) -> String {
    let mut out = String::new();
    for &b in line.iter().take(60) {
        if (0x20..0x7f).contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    if line.len() > 60 {
        out.push('…');
    }
    format!("`{out}`")
}

fn malformed(line: &[u8], what: impl std::fmt::Display) -> LineError {
    LineError::Malformed(format!("{what} in {}", excerpt(line)))
}

/// The fields read so far.
#[derive(Default)]
struct Acc<'a> {
    time_us: Option<i64>,
    frac_us: i64,
    at_end: bool,
    request_line: Option<&'a [u8]>,
    method: &'a [u8],
    target: Option<&'a [u8]>,
    status: Option<u16>,
    body_bytes: Option<u64>,
    sent_bytes: Option<u64>,
    client: &'a [u8],
    user_agent: &'a [u8],
    cookie: &'a [u8],
    duration_us: Option<u64>,
}

impl<'a> Acc<'a> {
    fn finish(self, line: &'a [u8]) -> Result<Record<'a>, LineError> {
        let status = self.status.ok_or_else(|| malformed(line, "no status"))?;
        let (method, target) = match self.request_line {
            Some(request) => split_request(request).ok_or(LineError::Unreplayable)?,
            None => (self.method, self.target.ok_or_else(|| malformed(line, "no request target"))?),
        };
        if method.is_empty() || !method.iter().all(|&b| is_tchar(b)) {
            return Err(LineError::Unreplayable);
        }
        let target = replayable_target(target).ok_or(LineError::Unreplayable)?;
        Ok(Record {
            time_us: self.time_us.unwrap_or(0).saturating_add(self.frac_us),
            logged_at_end: self.at_end,
            method,
            target,
            status,
            body_bytes: self.body_bytes.or(self.sent_bytes),
            client: self.client,
            user_agent: self.user_agent,
            cookie: self.cookie,
            duration_us: self.duration_us,
        })
    }

    /// Stores one field's value.
    fn set(&mut self, field: Field, v: &'a [u8], line: &'a [u8]) -> Result<(), LineError> {
        let bad = || malformed(line, format_args!("the {} is {}", field.label(), excerpt(v)));
        match field {
            Field::Client => self.client = v,
            Field::TimeLocal => self.time_us = Some(time_local_us(v).ok_or_else(bad)?),
            Field::TimeIso8601 => self.time_us = Some(iso8601_us(v).ok_or_else(bad)?),
            Field::UnixSeconds => self.time_us = Some(seconds_us(v).ok_or_else(bad)? as i64),
            Field::UnixMillis => self.time_us = Some(int(v).ok_or_else(bad)?.saturating_mul(1000) as i64),
            Field::UnixMicros => self.time_us = Some(int(v).ok_or_else(bad)? as i64),
            Field::MillisFrac => self.frac_us = int(v).filter(|&n| n < 1000).ok_or_else(bad)? as i64 * 1000,
            Field::MicrosFrac => self.frac_us = int(v).filter(|&n| n < 1_000_000).ok_or_else(bad)? as i64,
            Field::RequestLine => self.request_line = Some(v),
            Field::Method => self.method = v,
            Field::Target => self.target = Some(v),
            Field::Status => self.status = Some(int(v).filter(|&n| n < 1000).ok_or_else(bad)? as u16),
            Field::BodyBytes => self.body_bytes = Some(if v == b"-" { 0 } else { int(v).ok_or_else(bad)? }),
            Field::SentBytes => self.sent_bytes = Some(if v == b"-" { 0 } else { int(v).ok_or_else(bad)? }),
            Field::UserAgent => self.user_agent = v,
            Field::Cookie => self.cookie = v,
            Field::DurationMicros => self.duration_us = duration(v, int).ok_or_else(bad)?,
            Field::DurationMillis => self.duration_us = duration(v, |v| int(v)?.checked_mul(1000)).ok_or_else(bad)?,
            Field::DurationSeconds => self.duration_us = duration(v, seconds_us).ok_or_else(bad)?,
            Field::Other => {}
        }
        Ok(())
    }
}

fn duration(v: &[u8], read: impl Fn(&[u8]) -> Option<u64>) -> Option<Option<u64>> {
    if v == b"-" {
        Some(None)
    } else {
        read(v).map(Some)
    }
}

fn fields<'a>(line: &'a [u8], pieces: &[Piece], at_end: bool) -> Result<Acc<'a>, LineError> {
    let mut acc = Acc { at_end, ..Acc::default() };
    let mut pos = 0;
    for (k, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Literal(lit) => {
                if !line[pos..].starts_with(lit) {
                    let after = match k.checked_sub(1).map(|j| &pieces[j]) {
                        Some(Piece::Field(f)) => format!(" after the {}", f.label()),
                        _ => String::new(),
                    };
                    return Err(malformed(line, format_args!("expected {}{after} at byte {}", excerpt(lit), pos + 1)));
                }
                pos += lit.len();
            }
            Piece::Field(field) => {
                let next = match pieces.get(k + 1) {
                    Some(Piece::Literal(lit)) => Some(lit.as_slice()),
                    _ => None,
                };
                let quoted = matches!(k.checked_sub(1).map(|j| &pieces[j]), Some(Piece::Literal(l)) if l.ends_with(b"\""))
                    && next.is_some_and(|l| l.starts_with(b"\""));
                let end = match next {
                    Some(lit) => find(line, pos, lit, quoted).ok_or_else(|| {
                        let at = pos + 1;
                        malformed(
                            line,
                            format_args!("expected {} after the {} at byte {at}", excerpt(lit), field.label()),
                        )
                    })?,
                    None if field.is_number() => {
                        line[pos..].iter().position(|&b| b == b' ').map_or(line.len(), |n| pos + n)
                    }
                    None => line.len(),
                };
                acc.set(*field, &line[pos..end], line)?;
                pos = end;
            }
        }
    }
    // Fields a server adds after the format's (a space first) are not crest's to read.
    if pos < line.len() && line[pos] != b' ' && line[pos] != b'\t' {
        return Err(malformed(line, format_args!("unexpected text after the last field at byte {}", pos + 1)));
    }
    Ok(acc)
}

/// Where `lit` next occurs from `pos`; in a quoted field a backslash escapes the byte after it.
fn find(line: &[u8], mut pos: usize, lit: &[u8], quoted: bool) -> Option<usize> {
    let first = *lit.first()?;
    while pos < line.len() {
        pos += line[pos..].iter().position(|&b| b == first || (quoted && b == b'\\'))?;
        if quoted && line[pos] == b'\\' {
            pos += 2;
            continue;
        }
        if line[pos..].starts_with(lit) {
            return Some(pos);
        }
        pos += 1;
    }
    None
}

/// `ADDR [TIME] "REQUEST" STATUS BYTES[ DURATION]` (see `Shape::Crest`).
fn crest(line: &[u8]) -> Result<Acc<'_>, LineError> {
    let mut acc = Acc::default();
    let expect = |what: &str| malformed(line, format_args!("expected {what} (format crest)"));
    let open = find(line, 0, b" [", false).ok_or_else(|| expect("`ADDR [`"))?;
    acc.client = &line[..open];
    let close = find(line, open + 2, b"] \"", false).ok_or_else(|| expect("`] \"` after the time"))?;
    let time = &line[open + 2..close];
    acc.time_us = Some(
        if time.contains(&b'.') {
            seconds_us(time).map(|t| t as i64)
        } else {
            int(time).map(|ms| ms.saturating_mul(1000) as i64)
        }
        .ok_or_else(|| malformed(line, format_args!("the time is {}", excerpt(time))))?,
    );
    let start = close + 3;
    let end = find(line, start, b"\" ", true).ok_or_else(|| expect("`\" ` after the request line"))?;
    acc.request_line = Some(&line[start..end]);
    let mut rest = line[end + 2..].split(|&b| b == b' ');
    let status = rest.next().unwrap_or_default();
    acc.set(Field::Status, status, line)?;
    let bytes = rest.next().ok_or_else(|| expect("the body bytes after the status"))?;
    acc.set(Field::BodyBytes, bytes, line)?;
    if let Some(took) = rest.next() {
        // nginx's $request_time (seconds, a fraction) goes with its $msec, logged at the end;
        // Apache's %D (µs) with its %{msec}t, logged at the start.
        if took.contains(&b'.') {
            acc.at_end = true;
            acc.set(Field::DurationSeconds, took, line)?;
        } else {
            acc.set(Field::DurationMicros, took, line)?;
        }
    }
    Ok(acc)
}

/// `METHOD TARGET[ PROTOCOL]`, or None when the logged request is not one.
fn split_request(request: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut parts = request.split(|&b| b == b' ');
    let method = parts.next()?;
    let target = parts.next()?;
    if let Some(proto) = parts.next() {
        if !proto.starts_with(b"HTTP/") || parts.next().is_some() {
            return None;
        }
    }
    Some((method, target))
}

/// The target to send: origin-form as logged, an absolute-form one cut to its path; None for
/// what cannot be sent again (`*`, `host:port`, garbage).
fn replayable_target(target: &[u8]) -> Option<&[u8]> {
    let target = if target.first() == Some(&b'/') {
        target
    } else {
        let rest = target.strip_prefix(b"http://").or_else(|| target.strip_prefix(b"https://"))?;
        &rest[rest.iter().position(|&b| b == b'/')?..]
    };
    (!target.iter().any(|&b| b <= b' ' || b == 0x7f)).then_some(target)
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A decimal integer (at most 19 digits).
pub(crate) fn int(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(v.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// Seconds with an optional fraction (`1700000000.123`, `0.004`, `5`) as µs.
pub(crate) fn seconds_us(v: &[u8]) -> Option<u64> {
    let (whole, frac) = match v.iter().position(|&b| b == b'.') {
        Some(dot) => (&v[..dot], &v[dot + 1..]),
        None => (v, &b""[..]),
    };
    if whole.len() > 12 || (frac.is_empty() && v.contains(&b'.')) || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(int(whole)? * 1_000_000 + frac_us(frac))
}

/// The µs of a decimal fraction's digits (those past the sixth are dropped).
fn frac_us(digits: &[u8]) -> u64 {
    let mut us = 0;
    let mut scale = 100_000;
    for &d in digits.iter().take(6) {
        us += u64::from(d - b'0') * scale;
        scale /= 10;
    }
    us
}

/// Days from 1970-01-01 to a civil date (Hinnant's algorithm; no time zone database).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn digits(v: &[u8], at: usize, n: usize) -> Option<i64> {
    int(v.get(at..at + n)?).map(|x| x as i64)
}

fn utc_us(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some(((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60_000_000 + s * 1_000_000)
}

/// `10/Oct/2000:13:55:36 -0700` as UTC µs.
fn time_local_us(v: &[u8]) -> Option<i64> {
    const MONTHS: [&[u8]; 12] =
        [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];
    if v.len() != 26 || v[2] != b'/' || v[6] != b'/' || v[11] != b':' || v[14] != b':' || v[17] != b':' || v[20] != b' '
    {
        return None;
    }
    let month = MONTHS.iter().position(|m| *m == &v[3..6])? as i64 + 1;
    let local =
        utc_us(digits(v, 7, 4)?, month, digits(v, 0, 2)?, digits(v, 12, 2)?, digits(v, 15, 2)?, digits(v, 18, 2)?)?;
    Some(local - zone_us(&v[21..])?)
}

/// `+hhmm`, `-hh:mm` or `Z` as µs east of UTC.
fn zone_us(v: &[u8]) -> Option<i64> {
    if v == b"Z" {
        return Some(0);
    }
    let sign = match v.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (h, m) = match v.len() {
        5 => (digits(v, 1, 2)?, digits(v, 3, 2)?),
        6 if v[3] == b':' => (digits(v, 1, 2)?, digits(v, 4, 2)?),
        _ => return None,
    };
    (h < 24 && m < 60).then_some(sign * (h * 60 + m) * 60_000_000)
}

/// `2000-10-10T13:55:36-07:00` (a fraction and `Z` allowed) as UTC µs.
pub(crate) fn iso8601_us(v: &[u8]) -> Option<i64> {
    if v.len() < 20
        || v[4] != b'-'
        || v[7] != b'-'
        || (v[10] != b'T' && v[10] != b' ')
        || v[13] != b':'
        || v[16] != b':'
    {
        return None;
    }
    let mut t = utc_us(
        digits(v, 0, 4)?,
        digits(v, 5, 2)?,
        digits(v, 8, 2)?,
        digits(v, 11, 2)?,
        digits(v, 14, 2)?,
        digits(v, 17, 2)?,
    )?;
    let mut rest = &v[19..];
    if rest.first() == Some(&b'.') {
        let n = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        t += frac_us(&rest[1..n + 1]) as i64;
        rest = &rest[n + 1..];
    }
    Some(t - zone_us(rest)?)
}

/// Decodes a logged target's escapes (`\"`, `\\`, `\xHH`, JSON's `\uXXXX` and `\/`) into `out`,
/// percent-encoding any byte that may not stand in a request target as is, so `out` is ASCII.
pub fn unescape(target: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let raw = |b: u8, out: &mut Vec<u8>| {
        if b > 0x20 && b < 0x7f && b != b'"' && b != b'\\' {
            out.push(b);
        } else {
            out.extend_from_slice(format_hex(b).as_slice());
        }
    };
    let mut i = 0;
    while i < target.len() {
        let b = target[i];
        if b != b'\\' || i + 1 >= target.len() {
            raw(b, out);
            i += 1;
            continue;
        }
        match target[i + 1] {
            b'x' if i + 4 <= target.len() && hex(&target[i + 2..i + 4]).is_some() => {
                raw(hex(&target[i + 2..i + 4]).unwrap_or(0) as u8, out);
                i += 4;
            }
            b'u' if i + 6 <= target.len() && hex(&target[i + 2..i + 6]).is_some() => {
                let c = char::from_u32(hex(&target[i + 2..i + 6]).unwrap_or(0)).unwrap_or('\u{fffd}');
                let mut buf = [0; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    raw(b, out);
                }
                i += 6;
            }
            c => {
                let c = match c {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 8,
                    b'f' => 12,
                    c => c,
                };
                raw(c, out);
                i += 2;
            }
        }
    }
}

fn format_hex(b: u8) -> [u8; 3] {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    [b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]
}

fn hex(v: &[u8]) -> Option<u32> {
    v.iter().try_fold(0u32, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
}

// --- Caddy's JSON access log ---------------------------------------------------------------------------

/// A cursor over one JSON line; values crest does not use are skipped without recursion.
struct Json<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Json<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// A string's raw contents (escapes as written).
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.i;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(&self.b[start..self.i - 1]);
                }
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        None
    }

    fn number(&mut self) -> Option<&'a [u8]> {
        self.ws();
        let start = self.i;
        while self.i < self.b.len() && matches!(self.b[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
            self.i += 1;
        }
        (self.i > start).then(|| &self.b[start..self.i])
    }

    /// Skips one value of any depth.
    fn skip(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    self.i += 1;
                    depth += 1;
                    continue;
                }
                b'}' | b']' => {
                    self.i += 1;
                    depth = depth.checked_sub(1)?;
                }
                b',' | b':' if depth > 0 => {
                    self.i += 1;
                    continue;
                }
                b't' | b'f' | b'n' => {
                    while self.i < self.b.len() && self.b[self.i].is_ascii_lowercase() {
                        self.i += 1;
                    }
                }
                _ => {
                    self.number()?;
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// The next key of an object whose `{` is eaten (None: malformed; Some(None): the object ended).
    fn key(&mut self, first: &mut bool) -> Option<Option<&'a [u8]>> {
        if self.eat(b'}') {
            return Some(None);
        }
        if !std::mem::take(first) && !self.eat(b',') {
            return None;
        }
        let key = self.string()?;
        self.eat(b':').then_some(Some(key))
    }

    fn f64(&mut self) -> Option<f64> {
        std::str::from_utf8(self.number()?).ok()?.parse().ok().filter(|x: &f64| x.is_finite())
    }

    /// Seconds as µs, from the digits (a float would round `1700000000.5241024` to the wrong µs).
    fn seconds_us(&mut self) -> Option<u64> {
        let n = self.number()?;
        seconds_us(n).or_else(|| {
            let s: f64 = std::str::from_utf8(n).ok()?.parse().ok()?;
            (0.0..1e12).contains(&s).then_some((s * 1e6) as u64)
        })
    }

    /// The first string of an array of strings (Caddy logs each header as one).
    fn first_of(&mut self) -> Option<&'a [u8]> {
        if self.peek() != Some(b'[') {
            self.skip()?;
            return Some(b"");
        }
        self.i += 1;
        if self.eat(b']') {
            return Some(b"");
        }
        let first = if self.peek() == Some(b'"') { self.string()? } else { b"" };
        if first.is_empty() {
            self.skip()?;
        }
        while self.eat(b',') {
            self.skip()?;
        }
        self.eat(b']').then_some(first)
    }
}

fn caddy(line: &[u8]) -> Result<Acc<'_>, LineError> {
    let mut acc = Acc { at_end: true, ..Acc::default() };
    let mut j = Json { b: line, i: 0 };
    let bad = |what: &str, at: usize| malformed(line, format_args!("{what} at byte {} (format caddy)", at + 1));
    if !j.eat(b'{') {
        return Err(bad("expected a JSON object", j.i));
    }
    let mut first = true;
    let mut seen_request = false;
    while let Some(key) = j.key(&mut first).ok_or_else(|| bad("malformed JSON", j.i))? {
        let at = j.i;
        let ok = match key {
            b"ts" => match j.peek() {
                Some(b'"') => j.string().and_then(iso8601_us).map(|t| acc.time_us = Some(t)),
                _ => j.seconds_us().map(|us| acc.time_us = Some(us as i64)),
            },
            b"status" => j.f64().filter(|&s| (0.0..1000.0).contains(&s)).map(|s| acc.status = Some(s as u16)),
            b"size" => j.f64().filter(|&s| s >= 0.0).map(|s| acc.body_bytes = Some(s as u64)),
            b"duration" => match j.peek() {
                Some(b'"') => j.skip(),
                _ => j.seconds_us().map(|us| acc.duration_us = Some(us)),
            },
            b"request" => {
                seen_request = true;
                caddy_request(&mut j, &mut acc)
            }
            _ => j.skip(),
        };
        if ok.is_none() {
            let name = String::from_utf8_lossy(key);
            return Err(bad(&format!("the {name:?} value does not parse"), at));
        }
    }
    if j.peek().is_some() {
        return Err(bad("unexpected text after the JSON object", j.i));
    }
    if !seen_request {
        return Err(malformed(line, "no \"request\" object: not a Caddy access-log line (format caddy)"));
    }
    if acc.method.is_empty() || acc.target.is_none() {
        return Err(malformed(line, "the request has no method or uri (format caddy)"));
    }
    Ok(acc)
}

fn caddy_request<'a>(j: &mut Json<'a>, acc: &mut Acc<'a>) -> Option<()> {
    if !j.eat(b'{') {
        return None;
    }
    let mut first = true;
    let mut remote: &[u8] = b"";
    while let Some(key) = j.key(&mut first)? {
        match key {
            b"method" => acc.method = j.string()?,
            b"uri" => acc.target = Some(j.string()?),
            b"remote_ip" => remote = j.string()?,
            b"client_ip" => acc.client = j.string()?,
            b"headers" => {
                if !j.eat(b'{') {
                    return None;
                }
                let mut first = true;
                while let Some(name) = j.key(&mut first)? {
                    if name.eq_ignore_ascii_case(b"user-agent") {
                        acc.user_agent = j.first_of()?;
                    } else if name.eq_ignore_ascii_case(b"cookie") {
                        acc.cookie = j.first_of()?;
                    } else {
                        j.skip()?;
                    }
                }
            }
            _ => j.skip()?,
        }
    }
    if acc.client.is_empty() {
        acc.client = remote;
    }
    Some(())
}
