//! Scripted sessions: each connection is a virtual user that plays a
//! script's steps in order, again and again. A step's method, path, headers
//! and body are templates over the user's CSV row and the values earlier
//! steps extracted from their responses; a cookie jar per user carries what
//! the server set. Each step is a class of the results.
//!
//! Sans-IO like `specweb99`: `Script` (built once in the plan) compiles the
//! templates and finders; a `User` (one per slot, allocated once) holds the
//! step it is at, its extracted values, its jar and its request buffer. The
//! slot asks the script to `write` the step's request and to `judge` the
//! response; after a step fails (its status, an extraction that misses, a
//! full jar, or no response at all) the user starts again from step 1 with
//! an empty jar and no extracted values.

pub mod extract;
pub mod jar;
pub mod template;

use std::fmt;
use std::time::Duration;

use regex::bytes::CaptureLocations;

use crate::config::HttpVersion;
pub use crate::config::{ExtractConfig, ScriptConfig, StepConfig};
use crate::protocol::encode::{connection_line, version_token, USER_AGENT};
pub use extract::{Finder, FinderError};
pub use jar::Jar;
pub use template::{Template, TemplateError, Values};

/// Most body bytes a step with extractions looks at (each slot holds one
/// buffer of this size); a value past it is not found.
pub const BODY_CAPTURE_BYTES: usize = 64 * 1024;
/// Longest extracted value kept; a longer one fails its step.
pub const MAX_VALUE_BYTES: usize = 4096;
/// Longest variable name (the failure messages carry it inline).
pub const MAX_NAME_BYTES: usize = 32;
/// Most steps in a script.
pub const MAX_STEPS: usize = 256;
/// Room first reserved in each slot's request buffer.
const REQUEST_CAPACITY: usize = 8 * 1024;

/// A step, compiled.
#[derive(Debug, Clone)]
struct Step {
    method: String,
    path: Template,
    headers: Vec<(String, Template)>,
    /// The step sets `Host` or `User-Agent` itself.
    own_host: bool,
    own_agent: bool,
    body: Option<Template>,
    think: Duration,
    expect_status: Option<u16>,
    /// (variable index, finder), in order.
    extract: Vec<(usize, Finder)>,
}

/// A script, compiled once for the run.
#[derive(Debug, Clone)]
pub struct Script {
    steps: Vec<Step>,
    /// Every variable: the CSV columns first, then the extracted names.
    names: Vec<String>,
    columns: usize,
    users: Vec<Vec<String>>,
    first_user: u32,
    version: HttpVersion,
}

/// Why a script is refused: one line, naming the step and what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError(pub String);

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && name.len() <= MAX_NAME_BYTES
}

fn valid_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Headers the engine writes itself.
const OWN_HEADERS: [&str; 4] = ["content-length", "transfer-encoding", "connection", "cookie"];

impl Script {
    /// Compiles `config` for requests of `version`; the error says which step and what to fix.
    pub fn compile(config: &ScriptConfig, version: HttpVersion) -> Result<Self, ScriptError> {
        let fail = |msg: String| Err(ScriptError(msg));
        if config.steps.is_empty() || config.steps.len() > MAX_STEPS {
            return fail(format!("a script has 1 to {MAX_STEPS} steps (got {})", config.steps.len()));
        }
        let mut names: Vec<String> = Vec::new();
        for name in &config.variables {
            if !valid_name(name) {
                return fail(format!(
                    "CSV column {name:?} is no variable name: use letters, digits and '_' (at most {MAX_NAME_BYTES}, not starting with a digit)"
                ));
            }
            if names.contains(name) {
                return fail(format!("CSV column {name:?} appears twice"));
            }
            names.push(name.clone());
        }
        if !config.variables.is_empty() && config.users.is_empty() {
            return fail("the users CSV has a header but no rows: add one row per user".into());
        }
        for (i, row) in config.users.iter().enumerate() {
            if row.len() != config.variables.len() {
                return fail(format!(
                    "users CSV row {} has {} values where the header names {} columns",
                    i + 1,
                    row.len(),
                    config.variables.len()
                ));
            }
        }
        let columns = names.len();
        let mut steps = Vec::with_capacity(config.steps.len());
        let mut classes: Vec<&str> = Vec::new();
        for (i, s) in config.steps.iter().enumerate() {
            let at = format!("step {} ({})", i + 1, s.name);
            if s.name.is_empty() || classes.contains(&s.name.as_str()) {
                return fail(format!("{at}: each step needs a name of its own (its class in the results)"));
            }
            classes.push(&s.name);
            if !valid_token(&s.method) {
                return fail(format!("{at}: method {:?} is not an HTTP method token", s.method));
            }
            if !s.path.starts_with('/') {
                return fail(format!("{at}: path {:?} must start with '/'", s.path));
            }
            if !(s.think_s.is_finite() && s.think_s >= 0.0) {
                return fail(format!("{at}: think_s must be 0 or more seconds (got {})", s.think_s));
            }
            if let Some(status) = s.expect_status {
                if !(100..=599).contains(&status) || (100..200).contains(&status) {
                    return fail(format!("{at}: expect_status must be 200 to 599 (got {status})"));
                }
            }
            let known = |name: &str| names.iter().position(|n| n == name);
            let compile = |what: &str, source: &str| {
                Template::compile(source, known).map_err(|e| ScriptError(format!("{at} {what}: {e}")))
            };
            let path = compile("path", &s.path)?;
            let mut headers = Vec::with_capacity(s.headers.len());
            for (name, value) in &s.headers {
                if !valid_token(name) {
                    return fail(format!("{at}: header name {name:?} is not a token"));
                }
                if OWN_HEADERS.iter().any(|own| name.eq_ignore_ascii_case(own)) {
                    return fail(format!(
                        "{at}: header {name:?} is crest's to write (Content-Length from the body, Cookie from the jar)"
                    ));
                }
                if value.contains(['\r', '\n']) {
                    return fail(format!("{at}: header {name:?} has a line break in its value"));
                }
                headers.push((name.clone(), compile(&format!("header {name}"), value)?));
            }
            let own = |h: &str| s.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(h));
            let body = s.body.as_deref().map(|b| compile("body", b)).transpose()?;
            let mut extract = Vec::with_capacity(s.extract.len());
            for e in &s.extract {
                let what = format!("{at} extract {}", e.name);
                if !valid_name(&e.name) {
                    return fail(format!(
                        "{what}: not a variable name: use letters, digits and '_' (at most {MAX_NAME_BYTES}, not starting with a digit)"
                    ));
                }
                if names[..columns].contains(&e.name) {
                    return fail(format!("{what}: a CSV column has that name; extract into another"));
                }
                let finder = match (&e.regex, &e.json) {
                    (Some(re), None) => Finder::regex(re),
                    (None, Some(pointer)) => Finder::json(pointer),
                    _ => return fail(format!("{what}: give exactly one of regex and json")),
                }
                .map_err(|err| ScriptError(format!("{what}: {err}")))?;
                let var = match names.iter().position(|n| *n == e.name) {
                    Some(v) => v,
                    None => {
                        names.push(e.name.clone());
                        names.len() - 1
                    }
                };
                extract.push((var, finder));
            }
            steps.push(Step {
                method: s.method.clone(),
                path,
                headers,
                own_host: own("host"),
                own_agent: own("user-agent"),
                body,
                think: Duration::from_secs_f64(s.think_s),
                expect_status: s.expect_status,
                extract,
            });
        }
        Ok(Self { steps, names, columns, users: config.users.clone(), first_user: config.first_user, version })
    }

    /// The class names: each step's.
    pub fn class_names(config: &ScriptConfig) -> Vec<String> {
        config.steps.iter().map(|s| s.name.clone()).collect()
    }

    /// Steps in the script.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether it has no steps (never, once compiled).
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether any step extracts (the slot then keeps the first body bytes).
    pub fn extracts(&self) -> bool {
        self.steps.iter().any(|s| !s.extract.is_empty())
    }

    /// Whether step `step` reads its body (the decoder keeps it).
    pub fn step_extracts(&self, step: usize) -> bool {
        !self.steps[step].extract.is_empty()
    }

    /// Whether step `step` asks for HEAD (its response has no body).
    pub fn is_head(&self, step: usize) -> bool {
        self.steps[step].method == "HEAD"
    }

    /// The pause after step `step`'s response.
    pub fn think(&self, step: usize) -> Duration {
        self.steps[step].think
    }

    /// The status step `step`'s response must have (None: any 2xx or 3xx);
    /// the stats judge it (a `status` error otherwise).
    pub fn expect_status(&self, step: usize) -> Option<u16> {
        self.steps[step].expect_status
    }

    /// The state of the run's connection `index` (allocated here, once).
    pub fn user(&self, index: u32) -> User {
        let global = self.first_user.wrapping_add(index) as usize;
        let row = if self.users.is_empty() { 0 } else { global % self.users.len() };
        let locs = self.steps.iter().flat_map(|s| s.extract.iter().map(|(_, f)| f.locations())).collect();
        User {
            step: 0,
            row,
            values: (self.columns..self.names.len()).map(|_| Vec::with_capacity(MAX_VALUE_BYTES)).collect(),
            locs,
            jar: Jar::new(),
            request: Vec::with_capacity(REQUEST_CAPACITY),
        }
    }

    /// Replaces `user.request` with the request of its current step; `host`
    /// is the `Host` value, `last` says no keep-alive is asked for.
    pub fn write(&self, user: &mut User, host: &str, last: bool) {
        let step = &self.steps[user.step];
        let mut out = std::mem::take(&mut user.request);
        out.clear();
        let vals = View { script: self, user };
        out.extend_from_slice(step.method.as_bytes());
        out.push(b' ');
        step.path.write(&mut out, &vals);
        out.push(b' ');
        out.extend_from_slice(version_token(self.version).as_bytes());
        out.extend_from_slice(b"\r\n");
        if !step.own_host {
            out.extend_from_slice(b"Host: ");
            out.extend_from_slice(host.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        if !step.own_agent {
            out.extend_from_slice(USER_AGENT.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        if let Some(line) = connection_line(self.version, !last) {
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        for (name, value) in &step.headers {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            value.write(&mut out, &vals);
            out.extend_from_slice(b"\r\n");
        }
        user.jar.write_header(&mut out);
        if let Some(body) = &step.body {
            out.extend_from_slice(b"Content-Length: ");
            push_decimal(&mut out, body.len(&vals));
            out.extend_from_slice(b"\r\n\r\n");
            body.write(&mut out, &vals);
        } else {
            out.extend_from_slice(b"\r\n");
        }
        user.request = out;
    }

    /// Judges the response to the user's current step (its status, the
    /// first body bytes kept, its `Set-Cookie` values one per line), stores
    /// its cookies and extracted values, and moves the user on: to the next
    /// step, or back to step 1 when this one failed. `Err` is a failure for
    /// the results (a validation error); a status other than the step's
    /// `expect_status` (or outside 2xx/3xx without one) fails the step too,
    /// but the stats count that one (see `expect_status`).
    pub fn judge(&self, user: &mut User, status: u16, body: &[u8], cookies: &[u8]) -> Result<(), Invalid> {
        let verdict = self.check(user, status, body, cookies);
        let failed = verdict.is_err() || !self.status_ok(user.step, status);
        if failed {
            self.restart(user);
        } else {
            user.step = (user.step + 1) % self.steps.len();
            if user.step == 0 {
                self.restart(user);
            }
        }
        verdict
    }

    fn check(&self, user: &mut User, status: u16, body: &[u8], cookies: &[u8]) -> Result<(), Invalid> {
        if user.jar.set_cookies(cookies).is_err() {
            return Err(Invalid::JarFull);
        }
        if !self.status_ok(user.step, status) {
            return Ok(()); // the stats' to count; nothing is extracted from it
        }
        let step = &self.steps[user.step];
        let first_loc: usize = self.steps[..user.step].iter().map(|s| s.extract.len()).sum();
        for (k, (var, finder)) in step.extract.iter().enumerate() {
            let out = &mut user.values[var - self.columns];
            let found = finder.find(body, user.locs[first_loc + k].as_mut(), out);
            let name = Name::of(&self.names[*var]);
            if !found {
                out.clear();
                return Err(Invalid::NoMatch(name));
            }
            if out.len() > MAX_VALUE_BYTES {
                out.clear();
                return Err(Invalid::TooLong(name));
            }
        }
        Ok(())
    }

    fn status_ok(&self, step: usize, status: u16) -> bool {
        match self.steps[step].expect_status {
            Some(want) => status == want,
            None => (200..400).contains(&status),
        }
    }

    /// The user starts again from step 1: no cookies, no extracted values
    /// (after a failure, and after the last step).
    pub fn restart(&self, user: &mut User) {
        user.step = 0;
        user.jar.clear();
        for v in &mut user.values {
            v.clear();
        }
    }
}

/// Appends `n` in decimal (no allocation).
fn push_decimal(out: &mut Vec<u8>, n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// One virtual user's state: which step it is at, its CSV row, its
/// extracted values, its scratch for regexes, its jar and request buffer.
#[derive(Debug)]
pub struct User {
    /// The step whose request is written next (0-based): its class.
    pub step: usize,
    row: usize,
    values: Vec<Vec<u8>>,
    locs: Vec<Option<CaptureLocations>>,
    /// Its cookies.
    pub jar: Jar,
    /// The current step's request.
    pub request: Vec<u8>,
}

/// A script's values as one user sees them.
struct View<'a> {
    script: &'a Script,
    user: &'a User,
}

impl Values for View<'_> {
    fn value(&self, n: usize) -> &[u8] {
        match n.checked_sub(self.script.columns) {
            None => self.script.users.get(self.user.row).map_or(&[], |row| row[n].as_bytes()),
            Some(v) => &self.user.values[v],
        }
    }
}

/// A variable's name, held inline (names are at most `MAX_NAME_BYTES`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Name {
    bytes: [u8; MAX_NAME_BYTES],
    len: u8,
}

impl Name {
    fn of(name: &str) -> Self {
        let mut bytes = [0; MAX_NAME_BYTES];
        let len = name.len().min(MAX_NAME_BYTES);
        bytes[..len].copy_from_slice(&name.as_bytes()[..len]);
        Self { bytes, len: len as u8 }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("?")
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a step's response fails. Formats itself; no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// An extraction found nothing.
    NoMatch(Name),
    /// An extracted value longer than `MAX_VALUE_BYTES`.
    TooLong(Name),
    /// A cookie that does not fit the jar.
    JarFull,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoMatch(name) => write!(f, "extract {}: no match", name.as_str()),
            Self::TooLong(name) => write!(f, "extract {}: value longer than {MAX_VALUE_BYTES} bytes", name.as_str()),
            Self::JarFull => write!(
                f,
                "cookie jar full ({} cookies or {} bytes of name=value)",
                jar::MAX_COOKIES,
                jar::MAX_COOKIE_BYTES
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> ScriptConfig {
        serde_json::from_str(json).unwrap()
    }

    fn login() -> ScriptConfig {
        config(
            r#"{"variables": ["user", "pass"], "users": [["alice", "a1"], ["bob", "b2"]],
                "steps": [
                  {"name": "login", "method": "POST", "path": "/login", "body": "u={{user}}&p={{pass}}",
                   "headers": [["Content-Type", "application/x-www-form-urlencoded"]],
                   "extract": [{"name": "token", "regex": "token=(\\w+)"}, {"name": "id", "json": "/id"}]},
                  {"name": "home", "path": "/home/{{id}}?t={{token}}", "think_s": 0.5,
                   "headers": [["X-Token", "{{token}}"]], "expect_status": 200}
                ]}"#,
        )
    }

    const UA: &str = concat!("User-Agent: crest/", env!("CARGO_PKG_VERSION"));

    fn request(user: &User) -> String {
        String::from_utf8(user.request.clone()).unwrap()
    }

    #[test]
    fn a_login_then_a_page_with_what_it_gave() {
        let script = Script::compile(&login(), HttpVersion::Http11).unwrap();
        assert_eq!(Script::class_names(&login()), ["login", "home"]);
        assert!(script.extracts() && script.step_extracts(0) && !script.step_extracts(1));
        let mut user = script.user(1);
        script.write(&mut user, "app:8080", false);
        assert_eq!(
            request(&user),
            format!(
                "POST /login HTTP/1.1\r\nHost: app:8080\r\n{UA}\r\n\
                 Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\n\r\nu=bob&p=b2"
            )
        );
        let body = br#"{"id": 7, "note": "token=xyz9"}"#;
        assert_eq!(script.judge(&mut user, 200, body, b"sid=s1; Path=/\nlang=en\n"), Ok(()));
        assert_eq!(user.step, 1);
        script.write(&mut user, "app:8080", true);
        assert_eq!(
            request(&user),
            format!(
                "GET /home/7?t=xyz9 HTTP/1.1\r\nHost: app:8080\r\n{UA}\r\nConnection: close\r\n\
                 X-Token: xyz9\r\nCookie: sid=s1; lang=en\r\n\r\n"
            )
        );
        assert_eq!(script.think(1), Duration::from_millis(500));
        // The last step done: the user starts again, with nothing kept.
        assert_eq!(script.judge(&mut user, 200, b"", b""), Ok(()));
        assert_eq!(user.step, 0);
        assert!(user.jar.is_empty());
        // Connection 0 is alice, and the row wraps.
        let mut alice = script.user(2);
        script.write(&mut alice, "h", false);
        assert!(request(&alice).ends_with("u=alice&p=a1"), "{}", request(&alice));
    }

    #[test]
    fn a_miss_fails_the_step_and_restarts_the_user() {
        let script = Script::compile(&login(), HttpVersion::Http11).unwrap();
        let mut user = script.user(0);
        let verdict = script.judge(&mut user, 200, br#"{"id": 7}"#, b"sid=s1\n");
        assert_eq!(verdict.unwrap_err().to_string(), "extract token: no match");
        assert_eq!(user.step, 0);
        assert!(user.jar.is_empty());
        let verdict = script.judge(&mut user, 200, b"token=abc", b"");
        assert_eq!(verdict.unwrap_err().to_string(), "extract id: no match");
        // A status other than the one expected (the stats count it): the user starts again.
        script.judge(&mut user, 200, br#"{"id": 1, "t": "token=a"}"#, b"").unwrap();
        assert_eq!(user.step, 1);
        assert_eq!(script.expect_status(1), Some(200));
        assert_eq!(script.judge(&mut user, 404, b"", b""), Ok(()));
        assert_eq!(user.step, 0);
        script.judge(&mut user, 200, br#"{"id": 1, "t": "token=a"}"#, b"").unwrap();
        assert_eq!(script.judge(&mut user, 201, b"", b""), Ok(()));
        assert_eq!(user.step, 0);
        assert_eq!(script.judge(&mut user, 500, b"", b""), Ok(()));
        assert_eq!(user.step, 0);
        let long = format!(r#"{{"id": "{}", "x": "token=a"}}"#, "9".repeat(MAX_VALUE_BYTES + 1));
        assert_eq!(
            script.judge(&mut user, 200, long.as_bytes(), b"").unwrap_err().to_string(),
            format!("extract id: value longer than {MAX_VALUE_BYTES} bytes")
        );
    }

    #[test]
    fn http_1_0_asks_for_keep_alive_and_no_body_means_no_length() {
        let c = config(r#"{"steps": [{"name": "a", "path": "/x", "method": "HEAD", "headers": [["Host", "other"]]}]}"#);
        let script = Script::compile(&c, HttpVersion::Http10).unwrap();
        assert!(script.is_head(0) && !script.extracts());
        let mut user = script.user(0);
        script.write(&mut user, "h", false);
        assert_eq!(
            request(&user),
            format!("HEAD /x HTTP/1.0\r\n{UA}\r\nConnection: keep-alive\r\nHost: other\r\n\r\n")
        );
    }

    fn refusal(json: &str) -> String {
        Script::compile(&config(json), HttpVersion::Http11).unwrap_err().0
    }

    #[test]
    fn refusals_name_the_step_and_the_fix() {
        let cases = [
            (r#"{"steps": []}"#, "a script has 1 to 256 steps (got 0)"),
            (
                r#"{"steps": [{"name": "a", "path": "/{{who}}"}]}"#,
                "step 1 (a) path: 'who' is no CSV column and no value an earlier step extracts",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/{{t}}", "extract": [{"name": "t", "regex": "x"}]}]}"#,
                "step 1 (a) path: 't' is no CSV column and no value an earlier step extracts",
            ),
            (r#"{"steps": [{"name": "a", "path": "x"}]}"#, "step 1 (a): path \"x\" must start with '/'"),
            (
                r#"{"steps": [{"name": "a", "path": "/"}, {"name": "a", "path": "/"}]}"#,
                "step 2 (a): each step needs a name of its own (its class in the results)",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/", "extract": [{"name": "t", "regex": "(x"}]}]}"#,
                "step 1 (a) extract t: bad regular expression: unclosed group",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/", "extract": [{"name": "t", "json": "x"}]}]}"#,
                "step 1 (a) extract t: bad JSON pointer: it must start with '/' (or be empty for the whole body)",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/", "extract": [{"name": "t"}]}]}"#,
                "step 1 (a) extract t: give exactly one of regex and json",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/", "headers": [["Cookie", "x=1"]]}]}"#,
                "step 1 (a): header \"Cookie\" is crest's to write (Content-Length from the body, Cookie from the jar)",
            ),
            (
                r#"{"variables": ["u"], "users": [["a", "b"]], "steps": [{"name": "a", "path": "/"}]}"#,
                "users CSV row 1 has 2 values where the header names 1 columns",
            ),
            (
                r#"{"variables": ["u"], "users": [], "steps": [{"name": "a", "path": "/"}]}"#,
                "the users CSV has a header but no rows: add one row per user",
            ),
            (
                r#"{"variables": ["user name"], "users": [["a"]], "steps": [{"name": "a", "path": "/"}]}"#,
                "CSV column \"user name\" is no variable name: use letters, digits and '_' (at most 32, not starting with a digit)",
            ),
            (r#"{"steps": [{"name": "a", "path": "/", "think_s": -1}]}"#, "step 1 (a): think_s must be 0 or more seconds (got -1)"),
            (r#"{"steps": [{"name": "a", "path": "/", "method": "G T"}]}"#, "step 1 (a): method \"G T\" is not an HTTP method token"),
        ];
        for (json, want) in cases {
            assert_eq!(refusal(json), want, "{json}");
        }
    }

    #[test]
    fn a_user_writes_and_judges_without_allocating_after_its_first_pass() {
        // The buffers keep their capacity: the second pass reuses the first's.
        let script = Script::compile(&login(), HttpVersion::Http11).unwrap();
        let mut user = script.user(0);
        let body = br#"{"id": 7, "note": "token=xyz9"}"#;
        let mut caps = None;
        for _ in 0..3 {
            script.write(&mut user, "h", false);
            script.judge(&mut user, 200, body, b"sid=1\n").unwrap();
            script.write(&mut user, "h", false);
            script.judge(&mut user, 200, b"", b"").unwrap();
            let now = (user.request.capacity(), user.values.iter().map(Vec::capacity).collect::<Vec<_>>());
            assert_eq!(*caps.get_or_insert_with(|| now.clone()), now);
        }
    }

    #[test]
    fn the_decoder_keeps_every_cookie_and_the_body_split_anywhere() {
        use crate::protocol::ResponseDecoder;
        let script = Script::compile(&login(), HttpVersion::Http11).unwrap();
        let wire: &[u8] = b"HTTP/1.1 100 Continue\r\nSet-Cookie: interim=1\r\n\r\n\
            HTTP/1.1 200 OK\r\nSet-Cookie: sid=s1; Path=/\r\nContent-Type: application/json\r\n\
            set-cookie: lang=en\r\nTransfer-Encoding: chunked\r\n\r\n\
            9\r\n{\"id\": 7,\r\n16\r\n \"note\": \"token=xyz9\"}\r\n0\r\n\r\n";
        for split in 0..=wire.len() {
            let mut decoder = ResponseDecoder::new(64 * 1024, 1 << 20, false);
            decoder.set_cookie_capture();
            decoder.set_capture(BODY_CAPTURE_BYTES);
            let mut response = None;
            for part in [&wire[..split], &wire[split..]] {
                let mut off = 0;
                while off < part.len() {
                    let (used, done) = decoder.decode(&part[off..]).unwrap();
                    off += used;
                    response = response.or(done);
                }
            }
            let response = response.unwrap_or_else(|| panic!("no response at split {split}"));
            assert_eq!(decoder.captured_cookies(), b"sid=s1; Path=/\nlang=en\n", "split {split}");
            let mut user = script.user(0);
            script.judge(&mut user, response.status, decoder.captured(), decoder.captured_cookies()).unwrap();
            script.write(&mut user, "h", false);
            let text = request(&user);
            assert!(text.starts_with("GET /home/7?t=xyz9 ") && text.contains("Cookie: sid=s1; lang=en\r\n"), "{text}");
        }
    }

    #[test]
    fn decimal() {
        for n in [0, 7, 10, 65_536, usize::MAX] {
            let mut out = Vec::new();
            push_decimal(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }
}
