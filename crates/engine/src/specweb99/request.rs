//! Writes one SPECweb99 request (reference §2.2–2.6) into a slot's own
//! buffer: cleared and rewritten per request, so after the first request
//! nothing is allocated (`write!` of integers into a Vec with room). The
//! version, `Host`, `User-Agent` and `Connection` rules are the table mode's
//! (`protocol::encode`).

use std::io::Write as _;

use super::{FileId, Op};
use crate::config::HttpVersion;
use crate::protocol::encode::{connection_line, version_token, USER_AGENT};

/// Room reserved in each slot's request buffer: any request fits.
pub const REQUEST_CAPACITY: usize = 1024;

/// Where one kind of request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Index into `Plan::targets`.
    pub target: usize,
    /// `Host` header value.
    pub host: String,
    /// Path: for the static files, the prefix before `/file_set/` (no
    /// trailing slash); for the others, the script's path.
    pub path: String,
}

/// The three endpoints and the wire version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// Static files.
    pub base: Endpoint,
    /// Standard dynamic GET, CAD GET and POST.
    pub dynamic: Endpoint,
    /// CGI GET.
    pub cgi: Endpoint,
    /// Wire version.
    pub version: HttpVersion,
}

/// What the `my_cookie` of CAD and POST requests says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cookie {
    /// `10000 + user index`.
    pub user_id: u32,
    /// The last ad the connection was shown.
    pub last_ad: u32,
}

const URLROOT: &str = "/file_set/";

impl Site {
    /// Where requests of kind `op` go.
    pub fn endpoint(&self, op: Op) -> &Endpoint {
        match op {
            Op::Static => &self.base,
            Op::Dynamic | Op::Cad | Op::Post => &self.dynamic,
            Op::Cgi => &self.cgi,
        }
    }

    /// Replaces `out` with the request for `file` of kind `op` from
    /// connection `client` (global index); `last` says it is the
    /// connection's last request (no keep-alive asked for).
    pub fn write(&self, out: &mut Vec<u8>, op: Op, file: FileId, client: u32, cookie: Cookie, last: bool) {
        out.clear();
        let ep = self.endpoint(op);
        // Writing into a Vec cannot fail.
        let _ = match op {
            Op::Static => write!(out, "GET {}/{file}", ep.path),
            Op::Dynamic | Op::Cgi | Op::Cad => write!(out, "GET {}?/{file}", ep.path),
            Op::Post => write!(out, "POST {}", ep.path),
        };
        let _ = write!(out, " {}\r\nHost: {}\r\n{USER_AGENT}\r\n", version_token(self.version), ep.host);
        if let Some(line) = connection_line(self.version, !last) {
            let _ = write!(out, "{line}\r\n");
        }
        if matches!(op, Op::Cad | Op::Post) {
            let _ = write!(out, "Cookie: my_cookie=user_id={}&last_ad={}\r\n", cookie.user_id, cookie.last_ad);
        }
        if op != Op::Post {
            out.extend_from_slice(b"\r\n");
            return;
        }
        // class=C&client=N&dir=DDDDD&num=F&urlroot=/file_set/: fixed parts plus the variable widths.
        let length =
            "class=0&client=&dir=&num=0&urlroot=".len() + digits(client) + digits(file.dir).max(5) + URLROOT.len();
        let _ = write!(
            out,
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {length}\r\n\r\n\
             class={}&client={client}&dir={:05}&num={}&urlroot={URLROOT}",
            file.class, file.dir, file.file
        );
    }
}

/// Decimal digits of `n`.
fn digits(n: u32) -> usize {
    n.checked_ilog10().map_or(1, |l| l as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(version: HttpVersion) -> Site {
        let ep = |target, host: &str, path: &str| Endpoint { target, host: host.into(), path: path.into() };
        Site {
            base: ep(0, "www:8080", ""),
            dynamic: ep(1, "app", "/specweb99/dynamic"),
            cgi: ep(1, "app", "/cgi-bin/crest-specweb99"),
            version,
        }
    }

    fn text(site: &Site, op: Op, last: bool) -> String {
        let mut out = Vec::with_capacity(REQUEST_CAPACITY);
        let file = FileId { dir: 12, class: 1, file: 4 };
        site.write(&mut out, op, file, 123, Cookie { user_id: 10_023, last_ad: 7 }, last);
        String::from_utf8(out).unwrap()
    }

    const UA: &str = concat!("User-Agent: crest/", env!("CARGO_PKG_VERSION"));

    #[test]
    fn each_kind_of_request_exactly() {
        let s = site(HttpVersion::Http11);
        assert_eq!(
            text(&s, Op::Static, false),
            format!("GET /file_set/dir00012/class1_4 HTTP/1.1\r\nHost: www:8080\r\n{UA}\r\n\r\n")
        );
        assert_eq!(
            text(&s, Op::Dynamic, false),
            format!("GET /specweb99/dynamic?/file_set/dir00012/class1_4 HTTP/1.1\r\nHost: app\r\n{UA}\r\n\r\n")
        );
        assert_eq!(
            text(&s, Op::Cgi, true),
            format!(
                "GET /cgi-bin/crest-specweb99?/file_set/dir00012/class1_4 HTTP/1.1\r\nHost: app\r\n{UA}\r\n\
                 Connection: close\r\n\r\n"
            )
        );
        assert_eq!(
            text(&s, Op::Cad, false),
            format!(
                "GET /specweb99/dynamic?/file_set/dir00012/class1_4 HTTP/1.1\r\nHost: app\r\n{UA}\r\n\
                 Cookie: my_cookie=user_id=10023&last_ad=7\r\n\r\n"
            )
        );
        let body = "class=1&client=123&dir=00012&num=4&urlroot=/file_set/";
        assert_eq!(
            text(&s, Op::Post, false),
            format!(
                "POST /specweb99/dynamic HTTP/1.1\r\nHost: app\r\n{UA}\r\n\
                 Cookie: my_cookie=user_id=10023&last_ad=7\r\n\
                 Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        );
    }

    #[test]
    fn http_1_0_asks_for_keep_alive_but_on_the_last_request() {
        let s = site(HttpVersion::Http10);
        assert_eq!(
            text(&s, Op::Static, false),
            format!(
                "GET /file_set/dir00012/class1_4 HTTP/1.0\r\nHost: www:8080\r\n{UA}\r\nConnection: keep-alive\r\n\r\n"
            )
        );
        assert_eq!(
            text(&s, Op::Static, true),
            format!("GET /file_set/dir00012/class1_4 HTTP/1.0\r\nHost: www:8080\r\n{UA}\r\n\r\n")
        );
    }

    #[test]
    fn post_length_counts_every_width() {
        let s = site(HttpVersion::Http11);
        let mut out = Vec::with_capacity(REQUEST_CAPACITY);
        for (client, dir) in [(0, 0), (9, 99_999), (10, 123_456), (u32::MAX, 5)] {
            let file = FileId { dir, class: 3, file: 8 };
            s.write(&mut out, Op::Post, file, client, Cookie { user_id: 10_000, last_ad: 0 }, false);
            let text = String::from_utf8(out.clone()).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            let stated: usize = head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).unwrap().parse().unwrap();
            assert_eq!(stated, body.len(), "{text}");
            assert_eq!(body, format!("class=3&client={client}&dir={dir:05}&num=8&urlroot=/file_set/"));
        }
    }
}
