//! What the TLS handshakes negotiated: a count per (protocol version, cipher
//! suite) pair, in a fixed array so recording never allocates and merging
//! is exact. A run meets one or two pairs; pairs past the array's room are
//! counted together as `other`, so no handshake goes uncounted.

use rustls::{CipherSuite, ProtocolVersion};
use serde::{Deserialize, Serialize};

/// Distinct (protocol, cipher) pairs kept apart; more is a misconfigured target.
const PAIRS: usize = 8;

/// Handshakes per negotiated (protocol, cipher suite), by their IANA code points.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Negotiated {
    pairs: [(u16, u16, u64); PAIRS],
    other: u64,
}

/// One negotiated pair with its count, as reports and parts carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NegotiatedCount {
    /// IANA protocol version, e.g. 0x0304 for TLS 1.3.
    pub protocol: u16,
    /// IANA cipher suite, e.g. 0x1301 for TLS_AES_128_GCM_SHA256.
    pub cipher: u16,
    /// Handshakes that negotiated it.
    pub handshakes: u64,
}

impl Negotiated {
    /// Counts `n` handshakes of (`protocol`, `cipher`).
    pub fn add(&mut self, protocol: u16, cipher: u16, n: u64) {
        if n == 0 {
            return;
        }
        for slot in &mut self.pairs {
            if slot.2 == 0 {
                *slot = (protocol, cipher, n);
                return;
            }
            if (slot.0, slot.1) == (protocol, cipher) {
                slot.2 += n;
                return;
            }
        }
        self.other += n;
    }

    /// Counts one handshake as rustls reports it; a handshake without its protocol counts as `other`.
    /// A protocol without its suite (QUIC's: quinn-proto does not tell it) is counted under suite
    /// `UNREPORTED`, code 0, which no handshake negotiates (TLS_NULL_WITH_NULL_NULL).
    pub fn record(&mut self, protocol: Option<ProtocolVersion>, cipher: Option<CipherSuite>) {
        match (protocol, cipher) {
            (Some(p), Some(c)) => self.add(u16::from(p), u16::from(c), 1),
            (Some(p), None) => self.add(u16::from(p), UNREPORTED, 1),
            _ => self.other += 1,
        }
    }

    /// Adds `other`'s counts; exact while the pairs fit, and every handshake counted either way.
    pub fn merge(&mut self, other: &Negotiated) {
        for c in other.counts() {
            self.add(c.protocol, c.cipher, c.handshakes);
        }
        self.other += other.other;
    }

    /// The pairs seen, in the order first seen.
    pub fn counts(&self) -> impl Iterator<Item = NegotiatedCount> + '_ {
        self.pairs.iter().filter(|p| p.2 > 0).map(|&(protocol, cipher, handshakes)| NegotiatedCount {
            protocol,
            cipher,
            handshakes,
        })
    }

    /// Handshakes past the array's room or without a negotiated suite.
    pub fn other(&self) -> u64 {
        self.other
    }

    /// Sets the count of handshakes not kept as a pair (a part read back from the wire).
    pub fn set_other(&mut self, n: u64) {
        self.other = n;
    }
}

/// A protocol version's name, e.g. "TLSv1.3", or its code point in hex.
pub fn protocol_name(code: u16) -> String {
    let v = ProtocolVersion::from(code);
    v.as_str().map_or_else(|| format!("0x{code:04x}"), |s| s.replace("TLSv1_", "TLSv1."))
}

/// The suite code of handshakes whose suite is not known.
pub const UNREPORTED: u16 = 0;

/// A cipher suite's IANA name, e.g. "TLS_AES_128_GCM_SHA256", or its code point in hex.
pub fn cipher_name(code: u16) -> String {
    if code == UNREPORTED {
        return "not reported (QUIC)".to_string();
    }
    // rustls marks TLS 1.3 suites "TLS13_"; the IANA registry (and OpenSSL's servers) say "TLS_".
    CipherSuite::from(code).as_str().map_or_else(|| format!("0x{code:04x}"), |s| s.replacen("TLS13_", "TLS_", 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_pairs_and_keeps_overflow() {
        let mut a = Negotiated::default();
        a.add(0x0304, 0x1301, 3);
        let mut b = Negotiated::default();
        b.add(0x0304, 0x1301, 2);
        b.add(0x0303, 0xc02f, 1);
        for i in 0..PAIRS as u16 {
            b.add(0x0303, 0xc000 + i + 0x100, 1);
        }
        a.merge(&b);
        let counts: Vec<_> = a.counts().collect();
        assert_eq!(counts[0], NegotiatedCount { protocol: 0x0304, cipher: 0x1301, handshakes: 5 });
        assert_eq!(counts[1], NegotiatedCount { protocol: 0x0303, cipher: 0xc02f, handshakes: 1 });
        let total: u64 = counts.iter().map(|c| c.handshakes).sum::<u64>() + a.other();
        assert_eq!(total, 3 + 2 + 1 + PAIRS as u64);
    }

    #[test]
    fn names_are_the_iana_ones() {
        assert_eq!(protocol_name(0x0304), "TLSv1.3");
        assert_eq!(cipher_name(0x1301), "TLS_AES_128_GCM_SHA256");
        assert_eq!(cipher_name(0xc02f), "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
        assert_eq!(cipher_name(0x1234), "0x1234");
    }
}
