//! Body validation: whether a successful response carries the body the
//! request table expects (its length, its first bytes), or with SPECweb99
//! the file asked for (`specweb99::check` judges the body). Judges only; the
//! caller records the verdict. No allocation: a verdict formats itself.

use std::fmt;

use super::plan::Request;
use crate::protocol::Response;
use crate::specweb99::{self, BodyCheck};

/// Why a response failed validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Invalid {
    /// The body's length is not the one expected.
    Length { got: u64, expected: u64 },
    /// The body does not start with the expected bytes.
    Prefix,
    /// SPECweb99's checks failed.
    Specweb99(specweb99::Invalid),
    /// A script step's extraction or cookie jar failed.
    Script(crate::script::Invalid),
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length { got, expected } => write!(f, "body of {got} bytes where the manifest says {expected}"),
            Self::Prefix => f.write_str("body does not start with the content the manifest gives"),
            Self::Specweb99(why) => why.fmt(f),
            Self::Script(why) => why.fmt(f),
        }
    }
}

/// Checks a complete response to `request` whose first body bytes are
/// `captured`. Only 200 responses are judged: others carry no file.
pub(crate) fn check(request: &Request, response: &Response, captured: &[u8]) -> Result<(), Invalid> {
    if response.status != 200 {
        return Ok(());
    }
    if let Some(expected) = request.expect_body_bytes {
        if response.body_bytes != expected {
            return Err(Invalid::Length { got: response.body_bytes, expected });
        }
    }
    if !prefix_matches(request.expect_body_prefix.as_deref(), captured, response.body_bytes) {
        return Err(Invalid::Prefix);
    }
    Ok(())
}

/// Checks a complete SPECweb99 response whose body `check` has seen and
/// whose captured `Set-Cookie: found_cookie=...` value is `cookie`; returns
/// the ad it names, if any. A status outside 2xx/3xx is left to the stats
/// (a status error); any other status but 200 carries no file.
pub(crate) fn check_specweb99(
    response: &Response,
    check: &mut BodyCheck,
    cookie: Option<&[u8]>,
) -> (Result<(), Invalid>, Option<i64>) {
    if !(200..400).contains(&response.status) {
        return (Ok(()), None);
    }
    if response.status != 200 {
        return (Err(Invalid::Specweb99(specweb99::Invalid::Status(response.status))), None);
    }
    let ad = cookie.and_then(specweb99::ad_id);
    (check.finish(response.body_bytes, ad).map_err(Invalid::Specweb99), ad)
}

/// The content check: the body starts with the expected bytes (as many of
/// them as the body is long).
fn prefix_matches(expected: Option<&[u8]>, captured: &[u8], body_bytes: u64) -> bool {
    let Some(expected) = expected else { return true };
    let n = expected.len().min(usize::try_from(body_bytes).unwrap_or(usize::MAX));
    captured.len() == n && captured == &expected[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(bytes: Option<u64>, prefix: Option<&[u8]>) -> Request {
        Request {
            bytes: Vec::new(),
            h2: Default::default(),
            h3: Vec::new(),
            h3_block_bytes: 0,
            h3_raw_bytes: 0,
            target: 0,
            class: 0,
            head: false,
            expect_body_bytes: bytes,
            expect_body_prefix: prefix.map(<[u8]>::to_vec),
            expect_status: None,
        }
    }

    fn response(status: u16, body_bytes: u64) -> Response {
        Response { status, head_bytes: 10, body_bytes, keep_alive: true }
    }

    #[test]
    fn length_then_prefix_and_only_for_200() {
        let req = request(Some(5), Some(b"hello"));
        assert_eq!(check(&req, &response(200, 5), b"hello"), Ok(()));
        assert_eq!(check(&req, &response(200, 4), b"hell"), Err(Invalid::Length { got: 4, expected: 5 }));
        assert_eq!(check(&req, &response(200, 5), b"jello"), Err(Invalid::Prefix));
        assert_eq!(check(&req, &response(404, 9), b"not found"), Ok(()));
        assert_eq!(check(&request(None, None), &response(200, 7), b""), Ok(()));
    }

    #[test]
    fn a_short_body_is_compared_as_far_as_it_goes() {
        let req = request(None, Some(b"hello"));
        assert_eq!(check(&req, &response(200, 3), b"hel"), Ok(()));
        assert_eq!(check(&req, &response(200, 0), b""), Ok(()));
        assert_eq!(check(&req, &response(200, 3), b"he"), Err(Invalid::Prefix));
    }
}
