//! dbench's loadfile grammar (reference §4.5, dbench 4): text in, a parsed
//! `Loadfile` out, every rule checked once before any load so a bad line is
//! one error naming its number. Sans-IO: reading the file and executing the
//! operations belong to the callers.
//!
//! Per line: backslashes become slashes; tokens split on spaces, `"…"`
//! groups one (quotes dropped); a leading number is a timestamp (seconds
//! into the pass); the last token is the expected status; token 1, and
//! token 2 when token 1 is one, is a path if it starts with `/`; the rest
//! are numbers read like C's `strtoll(…, 0)` (hex `0x`, octal `0`).
//! `client1` in a path becomes `client<id>` when a client resolves it
//! (`resolve`), ids from 0.

use std::fmt;
use std::ops::Range;

use super::op::{Expect, OpKind};

/// dbench reads lines into a 1024-byte buffer.
const MAX_LINE_BYTES: usize = 1023;
/// dbench keeps at most 19 tokens per line.
const MAX_TOKENS: usize = 19;
/// What `client1` in a loadfile path stands for.
const CLIENT_TOKEN: &str = "client1";

/// One operation line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// 1-based line number in the file.
    pub number: u32,
    /// Seconds since the start of the pass at which the line is due (timestamped loadfiles).
    pub timestamp_s: Option<f64>,
    /// The operation.
    pub kind: OpKind,
    /// Path arguments, as ranges of the loadfile's text (empty when absent).
    pub paths: [Range<u32>; 2],
    /// Numeric arguments in line order (unused ones 0).
    pub numbers: [i64; 4],
    /// What the operation must do.
    pub expect: Expect,
}

/// A parsed loadfile: its operation lines, with their paths kept in one text.
#[derive(Debug, Clone, Default)]
pub struct Loadfile {
    /// Lines in file order; comments and blank lines are gone.
    pub lines: Vec<Line>,
    text: String,
}

/// A line the grammar refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadfileError {
    /// 1-based line number.
    pub line: u32,
    /// One line: what is wrong and what to do.
    pub why: String,
}

impl fmt::Display for LoadfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

impl Loadfile {
    /// Parses a whole loadfile. An empty one (no operation line) is refused.
    pub fn parse(text: &str) -> Result<Self, LoadfileError> {
        let mut file = Loadfile::default();
        let mut last = 0;
        for (i, raw) in text.lines().enumerate() {
            let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
            last = number;
            if let Some(line) = file.parse_line(number, raw)? {
                file.lines.push(line);
            }
        }
        if file.lines.is_empty() {
            return Err(LoadfileError { line: last, why: "holds no operation: is this a dbench loadfile?".into() });
        }
        Ok(file)
    }

    /// The text of `range` (a path of a line).
    pub fn text(&self, range: &Range<u32>) -> &str {
        &self.text[range.start as usize..range.end as usize]
    }

    /// Writes path `which` of `line` for client `id` into `out`: `prefix`
    /// then the path with every `client1` replaced by `client<id>`. Reuses
    /// `out`'s capacity, so a client resolving into the same buffer does not
    /// allocate once it has grown.
    pub fn resolve(&self, line: &Line, which: usize, prefix: &str, id: u32, out: &mut String) {
        use fmt::Write as _;
        out.clear();
        out.push_str(prefix);
        let mut rest = self.text(&line.paths[which]);
        while let Some(at) = rest.find(CLIENT_TOKEN) {
            out.push_str(&rest[..at]);
            let _ = write!(out, "client{id}");
            rest = &rest[at + CLIENT_TOKEN.len()..];
        }
        out.push_str(rest);
    }

    /// Operation lines per kind (the loadfile's own mix), by `OpKind::index`.
    pub fn counts(&self) -> [u64; OpKind::COUNT] {
        let mut counts = [0; OpKind::COUNT];
        for line in &self.lines {
            counts[line.kind.index()] += 1;
        }
        counts
    }

    fn parse_line(&mut self, number: u32, raw: &str) -> Result<Option<Line>, LoadfileError> {
        let err = |why: String| LoadfileError { line: number, why };
        if raw.len() > MAX_LINE_BYTES {
            return Err(err(format!("is {} bytes; dbench reads at most {MAX_LINE_BYTES}", raw.len())));
        }
        // dbench's normalisation: slashes for backslashes, and " /" read as " " (unquoted paths).
        let line = raw.replace('\\', "/").replace(" /", " ");
        let mut tokens: [&str; MAX_TOKENS] = [""; MAX_TOKENS];
        let n = tokenize(&line, &mut tokens).map_err(|why| err(why.into()))?;
        let tokens = &tokens[..n];
        if n < 2 || tokens[0].starts_with('#') {
            return Ok(None);
        }
        let (timestamp_s, tokens) = match tokens[0].bytes().next().is_some_and(|b| b.is_ascii_digit()) {
            true => {
                let t: f64 = tokens[0]
                    .parse()
                    .ok()
                    // Bounded so a line's due time stays a `Duration` (a digit first: never negative).
                    .filter(|t: &f64| t.is_finite() && *t <= crate::gate::MAX_SPAN_S)
                    .ok_or_else(|| {
                        err(format!("timestamp '{}' is not a number of seconds within a year", tokens[0]))
                    })?;
                (Some(t), &tokens[1..])
            }
            false => (None, tokens),
        };
        if tokens.len() < 2 {
            return Ok(None);
        }
        let name = tokens[0];
        if name.starts_with("SMB") {
            return Err(err(format!(
                "'{name}' is a dbench 1 (raw SMB trace) line, which dbench 4 and crest refuse: use a dbench 4 loadfile \
                 such as /usr/share/dbench/client.txt"
            )));
        }
        let kind = OpKind::parse(name).ok_or_else(|| {
            err(format!(
                "unknown operation '{name}': crest runs the NetBench-derived operations ({}); dbench 5 directives \
                 (LOOP, REPEAT, SLEEP, …) and other backends' operations are not supported",
                OpKind::ALL.map(OpKind::name).join(", ")
            ))
        })?;
        let status = tokens[tokens.len() - 1];
        let expect = parse_status(status).ok_or_else(|| {
            err(format!("badly formed status '{status}': the last token must be NT_STATUS_*, 0x…, SUCCESS, ERROR or *"))
        })?;
        let args = &tokens[1..tokens.len() - 1];
        let mut paths = [0..0, 0..0];
        let mut taken = 0;
        while taken < 2 && args.get(taken).is_some_and(|a| a.starts_with('/')) {
            paths[taken] = self.keep(args[taken]);
            taken += 1;
        }
        let (want_paths, want_numbers) = kind.arity();
        let numbers_given = &args[taken..];
        if taken != want_paths || numbers_given.len() != want_numbers {
            return Err(err(format!(
                "{} takes {want_paths} path(s) and {want_numbers} number(s) before the status (got {taken} path(s) \
                 and {} other token(s))",
                kind.name(),
                numbers_given.len()
            )));
        }
        let mut numbers = [0; 4];
        for (slot, token) in numbers.iter_mut().zip(numbers_given) {
            *slot = parse_number(token)
                .ok_or_else(|| err(format!("'{token}' is not a number (decimal, 0x hex or 0 octal)")))?;
        }
        Ok(Some(Line { number, timestamp_s, kind, paths, numbers, expect }))
    }

    fn keep(&mut self, path: &str) -> Range<u32> {
        let start = self.text.len();
        self.text.push_str(path);
        let to = |n: usize| u32::try_from(n).expect("invariant: a loadfile's paths fit in 4 GiB");
        to(start)..to(self.text.len())
    }
}

/// Splits a line into at most `MAX_TOKENS` tokens; `"…"` groups one.
fn tokenize<'a>(raw: &'a str, out: &mut [&'a str; MAX_TOKENS]) -> Result<usize, &'static str> {
    let bytes = raw.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t' || bytes[i] == b'\r') {
            i += 1;
        }
        if i == bytes.len() {
            break;
        }
        let (start, end, next) = if bytes[i] == b'"' {
            let close = raw[i + 1..].find('"').ok_or("a quote is not closed")? + i + 1;
            (i + 1, close, close + 1)
        } else {
            let end = raw[i..].find([' ', '\t', '\r']).map_or(bytes.len(), |e| e + i);
            (i, end, end)
        };
        if n == MAX_TOKENS {
            return Err("has more than 19 tokens, dbench's limit");
        }
        out[n] = &raw[start..end];
        n += 1;
        i = next;
    }
    Ok(n)
}

/// The expectation a status token states; None if it is not a status.
fn parse_status(token: &str) -> Option<Expect> {
    if token == "*" {
        return Some(Expect::Any);
    }
    if token == "NT_STATUS_OK" || token == "SUCCESS" {
        return Some(Expect::Success);
    }
    if token.starts_with("NT_STATUS_") || token == "ERROR" {
        return Some(Expect::Failure(None));
    }
    let hex = token.strip_prefix("0x").or_else(|| token.strip_prefix("0X"))?;
    match u32::from_str_radix(hex, 16).ok()? {
        0 => Some(Expect::Success),
        code => Some(Expect::Failure(Some(code))),
    }
}

/// C's `strtoll(token, NULL, 0)`, but the whole token must be a number.
fn parse_number(token: &str) -> Option<i64> {
    let (negative, digits) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token.strip_prefix('+').unwrap_or(token)),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<i64>().ok()?
    };
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> (Loadfile, Line) {
        let file = Loadfile::parse(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let l = file.lines[0].clone();
        (file, l)
    }

    #[test]
    fn every_kind_parses_from_a_literal_line() {
        let lines = [
            r#"Deltree "\clients\client1" NT_STATUS_OK"#,
            r#"Mkdir "\clients" NT_STATUS_OK"#,
            r#"Rmdir "\clients\client1\~dmtmp" NT_STATUS_OK"#,
            r#"NTCreateX "\clients\client1" 0x1 0x2 16385 NT_STATUS_OK"#,
            r#"Close 16385 NT_STATUS_OK"#,
            r#"ReadX 10003 0 4096 4096 NT_STATUS_OK"#,
            r#"WriteX 10002 1835008 32768 32768 NT_STATUS_OK"#,
            r#"Flush 10002 NT_STATUS_OK"#,
            r#"LockX 10430 2147483538 1 NT_STATUS_OK"#,
            r#"UnlockX 10430 2147483538 1 NT_STATUS_OK"#,
            r#"Rename "\clients\client1\~dmtmp\PWRPNT\NEWPCB.PPT" "\clients\client1\~dmtmp\PWRPNT\PPTC112.TMP" NT_STATUS_OK"#,
            r#"Unlink "\clients\client1\~dmtmp\PM\BDES1.PRN" 0x6 NT_STATUS_OK"#,
            r#"QUERY_PATH_INFORMATION "\clients\client1\~dmtmp" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND"#,
            r#"QUERY_FILE_INFORMATION 9938 258 NT_STATUS_OK"#,
            r#"SET_FILE_INFORMATION 9938 1004 NT_STATUS_OK"#,
            r#"QUERY_FS_INFORMATION 259 NT_STATUS_OK"#,
            r#"FIND_FIRST "\clients\client1\~dmtmp\<.JNK" 260 1366 0 NT_STATUS_NO_SUCH_FILE"#,
        ];
        let file = Loadfile::parse(&lines.join("\n")).expect("parses");
        assert_eq!(file.counts().iter().sum::<u64>(), 17);
        assert!(file.counts().iter().all(|&n| n == 1), "every kind once: {:?}", file.counts());
        let create = &file.lines[3];
        assert_eq!(file.text(&create.paths[0]), "/clients/client1");
        assert_eq!(create.numbers, [1, 2, 16385, 0]);
        let rename = &file.lines[10];
        assert_eq!(file.text(&rename.paths[1]), "/clients/client1/~dmtmp/PWRPNT/PPTC112.TMP");
        assert_eq!(file.lines[12].expect, Expect::Failure(None));
        assert_eq!(file.lines[16].numbers, [260, 1366, 0, 0]);
        assert_eq!(file.text(&file.lines[16].paths[0]), "/clients/client1/~dmtmp/<.JNK");
    }

    #[test]
    fn client_paths_are_substituted_per_client_from_zero() {
        let (file, line) = one(r#"Rename "\clients\client1\a" "\clients\client1\b" NT_STATUS_OK"#);
        let mut out = String::new();
        file.resolve(&line, 0, "/srv/x", 0, &mut out);
        assert_eq!(out, "/srv/x/clients/client0/a");
        file.resolve(&line, 1, "", 17, &mut out);
        assert_eq!(out, "/clients/client17/b");
        // Every occurrence, as dbench's all_string_sub does.
        let (file, line) = one(r#"Mkdir "\client1\client1" NT_STATUS_OK"#);
        file.resolve(&line, 0, "", 3, &mut out);
        assert_eq!(out, "/client3/client3");
    }

    #[test]
    fn timestamps_and_numeric_statuses() {
        let (_, line) = one("40.380244000 WriteX 0x2724 0 602 602 0x00000000");
        assert_eq!(line.timestamp_s, Some(40.380244));
        assert_eq!(line.numbers, [0x2724, 0, 602, 602]);
        assert_eq!(line.expect, Expect::Success);
        let (_, line) = one("1.5 Close 7 0xC0000034");
        assert_eq!(line.expect, Expect::Failure(Some(0xC000_0034)));
        let (_, line) = one("Close 7 *");
        assert_eq!(line.expect, Expect::Any);
        let (_, line) = one("Close 010 ERROR");
        assert_eq!((line.numbers[0], line.expect), (8, Expect::Failure(None)));
        let (_, line) = one("close 7 SUCCESS");
        assert_eq!((line.kind, line.expect), (OpKind::Close, Expect::Success));
    }

    #[test]
    fn comments_blank_and_short_lines_are_skipped() {
        let file = Loadfile::parse("# a comment\n\nDeltree\n  Close 1 NT_STATUS_OK\r\n").expect("parses");
        assert_eq!(file.lines.len(), 1);
        assert_eq!(file.lines[0].number, 4);
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        let cases = [
            ("Close 1 OK", "badly formed status 'OK'"),
            ("SMBopenX REQUEST Size 0 Path \\X", "dbench 1"),
            ("READ3 \"/x\" 0 10 0x00000000", "unknown operation 'READ3'"),
            ("LOOP 3", "unknown operation 'LOOP'"),
            ("NTCreateX \"\\x\" 0x40 0x1 NT_STATUS_OK", "NTCreateX takes 1 path(s) and 3 number(s)"),
            ("Close zz NT_STATUS_OK", "'zz' is not a number"),
            ("Rename \"\\a\" NT_STATUS_OK", "Rename takes 2 path(s)"),
            ("Mkdir \"\\a NT_STATUS_OK", "quote is not closed"),
        ];
        for (text, want) in cases {
            let err = Loadfile::parse(&format!("Close 1 NT_STATUS_OK\n{text}")).expect_err(text);
            assert_eq!(err.line, 2, "{text}");
            assert!(err.why.contains(want), "{text}: {}", err.why);
        }
        assert!(Loadfile::parse("# nothing\n").unwrap_err().why.contains("no operation"));
        assert!(
            Loadfile::parse("\"\" NT_STATUS_OK\nClose 1 NT_STATUS_OK").is_err(),
            "an empty token is refused, not a panic"
        );
        assert!(Loadfile::parse(&"x".repeat(2000)).unwrap_err().why.contains("at most 1023"));
    }
}
