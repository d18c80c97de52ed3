//! `crest-bytes`' response: `?size=N` pseudo-random bytes, WebStone's CGI
//! test (and webcat-cgi-html's "CGI returning 10K").
//!
//! The body is a pure function of N, so a client can check what it got:
//! byte `i` is byte `i % 8` of the little-endian `u64` number `i / 8` drawn
//! from xorshift64 (shifts 13, 7, 17) seeded with splitmix64(N) (and, in the
//! one case that gives 0, with 0x9E3779B97F4A7C15).

/// Bytes sent when the query names no size (WebStone's default).
pub const DEFAULT_SIZE: u64 = 10_240;
/// Largest size accepted: 100 MB (decimal, as crest counts bytes).
pub const MAX_SIZE: u64 = 100_000_000;
/// Bytes written per `write(2)`; a multiple of 8 so blocks keep word order.
pub const BLOCK: usize = 64 * 1024;

/// The CGI response to a query that is not a valid size.
pub const BAD_REQUEST: &str = "Status: 400 Bad Request\r\nContent-Type: text/plain\r\n\
                               Content-Length: 64\r\n\r\n\
                               bad size: use ?size=N with N a whole number from 0 to 100000000\n";

/// The size a query string asks for: the first `size=` parameter (other
/// parameters, such as cache busters, are ignored), or [`DEFAULT_SIZE`]
/// when there is none. `None` (a bad request) for anything but plain decimal
/// digits within [`MAX_SIZE`].
pub fn parse_size(query: &[u8]) -> Option<u64> {
    let Some(param) = query.split(|&b| b == b'&').find(|p| p.split(|&b| b == b'=').next() == Some(b"size")) else {
        return Some(DEFAULT_SIZE);
    };
    let value = param.strip_prefix(b"size=")?;
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Checked at every digit, so the running value stays small.
    value.iter().try_fold(0u64, |n, &d| Some(n * 10 + u64::from(d - b'0')).filter(|&n| n <= MAX_SIZE))
}

/// The CGI header for a body of `size` bytes.
pub fn header(size: u64) -> String {
    format!("Content-Type: application/octet-stream\r\nContent-Length: {size}\r\n\r\n")
}

/// The body's byte stream (see the module docs).
pub struct Stream {
    state: u64,
}

impl Stream {
    pub fn new(size: u64) -> Stream {
        let mut z = size.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Stream { state: if z == 0 { 0x9E37_79B9_7F4A_7C15 } else { z } }
    }

    fn next_word(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    /// The next `buf.len()` bytes. Word-aligned: call it with lengths that
    /// are multiples of 8, except for the last call.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut words = buf.chunks_exact_mut(8);
        for word in &mut words {
            word.copy_from_slice(&self.next_word().to_le_bytes());
        }
        let tail = words.into_remainder();
        if !tail.is_empty() {
            let len = tail.len();
            tail.copy_from_slice(&self.next_word().to_le_bytes()[..len]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size(b""), Some(DEFAULT_SIZE));
        assert_eq!(parse_size(b"x=1"), Some(DEFAULT_SIZE));
        assert_eq!(parse_size(b"sizes=3"), Some(DEFAULT_SIZE));
        assert_eq!(parse_size(b"size=0"), Some(0));
        assert_eq!(parse_size(b"a=b&size=5000&size=7"), Some(5000));
        assert_eq!(parse_size(b"size=000000000100000000"), Some(MAX_SIZE));
        assert_eq!(parse_size(b"size=100000000"), Some(MAX_SIZE));
        for bad in [
            &b"size"[..],
            b"size=",
            b"size=100000001",
            b"size=999999999999999999999999",
            b"size=-1",
            b"size=+1",
            b"size=1k",
            b"size=1.5",
            b"size= 1",
            b"size=%31",
        ] {
            assert_eq!(parse_size(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn bad_request_length_is_right() {
        let (_, body) = BAD_REQUEST.split_once("\r\n\r\n").unwrap();
        assert!(BAD_REQUEST.contains(&format!("Content-Length: {}\r\n", body.len())));
    }

    #[test]
    fn stream_is_deterministic_and_block_independent() {
        let mut whole = vec![0; 3 * BLOCK + 5];
        Stream::new(42).fill(&mut whole);
        let mut parts = vec![0; whole.len()];
        let mut s = Stream::new(42);
        for chunk in parts.chunks_mut(BLOCK) {
            s.fill(chunk);
        }
        assert_eq!(whole, parts);
        let mut other = vec![0; 64];
        Stream::new(43).fill(&mut other);
        assert_ne!(&whole[..64], &other[..]);
        // Not degenerate: every byte value shows up.
        let mut seen = [false; 256];
        whole.iter().for_each(|&b| seen[b as usize] = true);
        assert!(seen.iter().all(|&s| s));
    }
}
