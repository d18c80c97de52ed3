//! Taking a value out of a response body: a regular expression (its first
//! group, or the whole match when it has none) or a JSON pointer (RFC 6901).
//! Both read the body the slot captured (up to its cap), whole, and write the
//! value into the variable's own buffer; nothing is allocated per response:
//! the regex reuses the slot's `CaptureLocations`, and the JSON pointer is a
//! scan over the bytes that builds no tree (objects and arrays on the
//! pointer's path are walked, every other value is skipped by its syntax).

use regex::bytes::{CaptureLocations, Regex};

/// How one value is found, compiled once.
#[derive(Debug, Clone)]
pub enum Finder {
    /// A regular expression over the body's bytes.
    Regex(Regex),
    /// A JSON pointer's reference tokens, unescaped (`~1` is `/`, `~0` is `~`).
    Json(Vec<String>),
}

/// Why a finder does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinderError {
    /// The regex crate's own message, first line.
    Regex(String),
    /// A pointer that is neither empty nor starts with `/`, or a bad `~` escape.
    Pointer(&'static str),
}

impl std::fmt::Display for FinderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Regex(why) => write!(f, "bad regular expression: {why}"),
            Self::Pointer(why) => write!(f, "bad JSON pointer: {why}"),
        }
    }
}

impl Finder {
    /// A regular expression (the `regex` crate's syntax).
    pub fn regex(pattern: &str) -> Result<Self, FinderError> {
        Regex::new(pattern).map(Self::Regex).map_err(|e| {
            // The crate's message spans lines (the pattern, a caret, the error): keep its last line.
            let text = e.to_string();
            let line = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("invalid").trim();
            FinderError::Regex(line.trim_start_matches("error: ").to_string())
        })
    }

    /// A JSON pointer, `/data/id` or `/items/0/name`; `""` is the whole document.
    pub fn json(pointer: &str) -> Result<Self, FinderError> {
        if pointer.is_empty() {
            return Ok(Self::Json(Vec::new()));
        }
        let Some(rest) = pointer.strip_prefix('/') else {
            return Err(FinderError::Pointer("it must start with '/' (or be empty for the whole body)"));
        };
        let mut tokens = Vec::new();
        for raw in rest.split('/') {
            let mut token = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                match (c, c == '~') {
                    (_, false) => token.push(c),
                    (_, true) => match chars.next() {
                        Some('0') => token.push('~'),
                        Some('1') => token.push('/'),
                        _ => return Err(FinderError::Pointer("'~' must be followed by 0 or 1")),
                    },
                }
            }
            tokens.push(token);
        }
        Ok(Self::Json(tokens))
    }

    /// A slot's scratch for this finder (allocated once per slot).
    pub fn locations(&self) -> Option<CaptureLocations> {
        match self {
            Self::Regex(re) => Some(re.capture_locations()),
            Self::Json(_) => None,
        }
    }

    /// Finds the value in `body` and writes it into `out` (cleared first);
    /// false when there is none. `locs` is `locations()`'s scratch.
    pub fn find(&self, body: &[u8], locs: Option<&mut CaptureLocations>, out: &mut Vec<u8>) -> bool {
        out.clear();
        match self {
            Self::Regex(re) => {
                let locs = locs.expect("invariant: a regex finder has its capture locations");
                if re.captures_read(locs, body).is_none() {
                    return false;
                }
                let group = if locs.len() > 1 { 1 } else { 0 };
                match locs.get(group) {
                    Some((start, end)) => {
                        out.extend_from_slice(&body[start..end]);
                        true
                    }
                    // An optional group that did not take part: no value.
                    None => false,
                }
            }
            Self::Json(tokens) => json_find(body, tokens, out),
        }
    }
}

/// Walks `tokens` down from the document's root; the value found is written
/// to `out` (a string unescaped, anything else as its JSON text).
fn json_find(body: &[u8], tokens: &[String], out: &mut Vec<u8>) -> bool {
    let mut s = Scan { b: body, i: 0 };
    for token in tokens {
        s.ws();
        let found = match s.peek() {
            Some(b'{') => s.member(token.as_bytes()),
            Some(b'[') => match index(token) {
                Some(n) => s.element(n),
                None => false,
            },
            _ => false,
        };
        if !found {
            return false;
        }
    }
    s.ws();
    let start = s.i;
    match s.peek() {
        Some(b'"') => s.string(Some(out)),
        Some(_) => {
            if !s.skip_value() {
                return false;
            }
            out.extend_from_slice(&body[start..s.i]);
            true
        }
        None => false,
    }
}

/// An array index token: digits without a leading zero (RFC 6901 §4).
fn index(token: &str) -> Option<usize> {
    let ok =
        !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    if ok {
        token.parse().ok()
    } else {
        None
    }
}

/// A cursor over JSON text; every method leaves `i` after what it read, and
/// returns false on text that is not JSON (or ends early).
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// At `{`: moves to the value of member `key`.
    fn member(&mut self, key: &[u8]) -> bool {
        self.i += 1;
        if self.eat(b'}') {
            return false;
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return false;
            }
            let hit = self.key_is(key);
            if !self.eat(b':') {
                return false;
            }
            if hit == Some(true) {
                return true;
            }
            if hit.is_none() || !self.skip_value() {
                return false;
            }
            if !self.eat(b',') {
                return false; // `}` (not found) or not JSON
            }
        }
    }

    /// At `[`: moves to element `n`.
    fn element(&mut self, n: usize) -> bool {
        self.i += 1;
        if self.eat(b']') {
            return false;
        }
        for _ in 0..n {
            if !self.skip_value() || !self.eat(b',') {
                return false;
            }
        }
        self.ws();
        true
    }

    /// At a key's `"`: reads it, comparing its unescaped bytes with `key`
    /// (None: not a string).
    fn key_is(&mut self, key: &[u8]) -> Option<bool> {
        let mut cmp = Compare { want: key, at: 0, equal: true };
        if !self.string_into(&mut cmp) {
            return None;
        }
        Some(cmp.equal && cmp.at == key.len())
    }

    /// At `"`: reads a string, appending its unescaped bytes to `out`.
    fn string(&mut self, out: Option<&mut Vec<u8>>) -> bool {
        match out {
            Some(out) => self.string_into(out),
            None => self.string_into(&mut Discard),
        }
    }

    fn string_into(&mut self, sink: &mut impl Sink) -> bool {
        self.i += 1;
        loop {
            let Some(c) = self.peek() else { return false };
            self.i += 1;
            match c {
                b'"' => return true,
                b'\\' => {
                    let Some(e) = self.peek() else { return false };
                    self.i += 1;
                    let byte = match e {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let Some(ch) = self.unicode() else { return false };
                            let mut buf = [0u8; 4];
                            sink.put(ch.encode_utf8(&mut buf).as_bytes());
                            continue;
                        }
                        _ => return false,
                    };
                    sink.put(&[byte]);
                }
                _ => sink.put(&[c]),
            }
        }
    }

    /// After `\u`: four hex digits, and a low surrogate's after a high one.
    fn unicode(&mut self) -> Option<char> {
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) {
            if self.b.get(self.i..self.i + 2) != Some(b"\\u") {
                return Some(char::REPLACEMENT_CHARACTER);
            }
            self.i += 2;
            let lo = self.hex4()?;
            if !(0xDC00..0xE000).contains(&lo) {
                return Some(char::REPLACEMENT_CHARACTER);
            }
            return char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
        }
        Some(char::from_u32(hi).unwrap_or(char::REPLACEMENT_CHARACTER))
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.b.get(self.i..self.i + 4)?;
        let text = std::str::from_utf8(digits).ok()?;
        let n = u32::from_str_radix(text, 16).ok()?;
        self.i += 4;
        Some(n)
    }

    /// Skips one value of any kind.
    fn skip_value(&mut self) -> bool {
        self.ws();
        match self.peek() {
            Some(b'"') => self.string(None),
            Some(open @ (b'{' | b'[')) => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.i += 1;
                if self.eat(close) {
                    return true;
                }
                loop {
                    if open == b'{' {
                        self.ws();
                        if self.peek() != Some(b'"') || !self.string(None) || !self.eat(b':') {
                            return false;
                        }
                    }
                    if !self.skip_value() {
                        return false;
                    }
                    if self.eat(close) {
                        return true;
                    }
                    if !self.eat(b',') {
                        return false;
                    }
                }
            }
            Some(_) => {
                // A number, true, false or null: up to the next delimiter.
                let start = self.i;
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.i += 1;
                }
                self.i > start
            }
            None => false,
        }
    }
}

/// Where a string's unescaped bytes go.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

struct Discard;

impl Sink for Discard {
    fn put(&mut self, _: &[u8]) {}
}

/// Compares a key as it is unescaped, without keeping it.
struct Compare<'a> {
    want: &'a [u8],
    at: usize,
    equal: bool,
}

impl Sink for Compare<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let end = self.at + bytes.len();
        if !self.equal || end > self.want.len() || &self.want[self.at..end] != bytes {
            self.equal = false;
        }
        self.at = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(finder: &Finder, body: &str) -> Option<String> {
        let mut locs = finder.locations();
        let mut out = Vec::new();
        finder.find(body.as_bytes(), locs.as_mut(), &mut out).then(|| String::from_utf8(out).unwrap())
    }

    fn json(pointer: &str, body: &str) -> Option<String> {
        find(&Finder::json(pointer).unwrap(), body)
    }

    #[test]
    fn regex_takes_its_first_group_or_the_whole_match() {
        let re = Finder::regex(r#"token=([A-Za-z0-9]+)"#).unwrap();
        assert_eq!(find(&re, "ok\nQUERY_STRING=token=abc123&x=1\n").as_deref(), Some("abc123"));
        assert_eq!(find(&re, "no token here").as_deref(), None);
        let whole = Finder::regex(r"\d+").unwrap();
        assert_eq!(find(&whole, "id: 4711.").as_deref(), Some("4711"));
        let optional = Finder::regex(r"x(y)?").unwrap();
        assert_eq!(find(&optional, "xz"), None);
        // The same locations serve match after match.
        let mut locs = re.locations();
        let mut out = Vec::new();
        for n in 0..3 {
            let body = format!("token=v{n}");
            assert!(re.find(body.as_bytes(), locs.as_mut(), &mut out));
            assert_eq!(out, format!("v{n}").as_bytes());
        }
    }

    #[test]
    fn bad_regex_is_one_line() {
        let Err(FinderError::Regex(why)) = Finder::regex("a(b") else { panic!("accepted") };
        assert!(!why.contains('\n') && why.contains("unclosed"), "{why}");
    }

    #[test]
    fn json_pointer_through_objects_and_arrays() {
        let body = r#" {"data": {"id": 42, "name": "a\"b\u00e9", "tags": ["x", {"k": [1, 2, 3]}]},
                       "a/b": true, "m~n": null, "": "empty", "e": {}, "z": [] } "#;
        assert_eq!(json("/data/id", body).as_deref(), Some("42"));
        assert_eq!(json("/data/name", body).as_deref(), Some("a\"bé"));
        assert_eq!(json("/data/tags/0", body).as_deref(), Some("x"));
        assert_eq!(json("/data/tags/1/k/2", body).as_deref(), Some("3"));
        assert_eq!(json("/data/tags/1", body).as_deref(), Some(r#"{"k": [1, 2, 3]}"#));
        assert_eq!(json("/a~1b", body).as_deref(), Some("true"));
        assert_eq!(json("/m~0n", body).as_deref(), Some("null"));
        assert_eq!(json("/", body).as_deref(), Some("empty"));
        assert_eq!(json("/e", body).as_deref(), Some("{}"));
        assert_eq!(json("/z", body).as_deref(), Some("[]"));
        for missing in ["/data/nope", "/data/tags/2", "/data/tags/01", "/data/tags/x", "/data/id/0", "/e/x", "/z/0"] {
            assert_eq!(json(missing, body), None, "{missing}");
        }
        assert_eq!(json("", "[1]").as_deref(), Some("[1]"));
    }

    #[test]
    fn json_keys_compare_unescaped_and_by_length() {
        assert_eq!(json("/ab", r#"{"a": 1, "abc": 2, "a\u0062": 3}"#).as_deref(), Some("3"));
        assert_eq!(json("/a", r#"{"ab": 1}"#), None);
        assert_eq!(json("/😀", r#"{"\ud83d\ude00": "smile"}"#).as_deref(), Some("smile"));
    }

    #[test]
    fn json_that_is_not_json_or_ends_early_finds_nothing() {
        for body in ["", "{", r#"{"a" 1}"#, r#"{"a": "#, r#"{"b": [1, 2"#, "<html>", r#"{"b": 1 "a": 2}"#] {
            assert_eq!(json("/a", body), None, "{body}");
        }
        // A body cut by the capture cap still yields what came before the cut.
        assert_eq!(json("/a", r#"{"a": "x", "rest": "cut he"#).as_deref(), Some("x"));
    }

    #[test]
    fn bad_pointers_are_refused() {
        assert!(matches!(Finder::json("data/id"), Err(FinderError::Pointer(_))));
        assert!(matches!(Finder::json("/a~2"), Err(FinderError::Pointer(_))));
        assert!(Finder::json("/a~1~0").is_ok());
    }
}
