//! A request's FastCGI params: the CGI/1.1 variables the web server sends
//! in the `FCGI_PARAMS` stream (`REQUEST_METHOD`, `QUERY_STRING`, `HTTP_*`, …).
//!
//! Owns the stream's bytes and lookups by name; it must not interpret any
//! variable (routing and pages are [`crate::reply`]'s). The bytes are checked
//! once, when the stream ends; lookups walk them again, which for the few
//! dozen params a server sends costs less than building a map per request.

use crate::error::ProtocolError;
use crate::record;

/// The params of one request, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    bytes: Vec<u8>,
}

impl Params {
    /// Params from the whole `FCGI_PARAMS` stream, or the error that makes
    /// it unreadable.
    pub fn new(bytes: Vec<u8>) -> Result<Params, ProtocolError> {
        record::decode_pairs(&bytes).try_for_each(|pair| pair.map(drop))?;
        Ok(Params { bytes })
    }

    /// The value of `name`; when a server sends a name twice (a config that
    /// sets a param its include already set), the last one counts, as in the
    /// environment a CGI program would get.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.iter().filter(|(n, _)| *n == name.as_bytes()).last().map(|(_, value)| value)
    }

    /// Every (name, value) pair, in the order sent.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        // Checked in `new`, so every item is Ok.
        record::decode_pairs(&self.bytes).map_while(Result::ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_value_wins_and_missing_is_none() {
        let mut bytes = Vec::new();
        record::encode_pair(&mut bytes, b"A", b"1");
        record::encode_pair(&mut bytes, b"B", b"");
        record::encode_pair(&mut bytes, b"A", b"2");
        let params = Params::new(bytes).expect("well-formed");
        assert_eq!(params.get("A"), Some(&b"2"[..]));
        assert_eq!(params.get("B"), Some(&b""[..]));
        assert_eq!(params.get("C"), None);
        assert_eq!(params.iter().count(), 3);
    }

    #[test]
    fn truncated_stream_is_an_error() {
        let mut bytes = Vec::new();
        record::encode_pair(&mut bytes, b"NAME", b"value");
        bytes.pop();
        assert_eq!(Params::new(bytes), Err(ProtocolError::PairTruncated));
    }
}
