//! A virtual user's cookie jar: every `Set-Cookie` of a response stored as
//! its `name=value` (attributes other than an expiring `Max-Age` are not
//! looked at: a script talks to one site), sent back as one `Cookie` header.
//! Fixed capacity, allocated once per slot; a cookie past it is refused, and
//! the step that received it fails.

/// Most cookies a jar holds.
pub const MAX_COOKIES: usize = 32;
/// Most bytes of `name=value` pairs a jar holds.
pub const MAX_COOKIE_BYTES: usize = 4096;

/// The jar is full: the cookie was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

/// One cookie: where its name and value lie in `Jar::bytes`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: usize,
    name: usize,
    value: usize,
}

impl Entry {
    fn end(&self) -> usize {
        self.start + self.name + self.value
    }
}

/// One slot's cookies.
#[derive(Debug, Clone)]
pub struct Jar {
    bytes: Vec<u8>,
    entries: Vec<Entry>,
}

impl Default for Jar {
    fn default() -> Self {
        Self::new()
    }
}

impl Jar {
    /// An empty jar with its whole capacity allocated.
    pub fn new() -> Self {
        Self { bytes: Vec::with_capacity(MAX_COOKIE_BYTES), entries: Vec::with_capacity(MAX_COOKIES) }
    }

    /// Forgets every cookie (a virtual user starting its script again).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.entries.clear();
    }

    /// Cookies held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of cookie `name`, if held.
    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        let e = self.find(name)?;
        Some(&self.bytes[e.start + e.name..e.end()])
    }

    fn find(&self, name: &[u8]) -> Option<Entry> {
        self.entries.iter().copied().find(|e| &self.bytes[e.start..e.start + e.name] == name)
    }

    /// Takes one `Set-Cookie` value: `name=value[; attributes]`. A value
    /// without `=` or with an empty name is ignored (RFC 6265 §5.2); one
    /// with `Max-Age` of zero or less removes the cookie.
    pub fn set_cookie(&mut self, header: &[u8]) -> Result<(), Full> {
        let mut parts = header.split(|&b| b == b';');
        let pair = parts.next().unwrap_or_default();
        let Some(eq) = pair.iter().position(|&b| b == b'=') else { return Ok(()) };
        let (name, value) = (pair[..eq].trim_ascii(), pair[eq + 1..].trim_ascii());
        if name.is_empty() {
            return Ok(());
        }
        let expired = parts.any(|attr| {
            let attr = attr.trim_ascii();
            attr.len() > 8
                && attr[..8].eq_ignore_ascii_case(b"max-age=")
                && (attr[8] == b'-' || attr[8..].iter().all(|&b| b == b'0'))
        });
        self.remove(name);
        if expired {
            return Ok(());
        }
        if self.entries.len() == MAX_COOKIES || self.bytes.len() + name.len() + value.len() > MAX_COOKIE_BYTES {
            return Err(Full);
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
        self.entries.push(Entry { start, name: name.len(), value: value.len() });
        Ok(())
    }

    /// Takes every `Set-Cookie` value of a response, one per line (as the
    /// decoder captures them); the first refused one ends it.
    pub fn set_cookies(&mut self, lines: &[u8]) -> Result<(), Full> {
        for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            self.set_cookie(line)?;
        }
        Ok(())
    }

    fn remove(&mut self, name: &[u8]) {
        let Some(at) = self.entries.iter().position(|e| &self.bytes[e.start..e.start + e.name] == name) else {
            return;
        };
        let gone = self.entries.remove(at);
        let width = gone.end() - gone.start;
        self.bytes.copy_within(gone.end().., gone.start);
        self.bytes.truncate(self.bytes.len() - width);
        for e in &mut self.entries[at..] {
            e.start -= width;
        }
    }

    /// Appends `Cookie: a=1; b=2\r\n` to `out`, or nothing when empty.
    pub fn write_header(&self, out: &mut Vec<u8>) {
        if self.entries.is_empty() {
            return;
        }
        out.extend_from_slice(b"Cookie: ");
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b"; ");
            }
            out.extend_from_slice(&self.bytes[e.start..e.start + e.name]);
            out.push(b'=');
            out.extend_from_slice(&self.bytes[e.start + e.name..e.end()]);
        }
        out.extend_from_slice(b"\r\n");
    }

    /// Bytes `write_header` writes.
    pub fn header_len(&self) -> usize {
        if self.entries.is_empty() {
            return 0;
        }
        let pairs: usize = self.entries.iter().map(|e| e.name + e.value + 1).sum();
        "Cookie: ".len() + pairs + 2 * (self.entries.len() - 1) + 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(jar: &Jar) -> String {
        let mut out = Vec::new();
        jar.write_header(&mut out);
        assert_eq!(out.len(), jar.header_len());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn stores_replaces_and_sends_cookies_in_order() {
        let mut jar = Jar::new();
        assert_eq!(header(&jar), "");
        jar.set_cookies(b"sid=abc; Path=/; HttpOnly\nlang=en\n").unwrap();
        assert_eq!(header(&jar), "Cookie: sid=abc; lang=en\r\n");
        jar.set_cookie(b"sid=xyz2; Secure").unwrap();
        assert_eq!(header(&jar), "Cookie: lang=en; sid=xyz2\r\n");
        assert_eq!(jar.get(b"sid"), Some(&b"xyz2"[..]));
        jar.set_cookie(b" theme = dark ").unwrap();
        assert_eq!(jar.get(b"theme"), Some(&b"dark"[..]));
        jar.set_cookie(b"lang=; Max-Age=0").unwrap();
        jar.set_cookie(b"theme=x; max-age=-1").unwrap();
        assert_eq!(header(&jar), "Cookie: sid=xyz2\r\n");
        jar.set_cookie(b"noequals; Path=/").unwrap();
        jar.set_cookie(b"=anon").unwrap();
        jar.set_cookie(b"empty=").unwrap();
        assert_eq!(header(&jar), "Cookie: sid=xyz2; empty=\r\n");
        jar.clear();
        assert!(jar.is_empty());
        assert_eq!(header(&jar), "");
    }

    #[test]
    fn capacity_is_fixed() {
        let mut jar = Jar::new();
        let (bytes, entries) = (jar.bytes.capacity(), jar.entries.capacity());
        for n in 0..MAX_COOKIES {
            jar.set_cookie(format!("c{n}=v").as_bytes()).unwrap();
        }
        assert_eq!(jar.set_cookie(b"one=more"), Err(Full));
        // Replacing a held cookie still fits.
        jar.set_cookie(b"c0=w").unwrap();
        assert_eq!(jar.len(), MAX_COOKIES);
        jar.clear();
        let big = vec![b'v'; MAX_COOKIE_BYTES];
        let mut line = b"big=".to_vec();
        line.extend_from_slice(&big);
        assert_eq!(jar.set_cookie(&line), Err(Full));
        assert_eq!((jar.bytes.capacity(), jar.entries.capacity()), (bytes, entries));
    }
}
