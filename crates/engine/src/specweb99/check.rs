//! Judges a SPECweb99 response (reference §1.7, §2.3, §2.4), sans-IO and
//! allocation-free: body slices are fed as the decoder yields them, split
//! anywhere, and scanned line by line through a fixed 160-byte line buffer
//! (longer lines are not interesting: no header line or tag is that long).
//! It owns only the verdict; the slot feeds it, records the verdict and
//! keeps the connection's last ad.
//!
//! * The header line `^ *(\d+) file_set/dirNNNNN/classC_F$` must name the
//!   requested file: as the first line of a static file, whose body is then
//!   exactly the stated size; as some line of a dynamic page (after `<pre>`),
//!   whose body then holds at least the line's offset plus the stated size.
//! * A CAD response names its ad in `Set-Cookie: found_cookie=Ad_id=<ad>&…`
//!   (0..359); in class 1 and 2 files every `<!WEB99CAD>` tag must name that
//!   ad's file, and there must be one. A tag cut short by its line's end
//!   (the file's last line, truncated to its size) must be a prefix of it.
//!   The ad is only known from the head, so tags are remembered (the first
//!   whole one, whether the others equal it, the cut one) and judged at the end.

use std::fmt::{self, Write as _};

use super::{FileId, Op, ADS};

/// Longest line looked at.
pub const LINE_MAX: usize = 160;

/// What starts a custom-ad tag's file path.
const TAG_PREFIX: &[u8] = b"<!WEB99CAD><IMG SRC=\"/file_set/dir";
/// What follows the prefix in a tag: `%05d/class%d_%d"><!/WEB99CAD>`.
const TAG_TAIL: usize = 28;
/// `file_set/dirNNNNN/classC_F` (directories are at most 5 digits).
const NAME_MAX: usize = 32;

/// Why a response fails SPECweb99's checks. Formats itself (no allocation
/// until a first error's message is kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// A 2xx/3xx status other than 200.
    Status(u16),
    /// No header line naming a file: for static files, the first line.
    NoHeader {
        /// The request was for a static file.
        first_line: bool,
    },
    /// The header line names another file.
    WrongFile(FileId),
    /// A static body whose length is not the stated size.
    Length {
        /// Body bytes received.
        got: u64,
        /// Size the header line states.
        stated: u64,
    },
    /// A dynamic body that ends before the file it wraps.
    Short {
        /// Body bytes received.
        got: u64,
        /// Offset of the header line plus the stated size.
        needed: u64,
    },
    /// A CAD response without `Set-Cookie: found_cookie=Ad_id=…`.
    NoAdCookie,
    /// A CAD response naming an ad outside 0..359.
    BadAd(i64),
    /// A class 1 or 2 CAD file without any ad tag.
    NoTag,
    /// A tag that does not name the ad's file.
    TagWrong(u32),
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Status(s) => write!(f, "status {s} where SPECweb99 wants 200"),
            Self::NoHeader { first_line: true } => f.write_str("the first line is not '<size> file_set/...'"),
            Self::NoHeader { first_line: false } => f.write_str("no '<size> file_set/...' line in the body"),
            Self::WrongFile(want) => write!(f, "the body's header line names another file than {want}"),
            Self::Length { got, stated } => write!(f, "body of {got} bytes where its header line states {stated}"),
            Self::Short { got, needed } => {
                write!(f, "body of {got} bytes ends before the file it wraps ({needed} bytes needed)")
            }
            Self::NoAdCookie => f.write_str("no 'Set-Cookie: found_cookie=Ad_id=...' in a custom-ad response"),
            Self::BadAd(ad) => write!(f, "Set-Cookie names Ad_id {ad}, not one of 0..359"),
            Self::NoTag => f.write_str("no <!WEB99CAD> tag in a class 1 or 2 file"),
            Self::TagWrong(ad) => write!(f, "a <!WEB99CAD> tag does not name ad {ad}'s {}", FileId::of_ad(ad)),
        }
    }
}

/// Text formatted into a fixed array (truncated past `N`).
#[derive(Clone, Copy)]
struct Fixed<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Fixed<N> {
    const EMPTY: Self = Self { bytes: [0; N], len: 0 };

    fn of(args: fmt::Arguments<'_>) -> Self {
        let mut out = Self::EMPTY;
        let _ = out.write_fmt(args);
        out
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn set(&mut self, bytes: &[u8]) {
        self.len = bytes.len().min(N);
        self.bytes[..self.len].copy_from_slice(&bytes[..self.len]);
    }
}

impl<const N: usize> fmt::Write for Fixed<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let take = s.len().min(N - self.len);
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

/// The checks of one response at a time; one per slot, reused.
#[derive(Clone)]
pub struct BodyCheck {
    op: Op,
    expected: FileId,
    name: Fixed<NAME_MAX>,
    line: [u8; LINE_MAX],
    len: usize,
    /// The current line is longer than `LINE_MAX`.
    long: bool,
    /// Body offset of the current line, and of the next byte.
    line_start: u64,
    offset: u64,
    /// Complete lines seen.
    lines: u64,
    /// The header line: its offset and the size it states.
    header: Option<(u64, u64)>,
    /// The first header line seen named another file.
    wrong_file: bool,
    tags: u32,
    first_tag: Fixed<TAG_TAIL>,
    tags_differ: bool,
    /// Tags cut short by their line's end, and the last of them.
    cut_tags: u32,
    cut_tag: Fixed<TAG_TAIL>,
}

impl BodyCheck {
    /// A checker waiting for `start`.
    pub fn new() -> Self {
        Self {
            op: Op::Static,
            expected: FileId { dir: 0, class: 0, file: 0 },
            name: Fixed::EMPTY,
            line: [0; LINE_MAX],
            len: 0,
            long: false,
            line_start: 0,
            offset: 0,
            lines: 0,
            header: None,
            wrong_file: false,
            tags: 0,
            first_tag: Fixed::EMPTY,
            tags_differ: false,
            cut_tags: 0,
            cut_tag: Fixed::EMPTY,
        }
    }

    /// Expects the response to a request of kind `op` for `file`.
    pub fn start(&mut self, op: Op, file: FileId) {
        *self = Self { op, expected: file, name: Fixed::of(format_args!("{file}")), ..Self::new() };
    }

    /// Takes the next body bytes.
    pub fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let end = data.iter().position(|&b| b == b'\n');
            let piece = &data[..end.unwrap_or(data.len())];
            if !self.long {
                if self.len + piece.len() <= LINE_MAX {
                    self.line[self.len..self.len + piece.len()].copy_from_slice(piece);
                    self.len += piece.len();
                } else {
                    self.long = true;
                }
            }
            self.offset += piece.len() as u64;
            let Some(end) = end else { return };
            self.offset += 1;
            self.end_line();
            self.line_start = self.offset;
            data = &data[end + 1..];
        }
    }

    /// The verdict once the body has ended with `body_bytes` bytes; `ad` is
    /// what `ad_id` read from the response's `Set-Cookie` (CAD only).
    pub fn finish(&mut self, body_bytes: u64, ad: Option<i64>) -> Result<(), Invalid> {
        if self.len > 0 || self.long {
            self.end_line();
        }
        let first_line = self.op == Op::Static;
        let Some((at, stated)) = self.header else {
            return Err(if self.wrong_file {
                Invalid::WrongFile(self.expected)
            } else {
                Invalid::NoHeader { first_line }
            });
        };
        if first_line && body_bytes != stated {
            return Err(Invalid::Length { got: body_bytes, stated });
        }
        let needed = at.saturating_add(stated);
        if !first_line && body_bytes < needed {
            return Err(Invalid::Short { got: body_bytes, needed });
        }
        if self.op != Op::Cad {
            return Ok(());
        }
        let ad = ad.ok_or(Invalid::NoAdCookie)?;
        let ad = u32::try_from(ad).ok().filter(|&a| a < ADS).ok_or(Invalid::BadAd(ad))?;
        if !matches!(self.expected.class, 1 | 2) {
            return Ok(());
        }
        if self.tags + self.cut_tags == 0 {
            return Err(Invalid::NoTag);
        }
        let named = FileId::of_ad(ad);
        let want: Fixed<TAG_TAIL> =
            Fixed::of(format_args!("{:05}/class{}_{}\"><!/WEB99CAD>", named.dir, named.class, named.file));
        let whole_wrong = self.tags > 0 && (self.tags_differ || self.first_tag.as_bytes() != want.as_bytes());
        // Only the file's last line can be cut: one such tag at most.
        let cut_wrong =
            self.cut_tags > 1 || (self.cut_tags == 1 && !want.as_bytes().starts_with(self.cut_tag.as_bytes()));
        if whole_wrong || cut_wrong {
            return Err(Invalid::TagWrong(ad));
        }
        Ok(())
    }

    /// Judges the line just ended, then forgets it.
    fn end_line(&mut self) {
        let (len, long) = (self.len, self.long);
        self.len = 0;
        self.long = false;
        self.lines += 1;
        if long {
            return;
        }
        let mut line = &self.line[..len];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        let looking = self.header.is_none() && !self.wrong_file && (self.op != Op::Static || self.lines == 1);
        if looking {
            if let Some((stated, name)) = header_line(line) {
                if name == self.name.as_bytes() {
                    self.header = Some((self.line_start, stated));
                } else {
                    self.wrong_file = true;
                }
            }
        }
        if self.op == Op::Cad {
            let mut rest = line;
            while let Some(at) = find(rest, TAG_PREFIX) {
                rest = &rest[at + TAG_PREFIX.len()..];
                let tail = &rest[..rest.len().min(TAG_TAIL)];
                if tail.len() < TAG_TAIL {
                    self.cut_tag.set(tail);
                    self.cut_tags += 1;
                } else if self.tags == 0 {
                    self.first_tag.set(tail);
                } else if tail != self.first_tag.as_bytes() {
                    self.tags_differ = true;
                }
                self.tags += 1;
            }
        }
    }
}

impl Default for BodyCheck {
    fn default() -> Self {
        Self::new()
    }
}

/// `^ *(\d+) (file_set/.*)$` → (the size, the name).
fn header_line(line: &[u8]) -> Option<(u64, &[u8])> {
    let digits_at = line.iter().position(|&b| b != b' ')?;
    let rest = &line[digits_at..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 18 || rest.get(digits) != Some(&b' ') {
        return None;
    }
    let name = &rest[digits + 1..];
    if !name.starts_with(b"file_set/") {
        return None;
    }
    let size = rest[..digits].iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
    Some((size, name))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The `Ad_id` of a `found_cookie=Ad_id=<ad>&Ad_weight=<w>&Expired=<e>`
/// cookie value; None when it has none or it is not a number.
pub fn ad_id(value: &[u8]) -> Option<i64> {
    const KEY: &[u8] = b"Ad_id=";
    let at = find(value, KEY)? + KEY.len();
    let rest = &value[at..];
    let (negative, rest) = match rest.first() {
        Some(b'-') => (true, &rest[1..]),
        _ => (false, rest),
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || rest.get(digits).is_some_and(|&b| b != b'&' && b != b';' && b != b' ') {
        return None;
    }
    let n = rest[..digits].iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    Some(if negative { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILLER: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-\n";

    /// A kit-format file as crest's file sets write it: the `%9d` header
    /// line, then a tag line and 15 filler lines repeated (classes 1 and 2),
    /// cut at `size`; each tag names `ad` (None: as generated, ad 0's file).
    fn kit_file(file: FileId, size: usize, ad: Option<u32>) -> Vec<u8> {
        let mut out = format!("{size:9} {file}\n").into_bytes();
        let named = FileId::of_ad(ad.unwrap_or(0));
        let tag = format!("<!WEB99CAD><IMG SRC=\"/{named}\"><!/WEB99CAD> \n");
        assert_eq!(tag.len(), 64);
        while out.len() < size {
            if matches!(file.class, 1 | 2) {
                out.extend_from_slice(tag.as_bytes());
            }
            for _ in 0..15 {
                out.extend_from_slice(FILLER);
            }
        }
        out.truncate(size);
        out
    }

    fn envelope(content: &[u8]) -> Vec<u8> {
        let mut out = b"<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n<body>\n\
            <p>SERVER_SOFTWARE = crest\n<p>REMOTE_ADDR = 127.0.0.1\n<p>SCRIPT_NAME = /specweb99/dynamic\n\
            <p>QUERY_STRING = /file_set/dir00012/class1_4\n<pre>\n"
            .to_vec();
        out.extend_from_slice(content);
        out.extend_from_slice(b"\n</pre>\n</body></html>\n");
        out
    }

    /// The verdict on `body` fed in two pieces split at every point, which must all agree.
    fn judge(op: Op, file: FileId, body: &[u8], ad: Option<i64>) -> Result<(), Invalid> {
        let mut check = BodyCheck::new();
        let mut verdict = None;
        for cut in 0..=body.len() {
            check.start(op, file);
            check.feed(&body[..cut]);
            check.feed(&body[cut..]);
            let v = check.finish(body.len() as u64, ad);
            assert_eq!(*verdict.get_or_insert(v), v, "split at {cut}");
        }
        check.start(op, file);
        body.iter().for_each(|b| check.feed(std::slice::from_ref(b)));
        assert_eq!(check.finish(body.len() as u64, ad), verdict.unwrap(), "byte by byte");
        verdict.unwrap()
    }

    const FILE: FileId = FileId { dir: 12, class: 1, file: 4 };

    #[test]
    fn static_files_first_line_and_length() {
        let body = kit_file(FILE, 5120, None);
        assert_eq!(judge(Op::Static, FILE, &body, None), Ok(()));
        let other = FileId { file: 3, ..FILE };
        assert_eq!(judge(Op::Static, other, &body, None), Err(Invalid::WrongFile(other)));
        assert_eq!(judge(Op::Static, FILE, &body[..5000], None), Err(Invalid::Length { got: 5000, stated: 5120 }));
        let mut late = b"hello\n".to_vec();
        late.extend_from_slice(&body);
        assert_eq!(judge(Op::Static, FILE, &late, None), Err(Invalid::NoHeader { first_line: true }));
        // A body shorter than its header line names a cut path.
        let class0 = FileId { class: 0, ..FILE };
        assert_eq!(judge(Op::Static, class0, &kit_file(class0, 20, None), None), Err(Invalid::WrongFile(class0)));
    }

    #[test]
    fn dynamic_pages_wrap_the_whole_file() {
        let body = envelope(&kit_file(FILE, 2048, None));
        for op in [Op::Dynamic, Op::Cgi, Op::Post] {
            assert_eq!(judge(op, FILE, &body, None), Ok(()), "{op:?}");
        }
        let cut = envelope(&kit_file(FILE, 2048, None)[..2000]);
        let at = body.windows(5).position(|w| w == b"     ").unwrap() as u64;
        assert_eq!(
            judge(Op::Dynamic, FILE, &cut, None),
            Err(Invalid::Short { got: cut.len() as u64, needed: at + 2048 })
        );
        assert_eq!(
            judge(Op::Dynamic, FILE, b"<html>nothing</html>\n", None),
            Err(Invalid::NoHeader { first_line: false })
        );
    }

    #[test]
    fn custom_ads_every_tag_names_the_cookies_ad() {
        let ad = 50; // dir00001/class1_5
        let good = envelope(&kit_file(FILE, 2048, Some(ad)));
        assert_eq!(judge(Op::Cad, FILE, &good, Some(50)), Ok(()));
        // Not substituted: the tags still name ad 0's file.
        let stale = envelope(&kit_file(FILE, 2048, None));
        assert_eq!(judge(Op::Cad, FILE, &stale, Some(50)), Err(Invalid::TagWrong(50)));
        // One tag of two wrong.
        let mut one_wrong = good.clone();
        let first = find(&good, b"dir00001").unwrap() + 8;
        let second = find(&good[first..], b"dir00001").unwrap() + first;
        one_wrong[second + 7] = b'2';
        assert_eq!(judge(Op::Cad, FILE, &one_wrong, Some(50)), Err(Invalid::TagWrong(50)));
        // No tag at all.
        let mut untagged = good.clone();
        while let Some(at) = find(&untagged, b"<!WEB99CAD>") {
            untagged[at + 2] = b'X';
        }
        assert_eq!(judge(Op::Cad, FILE, &untagged, Some(50)), Err(Invalid::NoTag));
        assert_eq!(judge(Op::Cad, FILE, &good, None), Err(Invalid::NoAdCookie));
        assert_eq!(judge(Op::Cad, FILE, &good, Some(-1)), Err(Invalid::BadAd(-1)));
        assert_eq!(judge(Op::Cad, FILE, &good, Some(360)), Err(Invalid::BadAd(360)));
        // A file whose last line cuts a tag short: the cut tag is judged as far as it goes.
        let cut = envelope(&kit_file(FILE, 1100, Some(ad)));
        assert_eq!(judge(Op::Cad, FILE, &cut, Some(50)), Ok(()));
        let mut cut_wrong = cut.clone();
        // The cut tag ends the file with its 5 directory digits, before the envelope's 23-byte trailer.
        let digits = cut_wrong.len() - 23 - 5;
        assert_eq!(&cut_wrong[digits - 3..digits + 5], b"dir00001");
        cut_wrong[digits + 1] = b'9';
        assert_eq!(judge(Op::Cad, FILE, &cut_wrong, Some(50)), Err(Invalid::TagWrong(50)));
        // Classes 0 and 3 carry no tags and need none; the cookie still counts.
        let class0 = FileId { class: 0, ..FILE };
        let plain = envelope(&kit_file(class0, 500, None));
        assert_eq!(judge(Op::Cad, class0, &plain, Some(7)), Ok(()));
        assert_eq!(judge(Op::Cad, class0, &plain, None), Err(Invalid::NoAdCookie));
    }

    #[test]
    fn long_lines_are_not_interesting() {
        let mut body = vec![b'x'; 400];
        body.push(b'\n');
        body.extend_from_slice(b"  77 file_set/dir00012/class1_4\n");
        body.extend_from_slice(&[b'y'; 77]);
        assert_eq!(judge(Op::Dynamic, FILE, &body, None), Ok(()));
        let mut hidden = vec![b'x'; 400];
        hidden.extend_from_slice(b" 77 file_set/dir00012/class1_4\n");
        assert_eq!(judge(Op::Dynamic, FILE, &hidden, None), Err(Invalid::NoHeader { first_line: false }));
    }

    #[test]
    fn reading_the_ad_id() {
        assert_eq!(ad_id(b"found_cookie=Ad_id=12&Ad_weight=3&Expired=0"), Some(12));
        assert_eq!(ad_id(b"found_cookie=Ad_id=-1&Ad_weight=00&Expired=1"), Some(-1));
        assert_eq!(ad_id(b"found_cookie=Ad_id=359"), Some(359));
        assert_eq!(ad_id(b"found_cookie=Ad_id=x&Ad_weight=3"), None);
        assert_eq!(ad_id(b"found_cookie=Ad_id=12x"), None);
        assert_eq!(ad_id(b"my_cookie=10001"), None);
    }

    #[test]
    fn reasons_read_well() {
        assert_eq!(
            Invalid::TagWrong(50).to_string(),
            "a <!WEB99CAD> tag does not name ad 50's file_set/dir00001/class1_5"
        );
        assert_eq!(Invalid::Length { got: 1, stated: 2 }.to_string(), "body of 1 bytes where its header line states 2");
    }
}
