//! `crest-env`'s page: the CGI/1.1 environment as an HTML page of exactly
//! [`PAGE_BYTES`] bytes, so a CGI mix always transfers the same size
//! whatever the request looked like (WebBench's CGI test: "reads web-server
//! environment variables and returns their values in a 1024-byte HTML page").
//!
//! Every variable always gets its row. Values are HTML-escaped (`& < > " '`)
//! and, when they do not all fit, shortened fairly (short values keep all
//! their bytes, long ones share what is left) with a trailing `...`; a cut
//! never splits an entity or a UTF-8 sequence. Spaces before
//! `</body></html>\n` pad the page to its exact size. Pure, no allocation.

/// Size of every page, body only (the CGI header is [`HEADER`]).
pub const PAGE_BYTES: usize = 1024;

/// The CGI response header that precedes every page.
pub const HEADER: &str = "Content-Type: text/html\r\nContent-Length: 1024\r\n\r\n";

/// The variables listed, in page order; an unset variable shows empty.
pub const VARIABLES: [&str; 16] = [
    "SERVER_SOFTWARE",
    "SERVER_NAME",
    "SERVER_PORT",
    "SERVER_PROTOCOL",
    "GATEWAY_INTERFACE",
    "REQUEST_METHOD",
    "SCRIPT_NAME",
    "PATH_INFO",
    "QUERY_STRING",
    "REMOTE_ADDR",
    "REMOTE_PORT",
    "HTTP_HOST",
    "HTTP_USER_AGENT",
    "CONTENT_TYPE",
    "CONTENT_LENGTH",
    "HTTPS",
];

const N: usize = VARIABLES.len();
const HEAD: &str = "<!DOCTYPE html>\n<html><head><title>crest-env</title></head>\n\
                    <body><h1>CGI environment</h1>\n<table>\n";
const ROW_START: &str = "<tr><th>";
const ROW_MID: &str = "</th><td>";
const ROW_END: &str = "</td></tr>\n";
const TABLE_END: &str = "</table>\n";
const TAIL: &str = "</body></html>\n";
const ELLIPSIS: &str = "...";

/// Bytes of the page that are not values: markup, names and the tail.
const FIXED: usize = {
    let mut n = HEAD.len() + TABLE_END.len() + TAIL.len();
    let mut i = 0;
    while i < N {
        n += ROW_START.len() + VARIABLES[i].len() + ROW_MID.len() + ROW_END.len();
        i += 1;
    }
    n
};
const _: () = assert!(FIXED <= PAGE_BYTES, "the page's markup alone exceeds PAGE_BYTES");

/// Bytes left for the (escaped) values of all rows together.
pub const VALUE_BUDGET: usize = PAGE_BYTES - FIXED;

/// The page for `values[i]` = the value of `VARIABLES[i]` (raw bytes, as the
/// environment holds them).
pub fn render(values: &[&[u8]; N]) -> [u8; PAGE_BYTES] {
    let lens: [usize; N] = std::array::from_fn(|i| escaped_len(values[i]));
    let budgets = fair_shares(&lens, VALUE_BUDGET);
    let mut page = Page { buf: [b' '; PAGE_BYTES], len: 0 };
    page.push(HEAD.as_bytes());
    for (i, name) in VARIABLES.iter().enumerate() {
        page.push(ROW_START.as_bytes());
        page.push(name.as_bytes());
        page.push(ROW_MID.as_bytes());
        page.push_clipped(values[i], budgets[i]);
        page.push(ROW_END.as_bytes());
    }
    page.push(TABLE_END.as_bytes());
    // The buffer starts as spaces: what lies between here and the tail is
    // the padding.
    page.len = PAGE_BYTES - TAIL.len();
    page.push(TAIL.as_bytes());
    page.buf
}

/// The page for the request whose CGI variables `var` looks up by name
/// (`None`: unset, shown empty). crest-env looks them up in its environment,
/// crest-fcgi in the request's FastCGI params, so both render the same page
/// for the same request.
pub fn render_vars<V: AsRef<[u8]>>(mut var: impl FnMut(&str) -> Option<V>) -> [u8; PAGE_BYTES] {
    let values = VARIABLES.map(&mut var);
    render(&std::array::from_fn(|i| values[i].as_ref().map_or(&b""[..], AsRef::as_ref)))
}

/// Max-min fair split of `total` bytes: rows are served shortest first, each
/// taking its whole length or an equal share of what is left, whichever is
/// smaller.
fn fair_shares(lens: &[usize; N], mut total: usize) -> [usize; N] {
    let mut order: [usize; N] = std::array::from_fn(|i| i);
    order.sort_unstable_by_key(|&i| lens[i]);
    let mut shares = [0; N];
    for (served, &i) in order.iter().enumerate() {
        shares[i] = lens[i].min(total / (N - served));
        total -= shares[i];
    }
    shares
}

fn entity(b: u8) -> Option<&'static [u8]> {
    Some(match b {
        b'&' => b"&amp;",
        b'<' => b"&lt;",
        b'>' => b"&gt;",
        b'"' => b"&quot;",
        b'\'' => b"&#39;",
        _ => return None,
    })
}

fn escaped_byte_len(b: u8) -> usize {
    entity(b).map_or(1, <[u8]>::len)
}

/// Length of `value` once HTML-escaped.
pub fn escaped_len(value: &[u8]) -> usize {
    value.iter().map(|&b| escaped_byte_len(b)).sum()
}

struct Page {
    buf: [u8; PAGE_BYTES],
    len: usize,
}

impl Page {
    fn push(&mut self, bytes: &[u8]) {
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    fn push_escaped(&mut self, value: &[u8]) {
        for &b in value {
            match entity(b) {
                Some(e) => self.push(e),
                None => self.push(&[b]),
            }
        }
    }

    /// `value` escaped, in at most `budget` bytes: whole, or the longest
    /// prefix that fits before an ellipsis.
    fn push_clipped(&mut self, value: &[u8], budget: usize) {
        if escaped_len(value) <= budget {
            return self.push_escaped(value);
        }
        let room = budget.saturating_sub(ELLIPSIS.len());
        let (mut end, mut used) = (0, 0);
        while end < value.len() && used + escaped_byte_len(value[end]) <= room {
            used += escaped_byte_len(value[end]);
            end += 1;
        }
        // value[end] exists (the value did not fit); if it continues a UTF-8
        // sequence, drop that sequence's start too.
        while end > 0 && value[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        self.push_escaped(&value[..end]);
        if budget >= ELLIPSIS.len() {
            self.push(ELLIPSIS.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_of(values: &[&[u8]; N]) -> String {
        let page = render(values);
        assert_eq!(page.len(), PAGE_BYTES);
        assert!(page.ends_with(TAIL.as_bytes()));
        String::from_utf8(page.to_vec()).expect("valid UTF-8 in, valid UTF-8 out")
    }

    #[test]
    fn typical_request_fits_whole() {
        let mut values: [&[u8]; N] = [b""; N];
        values[0] = b"crest-target/0.1.0";
        values[8] = b"x=1&y=<script>";
        values[12] = b"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)";
        let p = page_of(&values);
        assert!(p.contains("<tr><th>QUERY_STRING</th><td>x=1&amp;y=&lt;script&gt;</td></tr>\n"));
        assert!(p.contains("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)<"));
        assert!(!p.contains("<script>"));
        assert!(p.contains("</table>\n ") && p.ends_with(" </body></html>\n"));
        for name in VARIABLES {
            assert!(p.contains(&format!("<th>{name}</th>")), "{name}");
        }
    }

    #[test]
    fn every_length_is_exact_and_every_row_stays() {
        let escapes = "<&>\"'".repeat(400);
        for n in (0..1500).step_by(7) {
            let plain = "x".repeat(n);
            let values: [&[u8]; N] = std::array::from_fn(|i| {
                if i % 3 == 0 {
                    &escapes.as_bytes()[..n.min(escapes.len())]
                } else {
                    plain.as_bytes()
                }
            });
            let p = page_of(&values);
            for name in VARIABLES {
                assert!(p.contains(&format!("<th>{name}</th>")), "n = {n}: {name}");
            }
            // No entity was cut in half: every '&' starts a whole one.
            for (i, _) in p.match_indices('&') {
                let rest = &p[i..];
                assert!(
                    ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"].iter().any(|e| rest.starts_with(e)),
                    "n = {n}: {}",
                    &rest[..rest.len().min(8)]
                );
            }
        }
    }

    #[test]
    fn one_huge_value_leaves_the_others_whole() {
        let huge = "q".repeat(100_000);
        let mut values: [&[u8]; N] = [b"short"; N];
        values[8] = huge.as_bytes();
        let p = page_of(&values);
        assert_eq!(p.matches("<td>short</td>").count(), N - 1);
        assert!(p.contains("qqq...</td>"));
    }

    #[test]
    fn cuts_keep_utf8_whole() {
        let long = "é".repeat(2000);
        let values: [&[u8]; N] = [long.as_bytes(); N];
        let p = page_of(&values);
        assert_eq!(p.matches("...</td>").count(), N);
    }

    #[test]
    fn non_utf8_bytes_pass_through() {
        let mut values: [&[u8]; N] = [b""; N];
        values[12] = b"agent \xff\xfe";
        let page = render(&values);
        assert!(page.windows(8).any(|w| w == b"agent \xff\xfe"));
    }

    #[test]
    fn render_vars_matches_render_and_shows_unset_as_empty() {
        let mut values: [&[u8]; N] = [b""; N];
        values[5] = b"GET";
        values[8] = b"a=1";
        let by_name = |name: &str| match name {
            "REQUEST_METHOD" => Some(&b"GET"[..]),
            "QUERY_STRING" => Some(&b"a=1"[..]),
            "HTTPS" => None,
            _ => Some(&b""[..]),
        };
        assert_eq!(render_vars(by_name), render(&values));
        let owned = render_vars(|name| (name == "REQUEST_METHOD").then(|| b"GET".to_vec()));
        let row = b"<th>REQUEST_METHOD</th><td>GET</td>";
        assert!(owned.windows(row.len()).any(|w| w == row));
    }

    #[test]
    fn fair_shares_serve_short_rows_first() {
        let mut lens = [10; N];
        lens[3] = 1000;
        lens[4] = 1000;
        let shares = fair_shares(&lens, 300);
        assert_eq!(shares[0], 10);
        assert_eq!(shares[3] + shares[4], 300 - 10 * (N - 2));
        assert!(shares.iter().sum::<usize>() <= 300);
    }
}
